//! Test helpers (feature `test-support`): a throwaway PostgreSQL database per test, for this
//! crate's tests and the workspace's end-to-end tests.
//!
//! The server comes from env `SVCTEST_POSTGRES_URL` (an admin URL allowed to create databases),
//! by default `postgres://postgres@127.0.0.1:5432/postgres`. Each call creates `svc_test_<hex>`;
//! its [`TestDbGuard`] drops it again (`WITH (FORCE)`, so open connections do not prevent it),
//! so runs do not pile up databases.
//!
//! A migrated database is a copy of a template (`svc_template_<fingerprint of the migrations>`)
//! migrated once per server and set of migrations, not a run of every migration: copying takes
//! a fifth of a second where migrating took over a second, and the suites create hundreds.
//! The template is built under an advisory lock (test binaries run side by side), under a
//! temporary name renamed when complete, and takes no connections; a template of other
//! migrations is dropped when a new one is built.

use crate::PgStore;
use crate::error::{config_error, map_err};
use crate::options::connect_options;
use sqlx::{AssertSqlSafe, Connection, PgConnection};
use std::fmt;
use svc_store::{PoolSettings, Store, StoreError};

/// The environment variable naming the admin URL of the test server.
pub const ADMIN_URL_ENV: &str = "SVCTEST_POSTGRES_URL";

/// The admin URL used when [`ADMIN_URL_ENV`] is unset.
pub const DEFAULT_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// The admin URL of the test server: [`ADMIN_URL_ENV`] or [`DEFAULT_ADMIN_URL`].
pub fn admin_url() -> String {
    std::env::var(ADMIN_URL_ENV).unwrap_or_else(|_| DEFAULT_ADMIN_URL.to_owned())
}

/// Pool settings for tests: the production defaults, with room for the conformance suite's 16
/// concurrent writers to queue.
pub fn test_settings() -> PoolSettings {
    PoolSettings {
        max_connections: 8,
        connect_timeout: std::time::Duration::from_secs(10),
        ..PoolSettings::default()
    }
}

/// Creates a new, empty database and returns its URL and the guard that drops it.
pub async fn fresh_database() -> Result<(String, TestDbGuard), StoreError> {
    create_database(&admin_url(), None).await
}

/// Creates `svc_test_<hex>`, a copy of `template` when given (else of the server's default).
async fn create_database(
    admin: &str,
    template: Option<&str>,
) -> Result<(String, TestDbGuard), StoreError> {
    let mut url = url::Url::parse(admin)
        .map_err(|e| config_error(format!("invalid {ADMIN_URL_ENV}: {e}")))?;
    let name = format!("svc_test_{}", random_hex()?);
    let mut conn = admin_connection(admin).await?;
    // The names are generated here, so formatting them into the statement is safe.
    let sql = match template {
        None => format!("CREATE DATABASE \"{name}\""),
        Some(template) => format!("CREATE DATABASE \"{name}\" TEMPLATE \"{template}\""),
    };
    sqlx::query(AssertSqlSafe(sql))
        .execute(&mut conn)
        .await
        .map_err(map_err)?;
    let _ = conn.close().await;
    url.set_path(&name);
    Ok((
        url.to_string(),
        TestDbGuard {
            admin_url: admin.to_owned(),
            name,
            dropped: false,
        },
    ))
}

/// Creates a new database holding every migration (a copy of the template) and returns its URL
/// and the guard that drops it.
pub async fn migrated_database() -> Result<(String, TestDbGuard), StoreError> {
    let admin = admin_url();
    let template = match TEMPLATE.get() {
        Some(name) => name.clone(),
        None => {
            let name = migrated_template(&admin).await?;
            TEMPLATE.get_or_init(|| name).clone()
        }
    };
    create_database(&admin, Some(&template)).await
}

/// The template of this process's migrations, once it is known to exist.
static TEMPLATE: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Any value, the same in every test binary: the advisory lock the template is built under.
const TEMPLATE_LOCK: i64 = 0x7376_635f_746d_706c;

/// The name of the template of the embedded migrations, built if the server lacks it.
async fn migrated_template(admin: &str) -> Result<String, StoreError> {
    let name = format!("svc_template_{}", migrations_fingerprint());
    let mut conn = admin_connection(admin).await?;
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(TEMPLATE_LOCK)
        .execute(&mut conn)
        .await
        .map_err(map_err)?;
    let built = build_template(admin, &mut conn, &name).await;
    let unlocked = sqlx::query("SELECT pg_advisory_unlock($1)")
        .bind(TEMPLATE_LOCK)
        .execute(&mut conn)
        .await
        .map_err(map_err);
    let _ = conn.close().await;
    built?;
    unlocked?;
    Ok(name)
}

