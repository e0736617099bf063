//! Changes a tenant's display name, sign-up switch and second-factor policy. The slug is the tenant's host and issuer,
//! so it never changes; status changes are their own use cases (suspend, reactivate).

use super::rules::{check_display_name, check_mfa_policy};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta};
use serde::Deserialize;
use svc_domain::{MfaPolicy, Tenant, TenantId};
use time::{Duration, OffsetDateTime};

/// The fields of a tenant an operator may change; absent fields stay as they are. Unknown
/// fields are refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"display_name": "Acme Corporation", "signup_enabled": true}))]
pub struct TenantPatch {
    /// New display name, 1 to 200 characters after trimming, no control characters.
    #[serde(default)]
    #[schema(example = "Acme Corporation", min_length = 1, max_length = 200)]
    pub display_name: Option<String>,
    /// Whether people may create their own account on the hosted sign-up page.
    #[serde(default)]
    pub signup_enabled: Option<bool>,
    /// The tenant's second-factor policy. See [`crate::MfaPolicyView`].
    #[serde(default)]
    #[schema(value_type = Option<crate::MfaPolicyView>)]
    pub mfa_policy: Option<MfaPolicy>,
}

/// Applies `patch` to the tenant `id` if it satisfies `precondition` (`If-Match`), audited as
/// `tenant.updated`. A patch that changes nothing writes nothing and returns the tenant as it
/// is. The tenant is read locked, so concurrent changes take turns (each applies to what the
/// previous one committed), and the write is conditional on the revision read: a concurrent
/// change (a suspension, an edit by another operator) is never overwritten.
///
/// Errors: [`ManageError::Invalid`] for a bad display name or a second-factor policy the
/// deployment cannot meet; [`ManageError::NotFound`] when
/// the tenant does not exist; [`ManageError::PreconditionFailed`] when it is not at a revision
/// the precondition names, or changed while this update ran.
pub async fn update_tenant(
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    id: &TenantId,
    patch: TenantPatch,
    precondition: &Precondition,
) -> Result<Tenant, ManageError> {
    let display_name = patch
        .display_name
        .as_deref()
        .map(check_display_name)
        .transpose()?;
    let mfa_policy = patch
        .mfa_policy
        .map(|p| check_mfa_policy(p, ctx.second_factors))
        .transpose()?;
    let mut tx = ctx.store.write().await?;
    let mut tenant = tx
        .tenant_for_update(id)
        .await?
        .ok_or(ManageError::NotFound)?;
    precondition.check(tenant.updated_at)?;
    let read_at = tenant.updated_at;
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
    if let Some(policy) = mfa_policy
        && policy != tenant.mfa_policy
    {
        tenant.mfa_policy = policy;
        changed = true;
    }
    if !changed {
        return Ok(tenant);
    }
    tenant.updated_at = next_revision(ctx.now(), read_at);
    if !tx.update_tenant(&tenant, read_at).await? {
        return Err(ManageError::PreconditionFailed);
    }
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

/// The `updated_at` of a change made at `now` to a tenant read at `read_at`: strictly later, so
/// every change is a new revision even when clocks disagree or stand still.
pub(super) fn next_revision(now: OffsetDateTime, read_at: OffsetDateTime) -> OffsetDateTime {
    now.max(read_at + Duration::microseconds(1))
}
