//! `[database]`, its per-plane pool overrides, and `[kms]`: where state and keys live.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::secret::DatabaseUrl;

/// Database connections. Without any URL, non-production runs on an embedded SQLite file at
/// `<working directory>/data/svc.db`; production requires PostgreSQL.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DatabaseConfig {
    /// Runtime database URL ("postgres://user:password@host/db?sslmode=verify-full" or
    /// "sqlite:path"). Shortcuts: `DATABASE_URL`, `SVC_DATABASE__URL` (wins). Passwords are
    /// redacted when printed. No default.
    #[schemars(example = &"postgres://svc:password@localhost:5432/svc?sslmode=disable")]
    pub url: Option<DatabaseUrl>,
    /// Identity database URL, used when `url` is unset. Shortcut: `DATABASE_IDENTITY_URL`. No
    /// default.
    #[schemars(example = &"postgres://svc:password@db.internal:5432/svc?sslmode=require")]
    pub identity_url: Option<DatabaseUrl>,
    /// Auth-plane database URL (with `database_topology = "split_by_plane"`); falls back to
    /// `url`. Shortcut: `DATABASE_AUTH_URL`. No default.
    #[schemars(example = &"postgres://svc_auth:password@db.internal:5432/svc?sslmode=require")]
    pub auth_url: Option<DatabaseUrl>,
    /// Control-plane database URL (with "split_by_plane"); falls back to `url`. Shortcut:
    /// `DATABASE_CONTROL_URL`. No default.
    #[schemars(example = &"postgres://svc_control:password@db.internal:5432/svc?sslmode=require")]
    pub control_url: Option<DatabaseUrl>,
    /// Async-plane database URL (with "split_by_plane"); falls back to `url`. Shortcut:
    /// `DATABASE_ASYNC_URL`. No default.
    #[schemars(example = &"postgres://svc_async:password@db.internal:5432/svc?sslmode=require")]
    pub async_url: Option<DatabaseUrl>,
    /// URL used by `svc-runtime --migrate-only` (an owner role); falls back to the runtime URLs.
    /// Shortcut: `MIGRATION_DATABASE_URL`. No default.
    #[schemars(example = &"postgres://svc_owner:password@db.internal:5432/svc?sslmode=require")]
    pub migration_url: Option<DatabaseUrl>,
    /// PostgreSQL URL of the one connection per process that `LISTEN`s for the other
    /// instances' changes (cache invalidation, the revocation set), when the runtime URLs go
    /// through a pooler in transaction mode (PgBouncer), which cannot keep a `LISTEN` session:
    /// point it at PostgreSQL itself or at a session-mode pool. Falls back to the runtime URL.
    /// PostgreSQL only. Shortcut: `LISTEN_DATABASE_URL`. No default.
    #[schemars(example = &"postgres://svc:password@db.internal:5432/svc?sslmode=require")]
    pub listen_url: Option<DatabaseUrl>,
    /// Pool size per process (per plane pool). Default: 10. Allowed range: 1..=1000.
    pub max_connections: u32,
    /// Connections kept open even when idle; at most `max_connections`. Default: 0. Allowed
    /// range: 0..=1000.
    pub min_connections: u32,
    /// Seconds to wait for a connection from the pool. Default: 5. Allowed range: 1..=300.
    pub connect_timeout_secs: u32,
    /// Seconds before an idle connection is closed; 0 keeps it. Default: 600. Allowed range:
    /// 0..=86400.
    pub idle_timeout_secs: u32,
    /// Seconds before a connection is recycled; 0 keeps it. Default: 1800. Allowed range:
    /// 0..=86400.
    pub max_lifetime_secs: u32,
    /// Prepared statements cached per connection (the least recently used is closed beyond).
    /// Default: 100. Allowed range: 1..=10000. 0 is refused: with the PostgreSQL driver (sqlx
    /// 0.9) a disabled cache still prepares a named statement for every query and never closes
    /// it, so the server would hold each one until the connection is recycled.
    pub statement_cache_capacity: u32,
    /// Check a connection with a ping before handing it out. Default: true.
    pub test_before_acquire: bool,
    /// PostgreSQL `statement_timeout` in seconds for runtime connections; 0 means none.
    /// Default: 30. Allowed range: 0..=86400.
    pub statement_timeout_secs: u32,
    /// PostgreSQL `idle_in_transaction_session_timeout` in seconds; 0 means none. Default: 60.
    /// Allowed range: 0..=86400.
    pub idle_in_transaction_timeout_secs: u32,
    /// `statement_timeout` in seconds for the connections of `svc-runtime --migrate-only` (a
    /// migration may run longer than any request); 0 means none. Default: 0.
    /// Allowed range: 0..=86400.
    pub maintenance_statement_timeout_secs: u32,
    /// Require TLS to PostgreSQL. Production needs this or an explicit `sslmode=` in every URL;
    /// with true, a URL saying sslmode=disable, allow or prefer is refused. Default: false.
    pub require_ssl: bool,
    /// Pool sizing for the auth plane when it runs (overrides `max_connections`/`min_connections`).
    pub auth_pool: PoolOverride,
    /// Pool sizing for the control plane when it runs.
    pub control_pool: PoolOverride,
    /// Pool sizing for the async plane when it runs.
    pub async_pool: PoolOverride,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        Self {
            url: None,
            identity_url: None,
            auth_url: None,
            control_url: None,
            async_url: None,
            migration_url: None,
            listen_url: None,
            max_connections: 10,
            min_connections: 0,
            connect_timeout_secs: 5,
            idle_timeout_secs: 600,
            max_lifetime_secs: 1800,
            statement_cache_capacity: 100,
            test_before_acquire: true,
            statement_timeout_secs: 30,
            idle_in_transaction_timeout_secs: 60,
            maintenance_statement_timeout_secs: 0,
            require_ssl: false,
            auth_pool: PoolOverride::default(),
            control_pool: PoolOverride::default(),
            async_pool: PoolOverride::default(),
        }
    }
}

