//! The agent use cases: register, list, read, change, revoke.

use super::input::{
    AgentPatch, NewAgent, check_agent_jwks, check_metadata, check_name, check_owner,
    check_resources, check_scopes, check_status,
};
use super::{AgentView, MAX_AGENTS_PER_TENANT};
use crate::audit::{self, action};
use crate::page::{clamp_limit, split_page};
use crate::revision::next_update_time;
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta, events};
use svc_domain::{
    Agent, AgentId, AgentOwner, AgentStatus, EventData, EventType, ScopeSet, TenantId,
};
use svc_store::{Order, StoreError, UpdateOutcome, WriteTx};

/// Refuses an owner that is not a person who can sign in, or an application, of `tenant`.
async fn check_owner_exists(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    owner: &AgentOwner,
) -> Result<(), ManageError> {
    let exists = match owner {
        AgentOwner::User(id) => tx.user(tenant, id).await?.is_some_and(|u| u.can_sign_in()),
        AgentOwner::Application(id) => tx.application(tenant, id).await?.is_some(),
    };
    if exists {
        Ok(())
    } else {
        Err(ManageError::invalid(
            "owner",
            "no active person or application of this tenant has this id",
        ))
    }
}

/// Appends the audit entry and the `admin.agent.*` event of a change to `agent`.
async fn record_change(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    agent: &Agent,
    event_type: EventType,
) -> Result<(), ManageError> {
    let verb = match event_type {
        EventType::AdminAgentRegistered => action::AGENT_REGISTERED,
        EventType::AdminAgentRevoked => action::AGENT_REVOKED,
        _ => action::AGENT_UPDATED,
    };
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(&agent.tenant_id),
        verb,
        Some(agent.id.as_str()),
    );
    audit::record(tx, &entry).await?;
    let data = EventData::Agent {
        agent_id: agent.id.clone(),
        name: agent.name.clone(),
        owner: agent.owner.to_string(),
        status: agent.status.as_str().to_owned(),
        allowed_scopes: agent
            .allowed_scopes
            .iter()
            .map(|s| s.as_str().to_owned())
            .collect(),
        actor: actor.as_audit_string(),
    };
    events::record(tx, ctx, &agent.tenant_id, event_type, data).await
}

/// Writes `agent` over the revision `read`.
async fn save(
    tx: &mut dyn WriteTx,
    agent: &Agent,
    read: time::OffsetDateTime,
) -> Result<(), ManageError> {
    match tx.update_agent_if_unchanged(agent, read).await {
        Ok(UpdateOutcome::Applied) => Ok(()),
        Ok(UpdateOutcome::Stale) => Err(ManageError::PreconditionFailed),
        Err(StoreError::NotFound) => Err(ManageError::NotFound),
        Err(e) => Err(e.into()),
    }
}

fn agent_id(raw: &str) -> Result<AgentId, ManageError> {
    AgentId::parse(raw).map_err(|_| ManageError::NotFound)
}

/// Rule: an agent's RAR detail types follow the applications' rules (RFC 9396 §2), and exist
/// only where the deployment takes `authorization_details`.
fn detail_types(
    ctx: &ManageContext,
    types: &[crate::applications::DetailTypeInput],
) -> Result<Vec<svc_domain::DetailType>, ManageError> {
    let parsed = crate::applications::rules::check_detail_types(types)?;
    crate::applications::rules::check_details_offered(&parsed, ctx.authorization_details)?;
    Ok(parsed)
}

/// Registers the agent `input` describes in `tenant`, active, audited as `agent.registered`
/// and announced as `admin.agent.registered`.
///
/// Errors: [`ManageError::Invalid`] naming the field; [`ManageError::Conflict`] when the tenant
/// already registered [`MAX_AGENTS_PER_TENANT`] agents; [`ManageError::NotFound`] when the
/// tenant does not exist.
pub async fn register(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    input: NewAgent,
) -> Result<Agent, ManageError> {
    let name = check_name(&input.name)?;
    let owner = check_owner(&input.owner)?;
    let jwks = check_agent_jwks(&input.jwks)?;
    let allowed_scopes = check_scopes(input.allowed_scopes.as_deref().unwrap_or_default())?;
    let allowed_resources =
        check_resources(input.allowed_resources.as_deref().unwrap_or_default())?;
    let authorization_details_types = detail_types(
        ctx,
        input
            .authorization_details_types
            .as_deref()
            .unwrap_or_default(),
    )?;
    let metadata = match &input.metadata {
        Some(raw) => check_metadata(raw)?,
        None => serde_json::Map::new(),
    };
    let now = ctx.now();
    let mut tx = ctx.store.write().await?;
    if tx.tenant_by_id(tenant).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    check_owner_exists(tx.as_mut(), tenant, &owner).await?;
    if tx.count_agents(tenant).await? >= MAX_AGENTS_PER_TENANT {
        return Err(ManageError::Conflict(format!(
            "this tenant already registered {MAX_AGENTS_PER_TENANT} agents, the most one \
             tenant may"
        )));
    }
    let agent = Agent {
        id: AgentId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        tenant_id: tenant.clone(),
        name,
        owner,
        jwks,
        allowed_scopes,
        allowed_resources,
        authorization_details_types,
        metadata,
        status: AgentStatus::Active,
        created_at: now,
        updated_at: now,
        revoked_at: None,
    };
    tx.insert_agent(&agent).await?;
    record_change(
        tx.as_mut(),
        ctx,
        actor,
        meta,
        &agent,
        EventType::AdminAgentRegistered,
    )
    .await?;
    tx.commit().await?;
    Ok(agent)
}

