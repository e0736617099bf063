//! The second-factor ports of [`FaultyTx`]: plain delegation, except that resetting a
//! person's factors can be made to fail by name (see `FaultyStore::fail_on`).

use crate::support::FaultyTx;
use async_trait::async_trait;
use svc_domain::{
    BackupCode, FactorChallenge, FactorId, KnownDevice, SecondFactor, SecretHash, TenantId, UserId,
};
use svc_store::{FactorReads, FactorWrites, StoreError};
use time::OffsetDateTime;

#[async_trait]
impl FactorReads for FaultyTx {
    async fn second_factors(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Vec<SecondFactor>, StoreError> {
        self.inner.second_factors(tenant, user).await
    }
    async fn second_factor(
        &mut self,
        tenant: &TenantId,
        id: &FactorId,
    ) -> Result<Option<SecondFactor>, StoreError> {
        self.inner.second_factor(tenant, id).await
    }
    async fn unused_backup_codes(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<u32, StoreError> {
        self.inner.unused_backup_codes(tenant, user).await
    }
    async fn factor_challenge(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<FactorChallenge>, StoreError> {
        self.inner.factor_challenge(tenant, hash, now).await
    }
    async fn factor_data_key(&mut self, purpose: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.factor_data_key(purpose).await
    }
    async fn known_device(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        hash: &SecretHash,
    ) -> Result<Option<KnownDevice>, StoreError> {
        self.inner.known_device(tenant, user, hash).await
    }
    async fn signed_in_from(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        ip: &str,
    ) -> Result<bool, StoreError> {
        self.inner.signed_in_from(tenant, user, ip).await
    }
}

#[async_trait]
impl FactorWrites for FaultyTx {
    async fn insert_second_factor(&mut self, factor: &SecondFactor) -> Result<(), StoreError> {
        self.inner.insert_second_factor(factor).await
    }
    async fn confirm_second_factor(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &FactorId,
        step: i64,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        self.inner
            .confirm_second_factor(tenant, user, id, step, now)
            .await
    }
    async fn advance_totp_step(
        &mut self,
        tenant: &TenantId,
        id: &FactorId,
        step: i64,
    ) -> Result<bool, StoreError> {
        self.inner.advance_totp_step(tenant, id, step).await
    }
    async fn delete_second_factor(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &FactorId,
    ) -> Result<bool, StoreError> {
        self.inner.delete_second_factor(tenant, user, id).await
    }
    async fn delete_unconfirmed_factors(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        before: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        self.inner
            .delete_unconfirmed_factors(tenant, user, before)
            .await
    }
    async fn delete_user_factors(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<u64, StoreError> {
        self.check("delete_user_factors")?;
        self.inner.delete_user_factors(tenant, user).await
    }
    async fn replace_backup_codes(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        codes: &[BackupCode],
    ) -> Result<(), StoreError> {
        self.inner.replace_backup_codes(tenant, user, codes).await
    }
    async fn consume_backup_code(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        self.inner
            .consume_backup_code(tenant, user, hash, now)
            .await
    }
    async fn insert_factor_challenge(
        &mut self,
        challenge: &FactorChallenge,
    ) -> Result<(), StoreError> {
        self.inner.insert_factor_challenge(challenge).await
    }
    async fn consume_factor_challenge(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        self.inner.consume_factor_challenge(tenant, hash, now).await
    }
    async fn insert_factor_data_key(
        &mut self,
        purpose: &str,
        wrapped: &[u8],
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        self.inner
            .insert_factor_data_key(purpose, wrapped, now)
            .await
    }
    async fn insert_known_device(&mut self, device: &KnownDevice) -> Result<bool, StoreError> {
        self.inner.insert_known_device(device).await
    }
    async fn touch_known_device(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.inner.touch_known_device(tenant, user, hash, now).await
    }
    async fn set_device_trust(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        hash: &SecretHash,
        until: Option<OffsetDateTime>,
    ) -> Result<bool, StoreError> {
        self.inner.set_device_trust(tenant, user, hash, until).await
    }
    async fn forget_trusted_devices(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<u64, StoreError> {
        self.inner.forget_trusted_devices(tenant, user).await
    }
}
