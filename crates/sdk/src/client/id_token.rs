//! ID token validation for a relying party: OpenID Connect Core 1.0 §3.1.3.7, item by item,
//! with the algorithm rules of RFC 8725.
//!
//! The checks, in order (each stops at its first failure):
//!
//! 1. Shape: a compact JWS with a JSON header (RFC 7515 §7.1).
//! 2. `alg` is exactly the algorithm this client registered (`id_token_signed_response_alg`,
//!    RS256 unless configured; item 7). The allowlist is ours, never the token's: `none` and HS*
//!    are refused before any key is looked at (RFC 8725 §3.1–3.2). A `typ` of `at+jwt` is an
//!    access token passed off as an ID token (RFC 8725 §3.11).
//! 3. The key its `kid` names in the issuer's JWKS has the type the algorithm needs, and the
//!    signature verifies with it (item 6).
//! 4. `iss` is the issuer (item 2).
//! 5. `aud` contains the client; with several audiences, `azp` is present; `azp`, when present,
//!    is the client (items 3–5).
//! 6. `exp` is after now and `iat` is not after now, each with [`ID_TOKEN_LEEWAY_SECS`] of clock
//!    skew (items 9–10); `sub` is present.
//! 7. `nonce` equals the authorization request's, compared in constant time (item 11).

use super::error::IdTokenError;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

/// Clock skew tolerated between this relying party and svc, in seconds.
pub const ID_TOKEN_LEEWAY_SECS: i64 = 60;

/// Largest ID token accepted, in bytes.
const MAX_ID_TOKEN_BYTES: usize = 16 * 1024;

/// The claims of an ID token that passed every check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdTokenClaims {
    /// The person's subject identifier at this client.
    pub sub: String,
    /// Authentication time, when present (seconds since the epoch).
    pub auth_time: Option<i64>,
    /// Authentication context class reached, when present.
    pub acr: Option<String>,
    /// Every claim, as issued.
    pub all: Map<String, Value>,
}

/// What the checks compare against.
pub(crate) struct Expected<'a> {
    pub(crate) issuer: &'a str,
    pub(crate) client_id: &'a str,
    pub(crate) alg: Algorithm,
    pub(crate) nonce: Option<&'a str>,
    pub(crate) now_unix: i64,
}

