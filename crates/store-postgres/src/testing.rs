//! Test helpers (feature `test-support`): a throwaway PostgreSQL database per test, for this
//! crate's tests and the workspace's end-to-end tests.
//!
//! The server comes from env `SVCTEST_POSTGRES_URL` (an admin URL allowed to create databases),
//! by default `postgres://postgres@127.0.0.1:5432/postgres`. Each call creates `svc_test_<hex>`;
//! its [`TestDbGuard`] drops it again (`WITH (FORCE)`, so open connections do not prevent it),
//! so runs do not pile up databases.

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
    let admin = admin_url();
    let mut url = url::Url::parse(&admin)
        .map_err(|e| config_error(format!("invalid {ADMIN_URL_ENV}: {e}")))?;
    let name = format!("svc_test_{}", random_hex()?);
    let mut conn = admin_connection(&admin).await?;
    // The name is generated hex, so formatting it into the statement is safe.
    sqlx::query(AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
        .execute(&mut conn)
        .await
        .map_err(map_err)?;
    let _ = conn.close().await;
    url.set_path(&name);
    Ok((
        url.to_string(),
        TestDbGuard {
            admin_url: admin,
            name,
            dropped: false,
        },
    ))
}

/// A store on a fresh, empty (unmigrated) database with `settings`; closing or dropping the
/// store drops the database.
pub async fn fresh_store(settings: &PoolSettings) -> Result<PgStore, StoreError> {
    let (url, guard) = fresh_database().await?;
    let store = PgStore::connect(&url, settings).await?;
    *store
        .test_db
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(guard);
    Ok(store)
}

/// A migrated store on a fresh database with [`test_settings`]; closing or dropping the store
/// drops the database.
pub async fn migrated_store() -> Result<PgStore, StoreError> {
    let store = fresh_store(&test_settings()).await?;
    store.migrate().await?;
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
