//! Deletes an organization with its memberships. Its audit entries and events stay.

use super::{load, next_revision, save};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta, events};
use svc_domain::{EventType, Organization, OrganizationId, TenantId};

/// Deletes the organization `id` of `tenant` and its memberships, audited as
/// `organization.deleted`, with the event `org.deleted`. The organization is first moved to a
/// new revision at the revision read (a compare-and-set), so a change committed by someone else
/// meanwhile fails the deletion rather than being deleted unseen.
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::PreconditionFailed`] when `precondition`
/// does not hold or the organization changed meanwhile.
pub async fn delete(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &OrganizationId,
    precondition: &Precondition,
) -> Result<Organization, ManageError> {
    let mut tx = ctx.store.write().await?;
    let mut org = load(tx.as_mut(), tenant, id, precondition).await?;
    let read = org.updated_at;
    org.updated_at = next_revision(read, ctx.now());
    save(tx.as_mut(), &org, read).await?;
    if !tx.delete_organization(tenant, id).await? {
        return Err(ManageError::NotFound);
    }
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::ORGANIZATION_DELETED,
        Some(id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    events::organization_changed(tx.as_mut(), ctx, actor, &org, EventType::OrgDeleted).await?;
    tx.commit().await?;
    Ok(org)
}
