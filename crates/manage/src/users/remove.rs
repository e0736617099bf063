//! Removes a tenant user. The record stays as a tombstone (status `removed`) so its id is never
//! reused and the audit trail keeps pointing at something; its address is freed for a new user.
//! Its SCIM `userName` is freed too. Removal is final, ends the person's memberships of the tenant's organizations (each
//! recorded as `org.member.removed`) and takes away their tenant roles (recorded as
//! `tenant_user.roles_changed` when they held any).

use super::{ALL_LINKS, check_transition, end_access, invalidate_links, load, next_revision, save};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta, events};
use std::collections::BTreeSet;
use svc_domain::{EventType, TenantId, User, UserId, UserStatus};
use svc_store::WriteTx;

/// Removes the user `id` of `tenant`, audited as `tenant_user.removed`: sessions, refresh-token
/// families, outstanding mailed links, organization memberships and tenant roles end in the same
/// transaction.
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::PreconditionFailed`] when `precondition`
/// does not hold or the user changed meanwhile; [`ManageError::Conflict`] when already removed.
pub async fn remove(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &UserId,
    precondition: &Precondition,
) -> Result<User, ManageError> {
    let mut tx = ctx.store.write().await?;
    let user = remove_in(tx.as_mut(), ctx, tenant, actor, meta, id, precondition).await?;
    tx.commit().await?;
    Ok(user)
}

/// [`remove`] within `tx` (committed by the caller): shared by the management API and SCIM
/// provisioning, so both follow one rule set.
pub(crate) async fn remove_in(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &UserId,
    precondition: &Precondition,
) -> Result<User, ManageError> {
    let mut user = load(tx, tenant, id, precondition).await?;
    check_transition(&user, UserStatus::Removed)?;
    let now = ctx.now();
    let read = user.updated_at;
    user.status = UserStatus::Removed;
    user.updated_at = next_revision(read, now);
    save(tx, &user, read).await?;
    end_access(tx, &user, now, "user_removed").await?;
    invalidate_links(tx, &user, &ALL_LINKS, now).await?;
    // The userName a directory gave them is freed with the address.
    tx.delete_scim_profile(tenant, id).await?;
    for membership in tx.memberships_of_user(tenant, id).await? {
        tx.delete_membership(tenant, &membership.organization_id, id)
            .await?;
        events::member_changed(
            tx,
            ctx,
            actor,
            EventType::OrgMemberRemoved,
            &membership,
            &BTreeSet::new(),
            Some(&membership.roles),
        )
        .await?;
    }
    let roles = tx.user_roles(tenant, id).await?;
    tx.set_user_roles(tenant, id, &BTreeSet::new(), now).await?;
    if !roles.is_empty() {
        let data = super::roles::changed(id, &BTreeSet::new(), &roles, actor);
        events::record(tx, ctx, tenant, EventType::TenantUserRolesChanged, data).await?;
    }
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::TENANT_USER_REMOVED,
        Some(id.as_str()),
    );
    audit::record(tx, &entry).await?;
    events::user_changed(tx, ctx, actor, &user, EventType::TenantUserRemoved).await?;
    Ok(user)
}
