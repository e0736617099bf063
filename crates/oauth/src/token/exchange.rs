//! `grant_type=urn:ietf:params:oauth:grant-type:token-exchange` (RFC 8693) at the token
//! endpoint: reads what the rules of [`crate::grants::token_exchange`] need (the presented
//! tokens' verified claims, the person behind them, the target API) and issues the token.
//!
//! Moving to another API (`audience`/`resource` naming a registered API resource) keeps only
//! the permissions of that API the subject holds there now (a person's roles, an application's
//! roles: `crate::resources`), as the code and refresh grants do; the subject token's scopes
//! were granted for its own audience and prove nothing about another.
//!
//! A token acting in an organization (`org_id`) is exchanged only while that organization is
//! active.
//!
//! An agent's own token as the actor token — or its signed assertion answering a challenge
//! (`actor_token_type` JWT, verified as for the agent grant and spent last) — with the agent
//! owned by the presenting client, makes the agent the actor for a person only on a live
//! delegation from them ([`TokenEndpoint::on_delegation`]): the result is the token the agent
//! grant would give it on that delegation, bounded again by the subject token, issued to the
//! presenting client, with the delegation's RAR details (or fewer, when the request narrows
//! them with `authorization_details`). No other exchange carries details.
//!
//! A person's token is exchanged only while the person may still sign in, and the new token
//! names them as the presenting client sees them: their id for a first-party client, else the
//! pairwise subject of the consent they gave it — a third-party client they never consented to
//! gets nothing (`invalid_request`), since it could not even be told who the person is.

use super::TokenEndpoint;
use super::issue::{Authentication, NewAccessToken, OrgClaims, SubjectType, TokenResponse};
use super::request::TokenRequest;
use crate::access_token::active_claims;
use crate::client_auth::AuthenticatedClient;
use crate::error::{ErrorCode, OAuthError};
use crate::grants::token_exchange::{self as rules, ACCESS_TOKEN_TYPE};
use crate::subject::{agent_is_active, client_of_claim, person_behind};
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use svc_domain::{
    Agent, AgentId, AgentOwner, ApiResource, Application, ClientId, Delegation, OrgStatus,
    OrganizationId, PermissionName, ScopeSet, Tenant, User,
};
use time::OffsetDateTime;

