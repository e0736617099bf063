//! A tenant's API resources (issue 17 item 1): the APIs it protects, each with the permissions
//! it defines. Create, list, read, change and delete; every use case is scoped by the tenant, so
//! another tenant's resource reads as absent, and every write appends its audit entry and its
//! outbox event (`admin.api_resource.*`) in the same transaction as the change.
//!
//! An API resource's `identifier` is the audience of the tokens issued for it, so it is unique in
//! the tenant and never changes once created (tokens already issued name it). Its permissions
//! are replaced as a whole on update; a permission that leaves its resource (or goes with a
//! deleted resource) leaves every role holding it in the same statement (the store's cascade),
//! so a role never holds a permission that no longer exists.
//!
//! Every change (update, delete) takes a [`Precondition`] (`If-Match`), checked against the
//! resource as read in the write transaction, and writes only at the revision it read
//! ([`svc_store::AccessWrites::update_api_resource_if_unchanged`]): a resource that changed in
//! between is [`ManageError::PreconditionFailed`], never a lost update.

mod create;
mod delete;
mod input;
mod list;
mod read;
mod update;
mod view;

pub use create::create;
pub use delete::delete;
pub use input::{
    ApiResourcePatch, MAX_API_RESOURCE_NAME_CHARS, MAX_API_RESOURCES_PER_TENANT, NewApiResource,
    NewPermission,
};
pub use list::list;
pub use read::get;
pub use update::update;
pub use view::{ApiResourceView, PermissionView};

use crate::{ManageError, Precondition};
use svc_domain::{ApiResource, ApiResourceId, TenantId};
use svc_store::{StoreError, UpdateOutcome, WriteTx};
use time::OffsetDateTime;

/// The API resource `id` of `tenant`, or [`ManageError::NotFound`], if it satisfies
/// `precondition` ([`ManageError::PreconditionFailed`] otherwise).
async fn load(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    id: &ApiResourceId,
    precondition: &Precondition,
) -> Result<ApiResource, ManageError> {
    let resource = tx
        .api_resource(tenant, id)
        .await?
        .ok_or(ManageError::NotFound)?;
    precondition.check(resource.updated_at)?;
    Ok(resource)
}

/// Writes `resource` over the revision `read`: [`ManageError::PreconditionFailed`] when it
/// changed since, [`ManageError::NotFound`] when it is gone.
async fn save(
    tx: &mut dyn WriteTx,
    resource: &ApiResource,
    read: OffsetDateTime,
) -> Result<(), ManageError> {
    match tx.update_api_resource_if_unchanged(resource, read).await {
        Ok(UpdateOutcome::Applied) => Ok(()),
        Ok(UpdateOutcome::Stale) => Err(ManageError::PreconditionFailed),
        Err(StoreError::NotFound) => Err(ManageError::NotFound),
        Err(e) => Err(e.into()),
    }
}
