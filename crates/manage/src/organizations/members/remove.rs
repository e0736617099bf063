//! Removes a person from an organization.

use super::{REMOVED, load, record_audit};
use crate::{Actor, ManageContext, ManageError, Reach, RequestMeta, events};
use std::collections::BTreeSet;
use svc_domain::{EventType, Membership, OrganizationId, TenantId, UserId};
use svc_store::WriteTx;

/// Ends the membership of `user` in the organization `org` of `tenant`, audited as
/// `organization.member_removed` (target: the organization), with the event
/// `org.member.removed` (no roles now, the previous ones). Returns the membership as it was.
///
/// Errors: [`ManageError::NotFound`] when the person is not a member or the organization is
/// absent. Beyond the `reach` of the caller ([`Reach`] rules 1 and 3):
/// [`ManageError::NotFound`] for another organization, [`ManageError::Forbidden`] for an
/// `admin` removing an owner.
pub async fn remove_member(
    ctx: &ManageContext,
    tenant: &TenantId,
    (actor, meta): (&Actor, &RequestMeta),
    reach: &Reach,
    org: &OrganizationId,
    user: &UserId,
) -> Result<Membership, ManageError> {
    reach.within(Some(org))?;
    let mut tx = ctx.store.write().await?;
    let membership = load(tx.as_mut(), tenant, org, user).await?;
    reach.may_change(&membership.roles)?;
    remove_in(tx.as_mut(), ctx, (actor, meta), &membership).await?;
    tx.commit().await?;
    Ok(membership)
}

/// Deletes `membership` within `tx` with its audit entry and `org.member.removed` event: the
/// recording shared by this use case and SCIM (an organization's directory letting go of a
/// person other organizations still have).
pub(crate) async fn remove_in(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    (actor, meta): (&Actor, &RequestMeta),
    membership: &Membership,
) -> Result<(), ManageError> {
    let (tenant, org, user) = (
        &membership.tenant_id,
        &membership.organization_id,
        &membership.user_id,
    );
    if !tx.delete_membership(tenant, org, user).await? {
        return Err(ManageError::NotFound);
    }
    record_audit(tx, ctx, actor, meta, membership, REMOVED).await?;
    events::member_changed(
        tx,
        ctx,
        actor,
        EventType::OrgMemberRemoved,
        membership,
        &BTreeSet::new(),
        Some(&membership.roles),
    )
    .await?;
    Ok(())
}
