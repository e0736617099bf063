//! `POST /Bulk` (RFC 7644 §3.7): many User and Group operations in one request, run one after
//! the other through the same use cases as the single-resource endpoints (so each follows the
//! same rules, the caller's reach, audit and events), each in its own transaction.
//!
//! Rules enforced here, in order:
//! 1. The body is a `BulkRequest` (§3.7: `schemas`), with 1 to [`MAX_BULK_OPERATIONS`]
//!    `Operations` (§3.7.4: more is 413, naming the limit); `failOnErrors`, when given, is a
//!    positive integer.
//! 2. Each operation names a `method` (`POST`, `PUT`, `PATCH`, `DELETE`) and a `path`: `/Users`
//!    or `/Groups` for `POST`, `/Users/{id}` or `/Groups/{id}` otherwise; `POST` carries a
//!    `bulkId` (§3.7: "REQUIRED when method is POST"), unique within the request; `data` is
//!    required except for `DELETE`; `version` is the `If-Match` of that operation.
//! 3. `bulkId:{id}` — as a path's id, or as any string value in `data` (a group's members) —
//!    stands for the resource that operation created (§3.7.2). An operation runs once every
//!    `bulkId` it names is resolved, so a reference to a later operation is honoured (the
//!    order of the answer is the order of execution); one that can never be resolved (no such
//!    `bulkId`, its operation failed, or a cycle) fails with 409 and names it.
//! 4. After `failOnErrors` failures no further operation runs (§3.7.3); the answer lists what
//!    ran.

use super::users::{self, Represented};
use super::{ScimCaller, ScimError, groups};
use crate::{ManageContext, Precondition, RequestMeta};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use svc_domain::Tenant;

/// Most operations one request may carry (`bulk.maxOperations`).
pub const MAX_BULK_OPERATIONS: usize = 100;
/// The request's message schema.
pub const BULK_REQUEST: &str = "urn:ietf:params:scim:api:messages:2.0:BulkRequest";
/// The answer's message schema.
pub const BULK_RESPONSE: &str = "urn:ietf:params:scim:api:messages:2.0:BulkResponse";
const REFERENCE: &str = "bulkId:";

/// What became of one operation.
#[derive(Debug)]
pub struct BulkOutcome {
    /// The operation's method, as sent.
    pub method: String,
    /// Its `bulkId`, when it had one.
    pub bulk_id: Option<String>,
    /// The resource's URL, when one was created or addressed.
    pub location: Option<String>,
    /// The resource's version after the operation, when it still exists.
    pub version: Option<String>,
    /// The HTTP status of a success, or why it failed.
    pub result: Result<u16, ScimError>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    Post,
    Put,
    Patch,
    Delete,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Users,
    Groups,
}

/// One operation, as read (rule 2).
struct Operation {
    method: Method,
    raw_method: String,
    kind: Kind,
    /// The id in the path (perhaps a `bulkId:` reference); `None` for `POST`.
    id: Option<String>,
    bulk_id: Option<String>,
    version: Option<String>,
    data: Option<Value>,
}

impl Operation {
    /// Every `bulkId` the operation refers to (rule 3).
    fn references(&self) -> BTreeSet<String> {
        let mut found = BTreeSet::new();
        if let Some(id) = self.id.as_deref().and_then(|id| id.strip_prefix(REFERENCE)) {
            found.insert(id.to_owned());
        }
        if let Some(data) = &self.data {
            collect_references(data, &mut found);
        }
        found
    }
}

