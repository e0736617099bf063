//! `POST /oauth/par` (RFC 9126 §2): the pushed authorization request endpoint. It takes the
//! client-authenticated protocol prelude of the token endpoint (`super::protocol`: tenant, body
//! limit, form media type, throttling per client and address before any credential is checked)
//! and answers `201 Created` with the `request_uri` (RFC 9126 §2.2) or an RFC 6749 §5.2 JSON
//! error (RFC 9126 §2.3), never cached.
//!
//! The runtime merges this router only when `[oidc].pushed_authorization_requests` is not
//! `disabled`, so a disabled deployment answers the router's plain 404 here. Any other method is
//! 405 (RFC 9126 §2.3), the router's own answer for a path served for POST only. The rate of
//! pushes, and so the number of live pushed requests (each lives 60 s), is bounded by the
//! throttle of the prelude.

use super::protocol::{EndpointState, ProtocolRequest};
use super::token::{ClientAuthentication, OAuthErrorBody};
use crate::error::oauth::{self, no_store};
use crate::openapi::refusals::{self, Refusals};
use crate::openapi::tags;
use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde::{Deserialize, Serialize};
use svc_oauth::authorize::PushEndpoint;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

/// State of the PAR route.
pub type ParState = EndpointState<PushEndpoint>;

fn api() -> OpenApiRouter<ParState> {
    OpenApiRouter::new().routes(routes!(push))
}

/// The PAR route.
pub fn router(state: ParState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// Its OpenAPI operation, with the refusals of the protocol prelude.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    let mut doc = api().into_openapi();
    refusals::add(&mut doc, |_| Refusals::THROTTLED_TENANT);
    doc
}

#[utoipa::path(
    post, path = "/oauth/par", tag = tags::PROTOCOL,
    operation_id = "pushAuthorizationRequest",
    summary = "Push an authorization request (PAR)",
    description = "Pushed authorization requests (RFC 9126). The client sends the parameters \
        of an authorization request here, authenticated exactly as at the token endpoint \
        (RFC 9126 §2.1; a public client sends its `client_id`), and gets a `request_uri` that \
        the browser then brings to `/oauth/authorize` with the `client_id` and nothing else: \
        any other authorization parameter beside them is refused there (RFC 9126 §4, strictly). \
        The `request_uri` is single use and lives 60 seconds.\n\n\
        The parameters pass the authorization endpoint's own checks; what it would refuse is \
        refused here as RFC 6749 §5.2 JSON, never by redirect (RFC 9126 §2.3). A `request_uri` \
        cannot be pushed. A signed request object (`request`, RFC 9101; RFC 9126 §3) can, while \
        `[oidc].request_objects` is not `\"disabled\"`: it then carries every authorization \
        parameter, and a failed verification is `invalid_request_object`. A `client_id` in \
        the body must be the authenticated client. Client credentials are never stored with \
        the request.\n\n\
        Served unless `[oidc].pushed_authorization_requests = \"disabled\"`; with `\"required\"` \
        every authorization request must come this way, as must those of an application \
        registered with `require_pushed_authorization_requests`. The authoritative signals are \
        `pushed_authorization_request_endpoint` and `require_pushed_authorization_requests` in \
        `/.well-known/oauth-authorization-server` (or `/.well-known/openid-configuration`).",
    request_body(
        content = PushedAuthorizationRequestBody,
        content_type = "application/x-www-form-urlencoded",
        description = "The authorization request's parameters and, unless HTTP Basic is used, \
                       the client's authentication.",
    ),
    responses(
        (status = 201, description = "Stored (RFC 9126 §2.2).",
         body = PushedAuthorizationResponseBody,
         headers(
             ("Cache-Control" = String, description = "`no-store`."),
             ("Pragma" = String, description = "`no-cache`."),
         )),
        (status = 400, description = "RFC 6749 §5.2 JSON (RFC 9126 §2.3): `invalid_request` \
            (a missing, repeated or malformed parameter, an unregistered `redirect_uri`, a \
            pushed `request_uri`, a `client_id` that is not the authenticated client, not a \
            form, several authentication methods), `invalid_scope`, `unauthorized_client` (the \
            application may not use the authorization code flow), `unsupported_response_type`, \
            `invalid_target` (`resource`).", body = OAuthErrorBody),
        (status = 401, description = "RFC 6749 §5.2 `invalid_client`: client authentication \
            failed or was missing.", body = OAuthErrorBody,
         headers(("WWW-Authenticate" = String,
                  description = "`Basic realm=\"svc\"` when the client tried HTTP Basic."))),
        (status = 500, description = "RFC 6749 §5.2 `server_error`.", body = OAuthErrorBody),
        (status = 503, description = "RFC 6749 §5.2 `temporarily_unavailable`.",
         body = OAuthErrorBody),
    ),
    security(("client_secret_basic" = []), ()),
)]
async fn push(State(state): State<ParState>, request: ProtocolRequest) -> Response {
    match state
        .endpoint
        .push_with_proof(
            &request.current.tenant,
            &request.current.issuer,
            &request.form,
            request.authorization(),
            request.dpop_proof(),
        )
        .await
    {
        Ok(answer) => no_store((StatusCode::CREATED, axum::Json(answer)).into_response()),
        Err(error) => oauth::response(&error),
    }
}

/// A pushed authorization request (RFC 9126 §2.1): the parameters of `/oauth/authorize`, as a
/// form. Parameters not listed are those of the authorization endpoint too (`max_age`,
/// `login_hint`, `acr_values`, `claims`, `organization`, `resource`, …), with its rules.
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({
    "client_id": "app_01JB7Q3M2X8V6N4K0T5R9C1D2E",
    "redirect_uri": "https://app.example.com/callback",
    "response_type": "code",
    "scope": "openid profile email",
    "state": "af0ifjsldkj",
    "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    "code_challenge_method": "S256"
}))]
pub struct PushedAuthorizationRequestBody {
    /// One of the application's registered redirect URIs, character for character.
    pub redirect_uri: String,
    /// `code`.
    pub response_type: String,
    /// Space-separated scopes within the application's allowed scopes.
    pub scope: String,
    /// Returned unchanged with the answer; at most 2048 characters.
    #[schema(nullable = false)]
    pub state: Option<String>,
    /// Put into the ID token; at most 512 characters.
    #[schema(nullable = false)]
    pub nonce: Option<String>,
    /// BASE64URL(SHA-256(code_verifier)); required for public clients.
    #[schema(nullable = false)]
    pub code_challenge: Option<String>,
    /// `S256`, with `code_challenge`.
    #[schema(nullable = false)]
    pub code_challenge_method: Option<String>,
    /// Space-separated among `none`, `login`, `consent`, `select_account`.
    #[schema(nullable = false)]
    pub prompt: Option<String>,
    /// A signed request object (RFC 9101) carrying every authorization parameter, signed with a
    /// key the application registered; parameters sent beside it must agree with it.
    #[schema(nullable = false)]
    pub request: Option<String>,
    /// Client authentication in the body.
    #[serde(flatten)]
    pub client: ClientAuthentication,
}

/// The answer of the PAR endpoint (RFC 9126 §2.2).
#[derive(Serialize, ToSchema)]
#[schema(as = PushedAuthorizationResponse, example = json!({
    "request_uri": "urn:ietf:params:oauth:request_uri:pr_bwc4JK-ESC0w8acc191e-Y1LTC2",
    "expires_in": 60
}))]
pub struct PushedAuthorizationResponseBody {
    /// The reference to send to `/oauth/authorize` with the `client_id`; single use.
    pub request_uri: String,
    /// Seconds it can be used.
    pub expires_in: u64,
}
