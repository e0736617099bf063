//! The probe: one worker, one checked iteration of the flow, and one `PROBE ok …` line that
//! says what was checked (token formats, bindings, refusals of replays and reuse). `run.sh`
//! calls it before any load, so a flow that does not do what it claims never gets measured.

use super::{CLIENT_CREDENTIALS_SCOPE, Flow, jose, jwt_claims};
use crate::Kind;
use crate::dpop::Prover;
use crate::totp;
use anyhow::{anyhow, bail};
use serde_json::Value;
use std::time::{Duration, Instant};

impl Flow {
    /// One worker, one checked iteration, one `PROBE` line.
    pub(super) async fn probe(&self) -> anyhow::Result<()> {
        let mut w = self.setup(0).await.map_err(|f| anyhow!("setup: {f}"))?;
        let facts = match self.kind {
            Kind::Refresh => {
                let old = w.refresh_token.clone();
                let tokens = self.rotate(&mut w).await.map_err(|f| anyhow!("{f}"))?;
                // Presenting the rotated token again must be refused.
                let url = self
                    .target
                    .url(self.token_path())
                    .map_err(|f| anyhow!("{f}"))?;
                let reuse = w
                    .agent
                    .post(
                        url,
                        &[("grant_type", "refresh_token"), ("refresh_token", &old)],
                        true,
                    )
                    .await
                    .map_err(|f| anyhow!("{f}"))?;
                if reuse.status != 400 || !reuse.body.contains("invalid_grant") {
                    bail!(
                        "a rotated refresh token was not refused: HTTP {} {}",
                        reuse.status,
                        reuse.body.chars().take(200).collect::<String>()
                    );
                }
                format!(
                    "access_token={} id_token={} rotated=yes old_token_refused=yes",
                    jose(tokens.get("access_token")),
                    jose(tokens.get("id_token"))
                )
            }
            Kind::Authcode | Kind::AuthcodePar => {
                let tokens = self
                    .code_flow(&mut w, "openid", None, 1)
                    .await
                    .map_err(|f| anyhow!("{f}"))?;
                format!(
                    "access_token={} id_token={} refresh_token={} consent_remembered=yes",
                    jose(tokens.get("access_token")),
                    jose(tokens.get("id_token")),
                    if tokens.get("refresh_token").is_some() {
                        "yes"
                    } else {
                        "no"
                    }
                )
            }
            Kind::DevicePoll => {
                self.iterate(&mut w, None)
                    .await
                    .map_err(|f| anyhow!("{f}"))?;
                "status=400 error=authorization_pending|slow_down".to_owned()
            }
            Kind::TokenFlows => {
                let tokens = self
                    .client_credentials(&mut w.agent, None)
                    .await
                    .map_err(|f| anyhow!("{f}"))?;
                let claims = jwt_claims(tokens.get("access_token"))
                    .ok_or_else(|| anyhow!("the access token is not a JWT"))?;
                if claims.get("cnf").is_some() {
                    bail!(
                        "a token issued without a proof is bound: cnf {}",
                        claims["cnf"]
                    );
                }
                format!(
                    "access_token={} token_type=Bearer cnf=none",
                    jose(tokens.get("access_token"))
                )
            }
            Kind::TokenExchange => {
                let subject = w
                    .subject
                    .as_ref()
                    .ok_or_else(|| anyhow!("token-exchange without a subject token"))?;
                self.probe_exchange(&mut w.agent, subject).await?
            }
            Kind::TokenDpop => {
                let proof = Self::proof(&w).map_err(|f| anyhow!("{f}"))?;
                let tokens = self
                    .client_credentials(&mut w.agent, Some(proof.clone()))
                    .await
                    .map_err(|f| anyhow!("{f}"))?;
                let claims = jwt_claims(tokens.get("access_token"))
                    .ok_or_else(|| anyhow!("the access token is not a JWT"))?;
                let jkt = w.dpop.as_ref().map(Prover::jkt).unwrap_or_default();
                let bound = claims
                    .get("cnf")
                    .and_then(|c| c.get("jkt"))
                    .and_then(Value::as_str);
                if bound != Some(jkt) {
                    bail!("cnf.jkt is {bound:?}, expected the proof key's thumbprint {jkt}");
                }
                // The same proof again must be refused (RFC 9449 §11.1: one use per jti).
                let url = self
                    .target
                    .url(self.token_path())
                    .map_err(|f| anyhow!("{f}"))?;
                let replay = w
                    .agent
                    .post_with_proof(
                        url,
                        &[
                            ("grant_type", "client_credentials"),
                            ("scope", CLIENT_CREDENTIALS_SCOPE),
                        ],
                        true,
                        Some(proof),
                    )
                    .await
                    .map_err(|f| anyhow!("{f}"))?;
                if replay.status != 400 || !replay.body.contains("invalid_dpop_proof") {
                    bail!(
                        "a replayed DPoP proof was not refused: HTTP {} {}",
                        replay.status,
                        replay.body.chars().take(200).collect::<String>()
                    );
                }
                format!(
                    "access_token={} token_type=DPoP cnf.jkt=proof_key htu={} replayed_proof_refused=yes",
                    jose(tokens.get("access_token")),
                    self.dpop_htu
                )
            }
            Kind::Signin => {
                self.iterate(&mut w, None)
                    .await
                    .map_err(|f| anyhow!("{f}"))?;
                "status=303 session_cookie=yes".to_owned()
            }
            Kind::SigninTotp => {
                let pool = self
                    .totp
                    .as_ref()
                    .ok_or_else(|| anyhow!("signin-totp without a pool"))?;
                let lease = pool
                    .take(1, Instant::now() + Duration::from_secs(90))
                    .await
                    .ok_or_else(|| anyhow!("user 1 had no TOTP step to spend within 90 s"))?;
                let step = lease.step;
                self.iterate(&mut w, Some(&lease))
                    .await
                    .map_err(|f| anyhow!("{f}"))?;
                format!(
                    "second_factor=totp status=303 location=/auth/account session_cookie=yes \
                     step={step} now={}",
                    totp::current_step()
                )
            }
            Kind::SigninPasskey => {
                self.iterate(&mut w, None)
                    .await
                    .map_err(|f| anyhow!("{f}"))?;
                "status=303 location=/auth/account session_cookie=yes".to_owned()
            }
        };
        println!("PROBE ok {facts}");
        Ok(())
    }
}
