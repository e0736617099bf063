//! Rule 2: the signature verifies with the expected algorithm and a key from the issuer's JWKS
//! (decoding alone is not validation).
//!
//! - The token is a compact JWS: three base64url parts (RFC 7515 §7.1); JWE and JSON
//!   serialisations are refused.
//! - `alg` is ES256 or EdDSA, the access-token algorithms (spec "Credentials by surface"). The
//!   allowlist is ours, not the token's: `none` (RFC 8725 §3.1), HS* with a public key as secret
//!   (algorithm confusion, RFC 8725 §2.1) and RS256 (which svc uses for ID tokens only) are
//!   refused before any key is looked at.
//! - `typ` is `at+jwt`, or its full media type `application/at+jwt`, compared case-insensitively
//!   (RFC 9068 §4, RFC 7515 §4.1.9), so an ID token or another JWT cannot pass as an access token
//!   (RFC 8725 §3.11).
//! - `crit` is refused: no extension is understood here (RFC 7515 §4.1.11).
//! - `kid` names a JWK of the set (RFC 7515 §4.1.4) whose type and curve fit `alg` (P-256 for
//!   ES256, Ed25519 for EdDSA) and whose `alg`, `use` and `key_ops`, when present, allow
//!   verification with it (RFC 7517 §4.2–4.4).

use crate::error::ValidationError;
use crate::provider;
use crate::rules::bearer::MAX_TOKEN_BYTES;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{
    AlgorithmParameters, EllipticCurve, Jwk, JwkSet, KeyAlgorithm, KeyOperations, PublicKeyUse,
};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

/// The JOSE header facts rule 2 needs before it has a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AccessTokenHeader {
    /// ES256 or EdDSA.
    pub(crate) alg: Algorithm,
    /// The signing key's id.
    pub(crate) kid: String,
}

/// Rule 2, first half: the token's shape and JOSE header, without any key. The validator runs
/// it before fetching keys, so malformed tokens never cause network traffic.
pub(crate) fn check_header(token: &str) -> Result<AccessTokenHeader, ValidationError> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(ValidationError::MalformedToken);
    }
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(_signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ValidationError::MalformedToken);
    };
    if payload.is_empty() {
        return Err(ValidationError::MalformedToken);
    }
    // RFC 7515 §2: base64url without padding; strict decoding refuses padding and stray bits.
    let header = URL_SAFE_NO_PAD
        .decode(header)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .ok_or(ValidationError::MalformedToken)?;
    let header = header.as_object().ok_or(ValidationError::MalformedToken)?;

    let alg = match header.get("alg").and_then(Value::as_str) {
        Some("ES256") => Algorithm::ES256,
        Some("EdDSA") => Algorithm::EdDSA,
        _ => return Err(ValidationError::DisallowedAlgorithm),
    };
    let typ = header.get("typ").and_then(Value::as_str).unwrap_or("");
    if !typ.eq_ignore_ascii_case("at+jwt") && !typ.eq_ignore_ascii_case("application/at+jwt") {
        return Err(ValidationError::WrongTokenType);
    }
    if header.contains_key("crit") {
        return Err(ValidationError::UnsupportedCriticalHeader);
    }
    let kid = header
        .get("kid")
        .and_then(Value::as_str)
        .filter(|kid| !kid.is_empty())
        .ok_or(ValidationError::MissingKeyId)?;
    Ok(AccessTokenHeader {
        alg,
        kid: kid.to_owned(),
    })
}

/// Rule 2: verifies `token` with the key of `jwks` its `kid` names and returns the (not yet
/// checked) claims.
///
/// jsonwebtoken does the cryptography only: its `exp`, `nbf`, `aud` and `iss` validation is
/// switched off because rules 3–5 do that, in the contract's order and with its errors.
pub fn check_signature(token: &str, jwks: &JwkSet) -> Result<Value, ValidationError> {
    let header = check_header(token)?;
    // RFC 7517 §4.5: `kid` should be unique in a set; the first match is the key.
    let jwk = jwks.find(&header.kid).ok_or(ValidationError::UnknownKey)?;
    check_key(jwk, header.alg)?;
    let key = DecodingKey::from_jwk(jwk).map_err(|_| ValidationError::KeyMismatch)?;

    let mut validation = Validation::new(header.alg);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.leeway = 0;

    provider::ensure_installed();
    match jsonwebtoken::decode::<Value>(token, &key, &validation) {
        Ok(data) => Ok(data.claims),
        Err(e) => Err(match e.kind() {
            ErrorKind::InvalidSignature => ValidationError::BadSignature,
            ErrorKind::InvalidEcdsaKey
            | ErrorKind::InvalidEddsaKey
            | ErrorKind::InvalidKeyFormat
            | ErrorKind::InvalidAlgorithm => ValidationError::KeyMismatch,
            _ => ValidationError::MalformedToken,
        }),
    }
}

