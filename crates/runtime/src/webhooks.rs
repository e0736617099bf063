//! Webhooks in the runtime: the subscription rules the control plane enforces, and the async
//! plane's relay, delivery worker and queue sampler, built from `[webhooks]` and `[security]`.

use crate::workers::Workers;
use std::sync::Arc;
use std::time::Duration;
use svc_config::Config;
use svc_domain::{Clock, Rng, TargetPolicy};
use svc_http::Metrics;
use svc_manage::webhooks::WebhookRules;
use svc_store::Store;
use svc_webhooks::{
    DeliveryWorker, Relay, RetryPolicy, Sender, SystemLookup, WebhookMetrics, WorkerSettings,
    guarded_client,
};
use tokio::sync::Notify;

/// Events a relay fans out per transaction.
const RELAY_BATCH: u32 = 200;
/// How often the queue gauges are refreshed.
const QUEUE_SAMPLE_INTERVAL: Duration = Duration::from_secs(5);

/// Where receivers may be (CONTRACTS.md "Webhooks"): https on 443 at public addresses in
/// production (other ports with `security.webhook_allow_non_standard_ports`); anything outside
/// production unless `webhooks.allow_internal_targets = false`.
pub(crate) fn target_policy(config: &Config) -> TargetPolicy {
    let production = config.is_production();
    let internal = config.webhooks.internal_targets_allowed(production);
    TargetPolicy {
        https_only: !internal,
        standard_port_only: production && !config.security.webhook_allow_non_standard_ports,
        public_only: !internal,
    }
}

/// The rules the subscription API enforces.
pub(crate) fn rules(config: &Config) -> WebhookRules {
    WebhookRules {
        targets: target_policy(config),
        max_per_tenant: u64::from(config.webhooks.max_subscriptions_per_tenant),
    }
}

/// Starts the relay, the delivery worker and the queue sampler on the async plane, and
/// registers their metrics.
pub(crate) fn spawn(
    workers: &mut Workers,
    config: &Config,
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    rng: Arc<dyn Rng>,
    metrics: &Metrics,
) -> Result<(), crate::RuntimeError> {
    let settings = &config.webhooks;
    let timeout = Duration::from_secs(u64::from(settings.request_timeout_secs));
    let poll = Duration::from_millis(u64::from(settings.poll_interval_ms));
    let policy = target_policy(config);
    let client = guarded_client(policy, timeout, Arc::new(SystemLookup)).map_err(|e| {
        crate::RuntimeError::Bootstrap(format!("cannot build the webhook HTTP client: {e}"))
    })?;
    let sender = Sender::new(
        client,
        policy,
        timeout,
        Duration::from_secs(u64::from(settings.signature_max_age_secs)),
    );
    let webhook_metrics = WebhookMetrics::default();
    metrics.with_registry(|registry| webhook_metrics.register(registry));
    let wake = Arc::new(Notify::new());
    let relay = Arc::new(Relay::new(
        store.clone(),
        clock.clone(),
        rng.clone(),
        RELAY_BATCH,
        poll,
        wake.clone(),
    ));
    let worker = Arc::new(DeliveryWorker::new(
        store.clone(),
        clock.clone(),
        rng,
        sender,
        WorkerSettings {
            lease: Duration::from_secs(u64::from(settings.lease_secs)),
            concurrency: settings.max_concurrent_deliveries as usize,
            poll_interval: poll,
            retry: RetryPolicy::new(
                settings
                    .retry_schedule_secs
                    .iter()
                    .map(|s| Duration::from_secs(u64::from(*s)))
                    .collect(),
            ),
        },
        webhook_metrics.clone(),
        wake,
    ));
    tracing::info!(worker = worker.owner(), "webhook delivery started");
    workers.spawn("webhook-relay", move |cancel| relay.run(cancel));
    workers.spawn("webhook-delivery", move |cancel| worker.run(cancel));
    workers.spawn("webhook-queue-metrics", move |cancel| {
        svc_webhooks::relay::sample_queue(
            store,
            clock,
            webhook_metrics,
            QUEUE_SAMPLE_INTERVAL,
            cancel,
        )
    });
    Ok(())
}
