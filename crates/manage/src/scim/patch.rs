//! SCIM PATCH (RFC 7644 §3.5.2) of a User: the operations are applied to the person's current
//! resource, and the result is then written like a replace (one rule set for both).
//!
//! What directories really send is accepted: `"op": "Replace"` in any of the RFC's spellings
//! (parsed by `scim_v2`), path-less operations whose `value` is an object of attributes (keys
//! may themselves be paths, `"name.givenName"`), `"active": "False"` as a string, the enterprise
//! extension by path (`urn:…:enterprise:2.0:User:department`, `…:manager` with the bare id as
//! Entra ID sends it, `…:manager.value`) or as a whole object in a path-less `value`, and
//! operations on core attributes RFC 7643 defines that are not stored here, which change
//! nothing, as on POST and PUT.
//!
//! Refused: `id`, `meta`, `schemas` and `groups` (`mutability`: server-owned or read-only),
//! `password` (`mutability`: never provisioned), removing a required attribute (`userName`,
//! `emails`, `active`: `invalidValue`), names no schema defines (`invalidPath`), a value path that selects nothing for `replace` or `remove` (`noTarget`).

use super::ScimError;
use super::resource::{ENTERPRISE_SCHEMA, boolean};
use scim_v2::filter::{AttrExp, AttrPath, CompValue, CompareOp, PatchPath, ValFilter};
use scim_v2::models::others::{OperationTarget, PatchOp, PatchOperation};
use serde_json::{Map, Value};

/// Most operations one PATCH may carry.
pub const MAX_OPERATIONS: usize = 100;

const PATCH_OP_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

/// Parses a PATCH body.
pub(crate) fn read(body: &Value) -> Result<Vec<PatchOperation>, ScimError> {
    let op: PatchOp = serde_json::from_value(body.clone())
        .map_err(|e| ScimError::InvalidSyntax(format!("not a SCIM PatchOp: {e}")))?;
    if !op
        .schemas
        .iter()
        .any(|s| s.eq_ignore_ascii_case(PATCH_OP_SCHEMA))
    {
        return Err(ScimError::InvalidSyntax(format!(
            "schemas must list {PATCH_OP_SCHEMA}"
        )));
    }
    if op.operations.is_empty() || op.operations.len() > MAX_OPERATIONS {
        return Err(ScimError::InvalidValue(format!(
            "a PATCH carries 1 to {MAX_OPERATIONS} operations"
        )));
    }
    Ok(op.operations)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Add,
    Replace,
    Remove,
}

/// Applies `operations` to `resource` (a represented User).
pub(crate) fn apply(
    resource: &mut Map<String, Value>,
    operations: &[PatchOperation],
) -> Result<(), ScimError> {
    for operation in operations {
        match operation {
            PatchOperation::Add(target) => apply_target(resource, Kind::Add, target)?,
            PatchOperation::Replace(target) => apply_target(resource, Kind::Replace, target)?,
            PatchOperation::Remove { path, .. } => apply_path(resource, Kind::Remove, path, None)?,
        }
    }
    Ok(())
}

fn apply_target(
    resource: &mut Map<String, Value>,
    kind: Kind,
    target: &OperationTarget,
) -> Result<(), ScimError> {
    match target {
        OperationTarget::WithPath { path, value } => {
            let value = value
                .clone()
                .ok_or_else(|| ScimError::InvalidValue("add and replace need a value".into()))?;
            apply_path(resource, kind, path, Some(value))
        }
        OperationTarget::WithoutPath { value } => {
            for (key, item) in value {
                // A whole extension object (`{"urn:…:enterprise:2.0:User": {…}}`).
                if key.eq_ignore_ascii_case(ENTERPRISE_SCHEMA) {
                    let Value::Object(attrs) = item else {
                        return Err(ScimError::InvalidValue(format!(
                            "{ENTERPRISE_SCHEMA} must be an object"
                        )));
                    };
                    for (name, v) in attrs {
                        if !is_schemas(name) {
                            set_enterprise(resource, kind, name, None, Some(v.clone()))?;
                        }
                    }
                    continue;
                }
                let path: PatchPath = key.parse().map_err(|_| {
                    ScimError::InvalidPath(format!("{key:?} is not an attribute path"))
                })?;
                apply_path(resource, kind, &path, Some(item.clone()))?;
            }
            Ok(())
        }
    }
}