fn collect_references(value: &Value, found: &mut BTreeSet<String>) {
    match value {
        Value::String(s) => {
            if let Some(id) = s.strip_prefix(REFERENCE) {
                found.insert(id.to_owned());
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_references(v, found)),
        Value::Object(map) => map.values().for_each(|v| collect_references(v, found)),
        _ => {}
    }
}

/// Replaces every `bulkId:` reference in `value` by the id it resolved to.
fn substitute(value: &mut Value, resolved: &HashMap<String, String>) {
    match value {
        Value::String(s) => {
            if let Some(id) = s.strip_prefix(REFERENCE).and_then(|r| resolved.get(r)) {
                *s = id.clone();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| substitute(v, resolved)),
        Value::Object(map) => map.values_mut().for_each(|v| substitute(v, resolved)),
        _ => {}
    }
}

/// Reads the request (rules 1 and 2): the operations and `failOnErrors`.
fn read_request(body: &Value) -> Result<(Vec<Operation>, Option<usize>), ScimError> {
    let syntax = |m: &str| ScimError::InvalidSyntax(m.to_owned());
    let object = body
        .as_object()
        .ok_or_else(|| syntax("a BulkRequest is a JSON object"))?;
    let schemas_ok = object
        .get("schemas")
        .and_then(Value::as_array)
        .is_some_and(|s| s.iter().any(|v| v == BULK_REQUEST));
    if !schemas_ok {
        return Err(syntax(&format!("schemas must list {BULK_REQUEST}")));
    }
    let fail_on_errors = match object.get("failOnErrors") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .filter(|n| *n >= 1)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| syntax("failOnErrors must be a positive integer"))?,
        ),
    };
    let raw = object
        .get("Operations")
        .and_then(Value::as_array)
        .ok_or_else(|| syntax("Operations must be an array"))?;
    if raw.is_empty() {
        return Err(syntax("Operations must hold at least one operation"));
    }
    if raw.len() > MAX_BULK_OPERATIONS {
        return Err(ScimError::BulkLimit(format!(
            "at most {MAX_BULK_OPERATIONS} operations per request (bulk.maxOperations); this one has {}",
            raw.len()
        )));
    }
    let mut seen = BTreeSet::new();
    let mut operations = Vec::with_capacity(raw.len());
    for (i, op) in raw.iter().enumerate() {
        let op = read_operation(op).map_err(|e| match e {
            ScimError::InvalidSyntax(m) => {
                ScimError::InvalidSyntax(format!("Operations[{i}]: {m}"))
            }
            other => other,
        })?;
        if let Some(bulk_id) = &op.bulk_id
            && !seen.insert(bulk_id.clone())
        {
            return Err(syntax(&format!(
                "Operations[{i}]: bulkId {bulk_id:?} is used twice"
            )));
        }
        operations.push(op);
    }
    Ok((operations, fail_on_errors))
}

fn read_operation(op: &Value) -> Result<Operation, ScimError> {
    let syntax = |m: &str| ScimError::InvalidSyntax(m.to_owned());
    let text = |name: &str| -> Result<Option<String>, ScimError> {
        match op.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(syntax(&format!("{name} must be a string"))),
        }
    };
    if !op.is_object() {
        return Err(syntax("an operation is a JSON object"));
    }
    let raw_method = text("method")?.ok_or_else(|| syntax("method is required"))?;
    let method = match raw_method.to_ascii_uppercase().as_str() {
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "PATCH" => Method::Patch,
        "DELETE" => Method::Delete,
        _ => return Err(syntax("method must be POST, PUT, PATCH or DELETE")),
    };
    let path = text("path")?.ok_or_else(|| syntax("path is required"))?;
    let (kind, id) = match path.trim_start_matches('/').split_once('/') {
        None => (path.trim_start_matches('/'), None),
        Some((kind, id)) => (kind, Some(id.to_owned())),
    };
    let kind = match kind {
        "Users" => Kind::Users,
        "Groups" => Kind::Groups,
        _ => return Err(syntax("path must address /Users or /Groups")),
    };
    match (method, &id) {
        (Method::Post, Some(_)) => return Err(syntax("POST addresses /Users or /Groups")),
        (Method::Post, None) => {}
        (_, None) => {
            return Err(syntax(
                "PUT, PATCH and DELETE address /Users/{id} or /Groups/{id}",
            ));
        }
        (_, Some(id)) if id.is_empty() || id.contains('/') => {
            return Err(syntax("path must be /Users/{id} or /Groups/{id}"));
        }
        _ => {}
    }
    let bulk_id = text("bulkId")?;
    if method == Method::Post && bulk_id.as_deref().is_none_or(str::is_empty) {
        return Err(syntax("bulkId is required with POST"));
    }
    let data = op.get("data").filter(|d| !d.is_null()).cloned();
    if method != Method::Delete && data.is_none() {
        return Err(syntax("data is required except with DELETE"));
    }
    Ok(Operation {
        method,
        raw_method,
        kind,
        id,
        bulk_id,
        version: text("version")?,
        data,
    })
}

