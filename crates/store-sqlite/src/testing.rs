//! Test helpers (feature `test-support`): a store on a fresh database file in a temporary
//! directory, for this crate's tests and the workspace's end-to-end tests.
//!
//! A temp file, never `:memory:`: each pooled connection to `:memory:` is a separate database.

use crate::SqliteStore;
use crate::error::config_error;
use svc_store::{PoolSettings, Store, StoreError};

/// Pool settings for tests: room for the conformance suite's 16 concurrent writers to queue.
pub fn test_settings() -> PoolSettings {
    PoolSettings {
        max_connections: 8,
        connect_timeout: std::time::Duration::from_secs(10),
        ..PoolSettings::default()
    }
}

/// A migrated store on a new database file; the file's directory is deleted with the store.
pub async fn temp_store() -> Result<SqliteStore, StoreError> {
    temp_store_with(&test_settings()).await
}

/// A migrated store on a new database file, with the given settings.
pub async fn temp_store_with(settings: &PoolSettings) -> Result<SqliteStore, StoreError> {
    let store = temp_store_unmigrated(settings).await?;
    store.migrate().await?;
    Ok(store)
}

/// A store on a new, empty (unmigrated) database file, with the given settings; the file's
/// directory is deleted with the store.
pub async fn temp_store_unmigrated(settings: &PoolSettings) -> Result<SqliteStore, StoreError> {
    let dir = tempfile::Builder::new()
        .prefix("svc-test-sqlite-")
        .tempdir()
        .map_err(|e| config_error(format!("cannot create a temporary directory: {e}")))?;
    let mut store = SqliteStore::open(&dir.path().join("svc.db"), settings).await?;
    store.temp_dir = Some(dir);
    Ok(store)
}

/// Applies the embedded migrations up to and including `version` only, so a test can seed data
/// in an older schema and then check what the later migrations do to it.
pub async fn migrate_to(store: &SqliteStore, version: i64) -> Result<(), StoreError> {
    crate::migrations::MIGRATOR
        .run_to(version, store.pool())
        .await
        .map_err(crate::error::map_migrate_err)
}
