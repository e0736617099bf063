//! The outbox relay: turns recorded events into deliveries, one per active subscription that
//! wants the event's type and existed when it happened, and marks the events relayed, all in
//! one transaction. Several relays
//! may run against one PostgreSQL: the events a relay reads stay locked until it commits and the
//! others skip them.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use svc_domain::{Clock, Delivery, DeliveryId, DeliveryStatus, Rng, Subscription, TenantId};
use svc_store::{Store, StoreError};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::metrics::WebhookMetrics;

/// Fans out the outbox.
pub struct Relay {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    rng: Arc<dyn Rng>,
    batch: u32,
    poll_interval: Duration,
    delivered: Arc<Notify>,
}

impl Relay {
    /// A relay reading `batch` events per transaction, looking for work every `poll_interval`
    /// when idle, and waking `delivered` (the local delivery worker) after creating deliveries.
    pub fn new(
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
        rng: Arc<dyn Rng>,
        batch: u32,
        poll_interval: Duration,
        delivered: Arc<Notify>,
    ) -> Self {
        Self {
            store,
            clock,
            rng,
            batch,
            poll_interval,
            delivered,
        }
    }

    /// One pass: relays up to `batch` events; returns how many events and deliveries.
    pub async fn relay_once(&self) -> Result<(usize, usize), StoreError> {
        // Whole microseconds: what PostgreSQL stores, so the history reads back what was written.
        let now = self.clock.now();
        let now = now
            .replace_nanosecond(now.nanosecond() / 1_000 * 1_000)
            .unwrap_or(now);
        let mut tx = self.store.write().await?;
        let events = tx.unrelayed_events(self.batch).await?;
        if events.is_empty() {
            return Ok((0, 0));
        }
        let mut subscriptions: HashMap<TenantId, Vec<Subscription>> = HashMap::new();
        let mut deliveries = 0;
        for event in &events {
            if !subscriptions.contains_key(&event.tenant_id) {
                let active = tx.active_webhooks(&event.tenant_id).await?;
                subscriptions.insert(event.tenant_id.clone(), active);
            }
            let wanting = subscriptions
                .get(&event.tenant_id)
                .into_iter()
                .flatten()
                // A subscription hears of what happened after it was created, however late
                // the relay runs.
                .filter(|s| s.wants(event.event_type) && s.created_at <= event.occurred_at);
            for subscription in wanting {
                tx.insert_delivery(&Delivery {
                    id: DeliveryId::generate(self.clock.as_ref(), self.rng.as_ref()),
                    tenant_id: event.tenant_id.clone(),
                    webhook_id: subscription.id.clone(),
                    event_id: event.id.clone(),
                    event_type: event.event_type,
                    status: DeliveryStatus::Pending,
                    attempts: 0,
                    next_attempt_at: Some(now),
                    last_status_code: None,
                    last_error: None,
                    redelivery_of: None,
                    created_at: now,
                    updated_at: now,
                })
                .await?;
                deliveries += 1;
            }
        }
        let ids: Vec<_> = events.iter().map(|e| e.id.clone()).collect();
        tx.mark_events_relayed(&ids, now).await?;
        tx.commit().await?;
        if deliveries > 0 {
            self.delivered.notify_one();
        }
        Ok((events.len(), deliveries))
    }

    /// Relays until `cancel` fires: back to back while full batches come, every
    /// `poll_interval` otherwise. A database outage is logged once and waited out.
    pub async fn run(self: Arc<Self>, cancel: CancellationToken) {
        let mut failing = false;
        loop {
            let full = match self.relay_once().await {
                Ok((events, _)) => {
                    if failing {
                        tracing::info!("webhook relay: database reachable again");
                        failing = false;
                    }
                    events == self.batch as usize
                }
                Err(e) => {
                    if !failing {
                        tracing::warn!(error = %e, "webhook relay: cannot read the outbox; retrying");
                        failing = true;
                    }
                    false
                }
            };
            if full {
                if cancel.is_cancelled() {
                    return;
                }
                continue;
            }
            tokio::select! {
                () = cancel.cancelled() => return,
                () = tokio::time::sleep(self.poll_interval) => {}
            }
        }
    }
}

/// Samples the queue figures into `metrics` every `interval` until `cancel` fires.
pub async fn sample_queue(
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    metrics: WebhookMetrics,
    interval: Duration,
    cancel: CancellationToken,
) {
    loop {
        let sampled = async {
            let mut tx = store.read().await?;
            let stats = tx.webhook_queue_stats().await?;
            tx.finish().await?;
            Ok::<_, StoreError>(stats)
        };
        if let Ok(stats) = sampled.await {
            metrics.queue(&stats, clock.now());
        }
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(interval) => {}
        }
    }
}
