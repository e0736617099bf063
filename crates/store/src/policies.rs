//! Ports of access-control policies (issue 17 item 6): a tenant's named rules on sign-in and
//! token issuance. Every call takes the tenant, so another tenant's policy reads as absent.
//!
//! A tenant holds few policies ([`svc_domain::MAX_POLICIES_PER_TENANT`]) and every sign-in and
//! refresh needs all of them, so they are read whole, in id order, never paged. The name is
//! unique in the tenant (`access_policies_tenant_name_key`); an update is conditional on the
//! revision read (`updated_at`).

use crate::{StoreError, UpdateOutcome};
use async_trait::async_trait;
use svc_domain::{AccessPolicy, PolicyId, TenantId};
use time::OffsetDateTime;

/// Reading a tenant's policies.
#[async_trait]
pub trait PolicyReads {
    /// The policy `id` of `tenant`.
    async fn access_policy(
        &mut self,
        tenant: &TenantId,
        id: &PolicyId,
    ) -> Result<Option<AccessPolicy>, StoreError>;

    /// Every policy of `tenant` (enabled or not), in id order.
    async fn access_policies(&mut self, tenant: &TenantId)
    -> Result<Vec<AccessPolicy>, StoreError>;
}

/// Changing a tenant's policies.
#[async_trait]
pub trait PolicyWrites {
    /// Stores a new policy: [`StoreError::Conflict`] naming `access_policies_tenant_name_key`
    /// when the name is taken, or `access_policies_tenant_id_fkey` when the tenant is absent.
    async fn insert_access_policy(&mut self, policy: &AccessPolicy) -> Result<(), StoreError>;

    /// Writes `policy` (all but id, tenant and creation) if its stored `updated_at` is still
    /// `read_at`: [`UpdateOutcome::Stale`] otherwise, [`StoreError::NotFound`] when it is gone.
    async fn update_access_policy_if_unchanged(
        &mut self,
        policy: &AccessPolicy,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError>;

    /// Deletes the policy `id` of `tenant`; whether it existed.
    async fn delete_access_policy(
        &mut self,
        tenant: &TenantId,
        id: &PolicyId,
    ) -> Result<bool, StoreError>;
}
