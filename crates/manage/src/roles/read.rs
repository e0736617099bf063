//! Lists and reads a tenant's roles: the built-in ones, with their fixed descriptions, and the
//! custom ones, each with the permissions it holds.

use super::permissions::{management, shown};
use super::{RoleView, built_in_keys, is_built_in, path_key};
use crate::{ManageContext, ManageError};
use std::collections::BTreeSet;
use svc_domain::{
    ORG_ADMIN, ORG_MEMBER, ORG_OWNER, Role, RoleKey, RoleKind, TENANT_ADMIN, TenantId,
};
use svc_store::AccessReads;

/// Every role of `tenant`: the built-in ones (`tenant_admin`, `owner`, `admin`, `member`), then
/// the custom ones in key order. `issuer` is the tenant's issuer, whose management API
/// `tenant_admin`'s permissions are on.
pub async fn list(
    ctx: &ManageContext,
    tenant: &TenantId,
    issuer: &str,
) -> Result<Vec<RoleView>, ManageError> {
    let mut tx = ctx.store.read().await?;
    let custom = tx.list_roles(tenant).await?;
    let built_in: Vec<&str> = built_in_keys().collect();
    let views = assemble(tx.as_mut(), tenant, issuer, &built_in, &custom).await?;
    tx.finish().await?;
    Ok(views)
}

/// The role `key` of `tenant`, built-in or custom.
///
/// Errors: [`ManageError::NotFound`] when no role has this key (another tenant's custom role
/// included).
pub async fn get(
    ctx: &ManageContext,
    tenant: &TenantId,
    issuer: &str,
    key: &str,
) -> Result<RoleView, ManageError> {
    let key = path_key(key)?;
    let mut tx = ctx.store.read().await?;
    let view = view_of(tx.as_mut(), tenant, issuer, &key).await?;
    tx.finish().await?;
    view.ok_or(ManageError::NotFound)
}

/// The view of the role `key` of `tenant`, `None` when there is no such role.
pub(super) async fn view_of<T>(
    tx: &mut T,
    tenant: &TenantId,
    issuer: &str,
    key: &RoleKey,
) -> Result<Option<RoleView>, ManageError>
where
    T: AccessReads + Send + ?Sized,
{
    let views = if is_built_in(key) {
        assemble(tx, tenant, issuer, &[key.as_str()], &[]).await?
    } else {
        match tx.role(tenant, key).await? {
            Some(role) => assemble(tx, tenant, issuer, &[], &[role]).await?,
            None => return Ok(None),
        }
    };
    Ok(views.into_iter().next())
}

/// The views of the built-in roles `built_in` and of `custom`, in that order, with the
/// permissions each holds.
async fn assemble<T>(
    tx: &mut T,
    tenant: &TenantId,
    issuer: &str,
    built_in: &[&str],
    custom: &[Role],
) -> Result<Vec<RoleView>, ManageError>
where
    T: AccessReads + Send + ?Sized,
{
    let mut keys: BTreeSet<RoleKey> = custom.iter().map(|r| r.key.clone()).collect();
    for key in built_in {
        if *key != TENANT_ADMIN {
            keys.insert(RoleKey::parse(key).map_err(|_| ManageError::NotFound)?);
        }
    }
    let grants = tx.role_grants(tenant, &keys).await?;
    let mut permissions = shown(tx, tenant, &grants).await?;
    let mut views = Vec::with_capacity(built_in.len() + custom.len());
    for key in built_in {
        let Some(kind) = RoleKind::of_built_in(key) else {
            continue;
        };
        let held = if *key == TENANT_ADMIN {
            management(issuer)
        } else {
            RoleKey::parse(key)
                .ok()
                .and_then(|k| permissions.remove(&k))
                .unwrap_or_default()
        };
        views.push(RoleView {
            key: (*key).to_owned(),
            kind,
            built_in: true,
            description: built_in_description(key).to_owned(),
            permissions: held,
            created_at: None,
            updated_at: None,
        });
    }
    for role in custom {
        views.push(RoleView {
            key: role.key.as_str().to_owned(),
            kind: role.kind,
            built_in: false,
            description: role.description.clone(),
            permissions: permissions.remove(&role.key).unwrap_or_default(),
            created_at: Some(role.created_at),
            updated_at: Some(role.updated_at),
        });
    }
    Ok(views)
}

/// The fixed description of a built-in role.
fn built_in_description(key: &str) -> &'static str {
    match key {
        TENANT_ADMIN => {
            "The tenant's human administrators: every management API scope, for a person \
             signing in to a first-party application of the tenant's management API."
        }
        ORG_OWNER => "Everything in the organization, including managing its other owners.",
        ORG_ADMIN => "Manages the organization's members, never its owners.",
        ORG_MEMBER => "An ordinary member of the organization.",
        _ => "",
    }
}
