//! Port of dynamic client registration (RFC 7591, RFC 7592): each tenant's registration policy,
//! its initial access tokens, and the registration access token of each dynamically registered
//! application.
//!
//! Only the SHA-256 of a registration access token is stored, one per application; the row goes
//! with its application (and its tenant), so deleting either leaves no token behind. An
//! application created through the management API has none, and so cannot be managed at
//! `/oauth/register/{client_id}`.

use crate::StoreError;
use async_trait::async_trait;
use svc_domain::{
    ClientId, InitialAccessToken, InitialAccessTokenId, RegistrationPolicy, SecretHash,
    StatementIssuer, TenantId,
};
use time::OffsetDateTime;

/// Reads of registration state.
#[async_trait]
pub trait RegistrationReads {
    /// The registration policy of `tenant`: [`RegistrationPolicy::Disabled`] until one is set.
    async fn registration_policy(
        &mut self,
        tenant: &TenantId,
    ) -> Result<RegistrationPolicy, StoreError>;

    /// Whether `tenant` accepts client ID metadata documents (an `https` URL as `client_id`):
    /// `false` until set.
    async fn metadata_documents_accepted(&mut self, tenant: &TenantId) -> Result<bool, StoreError>;

    /// The software statement issuers `tenant` trusts itself, by issuer; none until set.
    async fn statement_issuers(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<StatementIssuer>, StoreError>;

    /// The hash of the registration access token of the application `client` of `tenant`;
    /// `None` when it has none (created through the management API, or absent).
    async fn registration_token(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
    ) -> Result<Option<SecretHash>, StoreError>;

    /// Every initial access token of `tenant`, expired and spent ones included, in id order.
    async fn initial_access_tokens(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<InitialAccessToken>, StoreError>;
}

/// Writes of registration state.
#[async_trait]
pub trait RegistrationWrites {
    /// Sets the registration policy of `tenant` (an upsert), changed at `now`.
    /// [`StoreError::Conflict`] naming `registration_policies_tenant_id_fkey` when the tenant
    /// does not exist.
    async fn set_registration_policy(
        &mut self,
        tenant: &TenantId,
        policy: RegistrationPolicy,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;

    /// Sets whether `tenant` accepts client ID metadata documents (an upsert beside the
    /// registration policy, which an absent row leaves `disabled`), changed at `now`; the same
    /// foreign-key conflict as [`RegistrationWrites::set_registration_policy`].
    async fn set_metadata_documents_accepted(
        &mut self,
        tenant: &TenantId,
        accepted: bool,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;

    /// Replaces the software statement issuers `tenant` trusts with `issuers` (distinct by
    /// issuer), set at `now`; an empty list trusts none. [`StoreError::Conflict`] naming
    /// `software_statement_issuers_tenant_id_fkey` when the tenant does not exist, or
    /// `software_statement_issuers_pkey` when an issuer is listed twice.
    async fn set_statement_issuers(
        &mut self,
        tenant: &TenantId,
        issuers: &[StatementIssuer],
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;

    /// Stores the registration access token `hash` of the application `client` of `tenant`,
    /// issued at `now`. [`StoreError::Conflict`] naming
    /// `registration_access_tokens_pkey` when it already has one, or
    /// `registration_access_tokens_client_id_fkey` when the application does not exist.
    async fn insert_registration_token(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;

    /// Stores an initial access token. [`StoreError::Conflict`] naming
    /// `initial_access_tokens_tenant_id_fkey` when the tenant does not exist.
    async fn insert_initial_access_token(
        &mut self,
        token: &InitialAccessToken,
    ) -> Result<(), StoreError>;

    /// Spends one use of the initial access token `id` of `tenant`, if it has not expired at
    /// `now` and has a use left: one conditional update, so racing registrations never spend
    /// more uses than it has. Whether a use was spent.
    async fn spend_initial_access_token(
        &mut self,
        tenant: &TenantId,
        id: &InitialAccessTokenId,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError>;

    /// Deletes the initial access token `id` of `tenant`; whether it existed.
    async fn delete_initial_access_token(
        &mut self,
        tenant: &TenantId,
        id: &InitialAccessTokenId,
    ) -> Result<bool, StoreError>;
}
