//! `svc-config`: the typed, documented, layered and validated configuration of the svc identity
//! service.
//!
//! It owns the model ([`Config`], one field per spec section that works in this version),
//! loading ([`load`]: built-in defaults, then `svc.toml` / `SVC_CONFIG_FILE` / `--config`, then
//! `SVC_*` environment variables, which win), the refusal of every section or key whose feature
//! is not built yet (one line each, naming it), validation (every rule, production guards
//! included, reported together as [`ConfigErrors`]), the database targets each plane uses, the
//! redacted effective configuration and the generated `svc.example.toml`.
//!
//! It must stay free of I/O frameworks (no tokio, axum, sqlx) and of other `svc-*` crates: the
//! runtime builds its settings from a validated [`Config`]. Nothing here reads the process
//! environment except [`Sources::from_process`].

mod env;
pub use env::MOVED_TO_KMS;
mod error;
mod example;
mod keys;
mod load;
mod model;
mod redact;
mod secret;
mod targets;
mod unavailable;
mod validate;
mod values;

pub use error::{ConfigError, ConfigErrors};
pub use example::example_toml;
pub use load::{DEFAULT_FILE_NAME, Loaded, Sources, load};
pub use model::*;
pub use secret::{DatabaseUrl, REDACTED, Secret, SecretUrl, redact_url};
pub use targets::{DatabaseTarget, EMBEDDED_SQLITE_PATH};
pub use values::{LogSink, ProxyNetwork};

#[cfg(test)]
mod tests;
