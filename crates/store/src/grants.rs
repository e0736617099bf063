//! Ports of what the authorization-code flow leaves behind: pending interactions, consents,
//! authorization codes, refresh-token families and revoked access-token ids.
//!
//! The single-use rules live here as atomic operations ([`GrantWrites::redeem_code`],
//! [`GrantWrites::rotate_refresh_token`]) so that several instances on one PostgreSQL still
//! redeem a code once and rotate a refresh token once: each is one conditional `UPDATE`, and the
//! database serialises concurrent ones on the row.

use crate::StoreError;
use async_trait::async_trait;
use svc_domain::{
    AuthorizationCode, ClientId, Consent, Interaction, InteractionId, RefreshFamily,
    RefreshFamilyId, RefreshToken, SecretHash, TenantId, UserId,
};
use time::OffsetDateTime;

/// The outcome of presenting an authorization code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeRedemption {
    /// This call redeemed it (it is now marked redeemed).
    First(AuthorizationCode),
    /// It had been redeemed before: the caller must refuse and revoke what was issued.
    Again(AuthorizationCode),
    /// No such code for the tenant.
    Unknown,
}

/// The outcome of presenting a refresh token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefreshRotation {
    /// This call rotated it (it is now marked rotated); the caller issues its successor.
    Rotated(RefreshToken, RefreshFamily),
    /// It had been rotated before: reuse. The caller revokes the family.
    Reused(RefreshToken, RefreshFamily),
    /// No such token for the tenant.
    Unknown,
}

/// Reads of interactions, consents, refresh tokens and access-token revocations.
#[async_trait]
pub trait GrantReads {
    /// The interaction `id` of `tenant` if it has not expired at `now`.
    async fn interaction(
        &mut self,
        tenant: &TenantId,
        id: &InteractionId,
        now: OffsetDateTime,
    ) -> Result<Option<Interaction>, StoreError>;

    /// What `user` consented to `client`.
    async fn consent(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        client: &ClientId,
    ) -> Result<Option<Consent>, StoreError>;

    /// The consent whose pairwise `subject` the application `client` sees.
    async fn consent_by_subject(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
        subject: &str,
    ) -> Result<Option<Consent>, StoreError>;

    /// A refresh token and its family, whatever their state.
    async fn refresh_token(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
    ) -> Result<Option<(RefreshToken, RefreshFamily)>, StoreError>;

    /// Whether the access token `jti` of `tenant` was revoked.
    async fn access_token_revoked(
        &mut self,
        tenant: &TenantId,
        jti: &str,
    ) -> Result<bool, StoreError>;

    /// The access tokens of `tenant` revoked and not yet expired at `now`, each `jti` with its
    /// expiry (Unix seconds), at most `limit` of them, in no particular order.
    async fn access_tokens_revoked(
        &mut self,
        tenant: &TenantId,
        now: OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<(String, i64)>, StoreError>;
}

/// Writes of interactions, consents, codes, refresh families and revocations.
#[async_trait]
pub trait GrantWrites {
    /// Stores a pending authorization request.
    async fn insert_interaction(&mut self, interaction: &Interaction) -> Result<(), StoreError>;

    /// Forgets an interaction (finished or abandoned); false when absent.
    async fn delete_interaction(
        &mut self,
        tenant: &TenantId,
        id: &InteractionId,
    ) -> Result<bool, StoreError>;

    /// Creates or replaces the consent of (tenant, user, client).
    async fn upsert_consent(&mut self, consent: &Consent) -> Result<(), StoreError>;

    /// Withdraws a consent; false when absent.
    async fn delete_consent(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        client: &ClientId,
    ) -> Result<bool, StoreError>;

    /// Stores a new authorization code.
    async fn insert_code(&mut self, code: &AuthorizationCode) -> Result<(), StoreError>;

    /// Marks the code redeemed at `now` if it was not; see [`CodeRedemption`]. Expiry is the
    /// caller's check (an expired code is still reported so its reuse can be told apart).
    async fn redeem_code(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<CodeRedemption, StoreError>;

    /// Records what a code's first redemption issued, so a second one can revoke it.
    async fn record_code_issuance(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        family: Option<&RefreshFamilyId>,
        access_jti: &str,
        access_expires_at: OffsetDateTime,
    ) -> Result<(), StoreError>;

    /// Starts a refresh family.
    async fn insert_refresh_family(&mut self, family: &RefreshFamily) -> Result<(), StoreError>;

    /// Adds a token to its family.
    async fn insert_refresh_token(&mut self, token: &RefreshToken) -> Result<(), StoreError>;

    /// Marks the token rotated at `now` if it was not; see [`RefreshRotation`]. State checks
    /// (family revoked, expiry, client) are the caller's.
    async fn rotate_refresh_token(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<RefreshRotation, StoreError>;

    /// Revokes a family (idempotent: the first reason is kept); false when it was already
    /// revoked or does not exist.
    async fn revoke_refresh_family(
        &mut self,
        tenant: &TenantId,
        id: &RefreshFamilyId,
        now: OffsetDateTime,
        reason: &str,
    ) -> Result<bool, StoreError>;

    /// Revokes every unrevoked family of a user (suspension, removal, password reset).
    async fn revoke_user_refresh_families(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
        reason: &str,
    ) -> Result<u64, StoreError>;

    /// Remembers that access token `jti` is revoked until it would have expired anyway
    /// (idempotent).
    async fn revoke_access_token(
        &mut self,
        tenant: &TenantId,
        jti: &str,
        expires_at: OffsetDateTime,
    ) -> Result<(), StoreError>;

    /// Deletes interactions, pushed authorization requests, codes, refresh tokens and families,
    /// revocations, one-time link tokens, second-factor challenges, WebAuthn ceremonies, counters,
    /// sessions, single sign-on and social sign-in attempts and pending social links that are
    /// past any use at `now` (a challenge, a ceremony or an attempt once used or expired);
    /// returns how many rows.
    ///
    /// At most `limit` rows of each kind per call, so a backlog is worked off over several
    /// calls, each in a transaction of its own (the janitor repeats while rows go).
    async fn purge_expired_grants_at_most(
        &mut self,
        now: OffsetDateTime,
        limit: u64,
    ) -> Result<u64, StoreError>;

    /// [`GrantWrites::purge_expired_grants_at_most`] without a bound.
    async fn purge_expired_grants(&mut self, now: OffsetDateTime) -> Result<u64, StoreError>
    where
        Self: Send,
    {
        self.purge_expired_grants_at_most(now, u64::MAX).await
    }
}
