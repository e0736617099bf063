//! Transactions handed to the engines: one type behind both `Box<dyn ReadTx>` and
//! `Box<dyn WriteTx>`; the trait object decides which operations the caller can reach.

use crate::error::map_err;
use crate::tenants;
use async_trait::async_trait;
use sqlx::{Postgres, Transaction};
use svc_domain::{Tenant, TenantId, TenantSlug};
use svc_store::{ReadTx, StoreError, TenantReads, TenantWrites, WriteTx};

/// A transaction on a pooled connection. Dropping it without commit makes sqlx roll it back
/// (the pool flushes the ROLLBACK before the connection is lent out again).
pub(crate) struct PgTx {
    tx: Transaction<'static, Postgres>,
}

impl PgTx {
    pub(crate) fn new(tx: Transaction<'static, Postgres>) -> Self {
        Self { tx }
    }
}

#[async_trait]
impl TenantReads for PgTx {
    async fn tenant_by_id(&mut self, id: &TenantId) -> Result<Option<Tenant>, StoreError> {
        tenants::by_id(&mut self.tx, id).await
    }

    async fn tenant_by_slug(&mut self, slug: &TenantSlug) -> Result<Option<Tenant>, StoreError> {
        tenants::by_slug(&mut self.tx, slug).await
    }

    async fn list_tenants(
        &mut self,
        after: Option<&TenantId>,
        limit: u32,
    ) -> Result<Vec<Tenant>, StoreError> {
        tenants::list(&mut self.tx, after, limit).await
    }
}

#[async_trait]
impl TenantWrites for PgTx {
    async fn insert_tenant(&mut self, tenant: &Tenant) -> Result<(), StoreError> {
        tenants::insert(&mut self.tx, tenant).await
    }

    async fn update_tenant(&mut self, tenant: &Tenant) -> Result<(), StoreError> {
        tenants::update(&mut self.tx, tenant).await
    }
}

#[async_trait]
impl ReadTx for PgTx {
    async fn finish(self: Box<Self>) -> Result<(), StoreError> {
        // A read-only transaction changed nothing; rollback and commit are equivalent.
        self.tx.rollback().await.map_err(map_err)
    }
}

#[async_trait]
impl WriteTx for PgTx {
    async fn commit(self: Box<Self>) -> Result<(), StoreError> {
        self.tx.commit().await.map_err(map_err)
    }
}
