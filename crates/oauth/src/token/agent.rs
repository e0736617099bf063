//! The agent grant (`[challenge]`, issue 19 item 3), second half of challenge-response: an agent
//! answers a challenge of [`crate::agent_challenge`] with a JWT it signed with a key it
//! registered, sent as `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` and `assertion`
//! (RFC 7523 §2.1), and gets an access token naming it (`sub` and `client_id` its id,
//! `subject_type` `agent`) for one API it is allowed — or, with `sub` a person's id, a token for
//! that person (`subject_type` `human`, `act` the agent, RFC 8693 §4.1) within a live delegation
//! the person granted it on the consent page (`crate::delegations`).
//!
//! Checks, in order (every refusal of the assertion itself is `invalid_grant`, RFC 7523 §3.1):
//! 1. [`params`]: no parameter repeated (RFC 6749 §3.2); `assertion` present; no client
//!    authentication of any kind — the assertion is the agent's only credential, and an
//!    application's secret next to it would make it unclear who asks.
//! 2. The assertion is a compact JWS with an asymmetric `alg` (`crate::client_jws`: `none` and
//!    HS* refused before any key is read, `crit` refused), at most 16 KiB.
//! 3. `iss` is the agent's id; `sub` is the agent's id too, or the id of the person it acts for
//!    (RFC 7523 §3 items 1, 2: the subject is the resource owner or an authorized delegate).
//! 4. The DPoP proof, if any, passes its stateless checks (`crate::dpop`).
//! 5. The agent exists in this tenant and is active, and the signature verifies with one of
//!    its registered keys. Unknown, suspended and revoked agents, and a bad signature, get one
//!    and the same answer: the caller learns nothing about which agents exist.
//! 6. Claims (RFC 7523 §3): `aud` names the issuer or the token endpoint; `exp` present, in the
//!    future and at most [`MAX_ASSERTION_LIFETIME`] away; `nbf` and `iat` not beyond
//!    [`ASSERTION_CLOCK_SKEW`] in the future.
//! 7. `nonce` is a challenge minted for this agent of this tenant and not expired.
//! 8. [`target_of`]: the token is for one API resource the tenant registered *and* the agent is
//!    allowed (`resource`, RFC 8707; without it the agent's only allowed resource);
//!    `invalid_target` otherwise. Never the management API: an agent's scopes are granted by
//!    whoever holds `agents:write`, which must not be a way to reach `users:write`.
//! 9. [`scope_of`]: the requested scopes (default: all it may have there) are within the
//!    agent's `allowed_scopes` and are permissions of that API; `invalid_scope` naming the first
//!    other.
//! 10. The challenge is spent (single use, `use_agent_challenge`), then the proof's `jti`.
//!
//! For a person (`sub` = `usr_…`), checks 8 and 9 read: the person may still sign in; among the
//! live delegations from them to this agent, one covers the API and every asked permission
//! (without `scope`: the one that expires last, with all it grants there) — `invalid_grant`
//! when none does; the token carries the permissions of that API the person still holds
//! (`invalid_scope` when that is none), names the delegation in `act` (`delegation_id`), and
//! never outlives it. Only delegations the person does not approve use by use count here: when
//! only such a one covers the request, the refusal says to ask through `/bc-authorize`
//! (`crate::backchannel`, then `super::agent_use`), where the person approves that use.
//!
//! The token lives `access_token_lifetime_agent_secs`, is DPoP-bound when a proof came, and
//! comes without a refresh token (an agent can always answer a new challenge). Revoking or
//! suspending the agent makes it inactive at introspection at once.

use super::TokenEndpoint;
use super::issue::{NewAccessToken, SubjectType, TokenResponse};
use crate::agent_challenge::{self, ChallengeRefused};
use crate::client_auth::{ASSERTION_CLOCK_SKEW, MAX_ASSERTION_LIFETIME};
use crate::client_jws::{self, Unverified};
use crate::error::OAuthError;
use crate::token::TokenCall;
use serde_json::Value;
use std::collections::BTreeSet;
use svc_domain::{Agent, AgentId, ApiResource, Delegation, ScopeSet, Tenant, UserId};
use svc_store::StoreError;

/// `grant_type` of the agent grant: the JWT bearer grant of RFC 7523 §2.1.
pub const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Longest assertion read.
const MAX_ASSERTION_BYTES: usize = 16 * 1024;

