//! The domain ports of [`FaultyTx`]: delegation, each write failing when named.

use crate::support::FaultyTx;
use async_trait::async_trait;
use svc_domain::{DomainId, DomainName, OrganizationId, TenantId, VerifiedDomain};
use svc_store::{DomainReads, DomainWrites, StoreError, UpdateOutcome};
use time::OffsetDateTime;

#[async_trait]
impl DomainReads for FaultyTx {
    async fn domain(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        id: &DomainId,
    ) -> Result<Option<VerifiedDomain>, StoreError> {
        self.inner.domain(tenant, org, id).await
    }
    async fn domains_of_organization(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
    ) -> Result<Vec<VerifiedDomain>, StoreError> {
        self.inner.domains_of_organization(tenant, org).await
    }
    async fn verified_domain_by_name(
        &mut self,
        tenant: &TenantId,
        name: &DomainName,
    ) -> Result<Option<VerifiedDomain>, StoreError> {
        self.inner.verified_domain_by_name(tenant, name).await
    }
}

#[async_trait]
impl DomainWrites for FaultyTx {
    async fn insert_domain(&mut self, domain: &VerifiedDomain) -> Result<(), StoreError> {
        self.check("insert_domain")?;
        self.inner.insert_domain(domain).await
    }
    async fn update_domain_if_unchanged(
        &mut self,
        domain: &VerifiedDomain,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError> {
        self.check("update_domain_if_unchanged")?;
        self.inner.update_domain_if_unchanged(domain, read_at).await
    }
    async fn delete_domain(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        id: &DomainId,
    ) -> Result<bool, StoreError> {
        self.check("delete_domain")?;
        self.inner.delete_domain(tenant, org, id).await
    }
}
