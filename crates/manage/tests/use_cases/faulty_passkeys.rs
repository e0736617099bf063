//! The passkey and WebAuthn-ceremony ports of [`FaultyTx`]: plain delegation (the management
//! use cases make none of these writes, so none can be made to fail).

use crate::support::FaultyTx;
use async_trait::async_trait;
use svc_domain::{
    CeremonyPurpose, FactorId, Passkey, PasskeyId, SecretHash, TenantId, UserId, WebauthnCeremony,
};
use svc_store::{PasskeyReads, PasskeyWrites, StoreError};
use time::OffsetDateTime;

#[async_trait]
impl PasskeyReads for FaultyTx {
    async fn passkeys(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Vec<Passkey>, StoreError> {
        self.inner.passkeys(tenant, user).await
    }
    async fn passkey_by_credential(
        &mut self,
        tenant: &TenantId,
        credential_id: &[u8],
    ) -> Result<Option<Passkey>, StoreError> {
        self.inner
            .passkey_by_credential(tenant, credential_id)
            .await
    }
}

#[async_trait]
impl PasskeyWrites for FaultyTx {
    async fn insert_passkey(&mut self, passkey: &Passkey) -> Result<(), StoreError> {
        self.inner.insert_passkey(passkey).await
    }
    async fn record_passkey_use(
        &mut self,
        tenant: &TenantId,
        id: &PasskeyId,
        credential: &str,
        backup_eligible: bool,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        self.inner
            .record_passkey_use(tenant, id, credential, backup_eligible, now)
            .await
    }
    async fn rename_passkey(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &PasskeyId,
        name: &str,
    ) -> Result<bool, StoreError> {
        self.inner.rename_passkey(tenant, user, id, name).await
    }
    async fn delete_passkey(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &PasskeyId,
    ) -> Result<bool, StoreError> {
        self.inner.delete_passkey(tenant, user, id).await
    }
    async fn update_factor_secret(
        &mut self,
        tenant: &TenantId,
        id: &FactorId,
        sealed_secret: &[u8],
    ) -> Result<bool, StoreError> {
        self.inner
            .update_factor_secret(tenant, id, sealed_secret)
            .await
    }
    async fn insert_webauthn_ceremony(
        &mut self,
        ceremony: &WebauthnCeremony,
    ) -> Result<(), StoreError> {
        self.inner.insert_webauthn_ceremony(ceremony).await
    }
    async fn take_webauthn_ceremony(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        purpose: CeremonyPurpose,
        now: OffsetDateTime,
    ) -> Result<Option<WebauthnCeremony>, StoreError> {
        self.inner
            .take_webauthn_ceremony(tenant, hash, purpose, now)
            .await
    }
}
