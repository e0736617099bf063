//! Pushed authorization requests (RFC 9126) through the engines: pushed at the PAR endpoint,
//! taken once at the authorization endpoint, and redeemed at the token endpoint.

use super::flow::*;
use super::support::*;
use crate::authorize::{
    AuthorizeEndpoint, AuthorizeOutcome, AuthorizeSettings, PushEndpoint,
    PushedAuthorizationResponse, PushedRequests,
};
use crate::error::{ErrorCode, OAuthError};

/// The PAR endpoint and an authorization endpoint of the flow's fixture, in `mode`.
fn endpoints(flow: &Flow, mode: PushedRequests) -> (PushEndpoint, AuthorizeEndpoint) {
    let settings = AuthorizeSettings {
        pushed: mode,
        ..AuthorizeSettings::default()
    };
    (
        PushEndpoint::new(flow.fx.ctx.clone(), settings.clone()),
        AuthorizeEndpoint::new(flow.fx.ctx.clone(), settings),
    )
}

/// Pushes the flow's default request (with `extra`) as its public application.
async fn push(
    flow: &Flow,
    par: &PushEndpoint,
    extra: &[(&str, &str)],
) -> Result<PushedAuthorizationResponse, OAuthError> {
    par.push(&flow.fx.tenant, &flow.fx.issuer, &flow.params(extra), None)
        .await
}

/// Opens the authorization endpoint with `client_id`, `request_uri` and `extra`.
async fn authorize_with(
    flow: &Flow,
    authorize: &AuthorizeEndpoint,
    client_id: &str,
    request_uri: &str,
    extra: &[(&str, &str)],
) -> AuthorizeOutcome {
    let mut pairs = vec![("client_id", client_id), ("request_uri", request_uri)];
    pairs.extend_from_slice(extra);
    authorize
        .authorize(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &form(&pairs),
            Some(&flow.session),
        )
        .await
}

/// The error of an error page.
fn page_error(outcome: &AuthorizeOutcome) -> (&str, &str) {
    match outcome {
        AuthorizeOutcome::ErrorPage {
            error, description, ..
        } => (error.as_str(), description.as_str()),
        other => panic!("expected an error page, got {other:?}"),
    }
}

/// The query of a redirect to the client.
fn redirect_query(outcome: &AuthorizeOutcome) -> std::collections::HashMap<String, String> {
    let AuthorizeOutcome::RedirectToClient(url) = outcome else {
        panic!("expected a redirect, got {outcome:?}");
    };
    assert!(url.starts_with(REDIRECT), "{url}");
    url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect()
}

#[tokio::test]
async fn a_pushed_request_is_taken_once_and_its_code_redeems() {
    // First party: no consent page, the session signs the request in at once.
    let flow = Flow::new(true).await;
    let (par, authorize) = endpoints(&flow, PushedRequests::Enabled);
    let pushed = push(&flow, &par, &[]).await.unwrap();
    assert_eq!(pushed.expires_in, 60, "CONTRACTS.md: 60 s");
    let reference = pushed
        .request_uri
        .strip_prefix("urn:ietf:params:oauth:request_uri:pr_")
        .unwrap();
    assert_eq!(reference.len(), 43, "256 random bits, base64url");

    let app = flow.app.id.as_str();
    let first = authorize_with(&flow, &authorize, app, &pushed.request_uri, &[]).await;
    let query = redirect_query(&first);
    assert_eq!(query["state"], "st-1", "the pushed state comes back");
    let tokens = flow.redeem(&query["code"], VERIFIER).await.unwrap();
    assert!(tokens.id_token.is_some());

    // RFC 9126 §4, §7.3: one-time use.
    let again = authorize_with(&flow, &authorize, app, &pushed.request_uri, &[]).await;
    assert_eq!(page_error(&again).0, "invalid_request_uri");
}

