//! Rich Authorization Requests (RFC 9396): the detail types an application registers, each with
//! the JSON Schema its objects must satisfy and the words the consent page shows, and a
//! validated `authorization_details` value with the narrowing rule that refresh and the token
//! endpoint apply.
//!
//! Schemas are compiled here, not merely stored: a type that parses has a schema that compiles
//! with no remote reference (nothing is ever fetched; [`NoRetrieval`]) and whose patterns run on
//! the linear-time `regex` engine, so a hostile schema cannot make a request slow.

use jsonschema::{PatternOptions, Retrieve, Uri, Validator};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// Most detail types one application registers.
pub const MAX_DETAIL_TYPES: usize = 16;
/// Longest type name (RFC 9396 §2: a string; commonly an identifier or a URI).
pub const MAX_DETAIL_TYPE_CHARS: usize = 128;
/// Longest description shown to a person for a type.
pub const MAX_DETAIL_DESCRIPTION_CHARS: usize = 200;
/// Largest schema of one type, as JSON text.
pub const MAX_DETAIL_SCHEMA_BYTES: usize = 16 * 1024;
/// Largest `authorization_details` parameter, as JSON text.
pub const MAX_DETAILS_BYTES: usize = 8 * 1024;
/// Most objects in one `authorization_details` array.
pub const MAX_DETAILS: usize = 10;
/// Deepest nesting of arrays and objects inside `authorization_details`.
pub const MAX_DETAILS_DEPTH: usize = 8;

/// Why a registered detail type was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetailTypeError(pub String);

impl fmt::Display for DetailTypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why an `authorization_details` value was refused (RFC 9396 §5 and §6.2:
/// `invalid_authorization_details`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetailsError(pub String);

impl fmt::Display for DetailsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A detail type an application may request: its name, the words a person reads on the consent
/// page, and the JSON Schema (draft 2020-12) every object of the type must satisfy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DetailType {
    /// The `type` value (RFC 9396 §2).
    #[serde(rename = "type")]
    pub name: String,
    /// What granting it means, in words for the person ("Pay from your account").
    pub description: String,
    /// The schema of the whole object, `type` included. Property `title`s label the values on
    /// the consent page.
    pub schema: Value,
}

impl DetailType {
    /// A type from its parts: a printable name without spaces, a short description, and a
    /// schema object that compiles without fetching anything.
    pub fn parse(name: &str, description: &str, schema: Value) -> Result<Self, DetailTypeError> {
        let err = |m: String| Err(DetailTypeError(m));
        if name.is_empty()
            || name.chars().count() > MAX_DETAIL_TYPE_CHARS
            || !name.bytes().all(|b| b.is_ascii_graphic())
        {
            return err(format!(
                "a detail type is 1 to {MAX_DETAIL_TYPE_CHARS} printable ASCII characters \
                 without spaces"
            ));
        }
        let description = description.trim();
        if description.is_empty()
            || description.chars().count() > MAX_DETAIL_DESCRIPTION_CHARS
            || description.chars().any(char::is_control)
        {
            return err(format!(
                "the description of {name} is 1 to {MAX_DETAIL_DESCRIPTION_CHARS} characters \
                 without control characters"
            ));
        }
        if !schema.is_object() {
            return err(format!("the schema of {name} must be a JSON object"));
        }
        if schema.to_string().len() > MAX_DETAIL_SCHEMA_BYTES {
            return err(format!(
                "the schema of {name} is larger than {MAX_DETAIL_SCHEMA_BYTES} bytes"
            ));
        }
        if let Err(e) = compile(&schema) {
            return err(format!("the schema of {name} does not compile: {e}"));
        }
        Ok(Self {
            name: name.to_owned(),
            description: description.to_owned(),
            schema,
        })
    }

    /// The `title` the schema gives the property `key`, for the consent page.
    pub fn label<'a>(&'a self, key: &'a str) -> &'a str {
        self.schema
            .get("properties")
            .and_then(|p| p.get(key))
            .and_then(|p| p.get("title"))
            .and_then(Value::as_str)
            .unwrap_or(key)
    }
}

/// Checks the list an application registers: at most [`MAX_DETAIL_TYPES`], names unique.
pub fn check_detail_types(types: &[DetailType]) -> Result<(), DetailTypeError> {
    if types.len() > MAX_DETAIL_TYPES {
        return Err(DetailTypeError(format!(
            "at most {MAX_DETAIL_TYPES} authorization_details_types"
        )));
    }
    for (i, t) in types.iter().enumerate() {
        if types[..i].iter().any(|o| o.name == t.name) {
            return Err(DetailTypeError(format!(
                "authorization_details_types names {} twice",
                t.name
            )));
        }
    }
    Ok(())
}

/// Refuses every external reference: a schema is self-contained or it does not compile.
struct NoRetrieval;

impl Retrieve for NoRetrieval {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("{uri} is outside the schema; references must be local").into())
    }
}

fn compile(schema: &Value) -> Result<Validator, String> {
    jsonschema::options()
        .with_retriever(NoRetrieval)
        .with_pattern_options(PatternOptions::regex().size_limit(1 << 20))
        .build(schema)
        .map_err(|e| truncate(e.to_string()))
}

