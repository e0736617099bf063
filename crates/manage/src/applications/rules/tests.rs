//! One test per registration rule: what it accepts, what it refuses, and that the refusal names
//! the field.

use super::*;
use serde_json::json;

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// Asserts an `Invalid` naming `field` whose message contains `needle`.
#[track_caller]
fn assert_invalid<T: std::fmt::Debug>(result: Result<T, ManageError>, field: &str, needle: &str) {
    match result {
        Err(ManageError::Invalid { field: f, message }) => {
            assert_eq!(f, field, "wrong field for: {message}");
            assert!(
                message.contains(needle),
                "message {message:?} lacks {needle:?}"
            );
            assert!(
                message.contains(field),
                "message {message:?} must name the field {field}"
            );
        }
        other => panic!("expected Invalid({field}), got {other:?}"),
    }
}

#[test]
fn name_is_1_to_200_characters_after_trimming() {
    assert_eq!(check_name("  My App ").unwrap(), "My App");
    assert_eq!(check_name(&"é".repeat(200)).unwrap().chars().count(), 200);
    assert_invalid(check_name(""), "name", "1 to 200");
    assert_invalid(check_name("   "), "name", "1 to 200");
    assert_invalid(check_name(&"x".repeat(201)), "name", "1 to 200");
    assert_invalid(check_name("tab\tinside"), "name", "control");
}

#[test]
fn redirect_uris_follow_the_domain_rules_at_most_20_without_duplicates() {
    let ok = check_redirect_uris(
        "redirect_uris",
        &strings(&["https://app.example.com/cb", "http://127.0.0.1:8080/cb"]),
    )
    .unwrap();
    assert_eq!(ok.len(), 2);
    assert!(
        check_redirect_uris("redirect_uris", &[])
            .unwrap()
            .is_empty()
    );
    assert_invalid(
        check_redirect_uris(
            "redirect_uris",
            &strings(&[
                "https://app.example.com/cb",
                "https://app.example.com/cb#frag",
            ]),
        ),
        "redirect_uris",
        "redirect_uris[1]: redirect URI must not contain a fragment",
    );
    assert_invalid(
        check_redirect_uris("redirect_uris", &strings(&["http://app.example.com/cb"])),
        "redirect_uris",
        "loopback",
    );
    assert_invalid(
        check_redirect_uris(
            "redirect_uris",
            &strings(&["https://a.example/cb", "https://a.example/cb"]),
        ),
        "redirect_uris",
        "redirect_uris[1] is listed twice",
    );
    let many: Vec<String> = (0..21)
        .map(|i| format!("https://a.example/cb{i}"))
        .collect();
    assert_invalid(
        check_redirect_uris("redirect_uris", &many),
        "redirect_uris",
        "at most 20",
    );
    assert!(check_redirect_uris("redirect_uris", &many[..20]).is_ok());
}

#[test]
fn grant_types_are_known_non_empty_and_unique() {
    assert_eq!(
        check_grant_types(&strings(&["authorization_code", "refresh_token"])).unwrap(),
        vec![GrantType::AuthorizationCode, GrantType::RefreshToken]
    );
    assert_invalid(check_grant_types(&[]), "grant_types", "at least one");
    assert_invalid(
        check_grant_types(&strings(&["authorization_code", "password"])),
        "grant_types",
        "grant_types[1] is not a supported grant",
    );
    assert_invalid(
        check_grant_types(&strings(&["implicit"])),
        "grant_types",
        "not a supported grant",
    );
    assert_invalid(
        check_grant_types(&strings(&["client_credentials", "client_credentials"])),
        "grant_types",
        "listed twice",
    );
}

#[test]
fn authorization_code_needs_a_redirect_uri() {
    let uri = RedirectUri::parse("https://a.example/cb").unwrap();
    assert!(check_code_grant_has_redirect_uri(&[GrantType::AuthorizationCode], &[uri]).is_ok());
    assert!(check_code_grant_has_redirect_uri(&[GrantType::ClientCredentials], &[]).is_ok());
    assert_invalid(
        check_code_grant_has_redirect_uri(&[GrantType::AuthorizationCode], &[]),
        "redirect_uris",
        "authorization_code",
    );
}

#[test]
fn refresh_token_needs_authorization_code() {
    assert!(
        check_refresh_needs_code(&[GrantType::AuthorizationCode, GrantType::RefreshToken]).is_ok()
    );
    assert!(check_refresh_needs_code(&[GrantType::DeviceCode, GrantType::RefreshToken]).is_ok());
    assert!(check_refresh_needs_code(&[GrantType::Ciba, GrantType::RefreshToken]).is_ok());
    assert_invalid(
        check_refresh_needs_code(&[GrantType::ClientCredentials, GrantType::RefreshToken]),
        "grant_types",
        "refresh_token only together with authorization_code",
    );
}