#[tokio::test]
async fn a_pushed_request_survives_the_sign_in_it_leads_to() {
    // Third party: the consent page comes first; the interaction keeps the request.
    let flow = Flow::new(false).await;
    let (par, authorize) = endpoints(&flow, PushedRequests::Enabled);
    let pushed = push(&flow, &par, &[]).await.unwrap();
    let app = flow.app.id.as_str();
    let outcome = authorize_with(&flow, &authorize, app, &pushed.request_uri, &[]).await;
    let AuthorizeOutcome::Consent { interaction } = outcome else {
        panic!("expected the consent page, got {outcome:?}");
    };
    let decided = authorize
        .decide_consent(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &interaction,
            Some(&flow.session),
            true,
        )
        .await;
    let query = redirect_query(&decided);
    assert!(flow.redeem(&query["code"], VERIFIER).await.is_ok());
}

#[tokio::test]
async fn an_expired_pushed_request_is_an_error_page() {
    let flow = Flow::new(true).await;
    let (par, authorize) = endpoints(&flow, PushedRequests::Enabled);
    let pushed = push(&flow, &par, &[]).await.unwrap();
    flow.fx.clock.advance(time::Duration::seconds(60));
    let app = flow.app.id.as_str();
    let outcome = authorize_with(&flow, &authorize, app, &pushed.request_uri, &[]).await;
    assert_eq!(page_error(&outcome).0, "invalid_request_uri");
}

#[tokio::test]
async fn another_clients_pushed_request_is_refused_and_left_for_its_own() {
    let flow = Flow::new(true).await;
    let (par, authorize) = endpoints(&flow, PushedRequests::Enabled);
    let pushed = push(&flow, &par, &[]).await.unwrap();
    let other = flow.confidential.0.id.as_str();
    let stolen = authorize_with(&flow, &authorize, other, &pushed.request_uri, &[]).await;
    assert_eq!(page_error(&stolen).0, "invalid_request_uri");
    let app = flow.app.id.as_str();
    let own = authorize_with(&flow, &authorize, app, &pushed.request_uri, &[]).await;
    assert!(redirect_query(&own).contains_key("code"));
}

#[tokio::test]
async fn authorization_parameters_beside_a_request_uri_are_refused_without_taking_it() {
    let flow = Flow::new(true).await;
    let (par, authorize) = endpoints(&flow, PushedRequests::Enabled);
    let pushed = push(&flow, &par, &[]).await.unwrap();
    let app = flow.app.id.as_str();
    for extra in [
        ("scope", "openid"),
        ("state", "other"),
        ("redirect_uri", REDIRECT),
    ] {
        let outcome = authorize_with(&flow, &authorize, app, &pushed.request_uri, &[extra]).await;
        let (error, description) = page_error(&outcome);
        assert_eq!(error, "invalid_request");
        assert!(description.starts_with(extra.0), "{description}");
    }
    let own = authorize_with(&flow, &authorize, app, &pushed.request_uri, &[]).await;
    assert!(redirect_query(&own).contains_key("code"), "still usable");
}

/// Parameters replaced in the default request, the error code, and a word the description has.
type Case = (
    &'static [(&'static str, &'static str)],
    ErrorCode,
    &'static str,
);

#[tokio::test]
async fn the_par_endpoint_refuses_as_json_what_authorize_would_refuse() {
    let flow = Flow::new(true).await;
    let (par, _) = endpoints(&flow, PushedRequests::Enabled);
    let cases: [Case; 7] = [
        (
            &[("request_uri", "urn:ietf:params:oauth:request_uri:pr_x")],
            ErrorCode::InvalidRequest,
            "request_uri",
        ),
        (
            &[("redirect_uri", "https://evil.example/cb")],
            ErrorCode::InvalidRequest,
            "redirect_uri",
        ),
        (
            &[("scope", "openid admin")],
            ErrorCode::InvalidScope,
            "admin",
        ),
        (
            &[("response_type", "token")],
            ErrorCode::UnsupportedResponseType,
            "response_type",
        ),
        (
            &[("code_challenge_method", "plain")],
            ErrorCode::InvalidRequest,
            "S256",
        ),
        (
            &[("client_id", "app_01hzzzzzzzzzzzzzzzzzzzzzzz")],
            ErrorCode::InvalidClient,
            "client authentication failed",
        ),
        (
            // RFC 9101 §6.3 via RFC 9126 §3: an unsigned request object.
            &[("request", "eyJhbGciOiJub25lIn0.e30.")],
            ErrorCode::InvalidRequestObject,
            "never none",
        ),
    ];
    for (extra, code, mentions) in cases {
        let error = push(&flow, &par, extra).await.unwrap_err();
        assert_eq!(error.code(), code, "{extra:?}: {error}");
        assert!(error.description().contains(mentions), "{extra:?}: {error}");
    }
}

