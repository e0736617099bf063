//! Suspends and reactivates an organization. A suspended organization keeps its members and
//! data; nobody obtains tokens for it until it is reactivated.

use super::{load, next_revision, save};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta, events};
use svc_domain::{EventType, OrgStatus, Organization, OrganizationId, TenantId};

/// Suspends the organization `id` of `tenant`, audited as `organization.suspended`, with the
/// event `org.suspended`.
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::PreconditionFailed`] when `precondition`
/// does not hold or the organization changed meanwhile; [`ManageError::Conflict`] when it is
/// already suspended.
pub async fn suspend(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &OrganizationId,
    precondition: &Precondition,
) -> Result<Organization, ManageError> {
    change_status(
        ctx,
        tenant,
        actor,
        meta,
        id,
        precondition,
        OrgStatus::Suspended,
    )
    .await
}

/// Reactivates the suspended organization `id` of `tenant`, audited as
/// `organization.reactivated`, with the event `org.reactivated`.
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::PreconditionFailed`] when `precondition`
/// does not hold or the organization changed meanwhile; [`ManageError::Conflict`] unless it is
/// suspended.
pub async fn reactivate(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &OrganizationId,
    precondition: &Precondition,
) -> Result<Organization, ManageError> {
    change_status(
        ctx,
        tenant,
        actor,
        meta,
        id,
        precondition,
        OrgStatus::Active,
    )
    .await
}

/// Moves the organization to `to`, which must differ from its status.
async fn change_status(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &OrganizationId,
    precondition: &Precondition,
    to: OrgStatus,
) -> Result<Organization, ManageError> {
    let mut tx = ctx.store.write().await?;
    let mut org = load(tx.as_mut(), tenant, id, precondition).await?;
    if org.status == to {
        return Err(ManageError::Conflict(match to {
            OrgStatus::Suspended => "the organization is already suspended".to_owned(),
            OrgStatus::Active => "only a suspended organization can be reactivated".to_owned(),
        }));
    }
    let read = org.updated_at;
    org.status = to;
    org.updated_at = next_revision(read, ctx.now());
    save(tx.as_mut(), &org, read).await?;
    let (verb, event) = match to {
        OrgStatus::Suspended => (action::ORGANIZATION_SUSPENDED, EventType::OrgSuspended),
        OrgStatus::Active => (action::ORGANIZATION_REACTIVATED, EventType::OrgReactivated),
    };
    let entry = audit::entry(ctx, actor, meta, Some(tenant), verb, Some(id.as_str()));
    audit::record(tx.as_mut(), &entry).await?;
    events::organization_changed(tx.as_mut(), ctx, actor, &org, event).await?;
    tx.commit().await?;
    Ok(org)
}
