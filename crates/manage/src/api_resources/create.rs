//! Registers an API resource: its identifier unique in the tenant, its permissions checked and
//! sorted, within the tenant's cap.

use super::input::{
    MAX_API_RESOURCES_PER_TENANT, NewApiResource, check_identifier, check_name, check_permissions,
};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta, events};
use svc_domain::{ApiResource, ApiResourceId, EventType, TenantId};
use svc_store::{Order, StoreError};

/// The unique key the store names when the identifier is taken.
const IDENTIFIER_KEY: &str = "api_resources_tenant_identifier_key";

/// Registers the API resource described by `input` in `tenant`, audited as
/// `api_resource.created`, with the event `admin.api_resource.created`.
///
/// Errors: [`ManageError::Invalid`] naming the field (`identifier`, `name`, `permissions`);
/// [`ManageError::Conflict`] when the identifier is taken in the tenant, or the tenant already
/// has [`MAX_API_RESOURCES_PER_TENANT`] API resources; [`ManageError::NotFound`] when the tenant
/// does not exist.
pub async fn create(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    input: NewApiResource,
) -> Result<ApiResource, ManageError> {
    let identifier = check_identifier(&input.identifier)?;
    let name = check_name(&input.name)?;
    let permissions = check_permissions(input.permissions.as_deref().unwrap_or_default())?;
    let now = ctx.now();
    let resource = ApiResource {
        id: ApiResourceId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        tenant_id: tenant.clone(),
        identifier,
        name,
        permissions,
        created_at: now,
        updated_at: now,
    };

    let mut tx = ctx.store.write().await?;
    if tx.tenant_by_id(tenant).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    // The listing stops at the cap, so counting reads no more than the cap's worth whatever
    // the tenant holds.
    let cap = u32::try_from(MAX_API_RESOURCES_PER_TENANT).unwrap_or(u32::MAX);
    let held = tx
        .list_api_resources(tenant, None, Order::Ascending, cap)
        .await?
        .len();
    if held >= MAX_API_RESOURCES_PER_TENANT {
        return Err(ManageError::Conflict(format!(
            "this tenant already has {MAX_API_RESOURCES_PER_TENANT} API resources, the most one \
             tenant may; delete one first"
        )));
    }
    match tx.insert_api_resource(&resource).await {
        Ok(()) => {}
        Err(StoreError::Conflict { constraint }) if constraint == IDENTIFIER_KEY => {
            return Err(ManageError::Conflict(
                "an API resource with this identifier already exists in this tenant".to_owned(),
            ));
        }
        Err(e) => return Err(e.into()),
    }
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::API_RESOURCE_CREATED,
        Some(resource.id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    events::api_resource_changed(
        tx.as_mut(),
        ctx,
        actor,
        &resource,
        EventType::AdminApiResourceCreated,
    )
    .await?;
    tx.commit().await?;
    Ok(resource)
}
