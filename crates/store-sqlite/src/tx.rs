//! Transactions handed to the engines: one type behind both `Box<dyn ReadTx>` and
//! `Box<dyn WriteTx>`; the trait object decides which operations the caller can reach.

use crate::error::map_err;
use crate::{signing_keys, tenants};
use async_trait::async_trait;
use sqlx::{Sqlite, Transaction};
use svc_domain::{SigningKeyRecord, Tenant, TenantId, TenantSlug};
use svc_store::{
    KeyTransition, ReadTx, SigningKeyReads, SigningKeyWrites, StoreError, TenantReads,
    TenantWrites, WriteTx,
};

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
impl SigningKeyReads for SqliteTx {
    async fn signing_keys(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<SigningKeyRecord>, StoreError> {
        signing_keys::for_tenant(&mut self.tx, tenant).await
    }
}

#[async_trait]
impl SigningKeyWrites for SqliteTx {
    /// Nothing to take: this is only reachable through a `WriteTx`, which began with
    /// `BEGIN IMMEDIATE` and so already holds the database's single write lock until it commits
    /// or rolls back. No other writer, in this process or another, can change any key meanwhile,
    /// and in WAL mode the transaction reads the latest committed state (nobody can have written
    /// since it took the lock), so check-then-write under it is safe.
    async fn lock_signing_keys(&mut self, _tenant: &TenantId) -> Result<(), StoreError> {
        Ok(())
    }

    async fn insert_signing_key(&mut self, key: &SigningKeyRecord) -> Result<(), StoreError> {
        signing_keys::insert(&mut self.tx, key).await
    }

    async fn transition_signing_key(
        &mut self,
        tenant: &TenantId,
        change: &KeyTransition,
    ) -> Result<(), StoreError> {
        signing_keys::transition(&mut self.tx, tenant, change).await
    }

    async fn delete_signing_key(&mut self, tenant: &TenantId, kid: &str) -> Result<(), StoreError> {
        signing_keys::delete(&mut self.tx, tenant, kid).await
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
