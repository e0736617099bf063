//! Reads one application of a tenant.

use crate::{ManageContext, ManageError};
use svc_domain::{Application, ClientId, TenantId};

/// The application `id` of `tenant`.
///
/// Errors: [`ManageError::NotFound`] when absent, including when `id` belongs to another tenant.
pub async fn get(
    ctx: &ManageContext,
    tenant: &TenantId,
    id: &ClientId,
) -> Result<Application, ManageError> {
    let mut tx = ctx.store.read().await?;
    let app = tx.application(tenant, id).await?;
    tx.finish().await?;
    app.ok_or(ManageError::NotFound)
}
