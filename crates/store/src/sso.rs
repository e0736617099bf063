//! Ports of enterprise single sign-on: an organization's connection to its upstream provider
//! (at most one per organization, going with the organization), the attempts in flight (single
//! use, found by the hash of the browser's cookie), and the links from upstream subjects to
//! people (going with the person or the organization). Every call takes the tenant, so another
//! tenant's rows read as absent and no write reaches them.

use crate::StoreError;
use async_trait::async_trait;
use svc_domain::{OrganizationId, SecretHash, SsoAttempt, SsoConnection, SsoLink, TenantId};
use time::OffsetDateTime;

/// Reads of single sign-on.
#[async_trait]
pub trait SsoReads {
    /// The connection of the organization `org`.
    async fn sso_connection(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
    ) -> Result<Option<SsoConnection>, StoreError>;

    /// The person the provider of `org` knows as `subject`.
    async fn sso_link(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        subject: &str,
    ) -> Result<Option<SsoLink>, StoreError>;
}

/// Writes of single sign-on.
#[async_trait]
pub trait SsoWrites {
    /// Stores the organization's connection, replacing the one it had (the `created_at` of the
    /// first stays). An organization that is not the tenant's is [`StoreError::Conflict`] on
    /// `sso_connections_organization_fkey`.
    async fn put_sso_connection(&mut self, connection: &SsoConnection) -> Result<(), StoreError>;

    /// Deletes the organization's connection and its links; false when it had none.
    async fn delete_sso_connection(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
    ) -> Result<bool, StoreError>;

    /// Stores a new attempt.
    async fn insert_sso_attempt(&mut self, attempt: &SsoAttempt) -> Result<(), StoreError>;

    /// Spends the attempt whose cookie hashes to `hash`: only if it belongs to `tenant`, is
    /// unused and unexpired at `now`, it is marked used and returned. Atomic, so one attempt
    /// admits one callback even under races; `None` otherwise (nothing written).
    async fn take_sso_attempt(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<SsoAttempt>, StoreError>;

    /// Records a link. The subject already linked is [`StoreError::Conflict`] on
    /// `sso_links_pkey`; a person or organization not the tenant's on `sso_links_user_fkey` /
    /// `sso_links_organization_fkey`.
    async fn insert_sso_link(&mut self, link: &SsoLink) -> Result<(), StoreError>;
}
