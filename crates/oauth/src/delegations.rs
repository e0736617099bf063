//! Delegations (issue 19 item 2): what the hosted consent page (`/auth/delegate`) and the
//! account page ask of the store, free of HTTP types. A person lets a registered agent act for
//! them within bounds they see before approving; the agent then obtains tokens for them with
//! the agent grant (`crate::token::agent`, `sub` = the person), each carrying the agent in `act`.
//!
//! A request names the agent (`agent_id`), the APIs (`resource`, one or more) and the
//! permissions (`scope`), and how many days it lasts (`expires_in_days`, default
//! [`DEFAULT_LIFETIME_DAYS`], at most `MAX_DELEGATION_LIFETIME_DAYS`). Checks, in order, each
//! refusal shown to the person in words ([`Refused`]):
//! 1. the parameters are there once each (`resource` may repeat), well formed;
//! 2. the agent exists in this tenant and is active;
//! 3. each resource is one the agent may obtain tokens for, an API the tenant registered, and
//!    never the management API;
//! 4. each permission is within the agent's `allowed_scopes` and defined by one of those APIs;
//! 5. `approval`, when sent, is `each_use` (the person approves every use the agent makes,
//!    through the backchannel approval: `crate::token::agent_use`) or `standing`; `each_use`
//!    only where that approval is served (`[ciba]` and `[challenge]`). The agent's `each_use`
//!    binds the delegation; without it the person may still choose it on the page;
//! 6. `authorization_details`, when sent (RFC 9396, only while `[oidc].authorization_details`),
//!    are of the agent's registered detail types and match their schemas; the page shows them
//!    in words and the delegation keeps them: the agent's tokens for the person carry them, or
//!    fewer (`crate::details` rule 2), never more.
//!
//! Nothing here checks what the person holds: a delegation never gives more than the person
//! has, because the agent grant intersects it with the person's permissions at every use.

use crate::authorize::ConsentDetail;
use crate::authorize::consent_details::describe;
use crate::authorize::truncate_micros;
use crate::context::ProtocolContext;
use crate::error::OAuthError;
use svc_domain::{
    Agent, AgentId, ApiResource, AuditEntry, AuditEntryId, AuditOutcome, AuthorizationDetails,
    Delegation, DelegationId, MAX_DELEGATION_LIFETIME_DAYS, ScopeSet, Tenant, UserId,
};
use time::{Duration, OffsetDateTime};

/// Days a delegation lasts when the request does not say.
pub const DEFAULT_LIFETIME_DAYS: i64 = 30;

/// Most live delegations one person may hold: beyond it the consent page refuses.
pub const MAX_LIVE_PER_PERSON: usize = 50;

/// Why a delegation request cannot be shown or granted, in the person's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// A parameter is missing, repeated or malformed (named).
    Malformed(&'static str),
    /// No such active agent.
    Agent,
    /// A resource the agent may not use, or no API of the tenant (the identifier).
    Resource(String),
    /// A permission the agent may not hold at those APIs (the name).
    Scope(String),
    /// The person holds too many live delegations already.
    TooMany,
    /// Approval of each use asked where it is not served.
    PerUseUnavailable,
    /// RAR details asked where they are not taken, or not valid for the agent (why).
    Details(String),
}

impl Refused {
    /// The explanation shown on the page.
    pub fn describe(&self) -> String {
        match self {
            Self::Malformed(what) => format!("The request is malformed: {what}."),
            Self::Agent => "This agent does not exist or may not act now.".into(),
            Self::Resource(r) => format!("The agent may not act at {r}."),
            Self::Scope(s) => format!("The agent may not be given the permission {s}."),
            Self::TooMany => format!(
                "You already have {MAX_LIVE_PER_PERSON} delegations; revoke one on your account page first."
            ),
            Self::PerUseUnavailable => {
                "The agent asks you to approve each use, which this service does not offer.".into()
            }
            Self::Details(why) => format!("The details the agent asks for are not valid: {why}."),
        }
    }
}

