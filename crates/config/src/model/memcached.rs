//! `[memcached]`: the Memcached coordination backend (`deployment.coordination_backend =
//! "memcached"`), which carries the token-endpoint throttle's counters and DPoP proof `jti`s
//! across instances. Memcached has no publish/subscribe, so cache announcements stay on the
//! database's own feed (PostgreSQL `LISTEN/NOTIFY`) with this backend.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ThrottleFailMode;
use crate::secret::redact_url;

/// The Memcached server instances coordinate through.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MemcachedConfig {
    /// `memcache://host[:port]` (port 11211 when left out): one server, reached over TCP with
    /// the ASCII protocol (IPv4 addresses, or host names that resolve to one). No user, password,
    /// path or query: the ASCII protocol has no authentication, so keep the server on a private
    /// network. Required with `deployment.coordination_backend = "memcached"`, refused
    /// otherwise. No default.
    #[schemars(example = "memcache://127.0.0.1:11211")]
    pub url: Option<String>,
    /// Connections per process; each carries one command at a time, so this bounds the
    /// concurrent commands. Default: 4. Allowed range: 1..=64.
    pub pool_size: u32,
    /// Prefix of every key svc uses, so several deployments (or test runs) can share one
    /// Memcached. Letters, digits, `:`, `_`, `-`, `.`; 1 to 64 characters. Default: "svc:".
    pub key_prefix: String,
    /// How long one command (connecting included) may take before it counts as failed (then the
    /// failure modes apply), in milliseconds. Default: 500. Allowed range: 50..=10000.
    pub command_timeout_ms: u32,
    /// The throttle (`server.endpoint_throttle`) while Memcached is unreachable: "fail-open"
    /// (count in this process only) or "fail-closed" (refuse throttled requests and report the
    /// instance not ready). DPoP proof replay checks always fail closed. Default: "fail-open".
    pub throttle_fail_mode: ThrottleFailMode,
}

impl Default for MemcachedConfig {
    fn default() -> Self {
        Self {
            url: None,
            pool_size: 4,
            key_prefix: "svc:".into(),
            command_timeout_ms: 500,
            throttle_fail_mode: ThrottleFailMode::FailOpen,
        }
    }
}

impl MemcachedConfig {
    /// The `host:port` that `url` names, or why it names none. The one reading of the URL, for
    /// validation and for the runtime alike.
    pub fn address(&self) -> Option<Result<String, String>> {
        self.url.as_deref().map(parse_address)
    }
}

/// `memcache://host[:port]` → `host:port`. A refused URL is quoted redacted: it may carry a
/// password, which this backend never sends.
fn parse_address(url: &str) -> Result<String, String> {
    let shown = redact_url(url);
    let explain = || format!("memcached.url = \"{shown}\" must be memcache://host[:port]");
    let parsed = url::Url::parse(url).map_err(|_| explain())?;
    let plain = parsed.scheme() == "memcache"
        && parsed.username().is_empty()
        && parsed.password().is_none()
        && matches!(parsed.path(), "" | "/")
        && parsed.query().is_none()
        && parsed.fragment().is_none();
    let host = match parsed.host() {
        Some(url::Host::Domain(d)) if plain && !d.is_empty() => d.to_owned(),
        Some(url::Host::Ipv4(ip)) if plain => ip.to_string(),
        Some(url::Host::Ipv6(_)) if plain => {
            return Err(format!(
                "memcached.url = \"{shown}\": IPv6 addresses are not supported (use an IPv4 \
                 address or a host name)"
            ));
        }
        _ => return Err(explain()),
    };
    Ok(format!("{host}:{}", parsed.port().unwrap_or(11211)))
}

#[cfg(test)]
mod tests {
    use super::parse_address;

    #[test]
    fn only_plain_memcache_urls_name_an_address() {
        assert_eq!(
            parse_address("memcache://127.0.0.1:11311").unwrap(),
            "127.0.0.1:11311"
        );
        assert_eq!(
            parse_address("memcache://cache.internal").unwrap(),
            "cache.internal:11211"
        );
        assert_eq!(
            parse_address("memcache://cache.internal/").unwrap(),
            "cache.internal:11211"
        );
        let refused = parse_address("memcache://u:s3cret@127.0.0.1:11211").unwrap_err();
        assert!(!refused.contains("s3cret"), "{refused}");
        for bad in [
            "127.0.0.1:11211",
            "redis://127.0.0.1:6379",
            "memcache://u:p@127.0.0.1:11211",
            "memcache://127.0.0.1:11211/0",
            "memcache://127.0.0.1:11211?x=1",
            "memcache://[::1]:11211",
            "memcache://",
        ] {
            assert!(parse_address(bad).is_err(), "{bad}");
        }
    }
}
