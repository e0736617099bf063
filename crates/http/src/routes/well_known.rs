//! `/.well-known/*` of a tenant issuer: OpenID discovery, RFC 8414 metadata, RFC 9728
//! protected-resource metadata and the JWKS. Thin handlers: resolve the tenant, ask the engine,
//! shape the response. Browsers' single-page apps fetch these cross-origin, so they carry
//! `Access-Control-Allow-Origin: *` (public, credential-free documents).

use crate::Problem;
use crate::tenancy::{CurrentTenant, TenantResolver};
use axum::Router;
use axum::extract::{FromRef, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::header::{ACCESS_CONTROL_ALLOW_ORIGIN, CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use http::{HeaderMap, HeaderValue, StatusCode};
use std::sync::Arc;
use svc_oauth::discovery::{self, DiscoverySettings};
use svc_oauth::keys::KeyService;

/// JWKS freshness for relying parties. Much shorter than the rotation publish lead, so every
/// cache has seen a next key long before it signs (RFC 7517 §5 leaves caching to deployments).
const JWKS_MAX_AGE_SECS: u32 = 900;
/// Discovery changes only with configuration.
const DISCOVERY_MAX_AGE_SECS: u32 = 3600;

/// State of the well-known routes.
#[derive(Clone)]
pub struct WellKnownState {
    /// Host → tenant.
    pub tenants: TenantResolver,
    /// Signing keys.
    pub keys: Arc<KeyService>,
    /// What the metadata advertises.
    pub discovery: Arc<DiscoverySettings>,
}

impl FromRef<WellKnownState> for TenantResolver {
    fn from_ref(state: &WellKnownState) -> Self {
        state.tenants.clone()
    }
}

/// The `/.well-known/*` routes.
pub fn router(state: WellKnownState) -> Router {
    Router::new()
        .route(
            "/.well-known/openid-configuration",
            get(openid_configuration),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(authorization_server),
        )
        .route(
            "/.well-known/oauth-protected-resource",
            get(protected_resource),
        )
        // RFC 9728 §3.1: the well-known path with the resource's path appended.
        .route(
            "/.well-known/oauth-protected-resource/api/v1",
            get(protected_resource),
        )
        .route("/.well-known/jwks.json", get(jwks))
        .with_state(state)
}

fn public_json(body: String, max_age: u32) -> Response {
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    if let Ok(value) = HeaderValue::from_str(&format!("public, max-age={max_age}")) {
        headers.insert(CACHE_CONTROL, value);
    }
    response
}

async fn openid_configuration(
    State(state): State<WellKnownState>,
    current: CurrentTenant,
) -> Response {
    public_json(
        discovery::openid_configuration(&current.issuer, &state.discovery).to_string(),
        DISCOVERY_MAX_AGE_SECS,
    )
}

async fn authorization_server(
    State(state): State<WellKnownState>,
    current: CurrentTenant,
) -> Response {
    public_json(
        discovery::authorization_server_metadata(&current.issuer, &state.discovery).to_string(),
        DISCOVERY_MAX_AGE_SECS,
    )
}

async fn protected_resource(
    State(state): State<WellKnownState>,
    current: CurrentTenant,
) -> Response {
    public_json(
        discovery::protected_resource_metadata(&current.issuer, &state.discovery).to_string(),
        DISCOVERY_MAX_AGE_SECS,
    )
}

async fn jwks(
    State(state): State<WellKnownState>,
    current: CurrentTenant,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let published = state.keys.published_jwks(&current.tenant).await?;
    let etag = format!("\"{}\"", published.etag);
    // RFC 9110 §13.1.2: a matching If-None-Match gets 304 without the body.
    let unchanged = headers
        .get(IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|tag| tag.trim() == etag || tag.trim() == "*")
        });
    let mut response = if unchanged {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        public_json(published.json.clone(), JWKS_MAX_AGE_SECS)
    };
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(ETAG, value);
    }
    if unchanged {
        headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        if let Ok(value) = HeaderValue::from_str(&format!("public, max-age={JWKS_MAX_AGE_SECS}")) {
            headers.insert(CACHE_CONTROL, value);
        }
    }
    Ok(response)
}
