//! The runtime's error type: everything that can stop the process from starting or serving, each
//! rendered as one line that names the cause and the fix (never a backtrace).

use svc_config::ConfigErrors;

/// Why the runtime could not start or keep running.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The configuration is invalid; every problem is listed, one per line.
    #[error("{0}")]
    Config(#[from] ConfigErrors),
    /// A database could not be opened, reached or migrated.
    #[error("database ({what}): {detail}")]
    Database {
        /// Which database (plane label and redacted location).
        what: String,
        /// What went wrong and how to fix it.
        detail: String,
    },
    /// Production refuses a database whose schema is older than this binary.
    #[error(
        "database ({what}) has {pending} pending migration(s): run `svc-runtime --migrate-only` \
         (it uses database.migration_url, falling back to the runtime URL) before starting this version"
    )]
    MigrationsBehind {
        /// Which database.
        what: String,
        /// How many migrations are missing.
        pending: usize,
    },
    /// The TLS certificate, key or trust bundle could not be used.
    #[error("{key} ({path}): {detail}")]
    Tls {
        /// The configuration key naming the file.
        key: &'static str,
        /// The file.
        path: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The listening socket could not be opened.
    #[error(
        "cannot listen on {addr}: {source} (is another process using the port? set server.port or SVC_SERVER__PORT)"
    )]
    Bind {
        /// The address we tried.
        addr: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The server stopped with an IO error.
    #[error("server error: {0}")]
    Serve(#[source] std::io::Error),
    /// The key-management service is unusable (missing socket, wrong keys, refused).
    #[error("kms: {0}")]
    Kms(String),
    /// Signing keys could not be loaded or created.
    #[error("signing keys: {0}")]
    Keys(String),
    /// Preparing the default tenant failed.
    #[error("bootstrap: {0}")]
    Bootstrap(String),
    /// The sign-in engine could not be built from `[auth]`, `[email]`, `[hibp]` or `[captcha]`.
    #[error("sign-in engine: {0}")]
    Authn(String),
}
