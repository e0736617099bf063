//! Rule 6: `tenant_id` equals the tenant owning the resource.
//!
//! Checked before scopes (spec rule 6): a token of another tenant is refused as such even when it
//! also lacks the scope, so the refusal never hints at what another tenant's token could do.
//! Exact string comparison; a token without `tenant_id` belongs to no tenant and is refused.

use crate::error::ValidationError;
use serde_json::{Map, Value};

/// Rule 6: `tenant_id` is a string equal to `tenant_id`. An empty configured tenant matches
/// nothing.
pub fn check_tenant(claims: &Map<String, Value>, tenant_id: &str) -> Result<(), ValidationError> {
    match claims.get("tenant_id").and_then(Value::as_str) {
        Some(t) if !tenant_id.is_empty() && t == tenant_id => Ok(()),
        _ => Err(ValidationError::WrongTenant),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(claims: Value, tenant: &str) -> Result<(), ValidationError> {
        check_tenant(claims.as_object().unwrap(), tenant)
    }

    #[test]
    fn exact_match_only() {
        assert_eq!(check(json!({"tenant_id": "ten_1"}), "ten_1"), Ok(()));
        for other in [
            json!("ten_2"),
            json!("TEN_1"),
            json!(["ten_1"]),
            json!(1),
            json!(null),
        ] {
            assert_eq!(
                check(json!({"tenant_id": other}), "ten_1"),
                Err(ValidationError::WrongTenant)
            );
        }
        assert_eq!(check(json!({}), "ten_1"), Err(ValidationError::WrongTenant));
        assert_eq!(
            check(json!({"tenant_id": ""}), ""),
            Err(ValidationError::WrongTenant)
        );
    }
}
