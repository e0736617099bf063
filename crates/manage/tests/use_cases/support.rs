//! Fixtures: a context on a fresh SQLite database with a manual clock, a store wrapper that
//! counts transactions and can fail one named write, and helpers to read back what was written.

use async_trait::async_trait;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use svc_domain::{
    Application, AuditEntry, ClientId, Clock, GrantType, ManualClock, OperatorToken,
    OperatorTokenId, SecretHash, SeededRandom, SigningKeyRecord, Tenant, TenantId, TenantSlug,
};
use svc_manage::applications::{self, ApplicationInput};
use svc_manage::audit::list_audit;
use svc_manage::control_plane::{self, CreatedTenant, NewTenant};
use svc_manage::{Actor, ManageContext, RequestMeta};
use svc_store::{
    ApplicationReads, ApplicationWrites, AuditFilter, AuditReads, AuditWrites, Backend,
    CoordinationWrites, IdempotencyRecord, KeyTransition, MigrationStatus, OperatorTokenReads,
    OperatorTokenWrites, PoolStatus, ReadTx, SigningKeyReads, SigningKeyWrites, Store, StoreError,
    TenantReads, TenantWrites, WriteTx,
};
use time::{Duration, OffsetDateTime};

/// A context on a fresh database, and handles to steer and observe it.
pub(crate) struct Harness {
    pub(crate) ctx: ManageContext,
    pub(crate) clock: Arc<TickingClock>,
    pub(crate) store: Arc<FaultyStore>,
}

/// A manual clock that also moves one millisecond every time it is read, so records written
/// one after another get strictly increasing, time-ordered ids (ids minted within the same
/// millisecond are ordered by their random part, i.e. not at all).
pub(crate) struct TickingClock(ManualClock);

impl TickingClock {
    /// Moves the clock.
    pub(crate) fn advance(&self, by: Duration) {
        self.0.advance(by);
    }
}

impl Clock for TickingClock {
    fn now(&self) -> OffsetDateTime {
        let now = self.0.now();
        self.0.advance(Duration::milliseconds(1));
        now
    }
}

/// The clock's start: deliberately not on a whole microsecond, so the tests see that what a use
/// case returns equals what the store gives back.
pub(crate) fn start_time() -> OffsetDateTime {
    OffsetDateTime::UNIX_EPOCH + Duration::days(20_780) + Duration::nanoseconds(123_456_789)
}

/// A harness on a fresh, migrated SQLite database.
pub(crate) async fn harness() -> Harness {
    let sqlite = svc_store_sqlite::testing::temp_store()
        .await
        .expect("temp store");
    let store = Arc::new(FaultyStore::new(Arc::new(sqlite)));
    let clock = Arc::new(TickingClock(ManualClock::new(start_time())));
    // The default deployment: DPoP on.
    let ctx = ManageContext::new(
        store.clone(),
        clock.clone(),
        Arc::new(SeededRandom::new(42)),
    )
    .with_dpop(true);
    Harness { ctx, clock, store }
}

/// A harness on a fresh, migrated PostgreSQL database (`SVCTEST_POSTGRES_URL`), dropped with
/// the harness, for the tests that run on both backends.
pub(crate) async fn pg_harness() -> Harness {
    let pg = svc_store_postgres::testing::migrated_store()
        .await
        .expect("PostgreSQL test database (SVCTEST_POSTGRES_URL)");
    let store = Arc::new(FaultyStore::new(Arc::new(pg)));
    let clock = Arc::new(TickingClock(ManualClock::new(start_time())));
    // The default deployment: DPoP on.
    let ctx = ManageContext::new(
        store.clone(),
        clock.clone(),
        Arc::new(SeededRandom::new(42)),
    )
    .with_dpop(true);
    Harness { ctx, clock, store }
}

/// The operator acting in control-plane tests.
pub(crate) fn operator() -> Actor {
    Actor::Operator(OperatorTokenId::parse("opt_01jd0000000000000000000000").unwrap())
}

/// The request facts every test passes.
pub(crate) fn meta() -> RequestMeta {
    RequestMeta {
        request_id: Some("req-7f3a".to_owned()),
        client_ip: Some("203.0.113.7".to_owned()),
    }
}

