//! Prometheus metrics: the per-instance registry, HTTP request metrics, build info, database
//! pool gauges collected at scrape time, and the `/metrics` endpoint.
//!
//! One registry PER [`Metrics`] value, never a process-global recorder: tests run many apps in
//! one process and each must see only its own numbers. Labels are bounded (research §7.6):
//! the route is the matched template or `unmatched`, methods outside the standard set are
//! `other`, statuses are numbers.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use secrecy::ExposeSecret;
use subtle::ConstantTimeEq;

use crate::middleware::route_label;
use crate::{HttpState, Problem};

/// Content type of the OpenMetrics text exposition that `prometheus-client` writes.
pub const METRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Request-duration buckets in seconds: 0.5 ms (a cached JWKS hit) to 10 s (beyond any sane
/// timeout).
const DURATION_BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// A connection pool's numbers at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Open connections, idle and in use.
    pub size: u32,
    /// Open connections not in use.
    pub idle: u32,
    /// Configured maximum.
    pub max: u32,
}

/// Something that reports pool numbers on demand (the runtime wraps its sqlx pools). Called at
/// every scrape, so it must be cheap and must not block.
pub trait PoolStatsSource: Send + Sync {
    /// Current numbers.
    fn pool_stats(&self) -> PoolStats;
}

/// Decides who may read `/metrics` when `server.metrics_bearer_token` is NOT set.
///
/// This is the seam for the spec's second path ("otherwise a service token with scope
/// `metrics:read`"): a later issue implements it with the access-token validator and installs
/// it with [`Metrics::set_authorizer`]. Without an authorizer and without a token, `/metrics` is
/// open (development).
#[async_trait]
pub trait MetricsAuthorizer: Send + Sync {
    /// `Ok(())` to serve the metrics; otherwise the problem to answer with (401 or 403).
    async fn authorize(
        &self,
        headers: &HeaderMap,
        client: &crate::ClientContext,
    ) -> Result<(), Problem>;
}

/// Metrics of one app instance. Cheap to clone.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<MetricsInner>,
}

struct MetricsInner {
    registry: Mutex<Registry>,
    requests: Family<RequestLabels, Counter>,
    durations: Family<RouteLabels, Histogram, fn() -> Histogram>,
    pools: Arc<PoolCollector>,
    authorizer: RwLock<Option<Arc<dyn MetricsAuthorizer>>>,
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: &'static str,
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    version: String,
    commit: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PoolLabels {
    pool: String,
    state: &'static str,
}

fn duration_histogram() -> Histogram {
    Histogram::new(DURATION_BUCKETS)
}

impl Metrics {
    /// A fresh registry with the HTTP metrics, `svc_build_info{version,commit} 1` and the
    /// (initially empty) pool collector.
    #[must_use]
    pub fn new(version: &str, commit: &str) -> Self {
        let mut registry = Registry::default();

        let requests = Family::<RequestLabels, Counter>::default();
        // prometheus-client appends `_total` to counters.
        registry.register(
            "svc_http_requests",
            "HTTP requests by method, route template and status",
            requests.clone(),
        );

        let durations = Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            duration_histogram,
        );
        registry.register(
            "svc_http_request_duration_seconds",
            "Time to produce the response head, by method and route template",
            durations.clone(),
        );

        let build = Family::<BuildLabels, Gauge>::default();
        build
            .get_or_create(&BuildLabels {
                version: version.to_owned(),
                commit: commit.to_owned(),
            })
            .set(1);
        registry.register("svc_build_info", "Build of the running binary", build);

        let pools = Arc::new(PoolCollector::default());
        registry.register_collector(Box::new(Arc::clone(&pools)));

        Self {
            inner: Arc::new(MetricsInner {
                registry: Mutex::new(registry),
                requests,
                durations,
                pools,
                authorizer: RwLock::new(None),
            }),
        }
    }

    /// Reports `svc_db_pool_connections{pool=name,state="idle"|"in_use"|"max"}` from `source` at
    /// every scrape. Registering a name again replaces its source.
    pub fn register_pool(&self, name: &str, source: Arc<dyn PoolStatsSource>) {
        let mut sources = self
            .inner
            .pools
            .sources
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        sources.retain(|(existing, _)| existing != name);
        sources.push((name.to_owned(), source));
    }

    /// Gives other crates the registry to add their own metrics, e.g.
    /// `metrics.with_registry(|r| r.register("svc_tokens_issued", "…", family.clone()))`.
    /// Names must carry the `svc_` prefix and base units (research §7.6).
    pub fn with_registry<R>(&self, f: impl FnOnce(&mut Registry) -> R) -> R {
        let mut registry = self
            .inner
            .registry
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        f(&mut registry)
    }

