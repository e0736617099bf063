//! Suspends a tenant: every surface of the tenant answers 403 until it is reactivated. Its
//! records are kept.

use super::update_tenant::next_revision;
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use svc_domain::{Tenant, TenantId, TenantStatus};

/// Suspends the tenant `id`, audited as `tenant.suspended`. Suspending a suspended tenant
/// writes nothing and returns it as it is.
///
/// Errors: [`ManageError::NotFound`] when the tenant does not exist.
pub async fn suspend_tenant(
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    id: &TenantId,
) -> Result<Tenant, ManageError> {
    change_status(ctx, actor, meta, id, TenantStatus::Suspended).await
}

/// Moves the tenant to `status` and audits the transition; a no-op when it is already there.
/// The tenant is read locked and the write is conditional on the revision read, so a concurrent
/// edit is never overwritten.
pub(super) async fn change_status(
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    id: &TenantId,
    status: TenantStatus,
) -> Result<Tenant, ManageError> {
    let mut tx = ctx.store.write().await?;
    let mut tenant = tx
        .tenant_for_update(id)
        .await?
        .ok_or(ManageError::NotFound)?;
    if tenant.status == status {
        return Ok(tenant);
    }
    let read_at = tenant.updated_at;
    tenant.status = status;
    tenant.updated_at = next_revision(ctx.now(), read_at);
    if !tx.update_tenant(&tenant, read_at).await? {
        return Err(ManageError::PreconditionFailed);
    }
    let action = match status {
        TenantStatus::Suspended => action::TENANT_SUSPENDED,
        TenantStatus::Active => action::TENANT_REACTIVATED,
    };
    let entry = audit::entry(ctx, actor, meta, Some(id), action, Some(id.as_str()));
    audit::record(tx.as_mut(), &entry).await?;
    tx.commit().await?;
    ctx.changes.tenant_changed(id);
    Ok(tenant)
}