/// Runs a `BulkRequest` for `caller` (see the module's rules) and says what became of each
/// operation that ran, in the order they ran.
///
/// Errors (the whole request): [`ScimError::InvalidSyntax`] for a malformed request,
/// [`ScimError::BulkLimit`] for too many operations.
pub async fn bulk(
    ctx: &ManageContext,
    tenant: &Tenant,
    issuer: &str,
    caller: &ScimCaller,
    meta: &RequestMeta,
    body: &Value,
) -> Result<Vec<BulkOutcome>, ScimError> {
    let (operations, fail_on_errors) = read_request(body)?;
    let references: Vec<BTreeSet<String>> = operations.iter().map(Operation::references).collect();
    let creators: HashMap<String, usize> = operations
        .iter()
        .enumerate()
        .filter(|(_, op)| op.method == Method::Post)
        .filter_map(|(i, op)| op.bulk_id.clone().map(|b| (b, i)))
        .collect();
    let base = users::base(issuer);
    let mut resolved: HashMap<String, String> = HashMap::new();
    let mut pending: Vec<usize> = (0..operations.len()).collect();
    let mut outcomes = Vec::with_capacity(operations.len());
    let mut errors = 0;
    while !pending.is_empty() {
        if fail_on_errors.is_some_and(|limit| errors >= limit) {
            break;
        }
        // The first operation whose references are all settled (resolved, or never to be).
        let ready = pending.iter().position(|&i| {
            references[i].iter().all(|r| {
                resolved.contains_key(r)
                    || creators
                        .get(r)
                        .is_none_or(|&creator| !pending.contains(&creator))
            })
        });
        // None ready: the rest wait on each other (a cycle); the first of them fails.
        let at = ready.unwrap_or(0);
        let index = pending.remove(at);
        let op = &operations[index];
        let unresolved: Vec<&String> = references[index]
            .iter()
            .filter(|r| !resolved.contains_key(*r))
            .collect();
        let outcome = if let Some(missing) = unresolved.first() {
            refused(
                op,
                ScimError::Conflict(format!(
                    "bulkId:{missing} refers to no operation of this request that created a resource"
                )),
            )
        } else {
            run(ctx, (tenant, issuer, &base), caller, meta, op, &resolved).await
        };
        if let (Ok(_), Some(bulk_id), Some(location)) =
            (&outcome.result, &op.bulk_id, &outcome.location)
            && op.method == Method::Post
            && let Some(id) = location.rsplit('/').next()
        {
            resolved.insert(bulk_id.clone(), id.to_owned());
        }
        if outcome.result.is_err() {
            errors += 1;
        }
        outcomes.push(outcome);
    }
    Ok(outcomes)
}

fn refused(op: &Operation, error: ScimError) -> BulkOutcome {
    BulkOutcome {
        method: op.raw_method.clone(),
        bulk_id: op.bulk_id.clone(),
        location: None,
        version: None,
        result: Err(error),
    }
}

