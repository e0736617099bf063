//! Software statements (RFC 7591 §2.3): a JWT in which an authority the deployment trusts
//! vouches for a client's metadata. This module decides whether a statement is authentic; what
//! its claims then mean for a registration is `svc-manage`'s (through the runtime).
//!
//! Rules enforced here, in order:
//! 1. At most 16 KiB, a compact JWS signed with an asymmetric algorithm we verify (ES256, EdDSA,
//!    RS256, PS256; never `none` or HMAC), no `crit` header.
//! 2. Its `iss` is one of the configured issuers; otherwise it is unapproved (RFC 7591 §3.2.2
//!    `unapproved_software_statement`), whatever its signature.
//! 3. The signature verifies with that issuer's configured keys (by `kid`, or its only key);
//!    never another issuer's. An issuer trusted both by the deployment and by a tenant
//!    ([`SoftwareStatements::joined`]) verifies with the keys of either.
//! 4. `exp`, when present, is in the future; `iat`, when present, not more than a minute ahead
//!    (clock skew); `nbf`, when present, reached.

use crate::client_jws::{Unverified, parse_jwks, verify_with};
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk};
use serde_json::{Map, Value};
use time::OffsetDateTime;

/// Longest statement read.
const MAX_BYTES: usize = 16 * 1024;
/// Clock skew allowed on `iat` and `nbf`.
const SKEW_SECS: i64 = 60;

/// Why a statement is not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatementError {
    /// Not from an issuer this deployment trusts (RFC 7591 `unapproved_software_statement`).
    Unapproved(String),
    /// Malformed, badly signed, expired (RFC 7591 `invalid_software_statement`).
    Invalid(String),
}

/// One trusted authority and its public keys.
#[derive(Clone)]
struct TrustedIssuer {
    issuer: String,
    keys: Vec<Jwk>,
}

/// The authorities whose statements the deployment accepts
/// (`[dynamic_registration].software_statement_issuers`).
pub struct SoftwareStatements {
    issuers: Vec<TrustedIssuer>,
}

impl SoftwareStatements {
    /// The authorities of `configured` (issuer, JWK Set document); `Err` names the first whose
    /// key set is not usable (not JSON, no `keys`, or no key we can verify with).
    pub fn new<'a>(
        configured: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, String> {
        let mut issuers = Vec::new();
        for (issuer, jwks) in configured {
            // Public keys only: a symmetric key would let anyone holding it vouch.
            let keys: Vec<Jwk> = parse_jwks(jwks)
                .map_err(|e| format!("{issuer}: {e:?}"))?
                .into_iter()
                .filter(|k| !matches!(k.algorithm, AlgorithmParameters::OctetKey(_)))
                .collect();
            if keys.is_empty() {
                return Err(format!("{issuer}: the JWK Set holds no usable public key"));
            }
            if issuer.is_empty() {
                return Err("an issuer is empty".into());
            }
            issuers.push(TrustedIssuer {
                issuer: issuer.to_owned(),
                keys,
            });
        }
        Ok(Self { issuers })
    }

    /// Whether any authority is configured.
    pub fn is_empty(&self) -> bool {
        self.issuers.is_empty()
    }

    /// These authorities and `more` (a tenant's own, beside the deployment's).
    #[must_use]
    pub fn joined(&self, more: &Self) -> Self {
        let mut issuers = self.issuers.clone();
        issuers.extend(more.issuers.iter().cloned());
        Self { issuers }
    }

