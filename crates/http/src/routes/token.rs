//! `POST /oauth/token` (RFC 6749 §3.2): form in, token or RFC 6749 §5.2 error out, never cached
//! (§5.1 `Cache-Control: no-store`). Beside it the other client-authenticated endpoints,
//! `POST /oauth/introspect` (RFC 7662) and `POST /oauth/revoke` (RFC 7009), and the
//! bearer-authenticated `GET|POST /userinfo` (OIDC Core §5.3, errors per RFC 6750 §3).
//!
//! The three form endpoints share one prelude, the `ProtocolRequest` extractor of
//! `super::protocol` (tenant, form, throttling per client and per address before any credential
//! is checked); every error is rendered by the error seam (`crate::error::oauth`,
//! `crate::error::bearer`).

use super::protocol::ProtocolRequest;
use crate::error::bearer;
use crate::error::oauth::{self, no_store};
use crate::tenancy::{CurrentTenant, TenantResolver};
use crate::throttle::Throttle;
use axum::Router;
use axum::extract::{FromRef, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::header::AUTHORIZATION;
use http::{HeaderMap, StatusCode};
use std::sync::Arc;
use svc_oauth::introspect::Introspector;
use svc_oauth::revoke::Revoker;
use svc_oauth::token::TokenEndpoint;
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

impl FromRef<TokenState> for Arc<Throttle> {
    fn from_ref(state: &TokenState) -> Self {
        Arc::clone(&state.throttle)
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

async fn token(State(state): State<TokenState>, request: ProtocolRequest) -> Response {
    match state
        .endpoint
        .handle(
            &request.current.tenant,
            &request.current.issuer,
            &request.form,
            request.authorization(),
        )
        .await
    {
        Ok(response) => no_store(axum::Json(response).into_response()),
        Err(error) => oauth::response(&error),
    }
}

/// `POST /oauth/introspect` (RFC 7662 §2).
async fn introspect(State(state): State<TokenState>, request: ProtocolRequest) -> Response {
    match state
        .introspector
        .handle(
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

/// `POST /oauth/revoke` (RFC 7009 §2): 200 with an empty body whether or not the token was
/// known (§2.2).
async fn revoke(State(state): State<TokenState>, request: ProtocolRequest) -> Response {
    match state
        .revoker
        .handle(
            &request.current.tenant,
            &request.current.issuer,
            &request.form,
            request.authorization(),
        )
        .await
    {
        Ok(()) => no_store(StatusCode::OK.into_response()),
        Err(error) => oauth::response(&error),
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
        return bearer::userinfo_without_token();
    };
    match state
        .userinfo
        .claims(&current.tenant, &current.issuer, token)
        .await
    {
        Ok(claims) => no_store(axum::Json(claims).into_response()),
        Err(error) => bearer::userinfo_refused(&error),
    }
}
