//! The tenant aggregate's repository port.

use crate::StoreError;
use async_trait::async_trait;
use svc_domain::{Tenant, TenantId, TenantSlug};

/// Reads of tenant records.
#[async_trait]
pub trait TenantReads {
    /// The tenant with this id, if any.
    async fn tenant_by_id(&mut self, id: &TenantId) -> Result<Option<Tenant>, StoreError>;

    /// The tenant with this slug, if any.
    async fn tenant_by_slug(&mut self, slug: &TenantSlug) -> Result<Option<Tenant>, StoreError>;

    /// Up to `limit` tenants ordered by id, starting after `after` (cursor pagination).
    async fn list_tenants(
        &mut self,
        after: Option<&TenantId>,
        limit: u32,
    ) -> Result<Vec<Tenant>, StoreError>;
}

/// Writes of tenant records.
#[async_trait]
pub trait TenantWrites {
    /// Inserts a new tenant; a taken slug or id is [`StoreError::Conflict`].
    async fn insert_tenant(&mut self, tenant: &Tenant) -> Result<(), StoreError>;

    /// Replaces the mutable fields (display name, status, sign-up flag, updated_at) of an existing
    /// tenant; the pairwise secret never changes.
    async fn update_tenant(&mut self, tenant: &Tenant) -> Result<(), StoreError>;

    /// Deletes a tenant and everything it owns (applications, keys, ...), but not its audit
    /// entries; [`StoreError::NotFound`] when absent.
    async fn delete_tenant(&mut self, id: &TenantId) -> Result<(), StoreError>;
}
