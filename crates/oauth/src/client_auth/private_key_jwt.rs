//! `private_key_jwt` (RFC 7523 §2.2 and §3, OIDC Core §9): the client proves its identity with a
//! JWT signed by a key whose public half it registered.
//!
//! Checks, in order:
//! 1. `client_assertion_type` is `urn:ietf:params:oauth:client-assertion-type:jwt-bearer`
//!    (RFC 7523 §2.2).
//! 2. The assertion is a compact JWS (three segments, a JSON object header) of bounded size.
//! 3. The header `alg` is an asymmetric algorithm we verify: ES256, EdDSA, RS256 or PS256.
//!    `none` and HS* are refused before any key is touched (RFC 8725 §3.1, §3.2; CVE-2026-16093;
//!    HS256 "signed" with a public key as the secret). Headers with `crit` are refused
//!    (RFC 7515 §4.1.11).
//! 4. `sub` names the client (RFC 7523 §3 item 2.B); a `client_id` sent in the body must equal
//!    it (RFC 7521 §4.2).
//! 5. The application exists in this tenant and registered `private_key_jwt`; unknown client,
//!    wrong method, no usable key and a bad signature all give the same `invalid_client`.
//! 6. The key comes from the application's inline `jwks`, or its `jwks_uri` through the
//!    [`JwksFetcher`]; it is chosen by `kid`, or is the only key when the header has no `kid`,
//!    and it must be a public signing key fitting `alg` (kty, crv, `use`, `alg`).
//! 7. The signature verifies (jsonwebtoken, the algorithm chosen by us, not by the token).
//! 8. Claims (RFC 7523 §3): `iss` = `sub` = client_id (items 1, 2); `aud` contains the issuer
//!    or the token endpoint URL (item 3); `exp` present and in the future (item 4) and at most
//!    [`MAX_ASSERTION_LIFETIME`] away; `nbf` and `iat` not beyond [`ASSERTION_CLOCK_SKEW`] in the
//!    future (items 5, 6); `jti` present (item 7).
//! 9. The `jti` is used once: recorded until `exp` with `use_assertion_id`; a replay is
//!    `invalid_client` (RFC 7523 §3 item 7; GHSA-3p3g-vpw6-4w66).
//!
//! `aud` deviation, on purpose: draft-ietf-oauth-rfc7523bis wants exactly the issuer as a single
//! string; we accept an array containing it and the token endpoint URL too, for the many
//! clients written against RFC 7523 and OIDC Core §9 (which name the token endpoint). Neither
//! value can be another server's, so audience injection across servers stays impossible.

use super::{
    AuthenticatedClient, ClientAuthContext, JwksFetcher, expect_method, failed, registered,
};
use crate::error::OAuthError;
use crate::token::request::{Credential, JWT_BEARER_ASSERTION_TYPE};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::Once;
use svc_domain::{Application, ClientId, TokenEndpointAuthMethod};
use svc_store::StoreError;
use time::OffsetDateTime;

/// Longest lifetime (`exp` − now, seconds) of an assertion we accept: assertions are
/// single-use and short-lived, so the replay cache stays small.
pub const MAX_ASSERTION_LIFETIME: i64 = 300;

/// Tolerated client clock skew (seconds) for `iat` and `nbf` in the future.
pub const ASSERTION_CLOCK_SKEW: i64 = 60;

/// The `alg` values a client assertion may use (all asymmetric).
pub const SUPPORTED_ASSERTION_ALGS: [&str; 4] = ["ES256", "EdDSA", "RS256", "PS256"];

/// Longest assertion we parse; real ones are well under 2 KiB.
const MAX_ASSERTION_BYTES: usize = 16 * 1024;

/// Longest `jti` we store.
const MAX_JTI_BYTES: usize = 256;

