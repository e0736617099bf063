//! Deletes a custom role that nobody holds, with its grants. Its audit entries and events stay.

use super::read::view_of;
use super::{RoleView, is_built_in, path_key, record_change};
use crate::audit::action;
use crate::revision::next_update_time;
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta};
use svc_domain::{EventType, Role, TenantId};
use svc_store::UpdateOutcome;

/// Deletes the custom role `key` of `tenant` and the permissions it holds, audited as
/// `role.deleted` (target: the key), with the event `admin.role.deleted` (no permissions). The
/// role is first moved to a new revision at the revision read (a compare-and-set), so a change
/// committed by someone else meanwhile fails the deletion rather than being deleted unseen.
///
/// Holders are counted after the role is deleted, in the same transaction, and the transaction
/// is dropped (rolled back) when there are any: on PostgreSQL the deleted row stays locked until
/// then, so an assignment that reads the role meanwhile waits for the outcome, and none can
/// slip in between the count and the deletion.
///
/// Errors: [`ManageError::NotFound`] when no role has this key; [`ManageError::Invalid`] naming
/// `key` for a built-in role; [`ManageError::PreconditionFailed`]; [`ManageError::Conflict`]
/// while a person, a membership or an application holds the role.
pub async fn delete(
    ctx: &ManageContext,
    tenant: &TenantId,
    issuer: &str,
    actor: &Actor,
    meta: &RequestMeta,
    key: &str,
    precondition: &Precondition,
) -> Result<RoleView, ManageError> {
    let key = path_key(key)?;
    if is_built_in(&key) {
        return Err(ManageError::invalid(
            "key",
            format!("{key} is a built-in role of every tenant; built-in roles cannot be deleted"),
        ));
    }
    let mut tx = ctx.store.write().await?;
    let role = tx.role(tenant, &key).await?.ok_or(ManageError::NotFound)?;
    precondition.check(role.updated_at)?;
    let mut view = view_of(tx.as_mut(), tenant, issuer, &key)
        .await?
        .ok_or(ManageError::NotFound)?;
    let moved = Role {
        updated_at: next_update_time(role.updated_at, ctx.now()),
        ..role.clone()
    };
    match tx.update_role_if_unchanged(&moved, role.updated_at).await? {
        UpdateOutcome::Applied => {}
        UpdateOutcome::Stale => return Err(ManageError::PreconditionFailed),
    }
    if !tx.delete_role(tenant, &key).await? {
        return Err(ManageError::NotFound);
    }
    let holders = tx.role_holders(tenant, &key).await?;
    if holders > 0 {
        // Dropping the transaction rolls the deletion back.
        return Err(ManageError::Conflict(format!(
            "the role {key} is held by {holders} {} (people, organization members or \
             applications); take it away from them first",
            if holders == 1 { "holder" } else { "holders" }
        )));
    }
    view.permissions.clear();
    view.updated_at = Some(moved.updated_at);
    record_change(
        tx.as_mut(),
        ctx,
        actor,
        meta,
        tenant,
        &view,
        (action::ROLE_DELETED, EventType::AdminRoleDeleted),
    )
    .await?;
    tx.commit().await?;
    Ok(view)
}
