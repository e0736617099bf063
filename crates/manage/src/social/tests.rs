//! The rules of a social provider's body, one refusal at a time, each naming its member.

use super::input::{Http, Upstream, check, check_url, is_guid, microsoft_directory_issuer};
use super::*;
use serde_json::{Value, json};

/// A throwaway P-256 key (PKCS#8 PEM), as Apple's `.p8` files are.
pub(crate) const P256_PEM: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgC0t9GnfmOLA3nAFT
nMU3w45MYamErgEkgZLE9TtGx2OhRANCAATLChInrXAU6PoStGVWSq7H7djRjRZc
9wm4nJ73XM3tJaIZjE2Hy4PUkwR3qS9ZysmPJnZvXBhbncbWH6b6X+jC
-----END PRIVATE KEY-----
";
/// A throwaway Ed25519 key: PKCS#8 too, but not what Apple signs with.
pub(crate) const ED25519_PEM: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIE/JaMXjRcoiy1SH30b1B0z1Gy03ktQRR5xd/Hts9DwC
-----END PRIVATE KEY-----
";

fn input(body: Value) -> SocialProviderInput {
    serde_json::from_value(body).unwrap()
}

fn checked(body: Value) -> Result<input::Checked, ManageError> {
    check("main", input(body), true, Http::Loopback)
}

/// The member the refusal of `body` names.
fn refused(body: Value) -> String {
    match checked(body.clone()) {
        Err(ManageError::Invalid { field, .. }) => field,
        Err(other) => panic!("{body}: {other:?}"),
        Ok(_) => panic!("{body}: accepted"),
    }
}

fn base(preset: &str) -> Value {
    json!({"preset": preset, "client_id": "svc", "client_secret": "s3cret"})
}

fn with(mut body: Value, key: &str, value: Value) -> Value {
    body[key] = value;
    body
}

#[test]
fn presets_fill_their_defaults() {
    let google = checked(base("google")).unwrap();
    assert_eq!(google.display_name, "Google");
    assert_eq!(google.scopes, ["openid", "email", "profile"]);
    assert!(google.enabled && !google.form_post);
    assert_eq!(
        google.upstream,
        Upstream::Discover {
            issuer: "https://accounts.google.com".into(),
            field: "issuer"
        }
    );
    let github = checked(base("github")).unwrap();
    assert_eq!(github.scopes, ["read:user", "user:email"]);
    assert!(matches!(
        github.credential,
        input::Credential::Secret { post: true, .. }
    ));
    let Upstream::Profile(p) = github.upstream else {
        panic!("github is plain OAuth 2.0")
    };
    assert_eq!(
        p.token_endpoint,
        "https://github.com/login/oauth/access_token"
    );
    assert_eq!(p.userinfo_endpoint, "https://api.github.com/user");
    let ghes = checked(with(
        base("github"),
        "base_url",
        json!("https://gh.corp.example/"),
    ))
    .unwrap();
    let Upstream::Profile(p) = ghes.upstream else {
        panic!()
    };
    assert_eq!(
        p.authorization_endpoint,
        "https://gh.corp.example/login/oauth/authorize"
    );
    assert_eq!(
        p.emails_endpoint.unwrap(),
        "https://gh.corp.example/api/v3/user/emails"
    );
    let gitlab = checked(base("gitlab")).unwrap();
    assert!(
        matches!(gitlab.upstream, Upstream::Discover { ref issuer, field: "base_url" } if issuer == "https://gitlab.com")
    );
    let oauth2 = checked(json!({
        "preset": "oauth2", "client_id": "svc", "client_secret": "x", "display_name": "Corp",
        "authorization_endpoint": "https://corp.example/authorize",
        "token_endpoint": "https://corp.example/token",
        "userinfo_endpoint": "https://corp.example/me?fields=email",
    }))
    .unwrap();
    assert!(oauth2.scopes.is_empty());
    let form = checked(json!({
        "preset": "oidc", "client_id": "svc", "client_secret": "x", "display_name": "Corp",
        "issuer": "http://127.0.0.1:9/realm", "response_mode": "form_post",
        "token_endpoint_auth_method": "client_secret_post",
    }))
    .unwrap();
    assert!(form.form_post);
}

