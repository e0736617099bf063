//! The tenant aggregate's repository port.

use crate::{Order, StoreError};
use async_trait::async_trait;
use svc_domain::{Tenant, TenantId, TenantSlug};
use time::OffsetDateTime;

/// Reads of tenant records.
#[async_trait]
pub trait TenantReads {
    /// The tenant with this id, if any.
    async fn tenant_by_id(&mut self, id: &TenantId) -> Result<Option<Tenant>, StoreError>;

    /// The tenant with this slug, if any.
    async fn tenant_by_slug(&mut self, slug: &TenantSlug) -> Result<Option<Tenant>, StoreError>;

    /// Up to `limit` tenants in id `order`, past the cursor `after`.
    async fn list_tenants(
        &mut self,
        after: Option<&TenantId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<Tenant>, StoreError>;
}

/// Writes of tenant records.
#[async_trait]
pub trait TenantWrites {
    /// Inserts a new tenant; a taken slug or id is [`StoreError::Conflict`].
    async fn insert_tenant(&mut self, tenant: &Tenant) -> Result<(), StoreError>;

    /// The tenant with this id, its row locked against other writers until this transaction
    /// ends, so concurrent read-modify-write changes of one tenant take turns (each reads what
    /// the previous one committed) instead of failing their conditional update. PostgreSQL:
    /// `SELECT … FOR NO KEY UPDATE` (rows referencing the tenant can still be added); SQLite: the
    /// single writer already excludes every other.
    async fn tenant_for_update(&mut self, id: &TenantId) -> Result<Option<Tenant>, StoreError>;

    /// Replaces the mutable fields (display name, status, sign-up flag, updated_at) of an existing
    /// tenant, only while it is still at the revision the caller read: its stored `updated_at`
    /// equals `read_at`. `Ok(false)` (nothing written) when it changed since, so of two writers
    /// that read the same revision only the first commits, even under PostgreSQL's READ
    /// COMMITTED; [`StoreError::NotFound`] when absent. The pairwise secret never changes.
    async fn update_tenant(
        &mut self,
        tenant: &Tenant,
        read_at: OffsetDateTime,
    ) -> Result<bool, StoreError>;

    /// Deletes a tenant and everything it owns (applications, keys, ...), but not its audit
    /// entries; [`StoreError::NotFound`] when absent.
    async fn delete_tenant(&mut self, id: &TenantId) -> Result<(), StoreError>;
}
