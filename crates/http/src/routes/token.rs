//! `POST /oauth/token` (RFC 6749 §3.2): form in, token or RFC 6749 §5.2 error out, never cached
//! (§5.1 `Cache-Control: no-store`). Throttled per client and per client address
//! (`server.endpoint_throttle`) before any credential is checked. Beside it the other
//! client-authenticated endpoints, `POST /oauth/introspect` (RFC 7662) and `POST /oauth/revoke`
//! (RFC 7009), and the bearer-authenticated `GET|POST /userinfo` (OIDC Core §5.3, errors per
//! RFC 6750 §3 with a `WWW-Authenticate: Bearer` challenge).

use crate::tenancy::{CurrentTenant, TenantResolver};
use crate::throttle::Throttle;
use crate::{ClientContext, Problem};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRef, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, PRAGMA, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, StatusCode};
use std::sync::Arc;
use svc_oauth::OAuthError;
use svc_oauth::introspect::Introspector;
use svc_oauth::revoke::Revoker;
use svc_oauth::token::{TokenEndpoint, client_id_hint};
use svc_oauth::userinfo::UserInfo;

/// State of the token route.
#[derive(Clone)]
pub struct TokenState {
    /// Host → tenant.
    pub tenants: TenantResolver,
    /// The engine.
    pub endpoint: Arc<TokenEndpoint>,
    /// RFC 7662 introspection.
    pub introspector: Arc<Introspector>,
    /// RFC 7009 revocation.
    pub revoker: Arc<Revoker>,
    /// OIDC Core §5.3 UserInfo.
    pub userinfo: Arc<UserInfo>,
    /// Request throttling.
    pub throttle: Arc<Throttle>,
}

impl FromRef<TokenState> for TenantResolver {
    fn from_ref(state: &TokenState) -> Self {
        state.tenants.clone()
    }
}

/// The token route.
pub fn router(state: TokenState) -> Router {
    Router::new()
        .route("/oauth/token", post(token))
        .route("/oauth/introspect", post(introspect))
        .route("/oauth/revoke", post(revoke))
        .route("/userinfo", get(userinfo).post(userinfo))
        .with_state(state)
}

fn no_store(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(PRAGMA, HeaderValue::from_static("no-cache"));
    response
}

/// RFC 6749 §5.2 error body (`application/json`, not problem+json).
fn oauth_error(error: &OAuthError) -> Response {
    if error.status() >= 500 {
        tracing::error!(error = %error, "token endpoint failure");
    } else if let Some(detail) = error.log_detail() {
        // Why a client was refused stays in the logs; the response is deliberately uniform.
        tracing::info!(
            error = error.code().as_str(),
            detail,
            "token request refused"
        );
    }
    let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST);
    let body = serde_json::json!({ "error": error.code().as_str(), "error_description": error.description() });
    let mut response = (status, body.to_string()).into_response();
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if error.basic_challenge() {
        response.headers_mut().insert(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"svc\""),
        );
    }
    no_store(response)
}

/// The form pairs of a protocol request, or the error for a body that is not a form.
fn form_of(headers: &HeaderMap, body: &[u8]) -> Result<Vec<(String, String)>, Response> {
    let form_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        })
        .unwrap_or(false);
    if !form_type {
        return Err(oauth_error(&OAuthError::invalid_request(
            "the body must be application/x-www-form-urlencoded",
        )));
    }
    Ok(url::form_urlencoded::parse(body).into_owned().collect())
}

/// Throttles before any secret is compared: per client (as claimed) and per address.
fn throttled(
    state: &TokenState,
    current: &CurrentTenant,
    client: &ClientContext,
    form: &[(String, String)],
    authorization: Option<&str>,
) -> Option<Response> {
    let tenant_key = current.tenant.id.as_str();
    let client_key =
        client_id_hint(form, authorization).map(|c| format!("{tenant_key}:client:{c}"));
    let ip_key = client.ip.map(|ip| format!("ip:{ip}"));
    [client_key, ip_key]
        .into_iter()
        .flatten()
        .find_map(|key| state.throttle.check(&key).err())
        .map(|retry_after| Problem::rate_limited(retry_after).into_response())
}

async fn token(
    State(state): State<TokenState>,
    current: CurrentTenant,
    client: ClientContext,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let form = match form_of(&headers, &body) {
        Ok(form) => form,
        Err(response) => return response,
    };
    let authorization = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok());
    if let Some(refused) = throttled(&state, &current, &client, &form, authorization) {
        return refused;
    }
    match state
        .endpoint
        .handle(&current.tenant, &current.issuer, &form, authorization)
        .await
    {
        Ok(response) => no_store(axum::Json(response).into_response()),
        Err(error) => oauth_error(&error),
    }
}

/// `POST /oauth/introspect` (RFC 7662 §2).
async fn introspect(
    State(state): State<TokenState>,
    current: CurrentTenant,
    client: ClientContext,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let form = match form_of(&headers, &body) {
        Ok(form) => form,
        Err(response) => return response,
    };
    let authorization = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok());
    if let Some(refused) = throttled(&state, &current, &client, &form, authorization) {
        return refused;
    }
    match state
        .introspector
        .handle(&current.tenant, &current.issuer, &form, authorization)
        .await
    {
        Ok(answer) => no_store(axum::Json(answer).into_response()),
        Err(error) => oauth_error(&error),
    }
}

/// `POST /oauth/revoke` (RFC 7009 §2): 200 with an empty body whether or not the token was
/// known (§2.2).
async fn revoke(
    State(state): State<TokenState>,
    current: CurrentTenant,
    client: ClientContext,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let form = match form_of(&headers, &body) {
        Ok(form) => form,
        Err(response) => return response,
    };
    let authorization = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok());
    if let Some(refused) = throttled(&state, &current, &client, &form, authorization) {
        return refused;
    }
    match state
        .revoker
        .handle(&current.tenant, &current.issuer, &form, authorization)
        .await
    {
        Ok(()) => no_store(StatusCode::OK.into_response()),
        Err(error) => oauth_error(&error),
    }
}

/// `GET|POST /userinfo` (OIDC Core §5.3). The access token comes from `Authorization: Bearer`
/// only: RFC 6750 §2.2's form parameter and §2.3's query parameter leak tokens into logs and
/// caches, so they are not accepted.
async fn userinfo(
    State(state): State<TokenState>,
    current: CurrentTenant,
    headers: HeaderMap,
) -> Response {
    let bearer = headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        })
        .filter(|t| !t.is_empty());
    let Some(token) = bearer else {
        // RFC 6750 §3.1: no error code when the request carried no credentials.
        let mut response = (StatusCode::UNAUTHORIZED, "").into_response();
        response.headers_mut().insert(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"svc\""),
        );
        return no_store(response);
    };
    match state
        .userinfo
        .claims(&current.tenant, &current.issuer, token)
        .await
    {
        Ok(claims) => no_store(axum::Json(claims).into_response()),
        Err(error) => {
            let mut response = oauth_error(&error);
            let challenge = match error.code().as_str() {
                code @ ("invalid_token" | "insufficient_scope") => {
                    format!("Bearer realm=\"svc\", error=\"{code}\"")
                }
                _ => String::new(),
            };
            if let Ok(value) = HeaderValue::from_str(&challenge)
                && !challenge.is_empty()
            {
                response.headers_mut().insert(WWW_AUTHENTICATE, value);
            }
            response
        }
    }
}
