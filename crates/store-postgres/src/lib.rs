//! PostgreSQL backend of svc's storage ports: [`PgStore`], the production database.
//!
//! The pool is lazy, so the service starts (and reports itself not ready) while PostgreSQL is
//! down, and recovers without a restart when it comes back. Every pooled connection carries the
//! configured `statement_timeout` and `idle_in_transaction_session_timeout` as startup
//! parameters. Migrations take sqlx's advisory lock, so several replicas may start at once.
//! Business rules live in the engines; this crate only maps the ports of `svc-store` onto SQL.

mod dialect;
mod error;
mod feed;
mod migrations;
mod options;
mod store;

#[cfg(feature = "test-support")]
pub mod testing;

pub use dialect::PgDialect;
pub use feed::CHANNEL as CHANGE_CHANNEL;
pub use store::PgStore;