    /// Installs the policy for `/metrics` when no bearer token is configured (see
    /// [`MetricsAuthorizer`]).
    pub fn set_authorizer(&self, authorizer: Arc<dyn MetricsAuthorizer>) {
        *self
            .inner
            .authorizer
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(authorizer);
    }

    fn authorizer(&self) -> Option<Arc<dyn MetricsAuthorizer>> {
        self.inner
            .authorizer
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Records one finished request.
    pub fn record_request(
        &self,
        method: &Method,
        route: &str,
        status: StatusCode,
        elapsed: Duration,
    ) {
        let method = method_label(method);
        self.inner
            .requests
            .get_or_create(&RequestLabels {
                method,
                route: route.to_owned(),
                status: status.as_u16(),
            })
            .inc();
        self.inner
            .durations
            .get_or_create(&RouteLabels {
                method,
                route: route.to_owned(),
            })
            .observe(elapsed.as_secs_f64());
    }

    /// The OpenMetrics text exposition (ends with `# EOF`).
    ///
    /// # Errors
    /// Only if a custom metric's encoder fails.
    pub fn encode(&self) -> Result<String, fmt::Error> {
        let registry = self
            .inner
            .registry
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &registry)?;
        Ok(out)
    }
}

/// Standard methods keep their name; anything else is `other`, so a client inventing methods
/// cannot create label values.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::OPTIONS => "OPTIONS",
        Method::TRACE => "TRACE",
        Method::CONNECT => "CONNECT",
        _ => "other",
    }
}

/// Reads pool numbers at scrape time, so gauges are never stale and no background task exists.
#[derive(Default)]
struct PoolCollector {
    sources: RwLock<Vec<(String, Arc<dyn PoolStatsSource>)>>,
}

impl fmt::Debug for PoolCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolCollector").finish_non_exhaustive()
    }
}

impl Collector for PoolCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        // Copy the list out so a slow source never holds the lock against `register_pool`.
        let sources = self
            .sources
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if sources.is_empty() {
            return Ok(());
        }
        let mut family = encoder.encode_descriptor(
            "svc_db_pool_connections",
            "Database pool connections by state",
            None,
            MetricType::Gauge,
        )?;
        for (pool, source) in sources {
            let stats = source.pool_stats();
            for (state, value) in [
                ("idle", stats.idle),
                ("in_use", stats.size.saturating_sub(stats.idle)),
                ("max", stats.max),
            ] {
                let labels = PoolLabels {
                    pool: pool.clone(),
                    state,
                };
                ConstGauge::new(i64::from(value)).encode(family.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}

/// Counts and times every request by method, matched route and status.
pub(crate) async fn record(State(metrics): State<Metrics>, req: Request, next: Next) -> Response {
    let started = std::time::Instant::now();
    let method = req.method().clone();
    let route = route_label(&req);
    let res = next.run(req).await;
    metrics.record_request(&method, &route, res.status(), started.elapsed());
    res
}

/// `GET /metrics`.
#[utoipa::path(
    get, path = "/metrics", tag = crate::openapi::tags::OPERATIONS,
    operation_id = "getMetrics",
    summary = "Prometheus metrics",
    description = "This instance's metrics in the OpenMetrics text format: HTTP requests and \
        their durations by method, route template and status, database pool connections, build \
        info, and what other components register. Never cached.\n\n\
        Access: when `server.metrics_bearer_token` is set, exactly that token as \
        `Authorization: Bearer` (anything else is 401 with a bare `Bearer` challenge). \
        Otherwise a service access token of the host's tenant, from the client credentials \
        grant, with the `metrics:read` scope and the management API audience \
        (`{issuer}/api/v1`): a missing, invalid or expired one is 401 and a token without the \
        scope 403 `insufficient_scope`, both with an RFC 6750 challenge; the tenant comes from \
        the host as on every tenant surface.",
    responses(
        (status = 200, description = "The exposition (ends with `# EOF`).", body = String,
         content_type = "application/openmetrics-text",
         headers(("Cache-Control" = String, description = "`no-store`."))),
        (status = 401, description = "No valid metrics token.",
         body = crate::openapi::ProblemSchema, content_type = "application/problem+json",
         headers(("WWW-Authenticate" = String, description = "An RFC 6750 `Bearer` challenge."))),
        (status = 403, description = "The service token lacks `metrics:read` \
            (`insufficient_scope`, with a challenge) or is not a service token.",
         body = crate::openapi::ProblemSchema, content_type = "application/problem+json",
         headers(("WWW-Authenticate" = String,
                  description = "An RFC 6750 challenge, for `insufficient_scope`."))),
    ),
    security(("metrics_token" = [])),
)]
pub(crate) async fn scrape(
    State(state): State<HttpState>,
    client: crate::ClientContext,
    headers: HeaderMap,
) -> Response {
    if let Some(expected) = &state.settings.metrics_bearer_token {
        if !bearer_matches(&headers, expected.expose_secret()) {
            return crate::error::bearer::metrics_token_required().into_response();
        }
    } else if let Some(authorizer) = state.metrics.authorizer()
        && let Err(problem) = authorizer.authorize(&headers, &client).await
    {
        return problem.into_response();
    }

    match state.metrics.encode() {
        Ok(text) => {
            let mut res = text.into_response();
            let headers = res.headers_mut();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static(METRICS_CONTENT_TYPE));
            headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
            res
        }
        Err(err) => Problem::server_error().with_source(err).into_response(),
    }
}

