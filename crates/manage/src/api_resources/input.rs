//! What a caller sends to create or change an API resource, and the rules of each field. Unknown
//! fields are refused, so a misspelt field is an error rather than silently ignored.

use crate::ManageError;
use crate::applications::check_audience_uri;
use serde::{Deserialize, Deserializer};
use std::collections::BTreeSet;
use svc_domain::{
    MAX_ACCESS_DESCRIPTION_CHARS, MAX_RESOURCE_PERMISSIONS, Permission, PermissionName,
};
use utoipa::ToSchema;

/// Longest API resource name accepted, in characters (after trimming).
pub const MAX_API_RESOURCE_NAME_CHARS: usize = 128;
/// The most API resources one tenant may register.
pub const MAX_API_RESOURCES_PER_TENANT: usize = 100;

/// Body of `POST /api/v1/api-resources`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "identifier": "https://api.example.com",
    "name": "Invoices API",
    "permissions": [
        {"name": "invoices:read", "description": "Read invoices"},
        {"name": "invoices:write", "description": "Create and change invoices"}
    ]
}))]
pub struct NewApiResource {
    /// The audience of the tokens issued for the API (RFC 8707 `resource`): an absolute URI
    /// without fragment, at most 2048 characters, unique in the tenant, kept exactly as sent.
    /// It can never be changed.
    #[schema(min_length = 1, max_length = 2048, example = "https://api.example.com")]
    pub identifier: String,
    /// Display name: 1 to 128 characters after trimming, no control characters.
    #[schema(min_length = 1, max_length = 128, example = "Invoices API")]
    pub name: String,
    /// The permissions the API defines (default none): at most 100, names unique.
    #[serde(default)]
    #[schema(value_type = Option<Vec<NewPermission>>, nullable = false, max_items = 100)]
    pub permissions: Option<Vec<NewPermission>>,
}

/// A permission an API resource defines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "invoices:read", "description": "Read invoices"}))]
pub struct NewPermission {
    /// A scope token `<resource>:<action>`, both parts non-empty: printable ASCII without spaces,
    /// quotes or backslashes, at most 128 characters, never an OpenID Connect scope.
    #[schema(
        min_length = 3,
        max_length = 128,
        pattern = "^[!#-9;-\\[\\]-~]+:[!#-\\[\\]-~]+$",
        example = "invoices:read"
    )]
    pub name: String,
    /// What it allows, for consent pages and administrators (default empty): at most 256
    /// characters after trimming, no control characters.
    #[serde(default)]
    #[schema(value_type = Option<String>, nullable = false, max_length = 256,
             example = "Read invoices")]
    pub description: Option<String>,
}

/// Body of `PATCH /api/v1/api-resources/{id}`: absent fields stay as they are; `permissions`
/// replaces the whole list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "name": "Invoices API v2",
    "permissions": [{"name": "invoices:read", "description": "Read invoices"}]
}))]
pub struct ApiResourcePatch {
    /// The identifier cannot change: accepted only when it equals the stored one.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, nullable = false, min_length = 1,
             max_length = 2048, example = "https://api.example.com")]
    pub identifier: Option<Option<String>>,
    /// New display name (same rule as on create; it cannot be removed).
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, nullable = false, min_length = 1, max_length = 128,
             example = "Invoices API v2")]
    pub name: Option<Option<String>>,
    /// The permissions from now on, replacing the whole list (same rules as on create; `[]`
    /// removes them all). A permission left out is removed from every role holding it.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<NewPermission>>, nullable = false, max_items = 100)]
    pub permissions: Option<Option<Vec<NewPermission>>>,
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

/// Rule: an identifier is an audience URI, the rule an application's `api_audience` follows.
pub(crate) fn check_identifier(raw: &str) -> Result<String, ManageError> {
    check_audience_uri("identifier", raw)
}

/// Rule: a name is 1 to 128 characters after trimming, without control characters.
pub(crate) fn check_name(raw: &str) -> Result<String, ManageError> {
    let name = raw.trim();
    let len = name.chars().count();
    if !(1..=MAX_API_RESOURCE_NAME_CHARS).contains(&len) || name.chars().any(char::is_control) {
        return Err(ManageError::invalid(
            "name",
            format!(
                "name must be 1 to {MAX_API_RESOURCE_NAME_CHARS} characters, without control \
                 characters"
            ),
        ));
    }
    Ok(name.to_owned())
}