/// A checked request, ready to be shown and granted.
#[derive(Debug, Clone)]
pub struct DelegationRequest {
    /// The agent that would act.
    pub agent: Agent,
    /// The APIs, each with the permissions of the request it defines.
    pub apis: Vec<(ApiResource, Vec<svc_domain::Permission>)>,
    /// Every permission asked.
    pub scopes: ScopeSet,
    /// Days it would last.
    pub lifetime_days: i64,
    /// When it would end, were it granted now.
    pub expires_at: OffsetDateTime,
    /// Whether the person would approve each use (`approval=each_use`).
    pub per_use_approval: bool,
    /// The RAR details asked for (RFC 9396), of the agent's types.
    pub authorization_details: Option<AuthorizationDetails>,
    /// The same in words, for the page (agent- and tenant-written text: render it escaped).
    pub details: Vec<ConsentDetail>,
}

impl DelegationRequest {
    /// The form pairs that ask for this request again (the consent form's hidden fields).
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut pairs = vec![("agent_id", self.agent.id.as_str().to_owned())];
        for (api, _) in &self.apis {
            pairs.push(("resource", api.identifier.clone()));
        }
        pairs.push(("scope", self.scopes.to_string()));
        pairs.push(("expires_in_days", self.lifetime_days.to_string()));
        if self.per_use_approval {
            pairs.push(("approval", APPROVE_EACH_USE.to_owned()));
        }
        if let Some(details) = &self.authorization_details {
            pairs.push(("authorization_details", details.to_json()));
        }
        pairs
    }
}

/// A delegation with the name of its agent, for the account page.
#[derive(Debug, Clone)]
pub struct ListedDelegation {
    /// The delegation.
    pub delegation: Delegation,
    /// Its agent's name (empty when the agent is gone).
    pub agent_name: String,
    /// Whether the agent may still act on it (not revoked, not expired).
    pub live: bool,
}

/// `approval` of a request whose person approves each use.
pub const APPROVE_EACH_USE: &str = "each_use";

/// Delegations for every tenant.
pub struct Delegations {
    ctx: ProtocolContext,
    per_use_approval: bool,
}

fn one<'f>(pairs: &'f [(String, String)], name: &'static str) -> Result<Option<&'f str>, Refused> {
    let mut found = pairs
        .iter()
        .filter(|(k, _)| k == name)
        .map(|(_, v)| v.as_str());
    match (found.next(), found.next()) {
        (_, Some(_)) => Err(Refused::Malformed(name)),
        (value, None) => Ok(value.filter(|v| !v.is_empty())),
    }
}

impl Delegations {
    /// Delegations over `ctx`.
    pub fn new(ctx: ProtocolContext) -> Self {
        Self {
            ctx,
            per_use_approval: false,
        }
    }

    /// The same, offering approval of each use when `served` (`[ciba]` and `[challenge]`).
    pub fn with_per_use_approval(mut self, served: bool) -> Self {
        self.per_use_approval = served;
        self
    }

    /// Whether a person may choose to approve each use.
    pub fn offers_per_use_approval(&self) -> bool {
        self.per_use_approval
    }

