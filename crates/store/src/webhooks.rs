//! Ports of the event outbox and of webhook delivery: subscriptions, the events recorded by
//! state changes (written in the same transaction as the change), the deliveries fanned out to
//! subscriptions, and the lease-based claim the delivery workers share.
//!
//! The claim is a lease, never a row lock held across the HTTP call: a worker marks due
//! deliveries as its own until `lease_until` and commits, sends, then reports the outcome with
//! [`WebhookWrites::finish_attempt`], which only takes effect while the worker still holds the
//! lease for that attempt (a fence against a worker that outlived its lease).

use crate::{Order, StoreError};
use async_trait::async_trait;
use svc_domain::{
    Delivery, DeliveryAttempt, DeliveryId, DeliveryStatus, Event, EventId, EventType, Subscription,
    TenantId, WebhookId,
};
use time::OffsetDateTime;

/// Appends events to the outbox.
#[async_trait]
pub trait EventWrites {
    /// Records `event` (its envelope serialised once) to be fanned out to subscriptions.
    async fn insert_event(&mut self, event: &Event) -> Result<(), StoreError>;
}

/// An outbox event not yet fanned out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnrelayedEvent {
    /// The event.
    pub id: EventId,
    /// Whose subscriptions may want it.
    pub tenant_id: TenantId,
    /// Its type.
    pub event_type: EventType,
    /// When it happened.
    pub occurred_at: OffsetDateTime,
}

/// A recorded event with its envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// The event.
    pub id: EventId,
    /// Its type.
    pub event_type: EventType,
    /// When it happened.
    pub occurred_at: OffsetDateTime,
    /// The envelope, as delivered.
    pub body: String,
}

/// A delivery a worker now holds the lease of, with what it needs to send it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedDelivery {
    /// The delivery, `attempts` already counting the attempt about to be made.
    pub delivery: Delivery,
    /// The envelope, byte for byte as recorded.
    pub body: String,
    /// The subscription it goes to.
    pub subscription: Subscription,
}

/// A delivery whose worker let its lease run out without reporting (it stopped or hung).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiredLease {
    /// The delivery.
    pub delivery: Delivery,
    /// The worker that held it.
    pub owner: String,
    /// When that attempt started.
    pub leased_at: OffsetDateTime,
}

/// What a finished attempt leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttemptNext {
    /// The receiver accepted it.
    Succeeded,
    /// Try again at this time.
    RetryAt(OffsetDateTime),
    /// No more attempts.
    Exhausted,
}

/// Filters of a delivery listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeliveryFilter {
    /// Only deliveries in this state.
    pub status: Option<DeliveryStatus>,
}

/// Deployment-wide queue figures, for metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Events recorded but not fanned out yet.
    pub unrelayed_events: u64,
    /// Deliveries that are pending or failed (more attempts to come).
    pub open_deliveries: u64,
    /// Creation time of the oldest unrelayed event or open delivery.
    pub oldest_pending_at: Option<OffsetDateTime>,
}

/// Reads of subscriptions and delivery history.
#[async_trait]
pub trait WebhookReads {
    /// The subscription `id` of `tenant`.
    async fn webhook(
        &mut self,
        tenant: &TenantId,
        id: &WebhookId,
    ) -> Result<Option<Subscription>, StoreError>;

