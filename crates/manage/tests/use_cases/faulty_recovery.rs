//! The social-recovery ports of [`FaultyTx`]: plain delegation (the management use cases make
//! none of these writes, so none can be made to fail).

use crate::support::FaultyTx;
use async_trait::async_trait;
use svc_domain::{
    Guardian, GuardianId, RecoveryApproval, RecoveryId, RecoveryRequest, RecoveryStatus,
    SecretHash, TenantId, UserId,
};
use svc_store::{RecoveryReads, RecoveryWrites, StoreError};
use time::OffsetDateTime;

#[async_trait]
impl RecoveryReads for FaultyTx {
    async fn guardians(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Vec<Guardian>, StoreError> {
        self.inner.guardians(tenant, user).await
    }
    async fn open_recovery(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<Option<RecoveryRequest>, StoreError> {
        self.inner.open_recovery(tenant, user, now).await
    }
    async fn recovery_by_secret(
        &mut self,
        tenant: &TenantId,
        secret: &SecretHash,
    ) -> Result<Option<RecoveryRequest>, StoreError> {
        self.inner.recovery_by_secret(tenant, secret).await
    }
    async fn recovery_by_cancel_token(
        &mut self,
        tenant: &TenantId,
        cancel: &SecretHash,
    ) -> Result<Option<RecoveryRequest>, StoreError> {
        self.inner.recovery_by_cancel_token(tenant, cancel).await
    }
    async fn recovery(
        &mut self,
        tenant: &TenantId,
        id: &RecoveryId,
    ) -> Result<Option<RecoveryRequest>, StoreError> {
        self.inner.recovery(tenant, id).await
    }
    async fn recovery_approval(
        &mut self,
        tenant: &TenantId,
        token: &SecretHash,
    ) -> Result<Option<RecoveryApproval>, StoreError> {
        self.inner.recovery_approval(tenant, token).await
    }
    async fn recovery_approvals(
        &mut self,
        tenant: &TenantId,
        id: &RecoveryId,
    ) -> Result<Vec<RecoveryApproval>, StoreError> {
        self.inner.recovery_approvals(tenant, id).await
    }
    async fn recovery_factor_due(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<bool, StoreError> {
        self.inner.recovery_factor_due(tenant, user).await
    }
}

#[async_trait]
impl RecoveryWrites for FaultyTx {
    async fn insert_guardian(&mut self, guardian: &Guardian) -> Result<(), StoreError> {
        self.inner.insert_guardian(guardian).await
    }
    async fn delete_guardian(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &GuardianId,
    ) -> Result<bool, StoreError> {
        self.inner.delete_guardian(tenant, user, id).await
    }
    async fn insert_recovery(
        &mut self,
        request: &RecoveryRequest,
        secret: &SecretHash,
        cancel: &SecretHash,
    ) -> Result<(), StoreError> {
        self.inner.insert_recovery(request, secret, cancel).await
    }
    async fn expire_recoveries(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        self.inner.expire_recoveries(tenant, user, now).await
    }
    async fn insert_recovery_approval(
        &mut self,
        approval: &RecoveryApproval,
        token: &SecretHash,
    ) -> Result<(), StoreError> {
        self.inner.insert_recovery_approval(approval, token).await
    }
    async fn spend_recovery_approval(
        &mut self,
        tenant: &TenantId,
        token: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<RecoveryApproval>, StoreError> {
        self.inner.spend_recovery_approval(tenant, token, now).await
    }
    async fn update_recovery(
        &mut self,
        request: &RecoveryRequest,
        expected: RecoveryStatus,
    ) -> Result<bool, StoreError> {
        self.inner.update_recovery(request, expected).await
    }
    async fn clear_recovery_factor_due(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<u64, StoreError> {
        self.inner.clear_recovery_factor_due(tenant, user).await
    }
    async fn purge_closed_recoveries(
        &mut self,
        before: OffsetDateTime,
        limit: u64,
    ) -> Result<u64, StoreError> {
        self.inner.purge_closed_recoveries(before, limit).await
    }
}