impl TokenEndpoint {
    pub(super) async fn token_exchange(
        &self,
        tenant: &Tenant,
        issuer: &str,
        client: &AuthenticatedClient,
        request: &TokenRequest,
    ) -> Result<TokenResponse, OAuthError> {
        let app = &client.application;
        if !app.is_confidential() {
            return Err(OAuthError::unauthorized_client(
                "token exchange is for confidential clients",
            ));
        }
        // 1.
        let params = rules::params(request)?;
        let subject = self
            .presented(tenant, issuer, params.subject_token, "subject_token")
            .await?;
        // An agent's assertion stands for the agent's own token: its claims as an actor are
        // the agent's id and kind; its challenge is spent last, once everything else holds.
        let (actor_claims, assertion) = match params.actor_token {
            Some(token) if params.actor_is_assertion => {
                let (agent, challenge) = self.asserted_actor(tenant, issuer, token).await?;
                let mut claims = Map::new();
                claims.insert("sub".into(), Value::from(agent.id.as_str()));
                claims.insert("subject_type".into(), Value::from("agent"));
                (Some(claims), Some((agent, challenge)))
            }
            Some(token) => (
                Some(self.presented(tenant, issuer, token, "actor_token").await?),
                None,
            ),
            None => (None, None),
        };
        // 2–5.
        let agent = match (&assertion, &actor_claims) {
            (Some((agent, _)), _) => Some(agent.clone()).filter(|a| owned_by(a, app)),
            (None, Some(claims))
                if claims.get("subject_type").and_then(Value::as_str) == Some("agent") =>
            {
                self.owned_agent(tenant, app, claim(claims, "sub")).await?
            }
            _ => None,
        };
        let actor = rules::actor_of(app, actor_claims.as_ref(), agent.is_some())?;
        rules::check_presentable(app, &subject, &actor)?;
        let mut act = rules::chain(app, &subject, &actor, self.settings.max_chain_depth)?;
        rules::check_bound(&subject, request.proof_jkt(), "subject_token")?;
        if let Some(actor_claims) = &actor_claims {
            rules::check_bound(actor_claims, request.proof_jkt(), "actor_token")?;
        }
        // 6, 7.
        let scope = rules::scope_of(&subject, request.scope())?;
        let moved_to = match params.target {
            Some(target) if Some(target) != subject.get("aud").and_then(Value::as_str) => {
                self.registered_api(tenant, target).await?
            }
            _ => None,
        };
        let audience = rules::audience_of(&subject, params.target, moved_to.is_some())?;
        // Another API's permissions are the subject's only as far as its roles hold them there:
        // the subject token's scopes were granted for its own audience.
        let scope = match &moved_to {
            Some(api) => {
                let held = self.held_at(tenant, &subject, api).await?;
                crate::resources::permitted(&scope, api, &held)
            }
            None => scope,
        };

        // An assertion lives minutes: it proves the agent is there now, not how long the token
        // may live (the delegation and the subject token decide that).
        let mut not_after = match assertion {
            Some(_) => rules::not_after(&subject, None),
            None => rules::not_after(&subject, actor_claims.as_ref()),
        };
        // An agent acts for a person only on a live delegation from them: the scope and the
        // audience stay within it, `act` names it, the token never outlives it, and it carries
        // the RAR details the person approved there, or fewer (RFC 9396 §6.1). Other
        // exchanges carry none: the exchanged token has fewer rights, not more, so a request
        // for details there has nothing to narrow (`crate::details` rule 2).
        let asked_details = request.param("authorization_details");
        let on = self.ctx.authorization_details();
        let (scope, details) = match &agent {
            Some(agent) => {
                let (scope, delegation) = self
                    .on_delegation(tenant, app, agent, &subject, &audience, &scope, request)
                    .await?;
                if let Some(Value::Object(link)) = act.as_mut() {
                    link.insert("delegation_id".into(), Value::from(delegation.id.as_str()));
                }
                let end = delegation.expires_at.unix_timestamp();
                not_after = Some(not_after.map_or(end, |at| at.min(end)));
                let details = crate::details::from_grant_types(
                    &agent.authorization_details_types,
                    delegation.authorization_details.as_ref(),
                    asked_details,
                    on,
                )?;
                (scope, details)
            }
            None => (
                scope,
                crate::details::from_grant_types(&[], None, asked_details, on)?,
            ),
        };

        let subject_type = subject_type_of(&subject);
        let sub = match subject_type {
            SubjectType::Human => self.person_as_seen_by(tenant, app, &subject).await?,
            _ => claim(&subject, "sub").to_owned(),
        };
        let auth_time = subject
            .get("auth_time")
            .and_then(Value::as_i64)
            .and_then(|t| OffsetDateTime::from_unix_timestamp(t).ok());
        let amr: Vec<String> = subject
            .get("amr")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let authentication = auth_time.map(|auth_time| Authentication {
            auth_time,
            acr: subject.get("acr").and_then(Value::as_str),
            amr: &amr,
            // An exchanged token acts beside the session, never as it: no `sid`.
            session: None,
        });
        let organization = match (
            subject.get("org_id").and_then(Value::as_str),
            subject.get("org_slug").and_then(Value::as_str),
        ) {
            (Some(id), Some(slug)) => Some(OrgClaims { id, slug }),
            _ => None,
        };
        if let Some((agent, challenge)) = &assertion {
            let now = self.ctx.clock.now();
            self.agents()
                .spend_challenge(tenant, &agent.id, challenge, now)
                .await
                .map_err(as_exchange_refusal)?;
        }
        let access = self
            .issuer()
            .issue(
                &tenant.id,
                issuer,
                &NewAccessToken {
                    subject: &sub,
                    subject_type,
                    client_id: app.id.as_str(),
                    audience: &audience,
                    scope: &scope,
                    authentication,
                    organization,
                    confirmation: request.proof_jkt(),
                    actor: act.as_ref(),
                    not_after,
                    details: details.as_ref(),
                },
            )
            .await?;
        tracing::info!(
            tenant = %tenant.id,
            client_id = %app.id,
            grant_type = "token_exchange",
            jti = %access.jti,
            subject_jti = claim(&subject, "jti"),
            delegated = act.is_some(),
            scope = %scope,
            "access token issued"
        );
        Ok(TokenResponse {
            issued_token_type: Some(ACCESS_TOKEN_TYPE),
            authorization_details: details.map(|d| d.to_value()),
            ..TokenResponse::access_only(access, &scope, request.proof().is_some())
        })
    }

