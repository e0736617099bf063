//! The tenant roles of an application: the custom tenant roles whose permissions it holds when
//! it calls an API resource of the tenant (machine access). Reading them, and replacing them as
//! a set: a change is audited (`application.roles_changed`, target: the application) and emits
//! the event `admin.application.roles_changed` with the roles before and after, in the
//! transaction of the change; the same set again writes nothing.

use super::input::{ApplicationRolesInput, check_application_roles, echo};
use super::unassignable;
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta, events};
use std::collections::BTreeSet;
use svc_domain::{ClientId, EventData, EventType, RoleKey, RoleKind, TenantId};

/// The roles of the application `id` of `tenant`, sorted (empty when none).
///
/// Errors: [`ManageError::NotFound`] when the application is absent (another tenant's
/// included).
pub async fn application_roles(
    ctx: &ManageContext,
    tenant: &TenantId,
    id: &ClientId,
) -> Result<BTreeSet<RoleKey>, ManageError> {
    let mut tx = ctx.store.read().await?;
    if tx.application(tenant, id).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let roles = tx.application_roles(tenant, id).await?;
    tx.finish().await?;
    Ok(roles)
}

/// Gives the application `id` of `tenant` exactly the roles of `input`, audited as
/// `application.roles_changed` (target: the application) with the event
/// `admin.application.roles_changed` carrying the roles before and after. The roles held
/// already write nothing. Returns the roles held after the call.
///
/// Errors: [`ManageError::Invalid`] naming `roles` (more than
/// [`super::MAX_APPLICATION_ROLES`] entries, a built-in role, or one that is not a custom
/// tenant role of the tenant); [`ManageError::NotFound`] when the application is absent.
pub async fn set_application_roles(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &ClientId,
    input: ApplicationRolesInput,
) -> Result<BTreeSet<RoleKey>, ManageError> {
    let roles = check_application_roles(&input.roles)?;
    let mut tx = ctx.store.write().await?;
    if tx.application(tenant, id).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    if let Some((key, kind)) = unassignable(tx.as_mut(), tenant, &roles, RoleKind::Tenant).await? {
        return Err(not_tenant_role(&key, kind));
    }
    let previous = tx.application_roles(tenant, id).await?;
    if previous == roles {
        return Ok(previous);
    }
    tx.replace_application_roles(tenant, id, &roles, ctx.now())
        .await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::APPLICATION_ROLES_CHANGED,
        Some(id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    let names = |set: &BTreeSet<RoleKey>| set.iter().map(|r| r.as_str().to_owned()).collect();
    let data = EventData::ApplicationRoles {
        client_id: id.clone(),
        roles: names(&roles),
        previous_roles: names(&previous),
        actor: actor.as_audit_string(),
    };
    events::record(
        tx.as_mut(),
        ctx,
        tenant,
        EventType::AdminApplicationRolesChanged,
        data,
    )
    .await?;
    tx.commit().await?;
    Ok(roles)
}

/// The refusal of `key` as an application's role: an organization role (`kind`), or no role.
pub(super) fn not_tenant_role(key: &RoleKey, kind: Option<RoleKind>) -> ManageError {
    let key = echo(key.as_str());
    ManageError::invalid(
        "roles",
        match kind {
            Some(RoleKind::Organization) => {
                format!("{key} is an organization role; applications hold custom tenant roles")
            }
            _ => format!("unknown role {key:?}; applications hold custom tenant roles"),
        },
    )
}
