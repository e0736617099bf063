//! A person's tenant roles: the roles they hold in the tenant as a whole, as opposed to the roles
//! of an organization's members: the built-in `tenant_admin` of the tenant's human
//! administrators ([`TENANT_ROLES`]) and the tenant's custom roles of kind `tenant` (read in the
//! write transaction of the change, see [`crate::roles`]). Reading them, and replacing them as a set:
//! a change is audited (`tenant_user.roles_changed`, target: the person) and emits the event
//! `tenant_user.roles_changed` with the roles before and after, in the transaction of the change;
//! the same set again writes nothing. A removed person holds no role (removal clears them), and
//! cannot be given one.

use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta, events};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeSet;
use svc_domain::{
    EventData, EventType, RoleKey, RoleKind, TENANT_ROLES, TenantId, UserId, UserStatus,
};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

/// The most entries `roles` may list (repeats included).
pub const MAX_TENANT_ROLES: usize = 16;

/// Body of `PUT /api/v1/tenant-users/{id}/roles`. Unknown fields are refused, so a misspelt field
/// is an error rather than silently ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"roles": ["tenant_admin"]}))]
pub struct RolesInput {
    /// The tenant roles the person holds from now on, replacing the previous ones: at most 16
    /// entries, each `tenant_admin` or the key of a custom tenant role of the tenant; repeats
    /// collapse, and `[]` takes every role away.
    #[schema(value_type = Vec<TenantRoleSchema>, max_items = 16,
             example = json!(["tenant_admin"]))]
    pub roles: Vec<String>,
}

/// A person's tenant roles, as the management API shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({"roles": ["tenant_admin"]}))]
pub struct RolesView {
    /// The tenant roles held, sorted; empty when none.
    #[schema(value_type = Vec<TenantRoleSchema>)]
    pub roles: Vec<String>,
}

impl From<&BTreeSet<RoleKey>> for RolesView {
    fn from(roles: &BTreeSet<RoleKey>) -> Self {
        Self {
            roles: names(roles),
        }
    }
}

/// The schema of a tenant role (named `TenantRole` in the document): the built-in
/// `tenant_admin` or the key of a custom tenant role.
pub struct TenantRoleSchema;

impl PartialSchema for TenantRoleSchema {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(64))
            .pattern(Some(crate::roles::ROLE_KEY_PATTERN))
            .examples([serde_json::json!(TENANT_ROLES[0])])
            .description(Some(
                "A tenant role: the built-in `tenant_admin` (every management API scope for a \
                 person signing in to a first-party application of the tenant's management \
                 API), or the key of a custom role of kind `tenant` (`GET /api/v1/roles`).",
            ))
            .into()
    }
}

impl ToSchema for TenantRoleSchema {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("TenantRole")
    }
}

/// The tenant roles of the user `id` of `tenant`, sorted (empty when none).
///
/// Errors: [`ManageError::NotFound`] when the user is absent (another tenant's included).
pub async fn roles(
    ctx: &ManageContext,
    tenant: &TenantId,
    id: &UserId,
) -> Result<BTreeSet<RoleKey>, ManageError> {
    let mut tx = ctx.store.read().await?;
    if tx.user(tenant, id).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let roles = tx.user_roles(tenant, id).await?;
    tx.finish().await?;
    Ok(roles)
}

