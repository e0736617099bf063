//! Verifying JWTs signed by someone else's key (a client's, an agent's, an upstream OpenID
//! provider's): reading the header before any key is touched, choosing the key from a JWK set,
//! and verifying the signature. What the claims must say is each caller's own rule.
//!
//! Rules enforced here:
//! - A compact JWS of bounded size: three segments, a JSON object header and payload. An
//!   encrypted (five-segment) token is malformed: we decrypt nothing.
//! - The header `alg` is an asymmetric algorithm we verify: ES256, EdDSA, RS256 or PS256.
//!   `none` and HS* are refused before any key is touched (RFC 8725 §3.1, §3.2; HS256 "signed"
//!   with a public key as the secret). Headers with `crit` are refused (RFC 7515 §4.1.11: we
//!   understand no extension).
//! - The key is chosen by `kid`, or is the only key when the header has no `kid`, and it must
//!   be a public signing key fitting `alg` (kty, crv, `use`, `alg`).
//! - The signature is verified by jsonwebtoken with the algorithm chosen by us, not the token.
//!
//! Unlike [`crate::verify_jwt_signature`] (our own keys, `kid` = RFC 7638 thumbprint), foreign
//! key sets name their keys as they like.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::Once;

/// The `alg` values accepted (all asymmetric).
pub const SUPPORTED_ALGS: [&str; 4] = ["ES256", "EdDSA", "RS256", "PS256"];

/// Why a token could not even be read: each caller words it for its own kind of token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeError {
    /// Longer than the caller's bound.
    TooLarge,
    /// Not a compact JWS with JSON object header and payload (or a non-string `kid`/`typ`).
    Malformed,
    /// `alg` missing or not one of [`SUPPORTED_ALGS`].
    Algorithm,
    /// The header carries `crit`.
    Crit,
}

impl ShapeError {
    /// The description of this failure for a token called `what` ("client assertion").
    pub fn describe(self, what: &str) -> String {
        match self {
            Self::TooLarge => format!("the {what} is too large"),
            Self::Malformed => format!("the {what} is not a signed JWT"),
            Self::Algorithm => format!(
                "the {what} must be signed with one of {} (never none or HMAC)",
                SUPPORTED_ALGS.join(", ")
            ),
            Self::Crit => format!("the {what} header must not carry crit"),
        }
    }
}

/// What can be read from a token before its signature is checked.
#[derive(Debug)]
pub struct Unverified {
    /// The algorithm, one of ours.
    pub alg: Algorithm,
    /// The header `kid`.
    pub kid: Option<String>,
    /// The header `typ`.
    pub typ: Option<String>,
    /// The payload, unverified: only to find who must have signed it.
    pub claims: Map<String, Value>,
}

impl Unverified {
    /// Reads a compact JWS of at most `max_bytes`.
    pub fn parse(token: &str, max_bytes: usize) -> Result<Self, ShapeError> {
        if token.len() > max_bytes {
            return Err(ShapeError::TooLarge);
        }
        let mut segments = token.split('.');
        let (Some(header), Some(payload), Some(_signature), None) = (
            segments.next(),
            segments.next(),
            segments.next(),
            segments.next(),
        ) else {
            return Err(ShapeError::Malformed);
        };
        let header = json_object(header).ok_or(ShapeError::Malformed)?;
        let alg = header
            .get("alg")
            .and_then(Value::as_str)
            .and_then(supported_alg)
            .ok_or(ShapeError::Algorithm)?;
        if header.contains_key("crit") {
            return Err(ShapeError::Crit);
        }
        let text = |name: &str| match header.get(name) {
            None => Ok(None),
            Some(Value::String(value)) => Ok(Some(value.clone())),
            Some(_) => Err(ShapeError::Malformed),
        };
        let kid = text("kid")?;
        let typ = text("typ")?;
        let claims = json_object(payload).ok_or(ShapeError::Malformed)?;
        Ok(Self {
            alg,
            kid,
            typ,
            claims,
        })
    }

    /// A string claim of the unverified payload.
    pub fn claim(&self, name: &str) -> Option<&str> {
        self.claims.get(name).and_then(Value::as_str)
    }
}

