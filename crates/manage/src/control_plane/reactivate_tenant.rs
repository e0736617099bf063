//! Reactivates a suspended tenant: its hosts serve traffic again.

use super::suspend_tenant::change_status;
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use svc_domain::{Tenant, TenantId, TenantStatus};

/// Reactivates the tenant `id`, audited as `tenant.reactivated`. Reactivating an active tenant
/// writes nothing and returns it as it is.
///
/// Errors: [`ManageError::NotFound`] when the tenant does not exist.
pub async fn reactivate_tenant(
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    id: &TenantId,
) -> Result<Tenant, ManageError> {
    change_status(ctx, actor, meta, id, TenantStatus::Active).await
}