/// The JWK can verify `alg`: right key type and curve (RFC 7518 §3.4, RFC 8037 §3.1), and its
/// optional `alg`, `use` and `key_ops` members (RFC 7517 §4.2–4.4) do not forbid it.
fn check_key(jwk: &Jwk, alg: Algorithm) -> Result<(), ValidationError> {
    let common = &jwk.common;
    let use_ok = matches!(common.public_key_use, None | Some(PublicKeyUse::Signature));
    let ops_ok = common
        .key_operations
        .as_ref()
        .is_none_or(|ops| ops.contains(&KeyOperations::Verify));
    let (expected_alg, type_ok) = match alg {
        Algorithm::ES256 => (
            KeyAlgorithm::ES256,
            matches!(&jwk.algorithm, AlgorithmParameters::EllipticCurve(p) if p.curve == EllipticCurve::P256),
        ),
        Algorithm::EdDSA => (
            KeyAlgorithm::EdDSA,
            matches!(&jwk.algorithm, AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519),
        ),
        _ => return Err(ValidationError::DisallowedAlgorithm),
    };
    let alg_ok = common.key_algorithm.is_none_or(|a| a == expected_alg);
    if use_ok && ops_ok && type_ok && alg_ok {
        Ok(())
    } else {
        Err(ValidationError::KeyMismatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn token_with_header(header: &Value) -> String {
        let h = URL_SAFE_NO_PAD.encode(serde_json::to_vec(header).unwrap());
        let p = URL_SAFE_NO_PAD.encode(br#"{"sub":"x"}"#);
        format!("{h}.{p}.c2ln")
    }

    fn header_error(header: Value) -> ValidationError {
        check_header(&token_with_header(&header)).unwrap_err()
    }

    #[test]
    fn accepts_both_access_token_algorithms_and_typ_spellings() {
        for (alg, typ) in [
            ("ES256", "at+jwt"),
            ("EdDSA", "AT+JWT"),
            ("ES256", "application/at+jwt"),
            ("EdDSA", "Application/AT+JWT"),
        ] {
            let header = json!({"alg": alg, "typ": typ, "kid": "k1"});
            assert_eq!(check_header(&token_with_header(&header)).unwrap().kid, "k1");
        }
    }

    #[test]
    fn refuses_every_other_algorithm() {
        for alg in [
            json!("none"),
            json!("None"),
            json!("HS256"),
            json!("RS256"),
            json!("PS256"),
            json!("ES384"),
            json!("es256"),
            json!("Ed25519"),
            json!(null),
            json!(["ES256"]),
        ] {
            let header = json!({"alg": alg, "typ": "at+jwt", "kid": "k1"});
            assert_eq!(header_error(header), ValidationError::DisallowedAlgorithm);
        }
        assert_eq!(
            header_error(json!({"typ": "at+jwt", "kid": "k1"})),
            ValidationError::DisallowedAlgorithm
        );
    }

    #[test]
    fn refuses_other_token_types() {
        for typ in [
            json!("JWT"),
            json!("jwt"),
            json!("dpop+jwt"),
            json!("at+jwt2"),
            json!(1),
        ] {
            let header = json!({"alg": "ES256", "typ": typ, "kid": "k1"});
            assert_eq!(header_error(header), ValidationError::WrongTokenType);
        }
        assert_eq!(
            header_error(json!({"alg": "ES256", "kid": "k1"})),
            ValidationError::WrongTokenType
        );
    }

    #[test]
    fn refuses_crit_and_missing_kid() {
        assert_eq!(
            header_error(
                json!({"alg": "ES256", "typ": "at+jwt", "kid": "k", "crit": ["b64"], "b64": false})
            ),
            ValidationError::UnsupportedCriticalHeader
        );
        for kid in [json!(null), json!(""), json!(7)] {
            assert_eq!(
                header_error(json!({"alg": "ES256", "typ": "at+jwt", "kid": kid})),
                ValidationError::MissingKeyId
            );
        }
    }

    #[test]
    fn refuses_malformed_shapes() {
        let good = token_with_header(&json!({"alg": "ES256", "typ": "at+jwt", "kid": "k"}));
        let (h, rest) = good.split_once('.').unwrap();
        for token in [
            String::new(),
            "a.b".into(),
            format!("{good}.x.y"), // JWE compact serialisation has five parts
            format!("{h}=.{rest}"),
            format!(".{rest}"),
            format!("{h}..c2ln"),
            format!("{}.{rest}", URL_SAFE_NO_PAD.encode("[1]")),
            format!("{}.{rest}", URL_SAFE_NO_PAD.encode("not json")),
            format!("{h}.{rest}{}", "A".repeat(MAX_TOKEN_BYTES)),
        ] {
            assert_eq!(
                check_header(&token).unwrap_err(),
                ValidationError::MalformedToken,
                "{token}"
            );
        }
    }
}
