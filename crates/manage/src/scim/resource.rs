//! The SCIM User resource (RFC 7643 §4.1) of a person, and what a directory sends to create or
//! replace one.
//!
//! A person is shown with `id`, `externalId`, `userName` (their profile's, else their email),
//! `name.givenName` / `name.familyName`, `displayName` (the full name), one `emails` entry (the
//! sign-in address, `type: "work"`, primary), `active` (not suspended) and `meta` (with
//! `version`, the weak entity tag of the revision), and the enterprise User extension (RFC 7643
//! §4.3: `employeeNumber`, `costCenter`, `organization`, `division`, `department`,
//! `manager.value`) when the directory gave any, its URN then listed in `schemas`. Nothing else
//! is stored, so nothing else is shown or advertised in `/Schemas`.
//!
//! Reading a resource is lenient where directories differ (RFC 7643 §2.1: attribute names are
//! case-insensitive; Entra ID sends `"active": "False"`), strict where a value would be lost:
//! attributes that cannot be stored are ignored only if read-only by the RFC (`meta`,
//! `groups`), and `password` is refused (`mutability`): passwords are never provisioned. The
//! read-only `groups` a person is shown with is added by `super::groups::with_groups`.

use super::ScimError;
use super::filter::USER_SCHEMA;
use crate::Revision;
use serde_json::{Map, Value, json};
use svc_domain::{EnterpriseUser, UserStatus};
use svc_store::ScimUser;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Longest `userName` / `externalId` (and each enterprise attribute), in characters.
pub const MAX_IDENTIFIER_CHARS: usize = 256;

/// The enterprise User extension's URN (RFC 7643 §4.3).
pub(crate) const ENTERPRISE_SCHEMA: &str =
    "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/// The extension's attributes as a resource shows them (`manager` as `{"value": …}`).
fn enterprise_object(enterprise: &EnterpriseUser) -> Value {
    let mut out = Map::new();
    for (name, value) in [
        ("employeeNumber", &enterprise.employee_number),
        ("costCenter", &enterprise.cost_center),
        ("organization", &enterprise.organization),
        ("division", &enterprise.division),
        ("department", &enterprise.department),
    ] {
        if let Some(value) = value {
            out.insert(name.into(), json!(value));
        }
    }
    if let Some(manager) = &enterprise.manager {
        out.insert("manager".into(), json!({"value": manager}));
    }
    Value::Object(out)
}

/// Reads the extension object a directory sent: names case-insensitive, each a string (empty is
/// absent), `manager` as `{"value": …}` or, as Entra ID's PATCH sends it, the bare id.
fn read_enterprise(value: Option<&Value>) -> Result<EnterpriseUser, ScimError> {
    let object = match value {
        None | Some(Value::Null) => return Ok(EnterpriseUser::default()),
        Some(Value::Object(object)) => lowered_with(object, ENTERPRISE_SCHEMA),
        Some(_) => return Err(invalid(format!("{ENTERPRISE_SCHEMA} must be an object"))),
    };
    let manager = match object.get("manager") {
        None | Some(Value::Null) => None,
        Some(Value::Object(manager)) => {
            let manager = lowered(manager);
            text_of(manager.get("value"), "manager.value")?
        }
        Some(other) => text_of(Some(other), "manager")?,
    };
    if let Some(unknown) = object.keys().find(|k| {
        !matches!(
            k.as_str(),
            "employeenumber"
                | "costcenter"
                | "organization"
                | "division"
                | "department"
                | "manager"
                // Some clients repeat the resource's `schemas` inside the extension: ignored.
                | "schemas"
        )
    }) {
        return Err(invalid(format!(
            "{unknown} is not an attribute of {ENTERPRISE_SCHEMA}"
        )));
    }
    Ok(EnterpriseUser {
        employee_number: text_of(object.get("employeenumber"), "employeeNumber")?,
        cost_center: text_of(object.get("costcenter"), "costCenter")?,
        organization: text_of(object.get("organization"), "organization")?,
        division: text_of(object.get("division"), "division")?,
        department: text_of(object.get("department"), "department")?,
        manager,
    })
}

/// One enterprise string attribute, checked like an identifier.
fn text_of(value: Option<&Value>, shown: &str) -> Result<Option<String>, ScimError> {
    let attr = format!("{ENTERPRISE_SCHEMA}:{shown}");
    identifier(opt_string(value, &attr)?, &attr)
}

/// The version of a person as SCIM sees them: the later of their record's and their SCIM
/// attributes' last change.
pub(crate) fn revision(person: &ScimUser) -> Revision {
    Revision::of(changed_at(person))
}

pub(crate) fn changed_at(person: &ScimUser) -> OffsetDateTime {
    match &person.profile {
        Some(p) if p.updated_at > person.user.updated_at => p.updated_at,
        _ => person.user.updated_at,
    }
}

