//! Reading, changing, deleting a subscription, and rotating its secret.

use super::input::{
    RotateSecret, WebhookPatch, check_description, check_event_types, check_overlap, check_secret,
    check_url,
};
use super::{CreatedWebhookView, WebhookRules, WebhookView};
use crate::audit::{self, action};
use crate::page::split_page;
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta, clamp_limit, events};
use svc_domain::{EventData, EventType, Subscription, TenantId, WebhookId, WebhookSecret};
use svc_store::{Order, WriteTx};
use time::{Duration, OffsetDateTime};

/// The subscription `id` of `tenant`.
///
/// Errors: [`ManageError::NotFound`] when absent or another tenant's.
pub async fn get(
    ctx: &ManageContext,
    tenant: &TenantId,
    id: &WebhookId,
) -> Result<WebhookView, ManageError> {
    let mut tx = ctx.store.read().await?;
    let webhook = tx.webhook(tenant, id).await?.ok_or(ManageError::NotFound)?;
    tx.finish().await?;
    Ok(WebhookView::at(&webhook, ctx.now()))
}

/// A page of `tenant`'s subscriptions in creation `order` (default oldest first) past the
/// cursor `after`, and the next cursor.
pub async fn list(
    ctx: &ManageContext,
    tenant: &TenantId,
    after: Option<&WebhookId>,
    order: Option<Order>,
    limit: Option<u32>,
) -> Result<(Vec<WebhookView>, Option<WebhookId>), ManageError> {
    let limit = clamp_limit(limit);
    let mut tx = ctx.store.read().await?;
    let rows = tx
        .list_webhooks(tenant, after, order.unwrap_or(Order::Ascending), limit + 1)
        .await?;
    tx.finish().await?;
    let (page, next) = split_page(rows, limit, |w| w.id.clone());
    let now = ctx.now();
    Ok((page.iter().map(|w| WebhookView::at(w, now)).collect(), next))
}

