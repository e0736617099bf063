//! SQLite backend of svc's storage ports: [`SqliteStore`], the embedded default database.
//!
//! One file under the data directory, opened in WAL mode so readers never block the writer.
//! SQLite admits one writer at a time, so every write transaction starts with `BEGIN IMMEDIATE`:
//! it takes the write lock up front (waiting up to `busy_timeout`) instead of failing with
//! `SQLITE_BUSY` when a deferred transaction later tries to upgrade. Business rules live in the
//! engines; this crate only maps the ports of `svc-store` onto SQL.

mod dialect;
mod error;
mod migrations;
mod planner;
mod store;

mod timestamps;

#[cfg(feature = "test-support")]
pub mod testing;

pub use dialect::SqliteDialect;
pub use store::SqliteStore;
