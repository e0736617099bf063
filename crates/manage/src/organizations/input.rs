//! What a caller sends to create or change an organization or a membership, and the rules of each
//! field. Unknown fields are refused, so a misspelt field is an error rather than silently
//! ignored.

use super::view::OrgRoleSchema;
use crate::ManageError;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use svc_domain::{ORG_ROLES, OrgSlug, RoleKey, RoleKind, TenantId, UserId};
use svc_store::WriteTx;
use utoipa::ToSchema;

/// Longest organization name accepted, in characters (after trimming).
pub const MAX_ORG_NAME_CHARS: usize = 200;
/// Largest `metadata` accepted: its compact JSON serialization, in bytes.
pub const MAX_METADATA_BYTES: usize = 4096;
/// Deepest `metadata` accepted: the object itself is level 1, every object or array inside it one
/// level more.
pub const MAX_METADATA_DEPTH: usize = 5;
/// Most roles one membership may name.
pub const MAX_MEMBER_ROLES: usize = 16;

/// Body of `POST /api/v1/organizations`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "name": "Acme Europe",
    "slug": "acme-eu",
    "metadata": {"plan": "enterprise", "region": "eu-west"}
}))]
pub struct NewOrganization {
    /// Display name: 1 to 200 characters after trimming, no control characters.
    #[schema(min_length = 1, max_length = 200, example = "Acme Europe")]
    pub name: String,
    /// Unique in the tenant: a lowercase DNS label (1 to 63 lowercase letters, digits and inner
    /// hyphens). Uppercase is refused, not folded.
    #[schema(
        min_length = 1,
        max_length = 63,
        pattern = "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$",
        example = "acme-eu"
    )]
    pub slug: String,
    /// Free JSON object kept with the organization (default `{}`): at most 4096 bytes serialized
    /// and 5 levels deep.
    #[serde(default)]
    #[schema(value_type = Option<Object>, nullable = false)]
    pub metadata: Option<Map<String, Value>>,
}

/// Body of `PATCH /api/v1/organizations/{id}`: absent fields stay as they are; `metadata`
/// replaces the whole object (`null` empties it).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "Acme Europe GmbH", "metadata": {"plan": "enterprise"}}))]
pub struct OrganizationPatch {
    /// New display name (same rule as on create; it cannot be removed).
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, nullable = false, min_length = 1, max_length = 200,
             example = "Acme Europe GmbH")]
    pub name: Option<Option<String>>,
    /// New slug (same rule as on create; it cannot be removed).
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, nullable = false, min_length = 1, max_length = 63,
             pattern = "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$", example = "acme-europe")]
    pub slug: Option<Option<String>>,
    /// New metadata, replacing the whole object (same limits as on create); `null` empties it.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Option<Map<String, Value>>>,
}

/// Body of `POST /api/v1/organizations/{id}/members`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"user_id": "usr_01jd2m8q3v7x9k4n6p0r5t2w8y", "roles": ["admin"]}))]
pub struct NewMember {
    /// The person joining: a user of this tenant that is not removed.
    #[schema(example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y")]
    pub user_id: String,
    /// The organization roles they hold (default `["member"]`): 1 to 16 of `owner`, `admin`,
    /// `member` and the tenant's custom organization roles.
    #[serde(default)]
    #[schema(value_type = Option<Vec<OrgRoleSchema>>, nullable = false, min_items = 1,
             max_items = 16, example = json!(["admin"]))]
    pub roles: Option<Vec<String>>,
}

/// Body of `PATCH /api/v1/organizations/{id}/members/{user_id}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"roles": ["owner", "admin"]}))]
pub struct MemberPatch {
    /// The roles the member holds from now on, replacing the previous ones: 1 to 16 of `owner`,
    /// `admin`, `member` and the tenant's custom organization roles.
    #[schema(value_type = Vec<OrgRoleSchema>, min_items = 1, max_items = 16,
             example = json!(["owner", "admin"]))]
    pub roles: Vec<String>,
}