/// Changes the fields `patch` carries, if the subscription satisfies `precondition`
/// (`If-Match`): audited as `webhook.updated`, announced as `admin.webhook.updated`. Switching a
/// subscription on clears the reason a 410 left. The subscription is read locked, so concurrent
/// changes take turns (each applies to what the previous one committed), and the write is
/// conditional on the revision read: a concurrent change is never overwritten.
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::Invalid`] as for creation, or for an
/// empty patch; [`ManageError::PreconditionFailed`] when the subscription is not at a revision
/// the precondition names, or changed while this update ran.
#[allow(clippy::too_many_arguments)] // one per input of the use case
pub async fn update(
    ctx: &ManageContext,
    rules: &WebhookRules,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &WebhookId,
    patch: WebhookPatch,
    precondition: &Precondition,
) -> Result<WebhookView, ManageError> {
    if patch.url.is_none()
        && patch.event_types.is_none()
        && patch.description.is_none()
        && patch.active.is_none()
    {
        return Err(ManageError::invalid(
            "body",
            "send at least one of url, event_types, description, active \
             (the secret changes with POST /api/v1/webhooks/{id}/rotate-secret)",
        ));
    }
    let url = patch
        .url
        .as_deref()
        .map(|u| check_url(u, rules))
        .transpose()?;
    let event_types = patch
        .event_types
        .as_deref()
        .map(check_event_types)
        .transpose()?;
    let description = patch
        .description
        .as_ref()
        .map(|d| check_description(d.as_deref()))
        .transpose()?;
    let now = ctx.now();
    let mut tx = ctx.store.write().await?;
    let mut webhook = tx
        .webhook_for_update(tenant, id)
        .await?
        .ok_or(ManageError::NotFound)?;
    precondition.check(webhook.updated_at)?;
    let read_at = webhook.updated_at;
    if let Some(url) = url {
        webhook.url = url;
    }
    if let Some(types) = event_types {
        webhook.event_types = types;
    }
    if let Some(description) = description {
        webhook.description = description;
    }
    if let Some(active) = patch.active {
        if active {
            webhook.disabled_reason = None;
        }
        webhook.active = active;
    }
    webhook.updated_at = next_revision(now, read_at);
    if !tx.update_webhook(&webhook, read_at).await? {
        return Err(ManageError::PreconditionFailed);
    }
    changed(
        tx.as_mut(),
        ctx,
        actor,
        meta,
        &webhook,
        action::WEBHOOK_UPDATED,
        EventType::AdminWebhookUpdated,
    )
    .await?;
    tx.commit().await?;
    Ok(WebhookView::at(&webhook, now))
}

/// Deletes the subscription and its delivery history, if it satisfies `precondition`
/// (`If-Match`): audited as `webhook.deleted`, announced as `admin.webhook.deleted` (to the
/// tenant's other subscriptions). The subscription is read locked and the delete is conditional
/// on the revision read.
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::PreconditionFailed`] when the subscription
/// is not at a revision the precondition names, or changed while this ran.
pub async fn delete(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &WebhookId,
    precondition: &Precondition,
) -> Result<(), ManageError> {
    let mut tx = ctx.store.write().await?;
    let webhook = tx
        .webhook_for_update(tenant, id)
        .await?
        .ok_or(ManageError::NotFound)?;
    precondition.check(webhook.updated_at)?;
    if !tx.delete_webhook(tenant, id, webhook.updated_at).await? {
        // Deleted or changed by a concurrent request since it was read.
        return Err(match tx.webhook(tenant, id).await? {
            Some(_) => ManageError::PreconditionFailed,
            None => ManageError::NotFound,
        });
    }
    changed(
        tx.as_mut(),
        ctx,
        actor,
        meta,
        &webhook,
        action::WEBHOOK_DELETED,
        EventType::AdminWebhookDeleted,
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Replaces the signing secret, if the subscription satisfies `precondition` (`If-Match`). The
/// old one keeps signing beside the new one for `overlap_secs` (both signatures are sent), so
/// receivers can switch without losing deliveries. Audited as `webhook.secret_rotated`,
/// announced as `admin.webhook.secret_rotated`.
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::Invalid`] for a weak secret or an overlap
/// over a week; [`ManageError::PreconditionFailed`] as for [`update`].
pub async fn rotate_secret(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &WebhookId,
    input: RotateSecret,
    precondition: &Precondition,
) -> Result<CreatedWebhookView, ManageError> {
    let overlap = check_overlap(input.overlap_secs)?;
    let (secret, generated) = match input.secret.as_deref() {
        Some(raw) => (check_secret(raw)?, false),
        None => (WebhookSecret::generate(ctx.rng.as_ref()), true),
    };
    let now = ctx.now();
    let mut tx = ctx.store.write().await?;
    let mut webhook = tx
        .webhook_for_update(tenant, id)
        .await?
        .ok_or(ManageError::NotFound)?;
    precondition.check(webhook.updated_at)?;
    let read_at = webhook.updated_at;
    if secret == webhook.secret {
        return Err(ManageError::invalid(
            "secret",
            "the new secret must differ from the current one",
        ));
    }
    let old = std::mem::replace(&mut webhook.secret, secret);
    webhook.previous_secret =
        (overlap > 0).then(|| (old, now + Duration::seconds(i64::from(overlap))));
    webhook.updated_at = next_revision(now, read_at);
    if !tx.update_webhook(&webhook, read_at).await? {
        return Err(ManageError::PreconditionFailed);
    }
    changed(
        tx.as_mut(),
        ctx,
        actor,
        meta,
        &webhook,
        action::WEBHOOK_SECRET_ROTATED,
        EventType::AdminWebhookSecretRotated,
    )
    .await?;
    tx.commit().await?;
    Ok(CreatedWebhookView {
        webhook: WebhookView::at(&webhook, now),
        secret: generated.then(|| webhook.secret.expose().to_owned()),
    })
}

/// The `updated_at` of a change made at `now` to a subscription read at `read_at`: strictly
/// later, so every change is a new revision even when clocks disagree or stand still.
fn next_revision(now: OffsetDateTime, read_at: OffsetDateTime) -> OffsetDateTime {
    now.max(read_at + Duration::microseconds(1))
}

/// The audit entry and the `admin.webhook.*` event of a change.
async fn changed(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    webhook: &Subscription,
    audited: &str,
    event_type: EventType,
) -> Result<(), ManageError> {
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(&webhook.tenant_id),
        audited,
        Some(webhook.id.as_str()),
    );
    audit::record(tx, &entry).await?;
    events::record(
        tx,
        ctx,
        &webhook.tenant_id,
        event_type,
        EventData::Webhook {
            webhook_id: webhook.id.clone(),
            url: webhook.url.to_string(),
            actor: actor.as_audit_string(),
        },
    )
    .await
}