/// Parameters that authenticate a client: none may come with an agent's assertion (check 1).
const CLIENT_AUTHENTICATION: [&str; 4] = [
    "client_id",
    "client_secret",
    "client_assertion",
    "client_assertion_type",
];

/// One refusal for every failure of check 5 and the assertion's claims, so nothing tells an
/// unknown agent from a bad key.
fn not_valid() -> OAuthError {
    OAuthError::invalid_grant("the agent assertion is not valid")
}

/// Whether a token request is the agent grant.
pub(super) fn is_agent_grant(form: &[(String, String)]) -> bool {
    form.iter()
        .any(|(k, v)| k == "grant_type" && v == JWT_BEARER_GRANT)
}

/// What check 1 reads.
#[derive(Debug)]
struct AgentParams<'f> {
    assertion: &'f str,
    scope: Option<&'f str>,
    resource: Option<&'f str>,
    authorization_details: Option<&'f str>,
}

/// Check 1.
fn params<'f>(
    form: &'f [(String, String)],
    authorization: Option<&str>,
) -> Result<AgentParams<'f>, OAuthError> {
    let mut seen = BTreeSet::new();
    for (name, _) in form {
        if !seen.insert(name.as_str()) {
            return Err(OAuthError::invalid_request(format!(
                "{name} must not be repeated (RFC 6749 §3.2)"
            )));
        }
    }
    if authorization.is_some() || CLIENT_AUTHENTICATION.iter().any(|n| seen.contains(n)) {
        return Err(OAuthError::invalid_request(
            "an agent authenticates with its signed assertion alone: send no client authentication",
        ));
    }
    let get = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let assertion = get("assertion")
        .filter(|a| !a.is_empty())
        .ok_or_else(|| OAuthError::invalid_request("assertion is required (RFC 7523 §2.1)"))?;
    Ok(AgentParams {
        assertion,
        scope: get("scope"),
        resource: get("resource"),
        authorization_details: get("authorization_details"),
    })
}

/// The assertion of a request that authenticates an agent the way a client authenticates with a
/// JWT (RFC 7523 §2.2: `client_assertion_type` jwt-bearer, `client_assertion` whose `iss` is an
/// agent's id): an agent's backchannel start and poll (per-use approval of a delegation). Any
/// other request (an application's assertion, a malformed one) is left to client
/// authentication, which refuses what it must.
pub(crate) fn agent_client_assertion(form: &[(String, String)]) -> Option<&str> {
    let get = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    if get("client_assertion_type") != Some(super::JWT_BEARER_ASSERTION_TYPE) {
        return None;
    }
    let assertion = get("client_assertion")?;
    let unverified = Unverified::parse(assertion, MAX_ASSERTION_BYTES).ok()?;
    AgentId::parse(unverified.claim("iss")?).ok()?;
    Some(assertion)
}

/// An agent authenticating as a client (see [`agent_client_assertion`]): no parameter repeated
/// (RFC 6749 §3.2), no other authentication beside the assertion, `client_id` absent or the
/// agent's id (RFC 7523 §3), `iss` and `sub` the agent. Its id.
pub(crate) fn agent_client(
    form: &[(String, String)],
    authorization: Option<&str>,
    assertion: &str,
) -> Result<(AgentId, Unverified), OAuthError> {
    let mut seen = BTreeSet::new();
    for (name, _) in form {
        if !seen.insert(name.as_str()) {
            return Err(OAuthError::invalid_request(format!(
                "{name} must not be repeated (RFC 6749 §3.2)"
            )));
        }
    }
    if authorization.is_some() || seen.contains("client_secret") {
        return Err(OAuthError::invalid_request(
            "an agent authenticates with its signed assertion alone: send no other client authentication",
        ));
    }
    let unverified = Unverified::parse(assertion, MAX_ASSERTION_BYTES)
        .map_err(|e| OAuthError::invalid_client(e.describe("agent assertion")))?;
    let (agent, subject) = agent_named(&unverified)?;
    let named = form
        .iter()
        .find(|(k, _)| k == "client_id")
        .map(|(_, v)| v.as_str());
    if subject != Subject::Agent || named.is_some_and(|id| id != agent.as_str()) {
        return Err(OAuthError::invalid_client(
            "an agent's client assertion names the agent as iss, sub and client_id (RFC 7523 §3)",
        ));
    }
    Ok((agent, unverified))
}

