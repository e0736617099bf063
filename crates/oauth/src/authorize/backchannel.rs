//! The person's side of backchannel authentication (OpenID CIBA, poll mode): the requests
//! clients made for them, listed on the hosted approval page, and their decision.
//!
//! Rules:
//! - A person sees and decides only their own pending, unexpired requests (the store's
//!   conditional update is on the person too); anyone else's id, an expired one, one decided
//!   before, or a decoy (which has no person) is the same "gone" answer.
//! - Approval is one transaction: the request moves from pending to approved (once) and an
//!   authorization code bound to it ([`CodeBinding::Backchannel`]) is stored under the
//!   `auth_req_id`'s hash, living as long as the request, carrying the approving session's
//!   authentication (`auth_time`, `acr`, `amr`, `sid`). The scopes are those the person may
//!   hold (management scopes need a role), as for a browser request; access policies and the
//!   person's standing are checked again when the client redeems it. RAR details (RFC 9396)
//!   the request carries are listed in words beside the scopes, and the code carries them:
//!   approving the listed request is approving its details.
//! - "Deny" marks it denied: the client's next poll gets `access_denied`.

use super::consent_details::{ConsentDetail, describe};
use super::request::{AuthorizationRequest, Prompt};
use super::{AuthorizeEndpoint, grant, truncate_micros};
use svc_domain::{
    AgentId, AuthorizationDetails, BackchannelRequest, BackchannelRequestId, BackchannelRequester,
    CodeBinding, DelegatedUse, DelegationId, DeviceStatus, Session, Tenant,
};
use svc_store::StoreError;
use time::OffsetDateTime;

/// One request on the approval page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackchannelPrompt {
    /// Its id, for the decision.
    pub id: BackchannelRequestId,
    /// The client's display name (tenant-written text: render it escaped).
    pub client_name: String,
    /// The scopes asked for.
    pub scopes: Vec<String>,
    /// What the client shows, to compare (client-written text: render it escaped).
    pub binding_message: Option<String>,
    /// The RAR details asked for (RFC 9396), as sent.
    pub authorization_details: Option<AuthorizationDetails>,
    /// The same in words (client- and tenant-written text: render it escaped).
    pub details: Vec<ConsentDetail>,
    /// When it expires.
    pub expires_at: OffsetDateTime,
    /// For an agent asking to act for the person on a delegation they approve use by use:
    /// the agent and the API (`client_name` is then the agent's name).
    pub agent: Option<AgentAsk>,
}

/// What an agent asks to do for the person, on the approval page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentAsk {
    /// The agent.
    pub agent_id: AgentId,
    /// The delegation it would act on.
    pub delegation_id: DelegationId,
    /// The API's identifier.
    pub resource: String,
    /// The API's name (tenant-written text: render it escaped).
    pub resource_name: String,
    /// Each permission asked with the API's description of it, when it has one.
    pub permissions: Vec<(String, Option<String>)>,
}

/// What a decision did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackchannelDecision {
    /// Approved: the client's next poll gets tokens.
    Approved,
    /// Denied: the client's next poll gets `access_denied`.
    Denied,
    /// Not one of the person's pending requests (unknown, another person's, expired, decided).
    Gone,
}

impl AuthorizeEndpoint {
    /// The pending requests of the person of `session`, oldest first.
    pub async fn backchannel_requests(
        &self,
        tenant: &Tenant,
        session: &Session,
    ) -> Result<Vec<BackchannelPrompt>, StoreError> {
        let mut tx = self.store.read().await?;
        let pending = tx
            .pending_backchannel_requests(&tenant.id, &session.user_id, self.clock.now())
            .await?;
        let mut prompts = Vec::with_capacity(pending.len());
        for request in pending {
            if let BackchannelRequester::Agent(using) = &request.requester {
                prompts.push(agent_prompt(tx.as_mut(), tenant, &request, using).await?);
                continue;
            }
            let Some(client) = request.requester.application() else {
                continue;
            };
            let app = tx.application(&tenant.id, client).await?;
            let types = app
                .as_ref()
                .map_or(&[][..], |a| &a.authorization_details_types);
            let details = request
                .authorization_details
                .as_ref()
                .map(|d| describe(d, types))
                .unwrap_or_default();
            let client_name = app.map_or_else(|| client.as_str().to_owned(), |app| app.name);
            prompts.push(BackchannelPrompt {
                id: request.id,
                client_name,
                scopes: request
                    .scope
                    .iter()
                    .map(|s| s.as_str().to_owned())
                    .collect(),
                binding_message: request.binding_message,
                authorization_details: request.authorization_details,
                details,
                expires_at: request.expires_at,
                agent: None,
            });
        }
        tx.finish().await?;
        Ok(prompts)
    }