impl Harness {
    /// Creates a tenant as the operator.
    pub(crate) async fn tenant(&self, slug: &str) -> CreatedTenant {
        control_plane::create_tenant(
            &self.ctx,
            &operator(),
            &meta(),
            NewTenant {
                slug: slug.to_owned(),
                display_name: format!("Tenant {slug}"),
                signup_enabled: false,
                mfa_policy: svc_domain::MfaPolicy::Default,
            },
        )
        .await
        .expect("create tenant")
    }

    /// Every audit entry of `tenant`, newest first.
    pub(crate) async fn audit(&self, tenant: &TenantId) -> Vec<AuditEntry> {
        list_audit(
            &self.ctx,
            tenant,
            &AuditFilter::default(),
            None,
            None,
            Some(200),
        )
        .await
        .expect("list audit")
        .0
    }

    /// Every application of `tenant`.
    pub(crate) async fn applications(&self, tenant: &TenantId) -> Vec<Application> {
        applications::list(&self.ctx, tenant, None, None, Some(200))
            .await
            .expect("list applications")
            .0
    }

    /// Every tenant.
    pub(crate) async fn tenants(&self) -> Vec<Tenant> {
        control_plane::list_tenants(&self.ctx, None, None, Some(200))
            .await
            .expect("list tenants")
            .0
    }
}

/// The management application's own client, as the actor of tenant API calls.
pub(crate) fn client_actor(created: &CreatedTenant) -> Actor {
    Actor::Client(created.management_application.id.clone())
}

/// A confidential web application with code + refresh grants.
pub(crate) fn web_app() -> ApplicationInput {
    ApplicationInput {
        name: "Shop".to_owned(),
        redirect_uris: vec!["https://shop.example/callback".to_owned()],
        grant_types: vec![
            GrantType::AuthorizationCode.as_str().to_owned(),
            GrantType::RefreshToken.as_str().to_owned(),
        ],
        token_endpoint_auth_method: "client_secret_basic".to_owned(),
        allowed_scopes: vec!["openid".to_owned(), "offline_access".to_owned()],
        ..ApplicationInput::default()
    }
}

/// A public single-page application.
pub(crate) fn spa() -> ApplicationInput {
    ApplicationInput {
        name: "SPA".to_owned(),
        redirect_uris: vec!["https://spa.example/cb".to_owned()],
        grant_types: vec!["authorization_code".to_owned()],
        token_endpoint_auth_method: "none".to_owned(),
        allowed_scopes: vec!["openid".to_owned()],
        ..ApplicationInput::default()
    }
}

/// Wraps a store: counts the transactions opened, and makes the write named by
/// [`FaultyStore::fail_on`] fail as if the database went away.
pub(crate) struct FaultyStore {
    inner: Arc<dyn Store>,
    reads: AtomicUsize,
    writes: AtomicUsize,
    fail_on: std::sync::Mutex<Option<&'static str>>,
}

impl FaultyStore {
    fn new(inner: Arc<dyn Store>) -> Self {
        Self {
            inner,
            reads: AtomicUsize::new(0),
            writes: AtomicUsize::new(0),
            fail_on: std::sync::Mutex::new(None),
        }
    }

    /// Makes every later call of the named write method fail (`None` heals).
    pub(crate) fn fail_on(&self, method: Option<&'static str>) {
        *self.fail_on.lock().unwrap() = method;
    }

    /// How many transactions (read + write) were opened so far.
    pub(crate) fn transactions(&self) -> usize {
        self.reads.load(Ordering::SeqCst) + self.writes.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Store for FaultyStore {
    fn backend(&self) -> Backend {
        self.inner.backend()
    }
    async fn ping(&self) -> Result<(), StoreError> {
        self.inner.ping().await
    }
    fn pool_status(&self) -> PoolStatus {
        self.inner.pool_status()
    }
    async fn migration_status(&self) -> Result<MigrationStatus, StoreError> {
        self.inner.migration_status().await
    }
    async fn migrate(&self) -> Result<(), StoreError> {
        self.inner.migrate().await
    }
    async fn read(&self) -> Result<Box<dyn ReadTx>, StoreError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.inner.read().await
    }
    async fn read_once(&self) -> Result<Box<dyn ReadTx>, StoreError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.inner.read_once().await
    }
    async fn write(&self) -> Result<Box<dyn WriteTx>, StoreError> {
        self.writes.fetch_add(1, Ordering::SeqCst);
        let inner = self.inner.write().await?;
        let fail_on = *self.fail_on.lock().unwrap();
        Ok(Box::new(FaultyTx { inner, fail_on }))
    }
    async fn close(&self) {
        self.inner.close().await;
    }
}

