//! `token-exchange`: RFC 8693 at svc's token endpoint in its simplest valid shape, a
//! confidential application (registered with the exchange grant and `client_credentials`,
//! `client_secret_basic`) exchanging its own client_credentials access token. svc only (the
//! peer is not configured for token exchange). This module owns the worker's subject token, the
//! exchange request and what the probe checks of the token it gets.
//!
//! **Setup, not measured:** every worker gets a client_credentials token of the client (the
//! request of `token-flows`), its subject token. Machine tokens live 300 s by default and an
//! exchanged token never outlives its subject, so the measured loop renews a subject token
//! older than [`SUBJECT_RENEWAL`] before the iteration's clock starts: a run of any length
//! keeps presenting live tokens, at one extra token request per worker per two minutes.
//!
//! **One iteration:** `POST /oauth/token` (client_secret_basic)
//! `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`, `subject_token`,
//! `subject_token_type=urn:ietf:params:oauth:token-type:access_token`, no `scope` or
//! `audience` (both stay the subject token's) → 200 with an access token, `issued_token_type`
//! the access-token type and `token_type` Bearer. Anything else counts as `non2xx`.
//!
//! **Probe:** one exchange, then the new token's claims: `sub` and `client_id` the client, no
//! `act` (a client presenting its own token adds no link to a chain), the subject token's
//! `aud` and `scope`.

use crate::flows::{Flow, jose, json, jwt_claims};
use crate::http::{Agent, Failure, answer};
use anyhow::{anyhow, bail};
use serde_json::Value;
use std::time::{Duration, Instant};

/// The exchange grant (RFC 8693 §2.1).
const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";

/// The token type of both the subject token and the issued one (RFC 8693 §3).
const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";

/// Age at which a worker's subject token is replaced: well inside svc's default machine-token
/// lifetime (300 s), so the tokens an iteration presents or receives never expire in flight.
const SUBJECT_RENEWAL: Duration = Duration::from_secs(120);

/// A worker's subject token and when it got it.
pub(crate) struct Subject {
    token: String,
    issued: Instant,
}

impl Subject {
    /// Whether the loop should replace it before the next iteration.
    pub(crate) fn is_old(&self) -> bool {
        self.issued.elapsed() >= SUBJECT_RENEWAL
    }
}

impl Flow {
    /// A client_credentials token of the client, to be exchanged.
    pub(crate) async fn subject_token(&self, agent: &mut Agent) -> Result<Subject, Failure> {
        let issued = Instant::now();
        let tokens = self.client_credentials(agent, None).await?;
        let token = tokens
            .get("access_token")
            .and_then(Value::as_str)
            .ok_or_else(|| answer("token (client_credentials): no access_token"))?
            .to_owned();
        Ok(Subject { token, issued })
    }

    /// One exchange of `subject` for a new access token: the token response, checked.
    pub(crate) async fn exchange_own(
        &self,
        agent: &mut Agent,
        subject: &Subject,
    ) -> Result<Value, Failure> {
        const WHAT: &str = "token (token-exchange)";
        let url = self.target.url("/oauth/token")?;
        let reply = agent
            .post(
                url,
                &[
                    ("grant_type", TOKEN_EXCHANGE_GRANT),
                    ("subject_token", &subject.token),
                    ("subject_token_type", ACCESS_TOKEN_TYPE),
                ],
                true,
            )
            .await?
            .expect(&[200], WHAT)?;
        let tokens = json(&reply.body, WHAT)?;
        if tokens.get("access_token").and_then(Value::as_str).is_none() {
            return Err(answer(format!("{WHAT}: no access_token")));
        }
        let issued_type = tokens.get("issued_token_type").and_then(Value::as_str);
        if issued_type != Some(ACCESS_TOKEN_TYPE) {
            return Err(answer(format!(
                "{WHAT}: issued_token_type {issued_type:?}, expected {ACCESS_TOKEN_TYPE}"
            )));
        }
        let token_type = tokens.get("token_type").and_then(Value::as_str);
        if !token_type.is_some_and(|t| t.eq_ignore_ascii_case("Bearer")) {
            return Err(answer(format!(
                "{WHAT}: token_type {token_type:?}, expected Bearer"
            )));
        }
        Ok(tokens)
    }

    /// The probe's exchange and checks of the new token against the subject token: its
    /// `PROBE` facts.
    pub(crate) async fn probe_exchange(
        &self,
        agent: &mut Agent,
        subject: &Subject,
    ) -> anyhow::Result<String> {
        let tokens = self
            .exchange_own(agent, subject)
            .await
            .map_err(|f| anyhow!("{f}"))?;
        let issued = jwt_claims(tokens.get("access_token"))
            .ok_or_else(|| anyhow!("the exchanged access token is not a JWT"))?;
        let presented = jwt_claims(Some(&Value::String(subject.token.clone())))
            .ok_or_else(|| anyhow!("the subject token is not a JWT"))?;
        let client = self.args.client_id.as_str();
        for claim in ["sub", "client_id"] {
            if issued.get(claim).and_then(Value::as_str) != Some(client) {
                bail!(
                    "the exchanged token's {claim} is {}, expected the client {client}",
                    issued[claim]
                );
            }
        }
        if let Some(act) = issued.get("act") {
            bail!("a client exchanging its own token was named as an actor: act {act}");
        }
        for claim in ["aud", "scope"] {
            if issued.get(claim) != presented.get(claim) {
                bail!(
                    "the exchanged token's {claim} is {}, the subject token's {}",
                    issued[claim],
                    presented[claim]
                );
            }
        }
        Ok(format!(
            "access_token={} issued_token_type={ACCESS_TOKEN_TYPE} token_type=Bearer act=none \
             aud=subject's scope={}",
            jose(tokens.get("access_token")),
            issued
                .get("scope")
                .and_then(Value::as_str)
                .unwrap_or_default()
        ))
    }
}
