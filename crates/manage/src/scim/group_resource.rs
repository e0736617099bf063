//! The SCIM Group resource (RFC 7643 §4.2) of a group, what a directory sends to create or
//! replace one, and PATCH (RFC 7644 §3.5.2) of a group.
//!
//! A group is shown with `id`, `externalId`, `displayName`, `members` (each `{value, $ref,
//! type: "User"}`, people only: nested groups are not kept) and `meta` (with `version`).
//!
//! PATCH accepts what Entra ID and Okta send: `"op"` in any case (`"Add"`, `"Replace"`),
//! `add` / `remove` of `members` with a list of `{value}` objects (Entra's remove carries the
//! members to remove as its `value`), `remove` with the path `members[value eq "…"]`, path-less
//! operations whose `value` is an object of attributes (Okta's rename sends the group's own
//! `id` beside `displayName`, which is accepted when it is the same). Removing a member who is
//! not one changes nothing (a directory retrying must not fail). `displayName` cannot be
//! removed (it is required); `id`, `meta`, `schemas` are `mutability`; other names
//! `invalidPath`.

use super::ScimError;
use super::group_filter::GROUP_SCHEMA;
use super::resource::{lowered_with, time, version_tag};
use crate::Revision;
use scim_v2::filter::{AttrExp, AttrPath, CompValue, CompareOp, PatchPath, ValFilter};
use scim_v2::models::others::{OperationTarget, PatchOperation};
use serde_json::{Map, Value, json};
use svc_domain::MAX_SCIM_GROUP_NAME_CHARS;
use svc_store::ScimGroupRecord;

/// The version of a group (its last change of name, `externalId` or members).
pub(crate) fn revision(group: &ScimGroupRecord) -> Revision {
    Revision::of(group.group.updated_at)
}

/// The resource of `group`, whose location is `{base}/Groups/{id}`.
pub fn represent(group: &ScimGroupRecord, base: &str) -> Value {
    let g = &group.group;
    let mut out = Map::new();
    out.insert("schemas".into(), json!([GROUP_SCHEMA]));
    out.insert("id".into(), json!(g.id.as_str()));
    if let Some(external) = &g.external_id {
        out.insert("externalId".into(), json!(external));
    }
    out.insert("displayName".into(), json!(g.display_name));
    let members: Vec<Value> = group
        .members
        .iter()
        .map(|m| json!({"value": m.as_str(), "$ref": format!("{base}/Users/{m}"), "type": "User"}))
        .collect();
    out.insert("members".into(), Value::Array(members));
    out.insert(
        "meta".into(),
        json!({
            "resourceType": "Group",
            "created": time(g.created_at),
            "lastModified": time(g.updated_at),
            "location": format!("{base}/Groups/{}", g.id),
            "version": version_tag(revision(group)),
        }),
    );
    Value::Object(out)
}

/// What a directory asks a group to be: a create, the whole of a replace, or the result of a
/// PATCH applied to the current group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GroupInput {
    /// The resource's `id`, when given (a replace must name the group it replaces).
    pub id: Option<String>,
    pub display_name: String,
    pub external_id: Option<String>,
    /// Member ids as sent (not yet parsed or checked), without duplicates, in order.
    pub members: Vec<String>,
}

fn invalid(detail: impl Into<String>) -> ScimError {
    ScimError::InvalidValue(detail.into())
}

/// A `displayName` or `externalId`: a string of at most [`MAX_SCIM_GROUP_NAME_CHARS`]
/// characters without control characters, trimmed; empty is absent.
fn text(value: Option<&Value>, attr: &str) -> Result<Option<String>, ScimError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            let s = s.trim();
            if s.chars().count() > MAX_SCIM_GROUP_NAME_CHARS || s.chars().any(char::is_control) {
                return Err(invalid(format!(
                    "{attr} is at most {MAX_SCIM_GROUP_NAME_CHARS} characters, without control \
                     characters"
                )));
            }
            Ok((!s.is_empty()).then(|| s.to_owned()))
        }
        Some(_) => Err(invalid(format!("{attr} must be a string"))),
    }
}

fn display_name(value: Option<&Value>) -> Result<String, ScimError> {
    text(value, "displayName")?.ok_or_else(|| invalid("displayName is required"))
}

