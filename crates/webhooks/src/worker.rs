//! The delivery worker: claims due deliveries with a lease (committed before any HTTP call),
//! sends each attempt, records its outcome only while it still holds the lease, and schedules
//! the next attempt. Leases that ran out (a worker killed mid-attempt) are reaped: the lost
//! attempt is recorded as interrupted and the delivery retried, so a crash costs at most a
//! duplicate, never an event.
//!
//! Several workers (in one process or many) share the queue: the store never leases one
//! delivery to two of them, and the fence on (owner, attempt) keeps a worker that outlived its
//! lease from overwriting what the reaper decided.

use crate::metrics::{AttemptResult, WebhookMetrics};
use crate::retry::{Outcome, RetryPolicy};
use crate::send::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};
use svc_domain::{Clock, DeliveryAttempt, Event, EventData, EventType, Rng};
use svc_store::{AttemptNext, ClaimedDelivery, Store, StoreError, WriteTx};
use time::OffsetDateTime;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// How a worker paces itself.
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// How long a claimed delivery stays this worker's.
    pub lease: Duration,
    /// Attempts in flight at once.
    pub concurrency: usize,
    /// How often an idle worker looks for due deliveries.
    pub poll_interval: Duration,
    /// What follows a failed attempt.
    pub retry: RetryPolicy,
}

/// Sends deliveries until cancelled.
pub struct DeliveryWorker {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    rng: Arc<dyn Rng>,
    sender: Sender,
    settings: WorkerSettings,
    metrics: WebhookMetrics,
    owner: String,
    wake: Arc<Notify>,
}

impl DeliveryWorker {
    /// A worker with a fresh lease-owner name; `wake` lets the local relay signal new work.
    pub fn new(
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
        rng: Arc<dyn Rng>,
        sender: Sender,
        settings: WorkerSettings,
        metrics: WebhookMetrics,
        wake: Arc<Notify>,
    ) -> Self {
        let owner = format!("worker-{:032x}", rng.next_u128());
        Self {
            store,
            clock,
            rng,
            sender,
            settings,
            metrics,
            owner,
            wake,
        }
    }