/// Gives the user `id` of `tenant` exactly the tenant roles of `input`, audited as
/// `tenant_user.roles_changed` (target: the user) with the event `tenant_user.roles_changed`
/// carrying the roles before and after. The roles held already write nothing. Returns the roles
/// held after the call.
///
/// Errors: [`ManageError::Invalid`] naming `roles` (more than [`MAX_TENANT_ROLES`] entries, or
/// one that is not a tenant role: neither `tenant_admin` nor a custom tenant role of the tenant);
/// [`ManageError::NotFound`] when the user is absent;
/// [`ManageError::Conflict`] when the user is removed.
pub async fn set_roles(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &UserId,
    input: RolesInput,
) -> Result<BTreeSet<RoleKey>, ManageError> {
    let roles = check_roles(&input.roles)?;
    let mut tx = ctx.store.write().await?;
    let user = tx.user(tenant, id).await?.ok_or(ManageError::NotFound)?;
    if user.status == UserStatus::Removed {
        return Err(ManageError::Conflict(
            "a removed user cannot hold tenant roles".to_owned(),
        ));
    }
    if let Some((key, kind)) =
        crate::roles::unassignable(tx.as_mut(), tenant, &roles, RoleKind::Tenant).await?
    {
        return Err(not_a_tenant_role(&key, kind));
    }
    let previous = tx.user_roles(tenant, id).await?;
    if previous == roles {
        return Ok(previous);
    }
    tx.set_user_roles(tenant, id, &roles, ctx.now()).await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::TENANT_USER_ROLES_CHANGED,
        Some(id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    let data = changed(id, &roles, &previous, actor);
    events::record(
        tx.as_mut(),
        ctx,
        tenant,
        EventType::TenantUserRolesChanged,
        data,
    )
    .await?;
    tx.commit().await?;
    Ok(roles)
}

/// The payload of `tenant_user.roles_changed`: the person's roles after and before the change.
pub(super) fn changed(
    id: &UserId,
    roles: &BTreeSet<RoleKey>,
    previous: &BTreeSet<RoleKey>,
    actor: &Actor,
) -> EventData {
    EventData::TenantUserRoles {
        user_id: id.clone(),
        roles: names(roles),
        previous_roles: names(previous),
        actor: actor.as_audit_string(),
    }
}

fn names(roles: &BTreeSet<RoleKey>) -> Vec<String> {
    roles.iter().map(|r| r.as_str().to_owned()).collect()
}

/// The refusal of `key`, which the tenant's roles show is no tenant role: one of another `kind`,
/// or no role at all.
pub(crate) fn not_a_tenant_role(key: &RoleKey, kind: Option<RoleKind>) -> ManageError {
    let allowed = TENANT_ROLES.join(", ");
    let what = match kind {
        Some(RoleKind::Organization) => format!("{:?} is an organization role", key.as_str()),
        _ => format!("unknown role {:?}", key.as_str()),
    };
    ManageError::invalid(
        "roles",
        format!("{what}; tenant roles are {allowed} and the tenant's custom tenant roles"),
    )
}

/// Rule: `roles` lists at most [`MAX_TENANT_ROLES`] entries, each a role key that is not a
/// built-in organization role; repeats collapse, and no entry is allowed (the person holds no
/// tenant role). Keys that are not built in must name custom tenant roles, which only the write
/// transaction can tell ([`crate::roles::unassignable`]).
pub(crate) fn check_roles(raw: &[String]) -> Result<BTreeSet<RoleKey>, ManageError> {
    let allowed = TENANT_ROLES.join(", ");
    if raw.len() > MAX_TENANT_ROLES {
        return Err(ManageError::invalid(
            "roles",
            format!("roles may list at most {MAX_TENANT_ROLES} roles; tenant roles are {allowed}"),
        ));
    }
    raw.iter()
        .map(|role| match RoleKey::parse(role) {
            Ok(key) if RoleKind::of_built_in(key.as_str()) != Some(RoleKind::Organization) => {
                Ok(key)
            }
            _ => Err(ManageError::invalid(
                "roles",
                format!(
                    "unknown role {:?}; tenant roles are {allowed}",
                    role.chars().take(64).collect::<String>()
                ),
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_of(err: ManageError) -> String {
        match err {
            ManageError::Invalid { field, .. } => field,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn only_tenant_roles_pass_and_repeats_collapse() {
        let raw = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert!(check_roles(&[]).unwrap().is_empty());
        let one = check_roles(&raw(&["tenant_admin", "tenant_admin"])).unwrap();
        assert_eq!(
            one.iter().map(RoleKey::as_str).collect::<Vec<_>>(),
            ["tenant_admin"]
        );
        assert!(check_roles(&raw(&["tenant_admin"; MAX_TENANT_ROLES])).is_ok());
        for bad in [
            raw(&["owner"]),
            raw(&["admin"]),
            raw(&["Tenant_Admin"]),
            raw(&["tenant_admin "]),
            raw(&[""]),
            raw(&["tenant_admin", "member"]),
            raw(&["tenant_admin"; MAX_TENANT_ROLES + 1]),
        ] {
            assert_eq!(field_of(check_roles(&bad).unwrap_err()), "roles", "{bad:?}");
        }
        let long = "x".repeat(10_000);
        let message = check_roles(&[long]).unwrap_err().to_string();
        assert!(message.len() < 200, "the echo is cut: {message}");
        assert!(
            message.contains("tenant roles are tenant_admin"),
            "{message}"
        );
    }
}
