//! The webhook and outbox ports on [`PgTx`]: each call forwards to [`crate::webhooks`] on the
//! transaction's connection.

use crate::tx::PgTx;
use crate::webhooks;
use async_trait::async_trait;
use svc_domain::{
    Delivery, DeliveryAttempt, DeliveryId, Event, EventId, Subscription, TenantId, WebhookId,
};
use svc_store::{
    AttemptNext, ClaimedDelivery, DeliveryFilter, EventWrites, ExpiredLease, QueueStats,
    StoreError, StoredEvent, UnrelayedEvent, WebhookReads, WebhookWrites,
};
use time::OffsetDateTime;

#[async_trait]
impl EventWrites for PgTx {
    async fn insert_event(&mut self, event: &Event) -> Result<(), StoreError> {
        webhooks::insert_event(&mut self.tx, event, None).await
    }
}

#[async_trait]
impl WebhookReads for PgTx {
    async fn webhook(
        &mut self,
        tenant: &TenantId,
        id: &WebhookId,
    ) -> Result<Option<Subscription>, StoreError> {
        webhooks::webhook(&mut self.tx, tenant, id).await
    }

    async fn list_webhooks(
        &mut self,
        tenant: &TenantId,
        after: Option<&WebhookId>,
        limit: u32,
    ) -> Result<Vec<Subscription>, StoreError> {
        webhooks::list_webhooks(&mut self.tx, tenant, after, limit).await
    }

    async fn count_webhooks(&mut self, tenant: &TenantId) -> Result<u64, StoreError> {
        webhooks::count_webhooks(&mut self.tx, tenant).await
    }

    async fn delivery(
        &mut self,
        tenant: &TenantId,
        webhook: &WebhookId,
        id: &DeliveryId,
    ) -> Result<Option<Delivery>, StoreError> {
        webhooks::delivery(&mut self.tx, tenant, webhook, id).await
    }

    async fn list_deliveries(
        &mut self,
        tenant: &TenantId,
        webhook: &WebhookId,
        filter: &DeliveryFilter,
        before: Option<&DeliveryId>,
        limit: u32,
    ) -> Result<Vec<Delivery>, StoreError> {
        webhooks::list_deliveries(&mut self.tx, tenant, webhook, filter, before, limit).await
    }

    async fn delivery_attempts(
        &mut self,
        tenant: &TenantId,
        id: &DeliveryId,
    ) -> Result<Vec<DeliveryAttempt>, StoreError> {
        webhooks::delivery_attempts(&mut self.tx, tenant, id).await
    }

    async fn webhook_queue_stats(&mut self) -> Result<QueueStats, StoreError> {
        webhooks::queue_stats(&mut self.tx).await
    }

    async fn events(
        &mut self,
        tenant: &TenantId,
        after: Option<&EventId>,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        webhooks::events(&mut self.tx, tenant, after, limit).await
    }
}

#[async_trait]
impl WebhookWrites for PgTx {
    async fn insert_webhook(&mut self, webhook: &Subscription) -> Result<(), StoreError> {
        webhooks::insert_webhook(&mut self.tx, webhook).await
    }

    async fn update_webhook(&mut self, webhook: &Subscription) -> Result<(), StoreError> {
        webhooks::update_webhook(&mut self.tx, webhook).await
    }

    async fn delete_webhook(
        &mut self,
        tenant: &TenantId,
        id: &WebhookId,
    ) -> Result<bool, StoreError> {
        webhooks::delete_webhook(&mut self.tx, tenant, id).await
    }

    async fn unrelayed_events(&mut self, limit: u32) -> Result<Vec<UnrelayedEvent>, StoreError> {
        webhooks::unrelayed_events(&mut self.tx, limit).await
    }

    async fn active_webhooks(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<Subscription>, StoreError> {
        webhooks::active_webhooks(&mut self.tx, tenant).await
    }

    async fn mark_events_relayed(
        &mut self,
        ids: &[EventId],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        webhooks::mark_events_relayed(&mut self.tx, ids, now).await
    }

    async fn insert_relayed_event(
        &mut self,
        event: &Event,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        webhooks::insert_event(&mut self.tx, event, Some(now)).await
    }

    async fn insert_delivery(&mut self, delivery: &Delivery) -> Result<(), StoreError> {
        webhooks::insert_delivery(&mut self.tx, delivery).await
    }

    async fn claim_deliveries(
        &mut self,
        owner: &str,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<ClaimedDelivery>, StoreError> {
        webhooks::claim(&mut self.tx, owner, now, lease_until, limit).await
    }

    async fn expired_leases(
        &mut self,
        now: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<ExpiredLease>, StoreError> {
        webhooks::expired_leases(&mut self.tx, now, limit).await
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
        webhooks::finish_attempt(&mut self.tx, tenant, id, owner, attempt, next, now).await
    }

    async fn purge_webhook_history(&mut self, before: OffsetDateTime) -> Result<u64, StoreError> {
        webhooks::purge_history(&mut self.tx, before).await
    }
}