/// A refusal of an agent's assertion where it authenticates the agent as a client (its
/// backchannel start and poll): `invalid_client` (RFC 6749 §5.2) instead of the grant's
/// `invalid_grant`; any other error (a store failure) unchanged.
pub(crate) fn as_client_error(error: OAuthError) -> OAuthError {
    match error.code() {
        crate::error::ErrorCode::InvalidGrant => {
            OAuthError::invalid_client(error.description().to_owned())
        }
        _ => error,
    }
}

/// Whom the token is for (check 3).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Subject {
    /// The agent itself.
    Agent,
    /// A person it acts for.
    Person(UserId),
}

/// Check 3: `iss` an agent id; `sub` the same, or a person's id.
fn agent_named(unverified: &Unverified) -> Result<(AgentId, Subject), OAuthError> {
    let refused = || {
        OAuthError::invalid_grant(
            "iss of the agent assertion must be the agent's id and sub the agent's or a person's (RFC 7523 §3)",
        )
    };
    let (Some(iss), Some(sub)) = (unverified.claim("iss"), unverified.claim("sub")) else {
        return Err(refused());
    };
    let agent = AgentId::parse(iss).map_err(|_| refused())?;
    if iss == sub {
        return Ok((agent, Subject::Agent));
    }
    let person = UserId::parse(sub).map_err(|_| refused())?;
    Ok((agent, Subject::Person(person)))
}

/// Check 6.
fn check_claims(claims: &Value, issuer: &str, now: i64) -> Result<(), OAuthError> {
    let token_endpoint = crate::discovery::token_endpoint(issuer);
    if !client_jws::audience_is(claims, &[issuer, &token_endpoint]) {
        return Err(OAuthError::invalid_grant(
            "the agent assertion's aud must name the issuer or the token endpoint (RFC 7523 §3)",
        ));
    }
    let date = |name: &str| {
        client_jws::numeric_date(claims, name).map_err(|()| {
            OAuthError::invalid_grant(format!("the agent assertion's {name} must be a number"))
        })
    };
    let exp = date("exp")?.ok_or_else(|| {
        OAuthError::invalid_grant("the agent assertion must carry exp (RFC 7523 §3)")
    })?;
    if exp <= now {
        return Err(OAuthError::invalid_grant("the agent assertion has expired"));
    }
    if exp > now + MAX_ASSERTION_LIFETIME {
        return Err(OAuthError::invalid_grant(format!(
            "the agent assertion must expire within {MAX_ASSERTION_LIFETIME} seconds"
        )));
    }
    for name in ["nbf", "iat"] {
        if date(name)?.is_some_and(|t| t > now + ASSERTION_CLOCK_SKEW) {
            return Err(OAuthError::invalid_grant(format!(
                "the agent assertion's {name} is in the future"
            )));
        }
    }
    Ok(())
}

/// Check 8, first half: the resource named, or the agent's only allowed one.
pub(crate) fn target_of<'a>(
    agent: &'a Agent,
    named: Option<&'a str>,
) -> Result<&'a str, OAuthError> {
    if let Some(named) = named {
        return Ok(named);
    }
    match agent.allowed_resources.as_slice() {
        [only] => Ok(only.as_str()),
        [] => Err(OAuthError::invalid_target(
            "this agent is allowed no resource: register one in its allowed_resources",
        )),
        _ => Err(OAuthError::invalid_target(
            "resource is required: this agent may obtain tokens for several APIs (RFC 8707)",
        )),
    }
}

/// Check 9: the scopes of the token, for `api`.
fn scope_of(
    agent: &Agent,
    api: &ApiResource,
    asked: Option<&ScopeSet>,
) -> Result<ScopeSet, OAuthError> {
    let defined = |s: &str| api.permissions.iter().any(|p| p.name.as_str() == s);
    match asked {
        None => Ok(ScopeSet::from_scopes(
            agent
                .allowed_scopes
                .iter()
                .filter(|s| defined(s.as_str()))
                .cloned(),
        )),
        Some(asked) => {
            if let Some(other) = asked
                .iter()
                .find(|s| !agent.allowed_scopes.contains(s.as_str()) || !defined(s.as_str()))
            {
                return Err(OAuthError::invalid_scope(format!(
                    "{other} is not a scope this agent may hold at {}",
                    api.identifier
                )));
            }
            Ok(asked.clone())
        }
    }
}