/// Builds the template `name` unless it exists (the caller holds the lock).
async fn build_template(
    admin: &str,
    conn: &mut PgConnection,
    name: &str,
) -> Result<(), StoreError> {
    let existing: Vec<String> = sqlx::query_scalar(
        "SELECT datname::text FROM pg_database WHERE datname LIKE 'svc\\_template\\_%'",
    )
    .fetch_all(&mut *conn)
    .await
    .map_err(map_err)?;
    if existing.iter().any(|e| e == name) {
        return Ok(());
    }
    // Names come from this module (a fixed prefix and hex), so formatting them in is safe.
    for old in existing {
        for sql in [
            format!("ALTER DATABASE \"{old}\" WITH IS_TEMPLATE false"),
            format!("DROP DATABASE IF EXISTS \"{old}\" WITH (FORCE)"),
        ] {
            sqlx::query(AssertSqlSafe(sql))
                .execute(&mut *conn)
                .await
                .map_err(map_err)?;
        }
    }
    let (url, guard) = create_database(admin, None).await?;
    let store = PgStore::connect(&url, &test_settings()).await?;
    let migrated = store.migrate().await;
    store.close().await;
    migrated?;
    // The pool's sessions may take a moment to end after it closed.
    let rename = format!("ALTER DATABASE \"{}\" RENAME TO \"{name}\"", guard.name());
    let mut attempts = 0;
    loop {
        match sqlx::query(AssertSqlSafe(rename.clone()))
            .execute(&mut *conn)
            .await
        {
            Ok(_) => break,
            Err(e) if attempts < 50 && in_use(&e) => {
                attempts += 1;
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            Err(e) => return Err(map_err(e)),
        }
    }
    // Renamed: the guard's name no longer exists, so dropping it changes nothing.
    drop(guard);
    sqlx::query(AssertSqlSafe(format!(
        "ALTER DATABASE \"{name}\" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"
    )))
    .execute(&mut *conn)
    .await
    .map_err(map_err)?;
    Ok(())
}

/// SQLSTATE 55006 `object_in_use`: the database is "being accessed by other users".
fn in_use(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(|d| d.code())
        .is_some_and(|code| code == "55006")
}

/// Hex of a hash of every embedded migration's version and checksum.
fn migrations_fingerprint() -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    for m in crate::migrations::MIGRATOR.iter() {
        m.version.hash(&mut hasher);
        m.checksum.hash(&mut hasher);
    }
    format!("{:016x}", hasher.finish())
}

/// A store on a fresh, empty (unmigrated) database with `settings`; closing or dropping the
/// store drops the database.
pub async fn fresh_store(settings: &PoolSettings) -> Result<PgStore, StoreError> {
    let (url, guard) = fresh_database().await?;
    owning(&url, guard, settings).await
}

/// A migrated store on a fresh database with [`test_settings`]; closing or dropping the store
/// drops the database.
pub async fn migrated_store() -> Result<PgStore, StoreError> {
    let (url, guard) = migrated_database().await?;
    let store = owning(&url, guard, &test_settings()).await?;
    // Nothing left to apply; this checks the copy is what the migrations expect.
    store.migrate().await?;
    Ok(store)
}

/// A store on `url` that drops the database of `guard` when it is closed or dropped.
async fn owning(
    url: &str,
    guard: TestDbGuard,
    settings: &PoolSettings,
) -> Result<PgStore, StoreError> {
    let store = PgStore::connect(url, settings).await?;
    *store
        .test_db
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(guard);
    Ok(store)
}

/// Owns a test database: dropping the guard (or [`TestDbGuard::drop_database`]) removes it.
pub struct TestDbGuard {
    admin_url: String,
    name: String,
    dropped: bool,
}

impl TestDbGuard {
    /// The database's name (`svc_test_<hex>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Drops the database now, disconnecting anything still connected to it.
    pub async fn drop_database(mut self) -> Result<(), StoreError> {
        self.dropped = true;
        drop_database(&self.admin_url, &self.name).await
    }
}

impl fmt::Debug for TestDbGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not the admin URL: it may carry a password.
        f.debug_struct("TestDbGuard")
            .field("name", &self.name)
            .finish()
    }
}

impl Drop for TestDbGuard {
    fn drop(&mut self) {
        if self.dropped {
            return;
        }
        // Drop cannot await, and may run inside a runtime (where block_on panics) or outside
        // one: a short-lived thread with its own runtime works in both cases.
        let admin_url = self.admin_url.clone();
        let name = self.name.clone();
        let worker = std::thread::spawn(move || {
            if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                let _ = rt.block_on(drop_database(&admin_url, &name));
            }
        });
        let _ = worker.join();
    }
}

async fn drop_database(admin_url: &str, name: &str) -> Result<(), StoreError> {
    let mut conn = admin_connection(admin_url).await?;
    sqlx::query(AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
    )))
    .execute(&mut conn)
    .await
    .map_err(map_err)?;
    let _ = conn.close().await;
    Ok(())
}

async fn admin_connection(admin_url: &str) -> Result<PgConnection, StoreError> {
    let settings = PoolSettings {
        statement_timeout: None,
        ..PoolSettings::default()
    };
    let options = connect_options(admin_url, &settings)?;
    PgConnection::connect_with(&options).await.map_err(map_err)
}

fn random_hex() -> Result<String, StoreError> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes)
        .map_err(|e| config_error(format!("no randomness for a test database name: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Applies the embedded migrations up to and including `version` only, so a test can seed data
/// in an older schema and then check what the later migrations do to it.
pub async fn migrate_to(store: &PgStore, version: i64) -> Result<(), StoreError> {
    crate::migrations::MIGRATOR
        .run_to(version, store.pool())
        .await
        .map_err(crate::error::map_migrate_err)
}
