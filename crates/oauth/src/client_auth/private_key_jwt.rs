//! `private_key_jwt` (RFC 7523 §2.2 and §3, OIDC Core §9): the client proves its identity with a
//! JWT signed by a key whose public half it registered.
//!
//! Checks, in order:
//! 1. `client_assertion_type` is `urn:ietf:params:oauth:client-assertion-type:jwt-bearer`
//!    (RFC 7523 §2.2).
//! 2. The assertion is a compact JWS of bounded size ([`crate::client_jws`]).
//! 3. Its `alg` is asymmetric: `none` and HS* are refused before any key is touched
//!    (RFC 8725 §3.1, §3.2; CVE-2026-16093); `crit` is refused.
//! 4. `sub` names the client (RFC 7523 §3 item 2.B); a `client_id` sent in the body must equal
//!    it (RFC 7521 §4.2).
//! 5. The application exists in this tenant and registered `private_key_jwt`; unknown client,
//!    wrong method, no usable key and a bad signature all give the same `invalid_client`.
//! 6. The key is one the application registered, chosen by `kid` and fitting `alg`.
//! 7. The signature verifies ([`crate::client_jws::verify`]).
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

use super::{AuthenticatedClient, ClientAuthContext, expect_method, failed, registered};
use crate::client_jws::{self, KeyError, Unverified};
use crate::error::OAuthError;
use crate::token::request::{Credential, JWT_BEARER_ASSERTION_TYPE};
use serde_json::Value;
use svc_domain::{ClientId, TokenEndpointAuthMethod};
use svc_store::StoreError;
use time::OffsetDateTime;

/// Longest lifetime (`exp` − now, seconds) of an assertion we accept: assertions are
/// single-use and short-lived, so the replay cache stays small.
pub const MAX_ASSERTION_LIFETIME: i64 = 300;

/// Tolerated client clock skew (seconds) for `iat` and `nbf` in the future.
pub const ASSERTION_CLOCK_SKEW: i64 = 60;

/// The `alg` values a client assertion may use (all asymmetric).
pub const SUPPORTED_ASSERTION_ALGS: [&str; 4] = client_jws::SUPPORTED_ALGS;

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
    let unverified = Unverified::parse(token, MAX_ASSERTION_BYTES)
        .map_err(|e| OAuthError::invalid_client(e.describe("client assertion")))?;
    // 4. RFC 7523 §3 item 2.B, RFC 7521 §4.2.
    let sub = unverified.claim("sub").ok_or_else(|| {
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
    let checked = check_claims(
        &claims,
        client.application.wire_client_id(),
        ctx.issuer,
        now,
    )?;
    // 9.
    use_once(ctx, &client.application.id, &checked.jti, checked.exp, now).await?;
    Ok(client)
}

/// Checks 6 and 7: finds the key and verifies the signature; returns the (authentic) claims.
async fn verify_signature(
    ctx: &ClientAuthContext<'_>,
    app: &svc_domain::Application,
    token: &str,
    unverified: &Unverified,
) -> Result<Value, OAuthError> {
    client_jws::verify(app, ctx.jwks_fetcher, token, unverified)
        .await
        .map_err(|e| match e {
            KeyError::JwksUriUnsupported => OAuthError::invalid_client("jwks_uri not supported")
                .with_log_detail("no JwksFetcher configured"),
            KeyError::JwksUriUnreachable(reason) => {
                OAuthError::invalid_client("the client's jwks_uri could not be fetched")
                    .with_log_detail(reason)
            }
            KeyError::Refused(reason) => failed(format!("client assertion: {reason}")),
        })
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
    if !client_jws::audience_is(claims, &[issuer, &token_endpoint]) {
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
    client_jws::numeric_date(claims, name).map_err(|()| {
        OAuthError::invalid_client(format!(
            "the client assertion's {name} must be a NumericDate"
        ))
    })
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
    // One statement: autocommit saves the BEGIN and COMMIT round trips.
    let mut tx = ctx.store.write_once().await?;
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
}
