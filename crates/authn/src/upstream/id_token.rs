//! The upstream provider's ID token, checked as OpenID Connect Core §3.1.3.7 asks of a client
//! using the code flow, every rule a small named check:
//!
//! - the shape, algorithm and signature ([`svc_crypto::foreign_jws`]): asymmetric algorithms
//!   only (`none` and HS* refused before any key is touched, RFC 8725 §3.1), the key chosen
//!   from the provider's `jwks_uri` by `kid`;
//! - `iss` is exactly the configured issuer (item 2; a mix-up otherwise);
//! - `aud` names our client id, and with several audiences `azp` must be present, and when
//!   present it must be our client id (items 3–5);
//! - `exp` is in the future and `iat` not in the future, with [`LEEWAY_SECS`] of clock skew
//!   (items 9–10);
//! - `nonce` equals the attempt's (item 11: a replayed or injected token fails here);
//! - `sub` is a non-empty string of at most 255 bytes (Core §2).

use serde_json::Value;
use subtle::ConstantTimeEq;
use svc_crypto::foreign_jws::{self, Unverified, audience_is, numeric_date};
use svc_domain::MAX_SSO_SUBJECT_BYTES;

/// Largest ID token read.
const MAX_ID_TOKEN_BYTES: usize = 16 * 1024;
/// Clock skew tolerated on `exp` and `iat`, in seconds.
pub(crate) const LEEWAY_SECS: i64 = 60;

/// What the token must match.
pub(crate) struct Expected<'a> {
    /// The configured issuer.
    pub(crate) issuer: &'a str,
    /// Our client id at the provider.
    pub(crate) client_id: &'a str,
    /// The attempt's nonce.
    pub(crate) nonce: &'a str,
    /// Now, in Unix seconds.
    pub(crate) now: i64,
}

/// What we use of a verified ID token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UpstreamIdentity {
    /// The provider's subject.
    pub(crate) subject: String,
    /// The address, when the provider gave one.
    pub(crate) email: Option<String>,
    /// Whether the provider says the address is verified (`true`, or the string `"true"`
    /// some providers send).
    pub(crate) email_verified: bool,
    /// `name`, when given.
    pub(crate) name: Option<String>,
    /// The provider's `acr`.
    pub(crate) acr: Option<String>,
    /// The provider's `amr`.
    pub(crate) amr: Vec<String>,
}

impl UpstreamIdentity {
    /// Takes the address (and name, if missing) from a UserInfo answer, whose `sub` must be
    /// the ID token's (Core §5.3.2: otherwise the answer is about someone else).
    pub(crate) fn add_userinfo(&mut self, body: &[u8]) -> Result<(), String> {
        let claims: Value =
            serde_json::from_slice(body).map_err(|_| "the UserInfo answer is not JSON")?;
        if claims.get("sub").and_then(Value::as_str) != Some(self.subject.as_str()) {
            return Err("the UserInfo sub is not the ID token's".into());
        }
        let found = identity(&claims)?;
        self.email = found.email;
        self.email_verified = found.email_verified;
        if self.name.is_none() {
            self.name = found.name;
        }
        Ok(())
    }

    /// Whether the provider asserts more than one factor: `mfa` in `amr`, or an `acr` that
    /// means it (ours, or the OpenID PAPE multi-factor policies).
    pub(crate) fn multi_factor(&self) -> bool {
        const MFA_ACRS: [&str; 4] = [
            svc_domain::ACR_AAL2,
            "http://schemas.openid.net/pape/policies/2007/06/multi-factor",
            "http://schemas.openid.net/pape/policies/2007/06/multi-factor-physical",
            "phrh",
        ];
        self.amr.iter().any(|m| m == svc_domain::AMR_MFA)
            || self.acr.as_deref().is_some_and(|a| MFA_ACRS.contains(&a))
    }
}

/// Verifies `token` against the key set `jwks` (the document as fetched) and `expected`.
///
/// # Errors
/// A short reason for logs and the `sso.login.failed` event, never shown to the person.
pub(crate) fn verify(
    token: &str,
    jwks: &str,
    expected: &Expected<'_>,
) -> Result<UpstreamIdentity, String> {
    let unverified =
        Unverified::parse(token, MAX_ID_TOKEN_BYTES).map_err(|e| e.describe("ID token"))?;
    let keys = foreign_jws::parse_jwks(jwks)?;
    let claims = foreign_jws::verify_with(&keys, token, &unverified)?;
    issuer_matches(&claims, expected.issuer)?;
    audience_matches(&claims, expected.client_id)?;
    times_hold(&claims, expected.now)?;
    nonce_matches(&claims, expected.nonce)?;
    identity(&claims)
}

