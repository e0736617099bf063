//! Port of registered agents. Every call takes the tenant, so another tenant's agent reads as
//! absent and no write reaches it. The owner is not a foreign key (a person or an application,
//! one column): the use case checks that it exists in the tenant before it stores the agent.
//! Agents are never deleted while their tenant lives: revocation is a status, so the audit log
//! and the `sub` of tokens already issued keep naming something.

use crate::{Order, StoreError, UpdateOutcome};
use async_trait::async_trait;
use svc_domain::{Agent, AgentId, AgentOwner, TenantId};
use time::OffsetDateTime;

/// Reads of agents.
#[async_trait]
pub trait AgentReads {
    /// The agent `id` of `tenant`, in any status.
    async fn agent(&mut self, tenant: &TenantId, id: &AgentId)
    -> Result<Option<Agent>, StoreError>;

    /// Up to `limit` agents of `tenant` in id `order`, past the cursor `after`.
    async fn list_agents(
        &mut self,
        tenant: &TenantId,
        after: Option<&AgentId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<Agent>, StoreError>;

    /// Up to `limit` agents of `tenant` owned by `owner`, in any status, in id order.
    async fn agents_owned_by(
        &mut self,
        tenant: &TenantId,
        owner: &AgentOwner,
        limit: u32,
    ) -> Result<Vec<Agent>, StoreError>;

    /// How many agents `tenant` has registered, revoked ones included (the quota counts them).
    async fn count_agents(&mut self, tenant: &TenantId) -> Result<u64, StoreError>;
}

/// Writes of agents.
#[async_trait]
pub trait AgentWrites {
    /// Stores a new agent. A tenant that does not exist is [`StoreError::Conflict`] on
    /// `agents_tenant_id_fkey`.
    async fn insert_agent(&mut self, agent: &Agent) -> Result<(), StoreError>;

    /// Replaces everything but the id, tenant, owner and `created_at`, but only while the
    /// stored `updated_at` still equals `read_at` (compare-and-set): [`UpdateOutcome::Stale`]
    /// otherwise, [`StoreError::NotFound`] when absent.
    async fn update_agent_if_unchanged(
        &mut self,
        agent: &Agent,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError>;
}
