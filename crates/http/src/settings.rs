//! Plain HTTP settings handed in by the runtime.
//!
//! This crate must not depend on `svc-config`: the runtime maps its typed configuration
//! (`[server]` section of the spec) onto [`HttpSettings`] and passes it to [`crate::router`].

use std::time::Duration;

use ipnet::IpNet;
use secrecy::SecretString;

/// Settings shared by every runtime plane's HTTP stack.
///
/// `Debug` is safe to log: the metrics token is a [`SecretString`], which redacts itself.
#[derive(Clone, Debug)]
pub struct HttpSettings {
    /// `server.allowed_hosts`: exact host names (`id.example.com`, `127.0.0.1`, `[::1]`) or
    /// `*.suffix` patterns that match one or more labels in front of `suffix`. Ports are ignored.
    /// Empty means every host is accepted (development only; production mode refuses to start).
    pub allowed_hosts: Vec<String>,
    /// `server.trusted_proxies`: peers whose `X-Forwarded-For`, `X-Forwarded-Proto` and
    /// `X-Forwarded-Host` headers are believed. Forwarded headers from any other peer are ignored.
    pub trusted_proxies: Vec<IpNet>,
    /// `server.direct_client_exposure`: the operator states that clients may connect directly.
    /// Trust stays peer-based either way (forwarded headers count only from `trusted_proxies`),
    /// so this flag changes no behaviour here; the config guards use it, and the router logs a
    /// startup warning when neither it nor `trusted_proxies` is set.
    pub direct_client_exposure: bool,
    /// `server.metrics_bearer_token`: when set, `/metrics` requires `Authorization: Bearer <token>`.
    pub metrics_bearer_token: Option<SecretString>,
    /// `server.request_timeout_secs`: longest a handler may run before the client gets a 503.
    /// [`Duration::ZERO`] disables the timeout.
    pub request_timeout: Duration,
    /// Largest request body accepted, in bytes. Larger declared bodies get 413 before any handler
    /// runs; undeclared (streamed) bodies fail with 413 once a reader passes this many bytes.
    pub max_request_body_bytes: usize,
    /// Base URI of problem `type` values (`{base}/not-found`). When `None` the base is
    /// `{scheme}://{host}/problems` of the current request.
    pub error_type_base: Option<String>,
    /// The listener terminates TLS itself, so the request scheme is `https`.
    pub tls: bool,
}

impl Default for HttpSettings {
    /// Development defaults: no host allowlist, no trusted proxies, no metrics token,
    /// a 30 s timeout and a 1 MiB body limit.
    fn default() -> Self {
        Self {
            allowed_hosts: Vec::new(),
            trusted_proxies: Vec::new(),
            direct_client_exposure: false,
            metrics_bearer_token: None,
            request_timeout: Duration::from_secs(30),
            max_request_body_bytes: 1024 * 1024,
            error_type_base: None,
            tls: false,
        }
    }
}
