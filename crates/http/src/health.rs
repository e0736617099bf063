//! Health endpoints: `/health/live`, `/health/startup`, `/health/ready`; and [`operational`],
//! the routes of every plane's operational endpoints (these and `/metrics`), whose OpenAPI
//! operations come from the same declaration ([`operations`]).
//!
//! Bodies expose only `{"status":"ok"}` or `{"status":"unavailable"}` (spec "Tenant and
//! operational endpoints": failing check details go to the logs), so probes leak nothing about
//! the database or keys. Readiness runs the runtime's checks concurrently, each under a short
//! timeout, so a hung database makes the probe fail fast instead of hanging the load balancer.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, StatusCode};

use crate::HttpState;
use crate::metrics;
use crate::openapi::refusals::{self, Refusals};
use crate::openapi::tags;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa_axum::{router::OpenApiRouter, routes};

/// Name of the security scheme of `/metrics`.
pub const METRICS_TOKEN: &str = "metrics_token";

/// The operational routes every plane serves: `/health/live`, `/health/startup`,
/// `/health/ready` and `/metrics` (state not applied; [`crate::router`] applies it).
pub(crate) fn operational() -> OpenApiRouter<HttpState> {
    OpenApiRouter::new()
        .routes(routes!(live))
        .routes(routes!(startup))
        .routes(routes!(ready))
        .routes(routes!(metrics::scrape))
}

/// The OpenAPI operations of the operational routes, with the scheme `/metrics` names and the
/// refusals of the middleware (the probes are exempt from the host check; `/metrics` with a
/// service token resolves the host's tenant).
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    let mut doc = operational().into_openapi();
    let mut scheme = Http::new(HttpAuthScheme::Bearer);
    scheme.description = Some(
        "`/metrics`: the static `server.metrics_bearer_token` when one is configured; \
         otherwise a service access token of the host's tenant (client credentials) with the \
         `metrics:read` scope and the management API audience."
            .to_owned(),
    );
    doc.components
        .get_or_insert_with(Default::default)
        .add_security_scheme(METRICS_TOKEN, SecurityScheme::Http(scheme));
    refusals::add(&mut doc, |path| {
        if path == "/metrics" {
            Refusals::TENANT
        } else {
            Refusals::PROBE
        }
    });
    doc
}

fn health_status() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(
            "`ok`, or `unavailable` (details go to the logs, never here).",
        ))
        .enum_values(Some(["ok", "unavailable"]))
}

/// The whole body of a health answer.
#[derive(Serialize, ToSchema)]
#[schema(example = json!({"status": "ok"}))]
pub struct HealthStatus {
    /// The probe's verdict.
    #[schema(schema_with = health_status)]
    pub status: String,
}

/// One readiness dependency (database ping, worker heartbeat, signing keys), implemented by the
/// runtime.
#[async_trait]
pub trait ReadinessCheck: Send + Sync {
    /// Short stable name for logs (`db.identity`, `worker.outbox`).
    fn name(&self) -> &str;

    /// `Ok(())` when the dependency is usable; otherwise a reason for the logs (never sent).
    async fn check(&self) -> Result<(), String>;
}

/// Process health shared between the runtime (which flips the flags) and the probes.
/// Cheap to clone.
#[derive(Clone)]
pub struct Health {
    inner: Arc<HealthInner>,
}

struct HealthInner {
    started: AtomicBool,
    draining: AtomicBool,
    checks: Vec<Arc<dyn ReadinessCheck>>,
    check_timeout: Duration,
}

impl std::fmt::Debug for Health {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Health")
            .field("started", &self.is_started())
            .field("draining", &self.is_draining())
            .field(
                "checks",
                &self
                    .inner
                    .checks
                    .iter()
                    .map(|c| c.name())
                    .collect::<Vec<_>>(),
            )
            .field("check_timeout", &self.inner.check_timeout)
            .finish()
    }
}

impl Health {
    /// Time each readiness check gets before it counts as failed.
    pub const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(2);

    /// Health with these readiness checks and [`Health::DEFAULT_CHECK_TIMEOUT`]. Not started,
    /// not draining.
    #[must_use]
    pub fn new(checks: Vec<Arc<dyn ReadinessCheck>>) -> Self {
        Self::with_check_timeout(checks, Self::DEFAULT_CHECK_TIMEOUT)
    }

    /// Like [`Health::new`] with a different per-check timeout.
    #[must_use]
    pub fn with_check_timeout(
        checks: Vec<Arc<dyn ReadinessCheck>>,
        check_timeout: Duration,
    ) -> Self {
        Self {
            inner: Arc::new(HealthInner {
                started: AtomicBool::new(false),
                draining: AtomicBool::new(false),
                checks,
                check_timeout,
            }),
        }
    }

    /// Startup is complete: migrations are applied (later: signing keys loaded).
    /// `/health/startup` turns 200 and readiness may follow.
    pub fn mark_started(&self) {
        self.inner.started.store(true, Ordering::Release);
    }

    /// Graceful shutdown has begun: readiness turns 503 so the load balancer stops sending new
    /// requests while in-flight ones finish. There is no way back.
    pub fn start_draining(&self) {
        self.inner.draining.store(true, Ordering::Release);
    }

    /// Whether [`Health::mark_started`] was called.
    #[must_use]
    pub fn is_started(&self) -> bool {
        self.inner.started.load(Ordering::Acquire)
    }

