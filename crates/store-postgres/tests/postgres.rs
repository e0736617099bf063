//! PostgreSQL-specific behaviour: per-connection timeouts, pool limits, lazy connection to a
//! server that is down, migration status, `require_ssl`, URL errors that never leak the
//! password, error mapping, the signing keys' per-tenant advisory lock, and the decoding of
//! application rows.

use sqlx::postgres::PgSslMode;
use std::error::Error as _;
use std::sync::Arc;
use std::time::{Duration, Instant};
use svc_domain::{KeyState, SealedPrivateKey, SigningAlg, SigningKeyRecord, Tenant};
use svc_store::conformance::{application_fixture, tenant_fixture};
use svc_store::{KeyTransition, PoolSettings, Store, StoreError};
use svc_store_postgres::PgStore;
use svc_store_postgres::testing::{fresh_database, fresh_store, migrated_store, test_settings};

const PASSWORD: &str = "hunter2-s3cret";

async fn insert(store: &dyn Store, tenant: &svc_domain::Tenant) -> Result<(), StoreError> {
    let mut tx = store.write().await?;
    tx.insert_tenant(tenant).await?;
    tx.commit().await
}

/// Everything an operator could see of an error: Display, Debug and every source.
fn everything_said(err: &StoreError) -> String {
    let mut text = format!("{err} / {err:?}");
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(&format!(" / {s} / {s:?}"));
        source = s.source();
    }
    text
}

fn expect_config_error(result: Result<PgStore, StoreError>, what: &str) -> String {
    let err = result.err();
    assert!(
        matches!(err, Some(StoreError::Unavailable(_))),
        "{what}: expected a configuration error, got {err:?}"
    );
    let said = err.map(|e| everything_said(&e)).unwrap_or_default();
    assert!(!said.contains(PASSWORD), "{what}: password leaked: {said}");
    said
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_pooled_connection_has_the_configured_timeouts() {
    let settings = PoolSettings {
        max_connections: 3,
        statement_timeout: Some(Duration::from_secs(7)),
        idle_in_transaction_timeout: Some(Duration::from_millis(45_500)),
        ..test_settings()
    };
    let store = fresh_store(&settings).await.expect("store");
    // Hold every connection at once, so each one of them is checked, not one reused three times.
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(store.pool().acquire().await.expect("connection"));
    }
    for conn in &mut held {
        let statement: String = sqlx::query_scalar("SHOW statement_timeout")
            .fetch_one(&mut **conn)
            .await
            .expect("show");
        assert_eq!(statement, "7s");
        let idle: String = sqlx::query_scalar("SHOW idle_in_transaction_session_timeout")
            .fetch_one(&mut **conn)
            .await
            .expect("show");
        assert_eq!(idle, "45500ms");
    }
    drop(held);
    assert_eq!(
        store.show_setting("statement_timeout").await.expect("show"),
        "7s"
    );
    store.close().await;
}

#[tokio::test]
async fn absent_timeouts_mean_no_cap() {
    let settings = PoolSettings {
        statement_timeout: None,
        idle_in_transaction_timeout: None,
        ..test_settings()
    };
    let store = fresh_store(&settings).await.expect("store");
    assert_eq!(
        store.show_setting("statement_timeout").await.expect("show"),
        "0"
    );
    assert_eq!(
        store
            .show_setting("idle_in_transaction_session_timeout")
            .await
            .expect("show"),
        "0"
    );
    store.close().await;
}

