//! The read-only comparison of a database's applied migrations with the ones embedded in the
//! binary (each backend embeds its own `migrations/`, same file names on both).

use crate::{Conn, Dialect, PerDialect, Stmt};
use sqlx::migrate::Migrator;
use svc_store::{MigrationStatus, StoreError};

/// Whether sqlx's bookkeeping table exists, without failing (or creating it) when it does not.
const TABLE_EXISTS: PerDialect = PerDialect {
    sqlite: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' \
             AND name = '_sqlx_migrations') AS present",
    // to_regclass resolves through search_path, exactly where sqlx creates the table; unlike a
    // plain SELECT it answers NULL instead of failing when the table does not exist.
    postgres: "SELECT to_regclass('_sqlx_migrations') IS NOT NULL AS present",
};

/// A row with success = false is a migration that failed half way: not applied.
const APPLIED: &str = "SELECT version FROM _sqlx_migrations WHERE success ORDER BY version";

/// Compares `_sqlx_migrations` with `migrator` without creating or changing anything, so the
/// runtime can refuse to serve an out-of-date database before touching it.
pub async fn migration_status<D: Dialect>(
    conn: &mut Conn<D>,
    migrator: &Migrator,
) -> Result<MigrationStatus, StoreError> {
    let row = Stmt::new(TABLE_EXISTS.pick::<D>())
        .fetch_one::<D>(&mut *conn)
        .await?;
    let present = D::boolean(&row, "present")
        .map_err(D::map_err)?
        .unwrap_or(false);
    let mut applied = Vec::new();
    if present {
        for row in Stmt::new(APPLIED).fetch_all::<D>(conn).await? {
            if let Some(version) = D::int(&row, "version").map_err(D::map_err)? {
                applied.push(version);
            }
        }
    }
    Ok(compare(migrator, &applied))
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
