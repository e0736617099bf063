//! Removes a person from an organization.

use super::{REMOVED, load, record_audit};
use crate::{Actor, ManageContext, ManageError, Reach, RequestMeta, events};
use std::collections::BTreeSet;
use svc_domain::{EventType, Membership, OrganizationId, TenantId, UserId};

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
    if !tx.delete_membership(tenant, org, user).await? {
        return Err(ManageError::NotFound);
    }
    record_audit(tx.as_mut(), ctx, actor, meta, &membership, REMOVED).await?;
    events::member_changed(
        tx.as_mut(),
        ctx,
        actor,
        EventType::OrgMemberRemoved,
        &membership,
        &BTreeSet::new(),
        Some(&membership.roles),
    )
    .await?;
    tx.commit().await?;
    Ok(membership)
}
