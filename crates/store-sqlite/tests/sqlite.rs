//! SQLite-specific behaviour: file creation, WAL and pragmas, readers beside a writer, writers
//! queuing for the lock, URL handling, migration status, error mapping (including the signing
//! keys' partial indexes, which SQLite reports by column), signing keys ordered by instant
//! although stored as text, and expiry and audit time filters compared by instant too.

use std::sync::Arc;
use std::time::Duration;
use svc_domain::{KeyState, SealedPrivateKey, SigningAlg, SigningKeyRecord, Tenant};
use svc_store::conformance::{application_fixture, audit_fixture, tenant_fixture};
use svc_store::{AuditFilter, IdempotencyRecord, KeyTransition, PoolSettings, Store, StoreError};
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

/// A pragma's value on one of the connections transactions run on.
fn pragma<T: rusqlite::types::FromSql>(
    conn: &svc_store_sqlite::PooledConn,
    name: &str,
) -> rusqlite::Result<T> {
    conn.raw()
        .query_row(&format!("PRAGMA {name}"), [], |row| row.get(0))
}

#[tokio::test]
async fn connections_use_wal_normal_sync_foreign_keys_and_busy_timeout() {
    let settings = PoolSettings {
        connect_timeout: Duration::from_millis(2500),
        ..test_settings()
    };
    let store = temp_store_unmigrated(&settings).await.expect("store");
    // Two connections: the one opened with the store, and a new one.
    let first = store.connection().await.expect("connection");
    let second = store.connection().await.expect("connection");
    for conn in [&first, &second] {
        let int = |name| pragma::<i64>(conn, name).expect("pragma");
        assert_eq!(
            pragma::<String>(conn, "journal_mode").expect("pragma"),
            "wal"
        );
        assert_eq!(int("synchronous"), 1, "NORMAL");
        assert_eq!(int("foreign_keys"), 1);
        assert_eq!(int("busy_timeout"), 2500);
        // Checkpoints are the pool's thread's, off the request path.
        assert_eq!(int("wal_autocheckpoint"), 0);
    }
    drop((first, second));
    store.close().await;
}

/// `(mxFrame, nBackfill)` of the database's WAL index (the `-shm` file, native byte order): the
/// last frame in the WAL and how many frames a checkpoint has copied into the database
/// (sqlite.org/walformat.html, "The WAL-Index Header" and "The WAL-Index Checkpoint Info").
/// Read from the file, because asking SQLite (`PRAGMA wal_checkpoint`) would checkpoint.
fn wal_index(db: &std::path::Path) -> std::io::Result<(u32, u32)> {
    let mut shm = db.as_os_str().to_owned();
    shm.push("-shm");
    let bytes = std::fs::read(&shm)?;
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_ne_bytes)
            .ok_or_else(|| std::io::Error::other("the -shm file is too short"))
    };
    Ok((word(16)?, word(96)?))
}

/// The path of the store's database file, as SQLite reports it.
async fn database_file(store: &SqliteStore) -> Result<std::path::PathBuf, StoreError> {
    let conn = store.connection().await?;
    let file: String = conn
        .raw()
        .query_row(
            "SELECT file FROM pragma_database_list WHERE name = 'main'",
            [],
            |row| row.get(0),
        )
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    Ok(file.into())
}

#[tokio::test]
async fn the_checkpoint_thread_copies_the_wal_into_the_database() {
    let store = temp_store().await.expect("store");
    let db = database_file(&store).await.expect("database file");
    insert(&store, &tenant_fixture("checkpointed", 1))
        .await
        .expect("insert");
    // The connections never checkpoint (wal_autocheckpoint = 0, checked above), so only the
    // pool's thread can copy the commit's frames; it runs at least every second.
    let mut index = wal_index(&db).expect("WAL index");
    for _ in 0..40 {
        if index.0 > 0 && index.1 == index.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        index = wal_index(&db).expect("WAL index");
    }
    let (last, copied) = index;
    assert!(last > 0, "the commit is in the WAL");
    assert_eq!(copied, last, "every WAL frame copied into the database");
    store.close().await;
}