#[test]
fn microsoft_directories_fix_the_expected_issuer() {
    let issuer =
        |directory: &str| match checked(with(base("microsoft"), "directory", json!(directory)))
            .unwrap()
            .upstream
        {
            Upstream::Microsoft { url, issuer } => (url, issuer),
            other => panic!("{other:?}"),
        };
    let (url, common) = issuer("common");
    assert_eq!(
        url,
        "https://login.microsoftonline.com/common/v2.0/.well-known/openid-configuration"
    );
    assert_eq!(
        common.unwrap(),
        "https://login.microsoftonline.com/{tenantid}/v2.0"
    );
    assert_eq!(
        issuer("consumers").1.unwrap(),
        "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0"
    );
    let guid = "72f988bf-86f1-41af-91ab-2d7cd011db47";
    assert_eq!(
        issuer(guid).1.unwrap(),
        format!("https://login.microsoftonline.com/{guid}/v2.0")
    );
    assert_eq!(issuer("contoso.onmicrosoft.com").1, None);
    assert!(is_guid(guid) && !is_guid("72f988bf86f141af91ab2d7cd011db47"));
    assert!(microsoft_directory_issuer(&format!(
        "https://login.microsoftonline.com/{guid}/v2.0"
    )));
    assert!(!microsoft_directory_issuer(
        "https://evil.example/{tenantid}/v2.0"
    ));
    for bad in ["", "contoso", "../common", "a b.example", "common/v2.0"] {
        assert_eq!(
            refused(with(base("microsoft"), "directory", json!(bad))),
            "directory"
        );
    }
}

#[test]
fn each_refusal_names_its_member() {
    assert!(matches!(
        check("Bad Slug", input(base("google")), true, Http::Loopback),
        Err(ManageError::Invalid { ref field, .. }) if field == "slug"
    ));
    assert!(matches!(
        check("corp", input(base("oauth2")), false, Http::Loopback),
        Err(ManageError::Invalid { ref field, .. }) if field == "preset"
    ));
    let unknown = serde_json::from_value::<SocialProviderInput>(base("facebook")).unwrap_err();
    assert!(unknown.to_string().contains("facebook"), "{unknown}");
    let cases: Vec<(Value, &str)> = vec![
        (with(base("google"), "client_id", json!("")), "client_id"),
        (with(base("google"), "client_id", json!("a b")), "client_id"),
        (
            with(base("google"), "client_secret", Value::Null),
            "client_secret",
        ),
        (
            with(base("google"), "client_secret", json!("x".repeat(513))),
            "client_secret",
        ),
        (
            with(base("google"), "display_name", json!("x".repeat(65))),
            "display_name",
        ),
        (
            with(base("google"), "display_name", json!("bad\u{7}name")),
            "display_name",
        ),
        (
            with(base("google"), "display_name", json!("  ")),
            "display_name",
        ),
        (
            with(base("oidc"), "issuer", json!("https://corp.example")),
            "display_name",
        ),
        (with(base("google"), "scopes", json!(["email"])), "scopes"),
        (with(base("google"), "scopes", json!(["open id"])), "scopes"),
        (
            with(base("google"), "scopes", json!(vec!["openid"; 17])),
            "scopes",
        ),
        (
            with(base("google"), "issuer", json!("https://x.example")),
            "issuer",
        ),
        (
            with(base("google"), "base_url", json!("https://x.example")),
            "base_url",
        ),
        (
            with(base("github"), "directory", json!("common")),
            "directory",
        ),
        (
            with(
                base("gitlab"),
                "token_endpoint",
                json!("https://x.example/t"),
            ),
            "token_endpoint",
        ),
        (
            with(base("google"), "response_mode", json!("form_post")),
            "response_mode",
        ),
        (
            with(
                base("github"),
                "token_endpoint_auth_method",
                json!("client_secret_basic"),
            ),
            "token_endpoint_auth_method",
        ),
        (
            with(base("github"), "base_url", json!("http://gh.corp.example")),
            "base_url",
        ),
        (
            with(base("gitlab"), "base_url", json!("https://gl.example/?x=1")),
            "base_url",
        ),
        (
            with(base("gitlab"), "base_url", json!("https://gl.example/#f")),
            "base_url",
        ),
        (
            with(base("gitlab"), "base_url", json!("ftp://gl.example")),
            "base_url",
        ),
        (
            with(
                base("gitlab"),
                "base_url",
                json!(format!("https://gl.example/{}", "x".repeat(2048))),
            ),
            "base_url",
        ),
        (
            with(base("gitlab"), "base_url", json!("https://u:p@gl.example")),
            "base_url",
        ),
        (with(base("oidc"), "display_name", json!("Corp")), "issuer"),
        (
            json!({"preset": "oauth2", "client_id": "svc", "client_secret": "x",
                   "display_name": "Corp", "authorization_endpoint": "https://c.example/a",
                   "token_endpoint": "https://c.example/t"}),
            "userinfo_endpoint",
        ),
        (
            with(
                base("google"),
                "apple",
                json!({"team_id": "ABCDE12345", "key_id": "XYZ9876543", "private_key": "k"}),
            ),
            "apple",
        ),
    ];
    for (body, field) in cases {
        assert_eq!(refused(body.clone()), field, "{body}");
    }
}