    /// Checks 1–4 for the request `pairs` (a query or a form) in `tenant` of `issuer`.
    pub async fn request(
        &self,
        tenant: &Tenant,
        issuer: &str,
        pairs: &[(String, String)],
    ) -> Result<Result<DelegationRequest, Refused>, OAuthError> {
        // 1.
        let parsed = (|| {
            let agent = one(pairs, "agent_id")?
                .and_then(|a| AgentId::parse(a).ok())
                .ok_or(Refused::Malformed("agent_id"))?;
            let scopes = one(pairs, "scope")?
                .and_then(|s| ScopeSet::parse(s).ok())
                .filter(|s| !s.is_empty())
                .ok_or(Refused::Malformed("scope"))?;
            let lifetime_days = match one(pairs, "expires_in_days")? {
                None => DEFAULT_LIFETIME_DAYS,
                Some(d) => d
                    .parse::<i64>()
                    .ok()
                    .filter(|d| (1..=MAX_DELEGATION_LIFETIME_DAYS).contains(d))
                    .ok_or(Refused::Malformed("expires_in_days"))?,
            };
            let mut resources: Vec<&str> = pairs
                .iter()
                .filter(|(k, _)| k == "resource")
                .map(|(_, v)| v.as_str())
                .collect();
            resources.sort_unstable();
            resources.dedup();
            if resources.is_empty() || resources.len() > 20 {
                return Err(Refused::Malformed("resource"));
            }
            // 5.
            let per_use = match one(pairs, "approval")? {
                None | Some("standing") => false,
                Some(APPROVE_EACH_USE) if self.per_use_approval => true,
                Some(APPROVE_EACH_USE) => return Err(Refused::PerUseUnavailable),
                Some(_) => return Err(Refused::Malformed("approval")),
            };
            // 6, first half: the text, read once; checked against the agent's types below.
            let details = one(pairs, "authorization_details")?;
            if details.is_some() && !self.ctx.authorization_details() {
                return Err(Refused::Details(
                    "rich authorization requests are switched off on this service".into(),
                ));
            }
            Ok((agent, scopes, lifetime_days, resources, per_use, details))
        })();
        let (agent_id, scopes, lifetime_days, resources, per_use_approval, raw_details) =
            match parsed {
                Ok(p) => p,
                Err(refused) => return Ok(Err(refused)),
            };
        let mut tx = self.ctx.store.read().await?;
        // 2.
        let agent = match tx.agent(&tenant.id, &agent_id).await? {
            Some(agent) if agent.is_active() => agent,
            _ => {
                tx.finish().await?;
                return Ok(Err(Refused::Agent));
            }
        };
        // 3.
        let management = crate::discovery::management_api_resource(issuer);
        let mut apis = Vec::new();
        for resource in resources {
            let allowed = agent.allowed_resources.iter().any(|r| r == resource);
            let api = match tx.api_resource_by_identifier(&tenant.id, resource).await? {
                Some(api) if allowed && resource != management => api,
                _ => {
                    tx.finish().await?;
                    return Ok(Err(Refused::Resource(resource.to_owned())));
                }
            };
            apis.push(api);
        }
        tx.finish().await?;
        // 4.
        for scope in scopes.iter() {
            let defined = apis.iter().any(|a| {
                a.permissions
                    .iter()
                    .any(|p| p.name.as_str() == scope.as_str())
            });
            if !defined || !agent.allowed_scopes.contains(scope.as_str()) {
                return Ok(Err(Refused::Scope(scope.as_str().to_owned())));
            }
        }
        // 6.
        let authorization_details = match raw_details {
            None => None,
            Some(raw) => match AuthorizationDetails::parse(raw, &agent.authorization_details_types)
            {
                Ok(details) => Some(details),
                Err(e) => return Ok(Err(Refused::Details(e.0))),
            },
        };
        let details = authorization_details
            .as_ref()
            .map(|d| describe(d, &agent.authorization_details_types))
            .unwrap_or_default();
        let apis = apis
            .into_iter()
            .map(|api| {
                let asked = api
                    .permissions
                    .iter()
                    .filter(|p| scopes.contains(p.name.as_str()))
                    .cloned()
                    .collect();
                (api, asked)
            })
            .collect();
        Ok(Ok(DelegationRequest {
            agent,
            apis,
            scopes,
            lifetime_days,
            expires_at: self.ctx.clock.now() + Duration::days(lifetime_days),
            per_use_approval,
            authorization_details,
            details,
        }))
    }