/// The weak entity tag of a revision (`W/"r…"`), as `meta.version` and `ETag`.
pub fn version_tag(revision: Revision) -> String {
    format!("W/{}", revision.etag())
}

/// The `userName` a person has: their profile's, else their email.
pub(crate) fn user_name(person: &ScimUser) -> &str {
    person
        .profile
        .as_ref()
        .map_or(person.user.email.as_str(), |p| p.user_name.as_str())
}

pub(crate) fn time(at: OffsetDateTime) -> String {
    at.format(&Rfc3339).unwrap_or_default()
}

/// The resource of `person`, whose location is `{base}/Users/{id}`.
pub fn represent(person: &ScimUser, base: &str) -> Value {
    let user = &person.user;
    let mut out = Map::new();
    let enterprise = person
        .profile
        .as_ref()
        .map(|p| &p.enterprise)
        .filter(|e| !e.is_empty());
    if enterprise.is_some() {
        out.insert("schemas".into(), json!([USER_SCHEMA, ENTERPRISE_SCHEMA]));
    } else {
        out.insert("schemas".into(), json!([USER_SCHEMA]));
    }
    out.insert("id".into(), json!(user.id.as_str()));
    if let Some(external) = person.profile.as_ref().and_then(|p| p.external_id.as_ref()) {
        out.insert("externalId".into(), json!(external));
    }
    out.insert("userName".into(), json!(user_name(person)));
    let mut name = Map::new();
    if let Some(given) = &user.given_name {
        name.insert("givenName".into(), json!(given));
    }
    if let Some(family) = &user.family_name {
        name.insert("familyName".into(), json!(family));
    }
    if !name.is_empty() {
        out.insert("name".into(), Value::Object(name));
    }
    if let Some(display) = &user.name {
        out.insert("displayName".into(), json!(display));
    }
    out.insert(
        "emails".into(),
        json!([{"value": user.email.as_str(), "type": "work", "primary": true}]),
    );
    out.insert("active".into(), json!(user.status != UserStatus::Suspended));
    if let Some(enterprise) = enterprise {
        out.insert(ENTERPRISE_SCHEMA.into(), enterprise_object(enterprise));
    }
    out.insert(
        "meta".into(),
        json!({
            "resourceType": "User",
            "created": time(user.created_at),
            "lastModified": time(changed_at(person)),
            "location": format!("{base}/Users/{}", user.id),
            "version": version_tag(revision(person)),
        }),
    );
    Value::Object(out)
}

/// What a directory asks a person to be (a create, or the whole of a replace).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct UserInput {
    /// The resource's `id`, when given (a replace must name the person it replaces).
    pub id: Option<String>,
    pub user_name: String,
    pub external_id: Option<String>,
    pub given_name: Option<String>,
    pub family_name: Option<String>,
    pub display_name: Option<String>,
    /// The primary (else first) address of `emails`.
    pub email: Option<String>,
    pub active: Option<bool>,
    /// The enterprise extension's attributes (empty when absent: a replace clears them).
    pub enterprise: EnterpriseUser,
}

fn invalid(detail: impl Into<String>) -> ScimError {
    ScimError::InvalidValue(detail.into())
}

/// `value` as an optional string (`null` is absent).
fn opt_string(value: Option<&Value>, attr: &str) -> Result<Option<String>, ScimError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(invalid(format!("{attr} must be a string"))),
    }
}

/// A boolean, or the strings `"True"` / `"False"` (any case) that Entra ID sends.
pub(crate) fn boolean(value: &Value, attr: &str) -> Result<bool, ScimError> {
    match value {
        Value::Bool(b) => Ok(*b),
        Value::String(s) if s.eq_ignore_ascii_case("true") => Ok(true),
        Value::String(s) if s.eq_ignore_ascii_case("false") => Ok(false),
        _ => Err(invalid(format!("{attr} must be a boolean"))),
    }
}

/// The members of `object` by lowercased name (RFC 7643 §2.1: names are case-insensitive);
/// the URN of the core schema may prefix them.
pub(crate) fn lowered(object: &Map<String, Value>) -> Map<String, Value> {
    lowered_with(object, USER_SCHEMA)
}

/// [`lowered`], for a resource of the core `schema` (whose URN may prefix the names).
pub(crate) fn lowered_with(object: &Map<String, Value>, schema: &str) -> Map<String, Value> {
    let prefix = format!("{}:", schema.to_ascii_lowercase());
    object
        .iter()
        .map(|(k, v)| {
            let k = k.to_ascii_lowercase();
            let k = k.strip_prefix(&prefix).map(str::to_owned).unwrap_or(k);
            (k, v.clone())
        })
        .collect()
}