    /// The claims of `token`, an active access token of `tenant` whose person, if it has one,
    /// may still sign in; otherwise `invalid_request` (RFC 8693 §2.2.2), saying no more.
    async fn presented(
        &self,
        tenant: &Tenant,
        issuer: &str,
        token: &str,
        which: &str,
    ) -> Result<Map<String, Value>, OAuthError> {
        let refused = || {
            OAuthError::invalid_request(format!(
                "the {which} is not an active access token of this tenant"
            ))
        };
        let now = self.ctx.clock.now();
        let claims = active_claims(
            self.ctx.store.as_ref(),
            &self.ctx.keys,
            tenant,
            issuer,
            token,
            now,
        )
        .await?
        .and_then(|c| match c {
            Value::Object(map) => Some(map),
            _ => None,
        })
        .ok_or_else(refused)?;
        match subject_type_of(&claims) {
            SubjectType::Human => {
                let person = self.person(tenant, &claims).await?;
                if !person.as_ref().is_some_and(User::can_sign_in) {
                    return Err(refused());
                }
            }
            // A suspended or revoked agent's token is worth nothing, here as at introspection.
            SubjectType::Agent => {
                let mut tx = self.ctx.store.read().await?;
                let active = agent_is_active(tx.as_mut(), tenant, claim(&claims, "sub")).await?;
                tx.finish().await?;
                if !active {
                    return Err(refused());
                }
            }
            SubjectType::System | SubjectType::Anonymous => {}
        }
        // A token acting in an organization is exchanged only while the organization is
        // active: the new token would carry its `org_id` again.
        if let Some(org) = claims.get("org_id")
            && !self.organization_active(tenant, org).await?
        {
            return Err(refused());
        }
        Ok(claims)
    }

    /// Whether the organization named by an `org_id` claim exists in `tenant` and is active.
    async fn organization_active(&self, tenant: &Tenant, org: &Value) -> Result<bool, OAuthError> {
        let Some(id) = org.as_str().and_then(|o| OrganizationId::parse(o).ok()) else {
            return Ok(false);
        };
        let mut tx = self.ctx.store.read().await?;
        let found = tx.organization(&tenant.id, &id).await?;
        tx.finish().await?;
        Ok(found.is_some_and(|o| o.status == OrgStatus::Active))
    }

    /// The person behind a person's token, whatever their status.
    async fn person(
        &self,
        tenant: &Tenant,
        claims: &Map<String, Value>,
    ) -> Result<Option<User>, OAuthError> {
        let mut tx = self.ctx.store.read().await?;
        let person = match client_of_claim(tx.as_mut(), tenant, claim(claims, "client_id")).await? {
            Some(client) => {
                person_behind(tx.as_mut(), tenant, &client, claim(claims, "sub")).await?
            }
            None => None,
        };
        tx.finish().await?;
        Ok(person)
    }

    /// The `sub` `app` sees for the person behind `subject` (see the module documentation).
    async fn person_as_seen_by(
        &self,
        tenant: &Tenant,
        app: &Application,
        subject: &Map<String, Value>,
    ) -> Result<String, OAuthError> {
        let person = self
            .person(tenant, subject)
            .await?
            .ok_or_else(|| OAuthError::invalid_request("the subject token's person is unknown"))?;
        if app.first_party {
            return Ok(person.id.as_str().to_owned());
        }
        let mut tx = self.ctx.store.read().await?;
        let consent = tx.consent(&tenant.id, &person.id, &app.id).await?;
        tx.finish().await?;
        consent.map(|c| c.subject).ok_or_else(|| {
            OAuthError::invalid_request(
                "the person has not authorized this client: a third-party client acts only for people who consented to it",
            )
        })
    }

    /// The agent and its unspent challenge, from an agent's assertion presented as
    /// `actor_token` (`[challenge]` must be on: that is where challenges come from).
    async fn asserted_actor(
        &self,
        tenant: &Tenant,
        issuer: &str,
        assertion: &str,
    ) -> Result<(Agent, crate::agent_challenge::Opened), OAuthError> {
        if !self.settings.agent_assertions {
            return Err(OAuthError::invalid_request(
                "agent assertions need challenge-response ([challenge].enabled) on this deployment",
            ));
        }
        self.assertion_actor(tenant, issuer, assertion)
            .await
            .map_err(as_exchange_refusal)
    }

    /// The agent `sub` of `tenant` when it is active and `app` owns it.
    async fn owned_agent(
        &self,
        tenant: &Tenant,
        app: &Application,
        sub: &str,
    ) -> Result<Option<Agent>, OAuthError> {
        let Ok(id) = AgentId::parse(sub) else {
            return Ok(None);
        };
        let mut tx = self.ctx.store.read().await?;
        let agent = tx.agent(&tenant.id, &id).await?;
        tx.finish().await?;
        Ok(agent.filter(|a| a.is_active() && owned_by(a, app)))
    }