/// Rule: at most [`MAX_RESOURCE_PERMISSIONS`] permissions, each named by a
/// [`PermissionName`], no name twice, each description at most
/// [`MAX_ACCESS_DESCRIPTION_CHARS`] characters after trimming without control characters.
/// Returns them sorted by name, as the store keeps them.
pub(crate) fn check_permissions(raw: &[NewPermission]) -> Result<Vec<Permission>, ManageError> {
    const FIELD: &str = "permissions";
    if raw.len() > MAX_RESOURCE_PERMISSIONS {
        return Err(ManageError::invalid(
            FIELD,
            format!("an API resource defines at most {MAX_RESOURCE_PERMISSIONS} permissions"),
        ));
    }
    let mut seen = BTreeSet::new();
    let mut permissions = Vec::with_capacity(raw.len());
    for (i, permission) in raw.iter().enumerate() {
        let name = PermissionName::parse(&permission.name)
            .map_err(|e| ManageError::invalid(FIELD, format!("permissions[{i}].name: {e}")))?;
        if !seen.insert(name.clone()) {
            return Err(ManageError::invalid(
                FIELD,
                format!(
                    "permissions[{i}].name ({name}) is listed twice; define each permission once"
                ),
            ));
        }
        let description = permission.description.as_deref().unwrap_or_default().trim();
        if description.chars().count() > MAX_ACCESS_DESCRIPTION_CHARS
            || description.chars().any(char::is_control)
        {
            return Err(ManageError::invalid(
                FIELD,
                format!(
                    "permissions[{i}].description must be at most {MAX_ACCESS_DESCRIPTION_CHARS} \
                     characters, without control characters"
                ),
            ));
        }
        permissions.push(Permission {
            name,
            description: description.to_owned(),
        });
    }
    permissions.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(permissions)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn refusal(err: ManageError) -> (String, String) {
        match err {
            ManageError::Invalid { field, message } => (field, message),
            other => panic!("not invalid: {other:?}"),
        }
    }

    fn permission(name: &str, description: Option<&str>) -> NewPermission {
        NewPermission {
            name: name.to_owned(),
            description: description.map(str::to_owned),
        }
    }

    #[test]
    fn identifiers_are_absolute_uris_kept_as_sent() {
        for good in [
            "https://api.example.com",
            "https://API.example.com/v2/",
            "urn:acme:billing",
        ] {
            assert_eq!(check_identifier(good).unwrap(), good);
        }
        let long = format!("https://api.example.com/{}", "a".repeat(2048));
        for bad in [
            "api.example.com",
            "/v1",
            "https://a.example/#x",
            "https://a b",
            "",
            &long,
        ] {
            let (field, message) = refusal(check_identifier(bad).unwrap_err());
            assert_eq!(field, "identifier", "{bad:?}");
            assert!(message.contains("absolute URI"), "{message}");
        }
    }

    #[test]
    fn names_are_trimmed_and_bounded() {
        assert_eq!(check_name("  Invoices API ").unwrap(), "Invoices API");
        assert!(
            check_name(&"é".repeat(128)).is_ok(),
            "characters, not bytes"
        );
        for bad in ["", "   ", "a\u{7}b", "tab\there", &"x".repeat(129)] {
            assert_eq!(refusal(check_name(bad).unwrap_err()).0, "name", "{bad:?}");
        }
    }

    #[test]
    fn permissions_are_sorted_unique_and_bounded() {
        let checked = check_permissions(&[
            permission("invoices:write", Some("  Change invoices ")),
            permission("invoices:read", None),
        ])
        .unwrap();
        let names: Vec<&str> = checked.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["invoices:read", "invoices:write"]);
        assert_eq!(checked[0].description, "");
        assert_eq!(checked[1].description, "Change invoices");

        let (field, message) =
            refusal(check_permissions(&[permission("invoices", None)]).unwrap_err());
        assert_eq!(field, "permissions");
        assert!(message.contains("permissions[0].name") && message.contains("<resource>:<action>"));
        let twice = [permission("a:b", None), permission("a:b", Some("again"))];
        let (_, message) = refusal(check_permissions(&twice).unwrap_err());
        assert!(
            message.contains("permissions[1].name (a:b) is listed twice"),
            "{message}"
        );
        let long = "d".repeat(MAX_ACCESS_DESCRIPTION_CHARS + 1);
        for description in [long.as_str(), "line\nbreak", "nul\u{0}"] {
            let bad = [permission("a:b", Some(description))];
            let (_, message) = refusal(check_permissions(&bad).unwrap_err());
            assert!(message.contains("permissions[0].description"), "{message}");
        }
        let fits = "é".repeat(MAX_ACCESS_DESCRIPTION_CHARS);
        assert!(check_permissions(&[permission("a:b", Some(&fits))]).is_ok());
        let many: Vec<NewPermission> = (0..=MAX_RESOURCE_PERMISSIONS)
            .map(|i| permission(&format!("a:p{i}"), None))
            .collect();
        let (_, message) = refusal(check_permissions(&many).unwrap_err());
        assert!(message.contains("at most 100"), "{message}");
        assert!(check_permissions(&many[..MAX_RESOURCE_PERMISSIONS]).is_ok());
        for reserved in ["openid", "offline_access"] {
            assert!(check_permissions(&[permission(reserved, None)]).is_err());
        }
    }

    #[test]
    fn bodies_refuse_unknown_members_and_tell_null_from_absent() {
        let err = serde_json::from_value::<NewApiResource>(
            json!({"identifier": "https://a.example", "name": "A", "scopes": []}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("unknown field `scopes`"));
        let err = serde_json::from_value::<NewPermission>(json!({"name": "a:b", "label": "x"}))
            .unwrap_err();
        assert!(err.to_string().contains("unknown field `label`"));
        let patch: ApiResourcePatch = serde_json::from_value(json!({"permissions": null})).unwrap();
        assert_eq!(patch.permissions, Some(None));
        assert_eq!(patch.name, None);
        let patch: ApiResourcePatch = serde_json::from_value(json!({})).unwrap();
        assert_eq!(patch, ApiResourcePatch::default());
    }
}
