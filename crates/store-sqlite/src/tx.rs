//! Transactions handed to the engines: one type behind both `Box<dyn ReadTx>` and
//! `Box<dyn WriteTx>`; the trait object decides which operations the caller can reach.

use crate::error::map_err;
use crate::{
    applications, audit, codes, coordination, counters, grants, refresh, sessions, signing_keys,
    tenants, users,
};
use async_trait::async_trait;
use sqlx::pool::PoolConnection;
use sqlx::{Sqlite, SqliteConnection, Transaction};
use svc_domain::{
    Application, AuditEntry, AuditEntryId, AuthorizationCode, ClientId, Consent, Email,
    Interaction, InteractionId, OperatorToken, RefreshFamily, RefreshFamilyId, RefreshToken,
    SecretHash, Session, SessionId, SigningKeyRecord, Tenant, TenantId, TenantSlug, User, UserId,
    UserToken, UserTokenPurpose,
};
use svc_store::{
    ApplicationReads, ApplicationWrites, AuditFilter, AuditReads, AuditWrites, CodeRedemption,
    CoordinationWrites, CounterState, CounterWrites, GrantReads, GrantWrites, IdempotencyRecord,
    KeyTransition, OperatorTokenReads, OperatorTokenWrites, ReadTx, RefreshRotation, SessionReads,
    SessionWrites, SigningKeyReads, SigningKeyWrites, StoreError, TenantReads, TenantWrites,
    UserFilter, UserReads, UserTokenWrites, UserWrites, WriteTx,
};
use time::OffsetDateTime;

/// A transaction on a pooled connection. Dropping it without commit makes sqlx roll it back
/// (the connection's worker runs the ROLLBACK before the connection is lent out again).
pub(crate) struct SqliteTx {
    pub(crate) tx: Conn,
    /// This process's turn to write, held until the transaction ends (after `tx`, so the
    /// rollback of a dropped transaction is queued before the next writer starts).
    _turn: Option<tokio::sync::OwnedMutexGuard<()>>,
}

/// What a [`SqliteTx`] runs on: a transaction, or (for a one-statement read) a pooled connection in
/// autocommit mode, which saves the BEGIN and the ROLLBACK round trips.
pub(crate) enum Conn {
    /// A transaction.
    Tx(Transaction<'static, Sqlite>),
    /// A pooled connection outside any transaction.
    Plain(PoolConnection<Sqlite>),
}

impl std::ops::Deref for Conn {
    type Target = SqliteConnection;

    fn deref(&self) -> &SqliteConnection {
        match self {
            Self::Tx(tx) => tx,
            Self::Plain(conn) => conn,
        }
    }
}

impl std::ops::DerefMut for Conn {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        match self {
            Self::Tx(tx) => tx,
            Self::Plain(conn) => conn,
        }
    }
}

impl SqliteTx {
    pub(crate) fn new(tx: Transaction<'static, Sqlite>) -> Self {
        Self {
            tx: Conn::Tx(tx),
            _turn: None,
        }
    }

    /// A write transaction holding this process's turn to write.
    pub(crate) fn writer(
        tx: Transaction<'static, Sqlite>,
        turn: tokio::sync::OwnedMutexGuard<()>,
    ) -> Self {
        Self {
            tx: Conn::Tx(tx),
            _turn: Some(turn),
        }
    }

