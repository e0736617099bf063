//! The embedded migrations of the PostgreSQL schema and the read-only comparison of a database
//! against them.

use crate::error::map_err;
use sqlx::PgPool;
use sqlx::migrate::Migrator;
use svc_store::{MigrationStatus, StoreError};

/// Every migration in `migrations/`, embedded at compile time. The file names are the same as the
/// SQLite backend's (a test in `svc-store` checks), so a version means the same change on both.
pub(crate) static MIGRATOR: Migrator = sqlx::migrate!("./migrations");

/// Compares `_sqlx_migrations` with [`MIGRATOR`] without creating or changing anything, so the
/// runtime can refuse to serve an out-of-date database before touching it.
pub(crate) async fn status(pool: &PgPool) -> Result<MigrationStatus, StoreError> {
    // to_regclass resolves through search_path, exactly where sqlx creates the table; unlike a
    // plain SELECT it answers NULL instead of failing when the table does not exist.
    let table_exists: bool =
        sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL")
            .fetch_one(pool)
            .await
            .map_err(map_err)?;
    let applied: Vec<i64> = if table_exists {
        // A row with success = false is a migration that failed half way: not applied.
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success ORDER BY version")
            .fetch_all(pool)
            .await
            .map_err(map_err)?
    } else {
        Vec::new()
    };
    Ok(compare(&MIGRATOR, &applied))
}

/// Pending = embedded but not applied; unknown = applied but not embedded (a newer binary ran).
fn compare(migrator: &Migrator, applied: &[i64]) -> MigrationStatus {
    let embedded: Vec<i64> = migrator
        .iter()
        .filter(|m| !m.migration_type.is_down_migration())
        .map(|m| m.version)
        .collect();
    MigrationStatus {
        pending: embedded
            .iter()
            .copied()
            .filter(|v| !applied.contains(v))
            .collect(),
        unknown_applied: applied
            .iter()
            .copied()
            .filter(|v| !embedded.contains(v))
            .collect(),
    }
}
