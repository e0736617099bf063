//! Suspends and reactivates a tenant user. Suspension ends the user's sessions and
//! refresh-token families in the same transaction, so nothing they were granted outlives it;
//! reactivation grants nothing back (the person signs in again).
//!
//! Reactivation never makes an account `active` that nobody can sign in to: a user with a
//! password becomes `active`, one without (suspended before they ever chose one) goes back to
//! `pre_provisioned`, claimable through a password reset like any provisioned account.

use super::{check_transition, end_access, load, next_revision, save};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta, events};
use svc_domain::{EventType, TenantId, User, UserId, UserStatus};
use svc_store::WriteTx;

/// Suspends the user `id` of `tenant`, audited as `tenant_user.suspended`.
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::PreconditionFailed`] when `precondition`
/// does not hold or the user changed meanwhile; [`ManageError::Conflict`] when the user is
/// already suspended or removed.
pub async fn suspend(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &UserId,
    precondition: &Precondition,
) -> Result<User, ManageError> {
    let mut tx = ctx.store.write().await?;
    let user = suspend_in(tx.as_mut(), ctx, tenant, actor, meta, id, precondition).await?;
    tx.commit().await?;
    Ok(user)
}

/// [`suspend`] within `tx` (committed by the caller): shared by the management API and SCIM
/// provisioning, so both follow one rule set.
pub(crate) async fn suspend_in(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &UserId,
    precondition: &Precondition,
) -> Result<User, ManageError> {
    let mut user = load(tx, tenant, id, precondition).await?;
    check_transition(&user, UserStatus::Suspended)?;
    let now = ctx.now();
    let read = user.updated_at;
    user.status = UserStatus::Suspended;
    user.updated_at = next_revision(read, now);
    save(tx, &user, read).await?;
    end_access(tx, &user, now, "user_suspended").await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::TENANT_USER_SUSPENDED,
        Some(id.as_str()),
    );
    audit::record(tx, &entry).await?;
    events::user_changed(tx, ctx, actor, &user, EventType::TenantUserSuspended).await?;
    Ok(user)
}

/// Reactivates the suspended user `id` of `tenant`, audited as `tenant_user.reactivated`:
/// `active` with a password, `pre_provisioned` without one (see the module documentation).
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::PreconditionFailed`] when `precondition`
/// does not hold or the user changed meanwhile; [`ManageError::Conflict`] unless the user is
/// suspended (a removed user never comes back).
pub async fn reactivate(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &UserId,
    precondition: &Precondition,
) -> Result<User, ManageError> {
    let mut tx = ctx.store.write().await?;
    let user = reactivate_in(tx.as_mut(), ctx, tenant, actor, meta, id, precondition).await?;
    tx.commit().await?;
    Ok(user)
}

/// [`reactivate`] within `tx` (committed by the caller): shared by the management API and SCIM
/// provisioning, so both follow one rule set.
pub(crate) async fn reactivate_in(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &UserId,
    precondition: &Precondition,
) -> Result<User, ManageError> {
    let mut user = load(tx, tenant, id, precondition).await?;
    if user.status != UserStatus::Suspended {
        return Err(ManageError::Conflict(format!(
            "only a suspended user can be reactivated; this user is {}",
            user.status.as_str()
        )));
    }
    let back_to = reactivated_status(&user);
    check_transition(&user, back_to)?;
    let read = user.updated_at;
    user.status = back_to;
    user.updated_at = next_revision(read, ctx.now());
    save(tx, &user, read).await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::TENANT_USER_REACTIVATED,
        Some(id.as_str()),
    );
    audit::record(tx, &entry).await?;
    events::user_changed(tx, ctx, actor, &user, EventType::TenantUserReactivated).await?;
    Ok(user)
}

/// Rule: where a suspended user returns to; `active` needs a password to sign in with.
fn reactivated_status(user: &User) -> UserStatus {
    if user.password_hash.is_some() {
        UserStatus::Active
    } else {
        UserStatus::PreProvisioned
    }
}
