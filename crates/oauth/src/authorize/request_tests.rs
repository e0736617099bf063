//! Unit tests of `request.rs`'s checks: each parameter rule, its error family and its error code.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use svc_domain::{ClientId, SigningAlg, TenantId, TokenEndpointAuthMethod};
use time::OffsetDateTime;

fn app(method: TokenEndpointAuthMethod) -> Application {
    Application {
        id: ClientId::parse("app_01hzzzzzzzzzzzzzzzzzzzzzzz").unwrap(),
        tenant_id: TenantId::parse("ten_01hzzzzzzzzzzzzzzzzzzzzzzz").unwrap(),
        name: "Shop".into(),
        redirect_uris: vec![RedirectUri::parse("https://shop.example/cb").unwrap()],
        post_logout_redirect_uris: vec![],
        grant_types: vec![GrantType::AuthorizationCode, GrantType::RefreshToken],
        token_endpoint_auth_method: method,
        allowed_scopes: ScopeSet::parse("openid profile email offline_access").unwrap(),
        secret_hash: None,
        api_audience: None,
        first_party: false,
        id_token_signed_response_alg: SigningAlg::Rs256,
        jwks: None,
        jwks_uri: None,
        is_management: false,
        minimum_acr: None,
        organization_usage: svc_domain::OrganizationUsage::Allow,
        require_pushed_authorization_requests: false,
        dpop_bound_access_tokens: false,
        logout: Default::default(),
        authorization_details_types: Vec::new(),
        metadata_document: None,
        created_at: OffsetDateTime::UNIX_EPOCH,
        updated_at: OffsetDateTime::UNIX_EPOCH,
    }
}

const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn parse(
    method: TokenEndpointAuthMethod,
    list: &[(&str, &str)],
) -> Result<AuthorizationRequest, String> {
    let app = app(method);
    let raw = pairs(list);
    let params = Params::new(&raw);
    let id = check_client_id(&params).map_err(|e| format!("page:{}", e.description))?;
    let uri = check_redirect_uri(&app, &params).map_err(|e| format!("page:{}", e.description))?;
    check_rest(&app, &params, (id, uri), None, false)
        .map_err(|e| format!("{}:{}", e.error, e.description))
}

