//! ID tokens (OIDC Core §2, §3.1.3.6).
//!
//! Rules enforced here:
//! - Signed with the application's `id_token_signed_response_alg` (RS256 unless registered
//!   otherwise; CONTRACTS.md "Tokens"), header `typ: JWT`, `kid` of the tenant's JWKS.
//! - Claims: `iss`, `sub` (the subject this application sees), `aud` (the client id, a single
//!   string), `azp` is not needed with one audience, `exp` (`jwt.id_token_lifetime_secs`),
//!   `iat`, `auth_time`, `nonce` (only when the authorization request carried one; never on
//!   refresh, OIDC Core §12.2), `acr` when known, `amr`, `sid` (the session), `at_hash` (the
//!   left half of the access token's hash for the signing algorithm, §3.1.3.6).
//! - Profile and email claims are served by UserInfo (§5.4: with an access token issued,
//!   claims are returned from UserInfo); they appear here only when the `claims` request asked
//!   for them under `id_token` and consent permits them ([`crate::claims`]), never overriding
//!   the claims above.
//! - `acr` is present whenever the session has one (every password sign-in does:
//!   `urn:svc:aal1`), whether or not it was requested.

use crate::error::OAuthError;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value, json};
use std::time::Duration;
use svc_crypto::SigningKey;
use svc_crypto::digest::left_half_hash;
use svc_domain::SessionId;
use time::OffsetDateTime;

/// Everything an ID token states.
#[derive(Debug, Clone)]
pub struct IdTokenFacts<'a> {
    /// The tenant's issuer.
    pub issuer: &'a str,
    /// The subject the application sees.
    pub subject: &'a str,
    /// The application.
    pub client_id: &'a str,
    /// When the person authenticated.
    pub auth_time: OffsetDateTime,
    /// `nonce` of the authorization request, first issuance only.
    pub nonce: Option<&'a str>,
    /// Assurance reached.
    pub acr: Option<&'a str>,
    /// Methods used.
    pub amr: &'a [String],
    /// The browser session.
    pub session: Option<&'a SessionId>,
    /// The access token issued alongside (for `at_hash`).
    pub access_token: &'a str,
    /// Person claims requested for the ID token and permitted by consent.
    pub person: &'a Map<String, Value>,
    /// The organization the person acts in (`org_id`, `org_slug`), when the grant has one.
    pub organization: Option<crate::token::OrgClaims<'a>>,
}

/// Signs the ID token for `facts` with `signer` at `now`, living `lifetime`.
pub fn sign_id_token(
    signer: &SigningKey,
    facts: &IdTokenFacts<'_>,
    now: OffsetDateTime,
    lifetime: Duration,
) -> Result<String, OAuthError> {
    let iat = now.unix_timestamp();
    let exp = iat.saturating_add(i64::try_from(lifetime.as_secs()).unwrap_or(i64::MAX));
    let mut claims = Map::new();
    claims.insert("iss".into(), json!(facts.issuer));
    claims.insert("sub".into(), json!(facts.subject));
    claims.insert("aud".into(), json!(facts.client_id));
    claims.insert("exp".into(), json!(exp));
    claims.insert("iat".into(), json!(iat));
    claims.insert("auth_time".into(), json!(facts.auth_time.unix_timestamp()));
    if let Some(nonce) = facts.nonce {
        claims.insert("nonce".into(), json!(nonce));
    }
    if let Some(acr) = facts.acr {
        claims.insert("acr".into(), json!(acr));
    }
    if !facts.amr.is_empty() {
        claims.insert("amr".into(), json!(facts.amr));
    }
    if let Some(sid) = facts.session {
        claims.insert("sid".into(), json!(sid.as_str()));
    }
    if let Some(org) = facts.organization {
        org.insert_into(&mut claims);
    }
    let at_hash = URL_SAFE_NO_PAD.encode(left_half_hash(signer.alg(), facts.access_token));
    claims.insert("at_hash".into(), json!(at_hash));
    for (name, value) in facts.person {
        claims.entry(name.clone()).or_insert_with(|| value.clone());
    }
    Ok(signer.sign_jwt("JWT", &Value::Object(claims))?)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use svc_crypto::{Jwks, verify_jwt_signature};
    use svc_domain::SigningAlg;

    #[test]
    fn carries_the_oidc_claims_and_verifies() {
        let key = SigningKey::generate(SigningAlg::Rs256).unwrap();
        let client = svc_domain::ClientId::parse("app_01hzzzzzzzzzzzzzzzzzzzzzzz").unwrap();
        let sid = SessionId::parse("ses_01hzzzzzzzzzzzzzzzzzzzzzzz").unwrap();
        let now = OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap();
        let amr = vec!["pwd".to_owned()];
        let token = sign_id_token(
            &key,
            &IdTokenFacts {
                issuer: "https://acme.example",
                subject: "sub-1",
                client_id: client.as_str(),
                auth_time: now - time::Duration::seconds(30),
                nonce: Some("n-0S6_WzA2Mj"),
                acr: None,
                amr: &amr,
                session: Some(&sid),
                access_token: "header.payload.sig",
                person: &Map::from_iter([
                    ("email".to_owned(), json!("ada@example.com")),
                    ("sub".to_owned(), json!("not-the-subject")),
                ]),
                organization: Some(crate::token::OrgClaims {
                    id: "org_01hzzzzzzzzzzzzzzzzzzzzzzz",
                    slug: "acme-eu",
                }),
            },
            now,
            Duration::from_secs(300),
        )
        .unwrap();
        let jwks = Jwks::new([key.public_key().clone()]).unwrap();
        let verified = verify_jwt_signature(&jwks, &token, SigningAlg::Rs256).unwrap();
        let c = verified.claims;
        assert_eq!(c["aud"], "app_01hzzzzzzzzzzzzzzzzzzzzzzz");
        assert_eq!(c["exp"], 1_800_000_300);
        assert_eq!(c["auth_time"], 1_799_999_970);
        assert_eq!(c["nonce"], "n-0S6_WzA2Mj");
        assert_eq!(c["sid"], sid.as_str());
        assert_eq!(c["amr"][0], "pwd");
        assert!(c.get("acr").is_none());
        assert_eq!(c["email"], "ada@example.com");
        assert_eq!(c["org_id"], "org_01hzzzzzzzzzzzzzzzzzzzzzzz");
        assert_eq!(c["org_slug"], "acme-eu");
        assert_eq!(
            c["sub"], "sub-1",
            "person claims never override the standard ones"
        );
        let expected =
            URL_SAFE_NO_PAD.encode(&svc_crypto::digest::sha256(b"header.payload.sig")[..16]);
        assert_eq!(c["at_hash"], expected);
    }
}
