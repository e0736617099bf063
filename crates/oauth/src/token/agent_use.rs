//! An agent's poll for a use of a delegation its person approves each time (issue 19 item 2,
//! "optional per-use approval through CIBA"). The agent started the request at `/bc-authorize`
//! (`crate::backchannel`, authenticating with its key), the person approved or denied it on
//! the CIBA page or API, and the agent polls the token endpoint as a CIBA client does (CIBA
//! Core §10.1): `grant_type=urn:openid:params:grant-type:ciba`, `auth_req_id`, and its signed
//! answer to a fresh challenge as `client_assertion` (RFC 7523 §2.2; `iss` = `sub` = the agent).
//!
//! Checks, in order:
//! 1. [`super::agent::agent_client`]: nothing repeated, no other authentication, `client_id`
//!    absent or the agent; `auth_req_id` present.
//! 2. The DPoP proof, if any, passes its stateless checks (`crate::dpop`).
//! 3. The agent is active and signed the assertion, whose claims hold and whose `nonce` is an
//!    unexpired challenge given to it (as for the agent grant); refusals are `invalid_client`.
//! 4. The poll is recorded (the interval enforced, `slow_down` growing it) and finds a request
//!    of this agent in this tenant (`invalid_grant` otherwise: another agent's or an
//!    application's reference is not even touched); the challenge is spent (one per poll, so
//!    a captured poll cannot be replayed to take the token once approved).
//! 5. `expired_token`, `slow_down`, `authorization_pending`, `access_denied` as for any CIBA
//!    poll (`super::polled::check_poll`).
//! 6. Approved: the request is taken (deleted) once, and the token is what the agent grant
//!    gives for the person on that very delegation, which must still be live and cover the API
//!    and the approved permissions; those the person no longer holds are dropped. It carries
//!    the delegation's RAR details, which the person saw again when approving. No refresh
//!    token: each use is approved anew.

use super::TokenEndpoint;
use super::agent::{AgentChecks, Using, agent_client, as_client_error};
use super::issue::TokenResponse;
use super::polled::{Polled, check_poll};
use crate::error::OAuthError;
use crate::token::TokenCall;
use svc_domain::{BackchannelRequester, CIBA_GRANT, SecretHash};

/// Whether a token request is an agent's CIBA poll: the CIBA grant with an agent's assertion.
pub(super) fn agent_poll(form: &[(String, String)]) -> Option<&str> {
    let ciba = form
        .iter()
        .any(|(k, v)| k == "grant_type" && v == CIBA_GRANT);
    if ciba {
        super::agent::agent_client_assertion(form)
    } else {
        None
    }
}

impl TokenEndpoint {
    /// Checks 1–6 of the module documentation.
    pub(super) async fn agent_poll(
        &self,
        call: &TokenCall<'_>,
        assertion: &str,
    ) -> Result<TokenResponse, OAuthError> {
        let (tenant, issuer) = (call.tenant, call.issuer);
        // 1.
        let (agent_id, unverified) = agent_client(call.form, call.authorization, assertion)?;
        let reference = call
            .form
            .iter()
            .find(|(k, _)| k == "auth_req_id")
            .map(|(_, v)| v.as_str())
            .ok_or_else(|| OAuthError::invalid_request("auth_req_id is required"))?;
        // 2.
        let checked = self.check_proof(call)?;
        // 3.
        let checks: AgentChecks<'_> = self.agents();
        let now = self.ctx.clock.now();
        let (agent, challenge) = checks
            .verify_signed(tenant, issuer, &agent_id, assertion, &unverified, now)
            .await
            .map_err(as_client_error)?;
        // 4.
        let hash = SecretHash::of(reference);
        let mut tx = self.ctx.store.write().await?;
        let polled = tx
            .poll_backchannel_request(&tenant.id, &hash, agent.id.as_str(), now)
            .await?;
        tx.commit().await?;
        let polled =
            polled.ok_or_else(|| OAuthError::invalid_grant("the auth_req_id is invalid"))?;
        checks
            .spend_challenge(tenant, &agent.id, &challenge, now)
            .await
            .map_err(as_client_error)?;
        // 5.
        let r = &polled.request;
        check_poll(
            &Polled::new(r.status, r.interval_secs, r.expires_at, polled.too_fast),
            now,
        )?;
        // 6.
        let mut tx = self.ctx.store.write().await?;
        let taken = tx
            .take_approved_agent_request(&tenant.id, &hash, &agent.id)
            .await?;
        tx.commit().await?;
        let Some(request) = taken else {
            return Err(OAuthError::invalid_grant(
                "this approval was already used: start a new request",
            ));
        };
        let (BackchannelRequester::Agent(using), Some(person)) =
            (&request.requester, &request.user_id)
        else {
            return Err(OAuthError::invalid_grant("the auth_req_id is invalid"));
        };
        let api = checks.agent_api(tenant, &agent, &using.resource).await?;
        let (scope, delegation) = checks
            .delegated(
                tenant,
                &agent,
                person,
                &api,
                Some(&request.scope),
                Using::Approved(&using.delegation_id),
                now,
            )
            .await?;
        let proof = self.record_proof(tenant, checked).await?;
        tracing::info!(tenant = %tenant.id, agent = %agent.id, request = %request.id,
            "approved use of a delegation redeemed");
        self.agent_token(
            tenant,
            issuer,
            &agent,
            &api,
            &scope,
            Some((person, delegation)),
            request.authorization_details.as_ref(),
            proof.as_ref().map(|p| p.jkt.as_str()),
            "agent_ciba",
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token::agent::tests::form;

    /// `{"alg":"ES256"}.{"iss":<iss>,"sub":<iss>}.sig`, unsigned: enough to be recognised.
    fn assertion(iss: &str) -> String {
        use base64::Engine;
        let b64 = |v: &serde_json::Value| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
        };
        format!(
            "{}.{}.c2ln",
            b64(&serde_json::json!({"alg": "ES256"})),
            b64(&serde_json::json!({"iss": iss, "sub": iss}))
        )
    }

    #[test]
    fn only_the_ciba_grant_with_an_agents_assertion_is_an_agent_poll() {
        let agent = assertion("agt_01jd0000000000000000000000");
        let app = assertion("app_01jd0000000000000000000000");
        let typ = (
            "client_assertion_type",
            super::super::JWT_BEARER_ASSERTION_TYPE,
        );
        let ciba = ("grant_type", CIBA_GRANT);
        assert_eq!(
            agent_poll(&form(&[ciba, typ, ("client_assertion", &agent)])),
            Some(agent.as_str())
        );
        for other in [
            form(&[ciba, typ, ("client_assertion", &app)]),
            form(&[ciba, ("client_assertion", &agent)]),
            form(&[
                ("grant_type", "client_credentials"),
                typ,
                ("client_assertion", &agent),
            ]),
            form(&[ciba, typ, ("client_assertion", "not.a.jwt")]),
        ] {
            assert_eq!(agent_poll(&other), None, "{other:?}");
        }
    }
}