/// Whether `name` is `schemas`, which clients (scim2-tester's models) put in an extension's
/// object though it belongs to the resource: ignored there.
fn is_schemas(name: &str) -> bool {
    name.eq_ignore_ascii_case("schemas")
}

/// The canonical name of an attribute of the enterprise extension (RFC 7643 §4.3).
fn enterprise_attribute(name: &str) -> Result<&'static str, ScimError> {
    Ok(match name.to_ascii_lowercase().as_str() {
        "employeenumber" => "employeeNumber",
        "costcenter" => "costCenter",
        "organization" => "organization",
        "division" => "division",
        "department" => "department",
        "manager" => "manager",
        _ => {
            return Err(ScimError::InvalidPath(format!(
                "{name} is not an attribute of {ENTERPRISE_SCHEMA}"
            )));
        }
    })
}

/// Applies one operation to the extension object of `resource` (made when absent). Of
/// `manager`, only `value` is stored: its read-only `displayName` and `$ref` change nothing.
fn set_enterprise(
    resource: &mut Map<String, Value>,
    kind: Kind,
    name: &str,
    sub: Option<&str>,
    value: Option<Value>,
) -> Result<(), ScimError> {
    let name = enterprise_attribute(name)?;
    match (name, sub.map(str::to_ascii_lowercase).as_deref()) {
        (_, None) | ("manager", Some("value")) => {}
        ("manager", Some("displayname" | "$ref")) => return Ok(()),
        (_, Some(other)) => {
            return Err(ScimError::InvalidPath(format!(
                "{ENTERPRISE_SCHEMA}:{name}.{other} is not an attribute"
            )));
        }
    }
    let slot = resource
        .entry(ENTERPRISE_SCHEMA)
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    let Value::Object(object) = slot else {
        return Ok(());
    };
    match (kind, value) {
        (Kind::Remove, _) => {
            object.remove(name);
        }
        (_, Some(value)) => {
            object.insert(name.to_owned(), value);
        }
        (_, None) => {
            return Err(ScimError::InvalidValue(
                "add and replace need a value".into(),
            ));
        }
    }
    Ok(())
}

/// User attributes RFC 7643 §4.1 defines that are not stored here (lowercased).
const NOT_STORED: [&str; 14] = [
    "nickname",
    "profileurl",
    "title",
    "usertype",
    "preferredlanguage",
    "locale",
    "timezone",
    "phonenumbers",
    "ims",
    "photos",
    "addresses",
    "entitlements",
    "roles",
    "x509certificates",
];

/// The canonical name of a top-level User attribute; `None` for one the RFC defines (core or
/// enterprise extension) that is not stored here, which an operation may name and changes
/// nothing, as on POST and PUT: Entra ID's default mappings send `title`, `phoneNumbers[…]` or
/// `…:enterprise:2.0:User:department` alongside the `active` of a deprovisioning, and refusing
/// the whole PATCH would leave the person active. Names no schema defines are `invalidPath`.
fn attribute(path: &AttrPath) -> Result<Option<&'static str>, ScimError> {
    if let Some(uri) = &path.uri {
        if uri.eq_ignore_ascii_case(ENTERPRISE_SCHEMA) {
            return Ok(None);
        }
        if !uri.eq_ignore_ascii_case(super::filter::USER_SCHEMA) {
            return Err(ScimError::InvalidPath(format!(
                "{path}: only the core User schema is supported"
            )));
        }
    }
    let lowered = path.name.to_ascii_lowercase();
    if NOT_STORED.contains(&lowered.as_str()) {
        return Ok(None);
    }
    Ok(Some(match lowered.as_str() {
        "username" => "userName",
        "externalid" => "externalId",
        "displayname" => "displayName",
        "active" => "active",
        "name" => "name",
        "emails" => "emails",
        "id" | "meta" | "schemas" | "groups" => {
            return Err(ScimError::Mutability(format!(
                "{} cannot be changed by a client",
                path.name
            )));
        }
        "password" => {
            return Err(ScimError::Mutability(
                "passwords are not provisioned through SCIM".into(),
            ));
        }
        _ => {
            return Err(ScimError::InvalidPath(format!(
                "{path} is not an attribute of a User here"
            )));
        }
    }))
}

