//! The webhook and outbox ports of [`FaultyTx`], delegated, with injectable failures on the
//! writes the management use cases make.

use crate::support::FaultyTx;
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
impl EventWrites for FaultyTx {
    async fn insert_event(&mut self, event: &Event) -> Result<(), StoreError> {
        self.check("insert_event")?;
        self.inner.insert_event(event).await
    }
}

#[async_trait]
impl WebhookReads for FaultyTx {
    async fn webhook(
        &mut self,
        tenant: &TenantId,
        id: &WebhookId,
    ) -> Result<Option<Subscription>, StoreError> {
        self.inner.webhook(tenant, id).await
    }

    async fn list_webhooks(
        &mut self,
        tenant: &TenantId,
        after: Option<&WebhookId>,
        order: svc_store::Order,
        limit: u32,
    ) -> Result<Vec<Subscription>, StoreError> {
        self.inner.list_webhooks(tenant, after, order, limit).await
    }

    async fn count_webhooks(&mut self, tenant: &TenantId) -> Result<u64, StoreError> {
        self.inner.count_webhooks(tenant).await
    }

    async fn delivery(
        &mut self,
        tenant: &TenantId,
        webhook: &WebhookId,
        id: &DeliveryId,
    ) -> Result<Option<Delivery>, StoreError> {
        self.inner.delivery(tenant, webhook, id).await
    }

    async fn list_deliveries(
        &mut self,
        tenant: &TenantId,
        webhook: &WebhookId,
        filter: &DeliveryFilter,
        before: Option<&DeliveryId>,
        order: svc_store::Order,
        limit: u32,
    ) -> Result<Vec<Delivery>, StoreError> {
        self.inner
            .list_deliveries(tenant, webhook, filter, before, order, limit)
            .await
    }

    async fn delivery_attempts(
        &mut self,
        tenant: &TenantId,
        id: &DeliveryId,
    ) -> Result<Vec<DeliveryAttempt>, StoreError> {
        self.inner.delivery_attempts(tenant, id).await
    }

    async fn webhook_queue_stats(&mut self) -> Result<QueueStats, StoreError> {
        self.inner.webhook_queue_stats().await
    }

    async fn events(
        &mut self,
        tenant: &TenantId,
        after: Option<&EventId>,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        self.inner.events(tenant, after, limit).await
    }
}

#[async_trait]
impl WebhookWrites for FaultyTx {
    async fn insert_webhook(&mut self, webhook: &Subscription) -> Result<(), StoreError> {
        self.check("insert_webhook")?;
        self.inner.insert_webhook(webhook).await
    }

    async fn webhook_for_update(
        &mut self,
        tenant: &TenantId,
        id: &WebhookId,
    ) -> Result<Option<Subscription>, StoreError> {
        self.inner.webhook_for_update(tenant, id).await
    }

    async fn update_webhook(
        &mut self,
        webhook: &Subscription,
        read_at: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        self.check("update_webhook")?;
        self.inner.update_webhook(webhook, read_at).await
    }

    async fn delete_webhook(
        &mut self,
        tenant: &TenantId,
        id: &WebhookId,
        read_at: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        self.check("delete_webhook")?;
        self.inner.delete_webhook(tenant, id, read_at).await
    }

    async fn unrelayed_events(&mut self, limit: u32) -> Result<Vec<UnrelayedEvent>, StoreError> {
        self.inner.unrelayed_events(limit).await
    }

    async fn active_webhooks(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<Subscription>, StoreError> {
        self.inner.active_webhooks(tenant).await
    }

    async fn mark_events_relayed(
        &mut self,
        ids: &[EventId],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.inner.mark_events_relayed(ids, now).await
    }

    async fn insert_relayed_event(
        &mut self,
        event: &Event,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.check("insert_relayed_event")?;
        self.inner.insert_relayed_event(event, now).await
    }

    async fn insert_delivery(&mut self, delivery: &Delivery) -> Result<(), StoreError> {
        self.check("insert_delivery")?;
        self.inner.insert_delivery(delivery).await
    }

    async fn claim_deliveries(
        &mut self,
        owner: &str,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<ClaimedDelivery>, StoreError> {
        self.inner
            .claim_deliveries(owner, now, lease_until, limit)
            .await
    }

    async fn expired_leases(
        &mut self,
        now: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<ExpiredLease>, StoreError> {
        self.inner.expired_leases(now, limit).await
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
        self.inner
            .finish_attempt(tenant, id, owner, attempt, next, now)
            .await
    }

    async fn purge_webhook_history(
        &mut self,
        before: OffsetDateTime,
        limit: u64,
    ) -> Result<u64, StoreError> {
        self.inner.purge_webhook_history(before, limit).await
    }
}
