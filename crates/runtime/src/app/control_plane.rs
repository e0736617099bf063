//! The control plane's routes (ARCHITECTURE.md "Planes"): the operator's control-plane API and
//! each tenant's management API (applications and their registration policy, API resources,
//! users, organizations, roles, webhooks), all over one
//! [`ApiState`],
//! and the API reference when `[openapi].enabled`.

use axum::Router;
use svc_http::api::ApiState;
use svc_http::routes::{applications, control_plane, users, webhooks};

/// The control plane's routes over the management API state.
pub(super) fn routes(api: &ApiState) -> Router {
    Router::new()
        .merge(control_plane::router(api.clone()))
        .merge(applications::router(api.clone()))
        .merge(svc_http::routes::api_resources::router(api.clone()))
        .merge(svc_http::routes::policies::router(api.clone()))
        .merge(svc_http::routes::registration_policy::router(api.clone()))
        .merge(users::router(api.clone()))
        .merge(svc_http::routes::organizations::router(api.clone()))
        .merge(svc_http::routes::invitations::router(api.clone()))
        .merge(svc_http::routes::roles::router(api.clone()))
        .merge(webhooks::router(api.clone()))
}

/// The API reference: `/openapi.json`, the UI at `/` and the problem-type pages.
pub(super) fn reference() -> Router {
    svc_http::openapi::router(&svc_http::openapi::document())
}
