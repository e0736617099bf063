//! What a caller sends to create or change a role or to set an application's roles, and the
//! rules of each field that need no database. Unknown fields are refused, so a misspelt field is
//! an error rather than silently ignored.

use super::{MAX_APPLICATION_ROLES, MAX_ROLE_PERMISSIONS, RoleKindSchema};
use crate::ManageError;
use serde::{Deserialize, Deserializer};
use svc_domain::{MAX_ACCESS_DESCRIPTION_CHARS, PermissionName, RoleKey, RoleKind};
use utoipa::ToSchema;

/// Body of `POST /api/v1/roles`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "key": "billing_viewer",
    "kind": "tenant",
    "description": "Reads invoices.",
    "permissions": [{"resource": "https://api.acme.example/billing", "name": "invoices:read"}]
}))]
pub struct NewRole {
    /// Unique in the tenant across both kinds, and not a built-in role's key: 1 to 64 lowercase
    /// letters, digits, `_`, `-` or `.`. It never changes.
    #[schema(
        min_length = 1,
        max_length = 64,
        pattern = "^[a-z0-9_.-]{1,64}$",
        example = "billing_viewer"
    )]
    pub key: String,
    /// Where the role is assigned; it never changes.
    #[schema(value_type = RoleKindSchema)]
    pub kind: String,
    /// What the role is for (default empty): at most 256 characters after trimming, no control
    /// characters.
    #[serde(default)]
    #[schema(value_type = Option<String>, nullable = false, max_length = 256,
             example = "Reads invoices.")]
    pub description: Option<String>,
    /// The permissions the role holds (default none): at most 100 entries, each a permission
    /// an API resource of the tenant defines; repeats collapse.
    #[serde(default)]
    #[schema(value_type = Option<Vec<RolePermissionInput>>, nullable = false, max_items = 100)]
    pub permissions: Option<Vec<RolePermissionInput>>,
}

/// A permission named by its API resource's identifier and its name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"resource": "https://api.acme.example/billing", "name": "invoices:read"}))]
pub struct RolePermissionInput {
    /// The identifier of an API resource of the tenant (exactly as registered).
    #[schema(example = "https://api.acme.example/billing")]
    pub resource: String,
    /// A permission that API resource defines.
    #[schema(example = "invoices:read")]
    pub name: String,
}

/// Body of `PATCH /api/v1/roles/{key}`: absent fields stay as they are; `permissions` replaces
/// the whole set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "permissions": [
        {"resource": "https://api.acme.example/billing", "name": "invoices:read"},
        {"resource": "https://api.acme.example/billing", "name": "invoices:export"}
    ]
}))]
pub struct RolePatch {
    /// New description (same rule as on create; `""` empties it). Custom roles only.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, nullable = false, max_length = 256,
             example = "Reads and exports invoices.")]
    pub description: Option<Option<String>>,
    /// The permissions the role holds from now on, replacing the previous ones (same rules as on
    /// create; `[]` takes every permission away).
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<RolePermissionInput>>, nullable = false, max_items = 100)]
    pub permissions: Option<Option<Vec<RolePermissionInput>>>,
}

