//! `POST /bc-authorize` (OpenID CIBA Core §7): the backchannel authentication endpoint, poll
//! mode. It takes the client-authenticated protocol prelude of the token endpoint
//! (`super::protocol`) and answers `200` with the `auth_req_id` (§7.3) or an RFC 6749 §5.2 JSON
//! error (§13), never cached.
//!
//! The runtime merges this router only when `[ciba].enabled`, so a disabled deployment answers
//! the router's plain 404 here; the approval page is hosted (`crate::hosted::backchannel`) and
//! the poll is the token endpoint's.

use super::protocol::{EndpointState, ProtocolRequest};
use super::token::{ClientAuthentication, OAuthErrorBody};
use crate::error::oauth::{self, no_store};
use crate::openapi::refusals::{self, Refusals};
use crate::openapi::tags;
use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use svc_oauth::backchannel::BackchannelEndpoint;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

/// State of the backchannel authentication route.
pub type BackchannelState = EndpointState<BackchannelEndpoint>;

fn api() -> OpenApiRouter<BackchannelState> {
    OpenApiRouter::new().routes(routes!(start))
}

/// The backchannel authentication route.
pub fn router(state: BackchannelState) -> Router {
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
    post, path = "/bc-authorize", tag = tags::PROTOCOL,
    operation_id = "startBackchannelAuthentication",
    summary = "Start a backchannel authentication (CIBA)",
    description = "Client-initiated backchannel authentication (OpenID CIBA Core 1.0 §7), poll \
        mode only. A confidential client registered with the `urn:openid:params:grant-type:ciba` \
        grant authenticates exactly as at the token endpoint and names the person with \
        `login_hint` (an email address or a user id); the person is mailed a link to the \
        hosted approval page, where they see the application, the `binding_message` and the \
        scopes, and approve or deny. The client polls the token endpoint with \
        `grant_type=urn:openid:params:grant-type:ciba` and the `auth_req_id`, no more often \
        than `interval` seconds: `authorization_pending`, `slow_down` (with `Retry-After`), \
        `access_denied`, `expired_token`, or the tokens, once.\n\n\
        A hint that names nobody who can sign in gets the same answer, in the same time, as \
        one that does: the request is a decoy that is never shown to anyone and never yields \
        tokens. Refused by name (`invalid_request`): `login_hint_token`, `id_token_hint`, \
        `client_notification_token` (ping and push modes), `user_code`, `acr_values`, \
        `request`. `scope` must include `openid`. Errors are RFC 6749 §5.2 JSON (CIBA Core \
        §13).\n\n\
        Served while `[ciba].enabled`; the authoritative signals are \
        `backchannel_authentication_endpoint` and `backchannel_token_delivery_modes_supported` \
        in `/.well-known/openid-configuration`.",
    request_body(
        content = BackchannelAuthenticationRequestBody,
        content_type = "application/x-www-form-urlencoded",
        description = "The request and, unless HTTP Basic is used, the client's authentication.",
    ),
    responses(
        (status = 200, description = "Started (CIBA Core §7.3).",
         body = BackchannelAuthenticationResponseBody,
         headers(
             ("Cache-Control" = String, description = "`no-store`."),
             ("Pragma" = String, description = "`no-cache`."),
         )),
        (status = 400, description = "RFC 6749 §5.2 JSON (CIBA Core §13): `invalid_request` (a \
            rejected or repeated parameter, `login_hint` missing, a bad `requested_expiry`, not \
            a form), `invalid_scope` (missing, without `openid`, or beyond the application's \
            allowed scopes), `unauthorized_client` (a public client, or one not registered for \
            the grant), `invalid_binding_message`.", body = OAuthErrorBody),
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
async fn start(State(state): State<BackchannelState>, request: ProtocolRequest) -> Response {
    match state
        .endpoint
        .start(
            &request.current.tenant,
            &request.current.issuer,
            &request.form,
            request.authorization(),
        )
        .await
    {
        Ok(answer) => no_store(axum::Json(answer).into_response()),
        Err(error) => oauth::response(&error),
    }
}

/// A backchannel authentication request (CIBA Core §7.1), poll mode.
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({
    "scope": "openid profile",
    "login_hint": "ada@example.com",
    "binding_message": "W4SCT",
    "requested_expiry": "120"
}))]
pub struct BackchannelAuthenticationRequestBody {
    /// Space-separated scopes within the application's allowed scopes, with `openid`.
    pub scope: String,
    /// The person: an email address or a user id (`usr_…`).
    pub login_hint: String,
    /// A short code the client shows, for the person to compare (at most 64 printable
    /// characters).
    #[schema(nullable = false)]
    pub binding_message: Option<String>,
    /// Seconds the request should live (honoured up to `[ciba].max_requested_expiry_secs`).
    #[schema(nullable = false)]
    pub requested_expiry: Option<String>,
    /// Client authentication in the body.
    #[serde(flatten)]
    pub client: ClientAuthentication,
}

/// The successful start response (CIBA Core §7.3).
#[derive(Serialize, ToSchema)]
#[schema(as = BackchannelAuthenticationResponse, example = json!({
    "auth_req_id": "ar_1c266114-a1be-4252-8ad1-04986c5b9ac1",
    "expires_in": 300,
    "interval": 5
}))]
pub struct BackchannelAuthenticationResponseBody {
    /// For the client's polls at the token endpoint; a secret of the client.
    pub auth_req_id: String,
    /// Seconds the request lives.
    pub expires_in: u64,
    /// Seconds to wait between polls.
    pub interval: u32,
}
