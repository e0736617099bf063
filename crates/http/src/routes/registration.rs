//! Dynamic client registration: `POST /oauth/register` (RFC 7591 §3) and the client
//! configuration endpoint `/oauth/register/{client_id}` (RFC 7592: `GET`, `PUT`, `DELETE`).
//! Thin handlers over `svc_manage::registration`: the tenant from the host, the JSON body
//! (within `max_request_body_bytes`, `application/json` only), the registration access token
//! from `Authorization: Bearer`, and errors in RFC 7591 §3.2.2 JSON through
//! `crate::error::registration`. Every answer is `no-store` (it may carry credentials).
//!
//! The runtime merges this router only when `[dynamic_registration].enabled`, so a disabled
//! deployment answers the router's plain 404; a tenant whose policy is `disabled` gets
//! `403 access_denied`, and one whose policy is `protected` wants an initial access token as
//! `Authorization: Bearer` on the registration (else `401 invalid_token`).

use crate::error::oauth::no_store;
use crate::error::registration::{self as errors, unreadable_metadata};
use crate::openapi::refusals::{self, Refusals};
use crate::openapi::tags;
use crate::tenancy::{CurrentTenant, TenantResolver};
use crate::{ClientContext, RequestId};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRef, Path, State};
use axum::response::{IntoResponse, Response};
use http::header::{AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderMap, StatusCode};
use serde::Serialize;
use svc_manage::registration::{
    self as dcr, ClientInformation, ClientMetadata, RegistrationSettings,
};
use svc_manage::{ManageContext, RequestMeta};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

/// State of the registration routes.
#[derive(Clone)]
pub struct RegistrationState {
    /// Host → tenant.
    pub tenants: TenantResolver,
    /// The management use cases' dependencies (registration shares the applications' rules).
    pub manage: ManageContext,
    /// `[dynamic_registration]`.
    pub settings: RegistrationSettings,
}

impl FromRef<RegistrationState> for TenantResolver {
    fn from_ref(state: &RegistrationState) -> Self {
        state.tenants.clone()
    }
}

fn api() -> OpenApiRouter<RegistrationState> {
    OpenApiRouter::new()
        .routes(routes!(register))
        .routes(routes!(read, replace, remove))
}

/// The registration routes.
pub fn router(state: RegistrationState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// Their OpenAPI operations, with the refusals around them (registrations are counted per
/// address: 429).
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    let mut doc = api().into_openapi();
    refusals::add(&mut doc, |_| Refusals::THROTTLED_TENANT);
    doc
}

/// What the audit log records of the request.
fn meta(headers: &RequestId, client: &ClientContext) -> RequestMeta {
    RequestMeta {
        request_id: Some(headers.to_string()),
        client_ip: client.ip.map(|ip| ip.to_string()),
    }
}

/// The body as client metadata: JSON (RFC 7591 §3.1), an object of known members.
fn metadata(headers: &HeaderMap, body: &[u8]) -> Result<ClientMetadata, Response> {
    let json = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err(unreadable_metadata(
            "the media type must be application/json",
        ));
    }
    // An object only: serde would also read a struct from a JSON array, member by position.
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| unreadable_metadata(&e.to_string()))?;
    if !value.is_object() {
        return Err(unreadable_metadata("client metadata is a JSON object"));
    }
    serde_json::from_value(value).map_err(|e| unreadable_metadata(&e.to_string()))
}

/// The registration access token (RFC 6750 §2.1), when the header is `Bearer <token>`.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

fn answer(status: StatusCode, info: ClientInformation) -> Response {
    no_store((status, axum::Json(info)).into_response())
}