impl DatabaseConfig {
    /// Every URL that is set, with its dotted key, in declaration order.
    #[must_use]
    pub fn configured_urls(&self) -> Vec<(&'static str, &DatabaseUrl)> {
        [
            ("database.url", &self.url),
            ("database.identity_url", &self.identity_url),
            ("database.auth_url", &self.auth_url),
            ("database.control_url", &self.control_url),
            ("database.async_url", &self.async_url),
            ("database.migration_url", &self.migration_url),
            ("database.listen_url", &self.listen_url),
        ]
        .into_iter()
        .filter_map(|(key, url)| url.as_ref().map(|url| (key, url)))
        .collect()
    }
}

/// Pool sizing for one plane; unset keys use the `[database]` values.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PoolOverride {
    /// Pool size for this plane. No default (uses `database.max_connections`). Allowed range:
    /// 1..=1000.
    #[schemars(example = 20)]
    pub max_connections: Option<u32>,
    /// Idle connections kept for this plane. No default (uses `database.min_connections`).
    /// Allowed range: 0..=1000.
    #[schemars(example = 2)]
    pub min_connections: Option<u32>,
}

/// Connection to the `svc-kms` key-management service. Required in production; without it,
/// non-production signs with ephemeral in-memory keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KmsConfig {
    /// Unix socket where `svc-kms` listens. Required.
    #[schemars(example = &"/run/svc-kms/kms.sock")]
    pub socket_path: PathBuf,
    /// The KMS server's public key (pins the server). Required.
    #[schemars(example = &"/etc/svc/kms/server.pub")]
    pub server_public_key_path: PathBuf,
    /// This process's private key for authenticating to the KMS. Required.
    #[schemars(example = &"/etc/svc/kms/client.key")]
    pub client_private_key_path: PathBuf,
}