    /// The name this worker's leases carry.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    fn now(&self) -> OffsetDateTime {
        let now = self.clock.now();
        now.replace_nanosecond(now.nanosecond() / 1_000 * 1_000)
            .unwrap_or(now)
    }

    /// Claims and sends until `cancel` fires, then lets attempts in flight finish.
    pub async fn run(self: Arc<Self>, cancel: CancellationToken) {
        let slots = Arc::new(Semaphore::new(self.settings.concurrency.max(1)));
        let mut in_flight = JoinSet::new();
        let mut failing = false;
        while !cancel.is_cancelled() {
            while in_flight.try_join_next().is_some() {}
            let pass = async {
                self.reap().await?;
                let free = u32::try_from(slots.available_permits()).unwrap_or(u32::MAX);
                if free == 0 {
                    return Ok(Vec::new());
                }
                self.claim(free).await
            };
            let claimed = match pass.await {
                Ok(claimed) => {
                    if failing {
                        tracing::info!("webhook worker: database reachable again");
                        failing = false;
                    }
                    claimed
                }
                Err(e) => {
                    if !failing {
                        tracing::warn!(error = %e, "webhook worker: cannot claim deliveries; retrying");
                        failing = true;
                    }
                    Vec::new()
                }
            };
            let got_work = !claimed.is_empty();
            for delivery in claimed {
                let Ok(slot) = slots.clone().acquire_owned().await else {
                    break;
                };
                in_flight.spawn(self.clone().deliver(delivery, slot));
            }
            if got_work && slots.available_permits() > 0 {
                continue;
            }
            tokio::select! {
                () = cancel.cancelled() => {}
                () = tokio::time::sleep(self.settings.poll_interval) => {}
                () = self.wake.notified() => {}
                Some(_) = in_flight.join_next(), if !in_flight.is_empty() => {}
            }
        }
        while in_flight.join_next().await.is_some() {}
    }

    /// One pass, start to finish: reaps expired leases, claims what is due (up to the
    /// concurrency) and sends it all, returning how many attempts were made.
    pub async fn run_once(self: &Arc<Self>) -> Result<usize, StoreError> {
        self.reap().await?;
        let limit = u32::try_from(self.settings.concurrency.max(1)).unwrap_or(u32::MAX);
        let claimed = self.claim(limit).await?;
        let count = claimed.len();
        let slots = Arc::new(Semaphore::new(count.max(1)));
        let mut in_flight = JoinSet::new();
        for delivery in claimed {
            let Ok(slot) = slots.clone().acquire_owned().await else {
                break;
            };
            in_flight.spawn(self.clone().deliver(delivery, slot));
        }
        while in_flight.join_next().await.is_some() {}
        Ok(count)
    }

    /// Leases up to `limit` due deliveries.
    async fn claim(&self, limit: u32) -> Result<Vec<ClaimedDelivery>, StoreError> {
        let now = self.now();
        let lease_until = now + self.settings.lease;
        let mut tx = self.store.write().await?;
        let claimed = tx
            .claim_deliveries(&self.owner, now, lease_until, limit)
            .await?;
        tx.commit().await?;
        Ok(claimed)
    }

    /// Settles deliveries whose worker let the lease run out: the lost attempt counts as a
    /// failure and the schedule decides what follows.
    async fn reap(&self) -> Result<(), StoreError> {
        let now = self.now();
        let mut tx = self.store.write().await?;
        let expired = tx.expired_leases(now, 100).await?;
        if expired.is_empty() {
            return Ok(());
        }
        let error = "no outcome recorded: the worker stopped before the attempt finished";
        for lease in &expired {
            let number = lease.delivery.attempts;
            let outcome = Outcome::Failed {
                error: error.to_owned(),
            };
            let attempt = DeliveryAttempt {
                number,
                started_at: lease.leased_at,
                duration_ms: millis(now - lease.leased_at),
                status_code: None,
                error: outcome.error(),
            };
            let next = self
                .settings
                .retry
                .next(&outcome, number, now, self.rng.as_ref());
            let settled = tx
                .finish_attempt(
                    &lease.delivery.tenant_id,
                    &lease.delivery.id,
                    &lease.owner,
                    &attempt,
                    next,
                    now,
                )
                .await?;
            if settled {
                tracing::warn!(
                    delivery_id = %lease.delivery.id,
                    webhook_id = %lease.delivery.webhook_id,
                    attempt = number,
                    "webhook attempt interrupted (its worker stopped); scheduled again"
                );
                self.metrics.attempt(AttemptResult::Interrupted, 0.0);
            }
        }
        tx.commit().await
    }

    /// One attempt of `claimed`, then its record; `_slot` frees a concurrency slot when done.
    async fn deliver(self: Arc<Self>, claimed: ClaimedDelivery, _slot: OwnedSemaphorePermit) {
        let started_at = self.now();
        let clock = Instant::now();
        let outcome = self.sender.send(&claimed, started_at).await;
        let elapsed = clock.elapsed();
        let number = claimed.delivery.attempts;
        let finished_at = self.now();
        let next = self
            .settings
            .retry
            .next(&outcome, number, finished_at, self.rng.as_ref());
        let attempt = DeliveryAttempt {
            number,
            started_at,
            duration_ms: u32::try_from(elapsed.as_millis()).unwrap_or(u32::MAX),
            status_code: outcome.status(),
            error: outcome.error(),
        };
        let result = match next {
            AttemptNext::Succeeded => AttemptResult::Succeeded,
            AttemptNext::RetryAt(_) => AttemptResult::Retrying,
            AttemptNext::Exhausted => AttemptResult::Exhausted,
        };
        self.metrics.attempt(result, elapsed.as_secs_f64());
        tracing::info!(
            delivery_id = %claimed.delivery.id,
            webhook_id = %claimed.delivery.webhook_id,
            tenant_id = %claimed.delivery.tenant_id,
            event_type = %claimed.delivery.event_type,
            attempt = number,
            status = outcome.status(),
            outcome = ?result,
            "webhook attempt"
        );
        // The HTTP call happened; keep trying to record it while the lease lasts (a database
        // that is down for a few seconds must not turn into a duplicate delivery).
        let gone = outcome == Outcome::Gone;
        let deadline = Instant::now() + self.settings.lease;
        let mut pause = Duration::from_millis(100);
        loop {
            match self
                .record(&claimed, &attempt, next, gone, finished_at)
                .await
            {
                Ok(_) => return,
                Err(e) if Instant::now() + pause < deadline => {
                    tracing::debug!(error = %e, delivery_id = %claimed.delivery.id, "recording the attempt failed; retrying");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(5));
                }
                Err(e) => {
                    tracing::warn!(error = %e, delivery_id = %claimed.delivery.id, "could not record a webhook attempt; its lease will run out and it will be sent again");
                    return;
                }
            }
        }
    }

    /// Records the attempt (fenced by the lease) and, after a 410, switches the subscription
    /// off with its `admin.webhook.disabled` event, in one transaction.
    async fn record(
        &self,
        claimed: &ClaimedDelivery,
        attempt: &DeliveryAttempt,
        next: AttemptNext,
        gone: bool,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let delivery = &claimed.delivery;
        let mut tx = self.store.write().await?;
        let recorded = tx
            .finish_attempt(
                &delivery.tenant_id,
                &delivery.id,
                &self.owner,
                attempt,
                next,
                now,
            )
            .await?;
        if recorded && gone {
            self.disable(tx.as_mut(), claimed, now).await?;
        }
        tx.commit().await?;
        Ok(recorded)
    }

    async fn disable(
        &self,
        tx: &mut dyn WriteTx,
        claimed: &ClaimedDelivery,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let delivery = &claimed.delivery;
        let Some(mut subscription) = tx
            .webhook_for_update(&delivery.tenant_id, &delivery.webhook_id)
            .await?
        else {
            return Ok(());
        };
        if !subscription.active {
            return Ok(());
        }
        subscription.active = false;
        subscription.disabled_reason = Some(format!(
            "the receiver answered 410 Gone to delivery {} at {}",
            delivery.id,
            now.format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default()
        ));
        let read_at = subscription.updated_at;
        subscription.updated_at = now.max(read_at + time::Duration::microseconds(1));
        if !tx.update_webhook(&subscription, read_at).await? {
            // Read locked, so unchanged since; nothing to switch off if it did change.
            return Ok(());
        }
        let event = Event::new(
            self.clock.as_ref(),
            self.rng.as_ref(),
            &delivery.tenant_id,
            EventType::AdminWebhookDisabled,
            EventData::Webhook {
                webhook_id: subscription.id.clone(),
                url: subscription.url.to_string(),
                actor: "system".into(),
            },
        );
        tx.insert_event(&event).await?;
        tracing::warn!(
            webhook_id = %subscription.id,
            tenant_id = %delivery.tenant_id,
            "webhook subscription switched off: its receiver answered 410 Gone"
        );
        Ok(())
    }
}

fn millis(span: time::Duration) -> u32 {
    u32::try_from(span.whole_milliseconds().max(0)).unwrap_or(u32::MAX)
}