    /// Grants `request` as `user` of `tenant`: the stored delegation, or [`Refused::TooMany`].
    pub async fn grant(
        &self,
        tenant: &Tenant,
        user: &UserId,
        request: &DelegationRequest,
    ) -> Result<Result<Delegation, Refused>, OAuthError> {
        let now = truncate_micros(self.ctx.clock.now());
        let mut tx = self.ctx.store.write().await?;
        let live = tx
            .delegations_of_user(&tenant.id, user, None)
            .await?
            .into_iter()
            .filter(|d| d.is_live(now))
            .count();
        if live >= MAX_LIVE_PER_PERSON {
            return Ok(Err(Refused::TooMany));
        }
        let delegation = Delegation {
            id: DelegationId::generate(self.ctx.clock.as_ref(), self.ctx.rng.as_ref()),
            tenant_id: tenant.id.clone(),
            user_id: user.clone(),
            agent_id: request.agent.id.clone(),
            scopes: request.scopes.clone(),
            resources: request
                .apis
                .iter()
                .map(|(api, _)| api.identifier.clone())
                .collect(),
            expires_at: now + Duration::days(request.lifetime_days),
            per_use_approval: request.per_use_approval,
            authorization_details: request.authorization_details.clone(),
            created_at: now,
            revoked_at: None,
        };
        tx.insert_delegation(&delegation).await?;
        tx.insert_audit(&self.audit(tenant, user, "delegation.granted", &delegation.id, now))
            .await?;
        tx.commit().await?;
        tracing::info!(tenant = %tenant.id, user = %user, agent = %delegation.agent_id,
            delegation = %delegation.id, "delegation granted");
        Ok(Ok(delegation))
    }

    /// The delegations `user` granted, newest first, with their agents' names.
    pub async fn of_person(
        &self,
        tenant: &Tenant,
        user: &UserId,
    ) -> Result<Vec<ListedDelegation>, OAuthError> {
        let now = self.ctx.clock.now();
        let mut tx = self.ctx.store.read().await?;
        let delegations = tx.delegations_of_user(&tenant.id, user, None).await?;
        let mut listed = Vec::with_capacity(delegations.len());
        for delegation in delegations {
            let agent_name = tx
                .agent(&tenant.id, &delegation.agent_id)
                .await?
                .map(|a| a.name)
                .unwrap_or_default();
            listed.push(ListedDelegation {
                live: delegation.is_live(now),
                delegation,
                agent_name,
            });
        }
        tx.finish().await?;
        Ok(listed)
    }

    /// Revokes the delegation `id` of `user`: whether it was theirs and live until now.
    pub async fn revoke(
        &self,
        tenant: &Tenant,
        user: &UserId,
        id: &str,
    ) -> Result<bool, OAuthError> {
        let Ok(id) = DelegationId::parse(id) else {
            return Ok(false);
        };
        let now = truncate_micros(self.ctx.clock.now());
        let mut tx = self.ctx.store.write().await?;
        let Some(found) = tx.delegation(&tenant.id, &id).await? else {
            return Ok(false);
        };
        if !tx.revoke_delegation(&tenant.id, user, &id, now).await? {
            return Ok(false);
        }
        tx.insert_audit(&self.audit(tenant, user, "delegation.revoked", &id, now))
            .await?;
        let event = svc_domain::Event::new(
            self.ctx.clock.as_ref(),
            self.ctx.rng.as_ref(),
            &tenant.id,
            svc_domain::EventType::AdminDelegationRevoked,
            found.revoked_event(format!("user:{user}")),
        );
        tx.insert_event(&event).await?;
        tx.commit().await?;
        tracing::info!(tenant = %tenant.id, user = %user, delegation = %id, "delegation revoked");
        Ok(true)
    }

    fn audit(
        &self,
        tenant: &Tenant,
        user: &UserId,
        action: &str,
        id: &DelegationId,
        at: OffsetDateTime,
    ) -> AuditEntry {
        AuditEntry {
            id: AuditEntryId::generate(self.ctx.clock.as_ref(), self.ctx.rng.as_ref()),
            tenant_id: Some(tenant.id.clone()),
            actor: format!("user:{user}"),
            action: action.to_owned(),
            target: Some(id.as_str().to_owned()),
            outcome: AuditOutcome::Success,
            request_id: None,
            client_ip: None,
            occurred_at: at,
        }
    }
}
