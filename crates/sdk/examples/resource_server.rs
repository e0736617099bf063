//! A sample resource server: an invoices API protected by svc access tokens, each route naming
//! the permission it needs and, for an organization's invoices, the organization (rule 6b).
//! The access model behind it (README "Access model"): the tenant registers the API as an API
//! resource whose identifier is `SVC_AUDIENCE` with the permissions `invoices:read`,
//! `invoices:write` and `invoices:void`; roles hold them; a client asks for
//! `resource=SVC_AUDIENCE` and gets, as scopes, the permissions the person's roles hold.
//!
//! Run with `SVC_ISSUER=… SVC_TENANT_ID=ten_… SVC_AUDIENCE=https://invoices.example.com cargo run
//! -p svc-sdk --example resource_server` (listens on `LISTEN`, default `127.0.0.1:3000`). With
//! `SVC_CLIENT_ID` and `SVC_CLIENT_SECRET` (a confidential application whose `api_audience` is
//! `SVC_AUDIENCE`) it also accepts API keys acting as a person or an agent, via introspection.
//!
//! Routes:
//! - `GET /orgs/{org_id}/invoices`: `invoices:read`, a token acting in that organization.
//! - `POST /orgs/{org_id}/invoices/{invoice}/void`: `invoices:void`, in that organization.
//! - `GET /me`: any valid token of the tenant for this API; says who calls and with what.
//!
//! The runtime's interop test compiles this file into its test binary and serves it to
//! openid-client, so what is shown here is what is proven.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use std::sync::Arc;
use svc_sdk::{AccessTokenClaims, Requirements, ValidationError, Validator};

/// Who this API trusts and what it is called.
#[derive(Debug, Clone)]
pub(crate) struct ApiConfig {
    /// The svc issuer (`iss`).
    pub(crate) issuer: String,
    /// The tenant owning the API (`tenant_id`, checked before any scope).
    pub(crate) tenant_id: String,
    /// The API resource identifier registered in svc: the tokens' `aud`.
    pub(crate) audience: String,
}

struct Api {
    validator: Validator,
    config: ApiConfig,
}

impl Api {
    /// Validates the request's bearer token for a route needing `permission` (if any) in
    /// `organization` (if any).
    async fn caller(
        &self,
        headers: &HeaderMap,
        permission: Option<&str>,
        organization: Option<&str>,
    ) -> Result<AccessTokenClaims, Response> {
        // A header that is not visible ASCII becomes "" and is refused as malformed.
        let authorization = headers
            .get(header::AUTHORIZATION)
            .map(|v| v.to_str().unwrap_or(""));
        let c = &self.config;
        let mut req = Requirements::new(&c.issuer, &c.audience, &c.tenant_id);
        if let Some(permission) = permission {
            req = req.with_scope(permission);
        }
        if let Some(org) = organization {
            req = req.with_organization(org);
        }
        self.validator
            .validate(authorization, &req)
            .await
            .map_err(|e| refuse(&e))
    }
}

async fn list_invoices(
    State(api): State<Arc<Api>>,
    Path(org): Path<String>,
    headers: HeaderMap,
) -> Response {
    match api
        .caller(&headers, Some("invoices:read"), Some(&org))
        .await
    {
        Ok(claims) => Json(json!({
            "organization": org,
            "caller": claims.sub,
            "invoices": [{ "id": "inv_1", "total": 1200 }],
        }))
        .into_response(),
        Err(refused) => refused,
    }
}

async fn void_invoice(
    State(api): State<Arc<Api>>,
    Path((org, invoice)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    match api
        .caller(&headers, Some("invoices:void"), Some(&org))
        .await
    {
        Ok(_) => Json(json!({ "id": invoice, "status": "void" })).into_response(),
        Err(refused) => refused,
    }
}

async fn me(State(api): State<Arc<Api>>, headers: HeaderMap) -> Response {
    match api.caller(&headers, None, None).await {
        Ok(claims) => Json(json!({
            "sub": claims.sub,
            "scope": claims.scope,
            "org_id": claims.org,
        }))
        .into_response(),
        Err(refused) => refused,
    }
}

/// Status, `WWW-Authenticate` and a problem body, all decided by the SDK (RFC 6750 §3).
fn refuse(e: &ValidationError) -> Response {
    let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::UNAUTHORIZED);
    let body = json!({ "status": e.status(), "error": e.error_code(), "error_description": e.to_string() });
    let headers = [
        (header::WWW_AUTHENTICATE, e.www_authenticate()),
        (header::CONTENT_TYPE, "application/problem+json".into()),
    ];
    (status, headers, body.to_string()).into_response()
}

/// The API's routes, validating tokens with `validator` (keys found through the issuer's
/// discovery and cached).
pub(crate) fn router(validator: Validator, config: ApiConfig) -> Router {
    Router::new()
        .route("/orgs/{org}/invoices", get(list_invoices))
        .route("/orgs/{org}/invoices/{invoice}/void", post(void_invoice))
        .route("/me", get(me))
        .with_state(Arc::new(Api { validator, config }))
}

#[allow(dead_code)] // Not called where the interop test includes this file as a module.
#[tokio::main]
async fn main() -> std::io::Result<()> {
    let var = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.into());
    let config = ApiConfig {
        issuer: var("SVC_ISSUER", "https://acme.id.example"),
        tenant_id: var("SVC_TENANT_ID", "ten_01jd000000000000000000acme"),
        audience: var("SVC_AUDIENCE", "https://invoices.example.com"),
    };
    let mut validator = Validator::new(&config.issuer);
    // API keys acting as a person or an agent at this API, through introspection as the
    // confidential application whose `api_audience` is this API.
    if let (Ok(id), Ok(secret)) = (
        std::env::var("SVC_CLIENT_ID"),
        std::env::var("SVC_CLIENT_SECRET"),
    ) {
        validator = validator.with_introspection(&id, &secret);
    }
    let listener = tokio::net::TcpListener::bind(var("LISTEN", "127.0.0.1:3000")).await?;
    axum::serve(listener, router(validator, config)).await
}
