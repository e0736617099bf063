//! Adds a person to an organization.

use super::{ADDED, MAX_MEMBERSHIPS_PER_USER, record_audit};
use crate::organizations::input::{
    NewMember, check_roles, check_user_id, custom_roles_refused, member_id_refused,
};
use crate::{Actor, ManageContext, ManageError, Reach, RequestMeta, events};
use svc_domain::{EventType, Membership, ORG_MEMBER, OrganizationId, TenantId, UserStatus};
use svc_store::{StoreError, WriteTx};

/// The constraint the store names when the person is already a member.
const MEMBER_KEY: &str = "organization_members_pkey";

/// Adds the user `input.user_id` to the organization `org` of `tenant` with `input.roles`
/// (default `member`), audited as `organization.member_added` (target: the organization), with
/// the event `org.member.added`.
///
/// Errors: [`ManageError::NotFound`] when the organization is absent;
/// [`ManageError::Invalid`] naming `user_id` when it is not a user of this tenant that is not
/// removed (the same answer for a malformed id, an unknown one or another tenant's), or `roles`
/// (one that is neither a built-in nor a custom organization role of the tenant);
/// [`ManageError::Conflict`] when the person is already a member, or already belongs to
/// [`MAX_MEMBERSHIPS_PER_USER`] organizations. Beyond the `reach` of the caller
/// ([`Reach`] rules 1–2): [`ManageError::NotFound`] for another organization,
/// [`ManageError::Forbidden`] for an `admin` giving `owner`.
pub async fn add_member(
    ctx: &ManageContext,
    tenant: &TenantId,
    (actor, meta): (&Actor, &RequestMeta),
    reach: &Reach,
    org: &OrganizationId,
    input: NewMember,
) -> Result<Membership, ManageError> {
    let user_id = check_user_id(&input.user_id)?;
    let roles = match input.roles.as_deref() {
        Some(raw) => check_roles(raw)?,
        None => check_roles(&[ORG_MEMBER.to_owned()])?,
    };
    reach.within(Some(org))?;
    reach.may_grant(&roles)?;

    let mut tx = ctx.store.write().await?;
    if tx.organization(tenant, org).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    match tx.user(tenant, &user_id).await? {
        Some(user) if user.status != UserStatus::Removed => {}
        _ => return Err(member_id_refused()),
    }
    if tx.membership(tenant, org, &user_id).await?.is_some() {
        return Err(already_a_member());
    }
    custom_roles_refused(tx.as_mut(), tenant, &roles).await?;
    let held = tx.memberships_of_user(tenant, &user_id).await?.len();
    if held >= MAX_MEMBERSHIPS_PER_USER {
        return Err(ManageError::Conflict(format!(
            "this person already belongs to {MAX_MEMBERSHIPS_PER_USER} organizations, the most \
             one person may"
        )));
    }
    let now = ctx.now();
    let membership = Membership {
        tenant_id: tenant.clone(),
        organization_id: org.clone(),
        user_id,
        roles,
        created_at: now,
        updated_at: now,
    };
    insert_in(tx.as_mut(), ctx, (actor, meta), &membership).await?;
    tx.commit().await?;
    Ok(membership)
}

/// Stores `membership` within `tx` with its audit entry and `org.member.added` event: the
/// recording shared by this use case and SCIM provisioning (an organization's directory
/// creating a person makes them a member).
pub(crate) async fn insert_in(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    (actor, meta): (&Actor, &RequestMeta),
    membership: &Membership,
) -> Result<(), ManageError> {
    match tx.insert_membership(membership).await {
        Ok(()) => {}
        Err(StoreError::Conflict { constraint }) if constraint == MEMBER_KEY => {
            return Err(already_a_member());
        }
        Err(e) => return Err(e.into()),
    }
    record_audit(tx, ctx, actor, meta, membership, ADDED).await?;
    events::member_changed(
        tx,
        ctx,
        actor,
        EventType::OrgMemberAdded,
        membership,
        &membership.roles,
        None,
    )
    .await?;
    Ok(())
}

fn already_a_member() -> ManageError {
    ManageError::Conflict("this person is already a member of the organization".to_owned())
}
