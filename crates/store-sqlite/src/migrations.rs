//! The embedded migrations of the SQLite schema.
//! `svc_store_sql::migration_status` compares a database with them.

use sqlx::migrate::Migrator;

/// Every migration in `migrations/`, embedded at compile time. The file names are the same as the
/// PostgreSQL backend's (a test in `svc-store` checks), so a version means the same change on both.
pub(crate) static MIGRATOR: Migrator = sqlx::migrate!("./migrations");
