//! Changes a role, PATCH-style: a custom role's description and permissions; only the
//! permissions of the built-in organization roles; nothing of `tenant_admin`.

use super::input::{RolePatch, check_description, check_permissions};
use super::permissions::{held, replace, resolve};
use super::read::view_of;
use super::{RoleView, is_built_in, path_key, record_change};
use crate::audit::action;
use crate::revision::next_update_time;
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta};
use svc_domain::{EventType, Role, TENANT_ADMIN, TenantId};
use svc_store::UpdateOutcome;

/// Applies `patch` to the role `key` of `tenant`, audited as `role.updated` (target: the key),
/// with the event `admin.role.updated` carrying the permissions held after. A patch that changes
/// nothing writes nothing and returns the role as it is. `issuer` is the tenant's issuer (for
/// the view of `tenant_admin`'s permissions).
///
/// A custom role is changed only at the revision `precondition` names (when it names one) and
/// at the revision read: [`ManageError::PreconditionFailed`] otherwise. A built-in role has no
/// revision: it is one fixed description and one set of permissions replaced whole, so there is
/// nothing to be stale about beyond the set itself; `If-Match: *` holds, a listed tag never
/// does.
///
/// Errors: [`ManageError::NotFound`] when no role has this key; [`ManageError::Invalid`] naming
/// the field (`key` for `tenant_admin`, `description` for the built-in organization roles or a
/// `null` one, `permissions`); [`ManageError::PreconditionFailed`].
#[allow(clippy::too_many_arguments)] // the request's facts, each distinct
pub async fn update(
    ctx: &ManageContext,
    tenant: &TenantId,
    issuer: &str,
    actor: &Actor,
    meta: &RequestMeta,
    key: &str,
    patch: RolePatch,
    precondition: &Precondition,
) -> Result<RoleView, ManageError> {
    let key = path_key(key)?;
    if key.as_str() == TENANT_ADMIN {
        return Err(ManageError::invalid(
            "key",
            "tenant_admin holds the management API's scopes, which this version fixes; it \
             cannot be changed",
        ));
    }
    let description = match patch.description {
        None => None,
        Some(None) => {
            return Err(ManageError::invalid(
                "description",
                "a role always has a description; send \"\" to empty it, or leave it out",
            ));
        }
        Some(Some(raw)) => Some(check_description(&raw)?),
    };
    let wanted = match patch.permissions {
        None => None,
        Some(None) => {
            return Err(ManageError::invalid(
                "permissions",
                "send [] to take every permission away, or leave permissions out",
            ));
        }
        Some(Some(raw)) => Some(check_permissions(&raw)?),
    };
    let built_in = is_built_in(&key);
    if built_in && description.is_some() {
        return Err(ManageError::invalid(
            "description",
            format!(
                "the description of the built-in role {key} is fixed; only its permissions change"
            ),
        ));
    }
    if built_in && matches!(precondition, Precondition::OneOf(_)) {
        return Err(ManageError::PreconditionFailed);
    }

    let mut tx = ctx.store.write().await?;
    let role = if built_in {
        None
    } else {
        let role = tx.role(tenant, &key).await?.ok_or(ManageError::NotFound)?;
        precondition.check(role.updated_at)?;
        Some(role)
    };
    let before = held(tx.as_mut(), tenant, &key).await?;
    let grants = match &wanted {
        Some(wanted) => Some(resolve(tx.as_mut(), tenant, wanted).await?.grants),
        None => None,
    };
    let grants_change = grants.as_ref().filter(|g| **g != before);
    let description_change = match (&role, description) {
        (Some(role), Some(d)) if d != role.description => Some(d),
        _ => None,
    };
    if grants_change.is_none() && description_change.is_none() {
        return view_of(tx.as_mut(), tenant, issuer, &key)
            .await?
            .ok_or(ManageError::NotFound);
    }
    if let Some(role) = role {
        let after = Role {
            description: description_change.unwrap_or_else(|| role.description.clone()),
            updated_at: next_update_time(role.updated_at, ctx.now()),
            ..role.clone()
        };
        match tx.update_role_if_unchanged(&after, role.updated_at).await? {
            UpdateOutcome::Applied => {}
            UpdateOutcome::Stale => return Err(ManageError::PreconditionFailed),
        }
    }
    if let Some(grants) = grants_change {
        replace(tx.as_mut(), tenant, &key, grants).await?;
    }
    let view = view_of(tx.as_mut(), tenant, issuer, &key)
        .await?
        .ok_or(ManageError::NotFound)?;
    record_change(
        tx.as_mut(),
        ctx,
        actor,
        meta,
        tenant,
        &view,
        (action::ROLE_UPDATED, EventType::AdminRoleUpdated),
    )
    .await?;
    tx.commit().await?;
    Ok(view)
}
