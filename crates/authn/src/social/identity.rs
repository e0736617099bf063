//! Who the provider says signed in: the code redeemed at the provider's token endpoint with the
//! provider's client authentication, then
//!
//! - for OpenID providers, the ID token verified (`crate::upstream`), with `{tenantid}` issuers
//!   filled by `tid` (Microsoft), and UserInfo read when the token carries no address;
//! - for plain OAuth 2.0 providers, the profile endpoint read with the access token (`sub`, or
//!   GitHub's numeric `id`), and, when the profile does not vouch for an address, the e-mail
//!   list endpoint's verified primary address (GitHub's `/user/emails`).
//!
//! Apple's client secret is a JWT signed for each redemption (ES256 with the developer's key,
//! `kid` its key id, `iss` the team, `sub` the client id, `aud` Apple, five minutes).

use super::{Social, Values};
use crate::upstream::id_token::{Expected, UpstreamIdentity};
use crate::upstream::{self, Stage, UpstreamError};
use serde_json::Value;
use svc_crypto::{SigningAlg, SigningKey};
use svc_domain::{
    MAX_SSO_SUBJECT_BYTES, ProfileEndpoints, SocialClientAuth, SocialProtocol, SocialProvider,
    social_redirect_uri,
};

/// Apple's audience for client secrets.
const APPLE_AUDIENCE: &str = "https://appleid.apple.com";
/// How long an Apple client secret is valid, in seconds (Apple allows up to six months; ours
/// serves one redemption).
const APPLE_SECRET_LIFETIME_SECS: i64 = 300;
/// Longest name kept from a profile, in characters.
const MAX_NAME_CHARS: usize = 128;

/// The identity behind the provider's answer `code`.
pub(super) async fn identity(
    social: &Social,
    provider: &SocialProvider,
    issuer: &str,
    (code, values): (&str, &Values),
    now: time::OffsetDateTime,
) -> Result<UpstreamIdentity, UpstreamError> {
    let tokens = redeem(social, provider, issuer, code, &values.verifier, now).await?;
    let access_token = upstream::token_text(&tokens, "access_token");
    match &provider.protocol {
        SocialProtocol::Oidc(metadata) => {
            let id_token = upstream::token_text(&tokens, "id_token").ok_or_else(|| {
                refused(Stage::TokenExchange, "the token answer carries no id_token")
            })?;
            let expected = Expected {
                issuer: &metadata.issuer,
                client_id: &provider.client_id,
                nonce: &values.nonce,
                now: now.unix_timestamp(),
            };
            let mut identity = upstream::verify_id_token(
                social.settings.egress.as_ref(),
                &social.keys,
                &metadata.jwks_uri,
                &id_token,
                &expected,
                now,
            )
            .await?;
            // Core §5.4: with the code flow a provider may keep the address for UserInfo.
            if identity.email.is_none()
                && let (Some(endpoint), Some(token)) = (&metadata.userinfo_endpoint, access_token)
            {
                let body = social
                    .settings
                    .egress
                    .get(endpoint, "userinfo_endpoint", Some(&token))
                    .await
                    .map_err(UpstreamError::Unreachable)?;
                identity
                    .add_userinfo(&body)
                    .map_err(|reason| UpstreamError::Refused(Stage::Identity, reason))?;
            }
            Ok(identity)
        }
        SocialProtocol::OAuth2(endpoints) => {
            let token = access_token.ok_or_else(|| {
                refused(
                    Stage::TokenExchange,
                    "the token answer carries no access_token",
                )
            })?;
            profile_identity(social, endpoints, &token).await
        }
    }
}

fn refused(stage: Stage, reason: &str) -> UpstreamError {
    UpstreamError::Refused(stage, reason.to_owned())
}

