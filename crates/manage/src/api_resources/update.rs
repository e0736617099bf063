//! Changes an API resource, PATCH-style: only the fields present change; `permissions` replaces
//! the whole list, and the identifier never changes.

use super::input::{ApiResourcePatch, check_name, check_permissions};
use super::{load, save};
use crate::audit::{self, action};
use crate::revision::next_update_time;
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta, events};
use svc_domain::{ApiResource, ApiResourceId, EventType, TenantId};

/// Applies `patch` to the API resource `id` of `tenant`, audited as `api_resource.updated`, with
/// the event `admin.api_resource.updated`. A permission left out of a new list is removed from
/// every role holding it, in the same transaction. A patch that changes nothing writes nothing
/// and returns the resource as it is.
///
/// Errors: [`ManageError::Invalid`] naming the field (`name` and `permissions` cannot be removed
/// with `null`; `identifier` may only repeat the stored one); [`ManageError::NotFound`];
/// [`ManageError::PreconditionFailed`] when `precondition` does not hold or the resource changed
/// meanwhile.
#[allow(clippy::too_many_arguments)] // the request's facts, each distinct
pub async fn update(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &ApiResourceId,
    patch: ApiResourcePatch,
    precondition: &Precondition,
) -> Result<ApiResource, ManageError> {
    let name = match patch.name {
        None => None,
        Some(None) => return Err(required("name", "a name")),
        Some(Some(raw)) => Some(check_name(&raw)?),
    };
    let permissions = match patch.permissions {
        None => None,
        Some(None) => {
            return Err(required(
                "permissions",
                "a list of permissions (`[]` for none)",
            ));
        }
        Some(Some(raw)) => Some(check_permissions(&raw)?),
    };
    let identifier = match patch.identifier {
        None => None,
        Some(None) => return Err(immutable()),
        Some(Some(raw)) => Some(raw),
    };

    let mut tx = ctx.store.write().await?;
    let before = load(tx.as_mut(), tenant, id, precondition).await?;
    if identifier.is_some_and(|sent| sent != before.identifier) {
        return Err(immutable());
    }
    let mut resource = before.clone();
    if let Some(name) = name {
        resource.name = name;
    }
    if let Some(permissions) = permissions {
        resource.permissions = permissions;
    }
    if resource == before {
        return Ok(before);
    }
    resource.updated_at = next_update_time(before.updated_at, ctx.now());
    save(tx.as_mut(), &resource, before.updated_at).await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::API_RESOURCE_UPDATED,
        Some(id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    events::api_resource_changed(
        tx.as_mut(),
        ctx,
        actor,
        &resource,
        EventType::AdminApiResourceUpdated,
    )
    .await?;
    tx.commit().await?;
    Ok(resource)
}

fn required(field: &str, what: &str) -> ManageError {
    ManageError::invalid(
        field,
        format!("an API resource always has {what}; send a new one or leave {field} out"),
    )
}

/// Tokens already issued name the identifier as their audience, so it stays what it was.
fn immutable() -> ManageError {
    ManageError::invalid(
        "identifier",
        "identifier cannot be changed once an API resource is created; leave it out (or send \
         the current one), or create a new API resource",
    )
}
