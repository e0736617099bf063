//! The composition root of svc: it turns a validated configuration into running planes.
//!
//! It is the only crate that sees every other one: it opens the stores named by the database
//! topology, applies or checks migrations, builds each plane's routes and workers, serves them
//! over plain HTTP or TLS (HTTP/2 only), and shuts down gracefully. Engines never read
//! configuration themselves; this crate hands them small settings structs.

mod app;
mod authn;
mod bootstrap;
mod captcha;
pub mod cli;
mod client_documents;
mod coordination;
mod directory;
mod domain_probe;
mod error;
mod guarded_fetch;
mod instance_lease;
mod jwks_fetch;
mod keys;
pub mod logging;
mod logout;
mod operator;
mod plane;
mod serve;
mod shared_caches;
mod social;
mod software_statements;
mod sso;
mod stores;
mod tls;
mod webhooks;
mod workers;

pub use app::{App, BuildOptions, RunningApp};
pub use error::RuntimeError;
pub use keys::force_rotate;
pub use operator::create_operator_token;
pub use plane::Plane;
pub use stores::{migrate_only, open_store};
