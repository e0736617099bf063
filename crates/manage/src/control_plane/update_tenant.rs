//! Changes a tenant's display name. The slug is the tenant's host and issuer, so it never
//! changes; status changes are their own use cases (suspend, reactivate).

use super::rules::check_display_name;
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use serde::Deserialize;
use svc_domain::{Tenant, TenantId};

/// The fields of a tenant an operator may change; absent fields stay as they are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TenantPatch {
    /// New display name, 1 to 200 characters.
    #[serde(default)]
    pub display_name: Option<String>,
    /// Whether people may create their own account on the hosted sign-up page.
    #[serde(default)]
    pub signup_enabled: Option<bool>,
}

/// Applies `patch` to the tenant `id`, audited as `tenant.updated`. A patch that changes
/// nothing writes nothing and returns the tenant as it is.
///
/// Errors: [`ManageError::Invalid`] for a bad display name; [`ManageError::NotFound`] when
/// the tenant does not exist.
pub async fn update_tenant(
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    id: &TenantId,
    patch: TenantPatch,
) -> Result<Tenant, ManageError> {
    let display_name = patch
        .display_name
        .as_deref()
        .map(check_display_name)
        .transpose()?;
    let mut tx = ctx.store.write().await?;
    let mut tenant = tx.tenant_by_id(id).await?.ok_or(ManageError::NotFound)?;
    let mut changed = false;
    if let Some(name) = display_name
        && name != tenant.display_name
    {
        tenant.display_name = name;
        changed = true;
    }
    if let Some(signup) = patch.signup_enabled
        && signup != tenant.signup_enabled
    {
        tenant.signup_enabled = signup;
        changed = true;
    }
    if !changed {
        return Ok(tenant);
    }
    tenant.updated_at = ctx.now();
    tx.update_tenant(&tenant).await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(id),
        action::TENANT_UPDATED,
        Some(id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    tx.commit().await?;
    ctx.changes.tenant_changed(id);
    Ok(tenant)
}