#[test]
fn apple_takes_a_p256_key_and_no_secret() {
    let apple =
        |key: Value| json!({"preset": "apple", "client_id": "com.example.web", "apple": key});
    let key = json!({"team_id": "ABCDE12345", "key_id": "XYZ9876543", "private_key": P256_PEM});
    let ok = checked(apple(key.clone())).unwrap();
    assert!(ok.form_post);
    assert_eq!(ok.scopes, ["openid", "email", "name"]);
    assert!(
        matches!(ok.credential, input::Credential::Apple { ref team_id, .. } if team_id == "ABCDE12345")
    );
    let cases: Vec<(Value, &str)> = vec![
        (
            with(apple(key.clone()), "client_secret", json!("x")),
            "client_secret",
        ),
        (json!({"preset": "apple", "client_id": "x"}), "apple"),
        (
            apple(with(key.clone(), "private_key", json!(ED25519_PEM))),
            "apple.private_key",
        ),
        (
            apple(with(key.clone(), "private_key", json!("not a key"))),
            "apple.private_key",
        ),
        (
            apple(with(
                key.clone(),
                "private_key",
                json!(format!("{P256_PEM}{}", " ".repeat(4096))),
            )),
            "apple.private_key",
        ),
        (
            apple(with(key.clone(), "team_id", json!("abcde12345"))),
            "apple.team_id",
        ),
        (
            apple(with(key.clone(), "key_id", json!("SHORT"))),
            "apple.key_id",
        ),
        (
            with(apple(key.clone()), "response_mode", json!("query")),
            "response_mode",
        ),
        (
            with(
                apple(key.clone()),
                "token_endpoint_auth_method",
                json!("client_secret_post"),
            ),
            "token_endpoint_auth_method",
        ),
    ];
    for (body, field) in cases {
        assert_eq!(refused(body.clone()), field, "{body}");
    }
    let missing = serde_json::from_value::<SocialProviderInput>(apple(json!({"key_id": "X"})));
    assert!(missing.unwrap_err().to_string().contains("team_id"));
    assert!(
        !format!("{:?}", input(apple(key))).contains("PRIVATE"),
        "Debug never shows the key"
    );
}

#[test]
fn plain_http_only_towards_this_machine_and_never_in_production() {
    assert!(
        check_url(
            "issuer",
            "http://127.0.0.1:8080/realm",
            Http::Loopback,
            false
        )
        .is_ok()
    );
    assert!(check_url("issuer", "http://localhost:8080", Http::Loopback, false).is_ok());
    assert!(check_url("issuer", "http://idp.example.com", Http::Loopback, false).is_err());
    assert!(check_url("issuer", "http://127.0.0.1:8080", Http::Refused, false).is_err());
    assert!(check_url("issuer", "https://idp.example.com", Http::Refused, false).is_ok());
    assert!(check_url("t", "https://idp.example.com/t?a=1", Http::Refused, true).is_ok());
    assert!(
        check(
            "x",
            input(with(base("oidc"), "issuer", json!("http://127.0.0.1:1"))),
            true,
            Http::Refused
        )
        .is_err()
    );
}