impl TokenEndpoint {
    /// The agent grant (checks 1–10 of the module documentation).
    pub(super) async fn agent_assertion(
        &self,
        call: &TokenCall<'_>,
    ) -> Result<TokenResponse, OAuthError> {
        let (tenant, issuer) = (call.tenant, call.issuer);
        // 1–3.
        let params = params(call.form, call.authorization)?;
        let unverified = Unverified::parse(params.assertion, MAX_ASSERTION_BYTES)
            .map_err(|e| OAuthError::invalid_grant(e.describe("agent assertion")))?;
        let (agent_id, subject) = agent_named(&unverified)?;
        // 4.
        let checked = self.check_proof(call)?;
        // 5–7.
        let now = self.ctx.clock.now();
        let (agent, challenge) = self
            .agents()
            .verify_signed(
                tenant,
                issuer,
                &agent_id,
                params.assertion,
                &unverified,
                now,
            )
            .await?;
        // 8, 9.
        let target = target_of(&agent, params.resource)?;
        if target == crate::discovery::management_api_resource(issuer) {
            return Err(OAuthError::invalid_target(
                "agents obtain tokens for the tenant's APIs, never the management API",
            ));
        }
        let api = self.agents().agent_api(tenant, &agent, target).await?;
        // Parsed once here, for both subjects.
        let asked = params
            .scope
            .map(ScopeSet::parse)
            .transpose()
            .map_err(|e| OAuthError::invalid_scope(format!("scope: {e}")))?;
        let (scope, delegated) = match &subject {
            Subject::Agent => (scope_of(&agent, &api, asked.as_ref())?, None),
            Subject::Person(person) => {
                let (scope, delegation) = self
                    .agents()
                    .delegated(
                        tenant,
                        &agent,
                        person,
                        &api,
                        asked.as_ref(),
                        Using::Standing,
                        now,
                    )
                    .await?;
                (scope, Some((person, delegation)))
            }
        };
        // RFC 9396: details of the agent's own types for itself; for a person, the
        // delegation's (or fewer).
        let on = self.ctx.authorization_details();
        let types = &agent.authorization_details_types;
        let details = match &delegated {
            None => crate::details::direct_types(types, params.authorization_details, on)?,
            Some((_, d)) => crate::details::from_grant_types(
                types,
                d.authorization_details.as_ref(),
                params.authorization_details,
                on,
            )?,
        };
        // 10.
        self.agents()
            .spend_challenge(tenant, &agent.id, &challenge, now)
            .await?;
        let proof = self.record_proof(tenant, checked).await?;
        self.agent_token(
            tenant,
            issuer,
            &agent,
            &api,
            &scope,
            delegated,
            details.as_ref(),
            proof.as_ref().map(|p| p.jkt.as_str()),
            "agent_assertion",
        )
        .await
    }