fn identifier(value: Option<String>, attr: &str) -> Result<Option<String>, ScimError> {
    match value {
        Some(v) if v.chars().count() > MAX_IDENTIFIER_CHARS || v.chars().any(char::is_control) => {
            Err(invalid(format!(
                "{attr} is at most {MAX_IDENTIFIER_CHARS} characters, without control characters"
            )))
        }
        other => Ok(other.map(|v| v.trim().to_owned())),
    }
}

/// Reads a User resource sent by a directory.
pub(crate) fn read_input(body: &Value) -> Result<UserInput, ScimError> {
    let Value::Object(raw) = body else {
        return Err(ScimError::InvalidSyntax(
            "a User resource is a JSON object".into(),
        ));
    };
    let obj = lowered(raw);
    if let Some(schemas) = obj.get("schemas") {
        let listed = schemas.as_array().is_some_and(|items| {
            items.iter().any(|s| {
                s.as_str()
                    .is_some_and(|s| s.eq_ignore_ascii_case(USER_SCHEMA))
            })
        });
        if !listed {
            return Err(ScimError::InvalidSyntax(format!(
                "schemas must list {USER_SCHEMA}"
            )));
        }
    }
    if obj.contains_key("password") {
        return Err(ScimError::Mutability(
            "passwords are not provisioned through SCIM; the person sets their own".into(),
        ));
    }
    let id = match obj.get("id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(invalid("id must be a string")),
    };
    let user_name = identifier(opt_string(obj.get("username"), "userName")?, "userName")?
        .ok_or_else(|| invalid("userName is required"))?;
    let external_id = identifier(
        opt_string(obj.get("externalid"), "externalId")?,
        "externalId",
    )?;
    let (given_name, family_name) = match obj.get("name") {
        None | Some(Value::Null) => (None, None),
        Some(Value::Object(name)) => {
            let name = lowered(name);
            (
                opt_string(name.get("givenname"), "name.givenName")?,
                opt_string(name.get("familyname"), "name.familyName")?,
            )
        }
        Some(_) => return Err(invalid("name must be an object")),
    };
    let display_name = opt_string(obj.get("displayname"), "displayName")?;
    let email = match obj.get("emails") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => primary_email(items)?,
        Some(_) => return Err(invalid("emails must be an array")),
    };
    let active = match obj.get("active") {
        None | Some(Value::Null) => None,
        Some(v) => Some(boolean(v, "active")?),
    };
    let enterprise = read_enterprise(obj.get(&ENTERPRISE_SCHEMA.to_ascii_lowercase()))?;
    Ok(UserInput {
        id,
        user_name,
        external_id,
        given_name,
        family_name,
        display_name,
        email,
        active,
        enterprise,
    })
}

/// The primary address of `emails`, else the first one.
fn primary_email(items: &[Value]) -> Result<Option<String>, ScimError> {
    let mut first = None;
    for item in items {
        let Value::Object(entry) = item else {
            return Err(invalid("each emails entry is an object"));
        };
        let entry = lowered(entry);
        let Some(value) = opt_string(entry.get("value"), "emails.value")? else {
            continue;
        };
        let primary = match entry.get("primary") {
            None | Some(Value::Null) => false,
            Some(v) => boolean(v, "emails.primary")?,
        };
        if primary {
            return Ok(Some(value));
        }
        first.get_or_insert(value);
    }
    Ok(first)
}

/// Which attributes of a resource to return (RFC 7644 §3.4.2.5, §3.9).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Projection {
    /// Only these (`id` and `schemas` always), lowercased, `name` or `name.sub`.
    pub attributes: Vec<String>,
    /// All but these.
    pub excluded: Vec<String>,
}

impl Projection {
    /// From the comma-separated query parameters.
    pub fn parse(attributes: Option<&str>, excluded: Option<&str>) -> Self {
        let extension = format!("{}:", ENTERPRISE_SCHEMA.to_ascii_lowercase());
        let split = |raw: Option<&str>| -> Vec<String> {
            let prefixes = [USER_SCHEMA, super::group_filter::GROUP_SCHEMA]
                .map(|schema| format!("{}:", schema.to_ascii_lowercase()));
            raw.unwrap_or_default()
                .split(',')
                .map(|a| a.trim().to_ascii_lowercase())
                .filter(|a| !a.is_empty())
                .map(|a| {
                    // `urn:…:enterprise:2.0:User:department` is the extension object's
                    // `department`: spelled like a sub-attribute here.
                    if let Some(attr) = a.strip_prefix(extension.as_str()) {
                        return format!("{}.{attr}", &extension[..extension.len() - 1]);
                    }
                    prefixes
                        .iter()
                        .find_map(|p| a.strip_prefix(p.as_str()))
                        .map(str::to_owned)
                        .unwrap_or_else(|| a.clone())
                })
                .collect()
        };
        Self {
            attributes: split(attributes),
            excluded: split(excluded),
        }
    }

