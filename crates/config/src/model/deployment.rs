//! `[deployment]`: how the process is split into planes and how the planes find their
//! databases.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The part of the service this process runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RuntimePlane {
    /// Authentication, OAuth/OIDC protocol endpoints, sessions and hosted login.
    Auth,
    /// Management APIs: the operator's control plane and each tenant's management API.
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

/// What instances share counters, replay records and cache announcements through.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CoordinationBackend {
    /// The runtime database: no extra component. DPoP `jti`s are recorded in it (with `[kms]`),
    /// caches are kept current with `LISTEN/NOTIFY` on PostgreSQL, and the token-endpoint
    /// throttle counts per process.
    #[default]
    Postgres,
    /// Redis (`[redis]`): the throttle counts across instances, DPoP `jti`s are recorded there,
    /// and cache announcements go through its publish/subscribe.
    Redis,
    /// Memcached (`[memcached]`): the throttle counts across instances (in fixed windows) and
    /// DPoP `jti`s are recorded there; cache announcements stay on PostgreSQL's `LISTEN/NOTIFY`
    /// (Memcached has no publish/subscribe).
    Memcached,
}

impl CoordinationBackend {
    /// The name used in configuration.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Postgres => "postgres",
            Self::Redis => "redis",
            Self::Memcached => "memcached",
        }
    }
}

/// How this deployment is laid out.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DeploymentConfig {
    /// Allow `runtime_plane = "all"` (every plane in one process). Turn off in split deployments so
    /// a process started without `SVC_RUNTIME_PLANE` refuses to start instead of serving
    /// everything. Default: true.
    pub allow_all_in_one_runtime_plane: bool,
    /// Run the async plane's workers (key rotation, the janitor, webhook relay and delivery) in
    /// this process when it serves the async plane. Default: true.
    pub background_tasks_enabled: bool,
    /// Database topology: "shared" or "split_by_plane". Default: "shared".
    pub database_topology: DatabaseTopology,
    /// What instances coordinate through: "postgres" (the runtime database), "redis"
    /// (`[redis]`) or "memcached" (`[memcached]`: throttle counters and DPoP `jti`s only; cache
    /// announcements stay on the database). Default: "postgres".
    pub coordination_backend: CoordinationBackend,
    /// The plane this process runs: "auth", "control", "async" or "all". The environment
    /// shortcut `SVC_RUNTIME_PLANE` sets it. Default: "all".
    pub runtime_plane: RuntimePlane,
}

impl Default for DeploymentConfig {
    fn default() -> Self {
        Self {
            allow_all_in_one_runtime_plane: true,
            background_tasks_enabled: true,
            database_topology: DatabaseTopology::Shared,
            coordination_backend: CoordinationBackend::Postgres,
            runtime_plane: RuntimePlane::All,
        }
    }
}