/// Core §3.1.3.7 item 2. Microsoft's multi-tenant endpoints name their issuer as a template
/// (`https://login.microsoftonline.com/{tenantid}/v2.0`, their discovery document says so): the
/// token's `tid` fills it, and `iss` must then be exactly the result.
fn issuer_matches(claims: &Value, issuer: &str) -> Result<(), String> {
    let expected = if issuer.contains(TENANT_TEMPLATE) {
        let tid = claims
            .get("tid")
            .and_then(Value::as_str)
            .filter(|t| {
                !t.is_empty()
                    && t.len() <= 64
                    && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            })
            .ok_or("iss cannot be checked: tid is missing or malformed")?;
        issuer.replace(TENANT_TEMPLATE, tid)
    } else {
        issuer.to_owned()
    };
    match claims.get("iss").and_then(Value::as_str) {
        Some(iss) if iss == expected => Ok(()),
        _ => Err("iss is not the configured issuer".into()),
    }
}

/// The placeholder of a multi-tenant issuer.
pub(crate) const TENANT_TEMPLATE: &str = "{tenantid}";

/// Core §3.1.3.7 items 3–5.
fn audience_matches(claims: &Value, client_id: &str) -> Result<(), String> {
    if !audience_is(claims, &[client_id]) {
        return Err("aud does not name our client id".into());
    }
    let several = claims
        .get("aud")
        .and_then(Value::as_array)
        .is_some_and(|a| a.len() > 1);
    match claims.get("azp") {
        None if several => Err("several audiences and no azp".into()),
        None => Ok(()),
        Some(azp) if azp.as_str() == Some(client_id) => Ok(()),
        Some(_) => Err("azp is not our client id".into()),
    }
}

/// Core §3.1.3.7 items 9–10.
fn times_hold(claims: &Value, now: i64) -> Result<(), String> {
    let date = |name: &str| {
        numeric_date(claims, name)
            .map_err(|()| format!("{name} is not a number"))?
            .ok_or_else(|| format!("{name} is missing"))
    };
    if now >= date("exp")?.saturating_add(LEEWAY_SECS) {
        return Err("the ID token has expired".into());
    }
    if date("iat")? > now.saturating_add(LEEWAY_SECS) {
        return Err("the ID token was issued in the future".into());
    }
    Ok(())
}

/// Core §3.1.3.7 item 11.
fn nonce_matches(claims: &Value, nonce: &str) -> Result<(), String> {
    match claims.get("nonce").and_then(Value::as_str) {
        Some(given) if bool::from(given.as_bytes().ct_eq(nonce.as_bytes())) => Ok(()),
        Some(_) => Err("nonce does not match this sign-in".into()),
        None => Err("nonce is missing".into()),
    }
}

/// A claim that vouches: `true`, or the string `"true"` some providers send (Apple).
fn flag(claim: Option<&Value>) -> bool {
    match claim {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s == "true",
        _ => false,
    }
}

