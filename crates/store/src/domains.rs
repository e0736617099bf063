//! Ports of the domains organizations claim and verify. Every call takes the tenant, and the
//! per-organization calls the organization too, so a claim of another tenant or another
//! organization reads as absent and no write reaches it. A claim references its organization by
//! (tenant, id), so it cannot be planted in another tenant's organization, and goes with the
//! organization when that is deleted.
//!
//! The schema holds the two rules no race may break: one claim of a name per organization
//! (`verified_domains_org_name_key`) and at most one verified claim of a name per tenant (the
//! partial unique index `verified_domains_tenant_name_verified_key`). How many claims an
//! organization may have, and what proves one, are the management use cases' rules.

use crate::{StoreError, UpdateOutcome};
use async_trait::async_trait;
use svc_domain::{DomainId, DomainName, OrganizationId, TenantId, VerifiedDomain};
use time::OffsetDateTime;

/// Reads of domain claims.
#[async_trait]
pub trait DomainReads {
    /// The claim `id` of the organization `org` of `tenant`.
    async fn domain(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        id: &DomainId,
    ) -> Result<Option<VerifiedDomain>, StoreError>;

    /// Every claim of the organization `org`, in id order (an organization has a bounded
    /// number; the API caps it).
    async fn domains_of_organization(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
    ) -> Result<Vec<VerifiedDomain>, StoreError>;

    /// The verified claim of `name` in `tenant`, whichever organization holds it: the lookup
    /// of auto-join and, later, of home-realm discovery.
    async fn verified_domain_by_name(
        &mut self,
        tenant: &TenantId,
        name: &DomainName,
    ) -> Result<Option<VerifiedDomain>, StoreError>;
}

/// Writes of domain claims.
#[async_trait]
pub trait DomainWrites {
    /// Stores a new claim. The organization already claiming the name is
    /// [`StoreError::Conflict`] on `verified_domains_org_name_key`; a verified claim of a name
    /// another organization of the tenant verified on `verified_domains_tenant_name_verified_key`;
    /// an organization that is not the tenant's (or does not exist) on
    /// `verified_domains_organization_fkey`. Empty auto-join roles are refused by the schema
    /// ([`StoreError::Corrupt`]).
    async fn insert_domain(&mut self, domain: &VerifiedDomain) -> Result<(), StoreError>;

    /// Replaces status, token, verified_at, last_checked_at, auto_join, auto_join_roles and
    /// `updated_at`, but only while the stored `updated_at` still equals `read_at`:
    /// [`UpdateOutcome::Stale`] otherwise, [`StoreError::NotFound`] when absent. Verifying a
    /// name another organization of the tenant verified is [`StoreError::Conflict`] on
    /// `verified_domains_tenant_name_verified_key`.
    async fn update_domain_if_unchanged(
        &mut self,
        domain: &VerifiedDomain,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError>;

    /// Deletes the claim `id` of the organization `org`; false when absent.
    async fn delete_domain(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        id: &DomainId,
    ) -> Result<bool, StoreError>;
}