/// Check 1–2: the header, before any key: `(alg, kid)`.
pub(crate) fn header(token: &str, alg: Algorithm) -> Result<String, IdTokenError> {
    if token.len() > MAX_ID_TOKEN_BYTES || token.split('.').count() != 3 {
        return Err(IdTokenError::Malformed);
    }
    let header = token.split('.').next().unwrap_or_default();
    let header: Value = URL_SAFE_NO_PAD
        .decode(header)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or(IdTokenError::Malformed)?;
    let named = header.get("alg").and_then(Value::as_str).unwrap_or("");
    if named != algorithm_name(alg) {
        return Err(IdTokenError::DisallowedAlgorithm);
    }
    let typ = header.get("typ").and_then(Value::as_str).unwrap_or("");
    if typ.eq_ignore_ascii_case("at+jwt") || typ.eq_ignore_ascii_case("application/at+jwt") {
        return Err(IdTokenError::WrongType);
    }
    if header.get("crit").is_some() {
        return Err(IdTokenError::Malformed);
    }
    Ok(header
        .get("kid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned())
}

/// Checks 3–7 on `token` whose header passed [`header`], with the issuer's `jwks`.
pub(crate) fn verify(
    token: &str,
    kid: &str,
    jwks: &JwkSet,
    expected: &Expected<'_>,
) -> Result<IdTokenClaims, IdTokenError> {
    let jwk = jwks.find(kid).ok_or(IdTokenError::UnknownKey)?;
    if !key_fits(jwk, expected.alg) {
        return Err(IdTokenError::UnknownKey);
    }
    let key = DecodingKey::from_jwk(jwk).map_err(|_| IdTokenError::UnknownKey)?;
    let mut validation = Validation::new(expected.alg);
    // The claim checks below are this module's, in the specification's order and with its
    // errors; jsonwebtoken does the cryptography only.
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    crate::provider::ensure_installed();
    let claims = match jsonwebtoken::decode::<Value>(token, &key, &validation) {
        Ok(data) => data.claims,
        Err(e) if *e.kind() == jsonwebtoken::errors::ErrorKind::InvalidSignature => {
            return Err(IdTokenError::BadSignature);
        }
        Err(_) => return Err(IdTokenError::Malformed),
    };
    let Value::Object(claims) = claims else {
        return Err(IdTokenError::Malformed);
    };
    check_claims(claims, expected)
}

/// Checks 4–7 on verified claims.
fn check_claims(
    claims: Map<String, Value>,
    expected: &Expected<'_>,
) -> Result<IdTokenClaims, IdTokenError> {
    let text = |name: &str| claims.get(name).and_then(Value::as_str);
    let number = |name: &str| claims.get(name).and_then(Value::as_i64);
    if text("iss") != Some(expected.issuer) {
        return Err(IdTokenError::WrongIssuer);
    }
    let audiences: Vec<&str> = match claims.get("aud") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    if !audiences.contains(&expected.client_id) {
        return Err(IdTokenError::WrongAudience);
    }
    match text("azp") {
        Some(azp) if azp != expected.client_id => return Err(IdTokenError::WrongAudience),
        None if audiences.len() > 1 => return Err(IdTokenError::WrongAudience),
        _ => {}
    }
    let (Some(exp), Some(iat)) = (number("exp"), number("iat")) else {
        return Err(IdTokenError::MissingClaim);
    };
    if expected.now_unix >= exp.saturating_add(ID_TOKEN_LEEWAY_SECS) {
        return Err(IdTokenError::Expired);
    }
    if iat > expected.now_unix.saturating_add(ID_TOKEN_LEEWAY_SECS) {
        return Err(IdTokenError::IssuedInFuture);
    }
    let sub = text("sub")
        .filter(|s| !s.is_empty())
        .ok_or(IdTokenError::MissingClaim)?
        .to_owned();
    if let Some(nonce) = expected.nonce {
        let got = text("nonce").unwrap_or("");
        if aws_lc_rs::constant_time::verify_slices_are_equal(got.as_bytes(), nonce.as_bytes())
            .is_err()
        {
            return Err(IdTokenError::NonceMismatch);
        }
    }
    Ok(IdTokenClaims {
        sub,
        auth_time: number("auth_time"),
        acr: text("acr").map(str::to_owned),
        all: claims,
    })
}

/// The JOSE name of the algorithms an svc ID token may use.
fn algorithm_name(alg: Algorithm) -> &'static str {
    match alg {
        Algorithm::RS256 => "RS256",
        Algorithm::ES256 => "ES256",
        Algorithm::EdDSA => "EdDSA",
        // Anything else is never accepted: a name no token can match.
        _ => "\u{0}unsupported",
    }
}

/// The JWK's type and curve fit `alg` (RFC 7518 §3.3–3.4, RFC 8037 §3.1).
fn key_fits(jwk: &Jwk, alg: Algorithm) -> bool {
    match (&jwk.algorithm, alg) {
        (AlgorithmParameters::RSA(_), Algorithm::RS256) => true,
        (AlgorithmParameters::EllipticCurve(p), Algorithm::ES256) => p.curve == EllipticCurve::P256,
        (AlgorithmParameters::OctetKeyPair(p), Algorithm::EdDSA) => {
            p.curve == EllipticCurve::Ed25519
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
    use jsonwebtoken::{EncodingKey, Header};
    use serde_json::json;

    const ISSUER: &str = "https://acme.id.example";
    const CLIENT: &str = "app_01jd0000000000000000000000";
    const NOW: i64 = 1_800_000_000;

    /// A fresh P-256 key: its encoding key and its one-key JWKS (`kid` "k1").
    fn key() -> (EncodingKey, JwkSet) {
        let rng = aws_lc_rs::rand::SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref()).unwrap();
        let point = pair.public_key().as_ref();
        let jwks: JwkSet = serde_json::from_value(json!({"keys": [{
            "kty": "EC", "crv": "P-256", "kid": "k1", "use": "sig",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        }]}))
        .unwrap();
        (EncodingKey::from_ec_der(pkcs8.as_ref()), jwks)
    }

    fn claims() -> Value {
        json!({"iss": ISSUER, "aud": CLIENT, "sub": "usr_1", "exp": NOW + 300, "iat": NOW,
               "nonce": "n-123", "auth_time": NOW - 10, "acr": "urn:svc:aal1"})
    }

    fn sign(encoding: &EncodingKey, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some("k1".into());
        crate::provider::ensure_installed();
        jsonwebtoken::encode(&header, claims, encoding).unwrap()
    }

    fn check(
        token: &str,
        jwks: &JwkSet,
        nonce: Option<&str>,
    ) -> Result<IdTokenClaims, IdTokenError> {
        check_at(token, jwks, nonce, NOW)
    }

    fn check_at(
        token: &str,
        jwks: &JwkSet,
        nonce: Option<&str>,
        now: i64,
    ) -> Result<IdTokenClaims, IdTokenError> {
        let expected = Expected {
            issuer: ISSUER,
            client_id: CLIENT,
            alg: Algorithm::ES256,
            nonce,
            now_unix: now,
        };
        let kid = header(token, expected.alg)?;
        verify(token, &kid, jwks, &expected)
    }

    #[test]
    fn a_good_token_passes_with_its_claims() {
        let (encoding, jwks) = key();
        let token = sign(&encoding, &claims());
        let ok = check(&token, &jwks, Some("n-123")).unwrap();
        assert_eq!(ok.sub, "usr_1");
        assert_eq!(ok.auth_time, Some(NOW - 10));
        assert_eq!(ok.acr.as_deref(), Some("urn:svc:aal1"));
        // Without an expected nonce (a refresh), the nonce is not compared.
        assert!(check(&token, &jwks, None).is_ok());
    }

    #[test]
    fn each_claim_rule_refuses_its_violation() {
        let (encoding, jwks) = key();
        let with = |patch: Value| {
            let mut c = claims();
            for (k, v) in patch.as_object().unwrap() {
                if v.is_null() {
                    c.as_object_mut().unwrap().remove(k);
                } else {
                    c[k] = v.clone();
                }
            }
            sign(&encoding, &c)
        };
        for (patch, error) in [
            (
                json!({"iss": "https://evil.example"}),
                IdTokenError::WrongIssuer,
            ),
            (json!({"aud": "app_other"}), IdTokenError::WrongAudience),
            (
                json!({"aud": [CLIENT, "app_other"]}),
                IdTokenError::WrongAudience,
            ),
            (
                json!({"aud": [CLIENT, "app_other"], "azp": "app_other"}),
                IdTokenError::WrongAudience,
            ),
            (
                json!({"exp": NOW - ID_TOKEN_LEEWAY_SECS}),
                IdTokenError::Expired,
            ),
            (
                json!({"iat": NOW + ID_TOKEN_LEEWAY_SECS + 1}),
                IdTokenError::IssuedInFuture,
            ),
            (json!({"sub": null}), IdTokenError::MissingClaim),
            (json!({"exp": "soon"}), IdTokenError::MissingClaim),
            (json!({"nonce": "n-other"}), IdTokenError::NonceMismatch),
            (json!({"nonce": null}), IdTokenError::NonceMismatch),
        ] {
            assert_eq!(
                check(&with(patch.clone()), &jwks, Some("n-123")).unwrap_err(),
                error,
                "{patch}"
            );
        }
        // Several audiences are fine with `azp` naming this client.
        let both = with(json!({"aud": [CLIENT, "app_other"], "azp": CLIENT}));
        assert!(check(&both, &jwks, Some("n-123")).is_ok());
        // Within the leeway, a token just past `exp` still passes; the clock is the caller's.
        let token = sign(&encoding, &claims());
        assert!(check_at(&token, &jwks, None, NOW + 300 + ID_TOKEN_LEEWAY_SECS - 1).is_ok());
        assert_eq!(
            check_at(&token, &jwks, None, NOW + 300 + ID_TOKEN_LEEWAY_SECS).unwrap_err(),
            IdTokenError::Expired
        );
    }

    #[test]
    fn algorithm_key_and_signature_rules_refuse_forgeries() {
        let (encoding, jwks) = key();
        let token = sign(&encoding, &claims());
        let payload = token.split('.').nth(1).unwrap();
        let forge = |header: Value, signature: &str| {
            format!(
                "{}.{payload}.{signature}",
                URL_SAFE_NO_PAD.encode(header.to_string())
            )
        };
        // RFC 8725 §3.1: `alg: none`, with or without a signature.
        for signature in ["", "AAAA"] {
            assert_eq!(
                check(
                    &forge(json!({"alg": "none", "kid": "k1"}), signature),
                    &jwks,
                    None
                )
                .unwrap_err(),
                IdTokenError::DisallowedAlgorithm
            );
        }
        // RFC 8725 §2.1: HS256 "signed" with the public key as secret.
        assert_eq!(
            check(
                &forge(json!({"alg": "HS256", "kid": "k1"}), "AAAA"),
                &jwks,
                None
            )
            .unwrap_err(),
            IdTokenError::DisallowedAlgorithm
        );
        // An access token is not an ID token.
        assert_eq!(
            check(
                &forge(
                    json!({"alg": "ES256", "kid": "k1", "typ": "at+jwt"}),
                    "AAAA"
                ),
                &jwks,
                None
            )
            .unwrap_err(),
            IdTokenError::WrongType
        );
        // Another key, or a tampered payload.
        let (_, other_jwks) = key();
        assert_eq!(
            check(&token, &other_jwks, None).unwrap_err(),
            IdTokenError::BadSignature
        );
        let signature = token.split('.').nth(2).unwrap();
        let mut tampered = claims();
        tampered["sub"] = json!("usr_admin");
        let tampered = format!(
            "{}.{}.{signature}",
            token.split('.').next().unwrap(),
            URL_SAFE_NO_PAD.encode(tampered.to_string())
        );
        assert_eq!(
            check(&tampered, &jwks, None).unwrap_err(),
            IdTokenError::BadSignature
        );
        // An unknown kid, and garbage.
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some("k2".into());
        let unknown = jsonwebtoken::encode(&header, &claims(), &encoding).unwrap();
        assert_eq!(
            check(&unknown, &jwks, None).unwrap_err(),
            IdTokenError::UnknownKey
        );
        for garbage in ["", "a.b", "a.b.c.d", "!!.!!.!!"] {
            assert_eq!(
                check(garbage, &jwks, None).unwrap_err(),
                IdTokenError::Malformed,
                "{garbage}"
            );
        }
    }
}