    /// A read on a pooled connection without a transaction.
    pub(crate) fn plain(conn: PoolConnection<Sqlite>) -> Self {
        Self {
            tx: Conn::Plain(conn),
            _turn: None,
        }
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

    async fn delete_tenant(&mut self, id: &TenantId) -> Result<(), StoreError> {
        tenants::delete(&mut self.tx, id).await
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
impl ApplicationReads for SqliteTx {
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
impl ApplicationWrites for SqliteTx {
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
impl OperatorTokenReads for SqliteTx {
    async fn operator_token_by_hash(
        &mut self,
        hash: &SecretHash,
    ) -> Result<Option<OperatorToken>, StoreError> {
        applications::operator_token_by_hash(&mut self.tx, hash).await
    }
}

#[async_trait]
impl OperatorTokenWrites for SqliteTx {
    async fn insert_operator_token(&mut self, token: &OperatorToken) -> Result<(), StoreError> {
        applications::insert_operator_token(&mut self.tx, token).await
    }
}

#[async_trait]
impl AuditReads for SqliteTx {
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
impl AuditWrites for SqliteTx {
    async fn insert_audit(&mut self, entry: &AuditEntry) -> Result<(), StoreError> {
        audit::insert(&mut self.tx, entry).await
    }
}

#[async_trait]
impl CoordinationWrites for SqliteTx {
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
impl UserReads for SqliteTx {
    async fn user(&mut self, tenant: &TenantId, id: &UserId) -> Result<Option<User>, StoreError> {
        users::by_id(&mut self.tx, tenant, id).await
    }

    async fn user_by_email(
        &mut self,
        tenant: &TenantId,
        email: &Email,
    ) -> Result<Option<User>, StoreError> {
        users::by_email(&mut self.tx, tenant, email).await
    }

    async fn list_users(
        &mut self,
        tenant: &TenantId,
        filter: &UserFilter,
        after: Option<&UserId>,
        limit: u32,
    ) -> Result<Vec<User>, StoreError> {
        users::list(&mut self.tx, tenant, filter, after, limit).await
    }
}

#[async_trait]
impl UserWrites for SqliteTx {
    async fn insert_user(&mut self, user: &User) -> Result<(), StoreError> {
        users::insert(&mut self.tx, user).await
    }

    async fn update_user(&mut self, user: &User) -> Result<(), StoreError> {
        users::update(&mut self.tx, user).await
    }
}

#[async_trait]
impl UserTokenWrites for SqliteTx {
    async fn insert_user_token(&mut self, token: &UserToken) -> Result<(), StoreError> {
        users::insert_token(&mut self.tx, token).await
    }

    async fn consume_user_token(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        purpose: UserTokenPurpose,
        now: OffsetDateTime,
    ) -> Result<Option<UserToken>, StoreError> {
        users::consume_token(&mut self.tx, tenant, hash, purpose, now).await
    }

    async fn invalidate_user_tokens(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        purpose: UserTokenPurpose,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        users::invalidate_tokens(&mut self.tx, tenant, user, purpose, now).await
    }
}

#[async_trait]
impl SessionReads for SqliteTx {
    async fn session_by_secret(
        &mut self,
        tenant: &TenantId,
        secret: &SecretHash,
    ) -> Result<Option<Session>, StoreError> {
        sessions::by_secret(&mut self.tx, tenant, secret).await
    }

    async fn session(
        &mut self,
        tenant: &TenantId,
        id: &SessionId,
    ) -> Result<Option<Session>, StoreError> {
        sessions::by_id(&mut self.tx, tenant, id).await
    }

    async fn live_sessions(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<Vec<Session>, StoreError> {
        sessions::live(&mut self.tx, tenant, user, now).await
    }
}

#[async_trait]
impl SessionWrites for SqliteTx {
    async fn insert_session(&mut self, session: &Session) -> Result<(), StoreError> {
        sessions::insert(&mut self.tx, session).await
    }

    async fn touch_session(
        &mut self,
        tenant: &TenantId,
        id: &SessionId,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        sessions::touch(&mut self.tx, tenant, id, now).await
    }

    async fn revoke_session(
        &mut self,
        tenant: &TenantId,
        id: &SessionId,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        sessions::revoke(&mut self.tx, tenant, id, now).await
    }

    async fn revoke_user_sessions(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        sessions::revoke_user(&mut self.tx, tenant, user, now).await
    }
}

#[async_trait]
impl CounterWrites for SqliteTx {
    async fn hit_counter(
        &mut self,
        key: &str,
        now: OffsetDateTime,
        window: time::Duration,
    ) -> Result<CounterState, StoreError> {
        counters::hit(&mut self.tx, key, now, window).await
    }

    async fn counter(
        &mut self,
        key: &str,
        now: OffsetDateTime,
    ) -> Result<Option<CounterState>, StoreError> {
        counters::live(&mut self.tx, key, now).await
    }

    async fn clear_counter(&mut self, key: &str) -> Result<(), StoreError> {
        counters::clear(&mut self.tx, key).await
    }
}

#[async_trait]
impl GrantReads for SqliteTx {
    async fn interaction(
        &mut self,
        tenant: &TenantId,
        id: &InteractionId,
        now: OffsetDateTime,
    ) -> Result<Option<Interaction>, StoreError> {
        grants::interaction(&mut self.tx, tenant, id, now).await
    }

    async fn consent(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        client: &ClientId,
    ) -> Result<Option<Consent>, StoreError> {
        grants::consent(&mut self.tx, tenant, user, client).await
    }

    async fn consent_by_subject(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
        subject: &str,
    ) -> Result<Option<Consent>, StoreError> {
        grants::consent_by_subject(&mut self.tx, tenant, client, subject).await
    }

    async fn refresh_token(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
    ) -> Result<Option<(RefreshToken, RefreshFamily)>, StoreError> {
        refresh::token(&mut self.tx, tenant, hash).await
    }

    async fn access_token_revoked(
        &mut self,
        tenant: &TenantId,
        jti: &str,
    ) -> Result<bool, StoreError> {
        grants::access_token_revoked(&mut self.tx, tenant, jti).await
    }
}

#[async_trait]
impl GrantWrites for SqliteTx {
    async fn insert_interaction(&mut self, interaction: &Interaction) -> Result<(), StoreError> {
        grants::insert_interaction(&mut self.tx, interaction).await
    }

    async fn delete_interaction(
        &mut self,
        tenant: &TenantId,
        id: &InteractionId,
    ) -> Result<bool, StoreError> {
        grants::delete_interaction(&mut self.tx, tenant, id).await
    }

    async fn upsert_consent(&mut self, consent: &Consent) -> Result<(), StoreError> {
        grants::upsert_consent(&mut self.tx, consent).await
    }

    async fn delete_consent(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        client: &ClientId,
    ) -> Result<bool, StoreError> {
        grants::delete_consent(&mut self.tx, tenant, user, client).await
    }

    async fn insert_code(&mut self, code: &AuthorizationCode) -> Result<(), StoreError> {
        codes::insert(&mut self.tx, code).await
    }

    async fn redeem_code(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<CodeRedemption, StoreError> {
        codes::redeem(&mut self.tx, tenant, hash, now).await
    }

    async fn record_code_issuance(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        family: Option<&RefreshFamilyId>,
        access_jti: &str,
        access_expires_at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        codes::record_issuance(
            &mut self.tx,
            tenant,
            hash,
            family,
            access_jti,
            access_expires_at,
        )
        .await
    }

    async fn insert_refresh_family(&mut self, family: &RefreshFamily) -> Result<(), StoreError> {
        refresh::insert_family(&mut self.tx, family).await
    }

    async fn insert_refresh_token(&mut self, token: &RefreshToken) -> Result<(), StoreError> {
        refresh::insert_token(&mut self.tx, token).await
    }

    async fn rotate_refresh_token(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<RefreshRotation, StoreError> {
        refresh::rotate(&mut self.tx, tenant, hash, now).await
    }

    async fn revoke_refresh_family(
        &mut self,
        tenant: &TenantId,
        id: &RefreshFamilyId,
        now: OffsetDateTime,
        reason: &str,
    ) -> Result<bool, StoreError> {
        refresh::revoke_family(&mut self.tx, tenant, id, now, reason).await
    }

    async fn revoke_user_refresh_families(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
        reason: &str,
    ) -> Result<u64, StoreError> {
        refresh::revoke_user_families(&mut self.tx, tenant, user, now, reason).await
    }

    async fn revoke_access_token(
        &mut self,
        tenant: &TenantId,
        jti: &str,
        expires_at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        grants::revoke_access_token(&mut self.tx, tenant, jti, expires_at).await
    }

    async fn purge_expired_grants(&mut self, now: OffsetDateTime) -> Result<u64, StoreError> {
        grants::purge(&mut self.tx, now).await
    }
}

#[async_trait]
impl ReadTx for SqliteTx {
    async fn finish(self: Box<Self>) -> Result<(), StoreError> {
        // A read changed nothing; rolling back releases the snapshot without a commit's fsync.
        match self.tx {
            Conn::Tx(tx) => tx.rollback().await.map_err(map_err),
            // Autocommit: nothing to end; the connection goes back to the pool.
            Conn::Plain(_) => Ok(()),
        }
    }
}

#[async_trait]
impl WriteTx for SqliteTx {
    async fn commit(self: Box<Self>) -> Result<(), StoreError> {
        match self.tx {
            Conn::Tx(tx) => tx.commit().await.map_err(map_err),
            // Only reads run outside a transaction; `read_once` never hands out a WriteTx.
            Conn::Plain(_) => Ok(()),
        }
    }
}