/// A field that is present (even as `null`) deserialises to `Some(value)`; `serde(default)`
/// leaves an absent one `None`.
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// Rule: a name is 1 to 200 characters after trimming, without control characters.
pub(crate) fn check_name(raw: &str) -> Result<String, ManageError> {
    let name = raw.trim();
    let len = name.chars().count();
    if !(1..=MAX_ORG_NAME_CHARS).contains(&len) || name.chars().any(char::is_control) {
        return Err(ManageError::invalid(
            "name",
            format!(
                "name must be 1 to {MAX_ORG_NAME_CHARS} characters, without control characters"
            ),
        ));
    }
    Ok(name.to_owned())
}

/// Rule: a slug is an [`OrgSlug`] (a lowercase DNS label), taken as sent.
pub(crate) fn check_slug(raw: &str) -> Result<OrgSlug, ManageError> {
    OrgSlug::parse(raw).map_err(|e| ManageError::invalid("slug", e.to_string()))
}

/// Rule: metadata serializes to at most [`MAX_METADATA_BYTES`] and nests at most
/// [`MAX_METADATA_DEPTH`] levels.
pub(crate) fn check_metadata(
    metadata: Map<String, Value>,
) -> Result<Map<String, Value>, ManageError> {
    let levels = 1 + metadata.values().map(depth).max().unwrap_or(0);
    if levels > MAX_METADATA_DEPTH {
        return Err(ManageError::invalid(
            "metadata",
            format!("metadata may nest at most {MAX_METADATA_DEPTH} levels of objects and arrays"),
        ));
    }
    let size = serde_json::to_vec(&metadata).map_or(usize::MAX, |bytes| bytes.len());
    if size > MAX_METADATA_BYTES {
        return Err(ManageError::invalid(
            "metadata",
            format!("metadata must serialize to at most {MAX_METADATA_BYTES} bytes of JSON"),
        ));
    }
    Ok(metadata)
}

