//! `POST /oauth/device/code` (RFC 8628 §3.1): the device authorization endpoint. It takes the
//! client-authenticated protocol prelude of the token endpoint (`super::protocol`: tenant, body
//! limit, form media type, throttling per client and address before any credential is checked)
//! and answers `200` with the device and user codes (RFC 8628 §3.2) or an RFC 6749 §5.2 JSON
//! error (§3.2 "error response"), never cached.
//!
//! The runtime merges this router only when `[device_authorization].enabled`, so a disabled
//! deployment answers the router's plain 404 here; the verification page is hosted
//! (`crate::hosted::device`) and the poll is the token endpoint's.

use super::protocol::{EndpointState, ProtocolRequest};
use super::token::{ClientAuthentication, OAuthErrorBody};
use crate::error::oauth::{self, no_store};
use crate::openapi::refusals::{self, Refusals};
use crate::openapi::tags;
use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use svc_oauth::device::DeviceEndpoint;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

/// State of the device authorization route.
pub type DeviceState = EndpointState<DeviceEndpoint>;

fn api() -> OpenApiRouter<DeviceState> {
    OpenApiRouter::new().routes(routes!(start))
}

/// The device authorization route.
pub fn router(state: DeviceState) -> Router {
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
    post, path = "/oauth/device/code", tag = tags::PROTOCOL,
    operation_id = "startDeviceAuthorization",
    summary = "Start a device authorization",
    description = "The device authorization endpoint (RFC 8628 §3.1). A device without a \
        convenient browser (a TV, a command-line tool) authenticates exactly as at the token \
        endpoint (a public client sends its `client_id`), must be registered with the \
        `urn:ietf:params:oauth:grant-type:device_code` grant, and asks for scopes it is \
        allowed. It gets a `device_code` to poll with and a `user_code` (`XXXX-XXXX`, letters \
        of `BCDFGHJKLMNPQRSTVWXZ`) that a person types at `verification_uri` on another device \
        (or opens `verification_uri_complete`). The person signs in there, sees the code and \
        the application again, and approves or denies.\n\n\
        The device then polls the token endpoint with \
        `grant_type=urn:ietf:params:oauth:grant-type:device_code` and the `device_code`, no \
        more often than `interval` seconds: `authorization_pending` until the person answers, \
        `slow_down` (with `Retry-After`; the interval grows by 5 s) when it polls too fast, \
        `access_denied`, `expired_token`, or the tokens, once (RFC 8628 §3.5).\n\n\
        Served while `[device_authorization].enabled` (the default); the authoritative signals \
        are `device_authorization_endpoint` and the grant in `grant_types_supported` in \
        `/.well-known/oauth-authorization-server` (or `/.well-known/openid-configuration`).",
    request_body(
        content = DeviceAuthorizationRequestBody,
        content_type = "application/x-www-form-urlencoded",
        description = "The scopes and, unless HTTP Basic is used, the client's authentication.",
    ),
    responses(
        (status = 200, description = "Started (RFC 8628 §3.2).",
         body = DeviceAuthorizationResponseBody,
         headers(
             ("Cache-Control" = String, description = "`no-store`."),
             ("Pragma" = String, description = "`no-cache`."),
         )),
        (status = 400, description = "RFC 6749 §5.2 JSON: `invalid_request` (a repeated \
            parameter, not a form, several authentication methods), `invalid_scope` (missing, \
            malformed, or beyond the application's allowed scopes), `unauthorized_client` (the \
            application is not registered for the device grant).", body = OAuthErrorBody),
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
async fn start(State(state): State<DeviceState>, request: ProtocolRequest) -> Response {
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

/// A device authorization request (RFC 8628 §3.1).
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({
    "client_id": "app_01JB7Q3M2X8V6N4K0T5R9C1D2E",
    "scope": "openid profile offline_access"
}))]
pub struct DeviceAuthorizationRequestBody {
    /// Space-separated scopes within the application's allowed scopes (required here: RFC 6749
    /// §3.3 lets a server refuse a request without one rather than pick a default).
    pub scope: String,
    /// Client authentication in the body.
    #[serde(flatten)]
    pub client: ClientAuthentication,
}

/// The device authorization response (RFC 8628 §3.2).
#[derive(Serialize, ToSchema)]
#[schema(as = DeviceAuthorizationResponse, example = json!({
    "device_code": "dc_GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS",
    "user_code": "WDJB-MJHT",
    "verification_uri": "https://acme.id.example.com/oauth/device/verify",
    "verification_uri_complete": "https://acme.id.example.com/oauth/device/verify?user_code=WDJB-MJHT",
    "expires_in": 600,
    "interval": 5
}))]
pub struct DeviceAuthorizationResponseBody {
    /// For the device's polls at the token endpoint; a secret of the device.
    pub device_code: String,
    /// For the person to type at `verification_uri`.
    pub user_code: String,
    /// The hosted verification page.
    pub verification_uri: String,
    /// The same with the user code filled in (for a QR code or a link).
    pub verification_uri_complete: String,
    /// Seconds both codes live.
    pub expires_in: u64,
    /// Seconds to wait between polls.
    pub interval: u32,
}