/// A write transaction that fails the named write; its identity and grant ports are delegated
/// in `faulty_identity.rs`.
pub(crate) struct FaultyTx {
    pub(crate) inner: Box<dyn WriteTx>,
    pub(crate) fail_on: Option<&'static str>,
}

impl FaultyTx {
    pub(crate) fn check(&self, method: &'static str) -> Result<(), StoreError> {
        if self.fail_on == Some(method) {
            Err(StoreError::Unavailable(
                format!("injected failure in {method}").into(),
            ))
        } else {
            Ok(())
        }
    }
}

#[async_trait]
impl TenantReads for FaultyTx {
    async fn tenant_by_id(&mut self, id: &TenantId) -> Result<Option<Tenant>, StoreError> {
        self.inner.tenant_by_id(id).await
    }
    async fn tenant_by_slug(&mut self, slug: &TenantSlug) -> Result<Option<Tenant>, StoreError> {
        self.inner.tenant_by_slug(slug).await
    }
    async fn list_tenants(
        &mut self,
        after: Option<&TenantId>,
        order: svc_store::Order,
        limit: u32,
    ) -> Result<Vec<Tenant>, StoreError> {
        self.inner.list_tenants(after, order, limit).await
    }
}

#[async_trait]
impl TenantWrites for FaultyTx {
    async fn insert_tenant(&mut self, tenant: &Tenant) -> Result<(), StoreError> {
        self.check("insert_tenant")?;
        self.inner.insert_tenant(tenant).await
    }
    async fn tenant_for_update(&mut self, id: &TenantId) -> Result<Option<Tenant>, StoreError> {
        self.inner.tenant_for_update(id).await
    }
    async fn update_tenant(
        &mut self,
        tenant: &Tenant,
        read_at: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        self.check("update_tenant")?;
        self.inner.update_tenant(tenant, read_at).await
    }
    async fn delete_tenant(&mut self, id: &TenantId) -> Result<(), StoreError> {
        self.check("delete_tenant")?;
        self.inner.delete_tenant(id).await
    }
}

