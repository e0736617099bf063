//! Creates a subscription.

use super::input::{NewWebhook, check_description, check_event_types, check_secret, check_url};
use super::{CreatedWebhookView, WebhookRules, WebhookView};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta, events};
use svc_domain::{EventData, EventType, Subscription, TenantId, WebhookId, WebhookSecret};

/// Creates the subscription described by `input` for `tenant`: audited as `webhook.created`,
/// announced as `admin.webhook.created`. A generated secret is returned in the view, once.
///
/// Errors: [`ManageError::Invalid`] naming the field (URL against the deployment's target
/// policy, unknown event types with the catalog, a secret with less than 32 bytes of entropy
/// and why); [`ManageError::Conflict`] when the tenant has its maximum of subscriptions.
pub async fn create(
    ctx: &ManageContext,
    rules: &WebhookRules,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    input: NewWebhook,
) -> Result<CreatedWebhookView, ManageError> {
    let url = check_url(&input.url, rules)?;
    let event_types = check_event_types(&input.event_types)?;
    let description = check_description(input.description.as_deref())?;
    let (secret, generated) = match input.secret.as_deref() {
        Some(raw) => (check_secret(raw)?, false),
        None => (WebhookSecret::generate(ctx.rng.as_ref()), true),
    };
    let now = ctx.now();
    let webhook = Subscription {
        id: WebhookId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        tenant_id: tenant.clone(),
        url,
        event_types,
        description,
        active: input.active.unwrap_or(true),
        secret,
        previous_secret: None,
        disabled_reason: None,
        created_at: now,
        updated_at: now,
    };

    let mut tx = ctx.store.write().await?;
    if tx.count_webhooks(tenant).await? >= rules.max_per_tenant {
        return Err(ManageError::Conflict(format!(
            "this tenant already has {} webhook subscriptions, the most allowed \
             (webhooks.max_subscriptions_per_tenant); delete one first",
            rules.max_per_tenant
        )));
    }
    tx.insert_webhook(&webhook).await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::WEBHOOK_CREATED,
        Some(webhook.id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    events::record(
        tx.as_mut(),
        ctx,
        tenant,
        EventType::AdminWebhookCreated,
        EventData::Webhook {
            webhook_id: webhook.id.clone(),
            url: webhook.url.to_string(),
            actor: actor.as_audit_string(),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(CreatedWebhookView {
        webhook: WebhookView::at(&webhook, now),
        secret: generated.then(|| webhook.secret.expose().to_owned()),
    })
}
