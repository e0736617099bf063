//! Reads one organization of a tenant.

use crate::{ManageContext, ManageError};
use svc_domain::{Organization, OrganizationId, TenantId};

/// The organization `id` of `tenant`, in any status.
///
/// Errors: [`ManageError::NotFound`] when absent, including when `id` belongs to another tenant.
pub async fn get(
    ctx: &ManageContext,
    tenant: &TenantId,
    id: &OrganizationId,
) -> Result<Organization, ManageError> {
    let mut tx = ctx.store.read().await?;
    let org = tx.organization(tenant, id).await?;
    tx.finish().await?;
    org.ok_or(ManageError::NotFound)
}
