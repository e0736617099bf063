//! Rule 4: `aud` contains the API's own audience.
//!
//! RFC 7519 §4.1.3: `aud` is a string or an array of strings, and a recipient that does not
//! identify itself with one of the values MUST reject the token. RFC 9068 §4: the resource server
//! validates that `aud` contains a resource indicator it expects. Comparison is exact.

use crate::error::ValidationError;
use serde_json::{Map, Value};

/// Rule 4: `aud` equals `audience` or is an array of strings containing it. A malformed `aud`
/// (a number, an array holding a non-string) is refused as a whole.
pub fn check_audience(claims: &Map<String, Value>, audience: &str) -> Result<(), ValidationError> {
    let found = match claims.get("aud") {
        Some(Value::String(aud)) => aud == audience,
        Some(Value::Array(auds)) => {
            auds.iter().all(Value::is_string) && auds.iter().any(|a| a.as_str() == Some(audience))
        }
        _ => false,
    };
    if found && !audience.is_empty() {
        Ok(())
    } else {
        Err(ValidationError::WrongAudience)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const API: &str = "https://acme.id.example/api/v1";

    fn check(aud: Value) -> Result<(), ValidationError> {
        check_audience(json!({"aud": aud}).as_object().unwrap(), API)
    }

    #[test]
    fn string_or_array_containing_the_audience() {
        assert_eq!(check(json!(API)), Ok(()));
        assert_eq!(check(json!(["https://other.example", API])), Ok(()));
    }

    #[test]
    fn anything_else_is_refused() {
        for aud in [
            json!("https://acme.id.example/api/v1/"),
            json!("https://acme.id.example"),
            json!([]),
            json!(["https://other.example"]),
            json!([API, 1]),
            json!(1),
            json!({"aud": API}),
            json!(null),
        ] {
            assert_eq!(
                check(aud.clone()),
                Err(ValidationError::WrongAudience),
                "{aud}"
            );
        }
        assert_eq!(
            check_audience(json!({}).as_object().unwrap(), API),
            Err(ValidationError::WrongAudience)
        );
    }
}
