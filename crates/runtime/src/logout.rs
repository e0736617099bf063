//! Logout propagation in the runtime: what `[logout]` lets applications register, and the async
//! plane's back-channel delivery worker, sending through the same SSRF-guarded HTTP client and
//! target policy as webhooks, with its attempts counted by outcome and timed in `/metrics`
//! (`svc_backchannel_logout_attempts_total{outcome}`,
//! `svc_backchannel_logout_attempt_duration_seconds`).

use crate::workers::Workers;
use async_trait::async_trait;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use std::sync::Arc;
use std::time::{Duration, Instant};
use svc_config::Config;
use svc_domain::{TargetPolicy, WebhookUrl};
use svc_http::Metrics;
use svc_manage::LogoutOffer;
use svc_oauth::backchannel_logout::{BackchannelLogout, LogoutSettings, LogoutTransport};
use svc_oauth::context::ProtocolContext;
use svc_webhooks::egress::{check_target, describe_failure};
use svc_webhooks::{SystemLookup, guarded_client};
use tokio_util::sync::CancellationToken;

/// How often the worker looks for due notices when the last pass found less than a batch.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The channels applications may register.
pub(crate) fn offer(config: &Config) -> LogoutOffer {
    LogoutOffer {
        backchannel: config
            .logout
            .backchannel
            .then(|| crate::webhooks::target_policy(config)),
        frontchannel: config.logout.frontchannel,
        frontchannel_https_only: config.is_production(),
    }
}

/// Whether authorization codes must record which applications a session signed into.
pub(crate) fn remembers_session_clients(config: &Config) -> bool {
    config.logout.backchannel || config.logout.frontchannel
}

/// The worker's pacing from `[logout]`.
fn settings(config: &Config) -> LogoutSettings {
    let timeout = Duration::from_secs(u64::from(config.logout.backchannel_timeout_secs));
    let defaults = LogoutSettings::default();
    LogoutSettings {
        max_attempts: config.logout.backchannel_max_attempts,
        // Every attempt of a batch runs at once, so one timeout (and the write after it) is
        // what a lease must outlast.
        lease: defaults.lease.max(timeout * 4),
        ..defaults
    }
}

/// Starts back-channel delivery on the async plane when `[logout].backchannel` is on.
pub(crate) fn spawn(
    workers: &mut Workers,
    config: &Config,
    ctx: ProtocolContext,
    metrics: &Metrics,
) -> Result<(), crate::RuntimeError> {
    if !config.logout.backchannel {
        return Ok(());
    }
    let timeout = Duration::from_secs(u64::from(config.logout.backchannel_timeout_secs));
    let policy = crate::webhooks::target_policy(config);
    let client = guarded_client(policy, timeout, Arc::new(SystemLookup)).map_err(|e| {
        crate::RuntimeError::Bootstrap(format!("cannot build the logout HTTP client: {e}"))
    })?;
    let counted = LogoutMetrics::default();
    metrics.with_registry(|registry| counted.register(registry));
    let transport = Arc::new(GuardedTransport {
        client,
        policy,
        timeout,
        metrics: counted,
    });
    let worker = Arc::new(BackchannelLogout::new(ctx, transport, settings(config)));
    tracing::info!("back-channel logout delivery started");
    workers.spawn("backchannel-logout", move |cancel| run(worker, cancel));
    Ok(())
}

/// Delivers until `cancel` fires: back to back while full batches come, every second
/// otherwise. A database outage is logged once and waited out.
async fn run(worker: Arc<BackchannelLogout>, cancel: CancellationToken) {
    let batch = worker.settings().batch as usize;
    let mut failing = false;
    loop {
        let full = match worker.deliver_once().await {
            Ok(claimed) => {
                if failing {
                    tracing::info!("back-channel logout: database reachable again");
                    failing = false;
                }
                claimed == batch
            }
            Err(e) => {
                if !failing {
                    tracing::warn!(error = %e, "back-channel logout: cannot read the outbox; retrying");
                    failing = true;
                }
                false
            }
        };
        if full && !cancel.is_cancelled() {
            continue;
        }
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(POLL_INTERVAL) => {}
        }
    }
}