fn truncate(mut s: String) -> String {
    const MAX: usize = 200;
    if s.len() > MAX {
        let mut end = MAX;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

/// A validated `authorization_details` array (RFC 9396 §2): one to [`MAX_DETAILS`] objects, each
/// of a type the application registered and satisfying its schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AuthorizationDetails(Vec<Map<String, Value>>);

impl AuthorizationDetails {
    /// Parses the parameter's JSON text and checks it against `allowed`.
    pub fn parse(text: &str, allowed: &[DetailType]) -> Result<Self, DetailsError> {
        if text.len() > MAX_DETAILS_BYTES {
            return Err(DetailsError(format!(
                "authorization_details is larger than {MAX_DETAILS_BYTES} bytes"
            )));
        }
        let value: Value = serde_json::from_str(text).map_err(|_| {
            DetailsError("authorization_details must be a JSON array of objects".into())
        })?;
        Self::from_value(value, allowed)
    }

    /// Checks a parsed value (a request object's claim) against `allowed`.
    pub fn from_value(value: Value, allowed: &[DetailType]) -> Result<Self, DetailsError> {
        let Value::Array(items) = value else {
            return Err(DetailsError(
                "authorization_details must be a JSON array of objects".into(),
            ));
        };
        if items.is_empty() || items.len() > MAX_DETAILS {
            return Err(DetailsError(format!(
                "authorization_details holds 1 to {MAX_DETAILS} objects"
            )));
        }
        let mut objects = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            if depth(&item) > MAX_DETAILS_DEPTH {
                return Err(DetailsError(format!(
                    "authorization_details[{i}] nests deeper than {MAX_DETAILS_DEPTH} levels"
                )));
            }
            let Value::Object(object) = item else {
                return Err(DetailsError(format!(
                    "authorization_details[{i}] is not an object"
                )));
            };
            let Some(name) = object
                .get("type")
                .and_then(Value::as_str)
                .map(str::to_owned)
            else {
                return Err(DetailsError(format!(
                    "authorization_details[{i}] has no type (RFC 9396 §2)"
                )));
            };
            let Some(kind) = allowed.iter().find(|t| t.name == name) else {
                return Err(DetailsError(format!(
                    "authorization_details[{i}]: type {} is not registered for this application",
                    truncate(name)
                )));
            };
            check_common_fields(i, &object)?;
            let validator = compile(&kind.schema)
                .map_err(|_| DetailsError(format!("the schema of {name} no longer compiles")))?;
            let instance = Value::Object(object);
            if let Some(e) = validator.iter_errors(&instance).next() {
                return Err(DetailsError(format!(
                    "authorization_details[{i}] does not match the schema of {name} at '{}': {}",
                    e.instance_path(),
                    truncate(e.to_string())
                )));
            }
            let Value::Object(object) = instance else {
                unreachable!("built as an object above")
            };
            objects.push(object);
        }
        Ok(Self(objects))
    }

    /// A value stored after it was validated (codes, refresh families, pending requests).
    pub fn from_stored(text: &str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }

    /// The JSON text, as stored and sent.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.0).unwrap_or_else(|_| "[]".into())
    }

    /// The JSON value, for token claims and responses.
    pub fn to_value(&self) -> Value {
        Value::Array(self.0.iter().cloned().map(Value::Object).collect())
    }

    /// The objects, in request order.
    pub fn objects(&self) -> &[Map<String, Value>] {
        &self.0
    }

    /// Whether `self` asks for no more than `granted` (RFC 9396 §6.1, §7: a token request may
    /// narrow what was granted, never widen it). Every requested object must narrow one granted
    /// object: the same keys, each value narrowing the granted value. Arrays narrow by dropping
    /// elements (fewer `actions`, fewer `locations`); everything else must be equal. Dropping a
    /// key is refused, since an absent constraint (a maximum amount, say) may mean no limit.
    pub fn narrows(&self, granted: &AuthorizationDetails) -> bool {
        self.0.iter().all(|want| {
            granted
                .0
                .iter()
                .any(|have| narrows(&Value::Object(want.clone()), &Value::Object(have.clone())))
        })
    }
}

fn narrows(want: &Value, have: &Value) -> bool {
    match (want, have) {
        (Value::Object(w), Value::Object(h)) => {
            w.len() == h.len()
                && w.iter()
                    .all(|(k, wv)| h.get(k).is_some_and(|hv| narrows(wv, hv)))
        }
        (Value::Array(w), Value::Array(h)) => w.iter().all(|wv| h.iter().any(|hv| narrows(wv, hv))),
        _ => want == have,
    }
}

fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// RFC 9396 §2.2: the common data fields have fixed shapes whatever the type.
fn check_common_fields(i: usize, object: &Map<String, Value>) -> Result<(), DetailsError> {
    for key in ["locations", "actions", "datatypes", "privileges"] {
        if let Some(v) = object.get(key) {
            let strings = v.as_array().is_some_and(|a| a.iter().all(Value::is_string));
            if !strings {
                return Err(DetailsError(format!(
                    "authorization_details[{i}].{key} must be an array of strings (RFC 9396 §2.2)"
                )));
            }
        }
    }
    if let Some(v) = object.get("identifier")
        && !v.is_string()
    {
        return Err(DetailsError(format!(
            "authorization_details[{i}].identifier must be a string (RFC 9396 §2.2)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
