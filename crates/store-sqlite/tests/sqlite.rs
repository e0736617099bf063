//! SQLite-specific behaviour: file creation, WAL and pragmas, readers beside a writer, writers
//! queuing for the lock, URL handling, migration status, and error mapping.

use std::sync::Arc;
use std::time::Duration;
use svc_store::conformance::tenant_fixture;
use svc_store::{PoolSettings, Store, StoreError};
use svc_store_sqlite::SqliteStore;
use svc_store_sqlite::testing::{temp_store, temp_store_unmigrated, test_settings};

async fn insert(store: &dyn Store, tenant: &svc_domain::Tenant) -> Result<(), StoreError> {
    let mut tx = store.write().await?;
    tx.insert_tenant(tenant).await?;
    tx.commit().await
}

#[tokio::test]
async fn open_creates_parent_directories_and_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("nested/deeper/svc.db");
    let store = SqliteStore::open(&path, &test_settings())
        .await
        .expect("open");
    assert!(path.is_file(), "database file created");
    store.migrate().await.expect("migrate");
    store.close().await;
}

#[tokio::test]
async fn connections_use_wal_normal_sync_foreign_keys_and_busy_timeout() {
    let settings = PoolSettings {
        connect_timeout: Duration::from_millis(2500),
        ..test_settings()
    };
    let store = temp_store_unmigrated(&settings).await.expect("store");
    let mut conn = store.pool().acquire().await.expect("connection");
    let journal: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut *conn)
        .await
        .expect("journal_mode");
    assert_eq!(journal, "wal");
    let synchronous: i64 = sqlx::query_scalar("PRAGMA synchronous")
        .fetch_one(&mut *conn)
        .await
        .expect("synchronous");
    assert_eq!(synchronous, 1, "NORMAL");
    let foreign_keys: i64 = sqlx::query_scalar("PRAGMA foreign_keys")
        .fetch_one(&mut *conn)
        .await
        .expect("foreign_keys");
    assert_eq!(foreign_keys, 1);
    let busy: i64 = sqlx::query_scalar("PRAGMA busy_timeout")
        .fetch_one(&mut *conn)
        .await
        .expect("busy_timeout");
    assert_eq!(busy, 2500);
    drop(conn);
    store.close().await;
}