/// The canonical name of a stored sub-attribute; `None` for one RFC 7643 defines that is not
/// stored (`name.formatted`, `name.middleName`, `emails.display`…), ignored like the above.
fn sub_attribute(parent: &str, sub: &str) -> Result<Option<&'static str>, ScimError> {
    Ok(Some(match (parent, sub.to_ascii_lowercase().as_str()) {
        ("name", "givenname") => "givenName",
        ("name", "familyname") => "familyName",
        ("emails", "value") => "value",
        ("emails", "type") => "type",
        ("emails", "primary") => "primary",
        ("name", "formatted" | "middlename" | "honorificprefix" | "honorificsuffix")
        | ("emails", "display") => return Ok(None),
        _ => {
            return Err(ScimError::InvalidPath(format!(
                "{parent}.{sub} is not an attribute of a User here"
            )));
        }
    }))
}

fn apply_path(
    resource: &mut Map<String, Value>,
    kind: Kind,
    path: &PatchPath,
    value: Option<Value>,
) -> Result<(), ScimError> {
    match path {
        // The whole extension: `add`/`replace` set the sub-attributes given (others are left,
        // RFC 7644 §3.5.2.1, §3.5.2.3), `remove` clears it.
        PatchPath::Attr(attr)
            if attr.sub_attr.is_none()
                && attr.to_string().eq_ignore_ascii_case(ENTERPRISE_SCHEMA) =>
        {
            match (kind, value) {
                (Kind::Remove, _) => {
                    resource.remove(ENTERPRISE_SCHEMA);
                    Ok(())
                }
                (_, Some(Value::Object(attrs))) => {
                    for (name, v) in attrs {
                        if !is_schemas(&name) {
                            set_enterprise(resource, kind, &name, None, Some(v))?;
                        }
                    }
                    Ok(())
                }
                _ => Err(ScimError::InvalidValue(format!(
                    "{ENTERPRISE_SCHEMA} takes an object of its attributes"
                ))),
            }
        }
        PatchPath::Attr(attr)
            if attr
                .uri
                .as_deref()
                .is_some_and(|u| u.eq_ignore_ascii_case(ENTERPRISE_SCHEMA)) =>
        {
            set_enterprise(resource, kind, &attr.name, attr.sub_attr.as_deref(), value)
        }
        PatchPath::Attr(attr) => {
            let Some(name) = attribute(attr)? else {
                return Ok(());
            };
            match &attr.sub_attr {
                None => set_attribute(resource, kind, name, value),
                Some(sub) => match sub_attribute(name, sub)? {
                    Some(sub) => set_sub_attribute(resource, kind, name, sub, value),
                    None => Ok(()),
                },
            }
        }
        PatchPath::Value(vp) => {
            let Some(name) = attribute(&vp.attr)? else {
                return Ok(());
            };
            if name != "emails" {
                return Err(ScimError::InvalidPath(format!(
                    "{} is not multi-valued",
                    vp.attr
                )));
            }
            let sub = match vp.sub_attr.as_deref() {
                None => None,
                Some(s) => match sub_attribute(name, s)? {
                    Some(sub) => Some(sub),
                    None => return Ok(()),
                },
            };
            let Some(Value::Array(items)) = resource.get_mut(name) else {
                return Err(ScimError::NoTarget(format!("{path} selects nothing")));
            };
            let mut matched = false;
            let mut kept = Vec::with_capacity(items.len());
            for mut item in items.drain(..) {
                if !matches(&item, &vp.filter)? {
                    kept.push(item);
                    continue;
                }
                matched = true;
                match (kind, sub, &value, &mut item) {
                    (Kind::Remove, None, _, _) => continue,
                    (Kind::Remove, Some(sub), _, Value::Object(entry)) => {
                        entry.remove(sub);
                    }
                    (_, Some(sub), Some(v), Value::Object(entry)) => {
                        entry.insert(sub.to_owned(), v.clone());
                    }
                    (_, None, Some(Value::Object(v)), Value::Object(entry)) => {
                        for (k, v) in v {
                            entry.insert(k.clone(), v.clone());
                        }
                    }
                    _ => return Err(ScimError::InvalidValue(format!("{path}: unusable value"))),
                }
                kept.push(item);
            }
            *items = kept;
            if !matched && kind != Kind::Add {
                return Err(ScimError::NoTarget(format!("{path} selects nothing")));
            }
            Ok(())
        }
    }
}

