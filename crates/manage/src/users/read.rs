//! Reads one tenant user (removed users included: they stay as tombstones).

use crate::{ManageContext, ManageError};
use svc_domain::{TenantId, User, UserId};

/// The user `id` of `tenant`.
///
/// Errors: [`ManageError::NotFound`] when absent, including when `id` belongs to another tenant.
pub async fn get(ctx: &ManageContext, tenant: &TenantId, id: &UserId) -> Result<User, ManageError> {
    let mut tx = ctx.store.read().await?;
    let user = tx.user(tenant, id).await?;
    tx.finish().await?;
    user.ok_or(ManageError::NotFound)
}