#[utoipa::path(
    post, path = "/oauth/register", tag = tags::PROTOCOL,
    operation_id = "registerClient",
    summary = "Register a client (dynamic client registration)",
    description = "Dynamic client registration (RFC 7591 §3). Served while \
        `[dynamic_registration].enabled`, for tenants whose registration policy \
        (`/api/v1/registration-policy`) is `open`, or `protected` with one of the tenant's \
        initial access tokens (`/api/v1/registration-tokens`) as `Authorization: Bearer` (RFC \
        7591 §3; each registration spends one of its uses); the authoritative signal is \
        `registration_endpoint` in the tenant's `/.well-known/openid-configuration` (or \
        `/.well-known/oauth-authorization-server`). Registrations are counted \
        per client address per tenant and refused with 429 past \
        `[dynamic_registration].max_registrations_per_hour`.\n\n\
        The client sends its metadata as JSON and gets `201` with its `client_id`, a \
        `client_secret` for secret-based methods (`client_secret_expires_at: 0`), and a \
        `registration_access_token` with its `registration_client_uri` (RFC 7592), each shown \
        this once. The application is third-party (consent is asked), audited as \
        `application.created` by `client:{client_id}`, and manageable through the management \
        API like any other.\n\n\
        Rules, the management API's own (one rule set): `redirect_uris` matched exactly, https \
        or loopback / private-use schemes for native apps, never a fragment or `javascript:` \
        (RFC 9700 §4.1.3; `invalid_redirect_uri`); `grant_types` among `authorization_code` \
        (default), `refresh_token` (with a code or device grant), `client_credentials` \
        (confidential clients only), the device grant; `response_types` `[\"code\"]` exactly \
        with the code grant; `token_endpoint_auth_method` `none`, `client_secret_basic` \
        (default), `client_secret_post` or `private_key_jwt` (with exactly one of `jwks` or \
        `jwks_uri`: https, never an internal address); `scope` (default `openid`) without \
        management API scopes; `client_name` 1 to 200 characters. Unknown metadata is refused \
        (`invalid_client_metadata`, naming it), and so is any `software_statement` \
        (`invalid_software_statement`: no issuer of them is trusted).",
    request_body(content = ClientMetadata, content_type = "application/json"),
    responses(
        (status = 201, description = "Registered (RFC 7591 §3.2.1).", body = ClientInformation,
         headers(("Cache-Control" = String, description = "`no-store`."))),
        (status = 400, description = "RFC 7591 §3.2.2: `invalid_redirect_uri`, \
            `invalid_client_metadata`, `invalid_software_statement`.",
         body = RegistrationErrorBody),
        (status = 401, description = "`invalid_token`: the tenant's policy is `protected` and \
            no usable initial access token was presented.", body = RegistrationErrorBody,
         headers(("WWW-Authenticate" = String,
                  description = "`Bearer realm=\"svc\", error=\"invalid_token\"`."))),
        (status = 403, description = "`access_denied`: the tenant's registration policy is \
            `disabled`.", body = RegistrationErrorBody),
        (status = 500, description = "`server_error`.", body = RegistrationErrorBody),
        (status = 503, description = "`temporarily_unavailable`.", body = RegistrationErrorBody),
    ),
    security((), ("initial_access_token" = [])),
)]
async fn register(
    State(state): State<RegistrationState>,
    current: CurrentTenant,
    client: ClientContext,
    request_id: RequestId,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let metadata = match metadata(&headers, &body) {
        Ok(metadata) => metadata,
        Err(refused) => return refused,
    };
    match dcr::register(
        &state.manage,
        &state.settings,
        &current.tenant.id,
        &meta(&request_id, &client),
        bearer(&headers),
        metadata,
    )
    .await
    {
        Ok(registered) => answer(
            StatusCode::CREATED,
            ClientInformation::new(
                &registered.application,
                &current.issuer,
                registered.client_secret,
                Some(registered.registration_access_token),
            ),
        ),
        Err(e) => errors::response(e),
    }
}

#[utoipa::path(
    get, path = "/oauth/register/{client_id}", tag = tags::PROTOCOL,
    operation_id = "readClientRegistration",
    summary = "Read a client registration",
    description = "RFC 7592 §2.1: the client reads its registration, authenticated by its \
        registration access token (`Authorization: Bearer rat_…`). The secret and the token are \
        not shown again (only their hashes are stored). A missing token, another client's \
        token, or a client registered through the management API (which has none) is `401 \
        invalid_token`, whichever it is. Served while \
        `registration_endpoint` is in `/.well-known/openid-configuration`.",
    params(("client_id" = String, Path, description = "The registered `client_id`.")),
    responses(
        (status = 200, description = "The registration.", body = ClientInformation),
        (status = 401, description = "`invalid_token`.", body = RegistrationErrorBody,
         headers(("WWW-Authenticate" = String,
                  description = "`Bearer realm=\"svc\", error=\"invalid_token\"`."))),
        (status = 500, description = "`server_error`.", body = RegistrationErrorBody),
        (status = 503, description = "`temporarily_unavailable`.", body = RegistrationErrorBody),
    ),
    security(("registration_access_token" = [])),
)]
async fn read(
    State(state): State<RegistrationState>,
    current: CurrentTenant,
    headers: HeaderMap,
    Path(client_id): Path<String>,
) -> Response {
    match dcr::read(
        &state.manage,
        &current.tenant.id,
        &client_id,
        bearer(&headers),
    )
    .await
    {
        Ok(app) => answer(
            StatusCode::OK,
            ClientInformation::new(&app, &current.issuer, None, None),
        ),
        Err(e) => errors::response(e),
    }
}