fn set_attribute(
    resource: &mut Map<String, Value>,
    kind: Kind,
    name: &str,
    value: Option<Value>,
) -> Result<(), ScimError> {
    let Some(value) = value.filter(|_| kind != Kind::Remove) else {
        if matches!(name, "userName" | "emails" | "active") {
            // Required here (see `discovery`): a person always has them.
            return Err(ScimError::InvalidValue(format!(
                "{name} is required and cannot be removed; replace it instead"
            )));
        }
        resource.remove(name);
        return Ok(());
    };
    match (name, value) {
        ("active", v) => {
            resource.insert(name.into(), Value::Bool(boolean(&v, "active")?));
        }
        ("name", Value::Object(subs)) => {
            // A complex value sets the sub-attributes it names (RFC 7644 §3.5.2.1, §3.5.2.3).
            let mut merged = match resource.remove(name) {
                Some(Value::Object(existing)) if kind == Kind::Add || kind == Kind::Replace => {
                    existing
                }
                _ => Map::new(),
            };
            for (k, v) in subs {
                if let Some(sub) = sub_attribute(name, &k)? {
                    merged.insert(sub.to_owned(), v);
                }
            }
            resource.insert(name.into(), Value::Object(merged));
        }
        ("emails", v) => {
            let entries = match v {
                Value::Array(items) => items,
                Value::Object(_) => vec![v],
                _ => return Err(ScimError::InvalidValue("emails must be an array".into())),
            };
            let mut list = match (kind, resource.remove(name)) {
                (Kind::Add, Some(Value::Array(existing))) => existing,
                _ => Vec::new(),
            };
            // A new primary address takes the place of the old one (RFC 7643 §2.4: at most one
            // primary); one added without `primary` becomes it too, since a person has one
            // address here and the directory just sent the one it wants.
            if !entries.is_empty() {
                for item in &mut list {
                    if let Value::Object(entry) = item {
                        entry.remove("primary");
                    }
                }
            }
            let mut entries = entries;
            if let Some(Value::Object(first)) = entries.first_mut()
                && !entries_have_primary(first)
            {
                first.insert("primary".into(), Value::Bool(true));
            }
            list.splice(0..0, entries);
            resource.insert(name.into(), Value::Array(list));
        }
        (_, v) => {
            resource.insert(name.into(), v);
        }
    }
    Ok(())
}

fn entries_have_primary(entry: &Map<String, Value>) -> bool {
    entry
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("primary") && boolean(v, "primary").unwrap_or(false))
}