    /// The access token of an agent's request: for the agent, or for a person on `delegated`
    /// (the person and the delegation), then naming the agent in `act` (RFC 8693 §4.1) with the
    /// delegation it acts on and never outliving it; carrying `details` (RFC 9396 §9.1) in the
    /// token and the response; bound to `jkt` when a proof came.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn agent_token(
        &self,
        tenant: &Tenant,
        issuer: &str,
        agent: &Agent,
        api: &ApiResource,
        scope: &ScopeSet,
        delegated: Option<(&UserId, Delegation)>,
        details: Option<&svc_domain::AuthorizationDetails>,
        jkt: Option<&str>,
        grant: &'static str,
    ) -> Result<TokenResponse, OAuthError> {
        let actor = delegated.as_ref().map(|(_, d)| {
            serde_json::json!({
                "sub": agent.id.as_str(),
                "subject_type": SubjectType::Agent.as_str(),
                "delegation_id": d.id.as_str(),
            })
        });
        let (subject, subject_type) = match &delegated {
            Some((person, _)) => (person.as_str(), SubjectType::Human),
            None => (agent.id.as_str(), SubjectType::Agent),
        };
        let access = self
            .issuer()
            .issue(
                &tenant.id,
                issuer,
                &NewAccessToken {
                    subject,
                    subject_type,
                    client_id: agent.id.as_str(),
                    audience: &api.identifier,
                    scope,
                    authentication: None,
                    organization: None,
                    confirmation: jkt,
                    actor: actor.as_ref(),
                    not_after: delegated
                        .as_ref()
                        .map(|(_, d)| d.expires_at.unix_timestamp()),
                    details,
                },
            )
            .await?;
        tracing::info!(
            tenant = %tenant.id,
            agent = %agent.id,
            delegation = delegated.as_ref().map(|(_, d)| d.id.as_str()),
            grant_type = grant,
            jti = %access.jti,
            scope = %scope,
            "access token issued"
        );
        let mut response = TokenResponse::access_only(access, scope, jkt.is_some());
        response.authorization_details = details.map(|d| d.to_value());
        Ok(response)
    }

    /// An agent's assertion presented as the actor token of a token exchange: checks 2, 3 and
    /// 5–7 as for the agent grant, with `sub` the agent itself (it vouches for its presence, not
    /// for a person). The challenge is returned unspent: the exchange spends it only once
    /// everything else holds ([`Self::spend_challenge`]).
    pub(super) async fn assertion_actor(
        &self,
        tenant: &Tenant,
        issuer: &str,
        assertion: &str,
    ) -> Result<(Agent, agent_challenge::Opened), OAuthError> {
        let unverified = Unverified::parse(assertion, MAX_ASSERTION_BYTES)
            .map_err(|e| OAuthError::invalid_grant(e.describe("agent assertion")))?;
        let (agent_id, subject) = agent_named(&unverified)?;
        if subject != Subject::Agent {
            return Err(OAuthError::invalid_request(
                "an agent assertion as actor_token names the agent as sub: it vouches for the agent, the subject token for the person",
            ));
        }
        let now = self.ctx.clock.now();
        self.agents()
            .verify_signed(tenant, issuer, &agent_id, assertion, &unverified, now)
            .await
    }

    /// The checks agents' requests share, over this endpoint's context.
    pub(crate) fn agents(&self) -> AgentChecks<'_> {
        AgentChecks { ctx: &self.ctx }
    }
}

/// Which of a person's delegations to an agent a request may act on.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Using<'a> {
    /// One the person does not approve use by use (the agent grant, token exchange): the one
    /// that ends last among those covering the request. When only delegations approved per use
    /// cover it, the refusal says to ask through the backchannel endpoint.
    Standing,
    /// Any covering one, the one that ends last: the person is asked to approve this use.
    ToApprove,
    /// This one, whose use the person approved: it must still be live and cover the request.
    Approved(&'a svc_domain::DelegationId),
}

/// The checks of the module documentation that every request of an agent runs (the agent grant,
/// an agent's actor token, an agent's backchannel start and poll), over one protocol context.
pub(crate) struct AgentChecks<'a> {
    pub(crate) ctx: &'a crate::context::ProtocolContext,
}

