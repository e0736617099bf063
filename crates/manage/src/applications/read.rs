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

/// The RAR detail types (RFC 9396) the applications of `tenant` registered, sorted, once each:
/// what discovery advertises as `authorization_details_types_supported`.
pub async fn detail_types(
    ctx: &ManageContext,
    tenant: &TenantId,
) -> Result<Vec<String>, ManageError> {
    let mut tx = ctx.store.read().await?;
    let types = tx.application_detail_types(tenant).await?;
    tx.finish().await?;
    Ok(types)
}