/// `Authorization: Bearer <token>` (scheme case-insensitive, RFC 6750 §2.1) equal to `expected`,
/// compared in constant time so response timing does not reveal how much of a guess matched.
fn bearer_matches(headers: &HeaderMap, expected: &str) -> bool {
    let Some(presented) = headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
    else {
        return false;
    };
    !presented.is_empty()
        && !expected.is_empty()
        && bool::from(presented.as_bytes().ct_eq(expected.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct FixedPool(PoolStats);

    impl PoolStatsSource for FixedPool {
        fn pool_stats(&self) -> PoolStats {
            self.0
        }
    }

    #[test]
    fn exposition_has_build_info_requests_and_pools() {
        let metrics = Metrics::new("1.2.3", "abc123");
        metrics.record_request(
            &Method::GET,
            "/api/v1/webhooks/{id}",
            StatusCode::OK,
            Duration::from_millis(3),
        );
        metrics.register_pool(
            "identity",
            Arc::new(FixedPool(PoolStats {
                size: 7,
                idle: 2,
                max: 10,
            })),
        );
        let text = metrics.encode().unwrap();
        assert!(
            text.contains(r#"svc_build_info{version="1.2.3",commit="abc123"} 1"#),
            "{text}"
        );
        assert!(text.contains(
            r#"svc_http_requests_total{method="GET",route="/api/v1/webhooks/{id}",status="200"} 1"#
        ));
        assert!(text.contains(r#"svc_http_request_duration_seconds_bucket{le="0.005",method="GET",route="/api/v1/webhooks/{id}"} 1"#)
            || text.contains(r#"svc_http_request_duration_seconds_bucket{method="GET",route="/api/v1/webhooks/{id}",le="0.005"} 1"#), "{text}");
        assert!(text.contains(r#"svc_db_pool_connections{pool="identity",state="idle"} 2"#));
        assert!(text.contains(r#"svc_db_pool_connections{pool="identity",state="in_use"} 5"#));
        assert!(text.contains(r#"svc_db_pool_connections{pool="identity",state="max"} 10"#));
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn instances_do_not_share_a_registry() {
        let a = Metrics::new("1", "a");
        let b = Metrics::new("1", "b");
        a.record_request(&Method::GET, "/x", StatusCode::OK, Duration::ZERO);
        assert!(a.encode().unwrap().contains("route=\"/x\""));
        assert!(!b.encode().unwrap().contains("route=\"/x\""));
    }

    #[test]
    fn invented_methods_collapse_to_other() {
        let custom = Method::from_bytes(b"BREW").unwrap();
        assert_eq!(method_label(&custom), "other");
        assert_eq!(method_label(&Method::PATCH), "PATCH");
    }

    #[test]
    fn other_crates_can_register_metrics() {
        let metrics = Metrics::new("1", "a");
        let issued = Counter::<u64>::default();
        metrics.with_registry(|r| r.register("svc_tokens_issued", "Tokens issued", issued.clone()));
        issued.inc();
        assert!(
            metrics
                .encode()
                .unwrap()
                .contains("svc_tokens_issued_total 1")
        );
    }

    #[test]
    fn bearer_comparison() {
        let mut h = HeaderMap::new();
        assert!(!bearer_matches(&h, "s3cret"));
        h.insert(AUTHORIZATION, HeaderValue::from_static("Bearer s3cret"));
        assert!(bearer_matches(&h, "s3cret"));
        h.insert(AUTHORIZATION, HeaderValue::from_static("bearer s3cret"));
        assert!(bearer_matches(&h, "s3cret"));
        h.insert(AUTHORIZATION, HeaderValue::from_static("Bearer s3cre"));
        assert!(!bearer_matches(&h, "s3cret"));
        h.insert(AUTHORIZATION, HeaderValue::from_static("Basic s3cret"));
        assert!(!bearer_matches(&h, "s3cret"));
        h.insert(AUTHORIZATION, HeaderValue::from_static("Bearer "));
        assert!(!bearer_matches(&h, ""));
    }
}