#[test]
fn auth_method_is_one_of_the_four() {
    assert_eq!(
        check_auth_method("private_key_jwt").unwrap(),
        TokenEndpointAuthMethod::PrivateKeyJwt
    );
    assert_eq!(
        check_auth_method("none").unwrap(),
        TokenEndpointAuthMethod::None
    );
    assert_invalid(
        check_auth_method("client_secret_jwt"),
        "token_endpoint_auth_method",
        "must be one of",
    );
    assert_invalid(
        check_auth_method(""),
        "token_endpoint_auth_method",
        "must be one of",
    );
}

#[test]
fn public_clients_never_use_client_credentials() {
    assert!(
        check_public_client_grants(
            TokenEndpointAuthMethod::None,
            &[GrantType::AuthorizationCode]
        )
        .is_ok()
    );
    assert!(
        check_public_client_grants(
            TokenEndpointAuthMethod::ClientSecretBasic,
            &[GrantType::ClientCredentials]
        )
        .is_ok()
    );
    assert_invalid(
        check_public_client_grants(
            TokenEndpointAuthMethod::None,
            &[GrantType::ClientCredentials],
        ),
        "grant_types",
        "client_credentials is for confidential clients only",
    );
    assert_invalid(
        check_public_client_grants(TokenEndpointAuthMethod::None, &[GrantType::Ciba]),
        "grant_types",
        "which is for confidential clients only",
    );
    assert!(
        check_public_client_grants(TokenEndpointAuthMethod::PrivateKeyJwt, &[GrantType::Ciba])
            .is_ok()
    );
}

fn ec_key() -> serde_json::Value {
    json!({"kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0", "use": "sig"})
}

#[test]
fn private_key_jwt_needs_exactly_one_source_of_keys() {
    let jwks = json!({"keys": [ec_key()]});
    let (text, uri) =
        check_key_material(TokenEndpointAuthMethod::PrivateKeyJwt, Some(&jwks), None).unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&text.unwrap()).unwrap(),
        jwks
    );
    assert_eq!(uri, None);
    let (text, uri) = check_key_material(
        TokenEndpointAuthMethod::PrivateKeyJwt,
        None,
        Some("https://client.example/jwks.json"),
    )
    .unwrap();
    assert_eq!(
        (text, uri.as_deref()),
        (None, Some("https://client.example/jwks.json"))
    );
    assert_invalid(
        check_key_material(TokenEndpointAuthMethod::PrivateKeyJwt, None, None),
        "jwks",
        "give jwks or jwks_uri",
    );
    assert_invalid(
        check_key_material(
            TokenEndpointAuthMethod::PrivateKeyJwt,
            Some(&jwks),
            Some("https://client.example/jwks.json"),
        ),
        "jwks",
        "not both",
    );
    assert_eq!(
        check_key_material(TokenEndpointAuthMethod::ClientSecretBasic, None, None).unwrap(),
        (None, None)
    );
    // Other methods may register keys for request objects (RFC 9101), one way only.
    assert!(
        check_key_material(
            TokenEndpointAuthMethod::ClientSecretBasic,
            Some(&jwks),
            None,
        )
        .unwrap()
        .0
        .is_some()
    );
    assert_eq!(
        check_key_material(
            TokenEndpointAuthMethod::None,
            None,
            Some("https://client.example/jwks.json"),
        )
        .unwrap()
        .1
        .as_deref(),
        Some("https://client.example/jwks.json")
    );
    assert_invalid(
        check_key_material(
            TokenEndpointAuthMethod::None,
            Some(&jwks),
            Some("https://client.example/jwks.json"),
        ),
        "jwks",
        "not both",
    );
    assert_invalid(
        check_key_material(
            TokenEndpointAuthMethod::ClientSecretPost,
            Some(&json!({"keys": []})),
            None,
        ),
        "jwks",
        "",
    );
}

