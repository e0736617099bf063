//! Unit tests of `request.rs`: the token request's form parsing and its per-grant checks.

use super::*;
use crate::error::ErrorCode;
use base64::engine::general_purpose::STANDARD;

fn form(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn basic(id: &str, secret: &str) -> String {
    format!("Basic {}", STANDARD.encode(format!("{id}:{secret}")))
}

fn parse(pairs: &[(&str, &str)], auth: Option<&str>) -> Result<TokenRequest, OAuthError> {
    TokenRequest::parse(&form(pairs), auth)
}

fn refused(pairs: &[(&str, &str)], auth: Option<&str>) -> OAuthError {
    parse(pairs, auth).unwrap_err()
}

#[test]
fn a_client_credentials_request_with_basic_parses() {
    let request = parse(
        &[("grant_type", "client_credentials"), ("scope", "a b")],
        Some(&basic("app_x", "s3cret")),
    )
    .unwrap();
    assert_eq!(request.grant_type(), GrantType::ClientCredentials);
    assert_eq!(request.scope(), Some("a b"));
    assert_eq!(
        request.client(),
        &ClientCredentials::Basic {
            client_id: "app_x".into(),
            secret: Credential::new("s3cret")
        }
    );
    assert!(request.client().used_basic());
}

#[test]
fn repeated_parameters_are_invalid_request_naming_the_parameter() {
    for name in ["grant_type", "scope", "client_id", "client_secret", "code"] {
        let value = if name == "grant_type" {
            "client_credentials"
        } else {
            "v"
        };
        let error = refused(
            &[
                ("grant_type", "client_credentials"),
                (name, value),
                (name, value),
            ][usize::from(name == "grant_type")..],
            None,
        );
        assert_eq!(error.code(), ErrorCode::InvalidRequest, "{name}");
        assert!(error.description().contains(name), "{name}: {error}");
    }
    // A hostile name is not echoed.
    let error = refused(
        &[
            ("grant_type", "client_credentials"),
            ("a`b", "1"),
            ("a`b", "2"),
        ],
        None,
    );
    assert_eq!(
        error.description(),
        "a parameter is repeated (RFC 6749 §3.2)"
    );
}

#[test]
fn repeated_resource_parameters_are_collected_for_the_grant() {
    let request = parse(
        &[
            ("grant_type", "client_credentials"),
            ("resource", "https://a.example"),
            ("resource", "https://b.example"),
        ],
        None,
    )
    .unwrap();
    assert_eq!(
        request.resources(),
        ["https://a.example", "https://b.example"]
    );
}

#[test]
fn empty_values_count_as_absent() {
    // An empty duplicate is no duplicate, and an empty grant_type is a missing one.
    let request = parse(
        &[
            ("grant_type", "client_credentials"),
            ("scope", ""),
            ("scope", "a"),
            ("client_secret", ""),
            ("client_id", "app_x"),
            ("resource", ""),
        ],
        None,
    )
    .unwrap();
    assert_eq!(request.scope(), Some("a"));
    assert!(request.resources().is_empty());
    assert_eq!(
        request.client(),
        &ClientCredentials::ClientId {
            client_id: "app_x".into()
        }
    );
    let error = refused(&[("grant_type", ""), ("client_id", "app_x")], None);
    assert_eq!(error.code(), ErrorCode::InvalidRequest);
    assert_eq!(error.description(), "grant_type is required");
}

#[test]
fn unknown_parameters_are_ignored_but_kept_for_grants() {
    let request = parse(
        &[
            ("grant_type", "authorization_code"),
            ("code", "c"),
            ("foo", "bar"),
        ],
        None,
    )
    .unwrap();
    assert_eq!(request.param("code"), Some("c"));
    assert_eq!(request.param("foo"), Some("bar"));
    assert_eq!(request.param("nope"), None);
    assert_eq!(request.client(), &ClientCredentials::Absent);
}

#[test]
fn grant_type_is_required_and_must_be_known() {
    assert_eq!(
        refused(&[("client_id", "app_x")], None).code(),
        ErrorCode::InvalidRequest
    );
    for (value, description) in [
        ("password", "grant_type `password` is not supported"),
        ("implicit", "grant_type `implicit` is not supported"),
        (
            "urn:ietf:params:oauth:grant-type:jwt-bearer",
            "grant_type `urn:ietf:params:oauth:grant-type:jwt-bearer` is not supported",
        ),
        (
            "Client_Credentials",
            "grant_type `Client_Credentials` is not supported",
        ),
        ("client_credentials ", "grant_type is malformed"),
        ("x\ny", "grant_type is malformed"),
    ] {
        let error = refused(&[("grant_type", value)], None);
        assert_eq!(error.code(), ErrorCode::UnsupportedGrantType, "{value:?}");
        assert_eq!(error.description(), description);
    }
    let long = "g".repeat(65);
    assert_eq!(
        refused(&[("grant_type", &long)], None).description(),
        "grant_type is malformed"
    );
}

#[test]
fn at_most_one_client_authentication_mechanism() {
    let cc = ("grant_type", "client_credentials");
    let header = basic("app_x", "s");
    for (pairs, auth) in [
        (vec![cc, ("client_secret", "s")], Some(header.as_str())),
        (
            vec![cc, ("client_assertion", "a.b.c")],
            Some(header.as_str()),
        ),
        (
            vec![
                cc,
                ("client_id", "app_x"),
                ("client_secret", "s"),
                ("client_assertion", "a.b.c"),
                ("client_assertion_type", JWT_BEARER_ASSERTION_TYPE),
            ],
            None,
        ),
    ] {
        let error = refused(&pairs, auth);
        assert_eq!(error.code(), ErrorCode::InvalidRequest, "{pairs:?}");
        assert!(error.description().contains("exactly one"));
    }
}

#[test]
fn basic_credentials_are_form_urldecoded() {
    let request = parse(
        &[("grant_type", "client_credentials")],
        Some(&basic("app%5Fx", "a+b%3Ac%25")),
    )
    .unwrap();
    assert_eq!(
        request.client(),
        &ClientCredentials::Basic {
            client_id: "app_x".into(),
            secret: Credential::new("a b:c%"),
        }
    );
    // The scheme is case-insensitive and padding is optional.
    let unpadded = format!(
        "bAsIc {}",
        STANDARD.encode("app_x:ab").trim_end_matches('=')
    );
    let request = parse(&[("grant_type", "client_credentials")], Some(&unpadded)).unwrap();
    assert!(request.client().used_basic());
    // A secret holding a colon: only the first colon separates.
    let request = parse(
        &[("grant_type", "client_credentials")],
        Some(&format!("Basic {}", STANDARD.encode("app_x:a:b"))),
    )
    .unwrap();
    assert_eq!(
        request.client(),
        &ClientCredentials::Basic {
            client_id: "app_x".into(),
            secret: Credential::new("a:b"),
        }
    );
}

#[test]
fn malformed_basic_credentials_are_invalid_client_with_a_challenge() {
    let no_colon = format!("Basic {}", STANDARD.encode("app_x"));
    let bad_escape = basic("app_x", "%zz");
    let bad_utf8 = format!("Basic {}", STANDARD.encode([0xff, b':', b'a']));
    let empty_id = basic("", "secret");
    for header in [
        "Basic !!!notbase64",
        "Basic",
        no_colon.as_str(),
        bad_escape.as_str(),
        bad_utf8.as_str(),
        empty_id.as_str(),
        "Bearer abc",
        "",
    ] {
        let error = refused(&[("grant_type", "client_credentials")], Some(header));
        assert_eq!(error.code(), ErrorCode::InvalidClient, "{header}");
        assert!(error.basic_challenge(), "{header}");
    }
}

#[test]
fn basic_and_a_different_body_client_id_are_refused() {
    let error = refused(
        &[("grant_type", "client_credentials"), ("client_id", "app_y")],
        Some(&basic("app_x", "s")),
    );
    assert_eq!(error.code(), ErrorCode::InvalidRequest);
    // The same id in both places is fine.
    assert!(
        parse(
            &[("grant_type", "client_credentials"), ("client_id", "app_x")],
            Some(&basic("app_x", "s")),
        )
        .is_ok()
    );
}

#[test]
fn secrets_and_assertions_need_their_companions() {
    let cc = ("grant_type", "client_credentials");
    let error = refused(&[cc, ("client_secret", "s")], None);
    assert_eq!(error.code(), ErrorCode::InvalidRequest);
    assert!(
        error
            .description()
            .contains("client_secret requires client_id")
    );

    let error = refused(&[cc, ("client_assertion", "a.b.c")], None);
    assert_eq!(error.code(), ErrorCode::InvalidRequest);
    assert!(error.description().contains("client_assertion_type"));

    let error = refused(
        &[cc, ("client_assertion_type", JWT_BEARER_ASSERTION_TYPE)],
        None,
    );
    assert_eq!(error.code(), ErrorCode::InvalidRequest);

    let request = parse(
        &[
            cc,
            ("client_assertion", "a.b.c"),
            ("client_assertion_type", JWT_BEARER_ASSERTION_TYPE),
        ],
        None,
    )
    .unwrap();
    assert!(matches!(
        request.client(),
        ClientCredentials::Assertion {
            client_id: None,
            ..
        }
    ));
    let request = parse(&[cc, ("client_id", "app_x"), ("client_secret", "s")], None).unwrap();
    assert!(matches!(request.client(), ClientCredentials::Post { .. }));
}

#[test]
fn debug_output_never_shows_credentials() {
    let request = parse(
        &[
            ("grant_type", "authorization_code"),
            ("client_id", "app_x"),
            ("client_secret", "topsecret"),
            ("code", "thecode"),
        ],
        None,
    )
    .unwrap();
    let debug = format!("{request:?}");
    assert!(
        !debug.contains("topsecret") && !debug.contains("thecode"),
        "{debug}"
    );
    assert!(debug.contains("app_x") && debug.contains("code"));
}

#[test]
fn client_id_hints_come_from_body_basic_or_assertion_sub() {
    let cc = ("grant_type", "client_credentials");
    assert_eq!(
        client_id_hint(&form(&[cc, ("client_id", "app_a")]), None).as_deref(),
        Some("app_a")
    );
    assert_eq!(
        client_id_hint(&form(&[cc]), Some(&basic("app_b", "s"))).as_deref(),
        Some("app_b")
    );
    let payload = URL_SAFE_NO_PAD.encode(r#"{"sub":"app_c"}"#);
    let assertion = format!("e30.{payload}.sig");
    assert_eq!(
        client_id_hint(&form(&[cc, ("client_assertion", &assertion)]), None).as_deref(),
        Some("app_c")
    );
    assert_eq!(client_id_hint(&form(&[cc]), None), None);
    assert_eq!(client_id_hint(&form(&[cc]), Some("Basic %%%")), None);
    let long = "a".repeat(129);
    assert_eq!(
        client_id_hint(&form(&[cc, ("client_id", &long)]), None),
        None
    );
}
