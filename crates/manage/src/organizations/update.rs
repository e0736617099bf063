//! Changes an organization, PATCH-style: only the fields present change; `metadata` replaces the
//! whole object.

use super::input::{OrganizationPatch, check_metadata, check_name, check_slug};
use super::{load, next_revision, save};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta, events};
use serde_json::Map;
use svc_domain::{EventType, Organization, OrganizationId, TenantId};

/// Applies `patch` to the organization `id` of `tenant`, audited as `organization.updated`, with
/// the event `org.updated`. A patch that changes nothing writes nothing and returns the
/// organization as it is.
///
/// Errors: [`ManageError::Invalid`] naming the field (`name` and `slug` cannot be removed with
/// `null`); [`ManageError::NotFound`]; [`ManageError::PreconditionFailed`] when `precondition`
/// does not hold or the organization changed meanwhile; [`ManageError::Conflict`] when the new
/// slug is taken.
#[allow(clippy::too_many_arguments)] // the request's facts, each distinct
pub async fn update(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &OrganizationId,
    patch: OrganizationPatch,
    precondition: &Precondition,
) -> Result<Organization, ManageError> {
    let name = match patch.name {
        None => None,
        Some(None) => return Err(required("name")),
        Some(Some(raw)) => Some(check_name(&raw)?),
    };
    let slug = match patch.slug {
        None => None,
        Some(None) => return Err(required("slug")),
        Some(Some(raw)) => Some(check_slug(&raw)?),
    };
    let metadata = patch
        .metadata
        .map(|m| check_metadata(m.unwrap_or_else(Map::new)))
        .transpose()?;

    let mut tx = ctx.store.write().await?;
    let before = load(tx.as_mut(), tenant, id, precondition).await?;
    let mut org = before.clone();
    if let Some(name) = name {
        org.name = name;
    }
    if let Some(slug) = slug {
        org.slug = slug;
    }
    if let Some(metadata) = metadata {
        org.metadata = metadata;
    }
    if org == before {
        return Ok(before);
    }
    org.updated_at = next_revision(before.updated_at, ctx.now());
    save(tx.as_mut(), &org, before.updated_at).await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::ORGANIZATION_UPDATED,
        Some(id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    events::organization_changed(tx.as_mut(), ctx, actor, &org, EventType::OrgUpdated).await?;
    tx.commit().await?;
    Ok(org)
}

fn required(field: &str) -> ManageError {
    ManageError::invalid(
        field,
        format!("an organization always has a {field}; send a new one or leave {field} out"),
    )
}
