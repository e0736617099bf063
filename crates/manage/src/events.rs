//! Outbox events of the management use cases: each is recorded in the same transaction as the
//! change it describes (and beside its audit entry), so a receiver never hears of a change that
//! rolled back and never misses one that committed.

use crate::{ManageContext, ManageError};
use svc_domain::{Event, EventData, EventType, TenantId};
use svc_store::WriteTx;

/// Appends an event of `event_type` for `tenant` within `tx`.
pub(crate) async fn record(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    tenant: &TenantId,
    event_type: EventType,
    data: EventData,
) -> Result<(), ManageError> {
    let event = Event::new(
        ctx.clock.as_ref(),
        ctx.rng.as_ref(),
        tenant,
        event_type,
        data,
    );
    tx.insert_event(&event).await?;
    Ok(())
}

/// A `tenant_user.*` or `admin.user.created` event about `user` after a change by `actor`.
pub(crate) async fn user_changed(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    actor: &crate::Actor,
    user: &svc_domain::User,
    event_type: EventType,
) -> Result<(), ManageError> {
    let data = EventData::TenantUser {
        user_id: user.id.clone(),
        email: user.email.as_str().to_owned(),
        status: user.status.as_str().to_owned(),
        actor: actor.as_audit_string(),
    };
    record(tx, ctx, &user.tenant_id, event_type, data).await
}

/// An `admin.application.*` event about `app` after a change by `actor`.
pub(crate) async fn application_changed(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    actor: &crate::Actor,
    app: &svc_domain::Application,
    event_type: EventType,
) -> Result<(), ManageError> {
    let data = EventData::Application {
        client_id: app.id.clone(),
        name: app.name.clone(),
        actor: actor.as_audit_string(),
    };
    record(tx, ctx, &app.tenant_id, event_type, data).await
}