/// RFC 8725 §3.1: the verifier chooses the algorithms; these are ours.
fn supported_alg(alg: &str) -> Option<Algorithm> {
    match alg {
        "ES256" => Some(Algorithm::ES256),
        "EdDSA" => Some(Algorithm::EdDSA),
        "RS256" => Some(Algorithm::RS256),
        "PS256" => Some(Algorithm::PS256),
        _ => None,
    }
}

/// A base64url segment holding a JSON object.
fn json_object(segment: &str) -> Option<Map<String, Value>> {
    let bytes = URL_SAFE_NO_PAD.decode(segment).ok()?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// jsonwebtoken panics unless exactly one crypto provider is chosen; choose ours explicitly so
/// feature unification elsewhere in the build cannot break verification.
fn install_jwt_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Err means one is installed already, which is what we want.
        let _ = jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.install_default();
    });
}

/// Finds the key of `keys` for `unverified` and verifies the signature of `token` with it;
/// returns the (authentic) claims. No claim is checked here: the caller's clock and rules do
/// that. The error is for logs only: it must not tell an attacker which check failed.
pub fn verify_with(keys: &[Jwk], token: &str, unverified: &Unverified) -> Result<Value, String> {
    let jwk = select_key(keys, unverified.kid.as_deref(), unverified.alg).ok_or_else(|| {
        match &unverified.kid {
            Some(_) => "no key with the token's kid fits its alg",
            None => "the token has no kid and the key set has not exactly one fitting key",
        }
        .to_owned()
    })?;
    let key = DecodingKey::from_jwk(jwk).map_err(|e| format!("key unusable: {e}"))?;
    install_jwt_provider();
    let mut validation = Validation::new(unverified.alg);
    // Claims are checked by the caller against the injected clock; jsonwebtoken would read the
    // wall clock. Only the signature (and the header alg) is its job here.
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.required_spec_claims = HashSet::new();
    jsonwebtoken::decode::<Value>(token, &key, &validation)
        .map(|data| data.claims)
        .map_err(|e| format!("signature: {e}"))
}

/// The keys of a JWK set document. Keys we cannot parse (other key types, private members we
/// do not model) are skipped, not fatal: one exotic key must not lock its holder out.
pub fn parse_jwks(text: &str) -> Result<Vec<Jwk>, String> {
    let document: Value =
        serde_json::from_str(text).map_err(|_| "the JWKS is not JSON".to_owned())?;
    let keys = document
        .get("keys")
        .and_then(Value::as_array)
        .ok_or_else(|| "the JWKS has no keys array".to_owned())?;
    Ok(keys
        .iter()
        .filter_map(|k| serde_json::from_value::<Jwk>(k.clone()).ok())
        .collect())
}

/// The key named by `kid`, or the only key; it must fit `alg`.
fn select_key<'a>(keys: &'a [Jwk], kid: Option<&str>, alg: Algorithm) -> Option<&'a Jwk> {
    let candidate = match kid {
        Some(kid) => keys
            .iter()
            .find(|k| k.common.key_id.as_deref() == Some(kid)),
        None => match keys {
            [only] => Some(only),
            _ => None,
        },
    }?;
    fits(candidate, alg).then_some(candidate)
}

/// A public signing key of the right type for `alg` (RFC 7517 §4.2, §4.4; RFC 7518 §6).
fn fits(jwk: &Jwk, alg: Algorithm) -> bool {
    let use_ok = matches!(
        jwk.common.public_key_use,
        None | Some(PublicKeyUse::Signature)
    );
    let alg_ok = match jwk.common.key_algorithm {
        None => true,
        Some(declared) => key_algorithm(alg) == declared,
    };
    let type_ok = match (&jwk.algorithm, alg) {
        (AlgorithmParameters::EllipticCurve(ec), Algorithm::ES256) => {
            ec.curve == EllipticCurve::P256
        }
        (AlgorithmParameters::OctetKeyPair(okp), Algorithm::EdDSA) => {
            okp.curve == EllipticCurve::Ed25519
        }
        (AlgorithmParameters::RSA(_), Algorithm::RS256 | Algorithm::PS256) => true,
        _ => false,
    };
    use_ok && alg_ok && type_ok
}

