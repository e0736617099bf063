//! Port of delegations (a person's grants to agents). Every call takes the tenant, so another
//! tenant's delegation reads as absent and no write reaches it. Delegations are never deleted
//! while their tenant lives: revocation is a time.

use crate::StoreError;
use async_trait::async_trait;
use svc_domain::{AgentId, Delegation, DelegationId, TenantId, UserId};
use time::OffsetDateTime;

/// Most delegations one read returns: a person grants a handful; the consent page refuses
/// more than this many live ones.
pub const MAX_DELEGATIONS_READ: u32 = 200;

/// Reads of delegations.
#[async_trait]
pub trait DelegationReads {
    /// The delegation `id` of `tenant`, revoked or expired included.
    async fn delegation(
        &mut self,
        tenant: &TenantId,
        id: &DelegationId,
    ) -> Result<Option<Delegation>, StoreError>;

    /// The delegations `user` granted, newest first, at most [`MAX_DELEGATIONS_READ`];
    /// only those to `agent` when given.
    async fn delegations_of_user(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        agent: Option<&AgentId>,
    ) -> Result<Vec<Delegation>, StoreError>;

    /// The delegations granted to `agent` by anyone, newest first, at most
    /// [`MAX_DELEGATIONS_READ`].
    async fn delegations_of_agent(
        &mut self,
        tenant: &TenantId,
        agent: &AgentId,
    ) -> Result<Vec<Delegation>, StoreError>;
}

/// Writes of delegations.
#[async_trait]
pub trait DelegationWrites {
    /// Stores a new delegation. A tenant that does not exist is [`StoreError::Conflict`] on
    /// `delegations_tenant_id_fkey`.
    async fn insert_delegation(&mut self, delegation: &Delegation) -> Result<(), StoreError>;

    /// Revokes the delegation `id` of `tenant` granted by `user` at `at`, unless it already
    /// was: whether this call revoked it (false for another person's, an unknown or an already
    /// revoked one).
    async fn revoke_delegation(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &DelegationId,
        at: OffsetDateTime,
    ) -> Result<bool, StoreError>;
}
