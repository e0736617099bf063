//! The body of `POST /api/v1/invitations` and the rules its fields follow.

use crate::ManageError;
use serde::Deserialize;
use std::collections::BTreeSet;
use svc_domain::{Email, ORG_MEMBER, OrganizationId, RoleKey, RoleKind};
use utoipa::ToSchema;

/// Default lifetime of an invitation link: 7 days.
pub const DEFAULT_EXPIRY_SECS: u32 = 7 * 86_400;
/// Shortest lifetime a caller may ask for: 5 minutes.
pub const MIN_EXPIRY_SECS: u32 = 300;
/// Longest lifetime a caller may ask for: 30 days.
pub const MAX_EXPIRY_SECS: u32 = 30 * 86_400;
/// The most entries `roles` may list (repeats included), as for members and people.
pub const MAX_INVITATION_ROLES: usize = 16;

/// Body of `POST /api/v1/invitations`. Unknown members are refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "email": "ada@example.com",
    "organization_id": "org_01jd2n4k6m8p0r2t4v6x8z0b2d",
    "roles": ["admin"],
    "expires_in_secs": 604800
}))]
pub struct NewInvitation {
    /// The address to invite; only a person with this address (case-insensitive) may accept.
    #[schema(example = "ada@example.com", max_length = 254)]
    pub email: String,
    /// The organization to join (active, of this tenant); absent to join the tenant itself.
    #[schema(nullable = false, example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d")]
    pub organization_id: Option<String>,
    /// The roles given on acceptance (1 to 16, repeats collapse). With `organization_id`:
    /// organization roles (`owner`, `admin`, `member` or a custom organization role), default
    /// `["member"]`. Without: tenant roles (`tenant_admin` or a custom tenant role), default
    /// none.
    #[schema(nullable = false, max_items = 16, value_type = Option<Vec<String>>)]
    pub roles: Option<Vec<String>>,
    /// How long the link works, in seconds: 300 (5 minutes) to 2592000 (30 days); default
    /// 604800 (7 days).
    #[schema(
        nullable = false,
        minimum = 300,
        maximum = 2_592_000,
        example = 604_800
    )]
    pub expires_in_secs: Option<u32>,
}

/// Rule: the address is one a person could have (normalised as user addresses are).
pub(super) fn check_email(raw: &str) -> Result<Email, ManageError> {
    Email::parse(raw).map_err(|e| ManageError::invalid("email", e.to_string()))
}

/// Rule: the lifetime is within [`MIN_EXPIRY_SECS`]..=[`MAX_EXPIRY_SECS`].
pub(super) fn check_expiry(raw: Option<u32>) -> Result<u32, ManageError> {
    let secs = raw.unwrap_or(DEFAULT_EXPIRY_SECS);
    if (MIN_EXPIRY_SECS..=MAX_EXPIRY_SECS).contains(&secs) {
        Ok(secs)
    } else {
        Err(ManageError::invalid(
            "expires_in_secs",
            format!(
                "expires_in_secs must be {MIN_EXPIRY_SECS} (5 minutes) to {MAX_EXPIRY_SECS} (30 \
                 days)"
            ),
        ))
    }
}

/// Rule: an organization id that is not one names no organization of this tenant (the same
/// answer as an unknown one, another tenant's or a suspended one).
pub(super) fn organization_refused() -> ManageError {
    ManageError::invalid(
        "organization_id",
        "organization_id must be the id of an active organization of this tenant",
    )
}

/// Parses `organization_id` ([`organization_refused`] when malformed).
pub(super) fn check_organization(raw: Option<&str>) -> Result<Option<OrganizationId>, ManageError> {
    raw.map(|raw| OrganizationId::parse(raw).map_err(|_| organization_refused()))
        .transpose()
}