/// Under writes that never pause, the WAL must still start again from its beginning: a
/// checkpoint that never completes lets it grow by the whole write rate (it reached 1.2 GB in
/// 25 s of the bench's refresh rotations). Seen in the WAL index: the last frame number drops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wal_starts_again_under_steady_writes() {
    let store = Arc::new(temp_store().await.expect("store"));
    let db = database_file(&store).await.expect("database file");
    let writing = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let mut writers = Vec::new();
    for worker in 0..4_u64 {
        let (store, writing) = (Arc::clone(&store), Arc::clone(&writing));
        writers.push(tokio::spawn(async move {
            let mut n = 0_u64;
            while writing.load(std::sync::atomic::Ordering::Relaxed) {
                let seed = worker * 1_000_000 + n;
                insert(
                    store.as_ref(),
                    &tenant_fixture(&format!("steady-{seed}"), seed),
                )
                .await?;
                n += 1;
            }
            Ok::<u64, StoreError>(n)
        }));
    }
    let (mut previous, mut restarts, mut highest) = (0, 0, 0);
    for _ in 0..60 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (last, _) = wal_index(&db).expect("WAL index");
        if last < previous {
            restarts += 1;
        }
        previous = last;
        highest = highest.max(last);
        if restarts >= 2 {
            break;
        }
    }
    writing.store(false, std::sync::atomic::Ordering::Relaxed);
    let mut written = 0;
    for writer in writers {
        written += writer.await.expect("writer").expect("inserts");
    }
    assert!(
        written > 500,
        "the writers kept writing ({written} commits)"
    );
    assert!(
        restarts >= 2,
        "the WAL never started again under {written} commits (last frame up to {highest})"
    );
}

#[tokio::test]
async fn pool_settings_take_effect() {
    let settings = PoolSettings {
        max_connections: 3,
        connect_timeout: Duration::from_millis(300),
        ..test_settings()
    };
    let store = temp_store_unmigrated(&settings).await.expect("store");
    // Three readers and the writer.
    assert_eq!(store.pool_status().max, 4);
    // Opening the store checked the file with one connection, kept for the first loan.
    assert_eq!(store.pool_status().size, 1);
    assert_eq!(store.pool_status().idle, 1);

    // With every connection lent out, the next transaction gives up after the acquire timeout.
    let held = [
        store.read().await.expect("1"),
        store.read().await.expect("2"),
        store.read().await.expect("3"),
    ];
    assert_eq!(store.pool_status().size, 3);
    assert_eq!(store.pool_status().idle, 0);
    let started = std::time::Instant::now();
    match store.read().await {
        Err(StoreError::Unavailable(_)) => {}
        other => panic!(
            "expected Unavailable from an exhausted pool, got {:?}",
            other.err()
        ),
    }
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "waited for the timeout"
    );
    drop(held);
    // Returned, not closed: the next loans reuse them.
    assert_eq!(store.pool_status().idle, 3);
    store.read().await.expect("a connection again");

    // The writer is opened by the first write, beside the readers, and kept.
    let write = store.write().await.expect("a write with every reader idle");
    assert_eq!(store.pool_status().size, 4);
    assert_eq!(store.pool_status().idle, 3);
    drop(write);
    assert_eq!(store.pool_status().idle, 4);
    store.close().await;
}

/// Every write runs on the one writer connection, so its page cache outlives transactions.
#[tokio::test]
async fn writes_run_on_one_connection() {
    let store = temp_store().await.expect("store");
    let writer = store.write_connection().await.expect("writer");
    // A mark only this connection can see: a temporary table lives in its connection.
    writer
        .raw()
        .execute_batch("CREATE TEMP TABLE writer_mark (x)")
        .expect("temporary table");
    drop(writer);
    insert(&store, &tenant_fixture("between", 1))
        .await
        .expect("a write between");
    let writer = store.write_connection().await.expect("writer again");
    let marked: i64 = writer
        .raw()
        .query_row(
            "SELECT count(*) FROM temp.sqlite_schema WHERE name = 'writer_mark'",
            [],
            |row| row.get(0),
        )
        .expect("temporary schema");
    assert_eq!(marked, 1, "the same connection after another write");
    drop(writer);
    store.close().await;
}