/// Body of `PUT /api/v1/applications/{id}/roles`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"roles": ["billing_service"]}))]
pub struct ApplicationRolesInput {
    /// The roles the application holds from now on, replacing the previous ones: at most 16
    /// entries, each the key of a custom tenant role of the tenant; repeats collapse, and `[]`
    /// takes every role away.
    #[schema(max_items = 16, example = json!(["billing_service"]))]
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

/// At most this many characters of a caller's text are echoed in a refusal.
const ECHO_CHARS: usize = 100;

/// `raw`, cut for echoing in a refusal.
pub(super) fn echo(raw: &str) -> String {
    raw.chars().take(ECHO_CHARS).collect()
}

/// Rule: a key is a [`RoleKey`].
pub(super) fn check_key(raw: &str) -> Result<RoleKey, ManageError> {
    RoleKey::parse(raw).map_err(|e| ManageError::invalid("key", e.to_string()))
}

/// Rule: a kind is `tenant` or `organization`.
pub(super) fn check_kind(raw: &str) -> Result<RoleKind, ManageError> {
    RoleKind::parse(raw).ok_or_else(|| {
        ManageError::invalid(
            "kind",
            format!(
                "unknown kind {:?}; a role's kind is tenant or organization",
                echo(raw)
            ),
        )
    })
}

/// Rule: a description is at most [`MAX_ACCESS_DESCRIPTION_CHARS`] characters after trimming,
/// without control characters.
pub(super) fn check_description(raw: &str) -> Result<String, ManageError> {
    let description = raw.trim();
    if description.chars().count() > MAX_ACCESS_DESCRIPTION_CHARS
        || description.chars().any(char::is_control)
    {
        return Err(ManageError::invalid(
            "description",
            format!(
                "description must be at most {MAX_ACCESS_DESCRIPTION_CHARS} characters, without \
                 control characters"
            ),
        ));
    }
    Ok(description.to_owned())
}

/// Rule: `permissions` lists at most [`MAX_ROLE_PERMISSIONS`] entries, each naming a permission
/// with a well-formed name. Whether the resource and the permission exist is decided in the
/// write transaction ([`super::permissions::resolve`]).
pub(super) fn check_permissions(
    raw: &[RolePermissionInput],
) -> Result<Vec<(String, PermissionName)>, ManageError> {
    if raw.len() > MAX_ROLE_PERMISSIONS {
        return Err(ManageError::invalid(
            "permissions",
            format!("a role holds at most {MAX_ROLE_PERMISSIONS} permissions"),
        ));
    }
    raw.iter()
        .map(|p| match PermissionName::parse(&p.name) {
            Ok(name) => Ok((p.resource.clone(), name)),
            Err(e) => Err(ManageError::invalid(
                "permissions",
                format!("{:?} is not a permission: {e}", echo(&p.name)),
            )),
        })
        .collect()
}

/// Rule: an application's roles list at most [`MAX_APPLICATION_ROLES`] well-formed keys, none of
/// them built in (`tenant_admin` is for people: machines get management scopes as the tenant's
/// management application; the others are organization roles). Whether each names a custom
/// tenant role is decided in the write transaction.
pub(super) fn check_application_roles(
    raw: &[String],
) -> Result<std::collections::BTreeSet<RoleKey>, ManageError> {
    if raw.len() > MAX_APPLICATION_ROLES {
        return Err(ManageError::invalid(
            "roles",
            format!("roles may list at most {MAX_APPLICATION_ROLES} roles"),
        ));
    }
    raw.iter()
        .map(|role| {
            let key = RoleKey::parse(role).map_err(|_| {
                ManageError::invalid(
                    "roles",
                    format!(
                        "unknown role {:?}; applications hold custom tenant roles",
                        echo(role)
                    ),
                )
            })?;
            match RoleKind::of_built_in(key.as_str()) {
                None => Ok(key),
                Some(RoleKind::Tenant) => Err(ManageError::invalid(
                    "roles",
                    format!(
                        "{key} is for people; an application calls the management API as the \
                         tenant's management application instead"
                    ),
                )),
                Some(RoleKind::Organization) => Err(super::application::not_tenant_role(
                    &key,
                    Some(RoleKind::Organization),
                )),
            }
        })
        .collect()
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
    fn keys_kinds_and_descriptions_follow_their_rules() {
        assert_eq!(
            check_key("billing.viewer").unwrap().as_str(),
            "billing.viewer"
        );
        for bad in ["", "Billing", "a b", &"r".repeat(65)] {
            assert_eq!(field_of(&check_key(bad).unwrap_err()), "key", "{bad:?}");
        }
        assert_eq!(check_kind("tenant").unwrap(), RoleKind::Tenant);
        assert_eq!(check_kind("organization").unwrap(), RoleKind::Organization);
        for bad in ["", "Tenant", "org", &"x".repeat(5000)] {
            let err = check_kind(bad).unwrap_err();
            assert_eq!(field_of(&err), "kind");
            assert!(err.to_string().len() < 200, "the echo is cut: {err}");
        }
        assert_eq!(check_description("  Reads. ").unwrap(), "Reads.");
        assert_eq!(check_description("").unwrap(), "");
        assert!(check_description(&"é".repeat(256)).is_ok(), "characters");
        for bad in ["a\nb", "bell\u{7}", &"d".repeat(257)] {
            let err = check_description(bad).unwrap_err();
            assert_eq!(field_of(&err), "description", "{bad:?}");
        }
    }

    #[test]
    fn permission_names_and_counts_are_checked_before_any_lookup() {
        let p = |resource: &str, name: &str| RolePermissionInput {
            resource: resource.to_owned(),
            name: name.to_owned(),
        };
        let ok = check_permissions(&[p("https://a", "a:read"), p("https://a", "a:read")]).unwrap();
        assert_eq!(
            ok.len(),
            2,
            "repeats collapse later, with the resources resolved"
        );
        for bad in ["read", "openid", "a b:c", ""] {
            let err = check_permissions(&[p("https://a", bad)]).unwrap_err();
            assert_eq!(field_of(&err), "permissions", "{bad:?}");
        }
        let many = vec![p("https://a", "a:read"); MAX_ROLE_PERMISSIONS + 1];
        assert_eq!(
            field_of(&check_permissions(&many).unwrap_err()),
            "permissions"
        );
        assert!(check_permissions(&many[1..]).is_ok());
    }

    #[test]
    fn applications_hold_no_built_in_role() {
        let raw = |r: &[&str]| r.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let set = check_application_roles(&raw(&["b", "a", "b"])).unwrap();
        assert_eq!(set.len(), 2);
        for bad in [
            raw(&["tenant_admin"]),
            raw(&["owner"]),
            raw(&["member"]),
            raw(&["Billing"]),
            raw(&[""]),
            raw(&["a"; MAX_APPLICATION_ROLES + 1]),
        ] {
            let err = check_application_roles(&bad).unwrap_err();
            assert_eq!(field_of(&err), "roles", "{bad:?}");
        }
    }

    #[test]
    fn bodies_refuse_unknown_members_and_tell_null_from_absent() {
        let err = serde_json::from_value::<NewRole>(
            json!({"key": "a", "kind": "tenant", "built_in": true}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("unknown field `built_in`"));
        let patch: RolePatch = serde_json::from_value(json!({"description": null})).unwrap();
        assert_eq!(patch.description, Some(None));
        assert_eq!(patch.permissions, None);
        assert_eq!(
            serde_json::from_value::<RolePatch>(json!({})).unwrap(),
            RolePatch::default()
        );
        assert!(serde_json::from_value::<RolePatch>(json!({"kind": "tenant"})).is_err());
        assert!(
            serde_json::from_value::<RolePermissionInput>(
                json!({"resource": "r", "name": "a:b", "x": 1})
            )
            .is_err()
        );
        assert!(serde_json::from_value::<ApplicationRolesInput>(json!({})).is_err());
    }
}