#[async_trait]
impl SigningKeyReads for FaultyTx {
    async fn signing_keys(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<SigningKeyRecord>, StoreError> {
        self.inner.signing_keys(tenant).await
    }
}

#[async_trait]
impl SigningKeyWrites for FaultyTx {
    async fn lock_signing_keys(&mut self, tenant: &TenantId) -> Result<(), StoreError> {
        self.inner.lock_signing_keys(tenant).await
    }
    async fn insert_signing_key(&mut self, key: &SigningKeyRecord) -> Result<(), StoreError> {
        self.inner.insert_signing_key(key).await
    }
    async fn transition_signing_key(
        &mut self,
        tenant: &TenantId,
        change: &KeyTransition,
    ) -> Result<(), StoreError> {
        self.inner.transition_signing_key(tenant, change).await
    }
    async fn delete_signing_key(&mut self, tenant: &TenantId, kid: &str) -> Result<(), StoreError> {
        self.inner.delete_signing_key(tenant, kid).await
    }
}

#[async_trait]
impl ApplicationReads for FaultyTx {
    async fn application(
        &mut self,
        tenant: &TenantId,
        id: &ClientId,
    ) -> Result<Option<Application>, StoreError> {
        self.inner.application(tenant, id).await
    }
    async fn application_by_metadata_url(
        &mut self,
        tenant: &TenantId,
        url: &str,
    ) -> Result<Option<Application>, StoreError> {
        self.inner.application_by_metadata_url(tenant, url).await
    }
    async fn list_applications(
        &mut self,
        tenant: &TenantId,
        after: Option<&ClientId>,
        order: svc_store::Order,
        limit: u32,
    ) -> Result<Vec<Application>, StoreError> {
        self.inner
            .list_applications(tenant, after, order, limit)
            .await
    }
    async fn application_detail_types(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<String>, StoreError> {
        self.inner.application_detail_types(tenant).await
    }
}

#[async_trait]
impl ApplicationWrites for FaultyTx {
    async fn insert_application(&mut self, app: &Application) -> Result<(), StoreError> {
        self.check("insert_application")?;
        self.inner.insert_application(app).await
    }
    async fn update_application(
        &mut self,
        app: &Application,
        read_at: OffsetDateTime,
    ) -> Result<svc_store::UpdateOutcome, StoreError> {
        self.check("update_application")?;
        self.inner.update_application(app, read_at).await
    }
    async fn delete_application(
        &mut self,
        tenant: &TenantId,
        id: &ClientId,
    ) -> Result<(), StoreError> {
        self.check("delete_application")?;
        self.inner.delete_application(tenant, id).await
    }
}

#[async_trait]
impl OperatorTokenReads for FaultyTx {
    async fn operator_token_by_hash(
        &mut self,
        hash: &SecretHash,
    ) -> Result<Option<OperatorToken>, StoreError> {
        self.inner.operator_token_by_hash(hash).await
    }
}

#[async_trait]
impl OperatorTokenWrites for FaultyTx {
    async fn insert_operator_token(&mut self, token: &OperatorToken) -> Result<(), StoreError> {
        self.check("insert_operator_token")?;
        self.inner.insert_operator_token(token).await
    }
}

#[async_trait]
impl AuditReads for FaultyTx {
    async fn list_audit(
        &mut self,
        tenant: &TenantId,
        filter: &AuditFilter,
        before: Option<&svc_domain::AuditEntryId>,
        order: svc_store::Order,
        limit: u32,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        self.inner
            .list_audit(tenant, filter, before, order, limit)
            .await
    }
}

#[async_trait]
impl AuditWrites for FaultyTx {
    async fn insert_audit(&mut self, entry: &AuditEntry) -> Result<(), StoreError> {
        self.check("insert_audit")?;
        self.inner.insert_audit(entry).await
    }
}

#[async_trait]
impl CoordinationWrites for FaultyTx {
    async fn idempotency_record(
        &mut self,
        scope: &str,
        key: &str,
        now: OffsetDateTime,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        self.inner.idempotency_record(scope, key, now).await
    }
    async fn claim_idempotency(&mut self, record: &IdempotencyRecord) -> Result<(), StoreError> {
        self.check("claim_idempotency")?;
        self.inner.claim_idempotency(record).await
    }
    async fn complete_idempotency(
        &mut self,
        scope: &str,
        key: &str,
        status: u16,
        body: &str,
    ) -> Result<(), StoreError> {
        self.inner
            .complete_idempotency(scope, key, status, body)
            .await
    }
    async fn release_idempotency(&mut self, scope: &str, key: &str) -> Result<(), StoreError> {
        self.inner.release_idempotency(scope, key).await
    }
    async fn use_assertion_id(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
        jti: &str,
        expires_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.inner
            .use_assertion_id(tenant, client, jti, expires_at, now)
            .await
    }
    async fn use_proof_id(
        &mut self,
        tenant: &TenantId,
        jkt: &str,
        jti: &str,
        expires_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.inner
            .use_proof_id(tenant, jkt, jti, expires_at, now)
            .await
    }
    async fn use_agent_challenge(
        &mut self,
        tenant: &TenantId,
        agent: &svc_domain::AgentId,
        id: &str,
        expires_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.inner
            .use_agent_challenge(tenant, agent, id, expires_at, now)
            .await
    }
    async fn purge_expired(&mut self, now: OffsetDateTime, limit: u64) -> Result<u64, StoreError> {
        self.inner.purge_expired(now, limit).await
    }
}

#[async_trait]
impl WriteTx for FaultyTx {
    async fn commit(self: Box<Self>) -> Result<(), StoreError> {
        self.inner.commit().await
    }
}