/// Authenticates a client by its JWT assertion (checks 1–9 of the module doc).
pub(super) async fn private_key_jwt(
    ctx: &ClientAuthContext<'_>,
    body_client_id: Option<&str>,
    assertion_type: &str,
    assertion: &Credential,
) -> Result<AuthenticatedClient, OAuthError> {
    // 1. RFC 7523 §2.2.
    if assertion_type != JWT_BEARER_ASSERTION_TYPE {
        return Err(OAuthError::invalid_client(format!(
            "client_assertion_type must be {JWT_BEARER_ASSERTION_TYPE}"
        )));
    }
    // 2–3.
    let token = assertion.expose();
    let unverified = Unverified::parse(token)?;
    // 4. RFC 7523 §3 item 2.B, RFC 7521 §4.2.
    let sub = unverified.sub.as_deref().ok_or_else(|| {
        OAuthError::invalid_client("the client assertion must carry sub (the client_id)")
    })?;
    if body_client_id.is_some_and(|id| id != sub) {
        return Err(OAuthError::invalid_client(
            "client_id differs from the client assertion's sub",
        ));
    }
    // 5.
    let app = registered(ctx, sub)
        .await?
        .ok_or_else(|| failed("unknown client"))?;
    let client = expect_method(app, TokenEndpointAuthMethod::PrivateKeyJwt)?;
    // 6–7.
    let claims = verify_signature(ctx, &client.application, token, &unverified).await?;
    // 8.
    let now = ctx.clock.now();
    let checked = check_claims(&claims, client.application.id.as_str(), ctx.issuer, now)?;
    // 9.
    use_once(ctx, &client.application.id, &checked.jti, checked.exp, now).await?;
    Ok(client)
}

/// What can be read from an assertion before its signature is checked.
struct Unverified {
    alg: Algorithm,
    kid: Option<String>,
    sub: Option<String>,
}

