//! The social sign-in ports of [`FaultyTx`]: plain delegation, except the provider and link
//! writes, which can be made to fail.

use crate::support::FaultyTx;
use async_trait::async_trait;
use svc_domain::{
    PendingSocialLink, ProviderSlug, SecretHash, SocialAttempt, SocialLink, SocialProvider,
    TenantId, UserId,
};
use svc_store::{SocialReads, SocialWrites, StoreError};
use time::OffsetDateTime;

#[async_trait]
impl SocialReads for FaultyTx {
    async fn social_provider(
        &mut self,
        tenant: &TenantId,
        slug: &ProviderSlug,
    ) -> Result<Option<SocialProvider>, StoreError> {
        self.inner.social_provider(tenant, slug).await
    }
    async fn social_providers(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<SocialProvider>, StoreError> {
        self.inner.social_providers(tenant).await
    }
    async fn social_link(
        &mut self,
        tenant: &TenantId,
        slug: &ProviderSlug,
        subject: &str,
    ) -> Result<Option<SocialLink>, StoreError> {
        self.inner.social_link(tenant, slug, subject).await
    }
    async fn social_links_of_user(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Vec<SocialLink>, StoreError> {
        self.inner.social_links_of_user(tenant, user).await
    }
    async fn pending_social_link(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<PendingSocialLink>, StoreError> {
        self.inner.pending_social_link(tenant, hash, now).await
    }
}

#[async_trait]
impl SocialWrites for FaultyTx {
    async fn put_social_provider(&mut self, provider: &SocialProvider) -> Result<(), StoreError> {
        self.check("put_social_provider")?;
        self.inner.put_social_provider(provider).await
    }
    async fn delete_social_provider(
        &mut self,
        tenant: &TenantId,
        slug: &ProviderSlug,
    ) -> Result<bool, StoreError> {
        self.check("delete_social_provider")?;
        self.inner.delete_social_provider(tenant, slug).await
    }
    async fn insert_social_attempt(&mut self, attempt: &SocialAttempt) -> Result<(), StoreError> {
        self.inner.insert_social_attempt(attempt).await
    }
    async fn take_social_attempt(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<SocialAttempt>, StoreError> {
        self.inner.take_social_attempt(tenant, hash, now).await
    }
    async fn insert_social_link(&mut self, link: &SocialLink) -> Result<(), StoreError> {
        self.inner.insert_social_link(link).await
    }
    async fn delete_social_link(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        slug: &ProviderSlug,
    ) -> Result<bool, StoreError> {
        self.check("delete_social_link")?;
        self.inner.delete_social_link(tenant, user, slug).await
    }
    async fn insert_pending_social_link(
        &mut self,
        pending: &PendingSocialLink,
    ) -> Result<(), StoreError> {
        self.inner.insert_pending_social_link(pending).await
    }
    async fn take_pending_social_link(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<PendingSocialLink>, StoreError> {
        self.inner.take_pending_social_link(tenant, hash, now).await
    }
}
