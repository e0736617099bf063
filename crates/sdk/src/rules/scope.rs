//! Rule 7: `scope` contains the route's required permission.
//!
//! RFC 9068 §2.2.3 and RFC 8693 §4.2: `scope` is one JSON string of space-delimited scope tokens
//! (RFC 6749 §3.3), case-sensitive. Tokens are compared whole: `users:write` grants nothing about
//! `users:read` (CONTRACTS.md "Tenant API scopes and audience"), and no prefix or wildcard
//! matching exists.

use crate::claims::split_scope;
use crate::error::ValidationError;
use serde_json::{Map, Value};

/// Rule 7: when the route requires a scope, the `scope` string lists it exactly. A route with
/// no required scope passes any token here.
pub fn check_scope(
    claims: &Map<String, Value>,
    required: Option<&str>,
) -> Result<(), ValidationError> {
    let Some(required) = required else {
        return Ok(());
    };
    let granted = claims
        .get("scope")
        .and_then(Value::as_str)
        .is_some_and(|scope| split_scope(scope).any(|s| s == required));
    if granted {
        Ok(())
    } else {
        Err(ValidationError::InsufficientScope {
            required: required.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(scope: Value, required: Option<&str>) -> Result<(), ValidationError> {
        check_scope(json!({"scope": scope}).as_object().unwrap(), required)
    }

    fn insufficient() -> Result<(), ValidationError> {
        Err(ValidationError::InsufficientScope {
            required: "users:read".into(),
        })
    }

    #[test]
    fn the_required_scope_must_be_listed() {
        assert_eq!(
            check(json!("openid users:read"), Some("users:read")),
            Ok(())
        );
        assert_eq!(check(json!("users:read"), Some("users:read")), Ok(()));
        assert_eq!(check(json!(" users:read  x "), Some("users:read")), Ok(()));
    }

    #[test]
    fn write_does_not_imply_read_and_nothing_matches_partially() {
        for scope in [
            json!("users:write"),
            json!("users"),
            json!("users:*"),
            json!("*"),
            json!("users:readonly"),
            json!("Users:Read"),
            json!("users:read,users:write"),
            json!(""),
            json!(["users:read"]),
            json!(null),
        ] {
            assert_eq!(
                check(scope.clone(), Some("users:read")),
                insufficient(),
                "{scope}"
            );
        }
        assert_eq!(
            check_scope(json!({}).as_object().unwrap(), Some("users:read")),
            insufficient()
        );
    }

    #[test]
    fn no_requirement_passes() {
        assert_eq!(check_scope(json!({}).as_object().unwrap(), None), Ok(()));
    }
}
