//! Deletes an application of a tenant. The management application cannot be deleted: without
//! it the tenant could lose every way to manage itself.

use super::store_update;
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta, events};
use svc_domain::EventType;
use svc_domain::{ClientId, TenantId};

/// Deletes the application `id` of `tenant`, audited as `application.deleted`, if it satisfies
/// `precondition` (`If-Match`).
///
/// Errors: [`ManageError::NotFound`] when absent (or another tenant's);
/// [`ManageError::PreconditionFailed`] when it is not at a revision `precondition` names, or
/// changed while this ran; [`ManageError::Forbidden`] for the management application. Nothing
/// is written on error.
pub async fn delete(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &ClientId,
    precondition: &Precondition,
) -> Result<(), ManageError> {
    let mut tx = ctx.store.write().await?;
    let app = tx
        .application(tenant, id)
        .await?
        .ok_or(ManageError::NotFound)?;
    precondition.check(app.updated_at)?;
    if app.is_management {
        return Err(ManageError::Forbidden(
            "the management application cannot be deleted".to_owned(),
        ));
    }
    if matches!(precondition, Precondition::OneOf(_)) {
        // The delete must hit the revision just checked: rewriting the row unchanged, on
        // condition that it still is that revision, takes its row lock until commit (PostgreSQL
        // READ COMMITTED would otherwise let a concurrent update commit in between).
        store_update(tx.as_mut(), &app, app.updated_at).await?;
    }
    tx.delete_application(tenant, id).await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::APPLICATION_DELETED,
        Some(id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    events::application_changed(
        tx.as_mut(),
        ctx,
        actor,
        &app,
        EventType::AdminApplicationDeleted,
    )
    .await?;
    tx.commit().await?;
    ctx.changes.application_changed(tenant, id);
    Ok(())
}
