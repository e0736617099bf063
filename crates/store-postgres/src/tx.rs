//! Transactions handed to the engines: one type behind both `Box<dyn ReadTx>` and
//! `Box<dyn WriteTx>`; the trait object decides which operations the caller can reach.

use crate::error::map_err;
use crate::{signing_keys, tenants};
use async_trait::async_trait;
use sqlx::{Postgres, Transaction};
use svc_domain::{SigningKeyRecord, Tenant, TenantId, TenantSlug};
use svc_store::{
    KeyTransition, ReadTx, SigningKeyReads, SigningKeyWrites, StoreError, TenantReads,
    TenantWrites, WriteTx,
};

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
impl SigningKeyReads for PgTx {
    async fn signing_keys(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<SigningKeyRecord>, StoreError> {
        signing_keys::for_tenant(&mut self.tx, tenant).await
    }
}

#[async_trait]
impl SigningKeyWrites for PgTx {
    /// A transaction-scoped advisory lock per tenant: concurrent writers (on any replica)
    /// serialise on it, and it is released when this transaction commits or rolls back.
    async fn lock_signing_keys(&mut self, tenant: &TenantId) -> Result<(), StoreError> {
        signing_keys::lock(&mut self.tx, tenant).await
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