    /// Whether [`Health::start_draining`] was called.
    #[must_use]
    pub fn is_draining(&self) -> bool {
        self.inner.draining.load(Ordering::Acquire)
    }

    /// Started, not draining, and every check passes within its timeout. Failing checks are
    /// logged at warn level with their names and reasons.
    pub async fn is_ready(&self) -> bool {
        if !self.is_started() || self.is_draining() {
            return false;
        }
        let timeout = self.inner.check_timeout;
        let results = futures_util::future::join_all(self.inner.checks.iter().map(|check| {
            let check = Arc::clone(check);
            async move {
                let outcome = match tokio::time::timeout(timeout, check.check()).await {
                    Ok(result) => result,
                    Err(_elapsed) => Err(format!("no answer within {} ms", timeout.as_millis())),
                };
                (check, outcome)
            }
        }))
        .await;

        let mut ready = true;
        for (check, outcome) in results {
            if let Err(reason) = outcome {
                tracing::warn!(check = check.name(), reason, "readiness check failed");
                ready = false;
            }
        }
        ready
    }
}

/// The whole body of a health response.
fn health_response(ok: bool) -> Response {
    let (status, body) = if ok {
        (StatusCode::OK, r#"{"status":"ok"}"#)
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            r#"{"status":"unavailable"}"#,
        )
    };
    let mut res = (status, body).into_response();
    let headers = res.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    // A cached "ok" would hide an outage from the next probe.
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// `GET /health/live`: the process is running.
#[utoipa::path(
    get, path = "/health/live", tag = tags::OPERATIONS,
    operation_id = "getLiveness",
    summary = "Liveness probe",
    description = "Whether the process is running: always `ok` while it answers. Exempt from \
        `server.allowed_hosts` (probes address the instance by IP); never cached.",
    responses(
        (status = 200, description = "The process is running.", body = HealthStatus,
         headers(("Cache-Control" = String, description = "`no-store`."))),
    ),
)]
pub(crate) async fn live() -> Response {
    health_response(true)
}

/// `GET /health/startup`: startup work is done.
#[utoipa::path(
    get, path = "/health/startup", tag = tags::OPERATIONS,
    operation_id = "getStartup",
    summary = "Startup probe",
    description = "Whether startup is complete: databases migrated and the signing keys the \
        plane uses loaded. Exempt from `server.allowed_hosts`; never cached.",
    responses(
        (status = 200, description = "Started.", body = HealthStatus,
         headers(("Cache-Control" = String, description = "`no-store`."))),
        (status = 503, description = "Still starting: `{\"status\":\"unavailable\"}`.",
         body = HealthStatus),
    ),
)]
pub(crate) async fn startup(State(state): State<HttpState>) -> Response {
    health_response(state.health.is_started())
}

/// `GET /health/ready`: the instance should receive traffic.
#[utoipa::path(
    get, path = "/health/ready", tag = tags::OPERATIONS,
    operation_id = "getReadiness",
    summary = "Readiness probe",
    description = "Whether the instance should receive traffic: started, not draining for \
        shutdown, and every readiness check (databases, workers, signing keys) passing within \
        its own short timeout, so a hung dependency fails the probe fast. Failing checks are \
        logged, never shown. Exempt from `server.allowed_hosts`; never cached.",
    responses(
        (status = 200, description = "Ready.", body = HealthStatus,
         headers(("Cache-Control" = String, description = "`no-store`."))),
        (status = 503, description = "Not ready: `{\"status\":\"unavailable\"}`.",
         body = HealthStatus),
    ),
)]
pub(crate) async fn ready(State(state): State<HttpState>) -> Response {
    health_response(state.health.is_ready().await)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(&'static str, Result<(), String>);

    #[async_trait]
    impl ReadinessCheck for Fixed {
        fn name(&self) -> &str {
            self.0
        }
        async fn check(&self) -> Result<(), String> {
            self.1.clone()
        }
    }

    struct Hangs;

    #[async_trait]
    impl ReadinessCheck for Hangs {
        fn name(&self) -> &str {
            "hangs"
        }
        async fn check(&self) -> Result<(), String> {
            std::future::pending().await
        }
    }

    #[tokio::test]
    async fn not_ready_until_started_and_not_after_draining() {
        let health = Health::new(vec![Arc::new(Fixed("db", Ok(())))]);
        assert!(!health.is_ready().await);
        health.mark_started();
        assert!(health.is_ready().await);
        health.start_draining();
        assert!(!health.is_ready().await);
        assert!(health.is_started());
    }

    #[tokio::test]
    async fn one_failing_check_fails_readiness() {
        let health = Health::new(vec![
            Arc::new(Fixed("db", Ok(()))),
            Arc::new(Fixed("worker", Err("no heartbeat for 30 s".into()))),
        ]);
        health.mark_started();
        assert!(!health.is_ready().await);
    }

    #[tokio::test(start_paused = true)]
    async fn hanging_check_times_out_instead_of_hanging_the_probe() {
        let health = Health::new(vec![Arc::new(Hangs), Arc::new(Fixed("db", Ok(())))]);
        health.mark_started();
        let started = tokio::time::Instant::now();
        assert!(!health.is_ready().await);
        // Paused clock: the per-check timeout fired on virtual time.
        let elapsed = started.elapsed();
        assert!(elapsed >= Health::DEFAULT_CHECK_TIMEOUT, "{elapsed:?}");
        assert!(elapsed < Health::DEFAULT_CHECK_TIMEOUT * 2, "{elapsed:?}");
    }
}