    /// Up to `limit` subscriptions of `tenant` in id `order`, past the cursor `after`.
    async fn list_webhooks(
        &mut self,
        tenant: &TenantId,
        after: Option<&WebhookId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<Subscription>, StoreError>;

    /// How many subscriptions `tenant` has.
    async fn count_webhooks(&mut self, tenant: &TenantId) -> Result<u64, StoreError>;

    /// The delivery `id` of subscription `webhook` of `tenant`.
    async fn delivery(
        &mut self,
        tenant: &TenantId,
        webhook: &WebhookId,
        id: &DeliveryId,
    ) -> Result<Option<Delivery>, StoreError>;

    /// Up to `limit` deliveries of `webhook` in id `order`, past the cursor `after`.
    async fn list_deliveries(
        &mut self,
        tenant: &TenantId,
        webhook: &WebhookId,
        filter: &DeliveryFilter,
        after: Option<&DeliveryId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<Delivery>, StoreError>;

    /// The attempts of delivery `id`, first to last.
    async fn delivery_attempts(
        &mut self,
        tenant: &TenantId,
        id: &DeliveryId,
    ) -> Result<Vec<DeliveryAttempt>, StoreError>;

    /// Queue figures across every tenant.
    async fn webhook_queue_stats(&mut self) -> Result<QueueStats, StoreError>;

    /// Up to `limit` recorded events of `tenant` in id (time) order after the cursor `after`,
    /// relayed or not, while they are kept.
    async fn events(
        &mut self,
        tenant: &TenantId,
        after: Option<&EventId>,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, StoreError>;
}

/// Writes of subscriptions, the fan-out and the delivery queue.
#[async_trait]
pub trait WebhookWrites {
    /// Creates a subscription.
    async fn insert_webhook(&mut self, webhook: &Subscription) -> Result<(), StoreError>;

    /// The subscription `id` of `tenant`, its row locked against other writers until this
    /// transaction ends, so concurrent read-modify-write changes of one subscription take turns
    /// (each reads what the previous one committed) instead of failing their conditional update.
    /// PostgreSQL: `SELECT … FOR NO KEY UPDATE` (deliveries referencing it can still be added);
    /// SQLite: the single writer already excludes every other.
    async fn webhook_for_update(
        &mut self,
        tenant: &TenantId,
        id: &WebhookId,
    ) -> Result<Option<Subscription>, StoreError>;

    /// Replaces every mutable field of a subscription, only while it is still at the revision
    /// the caller read: its stored `updated_at` equals `read_at`. `Ok(false)` (nothing written)
    /// when it changed since, so of two writers that read the same revision only the first
    /// commits, even under PostgreSQL's READ COMMITTED; [`StoreError::NotFound`] when absent.
    async fn update_webhook(
        &mut self,
        webhook: &Subscription,
        read_at: OffsetDateTime,
    ) -> Result<bool, StoreError>;

    /// Deletes a subscription and its deliveries, only while it is still at the revision the
    /// caller read (`updated_at` equals `read_at`); false (nothing deleted) when it is absent or
    /// changed since.
    async fn delete_webhook(
        &mut self,
        tenant: &TenantId,
        id: &WebhookId,
        read_at: OffsetDateTime,
    ) -> Result<bool, StoreError>;

    /// Up to `limit` events not yet fanned out, oldest first. On PostgreSQL the rows stay
    /// locked until this transaction ends and other relays skip them.
    async fn unrelayed_events(&mut self, limit: u32) -> Result<Vec<UnrelayedEvent>, StoreError>;

    /// The active subscriptions of `tenant`.
    async fn active_webhooks(&mut self, tenant: &TenantId)
    -> Result<Vec<Subscription>, StoreError>;

    /// Marks events fanned out.
    async fn mark_events_relayed(
        &mut self,
        ids: &[EventId],
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;

    /// Records an event that is delivered directly (a test delivery, a redelivery's original
    /// stays as it is), already counted as fanned out.
    async fn insert_relayed_event(
        &mut self,
        event: &Event,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;

    /// Adds a delivery.
    async fn insert_delivery(&mut self, delivery: &Delivery) -> Result<(), StoreError>;

    /// Leases up to `limit` due deliveries (pending or failed, `next_attempt_at <= now`, no
    /// live lease, subscription active) to `owner` until `lease_until`, counting the attempt.
    /// Concurrent claimers never receive the same delivery.
    async fn claim_deliveries(
        &mut self,
        owner: &str,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<ClaimedDelivery>, StoreError>;

    /// Up to `limit` deliveries whose lease ran out before `now` without a report.
    async fn expired_leases(
        &mut self,
        now: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<ExpiredLease>, StoreError>;

    /// Records attempt `attempt.number` of delivery `id` and applies `next`, only while
    /// `owner` holds the lease of exactly that attempt; false (nothing written) otherwise.
    async fn finish_attempt(
        &mut self,
        tenant: &TenantId,
        id: &DeliveryId,
        owner: &str,
        attempt: &DeliveryAttempt,
        next: AttemptNext,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError>;

    /// Deletes final deliveries (and their attempts) and fanned-out events that no open
    /// delivery needs, when older than `before`; returns how many rows (a delivery's attempts
    /// go with it, by the foreign key's cascade, and are not counted).
    ///
    /// At most `limit` rows of each kind per call, so a backlog is worked off over several
    /// calls, each in a transaction of its own (the janitor repeats while rows go).
    async fn purge_webhook_history(
        &mut self,
        before: OffsetDateTime,
        limit: u64,
    ) -> Result<u64, StoreError>;
}
