//! The permissions of roles in both directions: what a caller names (a resource identifier and a
//! permission name) resolved into the grants the store keeps, and the grants the store keeps
//! shown with their resource identifiers; and the fixed permissions of `tenant_admin`.

use super::input::echo;
use super::view::RolePermissionView;
use crate::ManageError;
use std::collections::{BTreeMap, BTreeSet};
use svc_domain::{
    ApiResource, ApiResourceId, MANAGEMENT_API_SCOPES, PermissionName, RoleGrant, RoleKey, TenantId,
};
use svc_store::{AccessReads, StoreError, WriteTx};

/// Permissions resolved against the tenant's API resources.
#[derive(Debug, Default)]
pub(super) struct Resolved {
    /// What the store keeps: (resource id, permission), repeats collapsed.
    pub(super) grants: BTreeSet<(ApiResourceId, PermissionName)>,
    /// What the API shows, sorted by resource identifier, then name.
    pub(super) views: Vec<RolePermissionView>,
}

/// Resolves `wanted` (resource identifier, permission) against the API resources of `tenant`,
/// read in the caller's write transaction so the grants written with them still exist.
///
/// Errors: [`ManageError::Invalid`] naming `permissions` and the resource identifier no API
/// resource of the tenant has, or the permission its resource does not define.
pub(super) async fn resolve(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    wanted: &[(String, PermissionName)],
) -> Result<Resolved, ManageError> {
    let mut resources: BTreeMap<&str, ApiResource> = BTreeMap::new();
    let mut out = Resolved::default();
    for (identifier, name) in wanted {
        if !resources.contains_key(identifier.as_str()) {
            let resource = tx
                .api_resource_by_identifier(tenant, identifier)
                .await?
                .ok_or_else(|| {
                    ManageError::invalid(
                        "permissions",
                        format!(
                            "no API resource of this tenant has the identifier {:?}",
                            echo(identifier)
                        ),
                    )
                })?;
            resources.insert(identifier, resource);
        }
        let Some(resource) = resources.get(identifier.as_str()) else {
            continue;
        };
        if !resource.permissions.iter().any(|p| &p.name == name) {
            return Err(undefined(identifier, name));
        }
        if out.grants.insert((resource.id.clone(), name.clone())) {
            out.views.push(RolePermissionView {
                resource: resource.identifier.clone(),
                resource_id: Some(resource.id.to_string()),
                name: name.as_str().to_owned(),
            });
        }
    }
    out.views.sort();
    Ok(out)
}

/// The refusal of a permission its resource does not define.
fn undefined(identifier: &str, name: &PermissionName) -> ManageError {
    ManageError::invalid(
        "permissions",
        format!(
            "the API resource {:?} defines no permission {:?}",
            echo(identifier),
            name.as_str()
        ),
    )
}

/// The permissions each role of `grants` holds, with their resources' identifiers, sorted by
/// identifier, then name. A grant whose resource is gone (deleted meanwhile) is left out.
pub(super) async fn shown<T>(
    tx: &mut T,
    tenant: &TenantId,
    grants: &[RoleGrant],
) -> Result<BTreeMap<RoleKey, Vec<RolePermissionView>>, ManageError>
where
    T: AccessReads + Send + ?Sized,
{
    let ids: BTreeSet<&ApiResourceId> = grants.iter().map(|g| &g.resource_id).collect();
    let mut identifiers = BTreeMap::new();
    for id in ids {
        if let Some(resource) = tx.api_resource(tenant, id).await? {
            identifiers.insert(id, resource.identifier);
        }
    }
    let mut out: BTreeMap<RoleKey, Vec<RolePermissionView>> = BTreeMap::new();
    for grant in grants {
        let Some(identifier) = identifiers.get(&grant.resource_id) else {
            continue;
        };
        out.entry(grant.role.clone())
            .or_default()
            .push(RolePermissionView {
                resource: identifier.clone(),
                resource_id: Some(grant.resource_id.to_string()),
                name: grant.permission.as_str().to_owned(),
            });
    }
    for views in out.values_mut() {
        views.sort();
    }
    Ok(out)
}

/// The grants `role` holds now, as the store keeps them.
pub(super) async fn held(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    role: &RoleKey,
) -> Result<BTreeSet<(ApiResourceId, PermissionName)>, ManageError> {
    let grants = tx
        .role_grants(tenant, &BTreeSet::from([role.clone()]))
        .await?;
    Ok(grants
        .into_iter()
        .map(|g| (g.resource_id, g.permission))
        .collect())
}

/// The constraint the store names when a granted permission left its resource meanwhile.
const GRANT_KEY: &str = "role_permissions_permission_fkey";

/// Replaces the grants of `role` with `grants`, refusing them when a permission left its
/// resource since it was resolved.
pub(super) async fn replace(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    role: &RoleKey,
    grants: &BTreeSet<(ApiResourceId, PermissionName)>,
) -> Result<(), ManageError> {
    match tx.replace_role_grants(tenant, role, grants).await {
        Ok(()) => Ok(()),
        Err(StoreError::Conflict { constraint }) if constraint == GRANT_KEY => {
            Err(ManageError::invalid(
                "permissions",
                "a permission named was removed from its API resource meanwhile; read the API \
                 resources again",
            ))
        }
        Err(e) => Err(e.into()),
    }
}

/// `tenant_admin`'s permissions: every management API scope, on the management API of
/// `issuer` (which is no stored API resource, hence no id).
pub(super) fn management(issuer: &str) -> Vec<RolePermissionView> {
    let resource = format!("{}/api/v1", issuer.trim_end_matches('/'));
    let mut views: Vec<RolePermissionView> = MANAGEMENT_API_SCOPES
        .iter()
        .map(|scope| RolePermissionView {
            resource: resource.clone(),
            resource_id: None,
            name: (*scope).to_owned(),
        })
        .collect();
    views.sort();
    views
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenant_admin_holds_every_management_scope_of_its_issuer() {
        let views = management("https://acme.example.com");
        assert_eq!(views.len(), MANAGEMENT_API_SCOPES.len());
        assert!(views.windows(2).all(|w| w[0].name < w[1].name), "sorted");
        for view in &views {
            assert_eq!(view.resource, "https://acme.example.com/api/v1");
            assert_eq!(view.resource_id, None);
        }
        assert!(views.iter().any(|v| v.name == "policies:write"));
    }
}