    /// The authentic claims of `statement` at `now` (rules 1–4).
    pub fn verify(
        &self,
        statement: &str,
        now: OffsetDateTime,
    ) -> Result<Map<String, Value>, StatementError> {
        // 1.
        let unverified = Unverified::parse(statement, MAX_BYTES)
            .map_err(|e| StatementError::Invalid(e.describe("software statement")))?;
        // 2.
        let issuer = unverified.claim("iss").ok_or_else(|| {
            StatementError::Unapproved("the software statement names no issuer (iss)".into())
        })?;
        let keys: Vec<Jwk> = self
            .issuers
            .iter()
            .filter(|t| t.issuer == issuer)
            .flat_map(|t| t.keys.iter().cloned())
            .collect();
        if keys.is_empty() {
            return Err(StatementError::Unapproved(format!(
                "software statements of {issuer:?} are not accepted here"
            )));
        }
        // 3. The reason stays in the logs: it must not tell which key or why.
        let claims = verify_with(&keys, statement, &unverified).map_err(|e| {
            tracing::info!(issuer, reason = ?e, "software statement refused");
            StatementError::Invalid(
                "the software statement's signature does not verify with its issuer's keys".into(),
            )
        })?;
        let Value::Object(claims) = claims else {
            return Err(StatementError::Invalid(
                "the software statement's payload is not a JSON object".into(),
            ));
        };
        // 4.
        check_times(&claims, now.unix_timestamp())?;
        Ok(claims)
    }
}

