//! What instances share besides the database (issue 21 item 1), through the backend
//! `deployment.coordination_backend` chooses when it is not the database itself:
//!
//! | | token-endpoint throttle | DPoP proof `jti`s | cache announcements |
//! |---|---|---|---|
//! | `redis` ([`redis`]) | GCRA on Redis's clock | `SET NX PX` | publish/subscribe |
//! | `memcached` ([`memcached`]) | fixed windows on the instances' clocks | `add` | PostgreSQL `LISTEN/NOTIFY` (Memcached has no publish/subscribe) |
//!
//! Both refuse a DPoP proof (503 `temporarily_unavailable`) rather than accept one they could not
//! record, and both count the throttle per process (fail open) or refuse throttled requests
//! (fail closed, the instance reported not ready) while unreachable. `svc_coordination_up`
//! (1/0) tells whether the backend's last command succeeded.

pub(crate) mod memcached;
pub(crate) mod redis;

use async_trait::async_trait;
use std::fmt::Write as _;
use std::sync::Arc;
use svc_config::{Config, CoordinationBackend};
use svc_domain::Clock;
use svc_http::throttle::{Outage, SharedCounter};
use svc_oauth::dpop::ProofReplay;
use svc_store::ChangeFeed;

use self::memcached::MemcachedBackend;
use self::redis::RedisBackend;
use crate::RuntimeError;

/// The coordination backend of this process, besides the database.
#[derive(Clone, Debug)]
pub(crate) enum Coordination {
    /// `[redis]`.
    Redis(Arc<RedisBackend>),
    /// `[memcached]`.
    Memcached(Arc<MemcachedBackend>),
}

/// The backend the configuration chooses, or `None` when instances coordinate through the
/// database. Connections are lazy: the process starts while the backend is down, and the
/// failure modes apply until it is back. `clock` dates the Memcached throttle's windows.
pub(crate) fn open(
    config: &Config,
    clock: Arc<dyn Clock>,
) -> Result<Option<Coordination>, RuntimeError> {
    Ok(match config.deployment.coordination_backend {
        CoordinationBackend::Postgres => None,
        CoordinationBackend::Redis => Some(Coordination::Redis(redis::open(config)?)),
        CoordinationBackend::Memcached => {
            Some(Coordination::Memcached(memcached::open(config, clock)?))
        }
    })
}

impl Coordination {
    /// The throttle's shared counter.
    pub(crate) fn counter(&self) -> Arc<dyn SharedCounter> {
        match self {
            Self::Redis(b) => b.clone(),
            Self::Memcached(b) => b.clone(),
        }
    }

    /// Where DPoP proof `jti`s are recorded.
    pub(crate) fn replay(&self) -> Arc<dyn ProofReplay> {
        match self {
            Self::Redis(b) => b.clone(),
            Self::Memcached(b) => b.clone(),
        }
    }

    /// Where cache announcements go, when this backend carries them; `None` leaves them on the
    /// database's own feed.
    pub(crate) fn feed(&self) -> Option<Arc<dyn ChangeFeed>> {
        match self {
            Self::Redis(b) => Some(b.clone()),
            // No publish/subscribe in Memcached.
            Self::Memcached(_) => None,
        }
    }

    /// What the throttle does while the backend is away.
    pub(crate) fn outage(&self) -> Outage {
        match self {
            Self::Redis(b) => b.outage(),
            Self::Memcached(b) => b.outage(),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Self::Redis(_) => "Redis",
            Self::Memcached(_) => "Memcached",
        }
    }

    /// Registers `svc_coordination_up`.
    pub(crate) fn register_metrics(&self, metrics: &svc_http::Metrics) {
        let up = match self {
            Self::Redis(b) => b.up().clone(),
            Self::Memcached(b) => b.up().clone(),
        };
        let help = format!(
            "1 when the last command to the {} coordination backend succeeded",
            self.name()
        );
        metrics.with_registry(|registry| registry.register("svc_coordination_up", help, up));
    }

    /// A round trip.
    async fn ping(&self) -> Result<(), String> {
        match self {
            Self::Redis(b) => b.ping().await,
            Self::Memcached(b) => b.ping().await,
        }
    }
}

/// `prefix` + `kind` + `:` + the hex SHA-256 of `parts` joined by NUL (no part can forge
/// another's boundary). Request-derived values enter keys only this way, so a key is at most
/// the prefix (64 bytes) + `kind` + 65, of letters, digits and the prefix's punctuation: within
/// Memcached's 250 bytes and free of spaces and control characters.
fn hashed_key(prefix: &str, kind: &str, parts: &[&str]) -> String {
    let digest = svc_crypto::digest::sha256(parts.join("\0").as_bytes());
    let mut key = String::with_capacity(prefix.len() + kind.len() + 65);
    key.push_str(prefix);
    key.push_str(kind);
    key.push(':');
    for b in digest {
        let _ = write!(key, "{b:02x}");
    }
    key
}

/// Readiness while throttling fails closed: without the backend every throttled request is
/// refused.
pub(crate) struct CoordinationReadiness(pub(crate) Coordination);

#[async_trait]
impl svc_http::ReadinessCheck for CoordinationReadiness {
    fn name(&self) -> &str {
        match self.0 {
            Coordination::Redis(_) => "coordination.redis",
            Coordination::Memcached(_) => "coordination.memcached",
        }
    }

    async fn check(&self) -> Result<(), String> {
        self.0.ping().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_prefixed_bounded_and_unambiguous() {
        let a = hashed_key("svc:", "dpop", &["ten_1", "jkt", "jti"]);
        assert!(a.starts_with("svc:dpop:"));
        assert_eq!(a.len(), "svc:dpop:".len() + 64);
        let long = "x".repeat(10_000);
        assert_eq!(
            hashed_key("p:", "throttle", &[&long]).len(),
            "p:throttle:".len() + 64
        );
        assert_ne!(
            hashed_key("svc:", "dpop", &["ten_1", "a:b", "c"]),
            hashed_key("svc:", "dpop", &["ten_1", "a", "b:c"]),
            "a separator inside a part cannot forge another key"
        );
        assert_ne!(a, hashed_key("svc:", "throttle", &["ten_1", "jkt", "jti"]));
    }

    #[test]
    fn request_bytes_never_reach_a_key_as_such() {
        let hostile = "a b\r\nset evil 0 0 1\r\n\u{0}\u{7f}é";
        let key = hashed_key(&"p".repeat(64), "throttle", &[hostile, hostile]);
        assert!(key.len() <= 250, "{}", key.len());
        assert!(
            key.bytes().all(|b| b.is_ascii_graphic()),
            "no space or control byte: {key:?}"
        );
    }
}
