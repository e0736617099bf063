//! Ports of social sign-in: a tenant's providers (keyed by slug, going with the tenant), the
//! attempts in flight and the links waiting for confirmation (single use, found by the hash of
//! the browser's cookie), and the links from upstream accounts to people (going with the person
//! or the provider). Every call takes the tenant, so another tenant's rows read as absent and no
//! write reaches them.

use crate::StoreError;
use async_trait::async_trait;
use svc_domain::{
    PendingSocialLink, ProviderSlug, SecretHash, SocialAttempt, SocialLink, SocialProvider,
    TenantId, UserId,
};
use time::OffsetDateTime;

/// Reads of social sign-in.
#[async_trait]
pub trait SocialReads {
    /// The provider `slug` of `tenant`.
    async fn social_provider(
        &mut self,
        tenant: &TenantId,
        slug: &ProviderSlug,
    ) -> Result<Option<SocialProvider>, StoreError>;

    /// Every provider of `tenant`, by slug (at most `MAX_SOCIAL_PROVIDERS` are ever stored).
    async fn social_providers(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<SocialProvider>, StoreError>;

    /// The person the provider `slug` knows as `subject`.
    async fn social_link(
        &mut self,
        tenant: &TenantId,
        slug: &ProviderSlug,
        subject: &str,
    ) -> Result<Option<SocialLink>, StoreError>;

    /// The links of `user`, by provider slug.
    async fn social_links_of_user(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Vec<SocialLink>, StoreError>;

    /// The pending link whose cookie hashes to `hash`, if it is `tenant`'s and unexpired at
    /// `now` (read without spending it, to show the confirmation).
    async fn pending_social_link(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<PendingSocialLink>, StoreError>;
}

/// Writes of social sign-in.
#[async_trait]
pub trait SocialWrites {
    /// Stores the provider, replacing the one with its slug (the `created_at` of the first
    /// stays). A tenant that does not exist is [`StoreError::Conflict`] on
    /// `social_providers_tenant_id_fkey`.
    async fn put_social_provider(&mut self, provider: &SocialProvider) -> Result<(), StoreError>;

    /// Deletes the provider, its links, attempts and pending links; false when there was none.
    async fn delete_social_provider(
        &mut self,
        tenant: &TenantId,
        slug: &ProviderSlug,
    ) -> Result<bool, StoreError>;

    /// Stores a new attempt.
    async fn insert_social_attempt(&mut self, attempt: &SocialAttempt) -> Result<(), StoreError>;

    /// Spends the attempt whose cookie hashes to `hash`: only if it belongs to `tenant`, is
    /// unused and unexpired at `now`, it is marked used and returned. Atomic, so one attempt
    /// admits one callback even under races; `None` otherwise (nothing written).
    async fn take_social_attempt(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<SocialAttempt>, StoreError>;

    /// Records a link. The upstream account already linked is [`StoreError::Conflict`] on
    /// `social_links_pkey`; a second account of the same provider for one person on
    /// `social_links_user_provider_key`; a person or provider not the tenant's on
    /// `social_links_user_fkey` / `social_links_provider_fkey`.
    async fn insert_social_link(&mut self, link: &SocialLink) -> Result<(), StoreError>;

    /// Deletes `user`'s link to the provider `slug`; false when there was none.
    async fn delete_social_link(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        slug: &ProviderSlug,
    ) -> Result<bool, StoreError>;

    /// Stores a link waiting for confirmation.
    async fn insert_pending_social_link(
        &mut self,
        pending: &PendingSocialLink,
    ) -> Result<(), StoreError>;

    /// Deletes and returns the pending link whose cookie hashes to `hash`, if it is `tenant`'s
    /// and unexpired at `now`. Atomic: one confirmation per pending link.
    async fn take_pending_social_link(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<PendingSocialLink>, StoreError>;
}
