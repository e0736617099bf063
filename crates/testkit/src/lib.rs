//! Test harness for svc (a dev-dependency only).
//!
//! - [`TestApp`]: the whole service in-process on `127.0.0.1:0`, with a fresh database per test
//!   (a temporary SQLite file, or a new PostgreSQL database dropped afterwards), configured
//!   through an injected environment exactly as a user would configure it.
//! - [`Process`]: the real `svc-runtime` binary as a child process, for startup errors, signals
//!   and the CLI.
//! - [`tls`]: a throw-away certificate authority and server certificate.
//! - [`KmsDaemon`]: a real svc-kms daemon on a Unix socket, stoppable and restartable.
//! - [`FaultyProxy`]: a TCP relay that can cut and restore a connection (a database outage seen
//!   from the service, without stopping the database other tests use).
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // a test harness fails loudly

mod app;
mod kms;
mod process;
mod proxy;
pub mod tls;

pub use app::{Backend, TestApp};
pub use kms::KmsDaemon;
pub use process::{Exit, Process};
pub use proxy::FaultyProxy;

/// Both storage backends, for tests that must hold on each.
pub const BACKENDS: [Backend; 2] = [Backend::Sqlite, Backend::Postgres];
