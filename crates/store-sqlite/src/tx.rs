//! Transactions handed to the engines: one type behind both `Box<dyn ReadTx>` and
//! `Box<dyn WriteTx>`; the trait object decides which operations the caller can reach.

use crate::error::map_err;
use crate::tenants;
use async_trait::async_trait;
use sqlx::{Sqlite, Transaction};
use svc_domain::{Tenant, TenantId, TenantSlug};
use svc_store::{ReadTx, StoreError, TenantReads, TenantWrites, WriteTx};

/// A transaction on a pooled connection. Dropping it without commit makes sqlx roll it back
/// (the connection's worker runs the ROLLBACK before the connection is lent out again).
pub(crate) struct SqliteTx {
    tx: Transaction<'static, Sqlite>,
}

impl SqliteTx {
    pub(crate) fn new(tx: Transaction<'static, Sqlite>) -> Self {
        Self { tx }
    }
}

#[async_trait]
impl TenantReads for SqliteTx {
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
impl TenantWrites for SqliteTx {
    async fn insert_tenant(&mut self, tenant: &Tenant) -> Result<(), StoreError> {
        tenants::insert(&mut self.tx, tenant).await
    }

    async fn update_tenant(&mut self, tenant: &Tenant) -> Result<(), StoreError> {
        tenants::update(&mut self.tx, tenant).await
    }
}

#[async_trait]
impl ReadTx for SqliteTx {
    async fn finish(self: Box<Self>) -> Result<(), StoreError> {
        // A read changed nothing; rolling back releases the snapshot without a commit's fsync.
        self.tx.rollback().await.map_err(map_err)
    }
}

#[async_trait]
impl WriteTx for SqliteTx {
    async fn commit(self: Box<Self>) -> Result<(), StoreError> {
        self.tx.commit().await.map_err(map_err)
    }
}