    /// What `agent` may carry for the person of `subject` at `audience` on a live delegation
    /// from them: `scope` (already within the subject token, or what they hold at another API)
    /// ∩ the delegation's permissions there ∩ the agent's allowances, and the delegation. Only
    /// a first-party client's person token (its `sub` the person's id, as the delegation and
    /// introspection know them) at an API resource the agent is allowed; `invalid_request`
    /// when no live delegation covers the request (RFC 8693 §2.2.2).
    #[allow(clippy::too_many_arguments)] // the exchange's parts, each distinct
    async fn on_delegation(
        &self,
        tenant: &Tenant,
        app: &Application,
        agent: &Agent,
        subject: &Map<String, Value>,
        audience: &str,
        scope: &ScopeSet,
        request: &TokenRequest,
    ) -> Result<(ScopeSet, Delegation), OAuthError> {
        if subject_type_of(subject) != SubjectType::Human || !app.first_party {
            return Err(OAuthError::invalid_request(
                "an agent acts for a person, through a first-party client, on the person's delegation",
            ));
        }
        let api = self
            .registered_api(tenant, audience)
            .await?
            .ok_or_else(|| {
                OAuthError::invalid_target("an agent acts at an API resource of this tenant")
            })?;
        if !agent.allowed_resources.contains(&api.identifier) {
            return Err(OAuthError::invalid_target(
                "the target is not one this agent may obtain tokens for",
            ));
        }
        let person = self
            .person(tenant, subject)
            .await?
            .ok_or_else(|| OAuthError::invalid_request("the subject token's person is unknown"))?;
        let asked = request.scope().map(|_| scope);
        let now = self.ctx.clock.now();
        let (granted, delegation) = self
            .agents()
            .delegated(
                tenant,
                agent,
                &person.id,
                &api,
                asked,
                super::agent::Using::Standing,
                now,
            )
            .await
            .map_err(as_exchange_refusal)?;
        let within = ScopeSet::from_scopes(
            granted
                .iter()
                .filter(|s| scope.contains(s.as_str()))
                .cloned(),
        );
        if within.is_empty() {
            return Err(OAuthError::invalid_scope(
                "the delegation and the subject token have no permission in common there",
            ));
        }
        Ok((within, delegation))
    }

    /// The API resource of `tenant` whose identifier is `target`, if any.
    async fn registered_api(
        &self,
        tenant: &Tenant,
        target: &str,
    ) -> Result<Option<ApiResource>, OAuthError> {
        let mut tx = self.ctx.store.read().await?;
        let api = tx.api_resource_by_identifier(&tenant.id, target).await?;
        tx.finish().await?;
        Ok(api)
    }

    /// The permissions of `api` the subject of `subject` holds now: a person's through their
    /// tenant roles and, in the token's organization, their roles there; an application's
    /// through its roles; nothing for anyone else.
    async fn held_at(
        &self,
        tenant: &Tenant,
        subject: &Map<String, Value>,
        api: &ApiResource,
    ) -> Result<BTreeSet<PermissionName>, OAuthError> {
        let person = match subject_type_of(subject) {
            SubjectType::Human => self.person(tenant, subject).await?,
            _ => None,
        };
        let organization = subject
            .get("org_id")
            .and_then(Value::as_str)
            .and_then(|o| OrganizationId::parse(o).ok());
        let mut tx = self.ctx.store.read().await?;
        let held = match (subject_type_of(subject), person) {
            (SubjectType::Human, Some(person)) => {
                crate::resources::person_permissions(
                    tx.as_mut(),
                    &tenant.id,
                    &person.id,
                    organization.as_ref(),
                    &api.id,
                )
                .await?
            }
            (SubjectType::System, _) => match ClientId::parse(claim(subject, "sub")) {
                Ok(client) => {
                    crate::resources::application_permissions(
                        tx.as_mut(),
                        &tenant.id,
                        &client,
                        &api.id,
                    )
                    .await?
                }
                Err(_) => BTreeSet::new(),
            },
            _ => BTreeSet::new(),
        };
        tx.finish().await?;
        Ok(held)
    }
}

/// Whether `app` owns `agent`.
fn owned_by(agent: &Agent, app: &Application) -> bool {
    agent.owner == AgentOwner::Application(app.id.clone())
}

/// The agent grant's `invalid_grant` refusals, said the token-exchange way: a presented token
/// (or what it rests on) is not acceptable, `invalid_request` (RFC 8693 §2.2.2).
fn as_exchange_refusal(e: OAuthError) -> OAuthError {
    match e.code() {
        ErrorCode::InvalidGrant => OAuthError::invalid_request(e.description().to_owned()),
        _ => e,
    }
}

fn claim<'c>(claims: &'c Map<String, Value>, name: &str) -> &'c str {
    claims.get(name).and_then(Value::as_str).unwrap_or_default()
}

fn subject_type_of(claims: &Map<String, Value>) -> SubjectType {
    match claim(claims, "subject_type") {
        "human" => SubjectType::Human,
        "agent" => SubjectType::Agent,
        "anonymous" => SubjectType::Anonymous,
        _ => SubjectType::System,
    }
}