#[tokio::test]
async fn a_dropped_transaction_is_rolled_back_before_its_connection_is_lent_again() {
    let settings = PoolSettings {
        max_connections: 1,
        ..test_settings()
    };
    let store = svc_store_sqlite::testing::temp_store_with(&settings)
        .await
        .expect("store");
    let tenant = tenant_fixture("dropped", 2);
    let mut tx = store.write().await.expect("write");
    tx.insert_tenant(&tenant).await.expect("insert");
    drop(tx);
    // The writer, lent again: outside any transaction, and the insert undone.
    let conn = store.write_connection().await.expect("writer");
    assert!(conn.raw().is_autocommit(), "no transaction left open");
    drop(conn);
    let mut read = store.read().await.expect("read");
    assert!(
        read.tenant_by_id(&tenant.id)
            .await
            .expect("lookup")
            .is_none(),
        "the dropped transaction's insert was rolled back"
    );
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
    assert_eq!(
        read.list_tenants(None, svc_store::Order::Ascending, 10)
            .await
            .expect("list")
            .len(),
        2
    );
    read.finish().await.expect("finish");
    store.close().await;
}

/// Many writers of this process queue for their turn (none fails, none is lost), and a writer
/// that would wait on its own open write transaction fails after the wait instead of hanging.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writers_of_one_process_take_turns_and_a_self_wait_gives_up() {
    let settings = PoolSettings {
        max_connections: 8,
        connect_timeout: Duration::from_millis(1_500),
        ..test_settings()
    };
    let store = Arc::new(
        svc_store_sqlite::testing::temp_store_unmigrated(&settings)
            .await
            .expect("store"),
    );
    store.migrate().await.expect("migrate");
    let writers = (0..40u64).map(|n| {
        let store = store.clone();
        tokio::spawn(async move {
            let mut tx = store.write().await?;
            tx.insert_tenant(&tenant_fixture(&format!("w{n}"), 100 + n))
                .await?;
            tokio::time::sleep(Duration::from_millis(5)).await;
            tx.commit().await
        })
    });
    for writer in writers.collect::<Vec<_>>() {
        writer
            .await
            .expect("join")
            .expect("every writer gets its turn");
    }
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.list_tenants(None, svc_store::Order::Ascending, 100)
            .await
            .expect("list")
            .len(),
        40
    );
    read.finish().await.expect("finish");

    let held = store.write().await.expect("first");
    let started = std::time::Instant::now();
    let again = store.write().await;
    assert!(matches!(again, Err(StoreError::Unavailable(_))));
    assert!(started.elapsed() >= Duration::from_millis(1_400));
    drop(held);
    assert!(store.write().await.is_ok(), "the turn is free again");
    store.close().await;
}

