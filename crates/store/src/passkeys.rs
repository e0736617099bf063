//! Ports of passkeys and WebAuthn ceremonies: a person's passkeys (first-factor WebAuthn
//! credentials), and the server-side state of ceremonies in progress, found by the hash of
//! the browser's cookie and spent once.

use crate::StoreError;
use async_trait::async_trait;
use svc_domain::{
    CeremonyPurpose, FactorId, Passkey, PasskeyId, SecretHash, TenantId, UserId, WebauthnCeremony,
};
use time::OffsetDateTime;

/// Reads of passkeys.
#[async_trait]
pub trait PasskeyReads {
    /// Every passkey of the user, oldest first.
    async fn passkeys(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Vec<Passkey>, StoreError>;

    /// The passkey of `tenant` with this WebAuthn credential id (any user).
    async fn passkey_by_credential(
        &mut self,
        tenant: &TenantId,
        credential_id: &[u8],
    ) -> Result<Option<Passkey>, StoreError>;
}

/// Writes of passkeys and ceremonies.
#[async_trait]
pub trait PasskeyWrites {
    /// Stores a new passkey. A credential id already registered in the tenant (to anybody) is
    /// [`StoreError::Conflict`] on `passkeys_tenant_id_credential_id_key`.
    async fn insert_passkey(&mut self, passkey: &Passkey) -> Result<(), StoreError>;

    /// After a sign-in with passkey `id`: stores its updated credential (the new signature
    /// counter and backup flags) and backup eligibility, and `last_used_at = now`; false when
    /// it is not there.
    async fn record_passkey_use(
        &mut self,
        tenant: &TenantId,
        id: &PasskeyId,
        credential: &str,
        backup_eligible: bool,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError>;

    /// Renames the passkey `id` of `user`; false when it is not theirs or not there.
    async fn rename_passkey(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &PasskeyId,
        name: &str,
    ) -> Result<bool, StoreError>;

    /// Deletes the passkey `id` of `user`; false when it is not theirs or not there.
    async fn delete_passkey(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &PasskeyId,
    ) -> Result<bool, StoreError>;

    /// Replaces the sealed secret of the factor `id` (a security key's sealed credential after
    /// a use moved its counter); false when it is not there.
    async fn update_factor_secret(
        &mut self,
        tenant: &TenantId,
        id: &FactorId,
        sealed_secret: &[u8],
    ) -> Result<bool, StoreError>;

    /// Stores a new ceremony.
    async fn insert_webauthn_ceremony(
        &mut self,
        ceremony: &WebauthnCeremony,
    ) -> Result<(), StoreError>;

    /// Spends the ceremony whose cookie hashes to `hash`: only if it belongs to `tenant`, was
    /// started for `purpose`, is unused and unexpired at `now`, it is marked used and returned.
    /// Atomic, so one ceremony checks one answer even under races; `None` otherwise (nothing
    /// written).
    async fn take_webauthn_ceremony(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        purpose: CeremonyPurpose,
        now: OffsetDateTime,
    ) -> Result<Option<WebauthnCeremony>, StoreError>;
}