/// Up to `limit` (default 50, clamped to 1..=200) agents of `tenant` in id `order` (default
/// oldest first) past `after`, every status included, and the cursor of the next page.
pub async fn list(
    ctx: &ManageContext,
    tenant: &TenantId,
    after: Option<&AgentId>,
    order: Option<Order>,
    limit: Option<u32>,
) -> Result<(Vec<AgentView>, Option<AgentId>), ManageError> {
    let limit = clamp_limit(limit);
    let mut tx = ctx.store.read().await?;
    let rows = tx
        .list_agents(tenant, after, order.unwrap_or(Order::Ascending), limit + 1)
        .await?;
    tx.finish().await?;
    let (rows, next) = split_page(rows, limit, |a| a.id.clone());
    Ok((rows.iter().map(AgentView::from).collect(), next))
}

/// The agent `id` of `tenant`, in any status.
///
/// Errors: [`ManageError::NotFound`] when absent, another tenant's or malformed.
pub async fn get(ctx: &ManageContext, tenant: &TenantId, id: &str) -> Result<Agent, ManageError> {
    let id = agent_id(id)?;
    let mut tx = ctx.store.read().await?;
    let agent = tx.agent(tenant, &id).await?.ok_or(ManageError::NotFound)?;
    tx.finish().await?;
    Ok(agent)
}

/// Applies `patch` to the agent `id` of `tenant`: audited as `agent.updated`, announced as
/// `admin.agent.updated`. A patch that changes nothing writes nothing.
///
/// Errors: [`ManageError::Invalid`] naming the field; [`ManageError::NotFound`];
/// [`ManageError::Conflict`] when the agent is revoked (final);
/// [`ManageError::PreconditionFailed`] when `precondition` does not hold or the agent changed
/// meanwhile.
#[allow(clippy::too_many_arguments)] // the request's facts, each distinct
pub async fn update(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &str,
    patch: AgentPatch,
    precondition: &Precondition,
) -> Result<Agent, ManageError> {
    let id = agent_id(id)?;
    let name = patch.name.as_deref().map(check_name).transpose()?;
    let jwks = patch.jwks.as_ref().map(check_agent_jwks).transpose()?;
    let scopes: Option<ScopeSet> = patch
        .allowed_scopes
        .as_deref()
        .map(check_scopes)
        .transpose()?;
    let resources = patch
        .allowed_resources
        .as_deref()
        .map(check_resources)
        .transpose()?;
    let detail_types = patch
        .authorization_details_types
        .as_deref()
        .map(|types| detail_types(ctx, types))
        .transpose()?;
    let metadata = patch.metadata.as_ref().map(check_metadata).transpose()?;
    let status = patch.status.as_deref().map(check_status).transpose()?;

    let mut tx = ctx.store.write().await?;
    let before = tx.agent(tenant, &id).await?.ok_or(ManageError::NotFound)?;
    precondition.check(before.updated_at)?;
    if before.status == AgentStatus::Revoked {
        return Err(ManageError::Conflict(
            "this agent is revoked, for good: register a new one".to_owned(),
        ));
    }
    let mut agent = before.clone();
    if let Some(name) = name {
        agent.name = name;
    }
    if let Some(jwks) = jwks {
        agent.jwks = jwks;
    }
    if let Some(scopes) = scopes {
        agent.allowed_scopes = scopes;
    }
    if let Some(resources) = resources {
        agent.allowed_resources = resources;
    }
    if let Some(types) = detail_types {
        agent.authorization_details_types = types;
    }
    if let Some(metadata) = metadata {
        agent.metadata = metadata;
    }
    if let Some(status) = status {
        agent.status = status;
    }
    if agent == before {
        return Ok(before);
    }
    agent.updated_at = next_update_time(before.updated_at, ctx.now());
    save(tx.as_mut(), &agent, before.updated_at).await?;
    record_change(
        tx.as_mut(),
        ctx,
        actor,
        meta,
        &agent,
        EventType::AdminAgentUpdated,
    )
    .await?;
    tx.commit().await?;
    Ok(agent)
}

/// Revokes the agent `id` of `tenant`, for good: it can never be changed or reactivated.
/// Revoking a revoked agent changes nothing and succeeds (idempotent); audited as
/// `agent.revoked` and announced as `admin.agent.revoked` the first time only.
///
/// Errors: [`ManageError::NotFound`] when absent, another tenant's or malformed;
/// [`ManageError::PreconditionFailed`] when `precondition` does not hold.
pub async fn revoke(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &str,
    precondition: &Precondition,
) -> Result<(), ManageError> {
    let id = agent_id(id)?;
    let mut tx = ctx.store.write().await?;
    let before = tx.agent(tenant, &id).await?.ok_or(ManageError::NotFound)?;
    if before.status == AgentStatus::Revoked {
        return Ok(());
    }
    precondition.check(before.updated_at)?;
    let now = next_update_time(before.updated_at, ctx.now());
    let agent = Agent {
        status: AgentStatus::Revoked,
        revoked_at: Some(now),
        updated_at: now,
        ..before.clone()
    };
    save(tx.as_mut(), &agent, before.updated_at).await?;
    record_change(
        tx.as_mut(),
        ctx,
        actor,
        meta,
        &agent,
        EventType::AdminAgentRevoked,
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