#[tokio::test]
async fn migration_status_lists_pending_before_and_nothing_after() {
    let store = temp_store_unmigrated(&test_settings())
        .await
        .expect("store");
    let before = store.migration_status().await.expect("status");
    assert!(before.pending.contains(&20261122000001), "{before:?}");
    assert!(before.pending.contains(&20261122000002), "{before:?}");
    assert!(before.pending.contains(&20261122000003), "{before:?}");
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
    // One row with an id that does not parse, one with a timestamp that does not decode; each
    // error names the table and column. (The pairwise secret takes the migration's default.)
    sqlx::query(
        "INSERT INTO tenants (id, slug, display_name, status, created_at, updated_at) \
         VALUES ('not-an-id', 'broken', 'Broken', 'active', '2026-01-01T00:00:00Z', \
         '2026-01-01T00:00:00Z'), \
         ('ten_01jd0000000000000000000000', 'late', 'Late', 'active', '2026-01-01T00:00:00Z', \
         'yesterday')",
    )
    .execute(store.pool())
    .await
    .expect("tamper");
    let mut read = store.read().await.expect("read");
    for (slug, column) in [("broken", "tenants.id"), ("late", "tenants.updated_at")] {
        let slug = svc_domain::TenantSlug::parse(slug).expect("slug");
        match read.tenant_by_slug(&slug).await {
            Err(StoreError::Corrupt(why)) => assert!(why.contains(column), "{why}"),
            other => panic!("expected Corrupt, got {other:?}"),
        }
    }
    match read
        .list_tenants(None, svc_store::Order::Ascending, 10)
        .await
    {
        Err(StoreError::Corrupt(_)) => {}
        other => panic!("expected Corrupt, got {other:?}"),
    }
    read.finish().await.expect("finish");
    store.close().await;
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

#[tokio::test]
async fn signing_key_conflicts_name_the_constraint_like_postgresql() {
    let store = temp_store().await.expect("store");
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

    // Both partial indexes are reported as `signing_keys.tenant_id, signing_keys.alg`; the
    // state written tells them apart, on insert and on transition alike.
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
async fn signing_keys_are_ordered_by_instant_not_by_stored_text() {
    let store = temp_store().await.expect("store");
    let acme = tenant_fixture("acme", 1);
    insert(&store, &acme).await.expect("tenant");
    // A whole second is stored without a fraction, and trailing zeros are trimmed, so the text
    // order would be .25 < .5 < (none): the opposite of time.
    let base = time::OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_000);
    let at = |millis: i64, kid: &str| SigningKeyRecord {
        created_at: base + time::Duration::milliseconds(millis),
        ..key_fixture(&acme, kid, SigningAlg::Es256, KeyState::Retired)
    };
    for key in [
        at(500, "c"),
        at(250, "b"),
        at(0, "z"),
        at(0, "a"),
        at(1000, "d"),
    ] {
        insert_key(&store, &key).await.expect("insert");
    }
    let by_text: Vec<String> =
        sqlx::query_scalar("SELECT kid FROM signing_keys ORDER BY created_at, kid")
            .fetch_all(store.pool())
            .await
            .expect("raw");
    assert_eq!(
        by_text,
        ["b", "c", "a", "z", "d"],
        "the trap this test is about"
    );

    let mut read = store.read().await.expect("read");
    let kids: Vec<String> = read
        .signing_keys(&acme.id)
        .await
        .expect("keys")
        .into_iter()
        .map(|k| k.kid)
        .collect();
    assert_eq!(kids, ["a", "z", "b", "c", "d"]);
    read.finish().await.expect("finish");
    store.close().await;
}

#[tokio::test]
async fn undecodable_signing_keys_are_corrupt() {
    let store = temp_store().await.expect("store");
    let acme = tenant_fixture("acme", 1);
    insert(&store, &acme).await.expect("tenant");
    let mut conn = store.pool().acquire().await.expect("connection");
    // Only tampering past the CHECK constraints can store an unknown value.
    sqlx::query("PRAGMA ignore_check_constraints = ON")
        .execute(&mut *conn)
        .await
        .expect("pragma");
    for (kid, alg, state) in [("k1", "HS256", "active"), ("k2", "ES256", "revoked")] {
        sqlx::query(
            "INSERT INTO signing_keys (tenant_id, kid, alg, state, public_jwk, wrapped_dek, \
             ciphertext, created_at, activates_at) \
             VALUES ($1, $2, $3, $4, '{}', x'00', x'00', '2026-01-01T00:00:00Z', \
             '2026-01-01T00:00:00Z')",
        )
        .bind(acme.id.as_str())
        .bind(kid)
        .bind(alg)
        .bind(state)
        .execute(&mut *conn)
        .await
        .expect("tamper");
    }
    sqlx::query("PRAGMA ignore_check_constraints = OFF")
        .execute(&mut *conn)
        .await
        .expect("pragma");
    drop(conn);

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
    let store = temp_store().await.expect("store");
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
    let store = temp_store().await.expect("store");
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
    // Valid JSON arrays, but values the domain refuses: only tampering can store them.
    for (id, column, value) in [
        (&bad_uri.id, "redirect_uris", r#"["javascript:alert(1)"]"#),
        (&bad_grant.id, "grant_types", r#"["password"]"#),
    ] {
        let sql = format!("UPDATE applications SET {column} = $1 WHERE id = $2");
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
    store.close().await;
}

#[tokio::test]
async fn application_lists_are_json_arrays_checked_by_the_schema() {
    let store = temp_store().await.expect("store");
    let acme = tenant_fixture("acme", 1);
    insert(&store, &acme).await.expect("tenant");
    let app = application_fixture(&acme, 10);
    let mut tx = store.write().await.expect("write");
    tx.insert_application(&app).await.expect("insert");
    tx.commit().await.expect("commit");
    let stored: String = sqlx::query_scalar("SELECT grant_types FROM applications WHERE id = $1")
        .bind(app.id.as_str())
        .fetch_one(store.pool())
        .await
        .expect("raw");
    assert_eq!(
        stored,
        r#"["refresh_token","authorization_code","client_credentials"]"#
    );
    for value in ["refresh_token", r#"{"a":1}"#] {
        let refused = sqlx::query("UPDATE applications SET grant_types = $1 WHERE id = $2")
            .bind(value)
            .bind(app.id.as_str())
            .execute(store.pool())
            .await;
        assert!(refused.is_err(), "{value} must be refused");
    }
    store.close().await;
}

/// Same second, different fraction: a whole second's text (`...:00Z`) sorts after `...:00.25Z`,
/// so only a comparison of instants gets these right.
#[tokio::test]
async fn expiry_and_audit_filters_compare_instants_not_stored_text() {
    let store = temp_store().await.expect("store");
    let second = time::OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_000);
    let quarter_past = second + time::Duration::milliseconds(250);
    let tenant = tenant_fixture("acme", 1).id;
    let client = application_fixture(&tenant_fixture("acme", 1), 10).id;
    let record = IdempotencyRecord {
        scope: "s".into(),
        key: "k".into(),
        fingerprint: "fp".into(),
        status: None,
        body: None,
        created_at: second - time::Duration::hours(24),
        expires_at: second,
    };
    let mut tx = store.write().await.expect("write");
    tx.claim_idempotency(&record).await.expect("claim");
    tx.use_assertion_id(&tenant, &client, "jti", second, record.created_at)
        .await
        .expect("use");
    assert_eq!(
        tx.idempotency_record("s", "k", quarter_past)
            .await
            .expect("record"),
        None,
        "expired a quarter second ago"
    );
    let later = quarter_past + time::Duration::minutes(1);
    tx.use_assertion_id(&tenant, &client, "jti", later, quarter_past)
        .await
        .expect("expired assertion id is reusable");
    let fresh = IdempotencyRecord {
        created_at: quarter_past,
        expires_at: quarter_past + time::Duration::hours(24),
        ..record.clone()
    };
    tx.claim_idempotency(&fresh)
        .await
        .expect("replace expired claim");
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    tx.claim_idempotency(&IdempotencyRecord {
        key: "k2".into(),
        ..record
    })
    .await
    .expect("claim");
    assert_eq!(
        tx.purge_expired(quarter_past, u64::MAX)
            .await
            .expect("purge"),
        1
    );
    let acme = tenant_fixture("acme", 1);
    tx.insert_tenant(&acme).await.expect("tenant");
    let at =
        |millis: i64, seed: u64| audit_fixture(Some(&acme.id), millis, seed, "a", "system", None);
    for entry in [at(0, 1), at(250, 2), at(1_000, 3)] {
        tx.insert_audit(&entry).await.expect("audit");
    }
    let filter =
        |since: Option<time::OffsetDateTime>, until: Option<time::OffsetDateTime>| AuditFilter {
            since,
            until,
            ..AuditFilter::default()
        };
    tx.commit().await.expect("commit");

    let text_trap: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE occurred_at >= $1")
            .bind(quarter_past)
            .fetch_one(store.pool())
            .await
            .expect("raw");
    assert_eq!(text_trap, 3, "the trap this test is about");
    let mut read = store.read().await.expect("read");
    let since = read
        .list_audit(
            &acme.id,
            &filter(Some(quarter_past), None),
            None,
            svc_store::Order::Descending,
            10,
        )
        .await
        .expect("list");
    assert_eq!(
        since.len(),
        2,
        "the entry at the whole second is before a quarter past it"
    );
    let until = read
        .list_audit(
            &acme.id,
            &filter(None, Some(quarter_past)),
            None,
            svc_store::Order::Descending,
            10,
        )
        .await
        .expect("list");
    assert_eq!(until.len(), 1);
    read.finish().await.expect("finish");
    store.close().await;
}

/// Tenants that existed before the identity migration get a random 32-byte pairwise secret each
/// (not the constant default SQLite's ALTER TABLE needs), sign-up off, and their applications an
/// empty list of post-logout redirect URIs.
#[tokio::test]
async fn the_identity_migration_gives_existing_tenants_random_secrets() {
    let store = temp_store_unmigrated(&test_settings())
        .await
        .expect("store");
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
         ('ten_01jd0000000000000000000001', 'a', 'A', 'active', '2026-01-01T00:00:00Z', \
          '2026-01-01T00:00:00Z'), \
         ('ten_01jd0000000000000000000002', 'b', 'B', 'active', '2026-01-01T00:00:00Z', \
          '2026-01-01T00:00:00Z'); \
         INSERT INTO applications (id, tenant_id, name, redirect_uris, grant_types, \
          token_endpoint_auth_method, allowed_scopes, first_party, id_token_signed_response_alg, \
          is_management, created_at, updated_at) VALUES ('app_01jd0000000000000000000001', \
          'ten_01jd0000000000000000000001', 'App', '[]', '[]', 'none', '[]', 0, 'RS256', 0, \
          '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
    )
    .execute(store.pool())
    .await
    .expect("existing rows");
    sqlx::raw_sql(include_str!("../migrations/20261122000004_identity.sql"))
        .execute(store.pool())
        .await
        .expect("identity migration");

    let rows: Vec<(Vec<u8>, i64)> =
        sqlx::query_as("SELECT pairwise_secret, signup_enabled FROM tenants ORDER BY id")
            .fetch_all(store.pool())
            .await
            .expect("tenants");
    assert_eq!(rows.len(), 2);
    for (secret, signup) in &rows {
        assert_eq!(secret.len(), 32);
        assert!(secret.iter().any(|b| *b != 0), "random, not the default");
        assert_eq!(*signup, 0);
    }
    assert_ne!(rows[0].0, rows[1].0, "one secret per tenant");
    let uris: String = sqlx::query_scalar("SELECT post_logout_redirect_uris FROM applications")
        .fetch_one(store.pool())
        .await
        .expect("applications");
    assert_eq!(uris, "[]");
    store.close().await;
}

/// The management-scope migration on data written by the schema before it.
#[tokio::test]
async fn the_management_scope_migration_keeps_only_served_scopes() {
    let store = temp_store_unmigrated(&test_settings())
        .await
        .expect("store");
    svc_store_sqlite::testing::migrate_to(&store, 20261122000005)
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
async fn insert_application_before_assurance(
    pool: &sqlx::SqlitePool,
    app: &svc_domain::Application,
) {
    let strings = |items: Vec<&str>| svc_store_sql::encode_strings(items).expect("json");
    sqlx::query(
        "INSERT INTO applications (id, tenant_id, name, redirect_uris, grant_types, \
         token_endpoint_auth_method, allowed_scopes, secret_hash, api_audience, first_party, \
         id_token_signed_response_alg, jwks, jwks_uri, is_management, created_at, updated_at, \
         post_logout_redirect_uris) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
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

/// The assurance migration on login history written by the schema before it: SQLite rebuilds
/// the table, which keeps its rows, its strictness, its key, its foreign key and every index.
#[tokio::test]
async fn the_assurance_migration_rebuilds_login_history_keeping_everything() {
    let store = temp_store_unmigrated(&test_settings())
        .await
        .expect("store");
    svc_store_sqlite::testing::migrate_to(&store, 20261123000003)
        .await
        .expect("migrate to the version before");
    let indexes = |pool: sqlx::SqlitePool| async move {
        let names: Vec<String> = sqlx::query_scalar(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'login_history' \
             AND sql IS NOT NULL ORDER BY name",
        )
        .fetch_all(&pool)
        .await
        .expect("indexes");
        names
    };
    let before = indexes(store.pool().clone()).await;
    assert_eq!(
        before,
        [
            "login_history_tenant_id_user_id_client_ip_idx",
            "login_history_tenant_id_user_id_id_idx"
        ]
    );
    let pool = store.pool().clone();
    let store: Arc<dyn Store> = Arc::new(store);
    svc_store::conformance::login_history_survives_the_assurance_migration(store.clone()).await;

    // The later migrations rename indexes of their own (20261127000049): what the rebuilt
    // tables must have is what a database migrated from empty has.
    let from_empty = temp_store().await.expect("a store migrated from empty");
    assert_eq!(
        indexes(pool.clone()).await,
        indexes(from_empty.pool().clone()).await,
        "every index again"
    );
    let (strict, without_rowid): (i64, i64) =
        sqlx::query_as("SELECT strict, wr FROM pragma_table_list WHERE name = 'login_history'")
            .fetch_one(&pool)
            .await
            .expect("table list");
    assert_eq!((strict, without_rowid), (1, 1), "STRICT, WITHOUT ROWID");
    let leftover: Option<String> =
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE name = 'login_history_new'")
            .fetch_optional(&pool)
            .await
            .expect("leftover");
    assert_eq!(leftover, None);
    let broken: Vec<(String,)> = sqlx::query_as("SELECT \"table\" FROM pragma_foreign_key_check")
        .fetch_all(&pool)
        .await
        .expect("foreign key check");
    assert!(broken.is_empty(), "{broken:?}");
    // The wider checks still refuse what nobody writes.
    let zed = tenant_fixture("zed", 5);
    insert(store.as_ref(), &zed).await.expect("tenant");
    for (method, result, check) in [
        ("sms", "success", "login_history_method_check"),
        ("password_totp", "maybe", "login_history_result_check"),
    ] {
        let refused = sqlx::query(
            "INSERT INTO login_history (id, tenant_id, user_id, occurred_at, method, result) \
             VALUES ('lgn_01jd0000000000000000000001', $1, 'usr_01jd0000000000000000000001', \
             '2026-01-01T00:00:00Z', $2, $3)",
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
/// SQLite rebuilds both tables, which keep their rows, their strictness, their keys, their
/// foreign keys and every index; the wider checks still refuse what nobody writes.
#[tokio::test]
async fn the_passkeys_migration_rebuilds_factors_and_login_history_keeping_everything() {
    let store = temp_store_unmigrated(&test_settings())
        .await
        .expect("store");
    svc_store_sqlite::testing::migrate_to(&store, 20261123000004)
        .await
        .expect("migrate to the version before");
    let indexes = |pool: sqlx::SqlitePool| async move {
        let names: Vec<(String, String)> = sqlx::query_as(
            "SELECT tbl_name, name FROM sqlite_master WHERE type = 'index' \
             AND tbl_name IN ('second_factors', 'login_history') AND sql IS NOT NULL \
             ORDER BY tbl_name, name",
        )
        .fetch_all(&pool)
        .await
        .expect("indexes");
        names
    };
    let before = indexes(store.pool().clone()).await;
    let named = |table: &str, index: &str| (table.to_owned(), index.to_owned());
    assert_eq!(
        before,
        [
            named(
                "login_history",
                "login_history_tenant_id_user_id_client_ip_idx"
            ),
            named("login_history", "login_history_tenant_id_user_id_id_idx"),
            named("second_factors", "second_factors_tenant_id_user_id_idx"),
        ]
    );
    let pool = store.pool().clone();
    let store: Arc<dyn Store> = Arc::new(store);
    svc_store::conformance::factors_and_login_history_survive_the_passkeys_migration(store.clone())
        .await;

    // The later migrations rename indexes of their own (20261127000049): what the rebuilt
    // tables must have is what a database migrated from empty has.
    let from_empty = temp_store().await.expect("a store migrated from empty");
    assert_eq!(
        indexes(pool.clone()).await,
        indexes(from_empty.pool().clone()).await,
        "every index again"
    );
    for table in [
        "second_factors",
        "login_history",
        "passkeys",
        "webauthn_ceremonies",
    ] {
        let (strict, without_rowid): (i64, i64) =
            sqlx::query_as("SELECT strict, wr FROM pragma_table_list WHERE name = $1")
                .bind(table)
                .fetch_one(&pool)
                .await
                .expect("table list");
        assert_eq!(
            (strict, without_rowid),
            (1, 1),
            "{table}: STRICT, WITHOUT ROWID"
        );
    }
    let leftovers: Vec<String> =
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE name LIKE '%\\_new' ESCAPE '\\'")
            .fetch_all(&pool)
            .await
            .expect("leftovers");
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let broken: Vec<(String,)> = sqlx::query_as("SELECT \"table\" FROM pragma_foreign_key_check")
        .fetch_all(&pool)
        .await
        .expect("foreign key check");
    assert!(broken.is_empty(), "{broken:?}");
    // The wider checks still refuse what nobody writes.
    let zed = tenant_fixture("zed", 5);
    insert(store.as_ref(), &zed).await.expect("tenant");
    let refused = sqlx::query(
        "INSERT INTO second_factors (id, tenant_id, user_id, kind, label, sealed_secret, \
         created_at, created_at_ns) VALUES ('mfa_01jd0000000000000000000001', $1, \
         'usr_01jd0000000000000000000001', 'sms', 'Phone', x'00', '2026-01-01T00:00:00Z', 0)",
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
         '2026-01-01T00:00:00Z', 'sms', 'success')",
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
