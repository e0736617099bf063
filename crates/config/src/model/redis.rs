//! `[redis]`: the Redis coordination backend (`deployment.coordination_backend = "redis"`), which
//! carries what instances must share beyond the database: the token-endpoint throttle's counters,
//! DPoP proof `jti`s, and the announcements that keep every instance's caches current.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::secret::SecretUrl;

/// What the throttle does while Redis cannot be reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ThrottleFailMode {
    /// Count in this process only until Redis is back: N instances admit up to N times the
    /// rate meanwhile, and nothing is refused because of the outage.
    #[default]
    FailOpen,
    /// Refuse throttled requests (429, `Retry-After: 1`) until Redis is back, and report the
    /// instance not ready.
    FailClosed,
}

/// The Redis server instances coordinate through.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RedisConfig {
    /// `redis://[user:password@]host:port[/db]` (or `rediss://` for TLS). Required with
    /// `deployment.coordination_backend = "redis"`, refused otherwise. No default.
    #[schemars(example = "redis://127.0.0.1:6379/0")]
    pub url: Option<SecretUrl>,
    /// Multiplexed connections per process (each carries many concurrent commands); one more
    /// is opened for the change announcements. Default: 2. Allowed range: 1..=64.
    pub pool_size: u32,
    /// Prefix of every key and channel svc uses, so several deployments (or test runs) can
    /// share one Redis. Letters, digits, `:`, `_`, `-`, `.`; 1 to 64 characters. Default:
    /// "svc:".
    pub key_prefix: String,
    /// How long one command may take before it counts as failed (then the failure modes
    /// apply), in milliseconds. Default: 500. Allowed range: 50..=10000.
    pub command_timeout_ms: u32,
    /// The throttle (`server.endpoint_throttle`) while Redis is unreachable: "fail-open" or
    /// "fail-closed". DPoP proof replay checks always fail closed (a proof is refused rather
    /// than risk accepting a replay). Default: "fail-open".
    pub throttle_fail_mode: ThrottleFailMode,
}

impl Default for RedisConfig {
    fn default() -> Self {
        Self {
            url: None,
            pool_size: 2,
            key_prefix: "svc:".into(),
            command_timeout_ms: 500,
            throttle_fail_mode: ThrottleFailMode::FailOpen,
        }
    }
}
