//! Transactions handed to the engines: one type behind both `Box<dyn ReadTx>` and
//! `Box<dyn WriteTx>`; the trait object decides which operations the caller can reach.

use crate::error::map_err;
use crate::{applications, audit, coordination, signing_keys, tenants};
use async_trait::async_trait;
use sqlx::{Postgres, Transaction};
use svc_domain::{
    Application, AuditEntry, AuditEntryId, ClientId, OperatorToken, SecretHash, SigningKeyRecord,
    Tenant, TenantId, TenantSlug,
};
use svc_store::{
    ApplicationReads, ApplicationWrites, AuditFilter, AuditReads, AuditWrites, CoordinationWrites,
    IdempotencyRecord, KeyTransition, OperatorTokenReads, OperatorTokenWrites, ReadTx,
    SigningKeyReads, SigningKeyWrites, StoreError, TenantReads, TenantWrites, WriteTx,
};
use time::OffsetDateTime;

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

    async fn delete_tenant(&mut self, id: &TenantId) -> Result<(), StoreError> {
        tenants::delete(&mut self.tx, id).await
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
impl ApplicationReads for PgTx {
    async fn application(
        &mut self,
        tenant: &TenantId,
        id: &ClientId,
    ) -> Result<Option<Application>, StoreError> {
        applications::by_id(&mut self.tx, tenant, id).await
    }

    async fn list_applications(
        &mut self,
        tenant: &TenantId,
        after: Option<&ClientId>,
        limit: u32,
    ) -> Result<Vec<Application>, StoreError> {
        applications::list(&mut self.tx, tenant, after, limit).await
    }
}

#[async_trait]
impl ApplicationWrites for PgTx {
    async fn insert_application(&mut self, app: &Application) -> Result<(), StoreError> {
        applications::insert(&mut self.tx, app).await
    }

    async fn update_application(&mut self, app: &Application) -> Result<(), StoreError> {
        applications::update(&mut self.tx, app).await
    }

    async fn delete_application(
        &mut self,
        tenant: &TenantId,
        id: &ClientId,
    ) -> Result<(), StoreError> {
        applications::delete(&mut self.tx, tenant, id).await
    }
}

#[async_trait]
impl OperatorTokenReads for PgTx {
    async fn operator_token_by_hash(
        &mut self,
        hash: &SecretHash,
    ) -> Result<Option<OperatorToken>, StoreError> {
        applications::operator_token_by_hash(&mut self.tx, hash).await
    }
}

#[async_trait]
impl OperatorTokenWrites for PgTx {
    async fn insert_operator_token(&mut self, token: &OperatorToken) -> Result<(), StoreError> {
        applications::insert_operator_token(&mut self.tx, token).await
    }
}

#[async_trait]
impl AuditReads for PgTx {
    async fn list_audit(
        &mut self,
        tenant: &TenantId,
        filter: &AuditFilter,
        before: Option<&AuditEntryId>,
        limit: u32,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        audit::list(&mut self.tx, tenant, filter, before, limit).await
    }
}

#[async_trait]
impl AuditWrites for PgTx {
    async fn insert_audit(&mut self, entry: &AuditEntry) -> Result<(), StoreError> {
        audit::insert(&mut self.tx, entry).await
    }
}

#[async_trait]
impl CoordinationWrites for PgTx {
    async fn idempotency_record(
        &mut self,
        scope: &str,
        key: &str,
        now: OffsetDateTime,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        coordination::idempotency_record(&mut self.tx, scope, key, now).await
    }

    async fn claim_idempotency(&mut self, record: &IdempotencyRecord) -> Result<(), StoreError> {
        coordination::claim(&mut self.tx, record).await
    }

    async fn complete_idempotency(
        &mut self,
        scope: &str,
        key: &str,
        status: u16,
        body: &str,
    ) -> Result<(), StoreError> {
        coordination::complete(&mut self.tx, scope, key, status, body).await
    }

    async fn release_idempotency(&mut self, scope: &str, key: &str) -> Result<(), StoreError> {
        coordination::release(&mut self.tx, scope, key).await
    }

    async fn use_assertion_id(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
        jti: &str,
        expires_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        coordination::use_assertion_id(&mut self.tx, tenant, client, jti, expires_at, now).await
    }

    async fn purge_expired(&mut self, now: OffsetDateTime) -> Result<u64, StoreError> {
        coordination::purge_expired(&mut self.tx, now).await
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