impl Unverified {
    /// Checks 2 and 3, and reads the (unverified) `sub` to find the application.
    fn parse(token: &str) -> Result<Self, OAuthError> {
        let malformed = || OAuthError::invalid_client("the client assertion is not a signed JWT");
        if token.len() > MAX_ASSERTION_BYTES {
            return Err(OAuthError::invalid_client(
                "the client assertion is too large",
            ));
        }
        let mut segments = token.split('.');
        let (Some(header), Some(payload), Some(_signature), None) = (
            segments.next(),
            segments.next(),
            segments.next(),
            segments.next(),
        ) else {
            return Err(malformed());
        };
        let header = json_object(header).ok_or_else(malformed)?;
        let alg = header
            .get("alg")
            .and_then(Value::as_str)
            .and_then(supported_alg)
            .ok_or_else(|| {
                OAuthError::invalid_client(format!(
                    "the client assertion must be signed with one of {} (never none or HMAC)",
                    SUPPORTED_ASSERTION_ALGS.join(", ")
                ))
            })?;
        if header.contains_key("crit") {
            // RFC 7515 §4.1.11: we understand no extension, so we must refuse any.
            return Err(OAuthError::invalid_client(
                "the client assertion header must not carry crit",
            ));
        }
        let kid = match header.get("kid") {
            None => None,
            Some(Value::String(kid)) => Some(kid.clone()),
            Some(_) => return Err(malformed()),
        };
        let claims = json_object(payload).ok_or_else(malformed)?;
        let sub = claims.get("sub").and_then(Value::as_str).map(str::to_owned);
        Ok(Self { alg, kid, sub })
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

/// Checks 6 and 7: finds the key and verifies the signature; returns the (authentic) claims.
async fn verify_signature(
    ctx: &ClientAuthContext<'_>,
    app: &Application,
    token: &str,
    unverified: &Unverified,
) -> Result<Value, OAuthError> {
    let keys = client_keys(app, ctx.jwks_fetcher).await?;
    let jwk = select_key(&keys, unverified.kid.as_deref(), unverified.alg).ok_or_else(|| {
        failed(match &unverified.kid {
            Some(_) => "no registered key with the assertion's kid fits its alg",
            None => "the assertion has no kid and the client has not exactly one fitting key",
        })
    })?;
    let key =
        DecodingKey::from_jwk(jwk).map_err(|e| failed(format!("registered key unusable: {e}")))?;
    install_jwt_provider();
    let mut validation = Validation::new(unverified.alg);
    // Claims are checked below against the injected clock; jsonwebtoken would read the wall
    // clock. Only the signature (and the header alg) is its job here.
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.required_spec_claims = HashSet::new();
    jsonwebtoken::decode::<Value>(token, &key, &validation)
        .map(|data| data.claims)
        .map_err(|e| failed(format!("client assertion signature: {e}")))
}

/// The application's public keys: inline `jwks`, else `jwks_uri` through the fetcher.
async fn client_keys(
    app: &Application,
    fetcher: Option<&dyn JwksFetcher>,
) -> Result<Vec<Jwk>, OAuthError> {
    let text = match (&app.jwks, &app.jwks_uri) {
        (Some(inline), _) => inline.clone(),
        (None, Some(uri)) => {
            let fetcher = fetcher.ok_or_else(|| {
                OAuthError::invalid_client("jwks_uri not supported")
                    .with_log_detail("no JwksFetcher configured")
            })?;
            fetcher.fetch(uri).await.map_err(|reason| {
                OAuthError::invalid_client("the client's jwks_uri could not be fetched")
                    .with_log_detail(reason)
            })?
        }
        (None, None) => return Err(failed("private_key_jwt client without jwks or jwks_uri")),
    };
    let document: Value =
        serde_json::from_str(&text).map_err(|_| failed("the client's JWKS is not JSON"))?;
    let keys = document
        .get("keys")
        .and_then(Value::as_array)
        .ok_or_else(|| failed("the client's JWKS has no keys array"))?;
    // Keys we cannot parse (other key types, private members we do not model) are skipped, not
    // fatal: one exotic key must not lock the client out.
    Ok(keys
        .iter()
        .filter_map(|k| serde_json::from_value::<Jwk>(k.clone()).ok())
        .collect())
}

/// Check 6: the key named by `kid`, or the only key; it must fit `alg`.
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

/// The claims that outlive the checks.
#[derive(Debug, PartialEq, Eq)]
struct CheckedClaims {
    jti: String,
    exp: OffsetDateTime,
}

/// Check 8 (RFC 7523 §3), on authentic claims.
fn check_claims(
    claims: &Value,
    client_id: &str,
    issuer: &str,
    now: OffsetDateTime,
) -> Result<CheckedClaims, OAuthError> {
    fn refuse(description: impl Into<std::borrow::Cow<'static, str>>) -> OAuthError {
        OAuthError::invalid_client(description)
    }
    // Item 1: the issuer of a client assertion is the client itself.
    if claims.get("iss").and_then(Value::as_str) != Some(client_id) {
        return Err(refuse("the client assertion's iss must be the client_id"));
    }
    // Item 2.B: the subject is the client_id.
    if claims.get("sub").and_then(Value::as_str) != Some(client_id) {
        return Err(refuse("the client assertion's sub must be the client_id"));
    }
    // Item 3: we must be an intended audience.
    let token_endpoint = format!("{issuer}/oauth/token");
    let is_us = |v: &Value| {
        v.as_str()
            .is_some_and(|a| a == issuer || a == token_endpoint)
    };
    let aud_ok = match claims.get("aud") {
        Some(Value::Array(items)) => items.iter().any(is_us),
        Some(single) => is_us(single),
        None => false,
    };
    if !aud_ok {
        return Err(refuse(format!(
            "the client assertion's aud must be the issuer {issuer}"
        )));
    }
    let now_secs = now.unix_timestamp();
    // Item 4: exp is required and in the future; we also bound how far.
    let exp = numeric_date(claims, "exp")?
        .ok_or_else(|| refuse("the client assertion must carry exp"))?;
    if exp <= now_secs {
        return Err(refuse("the client assertion has expired"));
    }
    if exp - now_secs > MAX_ASSERTION_LIFETIME {
        return Err(refuse(format!(
            "the client assertion must expire within {MAX_ASSERTION_LIFETIME} seconds"
        )));
    }
    // Item 5: honour nbf; item 6: iat not in the future (both with a small skew).
    if numeric_date(claims, "nbf")?.is_some_and(|nbf| nbf > now_secs + ASSERTION_CLOCK_SKEW) {
        return Err(refuse("the client assertion is not valid yet (nbf)"));
    }
    if numeric_date(claims, "iat")?.is_some_and(|iat| iat > now_secs + ASSERTION_CLOCK_SKEW) {
        return Err(refuse(
            "the client assertion was issued in the future (iat)",
        ));
    }
    // Item 7: a jti makes single use enforceable.
    let jti = match claims.get("jti") {
        Some(Value::String(jti)) if !jti.is_empty() && jti.len() <= MAX_JTI_BYTES => jti.clone(),
        Some(Value::String(jti)) if !jti.is_empty() => {
            return Err(refuse(format!(
                "the client assertion's jti must be at most {MAX_JTI_BYTES} bytes"
            )));
        }
        _ => return Err(refuse("the client assertion must carry jti")),
    };
    let exp = OffsetDateTime::from_unix_timestamp(exp)
        .map_err(|_| refuse("the client assertion's exp is out of range"))?;
    Ok(CheckedClaims { jti, exp })
}

/// A NumericDate claim (RFC 7519 §2) as whole seconds; `Err` when present but not a number.
fn numeric_date(claims: &Value, name: &str) -> Result<Option<i64>, OAuthError> {
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
            .ok_or_else(|| bad_date(name)),
        Some(_) => Err(bad_date(name)),
    }
}

fn bad_date(name: &str) -> OAuthError {
    OAuthError::invalid_client(format!(
        "the client assertion's {name} must be a NumericDate"
    ))
}

/// Check 9: RFC 7523 §3 item 7, "the authorization server MAY ensure that JWTs are not
/// replayed"; we do, for as long as the assertion could be valid.
async fn use_once(
    ctx: &ClientAuthContext<'_>,
    client: &ClientId,
    jti: &str,
    exp: OffsetDateTime,
    now: OffsetDateTime,
) -> Result<(), OAuthError> {
    let mut tx = ctx.store.write().await?;
    match tx.use_assertion_id(ctx.tenant, client, jti, exp, now).await {
        Ok(()) => {}
        Err(StoreError::Conflict { .. }) => {
            return Err(OAuthError::invalid_client("client assertion replayed")
                .with_log_detail("jti already used"));
        }
        Err(other) => return Err(other.into()),
    }
    tx.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use serde_json::json;

    const CLIENT: &str = "app_01jd0000000000000000000000";
    const ISSUER: &str = "https://acme.example.com";

    fn at(secs: i64) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(secs).unwrap()
    }

