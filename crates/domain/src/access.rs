//! The access model's values (issue 17 items 1 and 2): API resources a tenant protects, the
//! permissions they define, and custom roles that hold permissions.
//!
//! An API resource's identifier is the audience (`aud`) of the tokens issued for it (RFC 8707
//! `resource`); its permissions are scope tokens of the form `<resource>:<action>` (CONTRACTS.md
//! "Tenant API scopes and audience"). A role holds permissions of any resource; a person's (or
//! an application's) permissions for a resource are the union of their roles' grants for it.
//! Built-in roles ([`crate::TENANT_ROLES`], [`crate::ORG_ROLES`]) exist in every tenant without
//! being stored; custom roles are stored with a [`RoleKind`] saying where they are assigned.

use crate::{ApiResourceId, RoleKey, Scope, TenantId};
use std::collections::BTreeSet;
use std::fmt;
use time::OffsetDateTime;

/// Scopes that name no API permission: the OpenID Connect and grant scopes the issuer itself
/// interprets. A permission may not shadow one of them.
pub const RESERVED_SCOPES: [&str; 7] = [
    "openid",
    "profile",
    "email",
    "phone",
    "address",
    "offline_access",
    "roles",
];

/// Why a permission name was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "a permission is a scope token of the form <resource>:<action> (printable ASCII without spaces, quotes or backslashes, at most 128 characters), and not a reserved OpenID Connect scope"
)]
pub struct PermissionError;

/// A permission: a scope token `<resource>:<action>` (both parts non-empty) that a role can hold
/// and an access token for its resource can carry.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct PermissionName(String);

impl PermissionName {
    /// Parses a permission name.
    pub fn parse(s: &str) -> Result<Self, PermissionError> {
        let token = Scope::parse(s).map_err(|_| PermissionError)?;
        let shaped = s
            .split_once(':')
            .is_some_and(|(resource, action)| !resource.is_empty() && !action.is_empty());
        if shaped && !RESERVED_SCOPES.contains(&s) {
            Ok(Self(token.as_str().to_owned()))
        } else {
            Err(PermissionError)
        }
    }

    /// The permission as text (and as a scope token).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PermissionName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Longest permission or role description accepted.
pub const MAX_ACCESS_DESCRIPTION_CHARS: usize = 256;
/// Most permissions one API resource defines.
pub const MAX_RESOURCE_PERMISSIONS: usize = 100;

/// A permission an API resource defines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permission {
    /// The scope token.
    pub name: PermissionName,
    /// What it allows, for consent pages and administrators.
    pub description: String,
}

/// An API a tenant protects: tokens requested for it with `resource` carry its identifier as
/// their audience and the caller's permissions for it as scopes.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiResource {
    /// Durable id (`res_…`).
    pub id: ApiResourceId,
    /// Owner.
    pub tenant_id: TenantId,
    /// The audience: an absolute URI without fragment, unique in the tenant, never changed.
    pub identifier: String,
    /// Display name.
    pub name: String,
    /// The permissions it defines, sorted by name, unique.
    pub permissions: Vec<Permission>,
    /// Creation time.
    pub created_at: OffsetDateTime,
    /// Last change; the revision `If-Match` checks.
    pub updated_at: OffsetDateTime,
}

/// Where a role is assigned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RoleKind {
    /// Held by a person in the whole tenant (`/tenant-users/{id}/roles`) or by an application.
    Tenant,
    /// Held by a member in one organization (membership roles).
    Organization,
}

impl RoleKind {
    /// The stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tenant => "tenant",
            Self::Organization => "organization",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "tenant" => Some(Self::Tenant),
            "organization" => Some(Self::Organization),
            _ => None,
        }
    }

    /// The kind of the built-in role `key`, if it is one.
    pub fn of_built_in(key: &str) -> Option<Self> {
        if crate::TENANT_ROLES.contains(&key) {
            Some(Self::Tenant)
        } else if crate::ORG_ROLES.contains(&key) {
            Some(Self::Organization)
        } else {
            None
        }
    }
}

/// A custom role of a tenant (built-in roles are not stored).
#[derive(Debug, Clone, PartialEq)]
pub struct Role {
    /// Owner.
    pub tenant_id: TenantId,
    /// Unique in the tenant across both kinds, never a built-in key.
    pub key: RoleKey,
    /// Where it is assigned.
    pub kind: RoleKind,
    /// What it is for.
    pub description: String,
    /// Creation time.
    pub created_at: OffsetDateTime,
    /// Last change of the description; the revision `If-Match` checks.
    pub updated_at: OffsetDateTime,
}

/// One permission held by a role: the resource's id and the permission's name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RoleGrant {
    /// The role holding it.
    pub role: RoleKey,
    /// The API resource defining the permission.
    pub resource_id: ApiResourceId,
    /// The permission.
    pub permission: PermissionName,
}

/// The permissions of `grants` for `resource`.
pub fn permissions_for(grants: &[RoleGrant], resource: &ApiResourceId) -> BTreeSet<PermissionName> {
    grants
        .iter()
        .filter(|g| &g.resource_id == resource)
        .map(|g| g.permission.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permissions_are_resource_action_scope_tokens() {
        for good in ["invoices:read", "a:b", "billing.v2:export-all", "x:y:z"] {
            assert!(PermissionName::parse(good).is_ok(), "{good}");
        }
        let long = format!("a:{}", "b".repeat(127));
        for bad in [
            "",
            "invoices",
            ":read",
            "invoices:",
            "in voices:read",
            "a\"b:c",
            "é:read",
            &long,
        ] {
            assert_eq!(PermissionName::parse(bad), Err(PermissionError), "{bad}");
        }
    }

    #[test]
    fn built_in_kinds() {
        assert_eq!(
            RoleKind::of_built_in("tenant_admin"),
            Some(RoleKind::Tenant)
        );
        assert_eq!(RoleKind::of_built_in("owner"), Some(RoleKind::Organization));
        assert_eq!(RoleKind::of_built_in("billing"), None);
        for kind in [RoleKind::Tenant, RoleKind::Organization] {
            assert_eq!(RoleKind::parse(kind.as_str()), Some(kind));
        }
    }
}
