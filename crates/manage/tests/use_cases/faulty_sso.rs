//! The single sign-on ports of [`FaultyTx`]: plain delegation, except the connection writes,
//! which can be made to fail.

use crate::support::FaultyTx;
use async_trait::async_trait;
use svc_domain::{OrganizationId, SecretHash, SsoAttempt, SsoConnection, SsoLink, TenantId};
use svc_store::{SsoReads, SsoWrites, StoreError};
use time::OffsetDateTime;

#[async_trait]
impl SsoReads for FaultyTx {
    async fn sso_connection(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
    ) -> Result<Option<SsoConnection>, StoreError> {
        self.inner.sso_connection(tenant, org).await
    }
    async fn sso_link(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        subject: &str,
    ) -> Result<Option<SsoLink>, StoreError> {
        self.inner.sso_link(tenant, org, subject).await
    }
}

#[async_trait]
impl SsoWrites for FaultyTx {
    async fn put_sso_connection(&mut self, connection: &SsoConnection) -> Result<(), StoreError> {
        self.check("put_sso_connection")?;
        self.inner.put_sso_connection(connection).await
    }
    async fn delete_sso_connection(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
    ) -> Result<bool, StoreError> {
        self.check("delete_sso_connection")?;
        self.inner.delete_sso_connection(tenant, org).await
    }
    async fn insert_sso_attempt(&mut self, attempt: &SsoAttempt) -> Result<(), StoreError> {
        self.inner.insert_sso_attempt(attempt).await
    }
    async fn take_sso_attempt(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<SsoAttempt>, StoreError> {
        self.inner.take_sso_attempt(tenant, hash, now).await
    }
    async fn insert_sso_link(&mut self, link: &SsoLink) -> Result<(), StoreError> {
        self.inner.insert_sso_link(link).await
    }
}