/// Rule: `roles` lists at most [`MAX_INVITATION_ROLES`] role keys, none of them a built-in role
/// of the other `kind`; an organization invitation holds at least one (default `member`), a
/// tenant invitation may hold none (the default). Custom keys are checked against the tenant's
/// roles in the write transaction.
pub(super) fn check_roles(
    raw: Option<&[String]>,
    kind: RoleKind,
) -> Result<BTreeSet<RoleKey>, ManageError> {
    let Some(raw) = raw else {
        // The defaults: an ordinary member, or no tenant role.
        return Ok(match kind {
            RoleKind::Organization => RoleKey::parse(ORG_MEMBER).into_iter().collect(),
            RoleKind::Tenant => BTreeSet::new(),
        });
    };
    if raw.is_empty() && kind == RoleKind::Organization {
        return Err(ManageError::invalid(
            "roles",
            "an organization invitation gives at least one role (default [\"member\"])",
        ));
    }
    if raw.len() > MAX_INVITATION_ROLES {
        return Err(ManageError::invalid(
            "roles",
            format!("roles may list at most {MAX_INVITATION_ROLES} roles"),
        ));
    }
    raw.iter()
        .map(|role| match RoleKey::parse(role) {
            Ok(key) if RoleKind::of_built_in(key.as_str()).is_none_or(|k| k == kind) => Ok(key),
            Ok(key) => Err(wrong_kind(&key, kind)),
            Err(_) => Err(unknown(role, kind)),
        })
        .collect()
}

/// The refusal of a role of the wrong kind.
pub(super) fn wrong_kind(key: &RoleKey, wanted: RoleKind) -> ManageError {
    let what = match wanted {
        RoleKind::Organization => "a tenant role, not an organization role",
        RoleKind::Tenant => {
            "an organization role; without organization_id the roles are tenant roles"
        }
    };
    ManageError::invalid("roles", format!("{:?} is {what}", key.as_str()))
}

/// The refusal of a key that names no role of the tenant.
pub(super) fn unknown(raw: &str, kind: RoleKind) -> ManageError {
    let allowed = match kind {
        RoleKind::Organization => "owner, admin, member and the tenant's custom organization roles",
        RoleKind::Tenant => "tenant_admin and the tenant's custom tenant roles",
    };
    ManageError::invalid(
        "roles",
        format!(
            "unknown role {:?}; the roles are {allowed}",
            raw.chars().take(64).collect::<String>()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(err: ManageError) -> String {
        match err {
            ManageError::Invalid { field, .. } => field,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    fn keys(set: &BTreeSet<RoleKey>) -> Vec<&str> {
        set.iter().map(RoleKey::as_str).collect()
    }

    #[test]
    fn roles_default_by_target_and_refuse_the_other_kind() {
        let raw = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let org = RoleKind::Organization;
        let tenant = RoleKind::Tenant;
        assert_eq!(keys(&check_roles(None, org).unwrap()), ["member"]);
        assert_eq!(field(check_roles(Some(&[]), org).unwrap_err()), "roles");
        assert!(check_roles(None, tenant).unwrap().is_empty());
        assert!(check_roles(Some(&[]), tenant).unwrap().is_empty());
        assert_eq!(
            keys(&check_roles(Some(&raw(&["admin", "admin", "billing"])), org).unwrap()),
            ["admin", "billing"]
        );
        assert_eq!(
            keys(&check_roles(Some(&raw(&["tenant_admin"])), tenant).unwrap()),
            ["tenant_admin"]
        );
        for (bad, kind) in [
            (raw(&["tenant_admin"]), org),
            (raw(&["owner"]), tenant),
            (raw(&["Owner"]), org),
            (raw(&[""]), tenant),
            (raw(&["member"; 17]), org),
        ] {
            assert_eq!(field(check_roles(Some(&bad), kind).unwrap_err()), "roles");
        }
        let message = check_roles(Some(&["x".repeat(5000)]), org)
            .unwrap_err()
            .to_string();
        assert!(message.len() < 300, "the echo is cut: {message}");
    }

    #[test]
    fn expiry_defaults_to_a_week_within_five_minutes_and_thirty_days() {
        assert_eq!(check_expiry(None).unwrap(), 604_800);
        assert_eq!(check_expiry(Some(300)).unwrap(), 300);
        assert_eq!(check_expiry(Some(2_592_000)).unwrap(), 2_592_000);
        for bad in [0, 299, 2_592_001, u32::MAX] {
            assert_eq!(
                field(check_expiry(Some(bad)).unwrap_err()),
                "expires_in_secs"
            );
        }
    }

    #[test]
    fn organization_ids_parse_or_are_refused_naming_the_field() {
        assert_eq!(check_organization(None).unwrap(), None);
        assert!(
            check_organization(Some("org_01jd2n4k6m8p0r2t4v6x8z0b2d"))
                .unwrap()
                .is_some()
        );
        for bad in ["", "usr_01jd2n4k6m8p0r2t4v6x8z0b2d", "org_x"] {
            assert_eq!(
                field(check_organization(Some(bad)).unwrap_err()),
                "organization_id"
            );
        }
    }
}
