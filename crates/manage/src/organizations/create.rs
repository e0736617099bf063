//! Creates an organization: `active`, with its slug unique in the tenant.

use super::input::{NewOrganization, check_metadata, check_name, check_slug};
use super::{SLUG_KEY, SLUG_TAKEN};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta, events};
use svc_domain::{EventType, OrgStatus, Organization, OrganizationId, TenantId};
use svc_store::StoreError;

/// Creates the organization described by `input` in `tenant`, audited as
/// `organization.created`, with the event `org.created`.
///
/// Errors: [`ManageError::Invalid`] naming the field (`name`, `slug`, `metadata`);
/// [`ManageError::Conflict`] when the slug is taken; [`ManageError::NotFound`] when the tenant
/// does not exist.
pub async fn create(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    input: NewOrganization,
) -> Result<Organization, ManageError> {
    let name = check_name(&input.name)?;
    let slug = check_slug(&input.slug)?;
    let metadata = check_metadata(input.metadata.unwrap_or_default())?;
    let now = ctx.now();
    let org = Organization {
        id: OrganizationId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        tenant_id: tenant.clone(),
        slug,
        name,
        metadata,
        status: OrgStatus::Active,
        created_at: now,
        updated_at: now,
    };

    let mut tx = ctx.store.write().await?;
    if tx.tenant_by_id(tenant).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    match tx.insert_organization(&org).await {
        Ok(()) => {}
        Err(StoreError::Conflict { constraint }) if constraint == SLUG_KEY => {
            return Err(ManageError::Conflict(SLUG_TAKEN.into()));
        }
        Err(e) => return Err(e.into()),
    }
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::ORGANIZATION_CREATED,
        Some(org.id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    events::organization_changed(tx.as_mut(), ctx, actor, &org, EventType::OrgCreated).await?;
    tx.commit().await?;
    Ok(org)
}