fn key_algorithm(alg: Algorithm) -> KeyAlgorithm {
    match alg {
        Algorithm::ES256 => KeyAlgorithm::ES256,
        Algorithm::EdDSA => KeyAlgorithm::EdDSA,
        Algorithm::RS256 => KeyAlgorithm::RS256,
        Algorithm::PS256 => KeyAlgorithm::PS256,
        _ => KeyAlgorithm::UNKNOWN_ALGORITHM,
    }
}

/// A NumericDate claim (RFC 7519 §2) as whole seconds; `Err` when present but not a number.
// Each caller words the refusal for its own kind of token: there is nothing to carry.
#[allow(clippy::result_unit_err)]
pub fn numeric_date(claims: &Value, name: &str) -> Result<Option<i64>, ()> {
    match claims.get(name) {
        None => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.is_finite())
                    .map(|f| f.floor() as i64)
            })
            .map(Some)
            .ok_or(()),
        Some(_) => Err(()),
    }
}

/// Whether `claims.aud` (a string or an array of them) names one of `ours`.
pub fn audience_is(claims: &Value, ours: &[&str]) -> bool {
    let is_us = |v: &Value| v.as_str().is_some_and(|a| ours.contains(&a));
    match claims.get("aud") {
        Some(Value::Array(items)) => items.iter().any(is_us),
        Some(single) => is_us(single),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn segment(value: &Value) -> String {
        URL_SAFE_NO_PAD.encode(value.to_string())
    }

    fn token(header: Value, claims: Value) -> String {
        format!("{}.{}.c2ln", segment(&header), segment(&claims))
    }

    const MAX: usize = 16 * 1024;

    #[test]
    fn only_asymmetric_algorithms_are_accepted() {
        for alg in SUPPORTED_ALGS {
            let parsed = Unverified::parse(&token(json!({"alg": alg}), json!({"sub": "x"})), MAX);
            assert_eq!(parsed.unwrap().claim("sub"), Some("x"), "{alg}");
        }
        for alg in [
            json!("none"),
            json!("None"),
            json!("HS256"),
            json!("HS512"),
            json!("ES384"),
            json!("RS512"),
            json!(""),
            json!(null),
            json!(["ES256"]),
        ] {
            let error = Unverified::parse(&token(json!({"alg": alg}), json!({})), MAX).unwrap_err();
            assert_eq!(error, ShapeError::Algorithm, "{alg}");
            assert!(error.describe("x").contains("never none or HMAC"));
        }
    }

    #[test]
    fn malformed_tokens_are_refused() {
        let ok_header = segment(&json!({"alg": "ES256"}));
        let ok_claims = segment(&json!({"sub": "x"}));
        for bad in [
            String::new(),
            "a.b".to_owned(),
            format!("{ok_header}.{ok_claims}"),
            format!("{ok_header}.{ok_claims}.sig.extra"),
            // A JWE (five segments) is not decrypted.
            format!("{ok_header}.key.iv.{ok_claims}.tag"),
            format!("!!.{ok_claims}.sig"),
            format!("{ok_header}.!!.sig"),
            format!("{}.{ok_claims}.sig", segment(&json!(["ES256"]))),
            format!("{ok_header}.{}.sig", segment(&json!("claims"))),
            format!(
                "{}.{ok_claims}.sig",
                segment(&json!({"alg": "ES256", "kid": 5}))
            ),
            format!(
                "{}.{ok_claims}.sig",
                segment(&json!({"alg": "ES256", "typ": ["JWT"]}))
            ),
        ] {
            assert_eq!(
                Unverified::parse(&bad, MAX).unwrap_err(),
                ShapeError::Malformed,
                "{bad}"
            );
        }
        let crit = token(json!({"alg": "ES256", "crit": ["exp"]}), json!({}));
        assert_eq!(Unverified::parse(&crit, MAX).unwrap_err(), ShapeError::Crit);
        let huge = token(json!({"alg": "ES256"}), json!({"x": "y".repeat(MAX)}));
        assert_eq!(
            Unverified::parse(&huge, MAX).unwrap_err(),
            ShapeError::TooLarge
        );
        let typed = token(
            json!({"alg": "ES256", "typ": "oauth-authz-req+jwt", "kid": "k"}),
            json!({}),
        );
        let parsed = Unverified::parse(&typed, MAX).unwrap();
        assert_eq!(parsed.typ.as_deref(), Some("oauth-authz-req+jwt"));
        assert_eq!(parsed.kid.as_deref(), Some("k"));
    }

    fn jwk(value: Value) -> Jwk {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn keys_are_chosen_by_kid_or_uniqueness_and_must_fit_the_alg() {
        let ec = json!({"kty": "EC", "crv": "P-256", "x": "eA", "y": "eQ", "kid": "ec"});
        let ed = json!({"kty": "OKP", "crv": "Ed25519", "x": "eA", "kid": "ed"});
        let rsa = json!({"kty": "RSA", "n": "bg", "e": "AQAB", "kid": "rsa"});
        let keys = vec![jwk(ec.clone()), jwk(ed.clone()), jwk(rsa.clone())];
        assert_eq!(
            select_key(&keys, Some("ec"), Algorithm::ES256).map(|k| &k.common.key_id),
            Some(&Some("ec".to_owned()))
        );
        assert!(select_key(&keys, Some("ed"), Algorithm::EdDSA).is_some());
        assert!(select_key(&keys, Some("rsa"), Algorithm::RS256).is_some());
        assert!(select_key(&keys, Some("rsa"), Algorithm::PS256).is_some());
        // Unknown kid, type/alg mismatch, and no kid among several keys.
        assert!(select_key(&keys, Some("nope"), Algorithm::ES256).is_none());
        assert!(select_key(&keys, Some("ec"), Algorithm::EdDSA).is_none());
        assert!(select_key(&keys, Some("rsa"), Algorithm::ES256).is_none());
        assert!(select_key(&keys, None, Algorithm::ES256).is_none());
        // The only key serves a token without kid.
        assert!(select_key(&[jwk(ec.clone())], None, Algorithm::ES256).is_some());
        // `use: enc`, a declared alg that differs, a P-384 key, a symmetric key: refused.
        let mut enc = ec.clone();
        enc["use"] = json!("enc");
        assert!(select_key(&[jwk(enc)], None, Algorithm::ES256).is_none());
        let mut declared = rsa.clone();
        declared["alg"] = json!("RS256");
        assert!(select_key(&[jwk(declared.clone())], None, Algorithm::PS256).is_none());
        assert!(select_key(&[jwk(declared)], None, Algorithm::RS256).is_some());
        let mut p384 = ec;
        p384["crv"] = json!("P-384");
        assert!(select_key(&[jwk(p384)], None, Algorithm::ES256).is_none());
        let oct = json!({"kty": "oct", "k": "c2VjcmV0"});
        assert!(select_key(&[jwk(oct)], None, Algorithm::ES256).is_none());
    }

    #[test]
    fn audience_may_be_a_string_or_an_array_naming_us() {
        let ours = ["https://a.example", "https://a.example/oauth/token"];
        assert!(audience_is(&json!({"aud": "https://a.example"}), &ours));
        assert!(audience_is(
            &json!({"aud": ["https://b.example", "https://a.example/oauth/token"]}),
            &ours
        ));
        assert!(!audience_is(&json!({"aud": "https://b.example"}), &ours));
        assert!(!audience_is(&json!({"aud": 5}), &ours));
        assert!(!audience_is(&json!({}), &ours));
    }

    #[test]
    fn numeric_dates_are_numbers_or_refused() {
        assert_eq!(numeric_date(&json!({"exp": 5}), "exp"), Ok(Some(5)));
        assert_eq!(numeric_date(&json!({"exp": 5.9}), "exp"), Ok(Some(5)));
        assert_eq!(numeric_date(&json!({}), "exp"), Ok(None));
        assert_eq!(numeric_date(&json!({"exp": "5"}), "exp"), Err(()));
    }
}
