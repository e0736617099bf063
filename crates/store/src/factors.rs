//! Ports of second factors: a person's enrolled factors (TOTP), their backup codes, the pending
//! second-factor challenges of sign-ins that passed the password step, and the deployment's
//! wrapped data key that seals TOTP secrets.

use crate::StoreError;
use async_trait::async_trait;
use svc_domain::{
    BackupCode, FactorChallenge, FactorId, KnownDevice, SecondFactor, SecretHash, TenantId, UserId,
};
use time::OffsetDateTime;

/// Reads of second factors.
#[async_trait]
pub trait FactorReads {
    /// Every factor of the user, confirmed or not, oldest first.
    async fn second_factors(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Vec<SecondFactor>, StoreError>;

    /// The factor `id` of `tenant` (any user; callers check the owner).
    async fn second_factor(
        &mut self,
        tenant: &TenantId,
        id: &FactorId,
    ) -> Result<Option<SecondFactor>, StoreError>;

    /// How many of the user's backup codes are still unused.
    async fn unused_backup_codes(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<u32, StoreError>;

    /// The challenge whose cookie hashes to `hash`, only while unused and unexpired at `now`.
    async fn factor_challenge(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<FactorChallenge>, StoreError>;

    /// The deployment's data key of `purpose` (`totp_seal`), in the wrapped form stored by
    /// [`FactorWrites::insert_factor_data_key`], if one was stored; never unwrapped here. It
    /// belongs to the deployment, not to a tenant.
    async fn factor_data_key(&mut self, purpose: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// The browser whose device cookie hashes to `hash`, as known for `user`.
    async fn known_device(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        hash: &SecretHash,
    ) -> Result<Option<KnownDevice>, StoreError>;

    /// Whether the user's login history has a successful sign-in from `ip`.
    async fn signed_in_from(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        ip: &str,
    ) -> Result<bool, StoreError>;
}

/// Writes of second factors.
#[async_trait]
pub trait FactorWrites {
    /// Stores a new factor (normally unconfirmed).
    async fn insert_second_factor(&mut self, factor: &SecondFactor) -> Result<(), StoreError>;

    /// Marks the unconfirmed factor `id` of `user` confirmed at `now`, recording `step` as its
    /// last used TOTP step; false when it is not the user's, or already confirmed.
    async fn confirm_second_factor(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &FactorId,
        step: i64,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError>;

    /// Records `step` as the last accepted TOTP step of factor `id`, only if no step at or
    /// after it was accepted before; atomic, so one code works once even under races. False
    /// (nothing written) for a replayed or older step, or an unknown factor.
    async fn advance_totp_step(
        &mut self,
        tenant: &TenantId,
        id: &FactorId,
        step: i64,
    ) -> Result<bool, StoreError>;

    /// Deletes the factor `id` of `user`; false when it was not there.
    async fn delete_second_factor(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &FactorId,
    ) -> Result<bool, StoreError>;

    /// Deletes the user's unconfirmed factors created before `before` (abandoned enrolments,
    /// and older ones when a new enrolment starts); returns how many.
    async fn delete_unconfirmed_factors(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        before: OffsetDateTime,
    ) -> Result<u64, StoreError>;

    /// Deletes every factor and backup code of the user (an administrator's reset); returns
    /// how many factors went.
    async fn delete_user_factors(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<u64, StoreError>;

    /// Replaces the user's backup codes with `codes` (all of the same user): the old set, used
    /// or not, stops working.
    async fn replace_backup_codes(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        codes: &[BackupCode],
    ) -> Result<(), StoreError>;

    /// Marks the user's unused backup code with `hash` used at `now`; atomic, so a code works
    /// once even under races. False when no such unused code exists.
    async fn consume_backup_code(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError>;

    /// Stores a new second-factor challenge.
    async fn insert_factor_challenge(
        &mut self,
        challenge: &FactorChallenge,
    ) -> Result<(), StoreError>;

    /// Marks the challenge used at `now`, only if it exists for `tenant`, is unused and
    /// unexpired; atomic, so a challenge completes one sign-in even under races.
    async fn consume_factor_challenge(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError>;

    /// Stores `wrapped` (16 to 4096 bytes) as the deployment's data key of `purpose`
    /// (`totp_seal`) created at `now`, only if no key of that purpose is stored yet: the first
    /// key stored stays for good and is never replaced. True when this call stored it; false
    /// (nothing written) when a key was already there, including one committed by a concurrent
    /// transaction that won a race, which [`FactorReads::factor_data_key`] then returns, so
    /// instances starting at once all end up with the one winner. An unknown purpose or a length
    /// out of range is refused by the schema ([`StoreError::Corrupt`]).
    async fn insert_factor_data_key(
        &mut self,
        purpose: &str,
        wrapped: &[u8],
        now: OffsetDateTime,
    ) -> Result<bool, StoreError>;

    /// Records a browser the user signed in from for the first time; nothing when it is known
    /// already (returns whether this call stored it).
    async fn insert_known_device(&mut self, device: &KnownDevice) -> Result<bool, StoreError>;

    /// Records a sign-in from the known browser `hash` at `now` (`last_seen_at`).
    async fn touch_known_device(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;

    /// Trusts the known browser `hash` until `until` (`None`: no longer trusted); false when
    /// it is not a known browser of the user.
    async fn set_device_trust(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        hash: &SecretHash,
        until: Option<OffsetDateTime>,
    ) -> Result<bool, StoreError>;

    /// Withdraws trust from every browser of the user (they are still known); returns how
    /// many were trusted.
    async fn forget_trusted_devices(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<u64, StoreError>;
}
