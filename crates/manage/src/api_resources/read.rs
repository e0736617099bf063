//! Reads one API resource of a tenant.

use crate::{ManageContext, ManageError};
use svc_domain::{ApiResource, ApiResourceId, TenantId};

/// The API resource `id` of `tenant`, with its permissions.
///
/// Errors: [`ManageError::NotFound`] when absent, including when `id` belongs to another tenant.
pub async fn get(
    ctx: &ManageContext,
    tenant: &TenantId,
    id: &ApiResourceId,
) -> Result<ApiResource, ManageError> {
    let mut tx = ctx.store.read().await?;
    let resource = tx.api_resource(tenant, id).await?;
    tx.finish().await?;
    resource.ok_or(ManageError::NotFound)
}
