//! The event outbox and webhook delivery: events recorded in the same transaction as the change
//! they describe, tenants' subscriptions, the deliveries fanned out to them with their leases,
//! the history of attempts, and the `EventWrites`/`WebhookReads`/`WebhookWrites` ports for
//! [`SqlTx`], which forward to one submodule per concern:
//!
//! - `events`: the outbox (record, relay, list);
//! - `subscriptions`: the tenants' webhook subscriptions;
//! - `deliveries`: deliveries, finished attempts and their history;
//! - `queue`: the workers' queue (lease claims, reaping expired leases, figures, purge);
//! - `rows`: the row forms and their one `decode`.
//!
//! A claim is a lease, never a row lock held across the HTTP call: a worker marks due
//! deliveries as its own until `lease_until` in a short transaction, commits, sends, then
//! reports with `finish_attempt`, fenced on the owner and attempt number. How concurrent
//! claimers (threads, processes, instances) are kept from taking the same row differs by
//! dialect; see `queue`.
//!
//! Instants compared in SQL use the `_ns` integer twins on SQLite (its stored text does not order
//! below one second) and the `timestamptz` columns themselves on PostgreSQL, so those statements
//! are [`crate::PerDialect`]; the rest is one text for both.

use crate::SqlTx;
use crate::dialect::Dialect;
use async_trait::async_trait;
use svc_domain::{
    Delivery, DeliveryAttempt, DeliveryId, Event, EventId, Subscription, TenantId, WebhookId,
};
use svc_store::{
    AttemptNext, ClaimedDelivery, DeliveryFilter, EventWrites, ExpiredLease, Order, QueueStats,
    StoreError, StoredEvent, UnrelayedEvent, WebhookReads, WebhookWrites,
};
use time::OffsetDateTime;

/// The columns of a subscription (`s`) under their own names, then `$rest`.
macro_rules! select_subscriptions {
    ($rest:literal) => {
        concat!(
            "SELECT s.id, s.tenant_id, s.url, s.event_types, s.description, s.active, s.secret, \
             s.previous_secret, s.previous_secret_until, s.disabled_reason, s.created_at, \
             s.updated_at FROM webhook_subscriptions s ",
            $rest
        )
    };
}

/// The columns of a delivery (`d`) that `deliveries::decode` reads.
macro_rules! delivery_columns {
    () => {
        "d.id, d.tenant_id, d.webhook_id, d.event_id, d.event_type, d.status, d.attempts, \
         d.next_attempt_at, d.last_status_code, d.last_error, d.redelivery_of, d.created_at, \
         d.updated_at"
    };
}

mod deliveries;
mod events;
mod queue;
mod rows;
mod subscriptions;

#[async_trait]
impl<D: Dialect> EventWrites for SqlTx<D> {
    async fn insert_event(&mut self, event: &Event) -> Result<(), StoreError> {
        events::insert::<D>(self.conn(), event, None).await
    }
}

#[async_trait]
impl<D: Dialect> WebhookReads for SqlTx<D> {
    async fn webhook(
        &mut self,
        tenant: &TenantId,
        id: &WebhookId,
    ) -> Result<Option<Subscription>, StoreError> {
        subscriptions::by_id::<D>(self.conn(), tenant, id).await
    }