fn set_sub_attribute(
    resource: &mut Map<String, Value>,
    kind: Kind,
    name: &str,
    sub: &str,
    value: Option<Value>,
) -> Result<(), ScimError> {
    let slot = resource.entry(name.to_owned()).or_insert_with(|| {
        if name == "emails" {
            Value::Array(vec![Value::Object(Map::new())])
        } else {
            Value::Object(Map::new())
        }
    });
    let mut targets: Vec<&mut Map<String, Value>> = match slot {
        Value::Object(obj) => vec![obj],
        Value::Array(items) => items
            .iter_mut()
            .filter_map(|i| match i {
                Value::Object(o) => Some(o),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    for target in &mut targets {
        match (&value, kind) {
            (Some(v), Kind::Add | Kind::Replace) => {
                target.insert(sub.to_owned(), v.clone());
            }
            _ => {
                target.remove(sub);
            }
        }
    }
    Ok(())
}

/// Whether an `emails` entry matches a value filter.
fn matches(item: &Value, filter: &ValFilter) -> Result<bool, ScimError> {
    Ok(match filter {
        ValFilter::Attr(AttrExp::Present(path)) => field(item, path).is_some_and(|v| !v.is_null()),
        ValFilter::Attr(AttrExp::Comparison(path, op, expected)) => {
            compare(field(item, path), op, expected)
        }
        ValFilter::Not(inner) => !matches(item, inner)?,
        ValFilter::And(items) => {
            for f in items.as_slice() {
                if !matches(item, f)? {
                    return Ok(false);
                }
            }
            true
        }
        ValFilter::Or(items) => {
            for f in items.as_slice() {
                if matches(item, f)? {
                    return Ok(true);
                }
            }
            false
        }
    })
}

fn field<'a>(item: &'a Value, path: &AttrPath) -> Option<&'a Value> {
    let Value::Object(entry) = item else {
        return None;
    };
    entry
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(&path.name))
        .map(|(_, v)| v)
}

