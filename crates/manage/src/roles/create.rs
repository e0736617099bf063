//! Creates a custom role with its permissions.

use super::input::{NewRole, check_description, check_key, check_kind, check_permissions};
use super::permissions::{replace, resolve};
use super::{MAX_CUSTOM_ROLES, RoleView, is_built_in, record_change};
use crate::audit::action;
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use svc_domain::{EventType, Role, TenantId};
use svc_store::StoreError;

/// The constraint the store names when the key is taken.
const ROLE_KEY: &str = "roles_pkey";

/// Creates the custom role described by `input` in `tenant`, audited as `role.created` (target:
/// the key), with the event `admin.role.created`.
///
/// Errors: [`ManageError::Invalid`] naming the field (`key`, `kind`, `description`,
/// `permissions`: an unknown resource identifier or a permission its resource does not define);
/// [`ManageError::Conflict`] when the key is a built-in role's or another custom role's, or the
/// tenant already has [`MAX_CUSTOM_ROLES`] custom roles; [`ManageError::NotFound`] when the
/// tenant does not exist.
pub async fn create(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    input: NewRole,
) -> Result<RoleView, ManageError> {
    let key = check_key(&input.key)?;
    let kind = check_kind(&input.kind)?;
    let description = check_description(input.description.as_deref().unwrap_or_default())?;
    let wanted = check_permissions(input.permissions.as_deref().unwrap_or_default())?;
    // A built-in role exists in every tenant, so its key is as taken as a custom role's.
    if is_built_in(&key) {
        return Err(ManageError::Conflict(format!(
            "{key} is a built-in role of every tenant; choose another key"
        )));
    }

    let mut tx = ctx.store.write().await?;
    if tx.tenant_by_id(tenant).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    if tx.role(tenant, &key).await?.is_some() {
        return Err(key_taken());
    }
    if tx.list_roles(tenant).await?.len() >= MAX_CUSTOM_ROLES {
        return Err(ManageError::Conflict(format!(
            "this tenant already has {MAX_CUSTOM_ROLES} custom roles, the most a tenant may; \
             delete one first"
        )));
    }
    let resolved = resolve(tx.as_mut(), tenant, &wanted).await?;
    let now = ctx.now();
    let role = Role {
        tenant_id: tenant.clone(),
        key,
        kind,
        description,
        created_at: now,
        updated_at: now,
    };
    match tx.insert_role(&role).await {
        Ok(()) => {}
        Err(StoreError::Conflict { constraint }) if constraint == ROLE_KEY => {
            return Err(key_taken());
        }
        Err(e) => return Err(e.into()),
    }
    if !resolved.grants.is_empty() {
        replace(tx.as_mut(), tenant, &role.key, &resolved.grants).await?;
    }
    let view = RoleView {
        key: role.key.as_str().to_owned(),
        kind,
        built_in: false,
        description: role.description.clone(),
        permissions: resolved.views,
        created_at: Some(now),
        updated_at: Some(now),
    };
    record_change(
        tx.as_mut(),
        ctx,
        actor,
        meta,
        tenant,
        &view,
        (action::ROLE_CREATED, EventType::AdminRoleCreated),
    )
    .await?;
    tx.commit().await?;
    Ok(view)
}

fn key_taken() -> ManageError {
    ManageError::Conflict("a role with this key already exists in this tenant".to_owned())
}
