//! Rule 3: `iss` equals the issuer URL.
//!
//! RFC 9068 §4 and RFC 7519 §4.1.1: simple string comparison (RFC 3986 §6.2.1), no normalisation
//! (no trailing-slash or case folding), so tokens of one svc tenant never pass at another tenant's
//! issuer (CONTRACTS.md "Tenancy and issuers": one issuer per tenant).

use crate::error::ValidationError;
use serde_json::{Map, Value};

/// Rule 3: `iss` is a string equal to `issuer`. An empty configured issuer matches nothing.
pub fn check_issuer(claims: &Map<String, Value>, issuer: &str) -> Result<(), ValidationError> {
    match claims.get("iss").and_then(Value::as_str) {
        Some(iss) if !issuer.is_empty() && iss == issuer => Ok(()),
        _ => Err(ValidationError::WrongIssuer),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(claims: Value, issuer: &str) -> Result<(), ValidationError> {
        check_issuer(claims.as_object().unwrap(), issuer)
    }

    #[test]
    fn exact_match_only() {
        let iss = "https://acme.id.example";
        assert_eq!(check(json!({"iss": iss}), iss), Ok(()));
        for other in [
            json!("https://acme.id.example/"),
            json!("https://ACME.id.example"),
            json!("https://beta.id.example"),
            json!([iss]),
            json!(null),
        ] {
            assert_eq!(
                check(json!({"iss": other}), iss),
                Err(ValidationError::WrongIssuer)
            );
        }
        assert_eq!(check(json!({}), iss), Err(ValidationError::WrongIssuer));
        assert_eq!(
            check(json!({"iss": ""}), ""),
            Err(ValidationError::WrongIssuer)
        );
    }
}
