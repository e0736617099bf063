//! Being an OAuth 2.0 / OpenID Connect client of someone else's provider: what enterprise single
//! sign-on (`crate::sso`) and social sign-in (`crate::social`) share once the browser comes
//! back. Each step is a small named check:
//!
//! - [`authorization_code`]: the provider's answer to the authorization request (RFC 6749
//!   §4.1.2): an `error`, a mix-up `iss` (RFC 9207 §2.4), or the code;
//! - [`token_answer`]: the token endpoint's answer (RFC 6749 §5.1) as JSON, or why not;
//! - [`verify_id_token`]: the ID token against the provider's key set, kept a few minutes
//!   ([`keys::KeySets`]) and fetched again once on any failure, so a key rotation costs one fetch
//!   and never a refused sign-in ([`id_token`] holds the claim rules).
//!
//! Nothing here decides who the person is: that is each engine's own rule.

pub(crate) mod id_token;
pub(crate) mod keys;

use crate::engine::Authn;
use crate::error::AuthnError;
use crate::settings::ClientInfo;
use id_token::{Expected, UpstreamIdentity};
use serde_json::Value;
use svc_domain::{
    EgressAnswer, EventData, EventType, LoginMethod, LoginResult, Session, SsoEgress, User,
};
use svc_store::WriteTx;
use time::OffsetDateTime;

/// Longest upstream `error` kept in a log line.
const MAX_UPSTREAM_ERROR_CHARS: usize = 64;

/// The provider's answer, as the callback received it (RFC 6749 §4.1.2, RFC 9207).
#[derive(Debug, Default, Clone, Copy)]
pub struct UpstreamResponse<'a> {
    /// `code`.
    pub code: Option<&'a str>,
    /// `state`.
    pub state: Option<&'a str>,
    /// `iss`.
    pub iss: Option<&'a str>,
    /// `error`, when the provider refused.
    pub error: Option<&'a str>,
}

/// Where a return went wrong, shared by both engines' closed refusal vocabularies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// The provider refused, or its answer is malformed or a mix-up.
    Authorization,
    /// The code could not be redeemed.
    TokenExchange,
    /// The ID token or the profile does not check out.
    Identity,
}

/// Why a return cannot go on.
#[derive(Debug)]
pub(crate) enum UpstreamError {
    /// Refused at `Stage`, for this reason (for logs and events, never shown).
    Refused(Stage, String),
    /// The provider could not be reached.
    Unreachable(String),
}

/// The code of the provider's answer, after RFC 6749 §4.1.2.1 (`error`) and RFC 9207 §2.4: a
/// provider that sends `iss` must send its own, and any `iss` naming another issuer is a
/// mix-up whatever the provider advertised. `issuer` is `None` for plain OAuth 2.0 providers,
/// which have no issuer identifier (any `iss` is then refused: it names nobody we asked).
pub(crate) fn authorization_code<'a>(
    response: UpstreamResponse<'a>,
    issuer: Option<&str>,
    iss_parameter: bool,
) -> Result<&'a str, UpstreamError> {
    let refused = |reason: String| UpstreamError::Refused(Stage::Authorization, reason);
    if let Some(error) = response.error {
        let shown: String = error.chars().take(MAX_UPSTREAM_ERROR_CHARS).collect();
        return Err(refused(format!("the provider answered error {shown:?}")));
    }
    match (response.iss, issuer) {
        (Some(iss), Some(issuer)) if iss != issuer => {
            return Err(refused("iss names another issuer (mix-up)".into()));
        }
        (Some(_), None) => {
            return Err(refused("iss sent by a provider without an issuer".into()));
        }
        (None, _) if iss_parameter => {
            return Err(refused(
                "iss is missing though the provider sends it (mix-up)".into(),
            ));
        }
        _ => {}
    }
    response
        .code
        .filter(|c| !c.is_empty())
        .ok_or_else(|| refused("the answer has no code".into()))
}

/// The token endpoint's answer as JSON (RFC 6749 §5.1); anything but a 200 with a JSON
/// object is refused.
pub(crate) fn token_answer(answer: Result<EgressAnswer, String>) -> Result<Value, UpstreamError> {
    let answer = answer.map_err(UpstreamError::Unreachable)?;
    if answer.status != 200 {
        return Err(UpstreamError::Refused(
            Stage::TokenExchange,
            format!("the token endpoint answered {}", answer.status),
        ));
    }
    match serde_json::from_slice::<Value>(&answer.body) {
        Ok(tokens @ Value::Object(_)) => Ok(tokens),
        _ => Err(UpstreamError::Refused(
            Stage::TokenExchange,
            "the token answer is not a JSON object".into(),
        )),
    }
}