#[tokio::test]
async fn a_statement_over_the_timeout_is_cancelled_as_unavailable() {
    let settings = PoolSettings {
        statement_timeout: Some(Duration::from_millis(200)),
        ..test_settings()
    };
    let store = fresh_store(&settings).await.expect("store");
    let result = sqlx::query("SELECT pg_sleep(2)")
        .execute(store.pool())
        .await;
    let err = result.expect_err("statement_timeout cancels the sleep");
    assert_eq!(
        err.as_database_error().and_then(|e| e.code()).as_deref(),
        Some("57014"),
        "query_canceled: {err}"
    );
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pool_never_exceeds_its_maximum() {
    let settings = PoolSettings {
        max_connections: 2,
        connect_timeout: Duration::from_millis(500),
        ..test_settings()
    };
    let store = fresh_store(&settings).await.expect("store");
    let options = store.pool().options();
    assert_eq!(options.get_max_connections(), 2);
    assert_eq!(options.get_acquire_timeout(), Duration::from_millis(500));
    assert_eq!(options.get_idle_timeout(), settings.idle_timeout);
    assert_eq!(options.get_max_lifetime(), settings.max_lifetime);
    assert!(options.get_test_before_acquire());

    let held = [
        store.pool().acquire().await.expect("1"),
        store.pool().acquire().await.expect("2"),
    ];
    let started = Instant::now();
    match store.write().await {
        Err(StoreError::Unavailable(_)) => {}
        other => panic!(
            "expected Unavailable from an exhausted pool, got {:?}",
            other.err()
        ),
    }
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let status = store.pool_status();
    assert_eq!((status.size, status.max), (2, 2), "{status:?}");
    drop(held);
    store.ping().await.expect("a returned connection is reused");
    store.close().await;
}

#[tokio::test]
async fn connecting_to_a_server_that_is_down_succeeds_and_ping_fails_fast() {
    let settings = PoolSettings {
        connect_timeout: Duration::from_secs(1),
        ..PoolSettings::default()
    };
    let url = format!("postgres://svc:{PASSWORD}@127.0.0.1:1/svc");
    let store = PgStore::connect(&url, &settings)
        .await
        .expect("a lazy pool does not connect up front");
    let started = Instant::now();
    let err = store.ping().await.expect_err("nothing listens on port 1");
    let elapsed = started.elapsed();
    assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
    assert!(elapsed < Duration::from_secs(3), "ping took {elapsed:?}");
    let said = everything_said(&err);
    assert!(!said.contains(PASSWORD), "password leaked: {said}");
    assert!(matches!(
        store.read().await.err(),
        Some(StoreError::Unavailable(_))
    ));
    assert!(matches!(
        store.migration_status().await,
        Err(StoreError::Unavailable(_))
    ));
    let status = store.pool_status();
    assert_eq!(status.size, 0, "{status:?}");
    store.close().await;
}

#[tokio::test]
async fn migration_status_lists_everything_pending_on_an_empty_database() {
    let store = fresh_store(&test_settings()).await.expect("store");
    let before = store.migration_status().await.expect("status");
    assert!(before.pending.contains(&20261122000001), "{before:?}");
    assert!(before.pending.contains(&20261122000002), "{before:?}");
    assert!(before.pending.contains(&20261122000003), "{before:?}");
    assert!(before.unknown_applied.is_empty());
    let table: Option<String> = sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations')::text")
        .fetch_one(store.pool())
        .await
        .expect("regclass");
    assert_eq!(table, None, "migration_status must not create the table");

    store.migrate().await.expect("migrate");
    let after = store.migration_status().await.expect("status");
    assert!(after.is_current(), "{after:?}");
    assert!(after.unknown_applied.is_empty());

    // A version applied by a newer binary shows up as unknown.
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (29990101000000, 'from the future', true, '\\x00', 0)",
    )
    .execute(store.pool())
    .await
    .expect("fake a newer migration");
    let newer = store.migration_status().await.expect("status");
    assert_eq!(newer.unknown_applied, vec![29990101000000]);
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_migrating_at_once_all_succeed() {
    let (url, guard) = fresh_database().await.expect("database");
    let mut stores = Vec::new();
    for _ in 0..3 {
        // One connection each, so the connection that migrated is the one checked afterwards.
        let settings = PoolSettings {
            max_connections: 1,
            ..test_settings()
        };
        let store = PgStore::connect(&url, &settings).await.expect("connect");
        stores.push(std::sync::Arc::new(store));
    }
    let tasks: Vec<_> = stores
        .iter()
        .map(|store| {
            let store = store.clone();
            tokio::spawn(async move { store.migrate().await })
        })
        .collect();
    for task in tasks {
        task.await.expect("join").expect("concurrent migrate");
    }
    for store in &stores {
        assert!(store.migration_status().await.expect("status").is_current());
        // The migration connection went back with the configured statement_timeout.
        assert_eq!(
            store.show_setting("statement_timeout").await.expect("show"),
            "30s"
        );
        store.close().await;
    }
    guard.drop_database().await.expect("drop");
}

#[tokio::test]
async fn require_ssl_refuses_urls_that_allow_plaintext() {
    let settings = PoolSettings {
        require_ssl: true,
        ..test_settings()
    };
    for mode in ["disable", "allow", "prefer", "DISABLE"] {
        let url = format!("postgres://svc:{PASSWORD}@127.0.0.1:5432/svc?sslmode={mode}");
        let said = expect_config_error(PgStore::connect(&url, &settings).await, mode);
        assert!(said.contains("require_ssl"), "{said}");
    }
    // No sslmode: the backend requires TLS itself.
    let store = PgStore::connect("postgres://svc@127.0.0.1:5432/svc", &settings)
        .await
        .expect("connect");
    assert!(matches!(
        store.pool().connect_options().get_ssl_mode(),
        PgSslMode::Require
    ));
    store.close().await;
    // Stricter modes are kept.
    let store = PgStore::connect(
        "postgres://svc@127.0.0.1:5432/svc?sslmode=verify-full",
        &settings,
    )
    .await
    .expect("connect");
    assert!(matches!(
        store.pool().connect_options().get_ssl_mode(),
        PgSslMode::VerifyFull
    ));
    store.close().await;
    // Without require_ssl, the URL decides.
    let store = PgStore::connect(
        "postgres://svc@127.0.0.1:5432/svc?sslmode=disable",
        &test_settings(),
    )
    .await
    .expect("connect");
    assert!(matches!(
        store.pool().connect_options().get_ssl_mode(),
        PgSslMode::Disable
    ));
    store.close().await;
}

#[tokio::test]
async fn malformed_urls_are_explained_without_the_password() {
    let cases = [
        (
            format!("postgres://svc:{PASSWORD}@127.0.0.1:notaport/svc"),
            "port",
        ),
        (
            format!("mysql://svc:{PASSWORD}@127.0.0.1:5432/svc"),
            "scheme",
        ),
        (
            format!("postgres://svc:{PASSWORD}@127.0.0.1:5432/svc?sslmode=sometimes"),
            "sometimes",
        ),
        (
            format!("postgres://svc:{PASSWORD}@127.0.0.1:5432/svc?hostaddr=nonsense"),
            "address",
        ),
        ("not a url at all".to_owned(), "URL"),
    ];
    for (url, mentions) in cases {
        let said = expect_config_error(PgStore::connect(&url, &test_settings()).await, mentions);
        assert!(said.contains(mentions), "{mentions}: {said}");
    }
}

#[tokio::test]
async fn conflicts_name_the_constraint() {
    let store = migrated_store().await.expect("store");
    let tenant = tenant_fixture("acme", 1);
    insert(&store, &tenant).await.expect("insert");
    match insert(&store, &tenant_fixture("acme", 2)).await {
        Err(StoreError::Conflict { constraint }) => assert_eq!(constraint, "tenants_slug_key"),
        other => panic!("expected a slug conflict, got {other:?}"),
    }
    let mut same_id = tenant_fixture("other", 3);
    same_id.id = tenant.id.clone();
    match insert(&store, &same_id).await {
        Err(StoreError::Conflict { constraint }) => assert_eq!(constraint, "tenants_pkey"),
        other => panic!("expected a primary key conflict, got {other:?}"),
    }
    store.close().await;
}

#[tokio::test]
async fn undecodable_rows_are_corrupt() {
    let store = migrated_store().await.expect("store");
    sqlx::query(
        "INSERT INTO tenants (id, slug, display_name, status, pairwise_secret, created_at, \
         updated_at) VALUES ('not-an-id', 'broken', 'Broken', 'active', \
         decode(repeat('00', 32), 'hex'), now(), now())",
    )
    .execute(store.pool())
    .await
    .expect("tamper");
    let mut read = store.read().await.expect("read");
    let slug = svc_domain::TenantSlug::parse("broken").expect("slug");
    match read.tenant_by_slug(&slug).await {
        Err(StoreError::Corrupt(why)) => assert!(why.contains("tenants.id"), "{why}"),
        other => panic!("expected Corrupt, got {other:?}"),
    }
    read.finish().await.expect("finish");
    store.close().await;
}

#[tokio::test]
async fn a_test_database_is_dropped_with_its_store() {
    let store = migrated_store().await.expect("store");
    let name: String = sqlx::query_scalar("SELECT current_database()")
        .fetch_one(store.pool())
        .await
        .expect("name");
    assert!(name.starts_with("svc_test_"), "{name}");
    store.close().await;

    let (admin_url, admin_guard) = fresh_database().await.expect("database");
    let admin = PgStore::connect(&admin_url, &test_settings())
        .await
        .expect("connect");
    let exists: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
            .bind(&name)
            .fetch_one(admin.pool())
            .await
            .expect("query");
    assert!(!exists, "{name} should be gone");
    admin.close().await;
    drop(admin_guard); // the synchronous path of the guard
}

fn key_fixture(tenant: &Tenant, kid: &str, alg: SigningAlg, state: KeyState) -> SigningKeyRecord {
    SigningKeyRecord {
        tenant_id: tenant.id.clone(),
        kid: kid.to_owned(),
        alg,
        state,
        public_jwk: format!(r#"{{"kid":"{kid}"}}"#),
        sealed: SealedPrivateKey {
            wrapped_dek: vec![7; 40],
            ciphertext: vec![8; 120],
        },
        created_at: tenant.created_at,
        activates_at: tenant.created_at,
        retired_at: None,
        remove_after: None,
    }
}

async fn insert_key(store: &dyn Store, key: &SigningKeyRecord) -> Result<(), StoreError> {
    let mut tx = store.write().await?;
    tx.lock_signing_keys(&key.tenant_id).await?;
    tx.insert_signing_key(key).await?;
    tx.commit().await
}

async fn transition(
    store: &dyn Store,
    tenant: &Tenant,
    kid: &str,
    from: KeyState,
    to: KeyState,
) -> Result<(), StoreError> {
    let mut tx = store.write().await?;
    tx.lock_signing_keys(&tenant.id).await?;
    let change = KeyTransition {
        kid: kid.to_owned(),
        from,
        to,
        activates_at: None,
        retired_at: None,
        remove_after: None,
    };
    tx.transition_signing_key(&tenant.id, &change).await?;
    tx.commit().await
}

fn constraint_of(result: Result<(), StoreError>) -> Option<String> {
    match result {
        Err(StoreError::Conflict { constraint }) => Some(constraint),
        _ => None,
    }
}

/// Advisory locks currently granted in the store's database, as another session sees them.
async fn advisory_locks_held(store: &PgStore) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database \
         WHERE l.locktype = 'advisory' AND l.granted AND d.datname = current_database()",
    )
    .fetch_one(store.pool())
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lock_signing_keys_serialises_one_tenant_and_not_others() {
    let store = Arc::new(migrated_store().await.expect("store"));
    let acme = tenant_fixture("acme", 1).id;
    let other = tenant_fixture("other", 2).id;

    let mut first = store.write().await.expect("first writer");
    first.lock_signing_keys(&acme).await.expect("lock acme");
    assert_eq!(advisory_locks_held(&store).await.expect("pg_locks"), 1);

    // A second transaction for the same tenant waits for the first to end...
    let waiting = {
        let store = store.clone();
        let acme = acme.clone();
        tokio::spawn(async move {
            let mut second = store.write().await?;
            second.lock_signing_keys(&acme).await?;
            second.commit().await
        })
    };
    // ...while one for another tenant does not.
    let mut unrelated = store.write().await.expect("unrelated writer");
    tokio::time::timeout(Duration::from_secs(2), unrelated.lock_signing_keys(&other))
        .await
        .expect("another tenant's lock does not wait")
        .expect("lock other");
    unrelated.commit().await.expect("commit unrelated");

    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !waiting.is_finished(),
        "the second writer of the same tenant must wait for the lock"
    );
    first.commit().await.expect("commit first");
    tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("the second writer proceeds once the first committed")
        .expect("join")
        .expect("second writer");
    assert_eq!(
        advisory_locks_held(&store).await.expect("pg_locks"),
        0,
        "transaction-scoped: nothing outlives the transactions"
    );

    // A rollback (dropping the transaction) releases the lock as well.
    let mut dropped = store.write().await.expect("writer");
    dropped.lock_signing_keys(&acme).await.expect("lock");
    drop(dropped);
    let mut next = store.write().await.expect("writer");
    tokio::time::timeout(Duration::from_secs(5), next.lock_signing_keys(&acme))
        .await
        .expect("released by the rollback")
        .expect("lock");
    next.commit().await.expect("commit");
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_the_key_lock_is_bounded_by_statement_timeout() {
    let settings = PoolSettings {
        statement_timeout: Some(Duration::from_millis(300)),
        ..test_settings()
    };
    let store = fresh_store(&settings).await.expect("store");
    store.migrate().await.expect("migrate");
    let acme = tenant_fixture("acme", 1).id;
    let mut holder = store.write().await.expect("writer");
    holder.lock_signing_keys(&acme).await.expect("lock");
    let mut waiter = store.write().await.expect("writer");
    let started = Instant::now();
    match waiter.lock_signing_keys(&acme).await {
        Err(StoreError::Unavailable(_)) => {}
        other => panic!("expected Unavailable after statement_timeout, got {other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    drop(waiter);
    holder.commit().await.expect("commit");
    store.close().await;
}

#[tokio::test]
async fn signing_key_conflicts_name_the_constraint() {
    let store = migrated_store().await.expect("store");
    let acme = tenant_fixture("acme", 1);
    insert(&store, &acme).await.expect("tenant");
    let es = SigningAlg::Es256;
    insert_key(&store, &key_fixture(&acme, "a1", es, KeyState::Active))
        .await
        .expect("active");
    insert_key(&store, &key_fixture(&acme, "n1", es, KeyState::Next))
        .await
        .expect("next");
    insert_key(&store, &key_fixture(&acme, "r1", es, KeyState::Retired))
        .await
        .expect("retired");

    let second_active = key_fixture(&acme, "a2", es, KeyState::Active);
    assert_eq!(
        constraint_of(insert_key(&store, &second_active).await).as_deref(),
        Some("signing_keys_one_active")
    );
    let second_next = key_fixture(&acme, "n2", es, KeyState::Next);
    assert_eq!(
        constraint_of(insert_key(&store, &second_next).await).as_deref(),
        Some("signing_keys_one_next")
    );
    let promote_early = transition(&store, &acme, "n1", KeyState::Next, KeyState::Active).await;
    assert_eq!(
        constraint_of(promote_early).as_deref(),
        Some("signing_keys_one_active")
    );
    let announce_twice = transition(&store, &acme, "r1", KeyState::Retired, KeyState::Next).await;
    assert_eq!(
        constraint_of(announce_twice).as_deref(),
        Some("signing_keys_one_next")
    );

    let same_kid = key_fixture(&acme, "a1", SigningAlg::Rs256, KeyState::Retired);
    assert_eq!(
        constraint_of(insert_key(&store, &same_kid).await).as_deref(),
        Some("signing_keys_pkey")
    );
    let nobody = tenant_fixture("nobody", 2);
    let orphan = key_fixture(&nobody, "o1", es, KeyState::Active);
    assert_eq!(
        constraint_of(insert_key(&store, &orphan).await).as_deref(),
        Some("signing_keys_tenant_id_fkey")
    );
    store.close().await;
}

#[tokio::test]
async fn signing_keys_are_ordered_by_creation_then_kid() {
    let store = migrated_store().await.expect("store");
    let acme = tenant_fixture("acme", 1);
    insert(&store, &acme).await.expect("tenant");
    let base = time::OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_000);
    let at = |millis: i64, kid: &str| SigningKeyRecord {
        created_at: base + time::Duration::milliseconds(millis),
        ..key_fixture(&acme, kid, SigningAlg::Es256, KeyState::Retired)
    };
    // "Z" < "a" bytewise, whatever the database's locale says.
    for key in [
        at(500, "c"),
        at(250, "b"),
        at(0, "a"),
        at(0, "Z"),
        at(1000, "d"),
    ] {
        insert_key(&store, &key).await.expect("insert");
    }
    let mut read = store.read().await.expect("read");
    let kids: Vec<String> = read
        .signing_keys(&acme.id)
        .await
        .expect("keys")
        .into_iter()
        .map(|k| k.kid)
        .collect();
    assert_eq!(kids, ["Z", "a", "b", "c", "d"]);
    read.finish().await.expect("finish");
    store.close().await;
}

#[tokio::test]
async fn undecodable_signing_keys_are_corrupt() {
    let store = migrated_store().await.expect("store");
    let acme = tenant_fixture("acme", 1);
    insert(&store, &acme).await.expect("tenant");
    // Only tampering past the CHECK constraints can store an unknown value.
    for check in ["signing_keys_alg_check", "signing_keys_state_check"] {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "ALTER TABLE signing_keys DROP CONSTRAINT {check}"
        )))
        .execute(store.pool())
        .await
        .expect("drop check");
    }
    for (kid, alg, state) in [("k1", "HS256", "active"), ("k2", "ES256", "revoked")] {
        sqlx::query(
            "INSERT INTO signing_keys (tenant_id, kid, alg, state, public_jwk, wrapped_dek, \
             ciphertext, created_at, activates_at) \
             VALUES ($1, $2, $3, $4, '{}', '\\x00', '\\x00', now(), now())",
        )
        .bind(acme.id.as_str())
        .bind(kid)
        .bind(alg)
        .bind(state)
        .execute(store.pool())
        .await
        .expect("tamper");
    }
    let mut read = store.read().await.expect("read");
    match read.signing_keys(&acme.id).await {
        Err(StoreError::Corrupt(why)) => assert!(why.contains("signing_keys.alg"), "{why}"),
        other => panic!("expected Corrupt, got {other:?}"),
    }
    read.finish().await.expect("finish");
    let mut tx = store.write().await.expect("write");
    tx.delete_signing_key(&acme.id, "k1").await.expect("delete");
    match tx.signing_keys(&acme.id).await {
        Err(StoreError::Corrupt(why)) => assert!(why.contains("signing_keys.state"), "{why}"),
        other => panic!("expected Corrupt, got {other:?}"),
    }
    drop(tx);
    store.close().await;
}

