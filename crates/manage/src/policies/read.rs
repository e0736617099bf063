//! Reads a tenant's policies: one, or all of them (a tenant holds few; no paging).

use crate::{ManageContext, ManageError};
use svc_domain::{AccessPolicy, PolicyId, TenantId};

/// The policy `id` of `tenant`.
///
/// Errors: [`ManageError::NotFound`] when absent, including when `id` belongs to another tenant.
pub async fn get(
    ctx: &ManageContext,
    tenant: &TenantId,
    id: &PolicyId,
) -> Result<AccessPolicy, ManageError> {
    let mut tx = ctx.store.read().await?;
    let policy = tx.access_policy(tenant, id).await?;
    tx.finish().await?;
    policy.ok_or(ManageError::NotFound)
}

/// Every policy of `tenant`, enabled or not, oldest first.
pub async fn list(
    ctx: &ManageContext,
    tenant: &TenantId,
) -> Result<Vec<AccessPolicy>, ManageError> {
    let mut tx = ctx.store.read().await?;
    let policies = tx.access_policies(tenant).await?;
    tx.finish().await?;
    Ok(policies)
}
