//! Test deliveries, the delivery history, and redelivery by hand.

use super::DeliveryView;
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use svc_domain::{
    Delivery, DeliveryId, DeliveryStatus, Event, EventData, EventType, Subscription, TenantId,
    WebhookId,
};
use svc_store::{DeliveryFilter, Order, WriteTx};

/// Page size of the history when the caller asks for none, and the largest.
const DEFAULT_HISTORY_PAGE: u32 = 20;
const MAX_HISTORY_PAGE: u32 = 100;

/// Queues a `webhook.test` delivery to the subscription `id`, due now, whatever event types it
/// names: audited as `webhook.test_sent`.
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::Conflict`] while the subscription is
/// switched off (nothing would be sent).
pub async fn send_test(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &WebhookId,
) -> Result<DeliveryView, ManageError> {
    let now = ctx.now();
    let mut tx = ctx.store.write().await?;
    let webhook = active_webhook(tx.as_mut(), tenant, id).await?;
    let delivery_id = DeliveryId::generate(ctx.clock.as_ref(), ctx.rng.as_ref());
    let event = Event::new(
        ctx.clock.as_ref(),
        ctx.rng.as_ref(),
        tenant,
        EventType::WebhookTest,
        EventData::WebhookTest {
            webhook_id: webhook.id.clone(),
            delivery_id: delivery_id.clone(),
            message: "This is a test delivery from svc. Verify its signature, then answer 2xx."
                .into(),
        },
    );
    tx.insert_relayed_event(&event, now).await?;
    let delivery = new_delivery(
        ctx,
        delivery_id,
        &webhook,
        &event.id,
        EventType::WebhookTest,
        None,
    );
    tx.insert_delivery(&delivery).await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::WEBHOOK_TEST_SENT,
        Some(delivery.id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    tx.commit().await?;
    Ok(DeliveryView::new(&delivery, &[]))
}

/// A page of the subscription's deliveries in creation `order` (default newest first), past the
/// cursor `after` in that order, each with its attempts, and the next cursor.
///
/// Errors: [`ManageError::NotFound`] when the subscription is absent.
pub async fn list_deliveries(
    ctx: &ManageContext,
    tenant: &TenantId,
    id: &WebhookId,
    filter: &DeliveryFilter,
    after: Option<&DeliveryId>,
    order: Option<Order>,
    limit: Option<u32>,
) -> Result<(Vec<DeliveryView>, Option<DeliveryId>), ManageError> {
    let limit = limit
        .unwrap_or(DEFAULT_HISTORY_PAGE)
        .clamp(1, MAX_HISTORY_PAGE);
    let mut tx = ctx.store.read().await?;
    tx.webhook(tenant, id).await?.ok_or(ManageError::NotFound)?;
    let mut rows = tx
        .list_deliveries(
            tenant,
            id,
            filter,
            after,
            order.unwrap_or(Order::Descending),
            limit + 1,
        )
        .await?;
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let mut views = Vec::with_capacity(rows.len());
    for delivery in &rows {
        let attempts = tx.delivery_attempts(tenant, &delivery.id).await?;
        views.push(DeliveryView::new(delivery, &attempts));
    }
    tx.finish().await?;
    let next = if more {
        rows.last().map(|d| d.id.clone())
    } else {
        None
    };
    Ok((views, next))
}

/// One delivery of the subscription with its attempts.
///
/// Errors: [`ManageError::NotFound`].
pub async fn delivery(
    ctx: &ManageContext,
    tenant: &TenantId,
    id: &WebhookId,
    delivery: &DeliveryId,
) -> Result<DeliveryView, ManageError> {
    let mut tx = ctx.store.read().await?;
    let found = tx
        .delivery(tenant, id, delivery)
        .await?
        .ok_or(ManageError::NotFound)?;
    let attempts = tx.delivery_attempts(tenant, delivery).await?;
    tx.finish().await?;
    Ok(DeliveryView::new(&found, &attempts))
}

/// Queues the event of delivery `delivery` again as a new delivery (with its own id and
/// `redelivery_of` naming the original), due now: audited as `webhook.redelivered`.
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::Conflict`] while the subscription is
/// switched off, or while the original still has attempts to come.
pub async fn redeliver(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &WebhookId,
    delivery: &DeliveryId,
) -> Result<DeliveryView, ManageError> {
    let mut tx = ctx.store.write().await?;
    let original = tx
        .delivery(tenant, id, delivery)
        .await?
        .ok_or(ManageError::NotFound)?;
    let webhook = active_webhook(tx.as_mut(), tenant, id).await?;
    if !original.status.is_final() {
        return Err(ManageError::Conflict(format!(
            "delivery {} is still {}; redeliver it once it has succeeded or is exhausted",
            original.id,
            original.status.as_str()
        )));
    }
    let again = new_delivery(
        ctx,
        DeliveryId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        &webhook,
        &original.event_id,
        original.event_type,
        Some(original.id.clone()),
    );
    tx.insert_delivery(&again).await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::WEBHOOK_REDELIVERED,
        Some(again.id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    tx.commit().await?;
    Ok(DeliveryView::new(&again, &[]))
}

async fn active_webhook(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    id: &WebhookId,
) -> Result<Subscription, ManageError> {
    let webhook = tx.webhook(tenant, id).await?.ok_or(ManageError::NotFound)?;
    if !webhook.active {
        return Err(ManageError::Conflict(
            "this subscription is switched off; set \"active\": true first".to_owned(),
        ));
    }
    Ok(webhook)
}

fn new_delivery(
    ctx: &ManageContext,
    id: DeliveryId,
    webhook: &Subscription,
    event: &svc_domain::EventId,
    event_type: EventType,
    redelivery_of: Option<DeliveryId>,
) -> Delivery {
    let now = ctx.now();
    Delivery {
        id,
        tenant_id: webhook.tenant_id.clone(),
        webhook_id: webhook.id.clone(),
        event_id: event.clone(),
        event_type,
        status: DeliveryStatus::Pending,
        attempts: 0,
        next_attempt_at: Some(now),
        last_status_code: None,
        last_error: None,
        redelivery_of,
        created_at: now,
        updated_at: now,
    }
}