/// The identity claims (Core §2, §5.1). Microsoft's identity platform never sends
/// `email_verified`; its optional claim `xms_edov` ("email domain owner verified") is what
/// vouches for an address there, and counts the same.
fn identity(claims: &Value) -> Result<UpstreamIdentity, String> {
    let subject = claims
        .get("sub")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty() && s.len() <= MAX_SSO_SUBJECT_BYTES)
        .ok_or("sub is missing, empty or longer than 255 bytes")?;
    let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
    let email_verified = flag(claims.get("email_verified")) || flag(claims.get("xms_edov"));
    let amr = claims
        .get("amr")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Ok(UpstreamIdentity {
        subject: subject.to_owned(),
        email: text("email"),
        email_verified,
        name: text("name"),
        acr: text("acr"),
        amr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: i64 = 1_800_000_000;

    fn expected() -> Expected<'static> {
        Expected {
            issuer: "https://idp.example.com",
            client_id: "svc",
            nonce: "n-1",
            now: NOW,
        }
    }

    fn good() -> Value {
        json!({
            "iss": "https://idp.example.com", "aud": "svc", "sub": "u1", "nonce": "n-1",
            "exp": NOW + 300, "iat": NOW - 5, "email": "a@corp.example", "email_verified": true,
        })
    }

    fn checks(claims: &Value) -> Result<UpstreamIdentity, String> {
        issuer_matches(claims, "https://idp.example.com")?;
        audience_matches(claims, "svc")?;
        times_hold(claims, NOW)?;
        nonce_matches(claims, expected().nonce)?;
        identity(claims)
    }

    fn with(change: impl FnOnce(&mut Value)) -> Result<UpstreamIdentity, String> {
        let mut claims = good();
        change(&mut claims);
        checks(&claims)
    }

    #[test]
    fn a_conforming_token_gives_its_identity() {
        let id = checks(&good()).unwrap();
        assert_eq!(id.subject, "u1");
        assert!(id.email_verified);
        assert!(!id.multi_factor());
        assert!(
            with(|c| c["amr"] = json!(["pwd", "mfa"]))
                .unwrap()
                .multi_factor()
        );
        assert!(with(|c| c["acr"] = json!("phrh")).unwrap().multi_factor());
        assert!(
            with(|c| c["email_verified"] = json!("true"))
                .unwrap()
                .email_verified
        );
        assert!(
            !with(|c| c["email_verified"] = json!("yes"))
                .unwrap()
                .email_verified
        );
        let microsoft = with(|c| {
            c.as_object_mut().unwrap().remove("email_verified");
            c["xms_edov"] = json!(true);
        });
        assert!(microsoft.unwrap().email_verified);
        assert!(
            !with(|c| {
                c.as_object_mut().unwrap().remove("email_verified");
            })
            .unwrap()
            .email_verified
        );
        // Several audiences with azp naming us; skew within the leeway.
        assert!(
            with(|c| {
                c["aud"] = json!(["svc", "other"]);
                c["azp"] = json!("svc");
            })
            .is_ok()
        );
        assert!(with(|c| c["exp"] = json!(NOW - LEEWAY_SECS + 1)).is_ok());
    }

    #[test]
    fn every_rule_refuses_its_violation() {
        type Change = Box<dyn FnOnce(&mut Value)>;
        let cases: Vec<(&str, Change)> = vec![
            (
                "iss",
                Box::new(|c| c["iss"] = json!("https://evil.example")),
            ),
            (
                "iss",
                Box::new(|c| c["iss"] = json!("https://idp.example.com/")),
            ),
            (
                "iss",
                Box::new(|c| drop(c.as_object_mut().unwrap().remove("iss"))),
            ),
            ("aud", Box::new(|c| c["aud"] = json!("other"))),
            ("aud", Box::new(|c| c["aud"] = json!(["other"]))),
            ("azp", Box::new(|c| c["aud"] = json!(["svc", "other"]))),
            ("azp", Box::new(|c| c["azp"] = json!("other"))),
            ("expired", Box::new(|c| c["exp"] = json!(NOW - LEEWAY_SECS))),
            (
                "exp",
                Box::new(|c| drop(c.as_object_mut().unwrap().remove("exp"))),
            ),
            ("exp", Box::new(|c| c["exp"] = json!("soon"))),
            (
                "future",
                Box::new(|c| c["iat"] = json!(NOW + LEEWAY_SECS + 1)),
            ),
            ("nonce", Box::new(|c| c["nonce"] = json!("n-2"))),
            (
                "nonce",
                Box::new(|c| drop(c.as_object_mut().unwrap().remove("nonce"))),
            ),
            ("sub", Box::new(|c| c["sub"] = json!(""))),
            ("sub", Box::new(|c| c["sub"] = json!("x".repeat(256)))),
            ("sub", Box::new(|c| c["sub"] = json!(7))),
        ];
        for (word, change) in cases {
            let error = with(change).unwrap_err();
            assert!(error.contains(word), "{word}: {error}");
        }
    }

    #[test]
    fn a_multi_tenant_issuer_is_filled_by_the_tokens_tid_only() {
        let template = "https://login.microsoftonline.com/{tenantid}/v2.0";
        let tid = "9188040d-6c67-4c5b-b112-36a304b66dad";
        let claims = |iss: &str, tid: Value| json!({"iss": iss, "tid": tid});
        let real = format!("https://login.microsoftonline.com/{tid}/v2.0");
        assert!(issuer_matches(&claims(&real, json!(tid)), template).is_ok());
        // Another directory's token, a template in the token, no tid, a tid with a path.
        assert!(issuer_matches(&claims(&real, json!("other")), template).is_err());
        assert!(issuer_matches(&claims(template, json!(tid)), template).is_err());
        assert!(issuer_matches(&json!({"iss": real}), template).is_err());
        let sneaky = "x/../evil";
        let forged = format!("https://login.microsoftonline.com/{sneaky}/v2.0");
        assert!(issuer_matches(&claims(&forged, json!(sneaky)), template).is_err());
        // A plain issuer ignores tid.
        assert!(issuer_matches(&claims(&real, json!("x")), &real).is_ok());
    }

    #[test]
    fn userinfo_fills_the_address_only_for_the_same_subject() {
        let mut id = with(|c| {
            c.as_object_mut().unwrap().remove("email");
            c.as_object_mut().unwrap().remove("email_verified");
        })
        .unwrap();
        assert_eq!(id.email, None);
        let other = json!({"sub": "u2", "email": "b@corp.example", "email_verified": true});
        assert!(id.add_userinfo(other.to_string().as_bytes()).is_err());
        assert!(id.add_userinfo(b"<html>").is_err());
        assert_eq!(id.email, None);
        let same = json!({"sub": "u1", "email": "a@corp.example", "email_verified": true});
        id.add_userinfo(same.to_string().as_bytes()).unwrap();
        assert_eq!(id.email.as_deref(), Some("a@corp.example"));
        assert!(id.email_verified);
    }

    #[test]
    fn unsigned_and_hmac_tokens_are_refused_before_any_key() {
        use base64::Engine;
        let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        for alg in ["none", "HS256"] {
            let token = format!("{}.{}.", b64(json!({"alg": alg})), b64(good()));
            let error = verify(&token, r#"{"keys":[]}"#, &expected()).unwrap_err();
            assert!(error.contains("never none or HMAC"), "{alg}: {error}");
        }
    }
}