/// Redeems `code` (RFC 6749 §4.1.3, RFC 7636 §4.5) with the provider's client authentication.
async fn redeem(
    social: &Social,
    provider: &SocialProvider,
    issuer: &str,
    code: &str,
    verifier: &str,
    now: time::OffsetDateTime,
) -> Result<Value, UpstreamError> {
    let settings = &social.settings;
    let opened = settings
        .secrets
        .open_social(
            provider.client_auth.sealed(),
            &provider.tenant_id,
            &provider.slug,
        )
        .map_err(|e| UpstreamError::Refused(Stage::TokenExchange, format!("client secret: {e}")))?;
    let redirect_uri = social_redirect_uri(issuer);
    let mut form = vec![
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", redirect_uri.as_str()),
        ("code_verifier", verifier),
    ];
    let endpoint = provider.protocol.token_endpoint();
    let answer = match &provider.client_auth {
        SocialClientAuth::SecretBasic { .. } => {
            settings
                .egress
                .post_form(
                    endpoint,
                    &form,
                    Some((&provider.client_id, opened.as_str())),
                )
                .await
        }
        SocialClientAuth::SecretPost { .. } => {
            form.extend([
                ("client_id", provider.client_id.as_str()),
                ("client_secret", opened.as_str()),
            ]);
            settings.egress.post_form(endpoint, &form, None).await
        }
        SocialClientAuth::AppleJwt {
            team_id, key_id, ..
        } => {
            let secret = apple_client_secret(provider, (team_id, key_id), &opened, now)?;
            form.extend([
                ("client_id", provider.client_id.as_str()),
                ("client_secret", secret.as_str()),
            ]);
            settings.egress.post_form(endpoint, &form, None).await
        }
    };
    upstream::token_answer(answer)
}

/// Apple's client secret: a JWT signed with the developer's key.
fn apple_client_secret(
    provider: &SocialProvider,
    (team_id, key_id): (&str, &str),
    pem: &str,
    now: time::OffsetDateTime,
) -> Result<String, UpstreamError> {
    let key = SigningKey::from_pkcs8_pem(SigningAlg::Es256, pem)
        .map_err(|e| UpstreamError::Refused(Stage::TokenExchange, format!("Apple key: {e}")))?;
    let now = now.unix_timestamp();
    let claims = serde_json::json!({
        "iss": team_id,
        "iat": now,
        "exp": now + APPLE_SECRET_LIFETIME_SECS,
        "aud": APPLE_AUDIENCE,
        "sub": provider.client_id,
    });
    let mut header = serde_json::Map::new();
    header.insert("kid".into(), key_id.into());
    key.sign_jws(header, &claims)
        .map_err(|e| UpstreamError::Refused(Stage::TokenExchange, format!("Apple secret: {e}")))
}

/// The person as a plain OAuth 2.0 provider's profile endpoint describes them.
async fn profile_identity(
    social: &Social,
    endpoints: &ProfileEndpoints,
    access_token: &str,
) -> Result<UpstreamIdentity, UpstreamError> {
    let egress = social.settings.egress.as_ref();
    let body = egress
        .get(
            &endpoints.userinfo_endpoint,
            "userinfo_endpoint",
            Some(access_token),
        )
        .await
        .map_err(UpstreamError::Unreachable)?;
    let mut identity = read_profile(&body).map_err(|reason| refused(Stage::Identity, reason))?;
    if !identity.email_verified
        && let Some(emails) = &endpoints.emails_endpoint
    {
        let body = egress
            .get(emails, "emails_endpoint", Some(access_token))
            .await
            .map_err(UpstreamError::Unreachable)?;
        if let Some(address) =
            verified_primary(&body).map_err(|reason| refused(Stage::Identity, reason))?
        {
            identity.email = Some(address);
            identity.email_verified = true;
        }
    }
    Ok(identity)
}

/// A profile: `sub`, or `id` as a string or a whole number (GitHub); `email` with
/// `email_verified` (a boolean or the string `"true"`); `name`, else `login` or
/// `preferred_username`.
fn read_profile(body: &[u8]) -> Result<UpstreamIdentity, &'static str> {
    let profile: Value = serde_json::from_slice(body).map_err(|_| "the profile is not JSON")?;
    let subject = match profile.get("sub").or_else(|| profile.get("id")) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) if n.is_u64() || n.is_i64() => n.to_string(),
        _ => return Err("the profile has no sub or id"),
    };
    if subject.is_empty() || subject.len() > MAX_SSO_SUBJECT_BYTES {
        return Err("the profile's subject is empty or longer than 255 bytes");
    }
    let text = |name: &str| profile.get(name).and_then(Value::as_str).map(str::to_owned);
    let email_verified = match profile.get("email_verified") {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s == "true",
        _ => false,
    };
    let name = text("name")
        .or_else(|| text("login"))
        .or_else(|| text("preferred_username"))
        .map(|n| n.chars().take(MAX_NAME_CHARS).collect());
    Ok(UpstreamIdentity {
        subject,
        email: text("email"),
        email_verified,
        name,
        acr: None,
        amr: Vec::new(),
    })
}

