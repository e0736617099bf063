//! The access-policy ports of [`FaultyTx`]: delegation, and each write can be made to fail.

use crate::support::FaultyTx;
use async_trait::async_trait;
use svc_domain::{AccessPolicy, PolicyId, TenantId};
use svc_store::{PolicyReads, PolicyWrites, StoreError, UpdateOutcome};
use time::OffsetDateTime;

#[async_trait]
impl PolicyReads for FaultyTx {
    async fn access_policy(
        &mut self,
        tenant: &TenantId,
        id: &PolicyId,
    ) -> Result<Option<AccessPolicy>, StoreError> {
        self.inner.access_policy(tenant, id).await
    }
    async fn access_policies(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<AccessPolicy>, StoreError> {
        self.inner.access_policies(tenant).await
    }
}

#[async_trait]
impl PolicyWrites for FaultyTx {
    async fn insert_access_policy(&mut self, policy: &AccessPolicy) -> Result<(), StoreError> {
        self.check("insert_access_policy")?;
        self.inner.insert_access_policy(policy).await
    }
    async fn update_access_policy_if_unchanged(
        &mut self,
        policy: &AccessPolicy,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError> {
        self.check("update_access_policy_if_unchanged")?;
        self.inner
            .update_access_policy_if_unchanged(policy, read_at)
            .await
    }
    async fn delete_access_policy(
        &mut self,
        tenant: &TenantId,
        id: &PolicyId,
    ) -> Result<bool, StoreError> {
        self.check("delete_access_policy")?;
        self.inner.delete_access_policy(tenant, id).await
    }
}