    /// Applies the projection to a represented resource.
    pub fn apply(&self, resource: Value) -> Value {
        let Value::Object(object) = resource else {
            return resource;
        };
        let always = |k: &str| matches!(k, "id" | "schemas");
        let mut out = Map::new();
        for (key, value) in object {
            let lower = key.to_ascii_lowercase();
            if always(&lower) {
                out.insert(key, value);
                continue;
            }
            if !self.attributes.is_empty() {
                if self.attributes.contains(&lower) {
                    out.insert(key, value);
                } else if let Value::Object(sub) = &value {
                    let wanted: Map<String, Value> = sub
                        .iter()
                        .filter(|(s, _)| {
                            self.attributes
                                .contains(&format!("{lower}.{}", s.to_ascii_lowercase()))
                        })
                        .map(|(s, v)| (s.clone(), v.clone()))
                        .collect();
                    if !wanted.is_empty() {
                        out.insert(key, Value::Object(wanted));
                    }
                } else if let Value::Array(items) = &value {
                    // `emails.value`: each entry keeps only the sub-attributes asked for.
                    let kept: Vec<Value> = items
                        .iter()
                        .filter_map(|item| {
                            let Value::Object(entry) = item else {
                                return None;
                            };
                            let wanted: Map<String, Value> = entry
                                .iter()
                                .filter(|(s, _)| {
                                    self.attributes
                                        .contains(&format!("{lower}.{}", s.to_ascii_lowercase()))
                                })
                                .map(|(s, v)| (s.clone(), v.clone()))
                                .collect();
                            (!wanted.is_empty()).then_some(Value::Object(wanted))
                        })
                        .collect();
                    if !kept.is_empty() {
                        out.insert(key, Value::Array(kept));
                    }
                }
                continue;
            }
            if self.excluded.contains(&lower) {
                continue;
            }
            let value = match value {
                Value::Object(sub) => Value::Object(
                    sub.into_iter()
                        .filter(|(s, _)| {
                            !self
                                .excluded
                                .contains(&format!("{lower}.{}", s.to_ascii_lowercase()))
                        })
                        .collect(),
                ),
                other => other,
            };
            out.insert(key, value);
        }
        Value::Object(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entra_and_okta_shapes_are_read() {
        let input = read_input(&json!({
            "schemas": [USER_SCHEMA],
            "UserName": "ada@contoso.com",
            "externalId": "e-1",
            "name": {"GivenName": "Ada", "familyName": "Lovelace"},
            "emails": [{"value": "home@x.org", "type": "home"},
                       {"value": "ada@contoso.com", "type": "work", "primary": "True"}],
            "active": "False",
            "urn:ietf:params:scim:schemas:core:2.0:User:displayName": "Ada L",
        }))
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(input.user_name, "ada@contoso.com");
        assert_eq!(input.email.as_deref(), Some("ada@contoso.com"));
        assert_eq!(input.active, Some(false));
        assert_eq!(input.given_name.as_deref(), Some("Ada"));
        assert_eq!(input.display_name.as_deref(), Some("Ada L"));
    }

    #[test]
    fn passwords_missing_user_names_and_bad_types_are_refused() {
        assert!(matches!(
            read_input(&json!({"userName": "a", "password": "x"})),
            Err(ScimError::Mutability(_))
        ));
        assert!(matches!(
            read_input(&json!({"name": {}})),
            Err(ScimError::InvalidValue(_))
        ));
        assert!(matches!(
            read_input(&json!({"userName": "a", "active": "maybe"})),
            Err(ScimError::InvalidValue(_))
        ));
        assert!(matches!(
            read_input(&json!({"schemas": ["urn:x"], "userName": "a"})),
            Err(ScimError::InvalidSyntax(_))
        ));
        assert!(matches!(
            read_input(&json!([])),
            Err(ScimError::InvalidSyntax(_))
        ));
    }

    #[test]
    fn projections_keep_id_and_what_was_asked() {
        let resource = json!({"schemas": [USER_SCHEMA], "id": "1", "userName": "a",
            "name": {"givenName": "A", "familyName": "B"},
            "emails": [{"value": "a@b.c", "type": "work"}], "active": true});
        let only = Projection::parse(Some("userName,name.familyName,emails.value"), None)
            .apply(resource.clone());
        assert_eq!(
            only,
            json!({"schemas": [USER_SCHEMA], "id": "1", "userName": "a",
                   "name": {"familyName": "B"}, "emails": [{"value": "a@b.c"}]})
        );
        let without = Projection::parse(None, Some("emails,name.givenName,id")).apply(resource);
        assert_eq!(
            without,
            json!({"schemas": [USER_SCHEMA], "id": "1", "userName": "a",
                   "name": {"familyName": "B"}, "active": true})
        );
    }
}