/// The primary address of a list of `{email, primary, verified}` when it is verified.
fn verified_primary(body: &[u8]) -> Result<Option<String>, &'static str> {
    let list: Value = serde_json::from_slice(body).map_err(|_| "the e-mail list is not JSON")?;
    let entries = list.as_array().ok_or("the e-mail list is not a list")?;
    Ok(entries
        .iter()
        .find(|e| {
            e.get("primary").and_then(Value::as_bool) == Some(true)
                && e.get("verified").and_then(Value::as_bool) == Some(true)
        })
        .and_then(|e| e.get("email").and_then(Value::as_str))
        .map(str::to_owned))
}

/// The name Apple posts with the first sign-in only (`user={"name":{"firstName",
/// "lastName"}}`): Apple puts no name in its ID tokens.
pub(super) fn apple_name(user: &str) -> Option<String> {
    let user: Value = serde_json::from_str(user).ok()?;
    let name = user.get("name")?;
    let part = |k: &str| name.get(k).and_then(Value::as_str).unwrap_or("").trim();
    let full = format!("{} {}", part("firstName"), part("lastName"));
    let full = full.trim();
    (!full.is_empty()).then(|| full.chars().take(MAX_NAME_CHARS).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn profile(v: Value) -> Result<UpstreamIdentity, &'static str> {
        read_profile(v.to_string().as_bytes())
    }

    #[test]
    fn profiles_name_their_subject_by_sub_or_numeric_id() {
        let github = profile(json!({"id": 583231, "login": "octocat", "email": null})).unwrap();
        assert_eq!(github.subject, "583231");
        assert_eq!(github.name.as_deref(), Some("octocat"));
        assert_eq!(github.email, None);
        assert!(!github.email_verified);
        let oidc_like = profile(json!({"sub": "u-1", "email": "a@b.example",
                                       "email_verified": "true", "name": "A"}))
        .unwrap();
        assert_eq!(oidc_like.subject, "u-1");
        assert!(oidc_like.email_verified);
        for bad in [
            json!({"login": "x"}),
            json!({"id": 1.5}),
            json!({"id": ""}),
            json!({"sub": "x".repeat(256)}),
            json!({"id": [1]}),
        ] {
            assert!(profile(bad.clone()).is_err(), "{bad}");
        }
        assert!(read_profile(b"<html>").is_err());
        // A profile's own claim of verification counts only as a boolean or "true".
        assert!(
            !profile(json!({"id": 1, "email": "a@b.example", "email_verified": "yes"}))
                .unwrap()
                .email_verified
        );
    }

    #[test]
    fn only_a_verified_primary_address_is_taken_from_the_list() {
        let list = |v: Value| verified_primary(v.to_string().as_bytes());
        assert_eq!(
            list(json!([
                {"email": "old@b.example", "primary": false, "verified": true},
                {"email": "main@b.example", "primary": true, "verified": true},
            ]))
            .unwrap()
            .as_deref(),
            Some("main@b.example")
        );
        assert_eq!(
            list(
                json!([{"email": "main@b.example", "primary": true, "verified": false},
                        {"email": "x@b.example", "primary": false, "verified": true}])
            )
            .unwrap(),
            None,
            "an unverified primary is no address, and a secondary is not the person's own"
        );
        assert!(list(json!({"email": "a@b.example"})).is_err());
    }

    #[test]
    fn apples_first_sign_in_names_the_person() {
        assert_eq!(
            apple_name(r#"{"name":{"firstName":"Grace","lastName":"Hopper"},"email":"x"}"#)
                .as_deref(),
            Some("Grace Hopper")
        );
        assert_eq!(apple_name(r#"{"name":{}}"#), None);
        assert_eq!(apple_name("not json"), None);
    }
}
