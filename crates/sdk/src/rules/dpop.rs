//! Rule 10: if DPoP is used, the proof and the `cnf` binding verify.
//!
//! RFC 9449 §6.1: a DPoP-bound access token carries `cnf.jkt`, the base64url SHA-256 JWK
//! thumbprint (RFC 7638) of the client's proof key. §7.1: the resource server checks that the
//! key of the request's DPoP proof has exactly that thumbprint.
//!
//! Verifying the DPoP proof itself (its signature, `typ: dpop+jwt`, `htm`, `htu`, `iat`, `ath`,
//! `nonce`, and the `jti` replay cache of RFC 9449 §4.3 and §11.1) is outside this crate: the
//! caller verifies it and passes the proof key's thumbprint as `dpop_jkt`. `None` means no
//! verified proof. A `cnf` that cannot be checked (no `jkt`, e.g. an RFC 8705 certificate binding)
//! is refused: a binding is never ignored.

use crate::error::ValidationError;
use serde_json::{Map, Value};

/// Rule 10: no `cnf`, or `cnf.jkt` equals the verified proof thumbprint `dpop_jkt`.
pub fn check_dpop_binding(
    claims: &Map<String, Value>,
    dpop_jkt: Option<&str>,
) -> Result<(), ValidationError> {
    let Some(cnf) = claims.get("cnf") else {
        return Ok(());
    };
    let jkt = cnf
        .get("jkt")
        .and_then(Value::as_str)
        .filter(|jkt| !jkt.is_empty())
        .ok_or(ValidationError::UnsupportedConfirmation)?;
    match dpop_jkt {
        None => Err(ValidationError::DpopProofRequired),
        Some(proof) if proof == jkt => Ok(()),
        Some(_) => Err(ValidationError::DpopKeyMismatch),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const JKT: &str = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I";

    fn check(claims: Value, proof: Option<&str>) -> Result<(), ValidationError> {
        check_dpop_binding(claims.as_object().unwrap(), proof)
    }

    #[test]
    fn unbound_tokens_pass() {
        assert_eq!(check(json!({}), None), Ok(()));
        assert_eq!(check(json!({}), Some(JKT)), Ok(()));
    }

    #[test]
    fn bound_tokens_need_the_matching_proof() {
        let bound = json!({"cnf": {"jkt": JKT}});
        assert_eq!(check(bound.clone(), Some(JKT)), Ok(()));
        assert_eq!(
            check(bound.clone(), None),
            Err(ValidationError::DpopProofRequired)
        );
        assert_eq!(
            check(bound, Some("other")),
            Err(ValidationError::DpopKeyMismatch)
        );
    }

    #[test]
    fn uncheckable_bindings_are_refused() {
        for cnf in [
            json!({"x5t#S256": "abc"}),
            json!({"jkt": ""}),
            json!({"jkt": 1}),
            json!("jkt"),
            json!(null),
        ] {
            assert_eq!(
                check(json!({"cnf": cnf}), Some(JKT)),
                Err(ValidationError::UnsupportedConfirmation)
            );
        }
    }
}
