//! SQLite backend of svc's storage ports: [`SqliteStore`], the embedded default database.
//!
//! One file under the data directory, opened in WAL mode so readers never block the writer.
//! SQLite admits one writer at a time, so every write transaction starts with `BEGIN IMMEDIATE`:
//! it takes the write lock up front (waiting up to `busy_timeout`) instead of failing with
//! `SQLITE_BUSY` when a deferred transaction later tries to upgrade. Statements run on the
//! task's own thread through `rusqlite` (`connection`, `pool`); sqlx's driver, which gives each
//! connection a thread of its own, is kept for the migrations. Business rules live in the
//! engines; this crate only maps the ports of `svc-store` onto SQL.

mod connection;
mod dialect;
mod error;
mod migrations;
mod planner;
mod pool;
mod store;

mod timestamps;

#[cfg(feature = "test-support")]
pub mod testing;

pub use connection::{SqliteConn, SqliteRecord};
pub use dialect::SqliteDialect;
pub use pool::{PooledConn, SqliteLease};
pub use store::SqliteStore;
