//! `[deployment]`, `[redis]` and `[memcached]`: how the process is split into planes and which
//! coordination backend instances share.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::secret::SecretUrl;

/// The part of the service this process runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RuntimePlane {
    /// Authentication, OAuth/OIDC protocol endpoints, sessions and hosted login.
    Auth,
    /// Management APIs, admin routes, SCIM and OpenAPI when enabled.
    Control,
    /// Background workers: webhook delivery, event processing, janitor jobs.
    Async,
    /// All three planes in one process (needs `deployment.allow_all_in_one_runtime_plane`).
    #[default]
    All,
}

impl RuntimePlane {
    /// The single planes this value runs: itself, or all three for [`RuntimePlane::All`].
    #[must_use]
    pub fn served(self) -> &'static [RuntimePlane] {
        match self {
            Self::Auth => &[Self::Auth],
            Self::Control => &[Self::Control],
            Self::Async => &[Self::Async],
            Self::All => &[Self::Auth, Self::Control, Self::Async],
        }
    }

    /// Whether this process serves the auth plane (alone or as part of `all`).
    #[must_use]
    pub fn serves_auth(self) -> bool {
        matches!(self, Self::Auth | Self::All)
    }

    /// The name used in configuration and `SVC_RUNTIME_PLANE`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auth => "auth",
            Self::Control => "control",
            Self::Async => "async",
            Self::All => "all",
        }
    }
}

impl fmt::Display for RuntimePlane {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where instances coordinate shared short-lived state (rate-limit counters, caches).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CoordinationBackend {
    /// The runtime database (no extra service).
    #[default]
    Postgres,
    /// Redis at `[redis].url`.
    Redis,
    /// Memcached at `[memcached].address`.
    Memcached,
}

/// Whether the planes share one database or each has its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DatabaseTopology {
    /// Every plane uses `[database].url`.
    #[default]
    Shared,
    /// Each plane uses its own URL (`auth_url`, `control_url`, `async_url`), falling back to
    /// `[database].url`.
    SplitByPlane,
}

/// How this deployment is laid out.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DeploymentConfig {
    /// Allow `runtime_plane = "all"` (every plane in one process). Turn off in split deployments so
    /// a process started without `SVC_RUNTIME_PLANE` refuses to start instead of serving
    /// everything. Default: true.
    pub allow_all_in_one_runtime_plane: bool,
    /// Run background tasks (janitors, key rotation) in this process. Default: true.
    pub background_tasks_enabled: bool,
    /// Run the chain monitor inside this process instead of as a separate worker. Default: false.
    pub embedded_chain_monitor: bool,
    /// Coordination backend: "postgres", "redis" (needs `[redis].url`) or "memcached" (needs
    /// `[memcached].address`). Default: "postgres".
    pub coordination_backend: CoordinationBackend,
    /// Database topology: "shared" or "split_by_plane". Default: "shared".
    pub database_topology: DatabaseTopology,
    /// The plane this process runs: "auth", "control", "async" or "all". The environment
    /// shortcut `SVC_RUNTIME_PLANE` sets it. Default: "all".
    pub runtime_plane: RuntimePlane,
}

impl Default for DeploymentConfig {
    fn default() -> Self {
        Self {
            allow_all_in_one_runtime_plane: true,
            background_tasks_enabled: true,
            embedded_chain_monitor: false,
            coordination_backend: CoordinationBackend::Postgres,
            database_topology: DatabaseTopology::Shared,
            runtime_plane: RuntimePlane::All,
        }
    }
}

/// Redis, used when `deployment.coordination_backend = "redis"`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RedisConfig {
    /// Redis URL, e.g. "rediss://:password@cache.internal:6379/0". The password is redacted
    /// whenever the configuration is printed. No default; required for the redis backend.
    #[schemars(example = &"redis://127.0.0.1:6379/0")]
    pub url: Option<SecretUrl>,
    /// Connections in the pool. Default: 16. Allowed range: 1..=1024.
    pub pool_size: u32,
}

impl Default for RedisConfig {
    fn default() -> Self {
        Self {
            url: None,
            pool_size: 16,
        }
    }
}

/// Memcached, used when `deployment.coordination_backend = "memcached"`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MemcachedConfig {
    /// Server address as "host:port". No default; required for the memcached backend.
    #[schemars(example = &"127.0.0.1:11211")]
    pub address: Option<String>,
    /// Connections in the pool. Default: 16. Allowed range: 1..=1024.
    pub pool_size: u32,
    /// Idle connections kept open; at most `pool_size`. Default: 4. Allowed range: 0..=1024.
    pub max_idle: u32,
    /// Seconds to wait for a connection. Default: 5. Allowed range: 1..=300.
    pub connect_timeout_secs: u32,
    /// Seconds to wait for one command. Default: 2. Allowed range: 1..=300.
    pub command_timeout_secs: u32,
}

impl Default for MemcachedConfig {
    fn default() -> Self {
        Self {
            address: None,
            pool_size: 16,
            max_idle: 4,
            connect_timeout_secs: 5,
            command_timeout_secs: 2,
        }
    }
}