/// Rule 4.
fn check_times(claims: &Map<String, Value>, now: i64) -> Result<(), StatementError> {
    let instant = |name: &str| -> Result<Option<i64>, StatementError> {
        match claims.get(name) {
            None => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| {
                StatementError::Invalid(format!("{name} must be a number of seconds"))
            }),
        }
    };
    if instant("exp")?.is_some_and(|exp| exp <= now) {
        return Err(StatementError::Invalid(
            "the software statement has expired".into(),
        ));
    }
    if instant("iat")?.is_some_and(|iat| iat > now + SKEW_SECS) {
        return Err(StatementError::Invalid(
            "the software statement was issued in the future (iat)".into(),
        ));
    }
    if instant("nbf")?.is_some_and(|nbf| nbf > now + SKEW_SECS) {
        return Err(StatementError::Invalid(
            "the software statement is not valid yet (nbf)".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;
    use svc_crypto::{SigningAlg, SigningKey};

    fn jwks_of(key: &SigningKey) -> String {
        json!({"keys": [key.public_key().to_json()]}).to_string()
    }

    fn now() -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(1_900_000_000).unwrap()
    }

    #[test]
    fn a_trusted_issuers_statement_verifies_and_yields_its_claims() {
        let key = SigningKey::generate(SigningAlg::Es256).unwrap();
        let other = SigningKey::generate(SigningAlg::Es256).unwrap();
        let (a, b) = (jwks_of(&key), jwks_of(&other));
        let trusted = SoftwareStatements::new([
            ("https://house.example", a.as_str()),
            ("https://b.example", b.as_str()),
        ])
        .unwrap();
        let t = now().unix_timestamp();
        let claims = json!({
            "iss": "https://house.example", "iat": t, "exp": t + 600,
            "software_id": "4NRB1-0XZABZI9E6-5SM3R", "client_name": "Vouched",
            "redirect_uris": ["https://vouched.example/cb"],
        });
        let statement = key.sign_jwt("JWT", &claims).unwrap();
        let verified = trusted.verify(&statement, now()).unwrap();
        assert_eq!(verified["client_name"], "Vouched");

        // Rule 2: an issuer nobody configured, even when well signed.
        let stranger = key
            .sign_jwt(
                "JWT",
                &json!({"iss": "https://stranger.example", "exp": t + 600}),
            )
            .unwrap();
        assert!(matches!(
            trusted.verify(&stranger, now()),
            Err(StatementError::Unapproved(_))
        ));
        let no_iss = key.sign_jwt("JWT", &json!({"exp": t + 600})).unwrap();
        assert!(matches!(
            trusted.verify(&no_iss, now()),
            Err(StatementError::Unapproved(_))
        ));
        // Rule 3: another trusted issuer's key does not sign for this one.
        let forged = other.sign_jwt("JWT", &claims).unwrap();
        assert!(matches!(
            trusted.verify(&forged, now()),
            Err(StatementError::Invalid(m)) if m.contains("signature")
        ));
        // A flipped signature byte.
        let mut tampered = statement.clone();
        let last = tampered.pop().unwrap();
        tampered.push(if last == 'A' { 'B' } else { 'A' });
        assert!(matches!(
            trusted.verify(&tampered, now()),
            Err(StatementError::Invalid(_))
        ));
        // Rule 4.
        let expired = key
            .sign_jwt("JWT", &json!({"iss": "https://house.example", "exp": t}))
            .unwrap();
        assert!(matches!(
            trusted.verify(&expired, now()),
            Err(StatementError::Invalid(m)) if m.contains("expired")
        ));
        let future = key
            .sign_jwt(
                "JWT",
                &json!({"iss": "https://house.example", "iat": t + 3600}),
            )
            .unwrap();
        assert!(matches!(
            trusted.verify(&future, now()),
            Err(StatementError::Invalid(_))
        ));
    }

    #[test]
    fn unsigned_hmac_and_malformed_statements_are_invalid() {
        let key = SigningKey::generate(SigningAlg::Es256).unwrap();
        let jwks = jwks_of(&key);
        let trusted = SoftwareStatements::new([("https://house.example", jwks.as_str())]).unwrap();
        use base64::Engine;
        let b64 =
            |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        let payload = b64(&json!({"iss": "https://house.example"}));
        for header in [json!({"alg": "none"}), json!({"alg": "HS256"})] {
            let token = format!("{}.{payload}.", b64(&header));
            assert!(matches!(
                trusted.verify(&token, now()),
                Err(StatementError::Invalid(m)) if m.contains("never none or HMAC")
            ));
        }
        for junk in ["", "a.b", "not a jwt", &"x".repeat(20_000)] {
            assert!(matches!(
                trusted.verify(junk, now()),
                Err(StatementError::Invalid(_))
            ));
        }
    }

    #[test]
    fn unusable_key_sets_are_refused_at_start_naming_the_issuer() {
        for bad in [
            "not json",
            r#"{"nokeys":[]}"#,
            r#"{"keys":[{"kty":"oct","k":"AA"}]}"#,
        ] {
            let err = SoftwareStatements::new([("https://house.example", bad)])
                .err()
                .unwrap();
            assert!(err.contains("https://house.example"), "{err}");
        }
    }

    #[test]
    fn a_joined_set_trusts_both_and_each_issuer_keeps_its_own_keys() {
        let house = SigningKey::generate(SigningAlg::Es256).unwrap();
        let tenant = SigningKey::generate(SigningAlg::EdDsa).unwrap();
        let (h, t) = (jwks_of(&house), jwks_of(&tenant));
        let deployment = SoftwareStatements::new([("https://house.example", h.as_str())]).unwrap();
        let own = SoftwareStatements::new([
            ("https://tenant.example", t.as_str()),
            // The tenant adds a key for the deployment's issuer too.
            ("https://house.example", t.as_str()),
        ])
        .unwrap();
        let joined = deployment.joined(&own);
        let exp = now().unix_timestamp() + 600;
        let by_tenant = tenant
            .sign_jwt("JWT", &json!({"iss": "https://tenant.example", "exp": exp}))
            .unwrap();
        assert!(matches!(
            deployment.verify(&by_tenant, now()),
            Err(StatementError::Unapproved(_))
        ));
        assert!(joined.verify(&by_tenant, now()).is_ok());
        for key in [&house, &tenant] {
            let for_house = key
                .sign_jwt("JWT", &json!({"iss": "https://house.example", "exp": exp}))
                .unwrap();
            assert!(joined.verify(&for_house, now()).is_ok());
        }
        // The deployment's key never signs for the tenant's issuer.
        let forged = house
            .sign_jwt("JWT", &json!({"iss": "https://tenant.example", "exp": exp}))
            .unwrap();
        assert!(matches!(
            joined.verify(&forged, now()),
            Err(StatementError::Invalid(_))
        ));
    }
}