fn base() -> Vec<(&'static str, &'static str)> {
    vec![
        ("client_id", "app_01hzzzzzzzzzzzzzzzzzzzzzzz"),
        ("redirect_uri", "https://shop.example/cb"),
        ("response_type", "code"),
        ("scope", "openid profile"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
        ("state", "xyz"),
    ]
}

#[test]
fn a_well_formed_public_request_parses() {
    let r = parse(TokenEndpointAuthMethod::None, &base()).unwrap();
    assert_eq!(r.scope, "openid profile");
    assert_eq!(r.code_challenge.as_deref(), Some(CHALLENGE));
    assert_eq!(r.state.as_deref(), Some("xyz"));
}

#[test]
fn redirect_uri_variants_are_page_errors() {
    for bad in [
        "https://shop.example/CB",
        "https://shop.example/cb/",
        "https://shop.example/cb?x=1",
        "https://shop.example/cb/..;/",
        "https://shop.example/%2e%2e/cb",
        "https://evil@shop.example/cb",
        "https://other.example/cb",
        "javascript:alert(1)",
        "https://shop.example/cb#f",
    ] {
        let mut list = base();
        list[1] = ("redirect_uri", bad);
        let err = parse(TokenEndpointAuthMethod::None, &list).unwrap_err();
        assert!(err.starts_with("page:"), "{bad}: {err}");
    }
}

#[test]
fn repeated_client_or_redirect_is_a_page_error_other_repeats_redirect() {
    let mut list = base();
    list.push(("client_id", "app_01hzzzzzzzzzzzzzzzzzzzzzzz"));
    assert!(
        parse(TokenEndpointAuthMethod::None, &list)
            .unwrap_err()
            .starts_with("page:")
    );
    let mut list = base();
    list.push(("state", "again"));
    assert!(
        parse(TokenEndpointAuthMethod::None, &list)
            .unwrap_err()
            .starts_with("invalid_request:state")
    );
}

#[test]
fn repeats_of_unknown_parameters_are_ignored_repeats_of_known_ones_refused() {
    let mut list = base();
    list.extend([("utm_source", "mail"), ("utm_source", "again"), ("x", "")]);
    list.extend([
        ("x", "1"),
        ("resource", "https://a.example"),
        ("resource", "https://b.example"),
    ]);
    assert!(parse(TokenEndpointAuthMethod::None, &list).is_ok());
    for name in ["nonce", "prompt", "login_hint", "claims", "scope"] {
        let mut list = base();
        list.extend([(name, "a"), (name, "b")]);
        let err = parse(TokenEndpointAuthMethod::None, &list).unwrap_err();
        assert_eq!(
            err,
            format!("invalid_request:{name} was sent more than once")
        );
    }
}

#[test]
fn an_empty_occurrence_still_makes_a_known_parameter_repeated() {
    let mut list = base();
    list.push(("state", ""));
    assert_eq!(
        parse(TokenEndpointAuthMethod::None, &list).unwrap_err(),
        "invalid_request:state was sent more than once"
    );
    let mut list = base();
    list.extend([("nonce", ""), ("nonce", "")]);
    assert!(parse(TokenEndpointAuthMethod::None, &list).is_err());
    let mut list = base();
    list.push(("client_id", ""));
    assert!(
        parse(TokenEndpointAuthMethod::None, &list)
            .unwrap_err()
            .starts_with("page:client_id was sent more than once")
    );
    // A single empty value is simply absent.
    let mut list = base();
    list.push(("nonce", ""));
    assert_eq!(
        parse(TokenEndpointAuthMethod::None, &list).unwrap().nonce,
        None
    );
}

#[test]
fn pkce_rules() {
    let without = |names: &[&str]| {
        base()
            .into_iter()
            .filter(|(k, _)| !names.contains(k))
            .collect::<Vec<_>>()
    };
    // Public clients must use PKCE; confidential ones may omit it entirely.
    let none = without(&["code_challenge", "code_challenge_method"]);
    assert!(parse(TokenEndpointAuthMethod::None, &none).is_err());
    assert!(parse(TokenEndpointAuthMethod::ClientSecretBasic, &none).is_ok());
    // A challenge always needs S256 spelled out; plain is refused.
    let no_method = without(&["code_challenge_method"]);
    assert!(parse(TokenEndpointAuthMethod::ClientSecretBasic, &no_method).is_err());
    let mut plain = base();
    plain[5] = ("code_challenge_method", "plain");
    assert!(parse(TokenEndpointAuthMethod::ClientSecretBasic, &plain).is_err());
    let method_only = without(&["code_challenge"]);
    assert!(parse(TokenEndpointAuthMethod::ClientSecretBasic, &method_only).is_err());
    let mut short = base();
    short[4] = ("code_challenge", "abc");
    assert!(parse(TokenEndpointAuthMethod::None, &short).is_err());
}

#[test]
fn response_type_scope_prompt_and_sizes() {
    let mut list = base();
    list[2] = ("response_type", "token");
    assert!(
        parse(TokenEndpointAuthMethod::None, &list)
            .unwrap_err()
            .starts_with("unsupported_response_type")
    );
    let mut list = base();
    list[3] = ("scope", "openid admin:all");
    assert!(
        parse(TokenEndpointAuthMethod::None, &list)
            .unwrap_err()
            .starts_with("invalid_scope")
    );
    let mut list = base();
    list.push(("prompt", "none login"));
    assert!(parse(TokenEndpointAuthMethod::None, &list).is_err());
    let mut list = base();
    list.push(("prompt", "login consent"));
    let r = parse(TokenEndpointAuthMethod::None, &list).unwrap();
    assert!(r.prompt.login && r.prompt.consent && !r.prompt.none);
    let mut list = base();
    list.push(("max_age", "-1"));
    assert!(parse(TokenEndpointAuthMethod::None, &list).is_err());
    let long = "x".repeat(MAX_STATE + 1);
    let mut list = base();
    list[6] = ("state", &long);
    assert!(parse(TokenEndpointAuthMethod::None, &list).is_err());
    let mut list = base();
    list.push(("claims", "[1]"));
    assert!(parse(TokenEndpointAuthMethod::None, &list).is_err());
    let mut list = base();
    list.push(("request_uri", "urn:x"));
    assert!(
        parse(TokenEndpointAuthMethod::None, &list)
            .unwrap_err()
            .starts_with("request_uri_not_supported")
    );
    let mut list = base();
    list.push(("unknown_param", "ignored"));
    assert!(parse(TokenEndpointAuthMethod::None, &list).is_ok());
}