/// The member ids of a `members` value: a list of (or one) `{value, type?, display?, $ref?}`.
fn member_values(value: &Value) -> Result<Vec<String>, ScimError> {
    let items = match value {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items.as_slice(),
        Value::Object(_) => std::slice::from_ref(value),
        _ => return Err(invalid("members must be a list of {\"value\": id} objects")),
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let Value::Object(entry) = item else {
            return Err(invalid("each members entry is an object with a value"));
        };
        let entry = lowered_with(entry, GROUP_SCHEMA);
        if let Some(kind) = entry.get("type").and_then(Value::as_str)
            && !kind.eq_ignore_ascii_case("User")
        {
            return Err(invalid(
                "members are people (type User); groups do not nest here",
            ));
        }
        match entry.get("value") {
            Some(Value::String(id)) if !id.trim().is_empty() => out.push(id.trim().to_owned()),
            _ => return Err(invalid("each members entry needs a value (a User id)")),
        }
    }
    Ok(out)
}

fn push_unique(members: &mut Vec<String>, more: Vec<String>) {
    for m in more {
        if !members.contains(&m) {
            members.push(m);
        }
    }
}

/// Reads a Group resource sent by a directory.
pub(crate) fn read_input(body: &Value) -> Result<GroupInput, ScimError> {
    let Value::Object(raw) = body else {
        return Err(ScimError::InvalidSyntax(
            "a Group resource is a JSON object".into(),
        ));
    };
    let obj = lowered_with(raw, GROUP_SCHEMA);
    if let Some(schemas) = obj.get("schemas") {
        let listed = schemas.as_array().is_some_and(|items| {
            items.iter().any(|s| {
                s.as_str()
                    .is_some_and(|s| s.eq_ignore_ascii_case(GROUP_SCHEMA))
            })
        });
        if !listed {
            return Err(ScimError::InvalidSyntax(format!(
                "schemas must list {GROUP_SCHEMA}"
            )));
        }
    }
    let id = match obj.get("id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(invalid("id must be a string")),
    };
    let mut members = Vec::new();
    if let Some(value) = obj.get("members") {
        push_unique(&mut members, member_values(value)?);
    }
    Ok(GroupInput {
        id,
        display_name: display_name(obj.get("displayname"))?,
        external_id: text(obj.get("externalid"), "externalId")?,
        members,
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Add,
    Replace,
    Remove,
}

/// Applies PATCH `operations` to `group` (the current group as an input).
pub(crate) fn apply(
    group: &mut GroupInput,
    operations: &[PatchOperation],
) -> Result<(), ScimError> {
    for operation in operations {
        match operation {
            PatchOperation::Add(target) => apply_target(group, Kind::Add, target)?,
            PatchOperation::Replace(target) => apply_target(group, Kind::Replace, target)?,
            PatchOperation::Remove { path, value } => {
                apply_path(group, Kind::Remove, path, value.as_ref())?;
            }
        }
    }
    Ok(())
}

fn apply_target(
    group: &mut GroupInput,
    kind: Kind,
    target: &OperationTarget,
) -> Result<(), ScimError> {
    match target {
        OperationTarget::WithPath { path, value } => {
            let value = value
                .as_ref()
                .ok_or_else(|| invalid("add and replace need a value"))?;
            apply_path(group, kind, path, Some(value))
        }
        OperationTarget::WithoutPath { value } => {
            for (key, item) in lowered_with(value, GROUP_SCHEMA) {
                if key == "id" && item.as_str() == group.id.as_deref() {
                    continue; // Okta sends the group's own id beside a new displayName.
                }
                let path: PatchPath = key.parse().map_err(|_| {
                    ScimError::InvalidPath(format!("{key:?} is not an attribute path"))
                })?;
                apply_path(group, kind, &path, Some(&item))?;
            }
            Ok(())
        }
    }
}

/// The canonical name of a Group attribute a PATCH may change.
fn attribute(path: &AttrPath) -> Result<&'static str, ScimError> {
    if let Some(uri) = &path.uri
        && !uri.eq_ignore_ascii_case(GROUP_SCHEMA)
    {
        return Err(ScimError::InvalidPath(format!(
            "{path}: only the core Group schema is supported"
        )));
    }
    match (
        path.name.to_ascii_lowercase().as_str(),
        path.sub_attr.as_deref(),
    ) {
        ("displayname", None) => Ok("displayName"),
        ("externalid", None) => Ok("externalId"),
        ("members", None) => Ok("members"),
        ("id" | "meta" | "schemas", _) => Err(ScimError::Mutability(format!(
            "{} cannot be changed by a client",
            path.name
        ))),
        _ => Err(ScimError::InvalidPath(format!(
            "{path} is not an attribute of a Group here"
        ))),
    }
}

fn apply_path(
    group: &mut GroupInput,
    kind: Kind,
    path: &PatchPath,
    value: Option<&Value>,
) -> Result<(), ScimError> {
    match path {
        PatchPath::Attr(attr) => match (attribute(attr)?, kind) {
            ("displayName", Kind::Remove) => Err(invalid(
                "displayName is required and cannot be removed; replace it instead",
            )),
            ("displayName", _) => {
                group.display_name = display_name(value)?;
                Ok(())
            }
            ("externalId", Kind::Remove) => {
                group.external_id = None;
                Ok(())
            }
            ("externalId", _) => {
                group.external_id = text(value, "externalId")?;
                Ok(())
            }
            (_, Kind::Add) => {
                push_unique(
                    &mut group.members,
                    member_values(value.unwrap_or(&Value::Null))?,
                );
                Ok(())
            }
            (_, Kind::Replace) => {
                group.members.clear();
                push_unique(
                    &mut group.members,
                    member_values(value.unwrap_or(&Value::Null))?,
                );
                Ok(())
            }
            (_, Kind::Remove) => {
                match value {
                    // Entra ID: `{"op": "Remove", "path": "members", "value": [{"value": id}]}`.
                    Some(v) if !v.is_null() => {
                        let gone = member_values(v)?;
                        group.members.retain(|m| !gone.contains(m));
                    }
                    _ => group.members.clear(),
                }
                Ok(())
            }
        },
        PatchPath::Value(vp) => {
            if attribute(&vp.attr)? != "members" {
                return Err(ScimError::InvalidPath(format!(
                    "{} is not multi-valued",
                    vp.attr
                )));
            }
            if vp.sub_attr.is_some() || kind != Kind::Remove {
                return Err(ScimError::InvalidPath(format!(
                    "{path}: members are added or replaced with path members, removed with \
                     members[value eq \"…\"]"
                )));
            }
            let mut kept = Vec::with_capacity(group.members.len());
            for member in std::mem::take(&mut group.members) {
                if !matches(&vp.filter, &member)? {
                    kept.push(member);
                }
            }
            group.members = kept;
            Ok(())
        }
    }
}

/// Whether the member `id` matches a `members[…]` filter (on `value`, or `type eq "User"`).
fn matches(filter: &ValFilter, id: &str) -> Result<bool, ScimError> {
    Ok(match filter {
        ValFilter::Attr(AttrExp::Present(path)) => {
            sub(path)?;
            true
        }
        ValFilter::Attr(AttrExp::Comparison(path, op, value)) => {
            let actual = match sub(path)? {
                "value" => id.to_owned(),
                _ => "user".to_owned(),
            };
            let CompValue::Str(wanted) = value else {
                return Err(ScimError::InvalidFilter(format!(
                    "{path}: compare with a string"
                )));
            };
            let wanted = if actual == "user" {
                wanted.to_ascii_lowercase()
            } else {
                wanted.clone()
            };
            match op {
                CompareOp::Eq => actual == wanted,
                CompareOp::Ne => actual != wanted,
                CompareOp::Co => actual.contains(&wanted),
                CompareOp::Sw => actual.starts_with(&wanted),
                CompareOp::Ew => actual.ends_with(&wanted),
                CompareOp::Gt => actual > wanted,
                CompareOp::Ge => actual >= wanted,
                CompareOp::Lt => actual < wanted,
                CompareOp::Le => actual <= wanted,
            }
        }
        ValFilter::Not(inner) => !matches(inner, id)?,
        ValFilter::And(items) => {
            let mut all = true;
            for item in items.as_slice() {
                all &= matches(item, id)?;
            }
            all
        }
        ValFilter::Or(items) => {
            let mut any = false;
            for item in items.as_slice() {
                any |= matches(item, id)?;
            }
            any
        }
    })
}

/// The sub-attribute of `members` a value filter tests: `value` or `type`.
fn sub(path: &AttrPath) -> Result<&'static str, ScimError> {
    match (
        path.uri.is_none(),
        path.sub_attr.is_none(),
        path.name.to_ascii_lowercase().as_str(),
    ) {
        (true, true, "value") => Ok("value"),
        (true, true, "type") => Ok("type"),
        _ => Err(ScimError::InvalidFilter(format!(
            "{path} is not a sub-attribute of members a filter can test"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(body: Value) -> Vec<PatchOperation> {
        super::super::patch::read(&body).unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn current() -> GroupInput {
        GroupInput {
            id: Some("scimg_1".into()),
            display_name: "Sales".into(),
            external_id: None,
            members: vec!["usr_a".into(), "usr_b".into()],
        }
    }

    const OP: &str = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

    #[test]
    fn entra_payloads_apply() {
        let mut g = current();
        apply(
            &mut g,
            &ops(json!({"schemas": [OP], "Operations": [
                {"op": "Add", "path": "members", "value": [{"value": "usr_c"}, {"value": "usr_a"}]},
                {"op": "Remove", "path": "members", "value": [{"value": "usr_b"}]},
                {"op": "Replace", "path": "displayName", "value": "Sales EU"},
            ]})),
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(g.members, ["usr_a", "usr_c"]);
        assert_eq!(g.display_name, "Sales EU");
    }

    #[test]
    fn okta_payloads_apply() {
        let mut g = current();
        apply(
            &mut g,
            &ops(json!({"schemas": [OP], "Operations": [
                {"op": "remove", "path": "members[value eq \"usr_a\"]"},
                {"op": "replace", "value": {"id": "scimg_1", "displayName": "Renamed"}},
                {"op": "add", "value": {"members": [{"value": "usr_z", "display": "Z"}]}},
            ]})),
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(g.members, ["usr_b", "usr_z"]);
        assert_eq!(g.display_name, "Renamed");
    }

    #[test]
    fn refused_operations() {
        for (body, check) in [
            (
                json!({"op": "remove", "path": "displayName"}),
                "invalidValue",
            ),
            (
                json!({"op": "replace", "value": {"id": "other"}}),
                "mutability",
            ),
            (
                json!({"op": "add", "path": "owner", "value": "x"}),
                "invalidPath",
            ),
            (
                json!({"op": "add", "path": "members", "value": [{"value": "g", "type": "Group"}]}),
                "invalidValue",
            ),
            (
                json!({"op": "replace", "path": "members[value eq \"usr_a\"]", "value": {}}),
                "invalidPath",
            ),
        ] {
            let mut g = current();
            let result = apply(&mut g, &ops(json!({"schemas": [OP], "Operations": [body]})));
            let kind = match result {
                Err(ScimError::InvalidValue(_)) => "invalidValue",
                Err(ScimError::Mutability(_)) => "mutability",
                Err(ScimError::InvalidPath(_)) => "invalidPath",
                other => panic!("{other:?}"),
            };
            assert_eq!(kind, check);
        }
    }

    #[test]
    fn inputs_are_read_and_checked() {
        let g = read_input(&json!({"schemas": [GROUP_SCHEMA], "DisplayName": " Ops ",
            "members": [{"value": "usr_a"}, {"value": "usr_a"}], "meta": {"x": 1}}))
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(g.display_name, "Ops");
        assert_eq!(g.members, ["usr_a"]);
        assert!(matches!(
            read_input(&json!({"members": []})),
            Err(ScimError::InvalidValue(_))
        ));
        assert!(matches!(
            read_input(&json!({"displayName": "x".repeat(MAX_SCIM_GROUP_NAME_CHARS + 1)})),
            Err(ScimError::InvalidValue(_))
        ));
        assert!(matches!(
            read_input(&json!({"schemas": ["urn:x"], "displayName": "a"})),
            Err(ScimError::InvalidSyntax(_))
        ));
    }
}