#[tokio::test]
async fn a_confidential_client_authenticates_and_its_body_client_id_must_match() {
    let flow = Flow::new(true).await;
    let (par, _) = endpoints(&flow, PushedRequests::Enabled);
    let (backend, secret) = &flow.confidential;
    let mut params = flow.params(&[("client_id", backend.id.as_str())]);
    let good = basic(backend.id.as_str(), secret);
    let pushed = par
        .push(&flow.fx.tenant, &flow.fx.issuer, &params, Some(&good))
        .await;
    assert!(pushed.is_ok(), "{pushed:?}");
    let wrong = basic(backend.id.as_str(), "cs_wrong");
    let refused = par
        .push(&flow.fx.tenant, &flow.fx.issuer, &params, Some(&wrong))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), ErrorCode::InvalidClient);
    // The body names the public application while Basic authenticates the backend.
    params.retain(|(name, _)| name != "client_id");
    params.push(("client_id".into(), flow.app.id.as_str().into()));
    let mismatch = par
        .push(&flow.fx.tenant, &flow.fx.issuer, &params, Some(&good))
        .await
        .unwrap_err();
    assert_eq!(mismatch.code(), ErrorCode::InvalidRequest);
}

#[tokio::test]
async fn an_application_requiring_pushed_requests_is_refused_a_plain_one_by_redirect() {
    let flow = Flow::build(Fixture::new().await, true, |app| {
        app.require_pushed_authorization_requests = true;
    })
    .await;
    let (par, authorize) = endpoints(&flow, PushedRequests::Enabled);
    let plain = authorize
        .authorize(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &flow.params(&[]),
            Some(&flow.session),
        )
        .await;
    let query = redirect_query(&plain);
    assert_eq!(query["error"], "invalid_request");
    assert_eq!(query["state"], "st-1");
    let pushed = push(&flow, &par, &[]).await.unwrap();
    let app = flow.app.id.as_str();
    let outcome = authorize_with(&flow, &authorize, app, &pushed.request_uri, &[]).await;
    assert!(redirect_query(&outcome).contains_key("code"));
}

#[tokio::test]
async fn a_deployment_requiring_pushed_requests_refuses_every_plain_one() {
    let flow = Flow::new(true).await;
    let (par, authorize) = endpoints(&flow, PushedRequests::Required);
    let plain = authorize
        .authorize(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &flow.params(&[]),
            Some(&flow.session),
        )
        .await;
    assert_eq!(redirect_query(&plain)["error"], "invalid_request");
    let pushed = push(&flow, &par, &[]).await.unwrap();
    let app = flow.app.id.as_str();
    let outcome = authorize_with(&flow, &authorize, app, &pushed.request_uri, &[]).await;
    assert!(redirect_query(&outcome).contains_key("code"));
}

#[tokio::test]
async fn with_pushed_requests_disabled_a_request_uri_is_not_taken() {
    let flow = Flow::new(true).await;
    let (par, _) = endpoints(&flow, PushedRequests::Enabled);
    let (_, disabled) = endpoints(&flow, PushedRequests::Disabled);
    let pushed = push(&flow, &par, &[]).await.unwrap();
    let app = flow.app.id.as_str();
    // As before PAR: without a redirect_uri, the request cannot even be redirected.
    let outcome = authorize_with(&flow, &disabled, app, &pushed.request_uri, &[]).await;
    assert!(page_error(&outcome).1.contains("redirect_uri"));
    // A foreign request_uri with a full request is refused by redirect, as before.
    let foreign = disabled
        .authorize(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &flow.params(&[("request_uri", "urn:example:x")]),
            Some(&flow.session),
        )
        .await;
    assert_eq!(
        redirect_query(&foreign)["error"],
        "request_uri_not_supported"
    );
}
