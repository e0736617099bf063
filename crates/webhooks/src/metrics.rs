//! Delivery metrics: attempts by outcome, attempt latency, queue depth and the age of the oldest
//! waiting work. The runtime registers them in its per-instance registry.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;
use svc_store::QueueStats;
use time::OffsetDateTime;

/// Attempt latency buckets in seconds: a local receiver answers in a millisecond, the timeout is
/// 15 s by default.
const LATENCY_BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 15.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    state: &'static str,
}

/// The webhook metrics of one process. Cheap to clone.
#[derive(Clone, Debug)]
pub struct WebhookMetrics {
    attempts: Family<OutcomeLabels, Counter>,
    latency: Histogram,
    queue: Family<QueueLabels, Gauge>,
    oldest: Gauge<f64, AtomicU64>,
}

impl Default for WebhookMetrics {
    fn default() -> Self {
        Self {
            attempts: Family::default(),
            latency: Histogram::new(LATENCY_BUCKETS),
            queue: Family::default(),
            oldest: Gauge::default(),
        }
    }
}

/// How an attempt ended, as counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptResult {
    /// The receiver accepted it.
    Succeeded,
    /// It failed and will be retried.
    Retrying,
    /// It failed and no attempt follows (schedule over, or 410).
    Exhausted,
    /// Its worker stopped before reporting (the lease ran out).
    Interrupted,
}

impl AttemptResult {
    fn label(self) -> &'static str {
        match self {
            Self::Succeeded => "succeeded",
            Self::Retrying => "retrying",
            Self::Exhausted => "exhausted",
            Self::Interrupted => "interrupted",
        }
    }
}

impl WebhookMetrics {
    /// Adds the metrics to `registry`.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "svc_webhook_attempts",
            "Webhook delivery attempts by outcome",
            self.attempts.clone(),
        );
        registry.register(
            "svc_webhook_attempt_duration_seconds",
            "Time from sending a webhook delivery attempt to its answer or failure",
            self.latency.clone(),
        );
        registry.register(
            "svc_webhook_queue_depth",
            "Events waiting to be fanned out and deliveries with attempts to come",
            self.queue.clone(),
        );
        registry.register(
            "svc_webhook_oldest_pending_age_seconds",
            "Age of the oldest event or delivery still waiting to be delivered",
            self.oldest.clone(),
        );
    }

    /// Counts a finished attempt that took `seconds`.
    pub fn attempt(&self, result: AttemptResult, seconds: f64) {
        self.attempts
            .get_or_create(&OutcomeLabels {
                outcome: result.label(),
            })
            .inc();
        if result != AttemptResult::Interrupted {
            self.latency.observe(seconds);
        }
    }

    /// Publishes queue figures sampled at `now`.
    pub fn queue(&self, stats: &QueueStats, now: OffsetDateTime) {
        let set = |state, value: u64| {
            self.queue
                .get_or_create(&QueueLabels { state })
                .set(i64::try_from(value).unwrap_or(i64::MAX));
        };
        set("unrelayed_events", stats.unrelayed_events);
        set("open_deliveries", stats.open_deliveries);
        let age = stats
            .oldest_pending_at
            .map_or(0.0, |at| (now - at).as_seconds_f64().max(0.0));
        self.oldest.set(age);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::encoding::text::encode;

    #[test]
    fn metrics_are_exposed_with_their_labels() {
        let metrics = WebhookMetrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        metrics.attempt(AttemptResult::Succeeded, 0.004);
        metrics.attempt(AttemptResult::Retrying, 0.2);
        metrics.attempt(AttemptResult::Succeeded, 0.003);
        let now = OffsetDateTime::UNIX_EPOCH + time::Duration::days(1);
        metrics.queue(
            &QueueStats {
                unrelayed_events: 3,
                open_deliveries: 7,
                oldest_pending_at: Some(now - time::Duration::seconds(42)),
            },
            now,
        );
        let mut text = String::new();
        encode(&mut text, &registry).unwrap();
        assert!(
            text.contains(r#"svc_webhook_attempts_total{outcome="succeeded"} 2"#),
            "{text}"
        );
        assert!(
            text.contains(r#"svc_webhook_attempts_total{outcome="retrying"} 1"#),
            "{text}"
        );
        assert!(
            text.contains("svc_webhook_attempt_duration_seconds_count 3"),
            "{text}"
        );
        assert!(
            text.contains(r#"svc_webhook_queue_depth{state="open_deliveries"} 7"#),
            "{text}"
        );
        assert!(
            text.contains(r#"svc_webhook_queue_depth{state="unrelayed_events"} 3"#),
            "{text}"
        );
        assert!(
            text.contains("svc_webhook_oldest_pending_age_seconds 42.0"),
            "{text}"
        );
    }
}
