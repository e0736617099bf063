//! Delegations on the management API (issue 19 item 2): the grants people gave agents on the
//! hosted consent page, as administrators see them — a person's list (optionally to one agent),
//! one delegation, and revocation, audited (`delegation.revoked`) and announced
//! (`admin.delegation.revoked`) in the transaction that makes it. People grant; administrators
//! never create a delegation in someone's name.

use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta, events};
use serde::Serialize;
use svc_domain::{AgentId, Delegation, DelegationId, EventType, TenantId, UserId};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// A delegation as the management API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "dlg_01jd3k2m4n5p6q7r8s9t0v1w2x", "user_id": "usr_01jd2p6r8t0v2x4z6b8d0f2h4k",
    "agent_id": "agt_01jd3k2m4n5p6q7r8s9t0v1w2x", "scopes": ["bookings:read"],
    "resources": ["https://api.example.com/bookings"], "live": true,
    "per_use_approval": false, "expires_at": "2026-12-25T10:00:00Z", "created_at": "2026-11-25T10:00:00Z",
    "revoked_at": null
}))]
pub struct DelegationView {
    /// Its id (`dlg_…`), named in `act.delegation_id` of the tokens it gives.
    pub id: String,
    /// The person who granted it.
    pub user_id: String,
    /// The agent it lets act for them.
    pub agent_id: String,
    /// The permissions it grants, sorted.
    pub scopes: Vec<String>,
    /// The APIs it grants them at.
    pub resources: Vec<String>,
    /// Whether the agent may act on it now (not revoked, not expired).
    pub live: bool,
    /// The RAR details (RFC 9396) the person approved, as the agent asked for them; absent
    /// without.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub authorization_details: Option<serde_json::Value>,
    /// Whether the person approves each use the agent makes of it (through the CIBA approval
    /// page or API): the agent then starts a backchannel request for each token.
    pub per_use_approval: bool,
    /// When it ends by itself.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub expires_at: OffsetDateTime,
    /// When the person granted it.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// When it was revoked; `null` unless it was.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub revoked_at: Option<OffsetDateTime>,
}

impl DelegationView {
    /// `delegation` as of `now`.
    pub fn of(delegation: &Delegation, now: OffsetDateTime) -> Self {
        Self {
            id: delegation.id.to_string(),
            user_id: delegation.user_id.to_string(),
            agent_id: delegation.agent_id.to_string(),
            scopes: delegation
                .scopes
                .iter()
                .map(|s| s.as_str().to_owned())
                .collect(),
            resources: delegation.resources.clone(),
            live: delegation.is_live(now),
            per_use_approval: delegation.per_use_approval,
            authorization_details: delegation
                .authorization_details
                .as_ref()
                .map(|d| d.to_value()),
            expires_at: delegation.expires_at,
            created_at: delegation.created_at,
            revoked_at: delegation.revoked_at,
        }
    }
}

/// The delegations of `tenant` newest first (at most `svc_store::MAX_DELEGATIONS_READ`): those
/// the person `user` granted (only those to `agent` when given too), or every person's to
/// `agent`.
///
/// Errors: [`ManageError::Invalid`] when an id is malformed or neither is given.
pub async fn list(
    ctx: &ManageContext,
    tenant: &TenantId,
    user: Option<&str>,
    agent: Option<&str>,
) -> Result<Vec<DelegationView>, ManageError> {
    let user = user
        .map(|u| {
            UserId::parse(u)
                .map_err(|_| ManageError::invalid("user_id", "not a person's id (usr_…)"))
        })
        .transpose()?;
    let agent = agent
        .map(|a| {
            AgentId::parse(a)
                .map_err(|_| ManageError::invalid("agent_id", "not an agent's id (agt_…)"))
        })
        .transpose()?;
    let now = ctx.now();
    let mut tx = ctx.store.read().await?;
    let rows = match (&user, &agent) {
        (Some(user), _) => tx.delegations_of_user(tenant, user, agent.as_ref()).await?,
        (None, Some(agent)) => tx.delegations_of_agent(tenant, agent).await?,
        (None, None) => {
            return Err(ManageError::invalid(
                "user_id",
                "give user_id, agent_id or both",
            ));
        }
    };
    tx.finish().await?;
    Ok(rows.iter().map(|d| DelegationView::of(d, now)).collect())
}

fn delegation_id(raw: &str) -> Result<DelegationId, ManageError> {
    DelegationId::parse(raw).map_err(|_| ManageError::NotFound)
}

/// The delegation `id` of `tenant`, revoked or expired included.
///
/// Errors: [`ManageError::NotFound`] when absent, another tenant's or malformed.
pub async fn get(
    ctx: &ManageContext,
    tenant: &TenantId,
    id: &str,
) -> Result<DelegationView, ManageError> {
    let id = delegation_id(id)?;
    let mut tx = ctx.store.read().await?;
    let found = tx
        .delegation(tenant, &id)
        .await?
        .ok_or(ManageError::NotFound)?;
    tx.finish().await?;
    Ok(DelegationView::of(&found, ctx.now()))
}

/// Revokes the delegation `id` of `tenant`: the agent can no longer act on it, and tokens
/// issued on it are inactive at introspection at once. Audited as `delegation.revoked`,
/// announced as `admin.delegation.revoked` the first time only; revoking again succeeds and
/// changes nothing.
///
/// Errors: [`ManageError::NotFound`] when absent, another tenant's or malformed.
pub async fn revoke(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &str,
) -> Result<(), ManageError> {
    let id = delegation_id(id)?;
    let mut tx = ctx.store.write().await?;
    let found = tx
        .delegation(tenant, &id)
        .await?
        .ok_or(ManageError::NotFound)?;
    if !tx
        .revoke_delegation(tenant, &found.user_id, &id, ctx.now())
        .await?
    {
        return Ok(());
    }
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::DELEGATION_REVOKED,
        Some(id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    events::record(
        tx.as_mut(),
        ctx,
        tenant,
        EventType::AdminDelegationRevoked,
        found.revoked_event(actor.as_audit_string()),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