#[tokio::test]
async fn deleting_a_tenant_deletes_its_signing_keys() {
    let store = migrated_store().await.expect("store");
    let acme = tenant_fixture("acme", 1);
    let other = tenant_fixture("other", 2);
    insert(&store, &acme).await.expect("tenant");
    insert(&store, &other).await.expect("tenant");
    for tenant in [&acme, &other] {
        insert_key(
            &store,
            &key_fixture(tenant, "k", SigningAlg::Es256, KeyState::Active),
        )
        .await
        .expect("key");
    }
    sqlx::query("DELETE FROM tenants WHERE id = $1")
        .bind(acme.id.as_str())
        .execute(store.pool())
        .await
        .expect("delete tenant");
    let mut read = store.read().await.expect("read");
    assert!(read.signing_keys(&acme.id).await.expect("keys").is_empty());
    assert_eq!(read.signing_keys(&other.id).await.expect("keys").len(), 1);
    read.finish().await.expect("finish");
    store.close().await;
}

#[tokio::test]
async fn undecodable_applications_are_corrupt() {
    let store = migrated_store().await.expect("store");
    let acme = tenant_fixture("acme", 1);
    insert(&store, &acme).await.expect("tenant");
    let good = application_fixture(&acme, 10);
    let bad_uri = application_fixture(&acme, 11);
    let bad_grant = application_fixture(&acme, 12);
    let mut tx = store.write().await.expect("write");
    for app in [&good, &bad_uri, &bad_grant] {
        tx.insert_application(app).await.expect("insert");
    }
    tx.commit().await.expect("commit");
    // Valid jsonb arrays, but values the domain refuses: only tampering can store them.
    for (id, column, value) in [
        (&bad_uri.id, "redirect_uris", r#"["javascript:alert(1)"]"#),
        (&bad_grant.id, "grant_types", r#"["password"]"#),
    ] {
        let sql = format!("UPDATE applications SET {column} = $1::jsonb WHERE id = $2");
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(value)
            .bind(id.as_str())
            .execute(store.pool())
            .await
            .expect("tamper");
    }
    let mut read = store.read().await.expect("read");
    assert!(
        read.application(&acme.id, &good.id)
            .await
            .expect("read")
            .is_some()
    );
    for (id, column) in [
        (&bad_uri.id, "applications.redirect_uris"),
        (&bad_grant.id, "applications.grant_types"),
    ] {
        match read.application(&acme.id, id).await {
            Err(StoreError::Corrupt(why)) => assert!(why.contains(column), "{why}"),
            other => panic!("expected Corrupt, got {other:?}"),
        }
    }
    match read
        .list_applications(&acme.id, None, svc_store::Order::Ascending, 10)
        .await
    {
        Err(StoreError::Corrupt(_)) => {}
        other => panic!("expected Corrupt, got {other:?}"),
    }
    read.finish().await.expect("finish");
    // The schema refuses a list column that is not an array.
    let refused = sqlx::query("UPDATE applications SET grant_types = '{}'::jsonb WHERE id = $1")
        .bind(good.id.as_str())
        .execute(store.pool())
        .await;
    assert!(refused.is_err());
    store.close().await;
}

/// Tenants that existed before the identity migration get a random 32-byte pairwise secret each,
/// sign-up off, and their applications an empty list of post-logout redirect URIs.
#[tokio::test]
async fn the_identity_migration_gives_existing_tenants_random_secrets() {
    let store = fresh_store(&test_settings()).await.expect("store");
    for earlier in [
        include_str!("../migrations/20261122000001_tenants.sql"),
        include_str!("../migrations/20261122000002_signing_keys.sql"),
        include_str!("../migrations/20261122000003_applications_audit.sql"),
    ] {
        sqlx::raw_sql(earlier)
            .execute(store.pool())
            .await
            .expect("earlier migration");
    }
    sqlx::raw_sql(
        "INSERT INTO tenants (id, slug, display_name, status, created_at, updated_at) VALUES \
         ('ten_01jd0000000000000000000001', 'a', 'A', 'active', now(), now()), \
         ('ten_01jd0000000000000000000002', 'b', 'B', 'active', now(), now()); \
         INSERT INTO applications (id, tenant_id, name, redirect_uris, grant_types, \
          token_endpoint_auth_method, allowed_scopes, first_party, id_token_signed_response_alg, \
          is_management, created_at, updated_at) VALUES ('app_01jd0000000000000000000001', \
          'ten_01jd0000000000000000000001', 'App', '[]', '[]', 'none', '[]', false, 'RS256', \
          false, now(), now())",
    )
    .execute(store.pool())
    .await
    .expect("existing rows");
    sqlx::raw_sql(include_str!("../migrations/20261122000004_identity.sql"))
        .execute(store.pool())
        .await
        .expect("identity migration");

    let rows: Vec<(Vec<u8>, bool)> =
        sqlx::query_as("SELECT pairwise_secret, signup_enabled FROM tenants ORDER BY id")
            .fetch_all(store.pool())
            .await
            .expect("tenants");
    assert_eq!(rows.len(), 2);
    for (secret, signup) in &rows {
        assert_eq!(secret.len(), 32);
        assert!(!signup);
    }
    assert_ne!(rows[0].0, rows[1].0, "one secret per tenant");
    let uris: String =
        sqlx::query_scalar("SELECT post_logout_redirect_uris::text FROM applications")
            .fetch_one(store.pool())
            .await
            .expect("applications");
    assert_eq!(uris, "[]");
    store.close().await;
}

/// A caller that goes away in the middle of `BEGIN` (a client disconnecting, a timeout) leaves
/// no transaction behind on the pooled connection: on a one-connection pool, hundreds of read
/// transactions abandoned at every possible point are followed by writes that succeed (a leaked
/// `READ ONLY` transaction would refuse them) and are visible to others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoning_a_transaction_while_it_begins_never_poisons_the_pool() {
    let settings = PoolSettings {
        max_connections: 1,
        ..test_settings()
    };
    let store = fresh_store(&settings).await.expect("store");
    store.migrate().await.expect("migrate");
    for round in 0..300u64 {
        // Poll `read()` a few times, then drop it: the cancellation lands before, during or
        // after the BEGIN round trip depending on the round.
        // Owned (boxed), so dropping it really ends it.
        let mut read = store.read();
        for _ in 0..(round % 4) {
            // A finished future must not be polled again: stop once BEGIN has completed (the
            // transaction it yields is then dropped, which is the "after" case).
            if let std::task::Poll::Ready(begun) = futures_util::poll!(read.as_mut()) {
                drop(begun);
                break;
            }
            tokio::task::yield_now().await;
        }
        drop(read);
        if round % 50 == 49 {
            let tenant = tenant_fixture(&format!("round{round}"), round);
            insert(&store, &tenant)
                .await
                .unwrap_or_else(|e| panic!("write after round {round}: {}", everything_said(&e)));
            let other = migrated_store_on(&store).await;
            let mut read = other.read().await.expect("read");
            assert!(read.tenant_by_id(&tenant.id).await.expect("read").is_some());
            drop(read);
            other.close().await;
        }
    }
    store.close().await;
}

/// Another pool on the same database as `store`.
#[allow(clippy::expect_used)] // a test helper: failing loudly is the point
async fn migrated_store_on(store: &PgStore) -> PgStore {
    let options = store.pool().connect_options();
    let url = format!(
        "postgres://postgres@127.0.0.1:{}/{}",
        options.get_port(),
        options.get_database().unwrap_or_default()
    );
    PgStore::connect(&url, &test_settings())
        .await
        .expect("second pool")
}

/// The management-scope migration on data written by the schema before it.
#[tokio::test]
async fn the_management_scope_migration_keeps_only_served_scopes() {
    let store = fresh_store(&test_settings()).await.expect("store");
    svc_store_postgres::testing::migrate_to(&store, 20261122000005)
        .await
        .expect("migrate to the version before");
    let pool = store.pool().clone();
    let store: Arc<dyn Store> = Arc::new(store);
    svc_store::conformance::management_scopes_shrink_to_the_served_ones(
        store.clone(),
        async |apps: &[svc_domain::Application]| {
            for app in apps {
                insert_application_before_assurance(&pool, app).await;
            }
        },
    )
    .await;
    store.close().await;
}

/// Stores `app` with the columns `applications` had before `20261123000004_assurance` (no
/// `minimum_acr`), encoded as the repository encodes them.
#[allow(clippy::expect_used)] // a test helper: failing loudly is the point
async fn insert_application_before_assurance(pool: &sqlx::PgPool, app: &svc_domain::Application) {
    let strings = |items: Vec<&str>| svc_store_sql::encode_strings(items).expect("json");
    sqlx::query(
        "INSERT INTO applications (id, tenant_id, name, redirect_uris, grant_types, \
         token_endpoint_auth_method, allowed_scopes, secret_hash, api_audience, first_party, \
         id_token_signed_response_alg, jwks, jwks_uri, is_management, created_at, updated_at, \
         post_logout_redirect_uris) \
         VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7::jsonb, $8, $9, $10, $11, $12, $13, \
         $14, $15, $16, $17::jsonb)",
    )
    .bind(app.id.as_str())
    .bind(app.tenant_id.as_str())
    .bind(app.name.as_str())
    .bind(strings(
        app.redirect_uris.iter().map(|u| u.as_str()).collect(),
    ))
    .bind(strings(
        app.grant_types.iter().map(|g| g.as_str()).collect(),
    ))
    .bind(app.token_endpoint_auth_method.as_str())
    .bind(svc_store_sql::encode_scopes(&app.allowed_scopes).expect("json"))
    .bind(app.secret_hash.as_ref().map(|h| h.as_bytes().to_vec()))
    .bind(app.api_audience.as_deref())
    .bind(app.first_party)
    .bind(app.id_token_signed_response_alg.as_str())
    .bind(app.jwks.as_deref())
    .bind(app.jwks_uri.as_deref())
    .bind(app.is_management)
    .bind(app.created_at)
    .bind(app.updated_at)
    .bind(strings(
        app.post_logout_redirect_uris
            .iter()
            .map(|u| u.as_str())
            .collect(),
    ))
    .execute(pool)
    .await
    .expect("an application in the schema before 20261123000004");
}

/// The assurance migration on login history written by the schema before it: the rows stay,
/// the checks are replaced under the same names, and the indexes are untouched.
#[tokio::test]
async fn the_assurance_migration_widens_the_login_history_checks() {
    let store = fresh_store(&test_settings()).await.expect("store");
    svc_store_postgres::testing::migrate_to(&store, 20261123000003)
        .await
        .expect("migrate to the version before");
    let pool = store.pool().clone();
    let catalogue = |pool: sqlx::PgPool| async move {
        let constraints: Vec<String> = sqlx::query_scalar(
            "SELECT conname::text FROM pg_constraint \
             WHERE conrelid = 'login_history'::regclass ORDER BY conname",
        )
        .fetch_all(&pool)
        .await
        .expect("constraints");
        let indexes: Vec<String> = sqlx::query_scalar(
            "SELECT indexname::text FROM pg_indexes WHERE tablename = 'login_history' \
             ORDER BY indexname",
        )
        .fetch_all(&pool)
        .await
        .expect("indexes");
        (constraints, indexes)
    };
    let before = catalogue(pool.clone()).await;
    let store: Arc<dyn Store> = Arc::new(store);
    svc_store::conformance::login_history_survives_the_assurance_migration(store.clone()).await;
    // The later migrations rename indexes of their own (20261127000049): what the tables must
    // have is what a database migrated from empty has.
    let from_empty = migrated_store().await.expect("a store migrated from empty");
    assert_eq!(
        catalogue(pool.clone()).await.0,
        before.0,
        "the same constraint names"
    );
    assert_eq!(
        catalogue(pool.clone()).await,
        catalogue(from_empty.pool().clone()).await,
        "the same constraint and index names"
    );

    let zed = tenant_fixture("zed", 5);
    insert(store.as_ref(), &zed).await.expect("tenant");
    for (method, result, check) in [
        ("sms", "success", "login_history_method_check"),
        ("password_totp", "maybe", "login_history_result_check"),
    ] {
        let refused = sqlx::query(
            "INSERT INTO login_history (id, tenant_id, user_id, occurred_at, method, result) \
             VALUES ('lgn_01jd0000000000000000000001', $1, 'usr_01jd0000000000000000000001', \
             now(), $2, $3)",
        )
        .bind(zed.id.as_str())
        .bind(method)
        .bind(result)
        .execute(&pool)
        .await
        .expect_err("refused");
        assert!(refused.to_string().contains(check), "{check}: {refused}");
    }
    store.close().await;
}

/// The passkeys migration on second factors and login history written by the schema before it:
/// the rows stay, the checks are replaced under the same names, the indexes are untouched, and
/// the wider checks still refuse what nobody writes.
#[tokio::test]
async fn the_passkeys_migration_widens_the_factor_and_login_history_checks() {
    let store = fresh_store(&test_settings()).await.expect("store");
    svc_store_postgres::testing::migrate_to(&store, 20261123000004)
        .await
        .expect("migrate to the version before");
    let pool = store.pool().clone();
    let catalogue = |pool: sqlx::PgPool| async move {
        let constraints: Vec<String> = sqlx::query_scalar(
            "SELECT conrelid::regclass::text || '.' || conname::text FROM pg_constraint \
             WHERE conrelid IN ('login_history'::regclass, 'second_factors'::regclass) \
             ORDER BY 1",
        )
        .fetch_all(&pool)
        .await
        .expect("constraints");
        let indexes: Vec<String> = sqlx::query_scalar(
            "SELECT indexname::text FROM pg_indexes \
             WHERE tablename IN ('login_history', 'second_factors') ORDER BY indexname",
        )
        .fetch_all(&pool)
        .await
        .expect("indexes");
        (constraints, indexes)
    };
    let before = catalogue(pool.clone()).await;
    let store: Arc<dyn Store> = Arc::new(store);
    svc_store::conformance::factors_and_login_history_survive_the_passkeys_migration(store.clone())
        .await;
    // The later migrations rename indexes of their own (20261127000049): what the tables must
    // have is what a database migrated from empty has.
    let from_empty = migrated_store().await.expect("a store migrated from empty");
    assert_eq!(
        catalogue(pool.clone()).await.0,
        before.0,
        "the same constraint names"
    );
    assert_eq!(
        catalogue(pool.clone()).await,
        catalogue(from_empty.pool().clone()).await,
        "the same constraint and index names"
    );

    let zed = tenant_fixture("zed", 5);
    insert(store.as_ref(), &zed).await.expect("tenant");
    let refused = sqlx::query(
        "INSERT INTO second_factors (id, tenant_id, user_id, kind, label, sealed_secret, \
         created_at) VALUES ('mfa_01jd0000000000000000000001', $1, \
         'usr_01jd0000000000000000000001', 'sms', 'Phone', '\\x00', now())",
    )
    .bind(zed.id.as_str())
    .execute(&pool)
    .await
    .expect_err("refused");
    assert!(
        refused.to_string().contains("second_factors_kind_check"),
        "{refused}"
    );
    let refused = sqlx::query(
        "INSERT INTO login_history (id, tenant_id, user_id, occurred_at, method, result) \
         VALUES ('lgn_01jd0000000000000000000001', $1, 'usr_01jd0000000000000000000001', \
         now(), 'sms', 'success')",
    )
    .bind(zed.id.as_str())
    .execute(&pool)
    .await
    .expect_err("refused");
    assert!(
        refused.to_string().contains("login_history_method_check"),
        "{refused}"
    );
    store.close().await;
}

/// `database.listen_url`: the change feed listens on a connection to that URL (here as another
/// role, which `pg_stat_activity` shows), publishing stays on the pool, and a message published
/// through the pool reaches the listener.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_change_feed_listens_on_the_listen_url() {
    use svc_store::FeedEvent;
    const LISTENER: &str = "svc_test_feed_listener";
    let (url, guard) = fresh_database().await.expect("database");
    let admin = PgStore::connect(&url, &test_settings())
        .await
        .expect("admin store");
    // Roles belong to the server, not the database: create it once, tolerating a concurrent run.
    // The role name is a constant of this test.
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DO $$ BEGIN CREATE ROLE {LISTENER} LOGIN; \
         EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$"
    )))
    .execute(admin.pool())
    .await
    .expect("listener role");
    let mut listen_url = url::Url::parse(&url).expect("url");
    listen_url.set_username(LISTENER).expect("username");
    let store = PgStore::connect(&url, &test_settings())
        .await
        .expect("store")
        .listening_on(listen_url.as_str(), &test_settings())
        .expect("listen URL accepted");
    let feed = store
        .change_feed()
        .expect("a PostgreSQL store has a change feed");
    let mut subscription = feed.subscribe().await.expect("listening");
    let listeners: Vec<String> = sqlx::query_scalar(
        "SELECT usename::text FROM pg_stat_activity \
         WHERE datname = current_database() AND application_name = 'svc-change-feed'",
    )
    .fetch_all(admin.pool())
    .await
    .expect("sessions");
    assert_eq!(
        listeners,
        [LISTENER],
        "the listener's session is the listen URL's"
    );
    feed.publish("through the pool").await.expect("publish");
    let heard = tokio::time::timeout(Duration::from_secs(5), subscription.next())
        .await
        .expect("heard within 5 s")
        .expect("next");
    assert!(
        matches!(&heard, FeedEvent::Message(m) if m == "through the pool"),
        "got {heard:?}"
    );
    drop(subscription);
    store.close().await;
    admin.close().await;
    guard.drop_database().await.expect("drop");
}

/// A listen URL is checked like the pool's: `require_ssl` refuses `sslmode=disable`, and the
/// error never quotes the password.
#[tokio::test]
async fn a_listen_url_is_checked_like_the_pool_url() {
    let settings = PoolSettings {
        require_ssl: true,
        ..test_settings()
    };
    let store = PgStore::connect(
        "postgres://svc@127.0.0.1:5432/svc?sslmode=require",
        &settings,
    )
    .await
    .expect("lazy store");
    let refused = store
        .listening_on(
            &format!("postgres://svc:{PASSWORD}@127.0.0.1:5432/svc?sslmode=disable"),
            &settings,
        )
        .expect_err("refused");
    let said = everything_said(&refused);
    assert!(said.contains("require_ssl"), "{said}");
    assert!(!said.contains(PASSWORD), "the password leaked: {said}");
}
