//! Deletes a tenant and everything it owns (applications, keys, ...). Its audit entries stay,
//! including the one recording the deletion.

use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use svc_domain::TenantId;

/// Deletes the tenant `id`, audited as `tenant.deleted`.
///
/// Errors: [`ManageError::NotFound`] when the tenant does not exist.
pub async fn delete_tenant(
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    id: &TenantId,
) -> Result<(), ManageError> {
    let mut tx = ctx.store.write().await?;
    tx.delete_tenant(id).await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(id),
        action::TENANT_DELETED,
        Some(id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    tx.commit().await?;
    ctx.changes.tenant_changed(id);
    Ok(())
}