#[utoipa::path(
    put, path = "/oauth/register/{client_id}", tag = tags::PROTOCOL,
    operation_id = "replaceClientRegistration",
    summary = "Replace a client registration",
    description = "RFC 7592 §2.2: the client replaces its metadata (every member; an omitted \
        one takes its default), authenticated by its registration access token. The body must \
        hold its `client_id`; a `client_secret` in it must be the current one (a client cannot \
        choose its secret); the response members `registration_access_token`, \
        `registration_client_uri`, `client_id_issued_at` and `client_secret_expires_at` are \
        refused. What an administrator set through the management API and registration does not \
        carry (audience, first-party, minimum `acr`, organization usage) is kept. A client that \
        becomes secret-based gets its new secret in this response, once. Served while \
        `registration_endpoint` is in `/.well-known/openid-configuration`.",
    params(("client_id" = String, Path, description = "The registered `client_id`.")),
    request_body(content = ClientMetadata, content_type = "application/json"),
    responses(
        (status = 200, description = "Replaced.", body = ClientInformation),
        (status = 400, description = "RFC 7591 §3.2.2 codes, as on registration.",
         body = RegistrationErrorBody),
        (status = 401, description = "`invalid_token`.", body = RegistrationErrorBody,
         headers(("WWW-Authenticate" = String,
                  description = "`Bearer realm=\"svc\", error=\"invalid_token\"`."))),
        (status = 500, description = "`server_error`.", body = RegistrationErrorBody),
        (status = 503, description = "`temporarily_unavailable`.", body = RegistrationErrorBody),
    ),
    security(("registration_access_token" = [])),
)]
async fn replace(
    State(state): State<RegistrationState>,
    current: CurrentTenant,
    client: ClientContext,
    request_id: RequestId,
    headers: HeaderMap,
    Path(client_id): Path<String>,
    body: Bytes,
) -> Response {
    let token = bearer(&headers);
    // The token first: a caller without one learns nothing from how its body is judged.
    if let Err(e) = dcr::read(&state.manage, &current.tenant.id, &client_id, token).await {
        return errors::response(e);
    }
    let metadata = match metadata(&headers, &body) {
        Ok(metadata) => metadata,
        Err(refused) => return refused,
    };
    match dcr::replace(
        &state.manage,
        &current.tenant.id,
        &meta(&request_id, &client),
        &client_id,
        token,
        metadata,
    )
    .await
    {
        Ok((app, secret)) => answer(
            StatusCode::OK,
            ClientInformation::new(&app, &current.issuer, secret, None),
        ),
        Err(e) => errors::response(e),
    }
}

#[utoipa::path(
    delete, path = "/oauth/register/{client_id}", tag = tags::PROTOCOL,
    operation_id = "deleteClientRegistration",
    summary = "Delete a client registration",
    description = "RFC 7592 §2.3: the client deletes its registration, authenticated by its \
        registration access token: the application is deleted as through the management API \
        (audited as `application.deleted` by `client:{client_id}`), and its token with it. Served while \
        `registration_endpoint` is in `/.well-known/openid-configuration`.",
    params(("client_id" = String, Path, description = "The registered `client_id`.")),
    responses(
        (status = 204, description = "Deleted."),
        (status = 401, description = "`invalid_token`.", body = RegistrationErrorBody,
         headers(("WWW-Authenticate" = String,
                  description = "`Bearer realm=\"svc\", error=\"invalid_token\"`."))),
        (status = 500, description = "`server_error`.", body = RegistrationErrorBody),
        (status = 503, description = "`temporarily_unavailable`.", body = RegistrationErrorBody),
    ),
    security(("registration_access_token" = [])),
)]
async fn remove(
    State(state): State<RegistrationState>,
    current: CurrentTenant,
    client: ClientContext,
    request_id: RequestId,
    headers: HeaderMap,
    Path(client_id): Path<String>,
) -> Response {
    match dcr::delete(
        &state.manage,
        &current.tenant.id,
        &meta(&request_id, &client),
        &client_id,
        bearer(&headers),
    )
    .await
    {
        Ok(()) => no_store(StatusCode::NO_CONTENT.into_response()),
        Err(e) => errors::response(e),
    }
}

/// An RFC 7591 §3.2.2 error.
#[derive(Serialize, ToSchema)]
#[schema(as = RegistrationError, example = json!({
    "error": "invalid_redirect_uri",
    "error_description": "redirect_uris: redirect_uris[0]: a redirect URI must not have a fragment"
}))]
pub struct RegistrationErrorBody {
    /// The error code.
    #[schema(schema_with = registration_error_code)]
    pub error: String,
    /// What went wrong, for the integrator (never a secret, never an internal cause).
    pub error_description: String,
}

fn registration_error_code() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some([
            "invalid_redirect_uri",
            "invalid_client_metadata",
            "invalid_software_statement",
            "invalid_token",
            "access_denied",
            "server_error",
            "temporarily_unavailable",
        ]))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn only_a_bearer_header_carries_a_token() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer(&headers), None);
        for (value, expected) in [
            ("Bearer rat_x", Some("rat_x")),
            ("bearer  rat_x ", Some("rat_x")),
            ("Basic rat_x", None),
            ("Bearer ", None),
            ("rat_x", None),
        ] {
            headers.insert(AUTHORIZATION, HeaderValue::from_static(value));
            assert_eq!(bearer(&headers), expected, "{value}");
        }
    }

    #[test]
    fn only_json_bodies_are_metadata() {
        let mut headers = HeaderMap::new();
        assert!(metadata(&headers, b"{}").is_err());
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=utf-8"),
        );
        assert!(metadata(&headers, b"{}").is_ok());
        assert!(metadata(&headers, b"[]").is_err());
        assert!(metadata(&headers, br#"[["https://rp.example/cb"]]"#).is_err());
        assert!(metadata(&headers, br#"{"logo_uri":"https://x"}"#).is_err());
    }
}