/// Runs one operation whose references are all resolved.
async fn run(
    ctx: &ManageContext,
    (tenant, issuer, base): (&Tenant, &str, &str),
    caller: &ScimCaller,
    meta: &RequestMeta,
    op: &Operation,
    resolved: &HashMap<String, String>,
) -> BulkOutcome {
    let id = op.id.as_deref().map(|id| match id.strip_prefix(REFERENCE) {
        Some(r) => resolved.get(r).cloned().unwrap_or_else(|| id.to_owned()),
        None => id.to_owned(),
    });
    let mut data = op.data.clone().unwrap_or(Value::Null);
    substitute(&mut data, resolved);
    let precondition = match &op.version {
        Some(version) => users::if_match([version.as_str()]),
        None => Precondition::None,
    };
    let id_ref = id.as_deref().unwrap_or_default();
    let written: Result<Option<Represented>, ScimError> = match (op.kind, op.method) {
        (Kind::Users, Method::Post) => users::create(ctx, tenant, issuer, caller, meta, &data)
            .await
            .map(Some),
        (Kind::Users, Method::Put) => users::replace(
            ctx,
            tenant,
            issuer,
            caller,
            meta,
            id_ref,
            &data,
            &precondition,
        )
        .await
        .map(Some),
        (Kind::Users, Method::Patch) => users::patch(
            ctx,
            tenant,
            issuer,
            caller,
            meta,
            id_ref,
            &data,
            &precondition,
        )
        .await
        .map(Some),
        (Kind::Users, Method::Delete) => users::delete(ctx, caller, meta, id_ref, &precondition)
            .await
            .map(|()| None),
        (Kind::Groups, Method::Post) => groups::create(ctx, caller, meta, base, &data)
            .await
            .map(Some),
        (Kind::Groups, Method::Put) => {
            groups::replace(ctx, caller, meta, base, id_ref, &data, &precondition)
                .await
                .map(Some)
        }
        (Kind::Groups, Method::Patch) => {
            groups::patch(ctx, caller, meta, base, id_ref, &data, &precondition)
                .await
                .map(Some)
        }
        (Kind::Groups, Method::Delete) => groups::delete(ctx, caller, meta, id_ref, &precondition)
            .await
            .map(|()| None),
    };
    let addressed = id.map(|id| {
        let kind = match op.kind {
            Kind::Users => "Users",
            Kind::Groups => "Groups",
        };
        format!("{base}/{kind}/{id}")
    });
    match written {
        Ok(Some(represented)) => BulkOutcome {
            method: op.raw_method.clone(),
            bulk_id: op.bulk_id.clone(),
            location: Some(represented.location),
            version: Some(represented.version),
            result: Ok(if op.method == Method::Post { 201 } else { 200 }),
        },
        Ok(None) => BulkOutcome {
            method: op.raw_method.clone(),
            bulk_id: op.bulk_id.clone(),
            location: addressed,
            version: None,
            result: Ok(204),
        },
        Err(error) => BulkOutcome {
            location: addressed,
            ..refused(op, error)
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(ops: Value) -> Value {
        json!({"schemas": [BULK_REQUEST], "Operations": ops})
    }

    fn syntax_error(body: &Value) -> String {
        match read_request(body) {
            Err(ScimError::InvalidSyntax(m)) => m,
            Err(other) => panic!("expected invalidSyntax, got {other:?}"),
            Ok(_) => panic!("expected invalidSyntax for {body}"),
        }
    }

    #[test]
    fn malformed_requests_are_refused_whole_naming_the_operation() {
        assert!(syntax_error(&json!({"Operations": []})).contains("schemas"));
        assert!(syntax_error(&request(json!([]))).contains("at least one"));
        let cases = [
            (
                json!({"path": "/Users", "bulkId": "a", "data": {}}),
                "method is required",
            ),
            (json!({"method": "GET", "path": "/Users"}), "method must be"),
            (
                json!({"method": "POST", "bulkId": "a", "data": {}}),
                "path is required",
            ),
            (
                json!({"method": "POST", "path": "/Other", "bulkId": "a", "data": {}}),
                "/Users or /Groups",
            ),
            (
                json!({"method": "POST", "path": "/Users/x", "bulkId": "a", "data": {}}),
                "POST addresses",
            ),
            (
                json!({"method": "DELETE", "path": "/Users"}),
                "address /Users/{id}",
            ),
            (
                json!({"method": "DELETE", "path": "/Users/a/b"}),
                "path must be",
            ),
            (
                json!({"method": "POST", "path": "/Users", "data": {}}),
                "bulkId is required",
            ),
            (
                json!({"method": "PATCH", "path": "/Users/x"}),
                "data is required",
            ),
            (
                json!({"method": "PUT", "path": "/Users/x", "data": {}, "version": 3}),
                "version must be a string",
            ),
            (json!(["not an object"]), "a JSON object"),
        ];
        for (op, needle) in cases {
            let message = syntax_error(&request(json!([op])));
            assert!(message.starts_with("Operations[0]: "), "{message}");
            assert!(message.contains(needle), "{needle}: {message}");
        }
        let twice = request(json!([
            {"method": "POST", "path": "/Users", "bulkId": "a", "data": {}},
            {"method": "POST", "path": "/Groups", "bulkId": "a", "data": {}},
        ]));
        assert!(syntax_error(&twice).contains("used twice"));
        let mut body = request(json!([{"method": "DELETE", "path": "/Users/x"}]));
        body["failOnErrors"] = json!(0);
        assert!(syntax_error(&body).contains("failOnErrors"));
    }

    #[test]
    fn more_operations_than_the_limit_name_it() {
        let op = json!({"method": "DELETE", "path": "/Users/x"});
        let ops = vec![op; MAX_BULK_OPERATIONS + 1];
        match read_request(&request(Value::Array(ops))) {
            Err(ScimError::BulkLimit(m)) => assert!(m.contains("at most 100"), "{m}"),
            other => panic!("expected the limit, got {:?}", other.err()),
        }
    }

    #[test]
    fn references_are_found_in_paths_and_data_and_substituted() {
        let (ops, fail_on_errors) = read_request(&{
            let mut body = request(json!([
                {"method": "PATCH", "path": "/Groups/bulkId:g", "data": {
                    "Operations": [{"op": "add", "path": "members", "value": [{"value": "bulkId:u"}]}]
                }},
            ]));
            body["failOnErrors"] = json!(2);
            body
        })
        .unwrap();
        assert_eq!(fail_on_errors, Some(2));
        let refs: Vec<String> = ops[0].references().into_iter().collect();
        assert_eq!(refs, ["g", "u"]);
        let mut data = ops[0].data.clone().unwrap();
        let resolved = HashMap::from([("u".to_owned(), "usr_1".to_owned())]);
        substitute(&mut data, &resolved);
        assert_eq!(data["Operations"][0]["value"][0]["value"], "usr_1");
    }
}