#[test]
fn jwks_holds_1_to_10_public_keys_with_kty() {
    assert!(check_jwks(&json!({"keys": [ec_key()]})).is_ok());
    assert!(check_jwks(&json!({"keys": vec![ec_key(); 10]})).is_ok());
    assert_invalid(check_jwks(&json!([ec_key()])), "jwks", "JWK Set");
    assert_invalid(check_jwks(&json!({"keys": ec_key()})), "jwks", "JWK Set");
    assert_invalid(check_jwks(&json!({"keys": []})), "jwks", "1 to 10 keys");
    assert_invalid(
        check_jwks(&json!({"keys": vec![ec_key(); 11]})),
        "jwks",
        "1 to 10 keys",
    );
    assert_invalid(
        check_jwks(&json!({"keys": ["EC"]})),
        "jwks",
        "jwks.keys[0] must be a JWK object",
    );
    assert_invalid(
        check_jwks(&json!({"keys": [{"crv": "P-256"}]})),
        "jwks",
        "\"kty\"",
    );
    assert_invalid(
        check_jwks(&json!({"keys": [{"kty": ""}]})),
        "jwks",
        "\"kty\"",
    );
    for private in ["d", "p", "q", "dp", "dq", "qi", "k"] {
        let mut key = ec_key();
        key[private] = json!("c2VjcmV0");
        assert_invalid(
            check_jwks(&json!({"keys": [ec_key(), key]})),
            "jwks",
            &format!("jwks.keys[1] holds the private member \"{private}\""),
        );
    }
    let mut huge = ec_key();
    huge["x5c"] = json!(["A".repeat(70_000)]);
    assert_invalid(
        check_jwks(&json!({"keys": [huge]})),
        "jwks",
        "at most 65536 bytes",
    );
}

#[test]
fn jwks_uri_is_an_https_url() {
    assert!(check_jwks_uri("https://client.example/.well-known/jwks.json").is_ok());
    for bad in [
        "http://client.example/jwks.json",
        "https://user:pw@client.example/jwks.json",
        "https://client.example/jwks.json#k",
        "client.example/jwks.json",
        "",
    ] {
        assert_invalid(check_jwks_uri(bad), "jwks_uri", "https URL");
    }
    assert_invalid(
        check_jwks_uri(&format!("https://client.example/{}", "x".repeat(2048))),
        "jwks_uri",
        "2048",
    );
}

#[test]
fn scopes_are_scope_tokens_at_most_64() {
    let set = check_scopes(&strings(&["openid", "orders:read", "openid"])).unwrap();
    assert_eq!(set.to_string(), "openid orders:read");
    assert!(check_scopes(&[]).unwrap().is_empty());
    assert_invalid(
        check_scopes(&strings(&["openid", "bad scope"])),
        "allowed_scopes",
        "allowed_scopes[1]: malformed scope",
    );
    assert_invalid(
        check_scopes(&strings(&[""])),
        "allowed_scopes",
        "allowed_scopes[0]",
    );
    let many: Vec<String> = (0..65).map(|i| format!("s{i}")).collect();
    assert_invalid(check_scopes(&many), "allowed_scopes", "at most 64");
    assert!(check_scopes(&many[..64]).is_ok());
}

#[test]
fn api_audience_is_an_absolute_uri() {
    assert_eq!(check_api_audience(None).unwrap(), None);
    for good in [
        "https://api.example.com",
        "https://api.example.com/v2",
        "urn:example:orders",
    ] {
        assert_eq!(
            check_api_audience(Some(good)).unwrap().as_deref(),
            Some(good)
        );
    }
    for bad in [
        "api.example.com",
        "/api",
        "https://api.example.com/#x",
        "https://api example.com",
        "",
    ] {
        assert_invalid(
            check_api_audience(Some(bad)),
            "api_audience",
            "absolute URI",
        );
    }
}

#[test]
fn id_token_alg_is_es256_eddsa_or_rs256_defaulting_to_rs256() {
    assert_eq!(check_id_token_alg(None).unwrap(), SigningAlg::Rs256);
    assert_eq!(
        check_id_token_alg(Some("ES256")).unwrap(),
        SigningAlg::Es256
    );
    assert_eq!(
        check_id_token_alg(Some("EdDSA")).unwrap(),
        SigningAlg::EdDsa
    );
    for bad in ["HS256", "none", "rs256", ""] {
        assert_invalid(
            check_id_token_alg(Some(bad)),
            "id_token_signed_response_alg",
            "ES256, EdDSA, RS256",
        );
    }
}

#[test]
fn minimum_acr_is_one_of_the_two_levels_or_absent() {
    assert_eq!(check_minimum_acr(None).unwrap(), None);
    for level in [svc_domain::ACR_AAL1, svc_domain::ACR_AAL2] {
        assert_eq!(
            check_minimum_acr(Some(level)).unwrap().as_deref(),
            Some(level)
        );
    }
    for bad in [
        "",
        "urn:svc:aal3",
        "URN:SVC:AAL2",
        " urn:svc:aal2",
        "aal2",
        "urn:mace:incommon:iap:silver",
    ] {
        assert_invalid(
            check_minimum_acr(Some(bad)),
            "minimum_acr",
            "urn:svc:aal1 or urn:svc:aal2",
        );
    }
}

