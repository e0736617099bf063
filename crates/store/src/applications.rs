//! Ports of the application aggregate and of control-plane operator tokens.

use crate::{Order, StoreError};
use async_trait::async_trait;
use svc_domain::{Application, ClientId, OperatorToken, SecretHash, TenantId};
use time::OffsetDateTime;

/// What a conditional update did (optimistic concurrency: the caller names the revision it
/// read, and the write applies only to that revision).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum UpdateOutcome {
    /// The record was still at the revision read; it now holds the new values.
    Applied,
    /// The record exists but changed since it was read (another writer committed first);
    /// nothing was written.
    Stale,
}

/// Reads of applications; always within one tenant, so another tenant's id reads as absent.
#[async_trait]
pub trait ApplicationReads {
    /// The application `id` of `tenant`, if any.
    async fn application(
        &mut self,
        tenant: &TenantId,
        id: &ClientId,
    ) -> Result<Option<Application>, StoreError>;

    /// The application of `tenant` read from the client ID metadata document at `url`, if any.
    async fn application_by_metadata_url(
        &mut self,
        tenant: &TenantId,
        url: &str,
    ) -> Result<Option<Application>, StoreError>;

    /// Up to `limit` applications of `tenant` in id `order`, past the cursor `after`.
    async fn list_applications(
        &mut self,
        tenant: &TenantId,
        after: Option<&ClientId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<Application>, StoreError>;

    /// The RAR detail types (RFC 9396) any application of `tenant` registered, sorted, once
    /// each (discovery's `authorization_details_types_supported`).
    async fn application_detail_types(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<String>, StoreError>;
}

/// Writes of applications.
#[async_trait]
pub trait ApplicationWrites {
    /// Stores a new application; a taken id, or a metadata document URL another application of
    /// the tenant already has, is [`StoreError::Conflict`].
    async fn insert_application(&mut self, app: &Application) -> Result<(), StoreError>;

    /// Replaces every mutable field (all but id, tenant, created_at, is_management), provided
    /// the stored application is still the revision the caller read, i.e. its `updated_at` is
    /// still `read_at` (compared in the same statement, so it holds even under PostgreSQL's
    /// READ COMMITTED, where a concurrent writer may commit between the read and this write).
    ///
    /// [`UpdateOutcome::Stale`] (nothing written) when it changed since; [`StoreError::NotFound`]
    /// when `app.id` is not an application of `app.tenant_id`.
    async fn update_application(
        &mut self,
        app: &Application,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError>;

    /// Deletes an application of `tenant`; [`StoreError::NotFound`] when absent.
    async fn delete_application(
        &mut self,
        tenant: &TenantId,
        id: &ClientId,
    ) -> Result<(), StoreError>;
}

/// Reads of operator tokens.
#[async_trait]
pub trait OperatorTokenReads {
    /// The operator token with this hash, if any (the lookup key is the hash of the presented
    /// token; the comparison that matters happened when hashing).
    async fn operator_token_by_hash(
        &mut self,
        hash: &SecretHash,
    ) -> Result<Option<OperatorToken>, StoreError>;
}

/// Writes of operator tokens.
#[async_trait]
pub trait OperatorTokenWrites {
    /// Stores a new operator token record.
    async fn insert_operator_token(&mut self, token: &OperatorToken) -> Result<(), StoreError>;
}
