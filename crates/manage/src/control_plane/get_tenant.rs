//! Reads one tenant.

use crate::{ManageContext, ManageError};
use svc_domain::{Tenant, TenantId};

/// The tenant `id`.
///
/// Errors: [`ManageError::NotFound`] when absent.
pub async fn get_tenant(ctx: &ManageContext, id: &TenantId) -> Result<Tenant, ManageError> {
    let mut tx = ctx.store.read().await?;
    let tenant = tx.tenant_by_id(id).await?;
    tx.finish().await?;
    tenant.ok_or(ManageError::NotFound)
}