#[tokio::test]
async fn pool_settings_take_effect() {
    let settings = PoolSettings {
        max_connections: 3,
        min_connections: 1,
        connect_timeout: Duration::from_millis(300),
        ..test_settings()
    };
    let store = temp_store_unmigrated(&settings).await.expect("store");
    let options = store.pool().options();
    assert_eq!(options.get_max_connections(), 3);
    assert_eq!(options.get_min_connections(), 1);
    assert_eq!(options.get_acquire_timeout(), Duration::from_millis(300));
    assert_eq!(options.get_idle_timeout(), settings.idle_timeout);
    assert_eq!(options.get_max_lifetime(), settings.max_lifetime);
    assert_eq!(store.pool_status().max, 3);

    // With every connection lent out, the next acquire gives up after the acquire timeout.
    let held = [
        store.pool().acquire().await.expect("1"),
        store.pool().acquire().await.expect("2"),
        store.pool().acquire().await.expect("3"),
    ];
    assert_eq!(store.pool_status().size, 3);
    match store.read().await {
        Err(StoreError::Unavailable(_)) => {}
        other => panic!(
            "expected Unavailable from an exhausted pool, got {:?}",
            other.err()
        ),
    }
    drop(held);
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_and_a_writer_at_the_same_time_do_not_fail() {
    let store = temp_store().await.expect("store");
    let first = tenant_fixture("first", 1);
    insert(&store, &first).await.expect("insert first");

    let mut read = store.read().await.expect("read");
    assert!(read.tenant_by_id(&first.id).await.expect("read").is_some());

    // A writer commits while the reader's snapshot is open: neither waits for the other.
    let second = tenant_fixture("second", 2);
    let mut write = store.write().await.expect("write while reading");
    write.insert_tenant(&second).await.expect("insert second");
    assert!(
        read.tenant_by_id(&first.id)
            .await
            .expect("read during write")
            .is_some()
    );
    write.commit().await.expect("commit while reading");

    // The reader keeps its snapshot; a new reader sees the commit.
    assert_eq!(read.tenant_by_id(&second.id).await.expect("read"), None);
    read.finish().await.expect("finish");
    let mut fresh = store.read().await.expect("fresh read");
    assert!(
        fresh
            .tenant_by_id(&second.id)
            .await
            .expect("read")
            .is_some()
    );
    fresh.finish().await.expect("finish");
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_writer_waits_for_the_first_instead_of_failing() {
    let store = Arc::new(temp_store().await.expect("store"));
    let mut first = store.write().await.expect("first writer");
    first
        .insert_tenant(&tenant_fixture("one", 1))
        .await
        .expect("insert");

    let waiting = {
        let store = store.clone();
        tokio::spawn(async move { insert(store.as_ref(), &tenant_fixture("two", 2)).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !waiting.is_finished(),
        "the second writer must wait for the write lock"
    );
    first.commit().await.expect("commit first");
    waiting
        .await
        .expect("join")
        .expect("second writer succeeds once the lock is free");

    let mut read = store.read().await.expect("read");
    assert_eq!(read.list_tenants(None, 10).await.expect("list").len(), 2);
    read.finish().await.expect("finish");
    store.close().await;
}

#[tokio::test]
async fn migration_status_lists_pending_before_and_nothing_after() {
    let store = temp_store_unmigrated(&test_settings())
        .await
        .expect("store");
    let before = store.migration_status().await.expect("status");
    assert!(before.pending.contains(&20261122000001), "{before:?}");
    assert!(before.unknown_applied.is_empty());
    assert!(!before.is_current());
    let tables: i64 = sqlx::query_scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table'")
        .fetch_one(store.pool())
        .await
        .expect("count tables");
    assert_eq!(tables, 0, "migration_status must not create anything");

    store.migrate().await.expect("migrate");
    let after = store.migration_status().await.expect("status");
    assert!(after.is_current(), "{after:?}");
    assert!(after.unknown_applied.is_empty());

    // A version applied by a newer binary shows up as unknown.
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (29990101000000, 'from the future', 1, x'00', 0)",
    )
    .execute(store.pool())
    .await
    .expect("fake a newer migration");
    let newer = store.migration_status().await.expect("status");
    assert_eq!(newer.unknown_applied, vec![29990101000000]);
    assert!(newer.is_current());
    store.close().await;
}

#[tokio::test]
async fn open_url_accepts_sqlite_urls_and_refuses_unusable_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().display().to_string();
    for url in [
        format!("sqlite://{base}/a/one.db"),
        format!("sqlite:{base}/b/two.db"),
        format!("sqlite://{base}/c/three.db?mode=rwc"),
    ] {
        let store = SqliteStore::open_url(&url, &test_settings())
            .await
            .unwrap_or_else(|e| panic!("{url}: {e:?}"));
        store.ping().await.expect("ping");
        store.close().await;
    }
    assert!(dir.path().join("a/one.db").is_file());
    assert!(dir.path().join("b/two.db").is_file());
    assert!(dir.path().join("c/three.db").is_file());

    for url in [
        "sqlite::memory:".to_owned(),
        format!("sqlite://{base}/x.db?mode=ro"),
        format!("sqlite://{base}/x.db?mode=memory"),
        format!("sqlite://{base}/x.db?bogus=1"),
        format!("postgres://{base}/x.db"),
        "sqlite://".to_owned(),
    ] {
        match SqliteStore::open_url(&url, &test_settings()).await {
            Err(StoreError::Unavailable(reason)) => {
                assert!(!reason.to_string().is_empty(), "{url}: a reason is given");
            }
            other => panic!("{url}: expected a configuration error, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn conflicts_name_the_constraint_like_postgresql() {
    let store = temp_store().await.expect("store");
    let tenant = tenant_fixture("acme", 1);
    insert(&store, &tenant).await.expect("insert");

    let same_slug = tenant_fixture("acme", 2);
    match insert(&store, &same_slug).await {
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
    let store = temp_store().await.expect("store");
    sqlx::query(
        "INSERT INTO tenants (id, slug, display_name, status, created_at, updated_at) \
         VALUES ('not-an-id', 'broken', 'Broken', 'active', '2026-01-01T00:00:00Z', 'yesterday')",
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
    match read.list_tenants(None, 10).await {
        Err(StoreError::Corrupt(_)) => {}
        other => panic!("expected Corrupt, got {other:?}"),
    }
    read.finish().await.expect("finish");
    store.close().await;
}