impl AgentChecks<'_> {
    /// Checks 5–7 of `assertion` (parsed as `unverified`, naming `agent_id`): the agent is
    /// active and signed it, its claims hold at `now`, and its `nonce` is an unexpired challenge
    /// given to this agent — not yet spent ([`Self::spend_challenge`]).
    pub(crate) async fn verify_signed(
        &self,
        tenant: &Tenant,
        issuer: &str,
        agent_id: &AgentId,
        assertion: &str,
        unverified: &Unverified,
        now: time::OffsetDateTime,
    ) -> Result<(Agent, agent_challenge::Opened), OAuthError> {
        // 5.
        let agent = self
            .active_agent(tenant, agent_id)
            .await?
            .ok_or_else(not_valid)?;
        let keys = client_jws::parse_jwks(&agent.jwks).map_err(|_| not_valid())?;
        let claims = client_jws::verify_with(&keys, assertion, unverified).map_err(|e| {
            tracing::info!(tenant = %tenant.id, agent = %agent.id, reason = ?e, "agent assertion refused");
            not_valid()
        })?;
        // 6, 7.
        check_claims(&claims, issuer, now.unix_timestamp())?;
        let nonce = claims.get("nonce").and_then(Value::as_str).ok_or_else(|| {
            OAuthError::invalid_grant(
                "the agent assertion must carry the challenge of /oauth/agent/challenge as nonce",
            )
        })?;
        let challenge =
            agent_challenge::open(tenant, agent.id.as_str(), nonce, now.unix_timestamp()).map_err(
                |refused| match refused {
                    ChallengeRefused::Foreign => OAuthError::invalid_grant(
                        "the nonce is not a challenge given to this agent",
                    ),
                    ChallengeRefused::Expired => OAuthError::invalid_grant(
                        "the challenge has expired: ask /oauth/agent/challenge for a new one",
                    ),
                },
            )?;
        Ok((agent, challenge))
    }

    /// Checks 8 and 9 for a person (see the module documentation): the scope of the token and
    /// the delegation it acts on, chosen as `using` says.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn delegated(
        &self,
        tenant: &Tenant,
        agent: &Agent,
        person: &UserId,
        api: &ApiResource,
        asked: Option<&ScopeSet>,
        using: Using<'_>,
        now: time::OffsetDateTime,
    ) -> Result<(ScopeSet, Delegation), OAuthError> {
        let none = || {
            OAuthError::invalid_grant(
                "no live delegation from this person to this agent covers the request",
            )
        };
        let mut tx = self.ctx.store.read().await?;
        let user = tx.user(&tenant.id, person).await?;
        if !user.as_ref().is_some_and(svc_domain::User::can_sign_in) {
            tx.finish().await?;
            return Err(none());
        }
        let covering: Vec<Delegation> = tx
            .delegations_of_user(&tenant.id, person, Some(&agent.id))
            .await?
            .into_iter()
            .filter(|d| d.is_live(now) && d.resources.contains(&api.identifier))
            .filter(|d| asked.is_none_or(|a| a.iter().all(|s| d.scopes.contains(s.as_str()))))
            .collect();
        let chosen = match using {
            Using::Standing => {
                let standing = covering
                    .iter()
                    .filter(|d| !d.per_use_approval)
                    .max_by_key(|d| d.expires_at);
                if standing.is_none() && !covering.is_empty() {
                    tx.finish().await?;
                    return Err(OAuthError::invalid_grant(
                        "the person approves each use of this delegation: ask them through the backchannel endpoint (/bc-authorize)",
                    ));
                }
                standing
            }
            Using::ToApprove => covering.iter().max_by_key(|d| d.expires_at),
            Using::Approved(id) => covering.iter().find(|d| &d.id == id),
        };
        let Some(delegation) = chosen.cloned() else {
            tx.finish().await?;
            return Err(none());
        };
        let held =
            crate::resources::person_permissions(tx.as_mut(), &tenant.id, person, None, &api.id)
                .await?;
        tx.finish().await?;
        // Within the delegation, the agent's allowances and the API; then what the person
        // still holds there (dropped, not refused, as at sign-in).
        let scope = scope_of(agent, api, Some(asked.unwrap_or(&delegation.scopes)))?;
        let scope = crate::resources::permitted(&scope, api, &held);
        if scope.is_empty() {
            return Err(OAuthError::invalid_scope(
                "the person holds none of these permissions at this API now",
            ));
        }
        Ok((scope, delegation))
    }

    /// The agent `id` of `tenant` while it is active.
    async fn active_agent(
        &self,
        tenant: &Tenant,
        id: &AgentId,
    ) -> Result<Option<Agent>, OAuthError> {
        let mut tx = self.ctx.store.read().await?;
        let agent = tx.agent(&tenant.id, id).await?;
        tx.finish().await?;
        Ok(agent.filter(Agent::is_active))
    }

    /// Check 8: `target` is one of the agent's allowed resources and an API the tenant
    /// registered.
    pub(crate) async fn agent_api(
        &self,
        tenant: &Tenant,
        agent: &Agent,
        target: &str,
    ) -> Result<ApiResource, OAuthError> {
        if !agent.allowed_resources.iter().any(|r| r == target) {
            return Err(OAuthError::invalid_target(
                "resource is not one this agent may obtain tokens for",
            ));
        }
        let mut tx = self.ctx.store.read().await?;
        let api = tx.api_resource_by_identifier(&tenant.id, target).await?;
        tx.finish().await?;
        api.ok_or_else(|| {
            OAuthError::invalid_target(
                "resource is not an API this tenant registered (agents get tokens for the tenant's APIs)",
            )
        })
    }

    /// Check 10, first half: the challenge is answered once.
    pub(crate) async fn spend_challenge(
        &self,
        tenant: &Tenant,
        agent: &AgentId,
        challenge: &agent_challenge::Opened,
        now: time::OffsetDateTime,
    ) -> Result<(), OAuthError> {
        let until = time::OffsetDateTime::from_unix_timestamp(challenge.exp)
            .map_err(|_| OAuthError::invalid_grant("the challenge has expired"))?;
        let mut tx = self.ctx.store.write().await?;
        match tx
            .use_agent_challenge(&tenant.id, agent, &challenge.id, until, now)
            .await
        {
            Ok(()) => {
                tx.commit().await?;
                Ok(())
            }
            Err(StoreError::Conflict { .. }) => Err(OAuthError::invalid_grant(
                "the challenge was already answered: ask /oauth/agent/challenge for a new one",
            )),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Form pairs as the HTTP layer hands them over.
    pub(in crate::token) fn form(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn the_grant_is_recognised_by_its_type_only() {
        assert!(is_agent_grant(&form(&[("grant_type", JWT_BEARER_GRANT)])));
        assert!(!is_agent_grant(&form(&[(
            "grant_type",
            "client_credentials"
        )])));
        assert!(!is_agent_grant(&form(&[(
            "assertion_type",
            JWT_BEARER_GRANT
        )])));
    }

    #[test]
    fn repeats_and_client_authentication_are_refused() {
        let g = ("grant_type", JWT_BEARER_GRANT);
        let refused = |pairs: &[(&str, &str)], auth: Option<&str>| {
            params(&form(pairs), auth)
                .unwrap_err()
                .description()
                .to_owned()
        };
        assert!(refused(&[g, ("assertion", "a"), ("assertion", "b")], None).contains("repeated"));
        for name in CLIENT_AUTHENTICATION {
            assert!(
                refused(&[g, ("assertion", "a"), (name, "x")], None).contains("alone"),
                "{name}"
            );
        }
        assert!(refused(&[g, ("assertion", "a")], Some("Basic eDp5")).contains("alone"));
        assert!(refused(&[g], None).contains("assertion is required"));
        assert!(refused(&[g, ("assertion", "")], None).contains("assertion is required"));
        let ok = form(&[
            g,
            ("assertion", "a.b.c"),
            ("scope", "x:y"),
            ("resource", "https://r"),
        ]);
        let p = params(&ok, None).expect("params");
        assert_eq!(
            (p.assertion, p.scope, p.resource),
            ("a.b.c", Some("x:y"), Some("https://r"))
        );
    }

    #[test]
    fn assertion_claims_follow_rfc_7523() {
        let issuer = "https://acme.example";
        let now = 1_000_000;
        let ok = serde_json::json!({"aud": issuer, "exp": now + 60, "iat": now});
        check_claims(&ok, issuer, now).expect("valid");
        let endpoint =
            serde_json::json!({"aud": [crate::discovery::token_endpoint(issuer)], "exp": now + 60});
        check_claims(&endpoint, issuer, now).expect("token endpoint as aud");
        for (bad, why) in [
            (
                serde_json::json!({"aud": "https://other.example", "exp": now + 60}),
                "aud",
            ),
            (serde_json::json!({"aud": issuer}), "exp"),
            (serde_json::json!({"aud": issuer, "exp": now}), "expired"),
            (
                serde_json::json!({"aud": issuer, "exp": now + MAX_ASSERTION_LIFETIME + 1}),
                "within",
            ),
            (serde_json::json!({"aud": issuer, "exp": "soon"}), "number"),
            (
                serde_json::json!({"aud": issuer, "exp": now + 60, "iat": now + ASSERTION_CLOCK_SKEW + 1}),
                "future",
            ),
            (
                serde_json::json!({"aud": issuer, "exp": now + 60, "nbf": now + ASSERTION_CLOCK_SKEW + 1}),
                "future",
            ),
        ] {
            let e = check_claims(&bad, issuer, now).unwrap_err();
            assert_eq!(e.code(), crate::error::ErrorCode::InvalidGrant);
            assert!(e.description().contains(why), "{bad}: {}", e.description());
        }
    }
}