    fn claims(overrides: Value) -> Value {
        let mut base = json!({
            "iss": CLIENT,
            "sub": CLIENT,
            "aud": ISSUER,
            "exp": 1_000_100,
            "iat": 1_000_000,
            "jti": "j-1",
        });
        for (k, v) in overrides.as_object().unwrap() {
            if v.is_null() {
                base.as_object_mut().unwrap().remove(k);
            } else {
                base[k] = v.clone();
            }
        }
        base
    }

    fn check(overrides: Value) -> Result<CheckedClaims, OAuthError> {
        check_claims(&claims(overrides), CLIENT, ISSUER, at(1_000_000))
    }

    fn refused(overrides: Value) -> String {
        let error = check(overrides).unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidClient);
        error.description().to_owned()
    }

    #[test]
    fn well_formed_claims_pass_and_yield_jti_and_exp() {
        assert_eq!(
            check(json!({})).unwrap(),
            CheckedClaims {
                jti: "j-1".into(),
                exp: at(1_000_100)
            }
        );
    }

    #[test]
    fn iss_and_sub_must_be_the_client() {
        assert!(refused(json!({"iss": "app_other"})).contains("iss"));
        assert!(refused(json!({"iss": null})).contains("iss"));
        assert!(refused(json!({"sub": "app_other"})).contains("sub"));
        assert!(refused(json!({"sub": null})).contains("sub"));
    }

    #[test]
    fn aud_must_name_the_issuer_or_its_token_endpoint() {
        for ok in [
            json!(ISSUER),
            json!(format!("{ISSUER}/oauth/token")),
            json!(["https://other.example", ISSUER]),
        ] {
            assert!(check(json!({ "aud": ok })).is_ok(), "{ok}");
        }
        for bad in [
            json!("https://other.example"),
            json!(format!("{ISSUER}/oauth/par")),
            json!(format!("{ISSUER}/")),
            json!([]),
            json!(42),
            Value::Null,
        ] {
            assert!(
                refused(json!({ "aud": bad.clone() })).contains("aud"),
                "{bad}"
            );
        }
    }

    #[test]
    fn exp_is_required_future_and_short() {
        assert!(refused(json!({"exp": null})).contains("exp"));
        assert!(refused(json!({"exp": 1_000_000})).contains("expired"));
        assert!(refused(json!({"exp": 1_000_000 - 300})).contains("expired"));
        assert!(check(json!({"exp": 1_000_000 + MAX_ASSERTION_LIFETIME})).is_ok());
        assert!(
            refused(json!({"exp": 1_000_000 + MAX_ASSERTION_LIFETIME + 1}))
                .contains("expire within")
        );
        assert!(refused(json!({"exp": "1000100"})).contains("NumericDate"));
        // Fractional NumericDates are allowed (RFC 7519 §2).
        assert!(check(json!({"exp": 1_000_100.5})).is_ok());
    }

    #[test]
    fn nbf_and_iat_tolerate_sixty_seconds_of_skew() {
        assert!(check(json!({"nbf": 1_000_008})).is_ok());
        assert!(check(json!({"nbf": 1_000_060, "iat": 1_000_060})).is_ok());
        assert!(refused(json!({"nbf": 1_000_061})).contains("nbf"));
        assert!(refused(json!({"iat": 1_000_061})).contains("iat"));
        assert!(check(json!({"iat": null})).is_ok(), "iat is optional");
        assert!(refused(json!({"nbf": true})).contains("NumericDate"));
    }

    #[test]
    fn jti_is_required() {
        assert!(refused(json!({"jti": null})).contains("jti"));
        assert!(refused(json!({"jti": ""})).contains("jti"));
        assert!(refused(json!({"jti": 7})).contains("jti"));
        assert!(refused(json!({"jti": "x".repeat(257)})).contains("jti"));
    }

    fn segment(value: &Value) -> String {
        URL_SAFE_NO_PAD.encode(value.to_string())
    }

    fn token(header: Value, claims: Value) -> String {
        format!("{}.{}.c2ln", segment(&header), segment(&claims))
    }

    #[test]
    fn only_asymmetric_algorithms_are_accepted() {
        for alg in SUPPORTED_ASSERTION_ALGS {
            let parsed = Unverified::parse(&token(json!({"alg": alg}), json!({"sub": CLIENT})));
            assert!(parsed.is_ok(), "{alg}");
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
            let error = Unverified::parse(&token(json!({"alg": alg}), json!({})))
                .err()
                .unwrap();
            assert_eq!(error.code(), ErrorCode::InvalidClient);
            assert!(error.description().contains("never none or HMAC"), "{alg}");
        }
    }

    #[test]
    fn malformed_assertions_are_refused() {
        let ok_header = segment(&json!({"alg": "ES256"}));
        let ok_claims = segment(&json!({"sub": CLIENT}));
        for bad in [
            String::new(),
            "a.b".to_owned(),
            format!("{ok_header}.{ok_claims}"),
            format!("{ok_header}.{ok_claims}.sig.extra"),
            format!("!!.{ok_claims}.sig"),
            format!("{ok_header}.!!.sig"),
            format!("{}.{ok_claims}.sig", segment(&json!(["ES256"]))),
            format!("{ok_header}.{}.sig", segment(&json!("claims"))),
            format!(
                "{}.{ok_claims}.sig",
                segment(&json!({"alg": "ES256", "kid": 5}))
            ),
        ] {
            let error = Unverified::parse(&bad).err().unwrap();
            assert_eq!(error.code(), ErrorCode::InvalidClient, "{bad}");
        }
        let crit = token(json!({"alg": "ES256", "crit": ["exp"]}), json!({}));
        assert!(
            Unverified::parse(&crit)
                .err()
                .unwrap()
                .description()
                .contains("crit")
        );
        let huge = token(
            json!({"alg": "ES256"}),
            json!({"x": "y".repeat(MAX_ASSERTION_BYTES)}),
        );
        assert!(
            Unverified::parse(&huge)
                .err()
                .unwrap()
                .description()
                .contains("too large")
        );
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
        // The only key serves an assertion without kid.
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
}
