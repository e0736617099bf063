//! Replaces the roles a member holds.

use super::{ROLES_CHANGED, load, record_audit};
use crate::organizations::input::{MemberPatch, check_roles, custom_roles_refused};
use crate::organizations::next_revision;
use crate::{Actor, ManageContext, ManageError, Reach, RequestMeta, events};
use svc_domain::{EventType, Membership, OrganizationId, TenantId, UserId};

/// Gives the member `user` of the organization `org` of `tenant` the roles of `patch`, audited
/// as `organization.member_roles_changed` (target: the organization), with the event
/// `org.member.role_changed` carrying the previous roles. The same roles again write nothing.
///
/// Errors: [`ManageError::Invalid`] naming `roles` (one that is neither a built-in nor a custom
/// organization role of the tenant); [`ManageError::NotFound`] when the person is
/// not a member or the organization is absent. Beyond the `reach` of the caller ([`Reach`]
/// rules 1–3): [`ManageError::NotFound`] for another organization, [`ManageError::Forbidden`]
/// for an `admin` giving `owner` or changing an owner's roles.
pub async fn change_member_roles(
    ctx: &ManageContext,
    tenant: &TenantId,
    (actor, meta): (&Actor, &RequestMeta),
    reach: &Reach,
    org: &OrganizationId,
    user: &UserId,
    patch: MemberPatch,
) -> Result<Membership, ManageError> {
    let roles = check_roles(&patch.roles)?;
    reach.within(Some(org))?;
    reach.may_grant(&roles)?;
    let mut tx = ctx.store.write().await?;
    let before = load(tx.as_mut(), tenant, org, user).await?;
    reach.may_change(&before.roles)?;
    custom_roles_refused(tx.as_mut(), tenant, &roles).await?;
    if before.roles == roles {
        return Ok(before);
    }
    let after = Membership {
        roles,
        updated_at: next_revision(before.updated_at, ctx.now()),
        ..before.clone()
    };
    if !tx
        .update_membership_roles(tenant, org, user, &after.roles, after.updated_at)
        .await?
    {
        return Err(ManageError::NotFound);
    }
    record_audit(tx.as_mut(), ctx, actor, meta, &after, ROLES_CHANGED).await?;
    events::member_changed(
        tx.as_mut(),
        ctx,
        actor,
        EventType::OrgMemberRoleChanged,
        &after,
        &after.roles,
        Some(&before.roles),
    )
    .await?;
    tx.commit().await?;
    Ok(after)
}