/// The nesting depth of a JSON value: scalars 0, an object or array one more than its deepest
/// member.
fn depth(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Rule: a membership names 1 to [`MAX_MEMBER_ROLES`] roles, each a built-in organization role
/// ([`ORG_ROLES`]) or another role key that is not built in; repeats collapse. Such a key must
/// name a custom organization role, which only the write transaction can tell
/// ([`custom_roles_refused`]).
pub(crate) fn check_roles(raw: &[String]) -> Result<BTreeSet<RoleKey>, ManageError> {
    let allowed = ORG_ROLES.join(", ");
    if raw.is_empty() || raw.len() > MAX_MEMBER_ROLES {
        return Err(ManageError::invalid(
            "roles",
            format!("roles must list 1 to {MAX_MEMBER_ROLES} roles, each one of: {allowed}"),
        ));
    }
    raw.iter()
        .map(|role| match RoleKey::parse(role) {
            Ok(key) if RoleKind::of_built_in(key.as_str()) != Some(RoleKind::Tenant) => Ok(key),
            _ => Err(ManageError::invalid(
                "roles",
                format!(
                    "{:?} is not an organization role; the roles are: {allowed}",
                    role.chars().take(64).collect::<String>()
                ),
            )),
        })
        .collect()
}

/// Rule: the keys of `roles` that are not built in name custom organization roles of `tenant`,
/// read in the caller's write transaction.
pub(crate) async fn custom_roles_refused(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    roles: &BTreeSet<RoleKey>,
) -> Result<(), ManageError> {
    let Some((key, kind)) =
        crate::roles::unassignable(tx, tenant, roles, RoleKind::Organization).await?
    else {
        return Ok(());
    };
    let what = match kind {
        Some(RoleKind::Tenant) => format!(
            "{:?} is a tenant role, not an organization role",
            key.as_str()
        ),
        _ => format!(
            "{:?} is not an organization role of this tenant",
            key.as_str()
        ),
    };
    Err(ManageError::invalid(
        "roles",
        format!(
            "{what}; the roles are: {} and the tenant's custom organization roles",
            ORG_ROLES.join(", ")
        ),
    ))
}

/// Rule: `user_id` names a user of this tenant; a malformed id reads as any other unknown one.
pub(crate) fn member_id_refused() -> ManageError {
    ManageError::invalid(
        "user_id",
        "user_id must be the id of a user of this tenant that is not removed",
    )
}

/// Parses `user_id` of a new membership ([`member_id_refused`] when malformed).
pub(crate) fn check_user_id(raw: &str) -> Result<UserId, ManageError> {
    UserId::parse(raw).map_err(|_| member_id_refused())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn field_of(err: &ManageError) -> &str {
        match err {
            ManageError::Invalid { field, .. } => field,
            other => panic!("not invalid: {other:?}"),
        }
    }

    #[test]
    fn names_are_trimmed_and_bounded() {
        assert_eq!(check_name("  Acme ").unwrap(), "Acme");
        for bad in ["", "   ", "a\u{7}b", "tab\there", &"x".repeat(201)] {
            assert_eq!(field_of(&check_name(bad).unwrap_err()), "name", "{bad:?}");
        }
        assert!(
            check_name(&"é".repeat(200)).is_ok(),
            "characters, not bytes"
        );
    }

    #[test]
    fn slugs_follow_the_domain_rule() {
        assert_eq!(check_slug("acme-eu").unwrap().as_str(), "acme-eu");
        for bad in ["Acme", "-a", "a b", ""] {
            assert_eq!(field_of(&check_slug(bad).unwrap_err()), "slug", "{bad:?}");
        }
    }

    #[test]
    fn metadata_is_bounded_in_size_and_depth() {
        let five = json!({"a": {"b": {"c": {"d": {"e": 1}}}}});
        let six = json!({"a": {"b": {"c": {"d": {"e": [1]}}}}});
        let obj = |v: Value| v.as_object().unwrap().clone();
        assert!(check_metadata(obj(five)).is_ok());
        assert_eq!(field_of(&check_metadata(obj(six)).unwrap_err()), "metadata");
        // {"k":"…"}: 8 bytes of punctuation and key around the string.
        let fits = json!({"k": "x".repeat(MAX_METADATA_BYTES - 8)});
        assert_eq!(serde_json::to_vec(&fits).unwrap().len(), MAX_METADATA_BYTES);
        assert!(check_metadata(obj(fits)).is_ok());
        let over = json!({"k": "x".repeat(MAX_METADATA_BYTES - 7)});
        assert_eq!(
            field_of(&check_metadata(obj(over)).unwrap_err()),
            "metadata"
        );
        assert!(check_metadata(Map::new()).is_ok());
    }

    #[test]
    fn roles_are_organization_role_keys() {
        let roles = |r: &[&str]| r.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let set = check_roles(&roles(&["member", "admin", "admin"])).unwrap();
        let names: Vec<&str> = set.iter().map(RoleKey::as_str).collect();
        assert_eq!(names, ["admin", "member"], "sorted, repeats collapsed");
        // A custom role's key passes here; the write transaction tells whether it is one.
        assert!(check_roles(&roles(&["billing.viewer", "member"])).is_ok());
        for bad in [
            roles(&[]),
            roles(&["tenant_admin"]),
            roles(&["Owner"]),
            vec!["member".to_owned(); 17],
        ] {
            let err = check_roles(&bad).unwrap_err();
            assert_eq!(field_of(&err), "roles", "{bad:?}");
            assert!(err.to_string().contains("owner, admin, member"), "{err}");
        }
    }

    #[test]
    fn bodies_refuse_unknown_members_and_tell_null_from_absent() {
        let err = serde_json::from_value::<NewOrganization>(
            json!({"name": "A", "slug": "a", "owner": "x"}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("unknown field `owner`"));
        let patch: OrganizationPatch = serde_json::from_value(json!({"metadata": null})).unwrap();
        assert_eq!(patch.metadata, Some(None));
        assert_eq!(patch.name, None);
        let patch: OrganizationPatch = serde_json::from_value(json!({})).unwrap();
        assert_eq!(patch, OrganizationPatch::default());
        assert!(serde_json::from_value::<MemberPatch>(json!({})).is_err());
        assert!(
            serde_json::from_value::<NewMember>(json!({"user_id": "usr_x", "role": "admin"}))
                .is_err()
        );
    }

    #[test]
    fn user_ids_that_do_not_parse_are_refused_like_unknown_ones() {
        let err = check_user_id("not-an-id").unwrap_err();
        assert_eq!(err.to_string(), member_id_refused().to_string());
    }
}