    async fn list_webhooks(
        &mut self,
        tenant: &TenantId,
        after: Option<&WebhookId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<Subscription>, StoreError> {
        subscriptions::list::<D>(self.conn(), tenant, after, order, limit).await
    }

    async fn count_webhooks(&mut self, tenant: &TenantId) -> Result<u64, StoreError> {
        subscriptions::count::<D>(self.conn(), tenant).await
    }

    async fn delivery(
        &mut self,
        tenant: &TenantId,
        webhook: &WebhookId,
        id: &DeliveryId,
    ) -> Result<Option<Delivery>, StoreError> {
        deliveries::by_id::<D>(self.conn(), tenant, webhook, id).await
    }

    async fn list_deliveries(
        &mut self,
        tenant: &TenantId,
        webhook: &WebhookId,
        filter: &DeliveryFilter,
        after: Option<&DeliveryId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<Delivery>, StoreError> {
        deliveries::list::<D>(self.conn(), tenant, webhook, filter, after, order, limit).await
    }

    async fn delivery_attempts(
        &mut self,
        tenant: &TenantId,
        id: &DeliveryId,
    ) -> Result<Vec<DeliveryAttempt>, StoreError> {
        deliveries::attempts::<D>(self.conn(), tenant, id).await
    }

    async fn webhook_queue_stats(&mut self) -> Result<QueueStats, StoreError> {
        queue::stats::<D>(self.conn()).await
    }

    async fn events(
        &mut self,
        tenant: &TenantId,
        after: Option<&EventId>,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        events::list::<D>(self.conn(), tenant, after, limit).await
    }
}

#[async_trait]
impl<D: Dialect> WebhookWrites for SqlTx<D> {
    async fn insert_webhook(&mut self, webhook: &Subscription) -> Result<(), StoreError> {
        subscriptions::insert::<D>(self.conn(), webhook).await
    }

    async fn webhook_for_update(
        &mut self,
        tenant: &TenantId,
        id: &WebhookId,
    ) -> Result<Option<Subscription>, StoreError> {
        subscriptions::for_update::<D>(self.conn(), tenant, id).await
    }

    async fn update_webhook(
        &mut self,
        webhook: &Subscription,
        read_at: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        subscriptions::update::<D>(self.conn(), webhook, read_at).await
    }

    async fn delete_webhook(
        &mut self,
        tenant: &TenantId,
        id: &WebhookId,
        read_at: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        subscriptions::delete::<D>(self.conn(), tenant, id, read_at).await
    }

    async fn unrelayed_events(&mut self, limit: u32) -> Result<Vec<UnrelayedEvent>, StoreError> {
        events::unrelayed::<D>(self.conn(), limit).await
    }

    async fn active_webhooks(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<Subscription>, StoreError> {
        subscriptions::active::<D>(self.conn(), tenant).await
    }

    async fn mark_events_relayed(
        &mut self,
        ids: &[EventId],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        events::mark_relayed::<D>(self.conn(), ids, now).await
    }

    async fn insert_relayed_event(
        &mut self,
        event: &Event,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        events::insert::<D>(self.conn(), event, Some(now)).await
    }

    async fn insert_delivery(&mut self, delivery: &Delivery) -> Result<(), StoreError> {
        deliveries::insert::<D>(self.conn(), delivery).await
    }

    async fn claim_deliveries(
        &mut self,
        owner: &str,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<ClaimedDelivery>, StoreError> {
        queue::claim::<D>(self.conn(), owner, now, lease_until, limit).await
    }

    async fn expired_leases(
        &mut self,
        now: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<ExpiredLease>, StoreError> {
        queue::expired_leases::<D>(self.conn(), now, limit).await
    }

    async fn finish_attempt(
        &mut self,
        tenant: &TenantId,
        id: &DeliveryId,
        owner: &str,
        attempt: &DeliveryAttempt,
        next: AttemptNext,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        deliveries::finish_attempt::<D>(self.conn(), tenant, id, owner, attempt, next, now).await
    }

    async fn purge_webhook_history(
        &mut self,
        before: OffsetDateTime,
        limit: u64,
    ) -> Result<u64, StoreError> {
        queue::purge_history::<D>(self.conn(), before, limit).await
    }
}

/// A count read from `column` of `row`, which SQL never makes negative.
fn count<D: Dialect>(c: &crate::Columns<'_, D>, column: &str) -> Result<u64, StoreError> {
    let n: i64 = c.get(column)?;
    Ok(u64::try_from(n).unwrap_or(0))
}
