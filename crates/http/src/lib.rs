//! `svc-http`: the axum side of the service that every runtime plane shares.
//!
//! Owns the middleware stack, the ONE place errors become HTTP responses ([`error`]: RFC 9457
//! problems, RFC 6749 JSON, RFC 6750 challenges and hosted error pages), the health endpoints
//! ([`Health`]), Prometheus metrics ([`Metrics`]) and the 404/405 fallbacks. It holds no
//! business rules and must not depend on sqlx, `svc-config` or any store crate: the runtime
//! composes it, passing plain [`HttpSettings`] and trait objects ([`ReadinessCheck`],
//! [`PoolStatsSource`], [`MetricsAuthorizer`]).
//!
//! The runtime serves [`router`]'s result with
//! `into_make_service_with_connect_info::<std::net::SocketAddr>()`; without `ConnectInfo` the
//! peer is unknown and forwarded headers are never believed.

pub mod api;
pub mod error;
pub mod health;
pub mod hosted;
pub mod metrics;
pub mod middleware;
pub mod openapi;
pub mod routes;
pub mod settings;
pub mod tenancy;
pub mod throttle;

mod fallback;

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware::{from_fn, from_fn_with_state};
use http::HeaderName;
use http::header::{AUTHORIZATION, COOKIE, PROXY_AUTHORIZATION, SET_COOKIE};
use tower::ServiceBuilder;
use tower_http::sensitive_headers::SetSensitiveHeadersLayer;

pub use error::{PROBLEM_CONTENT_TYPE, Problem};
pub use health::{Health, ReadinessCheck};
pub use metrics::{METRICS_CONTENT_TYPE, Metrics, MetricsAuthorizer, PoolStats, PoolStatsSource};
pub use middleware::{ClientContext, REQUEST_ID_HEADER, RequestId};
pub use settings::HttpSettings;
pub use tenancy::{CurrentTenant, TenantDirectory, TenantResolver, TenantRouting};

use middleware::allowed_hosts::HostPolicy;
use middleware::client::ProxyTrust;
use middleware::response::RenderConfig;

/// Everything the shared routes and middleware need. Cheap to clone.
#[derive(Clone, Debug)]
pub struct HttpState {
    /// HTTP settings of this instance.
    pub settings: Arc<HttpSettings>,
    /// Health flags and readiness checks.
    pub health: Health,
    /// This instance's metrics registry.
    pub metrics: Metrics,
}

impl HttpState {
    /// Bundles the parts.
    #[must_use]
    pub fn new(settings: HttpSettings, health: Health, metrics: Metrics) -> Self {
        Self {
            settings: Arc::new(settings),
            health,
            metrics,
        }
    }
}

/// Builds the app for one plane: `plane_routes` (state already applied, no fallback of its own;
/// it must not define `/health/*` or `/metrics`) merged with `/health/live`, `/health/startup`,
/// `/health/ready` and `/metrics`, a 404 problem fallback, a 405 problem fallback (keeping
/// `Allow`), and the middleware stack, outermost first:
///
/// 1. mark `authorization`, `proxy-authorization`, `cookie`, `set-cookie`, `dpop` sensitive;
/// 2. request id (`x-request-id` in and out, tracing span);
/// 3. client context (peer, trusted-proxy `X-Forwarded-*`);
/// 4. access log; 5. metrics;
/// 6. response shaping (problem bodies with the request's `type` base and id, `nosniff`);
/// 7. panic → 500 problem; 8. allowed hosts (`/health/*` exempt); 9. body limit;
/// 10. timeout → 503 problem.
///
/// The stack is applied with [`Router::layer`], so it runs after routing (the matched route
/// template is known to logs and metrics) but before any handler or fallback.
pub fn router(plane_routes: Router, state: HttpState) -> Router {
    let settings = Arc::clone(&state.settings);
    if settings.trusted_proxies.is_empty() && !settings.direct_client_exposure {
        tracing::warn!(
            "neither server.trusted_proxies nor server.direct_client_exposure is set: \
             X-Forwarded-* headers are ignored and client addresses are TCP peers"
        );
    }
    let hosts = Arc::new(HostPolicy::new(&settings.allowed_hosts));
    let trust = Arc::new(ProxyTrust::new(&settings));
    let render = Arc::new(RenderConfig::new(&settings, Arc::clone(&hosts)));
    let max_body = settings.max_request_body_bytes;

    let operational = health::operational()
        .split_for_parts()
        .0
        .with_state(state.clone());

    let stack = ServiceBuilder::new()
        .layer(SetSensitiveHeadersLayer::new([
            AUTHORIZATION,
            PROXY_AUTHORIZATION,
            COOKIE,
            SET_COOKIE,
            HeaderName::from_static("dpop"),
        ]))
        .layer(from_fn(middleware::request_id::request_id))
        .layer(from_fn_with_state(
            trust,
            middleware::client::client_context,
        ))
        .layer(from_fn(middleware::access_log::access_log))
        .layer(from_fn_with_state(state.metrics.clone(), metrics::record))
        .layer(from_fn_with_state(
            render,
            middleware::response::finish_response,
        ))
        .layer(middleware::panic::layer())
        .layer(from_fn_with_state(
            hosts,
            middleware::allowed_hosts::check_host,
        ))
        .layer(from_fn_with_state(
            max_body,
            middleware::body_limit::limit_body,
        ))
        .layer(DefaultBodyLimit::max(max_body))
        .layer(from_fn_with_state(
            settings.request_timeout,
            middleware::timeout::enforce_timeout,
        ));

    plane_routes
        .merge(operational)
        .fallback(fallback::not_found)
        .method_not_allowed_fallback(fallback::method_not_allowed)
        .layer(stack)
}