/// POSTs logout tokens under the webhook egress policy: the static check on every attempt
/// (the policy may have tightened since the URI was registered), then a client whose resolver
/// refuses internal addresses, follows no redirect and uses no proxy.
struct GuardedTransport {
    client: reqwest::Client,
    policy: TargetPolicy,
    timeout: Duration,
    metrics: LogoutMetrics,
}

#[async_trait]
impl LogoutTransport for GuardedTransport {
    async fn post(&self, uri: &str, logout_token: &str) -> Result<u16, String> {
        let started = Instant::now();
        let answer = self.send(uri, logout_token).await;
        self.metrics.record(&answer, started.elapsed());
        answer
    }
}

impl GuardedTransport {
    async fn send(&self, uri: &str, logout_token: &str) -> Result<u16, String> {
        let url = WebhookUrl::parse(uri).map_err(|e| format!("target refused: {e}"))?;
        check_target(self.policy, &url).map_err(|e| format!("target refused: {e}"))?;
        // Back-Channel Logout 1.0 §2.5: a form-encoded POST; §2.8 the RP answers without
        // caching, and what it says in a body is not needed.
        let answer = self
            .client
            .post(url.url().clone())
            .header(reqwest::header::CACHE_CONTROL, "no-store")
            .form(&[("logout_token", logout_token)])
            .send()
            .await
            .map_err(|e| describe_failure(&e, self.timeout))?;
        Ok(answer.status().as_u16())
    }
}

/// Attempt latency buckets in seconds: a local receiver answers in a millisecond, the timeout is
/// 5 s by default.
const LATENCY_BUCKETS: [f64; 11] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

/// The delivery attempts of one process: by outcome (`delivered`, a 2xx; `rejected`, another
/// status; `unreachable`, no answer: refused target, connection failure or timeout) and their
/// latency. Retries and give-ups show as the later attempts' outcomes; the outbox itself is
/// visible per application through the audit of each ended session.
#[derive(Clone, Debug)]
struct LogoutMetrics {
    attempts: Family<OutcomeLabels, Counter>,
    latency: Histogram,
}

impl Default for LogoutMetrics {
    fn default() -> Self {
        Self {
            attempts: Family::default(),
            latency: Histogram::new(LATENCY_BUCKETS),
        }
    }
}

impl LogoutMetrics {
    fn register(&self, registry: &mut prometheus_client::registry::Registry) {
        registry.register(
            "svc_backchannel_logout_attempts",
            "Back-channel logout token deliveries by outcome",
            self.attempts.clone(),
        );
        registry.register(
            "svc_backchannel_logout_attempt_duration_seconds",
            "Time of one back-channel logout delivery attempt",
            self.latency.clone(),
        );
    }

    fn record(&self, answer: &Result<u16, String>, took: Duration) {
        let outcome = match answer {
            Ok(status) if (200..300).contains(status) => "delivered",
            Ok(_) => "rejected",
            Err(_) => "unreachable",
        };
        self.attempts
            .get_or_create(&OutcomeLabels { outcome })
            .inc();
        self.latency.observe(took.as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_are_counted_by_outcome_and_timed() {
        let metrics = LogoutMetrics::default();
        let mut registry = prometheus_client::registry::Registry::default();
        metrics.register(&mut registry);
        metrics.record(&Ok(200), Duration::from_millis(2));
        metrics.record(&Ok(204), Duration::from_millis(2));
        metrics.record(&Ok(500), Duration::from_millis(2));
        metrics.record(&Err("target refused".into()), Duration::from_secs(5));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap_or_default();
        for line in [
            r#"svc_backchannel_logout_attempts_total{outcome="delivered"} 2"#,
            r#"svc_backchannel_logout_attempts_total{outcome="rejected"} 1"#,
            r#"svc_backchannel_logout_attempts_total{outcome="unreachable"} 1"#,
            "svc_backchannel_logout_attempt_duration_seconds_count 4",
        ] {
            assert!(text.contains(line), "{line}: {text}");
        }
    }
}