fn compare(actual: Option<&Value>, op: &CompareOp, expected: &CompValue) -> bool {
    match (actual, expected) {
        (Some(Value::String(a)), CompValue::Str(e)) => {
            let (a, e) = (a.to_ascii_lowercase(), e.to_ascii_lowercase());
            match op {
                CompareOp::Eq => a == e,
                CompareOp::Ne => a != e,
                CompareOp::Co => a.contains(&e),
                CompareOp::Sw => a.starts_with(&e),
                CompareOp::Ew => a.ends_with(&e),
                CompareOp::Gt => a > e,
                CompareOp::Ge => a >= e,
                CompareOp::Lt => a < e,
                CompareOp::Le => a <= e,
            }
        }
        (Some(v), CompValue::True | CompValue::False) => {
            let wanted = matches!(expected, CompValue::True);
            let actual = boolean(v, "primary").unwrap_or(false);
            match op {
                CompareOp::Eq => actual == wanted,
                CompareOp::Ne => actual != wanted,
                _ => false,
            }
        }
        (None | Some(Value::Null), _) => matches!(op, CompareOp::Ne),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Map<String, Value> {
        match json!({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "id": "usr_1",
            "userName": "ada@contoso.com", "name": {"givenName": "Ada"},
            "emails": [{"value": "ada@contoso.com", "type": "work", "primary": true}],
            "active": true})
        {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    fn patch(ops: Value) -> Result<Map<String, Value>, ScimError> {
        let body = json!({"schemas": [PATCH_OP_SCHEMA], "Operations": ops});
        let mut d = doc();
        apply(&mut d, &read(&body)?)?;
        Ok(d)
    }

    #[test]
    fn entra_id_deactivation_and_path_less_replace() {
        let d = patch(json!([
            {"op": "Replace", "path": "active", "value": "False"},
            {"op": "Replace", "value": {"displayName": "Ada L", "name.familyName": "Lovelace"}},
        ]))
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(d["active"], json!(false));
        assert_eq!(d["displayName"], json!("Ada L"));
        assert_eq!(
            d["name"],
            json!({"givenName": "Ada", "familyName": "Lovelace"})
        );
    }

    #[test]
    fn okta_deactivation_and_value_paths() {
        let d = patch(json!([
            {"op": "replace", "value": {"active": false}},
            {"op": "replace", "path": "emails[type eq \"work\"].value", "value": "new@contoso.com"},
        ]))
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(d["active"], json!(false));
        assert_eq!(d["emails"][0]["value"], json!("new@contoso.com"));
        assert!(matches!(
            patch(
                json!([{"op": "replace", "path": "emails[type eq \"home\"].value", "value": "x"}])
            ),
            Err(ScimError::NoTarget(_))
        ));
    }

    #[test]
    fn server_owned_attributes_and_passwords_are_refused() {
        for ops in [
            json!([{"op": "replace", "path": "id", "value": "usr_2"}]),
            json!([{"op": "replace", "path": "meta.version", "value": "x"}]),
            json!([{"op": "add", "value": {"meta": {}}}]),
            json!([{"op": "replace", "path": "password", "value": "x"}]),
            json!([{"op": "remove", "path": "ID"}]),
        ] {
            assert!(
                matches!(patch(ops.clone()), Err(ScimError::Mutability(_))),
                "{ops}"
            );
        }
        assert!(matches!(
            patch(json!([{"op": "replace", "path": "favouriteColour", "value": "x"}])),
            Err(ScimError::InvalidPath(_))
        ));
        assert!(matches!(
            patch(json!([{"op": "replace", "path": "urn:example:ext:shoeSize", "value": 9}])),
            Err(ScimError::InvalidPath(_))
        ));
        assert!(matches!(
            patch(json!([{"op": "move", "path": "userName"}])),
            Err(ScimError::InvalidSyntax(_))
        ));
    }

    #[test]
    fn attributes_defined_but_not_stored_change_nothing_beside_a_deactivation() {
        let d = patch(json!([
            {"op": "Add", "path": "title", "value": "Rear Admiral"},
            {"op": "Replace", "path": "phoneNumbers[type eq \"work\"].value", "value": "1"},
            {"op": "Replace", "path": "name.formatted", "value": "Ada L"},
            {"op": "Replace", "value": {"nickName": "Amazing Grace", "active": "False"}},
        ]))
        .unwrap_or_else(|e| panic!("{e:?}"));
        let mut expected = doc();
        expected.insert("active".into(), json!(false));
        assert_eq!(d, expected);
    }

    #[test]
    fn the_enterprise_extension_is_patched_as_entra_and_okta_send_it() {
        const EXT: &str = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
        let d = patch(json!([
            {"op": "Add", "path": format!("{EXT}:department"), "value": "Navy"},
            // Entra ID: the manager as the bare id, by path.
            {"op": "Add", "path": format!("{EXT}:manager"), "value": "mgr-7"},
            // Okta: the whole object, path-less, names in any case.
            {"op": "Replace", "value": {EXT: {"Division": "Research", "costCenter": "42"}}},
            {"op": "Replace", "path": format!("{EXT}:manager.displayName"), "value": "ignored"},
            {"op": "Remove", "path": format!("{EXT}:costCenter")},
        ]))
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(
            d[EXT],
            json!({"department": "Navy", "manager": "mgr-7", "division": "Research"})
        );
        let replaced = patch(json!([
            {"op": "Replace", "path": format!("{EXT}:manager.value"), "value": "mgr-8"},
        ]))
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(replaced[EXT], json!({"manager": "mgr-8"}));
        let whole = patch(json!([
            {"op": "Add", "path": EXT, "value": {"department": "Navy", "division": "R"}},
            {"op": "Replace", "path": EXT, "value": {"division": "S"}},
        ]))
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(whole[EXT], json!({"department": "Navy", "division": "S"}));
        let cleared = patch(json!([
            {"op": "Add", "path": EXT, "value": {"department": "Navy"}},
            {"op": "Remove", "path": EXT},
        ]))
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(!cleared.contains_key(EXT), "{cleared:?}");
        for bad in [
            json!([{"op": "Add", "path": format!("{EXT}:shoeSize"), "value": "9"}]),
            json!([{"op": "Add", "path": format!("{EXT}:department.name"), "value": "x"}]),
            json!([{"op": "Replace", "value": {EXT: "Navy"}}]),
        ] {
            assert!(
                matches!(
                    patch(bad.clone()),
                    Err(ScimError::InvalidPath(_) | ScimError::InvalidValue(_))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn remove_and_add() {
        let d = patch(json!([
            {"op": "remove", "path": "name.givenName"},
            {"op": "add", "path": "externalId", "value": "e-9"},
        ]))
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(d["name"], json!({}));
        assert_eq!(d["externalId"], json!("e-9"));
        for required in ["emails", "active", "userName"] {
            assert!(matches!(
                patch(json!([{"op": "remove", "path": required}])),
                Err(ScimError::InvalidValue(_))
            ));
        }
    }
}
