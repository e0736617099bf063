//! Host allowlist (`server.allowed_hosts`): refuses requests for hosts this deployment does not
//! serve, with 400 `bad_request` (CONTRACTS.md "Tenancy and issuers").
//!
//! Issuer URLs, problem `type` URIs and tenant resolution are all derived from the host, so a
//! forged `Host` must never reach them. The effective host is the one in [`ClientContext`]
//! (a trusted proxy's `X-Forwarded-Host`, else the request's own). `/health/*` is exempt because
//! load-balancer probes address the instance by IP.

use std::net::Ipv6Addr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::client::{ClientContext, normalize_hostname};
use crate::Problem;

/// Paths that skip the host check.
const EXEMPT_PREFIX: &str = "/health/";

/// The compiled allowlist: exact names and `*.suffix` patterns, normalised like request hosts.
#[derive(Debug, Default)]
pub(crate) struct HostPolicy {
    exact: Vec<String>,
    /// Stored with the leading dot (`.example.com`).
    suffixes: Vec<String>,
    enabled: bool,
}

impl HostPolicy {
    /// Compiles the configured entries. Ports in entries are ignored; entries that can never
    /// match a valid host are logged and dropped (the list still counts as configured, so an
    /// all-invalid list refuses everything instead of allowing everything).
    pub(crate) fn new(entries: &[String]) -> Self {
        let mut policy = Self {
            enabled: !entries.is_empty(),
            ..Self::default()
        };
        for entry in entries {
            let entry = entry.trim();
            if let Some(suffix) = entry.strip_prefix("*.") {
                match normalize_hostname(suffix) {
                    Some(suffix) => policy.suffixes.push(format!(".{suffix}")),
                    None => tracing::warn!(entry, "ignoring invalid server.allowed_hosts pattern"),
                }
                continue;
            }
            match normalize_entry(entry) {
                Some(host) => policy.exact.push(host),
                None => tracing::warn!(entry, "ignoring invalid server.allowed_hosts entry"),
            }
        }
        policy
    }

    /// Whether an allowlist is configured at all.
    pub(crate) fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Whether `hostname` (normalised, without port) is allowed. Always true when disabled.
    pub(crate) fn allows(&self, hostname: &str) -> bool {
        if !self.enabled {
            return true;
        }
        self.exact.iter().any(|h| h == hostname)
            || self
                .suffixes
                .iter()
                // `ends_with(".example.com")` plus a non-empty remainder means one or more whole
                // labels in front; `example.com` itself and `evilexample.com` do not match.
                .any(|s| hostname.len() > s.len() && hostname.ends_with(s.as_str()))
    }
}

/// Normalises an exact entry: `Example.com`, `example.com:8080`, `::1`, `[::1]:8443`.
fn normalize_entry(entry: &str) -> Option<String> {
    if let Ok(ip) = entry.parse::<Ipv6Addr>() {
        return Some(format!("[{ip}]"));
    }
    let authority = super::client::normalize_authority(entry)?;
    Some(super::client::hostname_of(&authority).to_owned())
}

/// Refuses requests whose host is missing, malformed or not on the list.
pub(crate) async fn check_host(
    State(policy): State<Arc<HostPolicy>>,
    req: Request,
    next: Next,
) -> Response {
    if !policy.is_enabled() || req.uri().path().starts_with(EXEMPT_PREFIX) {
        return next.run(req).await;
    }
    let hostname = req
        .extensions()
        .get::<ClientContext>()
        .and_then(ClientContext::hostname);
    match hostname {
        Some(host) if policy.allows(host) => next.run(req).await,
        Some(host) => {
            tracing::info!(
                host,
                "refused request for a host outside server.allowed_hosts"
            );
            Problem::bad_request("host not allowed").into_response()
        }
        None => Problem::bad_request("missing or malformed Host header").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(entries: &[&str]) -> HostPolicy {
        HostPolicy::new(&entries.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn exact_entries_match_case_and_port_insensitively() {
        let p = policy(&["ID.Example.com:443", "127.0.0.1", "::1"]);
        assert!(p.allows("id.example.com"));
        assert!(p.allows("127.0.0.1"));
        assert!(p.allows("[::1]"));
        assert!(!p.allows("example.com"));
        assert!(!p.allows("id.example.com.evil"));
    }

    #[test]
    fn wildcard_matches_one_or_more_labels_only() {
        let p = policy(&["*.example.com"]);
        assert!(p.allows("acme.example.com"));
        assert!(p.allows("a.b.example.com"));
        assert!(!p.allows("example.com"));
        assert!(!p.allows("evilexample.com"));
        assert!(!p.allows("example.com.evil"));
    }

    #[test]
    fn empty_list_allows_everything_but_invalid_list_allows_nothing() {
        assert!(policy(&[]).allows("anything"));
        let p = policy(&["not a host", "*."]);
        assert!(p.is_enabled());
        assert!(!p.allows("not"));
    }
}
