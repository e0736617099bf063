//! Organizations: the customer companies of a B2B tenant. An organization has a slug unique in
//! its tenant (the `organization` authorization parameter takes it or the id), a name, free
//! metadata and a status; people join it as members holding organization roles.
//!
//! Roles are named by [`RoleKey`]s. The built-in organization roles (CONTRACTS.md
//! "Organizations, roles, keys, SCIM") are `owner`, `admin` and `member`; a membership holds at
//! least one role.

use crate::{OrganizationId, TenantId, UserId};
use std::collections::BTreeSet;
use std::fmt;
use time::OffsetDateTime;

/// Why a slug or role key was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OrgValueError {
    /// Not a lowercase DNS label of 1 to 63 characters.
    #[error("a slug is 1 to 63 lowercase letters, digits and inner hyphens")]
    Slug,
    /// Not a role key.
    #[error("a role key is 1 to 64 lowercase letters, digits, '_', '-' or '.'")]
    RoleKey,
}

/// An organization's slug: a lowercase DNS label (so it can name a subdomain later), unique in
/// its tenant. Uppercase is refused rather than folded, so a slug has exactly one spelling.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct OrgSlug(String);

impl OrgSlug {
    /// Parses a slug.
    pub fn parse(s: &str) -> Result<Self, OrgValueError> {
        let ok = (1..=63).contains(&s.len())
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !s.starts_with('-')
            && !s.ends_with('-');
        if ok {
            Ok(Self(s.to_owned()))
        } else {
            Err(OrgValueError::Slug)
        }
    }

    /// The slug as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for OrgSlug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether an organization's members can act in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OrgStatus {
    /// Members sign in to it and act in it.
    Active,
    /// Nobody obtains tokens for it until it is reactivated; its members and data stay.
    Suspended,
}

impl OrgStatus {
    /// The stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Suspended => "suspended",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "active" => Some(Self::Active),
            "suspended" => Some(Self::Suspended),
            _ => None,
        }
    }
}

/// An organization of a tenant.
#[derive(Debug, Clone, PartialEq)]
pub struct Organization {
    /// Durable id (`org_…`); the `org_id` claim.
    pub id: OrganizationId,
    /// Owner.
    pub tenant_id: TenantId,
    /// Unique in the tenant; the `org_slug` claim.
    pub slug: OrgSlug,
    /// Display name.
    pub name: String,
    /// Free JSON object the tenant keeps with the organization (size-limited by the API).
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// Whether members can act in it.
    pub status: OrgStatus,
    /// Creation time.
    pub created_at: OffsetDateTime,
    /// Last change; the revision `If-Match` checks.
    pub updated_at: OffsetDateTime,
}

/// The name of a role: lowercase letters, digits, `_`, `-` and `.`, 1 to 64 characters.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct RoleKey(String);

impl RoleKey {
    /// Parses a role key.
    pub fn parse(s: &str) -> Result<Self, OrgValueError> {
        let ok = (1..=64).contains(&s.len())
            && s.bytes().all(|b| {
                b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-' | b'.')
            });
        if ok {
            Ok(Self(s.to_owned()))
        } else {
            Err(OrgValueError::RoleKey)
        }
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is one of [`ORG_ROLES`].
    pub fn is_built_in_org_role(&self) -> bool {
        ORG_ROLES.contains(&self.0.as_str())
    }
}

impl fmt::Display for RoleKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The built-in organization roles: `owner` (everything, including other owners), `admin`
/// (manages members, never owners), `member`.
pub const ORG_ROLES: [&str; 3] = [ORG_OWNER, ORG_ADMIN, ORG_MEMBER];
/// The built-in role of an organization's owners.
pub const ORG_OWNER: &str = "owner";
/// The built-in role of an organization's administrators.
pub const ORG_ADMIN: &str = "admin";
/// The built-in role every ordinary member holds.
pub const ORG_MEMBER: &str = "member";

/// The built-in tenant roles: `tenant_admin` holds every management API scope
/// ([`crate::MANAGEMENT_API_SCOPES`]) for a person signing in to a first-party application whose
/// audience is the tenant's management API (CONTRACTS.md "Organizations, roles, keys, SCIM").
pub const TENANT_ROLES: [&str; 1] = [TENANT_ADMIN];
/// The built-in role of a tenant's human administrators.
pub const TENANT_ADMIN: &str = "tenant_admin";

/// The most organizations one person may belong to (the management API refuses more, and
/// auto-join through a verified domain skips a person who reached it).
pub const MAX_MEMBERSHIPS_PER_USER: usize = 500;

/// A person's membership of an organization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Membership {
    /// Owner of both sides.
    pub tenant_id: TenantId,
    /// The organization.
    pub organization_id: OrganizationId,
    /// The member.
    pub user_id: UserId,
    /// The roles held in the organization: never empty, sorted.
    pub roles: BTreeSet<RoleKey>,
    /// When the person joined.
    pub created_at: OffsetDateTime,
    /// Last change of the roles.
    pub updated_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_lowercase_dns_labels() {
        for good in ["acme", "a", "acme-eu-1", "9lives", &"a".repeat(63)] {
            assert!(OrgSlug::parse(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "Acme",
            "-acme",
            "acme-",
            "ac_me",
            "ac me",
            "é",
            &"a".repeat(64),
        ] {
            assert_eq!(OrgSlug::parse(bad), Err(OrgValueError::Slug), "{bad}");
        }
    }

    #[test]
    fn role_keys_are_short_lowercase_names() {
        for good in ["owner", "billing.viewer", "ops_admin", "x-1"] {
            assert!(RoleKey::parse(good).is_ok(), "{good}");
        }
        for bad in ["", "Owner", "a b", "a:b", "a/b", &"r".repeat(65)] {
            assert_eq!(RoleKey::parse(bad), Err(OrgValueError::RoleKey), "{bad}");
        }
        assert!(RoleKey::parse("admin").unwrap().is_built_in_org_role());
        assert!(
            !RoleKey::parse("tenant_admin")
                .unwrap()
                .is_built_in_org_role()
        );
    }

    #[test]
    fn statuses_round_trip() {
        for s in [OrgStatus::Active, OrgStatus::Suspended] {
            assert_eq!(OrgStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(OrgStatus::parse("Active"), None);
    }
}
