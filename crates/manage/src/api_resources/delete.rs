//! Deletes an API resource with its permissions; every role's grants of them go with it. Its
//! audit entries and events stay.

use super::{load, save};
use crate::audit::{self, action};
use crate::revision::next_update_time;
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta, events};
use svc_domain::{ApiResource, ApiResourceId, EventType, TenantId};

/// Deletes the API resource `id` of `tenant`, its permissions and every role's grants of them,
/// audited as `api_resource.deleted`, with the event `admin.api_resource.deleted`. The resource
/// is first moved to a new revision at the revision read (a compare-and-set), so a change
/// committed by someone else meanwhile fails the deletion rather than being deleted unseen.
/// Returns the resource as deleted: without permissions, since they went with it.
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::PreconditionFailed`] when `precondition`
/// does not hold or the resource changed meanwhile.
pub async fn delete(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &ApiResourceId,
    precondition: &Precondition,
) -> Result<ApiResource, ManageError> {
    let mut tx = ctx.store.write().await?;
    let mut resource = load(tx.as_mut(), tenant, id, precondition).await?;
    let read = resource.updated_at;
    resource.updated_at = next_update_time(read, ctx.now());
    save(tx.as_mut(), &resource, read).await?;
    if !tx.delete_api_resource(tenant, id).await? {
        return Err(ManageError::NotFound);
    }
    resource.permissions.clear();
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::API_RESOURCE_DELETED,
        Some(id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    events::api_resource_changed(
        tx.as_mut(),
        ctx,
        actor,
        &resource,
        EventType::AdminApiResourceDeleted,
    )
    .await?;
    tx.commit().await?;
    Ok(resource)
}