/// A string member of the token answer.
pub(crate) fn token_text(tokens: &Value, name: &str) -> Option<String> {
    tokens.get(name).and_then(Value::as_str).map(str::to_owned)
}

/// Verifies `id_token` as [`id_token::verify`] does, against the kept key set of `jwks_uri`
/// first and, on any failure, once more against a freshly fetched one.
pub(crate) async fn verify_id_token(
    egress: &dyn SsoEgress,
    keys: &keys::KeySets,
    jwks_uri: &str,
    id_token: &str,
    expected: &Expected<'_>,
    now: OffsetDateTime,
) -> Result<UpstreamIdentity, UpstreamError> {
    if let Some(Ok(identity)) = keys
        .fresh(jwks_uri, now)
        .map(|jwks| id_token::verify(id_token, &jwks, expected))
    {
        return Ok(identity);
    }
    let jwks = egress
        .get(jwks_uri, "jwks_uri", None)
        .await
        .map_err(UpstreamError::Unreachable)?;
    let jwks = String::from_utf8(jwks)
        .map_err(|_| UpstreamError::Refused(Stage::Identity, "the key set is not UTF-8".into()))?;
    let verified = id_token::verify(id_token, &jwks, expected)
        .map_err(|reason| UpstreamError::Refused(Stage::Identity, reason))?;
    keys.store(jwks_uri, now, &jwks);
    Ok(verified)
}

impl Authn {
    /// The session of a sign-in a provider vouched for, in `tx`: the session with `amr` and
    /// `acr`, the login history's success by `method`, and `auth.login.success`. Returns the
    /// session and its cookie value.
    pub(crate) async fn federated_session(
        &self,
        tx: &mut dyn WriteTx,
        (user, client): (&User, &ClientInfo),
        (amr, acr): (Vec<String>, &str),
        method: LoginMethod,
    ) -> Result<(Session, String), AuthnError> {
        let now = self.now();
        let (session, cookie_value) = self.new_session(user, client, now, amr, acr.to_owned());
        tx.insert_session(&session).await?;
        let record = self.login_record_by(
            &user.tenant_id,
            &user.id,
            (method, LoginResult::Success),
            client,
            now,
        );
        tx.insert_login_record(&record).await?;
        let login = EventData::LoginSucceeded {
            user_id: user.id.clone(),
            session_id: session.id.clone(),
            method: method.as_str().to_owned(),
            client_ip: client.ip.map(|ip| ip.to_string()),
        };
        self.record_event(tx, &user.tenant_id, EventType::LoginSuccess, login)
            .await?;
        Ok((session, cookie_value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(code: Option<&'static str>, iss: Option<&'static str>) -> UpstreamResponse<'static> {
        UpstreamResponse {
            code,
            state: Some("s"),
            iss,
            error: None,
        }
    }

    #[test]
    fn the_code_comes_only_from_an_answer_of_the_provider_asked() {
        let idp = Some("https://idp.example.com");
        assert_eq!(
            authorization_code(answer(Some("c"), idp), idp, true).unwrap(),
            "c"
        );
        assert!(authorization_code(answer(Some("c"), None), idp, false).is_ok());
        for (response, issuer, advertised) in [
            (answer(Some("c"), Some("https://evil.example")), idp, false),
            (answer(Some("c"), None), idp, true),
            (
                answer(Some("c"), Some("https://idp.example.com")),
                None,
                false,
            ),
            (answer(None, idp), idp, true),
            (answer(Some(""), idp), idp, true),
        ] {
            assert!(
                matches!(
                    authorization_code(response, issuer, advertised),
                    Err(UpstreamError::Refused(Stage::Authorization, _))
                ),
                "{response:?} {issuer:?}"
            );
        }
        let refused = UpstreamResponse {
            error: Some(&"access_denied".repeat(20)),
            ..answer(Some("c"), idp)
        };
        let Err(UpstreamError::Refused(_, reason)) = authorization_code(refused, idp, true) else {
            panic!("an error answer is refused");
        };
        assert!(reason.len() < 100, "the provider's text is cut: {reason}");
    }

    #[test]
    fn token_answers_must_be_a_200_json_object() {
        let ok = |status: u16, body: &str| {
            token_answer(Ok(EgressAnswer {
                status,
                body: body.as_bytes().to_vec(),
            }))
        };
        assert!(ok(200, r#"{"access_token":"a"}"#).is_ok());
        assert!(matches!(
            ok(400, r#"{"error":"invalid_grant"}"#),
            Err(UpstreamError::Refused(Stage::TokenExchange, _))
        ));
        assert!(ok(200, "access_token=a&scope=x").is_err());
        assert!(ok(200, "[1]").is_err());
        assert!(matches!(
            token_answer(Err("refused".into())),
            Err(UpstreamError::Unreachable(_))
        ));
    }
}