#[test]
fn jwks_uri_may_not_name_an_internal_address() {
    for internal in [
        "https://127.0.0.1/jwks.json",
        "https://10.0.0.5/jwks.json",
        "https://192.168.1.1:8443/jwks.json",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/jwks.json",
        "https://[::ffff:10.0.0.1]/jwks.json",
        "http://localhost/jwks.json",
        "https://api.LOCALHOST./jwks.json",
        "https://0.0.0.0/jwks.json",
    ] {
        assert_invalid(check_jwks_uri(internal), "jwks_uri", "internal address");
    }
    assert!(check_jwks_uri("https://93.184.215.14/jwks.json").is_ok());
    assert!(check_jwks_uri("https://localhost.example/jwks.json").is_ok());
}

#[test]
fn logout_uris_are_absolute_http_urls_without_fragment_or_userinfo() {
    let both = check_logout_channels(
        (Some("https://rp.example/logout?x=1"), true),
        (Some("https://rp.example/fc"), false),
    )
    .unwrap();
    assert_eq!(
        both.backchannel_uri.as_deref(),
        Some("https://rp.example/logout?x=1")
    );
    assert!(both.backchannel_session_required);
    assert_eq!(
        both.frontchannel_uri.as_deref(),
        Some("https://rp.example/fc")
    );
    assert_eq!(
        check_logout_channels((None, false), (None, false)).unwrap(),
        LogoutChannels::default()
    );
    for (bad, needle) in [
        ("https://rp.example/logout#frag", "fragment"),
        ("javascript:alert(1)", "backchannel_logout_uri"),
        ("/relative", "backchannel_logout_uri"),
        (
            "https://user:pw@rp.example/logout",
            "backchannel_logout_uri",
        ),
        ("ftp://rp.example/logout", "backchannel_logout_uri"),
    ] {
        assert_invalid(
            check_logout_channels((Some(bad), false), (None, false)),
            "backchannel_logout_uri",
            needle,
        );
    }
    let long = format!("https://rp.example/{}", "a".repeat(2100));
    assert_invalid(
        check_logout_channels((None, false), (Some(&long), false)),
        "frontchannel_logout_uri",
        "frontchannel_logout_uri",
    );
    assert_invalid(
        check_logout_channels((None, true), (None, false)),
        "backchannel_logout_session_required",
        "needs a backchannel_logout_uri",
    );
    assert_invalid(
        check_logout_channels((None, false), (None, true)),
        "frontchannel_logout_session_required",
        "needs a frontchannel_logout_uri",
    );
}

#[test]
fn logout_channels_need_the_deployment_to_run_them_and_reach_their_targets() {
    let channels = |back: Option<&str>, front: Option<&str>| LogoutChannels {
        backchannel_uri: back.map(str::to_owned),
        frontchannel_uri: front.map(str::to_owned),
        ..LogoutChannels::default()
    };
    let open = svc_domain::TargetPolicy {
        https_only: false,
        standard_port_only: false,
        public_only: false,
    };
    let strict = svc_domain::TargetPolicy {
        https_only: true,
        standard_port_only: true,
        public_only: true,
    };
    let off = crate::LogoutOffer::default();
    assert_invalid(
        check_logout_offered(&channels(Some("https://rp.example/l"), None), &off),
        "backchannel_logout_uri",
        "[logout].backchannel = false",
    );
    assert_invalid(
        check_logout_offered(&channels(None, Some("https://rp.example/f")), &off),
        "frontchannel_logout_uri",
        "[logout].frontchannel = false",
    );
    let dev = crate::LogoutOffer {
        backchannel: Some(open),
        frontchannel: true,
        frontchannel_https_only: false,
    };
    check_logout_offered(
        &channels(
            Some("http://127.0.0.1:9/l"),
            Some("http://localhost:3000/f"),
        ),
        &dev,
    )
    .unwrap();
    let production = crate::LogoutOffer {
        backchannel: Some(strict),
        frontchannel: true,
        frontchannel_https_only: true,
    };
    check_logout_offered(
        &channels(Some("https://rp.example/l"), Some("https://rp.example/f")),
        &production,
    )
    .unwrap();
    for (bad, needle) in [
        ("http://rp.example/l", "https"),
        ("https://10.0.0.7/l", "internal address"),
        ("https://[::1]/l", "internal address"),
        ("https://rp.example:8443/l", "443"),
    ] {
        assert_invalid(
            check_logout_offered(&channels(Some(bad), None), &production),
            "backchannel_logout_uri",
            needle,
        );
    }
    assert_invalid(
        check_logout_offered(&channels(None, Some("http://rp.example/f")), &production),
        "frontchannel_logout_uri",
        "https",
    );
}