    /// The person of `session` approves (`allow`) or denies request `id`.
    pub async fn decide_backchannel(
        &self,
        tenant: &Tenant,
        issuer: &str,
        session: &Session,
        id: &BackchannelRequestId,
        allow: bool,
    ) -> Result<BackchannelDecision, StoreError> {
        let now = self.clock.now();
        if !allow {
            let denied = self
                .decide_only(tenant, session, id, DeviceStatus::Denied, now)
                .await?;
            if denied {
                tracing::info!(tenant = %tenant.id, request = %id, "backchannel request denied");
            }
            return Ok(if denied {
                BackchannelDecision::Denied
            } else {
                BackchannelDecision::Gone
            });
        }
        // What is approved is read first (its client and scopes decide the grant); the
        // decision below holds only if it is still pending then.
        let Some(request) = self.pending_of(tenant, session, id, now).await? else {
            return Ok(BackchannelDecision::Gone);
        };
        let Some(client) = request.requester.application() else {
            // An agent's request is its own grant: approving it is the decision alone, and the
            // agent's poll checks the delegation and the person's permissions again.
            let approved = self
                .decide_only(tenant, session, id, DeviceStatus::Approved, now)
                .await?;
            if !approved {
                return Ok(BackchannelDecision::Gone);
            }
            tracing::info!(tenant = %tenant.id, session = %session.id, request = %id,
                "an agent's use of a delegation approved");
            return Ok(BackchannelDecision::Approved);
        };
        let Some(app) = self.application(tenant, client.as_str()).await? else {
            return Ok(BackchannelDecision::Gone);
        };
        let req = as_authorization_request(&request, issuer);
        let Some((scope, resource)) = self
            .granted_scope(tenant, issuer, &app, &req, session, None)
            .await?
        else {
            return Ok(BackchannelDecision::Gone);
        };
        let context = grant::CodeContext {
            organization: None,
            resource,
            scope,
        };
        let now = truncate_micros(now);
        let mut tx = self.store.write().await?;
        let Some(approved) = tx
            .decide_backchannel_request(
                &tenant.id,
                id,
                &session.user_id,
                DeviceStatus::Approved,
                now,
            )
            .await?
        else {
            return Ok(BackchannelDecision::Gone);
        };
        let code = self.new_code(
            tenant,
            &app,
            &req,
            session,
            context,
            (approved.hash.clone(), CodeBinding::Backchannel),
            (now, approved.expires_at),
        );
        tx.insert_code(&code).await?;
        self.join_session(tx.as_mut(), &code, issuer).await?;
        tx.commit().await?;
        tracing::info!(tenant = %tenant.id, client_id = %app.id, session = %session.id,
            request = %id, "backchannel request approved");
        Ok(BackchannelDecision::Approved)
    }

    /// Records the decision alone (a denial, or the approval of an agent's request): whether
    /// the request was the person's and still pending.
    async fn decide_only(
        &self,
        tenant: &Tenant,
        session: &Session,
        id: &BackchannelRequestId,
        decision: DeviceStatus,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let mut tx = self.store.write().await?;
        let decided = tx
            .decide_backchannel_request(&tenant.id, id, &session.user_id, decision, now)
            .await?;
        tx.commit().await?;
        Ok(decided.is_some())
    }

    async fn pending_of(
        &self,
        tenant: &Tenant,
        session: &Session,
        id: &BackchannelRequestId,
        now: OffsetDateTime,
    ) -> Result<Option<BackchannelRequest>, StoreError> {
        let mut tx = self.store.read().await?;
        let pending = tx
            .pending_backchannel_requests(&tenant.id, &session.user_id, now)
            .await?;
        tx.finish().await?;
        Ok(pending.into_iter().find(|r| &r.id == id))
    }
}

/// An agent's request on the approval page: its name, the API and each permission in the API's
/// words. An agent or API deleted since is named by its id.
async fn agent_prompt(
    tx: &mut dyn svc_store::ReadTx,
    tenant: &Tenant,
    request: &BackchannelRequest,
    using: &DelegatedUse,
) -> Result<BackchannelPrompt, StoreError> {
    let agent = tx.agent(&tenant.id, &using.agent_id).await?;
    let api = tx
        .api_resource_by_identifier(&tenant.id, &using.resource)
        .await?;
    let described = |name: &str| {
        api.as_ref().and_then(|a| {
            a.permissions
                .iter()
                .find(|p| p.name.as_str() == name)
                .map(|p| p.description.clone())
                .filter(|d| !d.is_empty())
        })
    };
    let scopes: Vec<String> = request
        .scope
        .iter()
        .map(|s| s.as_str().to_owned())
        .collect();
    let details = match &request.authorization_details {
        Some(d) => describe(
            d,
            agent
                .as_ref()
                .map_or(&[][..], |a| &a.authorization_details_types),
        ),
        None => Vec::new(),
    };
    Ok(BackchannelPrompt {
        id: request.id.clone(),
        client_name: agent.map_or_else(|| using.agent_id.as_str().to_owned(), |a| a.name),
        binding_message: request.binding_message.clone(),
        authorization_details: request.authorization_details.clone(),
        details,
        expires_at: request.expires_at,
        agent: Some(AgentAsk {
            agent_id: using.agent_id.clone(),
            delegation_id: using.delegation_id.clone(),
            resource: using.resource.clone(),
            resource_name: api
                .as_ref()
                .map_or_else(|| using.resource.clone(), |a| a.name.clone()),
            permissions: scopes
                .iter()
                .map(|name| (name.clone(), described(name)))
                .collect(),
        }),
        scopes,
    })
}

/// The request in the authorization endpoint's terms, for the grant's scope rules and the code:
/// no redirect, no PKCE, no nonce (CIBA ID tokens carry none), no `claims` request.
fn as_authorization_request(request: &BackchannelRequest, issuer: &str) -> AuthorizationRequest {
    AuthorizationRequest {
        client_id: request.requester.id().to_owned(),
        redirect_uri: format!("{issuer}{}", crate::backchannel::APPROVAL_PATH),
        scope: request.scope.to_string(),
        state: None,
        nonce: None,
        code_challenge: None,
        prompt: Prompt::default(),
        max_age: None,
        acr_values: None,
        claims: None,
        login_hint: None,
        organization: None,
        resource: None,
        device: None,
        dpop_jkt: None,
        // The approval page showed them ([`BackchannelPrompt::details`]) before this decision.
        authorization_details: request.authorization_details.clone(),
        details_approved: true,
    }
}
