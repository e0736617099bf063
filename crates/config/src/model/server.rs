//! `[server]`, `[server.tls]` and `[server.endpoint_throttle]`: the HTTP listener, the hosts and
//! proxies it trusts, and its timeouts.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::secret::Secret;
use crate::values::ProxyNetwork;

/// How the listener speaks to clients.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// Plain HTTP/1.1 and h2c; development, or behind a TLS-terminating proxy outside production.
    #[default]
    PlainHttp,
    /// TLS terminated in-process, HTTP/2 only (ALPN `h2`); needs `[server.tls]`.
    TlsH2Only,
}

/// The HTTP listener.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Address to bind. Anything other than a loopback address or "localhost" counts as public
    /// and needs `security.production = true`. Default: "127.0.0.1".
    pub host: String,
    /// TCP port; 0 picks a free port (tests). Default: 8080.
    pub port: u16,
    /// Listener transport: "plain_http" or "tls_h2_only" (required in production). Default:
    /// "plain_http".
    pub transport: Transport,
    /// Domain under which tenants live as subdomains (`{slug}.{base_domain}`), a bare host name
    /// such as "auth.example.com" or "localhost". Unset with no `tenant.default_tenant_slug`:
    /// single "default" tenant (development). No default.
    #[schemars(example = &"auth.example.com")]
    pub base_domain: Option<String>,
    /// Host names accepted in the `Host` header: exact names ("auth.example.com") or suffix
    /// patterns ("*.auth.example.com"); ports are ignored. Empty accepts any host (development
    /// only; required in production). Default: [].
    pub allowed_hosts: Vec<String>,
    /// Networks whose `X-Forwarded-*` headers are trusted: CIDRs ("10.0.0.0/8") or bare addresses
    /// (taken as /32 or /128). Production needs this or `direct_client_exposure = true`.
    /// Default: [].
    pub trusted_proxies: Vec<ProxyNetwork>,
    /// Clients connect directly (no proxy in front); forwarded headers are ignored. Default: false.
    pub direct_client_exposure: bool,
    /// Bearer token required by `/metrics`; unset leaves it unauthenticated. Redacted when
    /// printed. No default.
    #[schemars(example = &"change-me")]
    pub metrics_bearer_token: Option<Secret>,
    /// Request throttle in front of the client-authenticated protocol endpoints.
    pub endpoint_throttle: EndpointThrottle,
    /// Seconds before an in-flight request is cut off; 0 disables the limit (not allowed in
    /// production). Default: 30. Allowed range: 0..=3600.
    pub request_timeout_secs: u32,
    /// Seconds to drain in-flight requests on shutdown; 0 stops at once (not allowed in
    /// production). Default: 30. Allowed range: 0..=3600.
    pub shutdown_deadline_secs: u32,
    /// Largest request body accepted, in bytes. Default: 1048576 (1 MiB). Allowed range:
    /// 1024..=67108864.
    pub max_request_body_bytes: u64,
    /// Base URI of the `type` member of problem+json errors (`{error_type_base}/<class>`).
    /// Default when unset: "{issuer}/problems".
    #[schemars(example = &"https://docs.example.com/problems")]
    pub error_type_base: Option<String>,
    /// In-process TLS, used when `transport = "tls_h2_only"`.
    pub tls: TlsConfig,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".to_owned(),
            port: 8080,
            transport: Transport::PlainHttp,
            base_domain: None,
            allowed_hosts: Vec::new(),
            trusted_proxies: Vec::new(),
            direct_client_exposure: false,
            metrics_bearer_token: None,
            endpoint_throttle: EndpointThrottle::default(),
            request_timeout_secs: 30,
            shutdown_deadline_secs: 30,
            max_request_body_bytes: 1024 * 1024,
            error_type_base: None,
            tls: TlsConfig::default(),
        }
    }
}

/// Certificate files for `transport = "tls_h2_only"`. Relative paths are taken from the working
/// directory; every file named must be readable at startup.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TlsConfig {
    /// PEM certificate chain (leaf first). Required for "tls_h2_only". No default.
    #[schemars(example = &"/etc/svc/tls/cert.pem")]
    pub cert_pem_path: Option<PathBuf>,
    /// PEM private key of the certificate. Required for "tls_h2_only". No default.
    #[schemars(example = &"/etc/svc/tls/key.pem")]
    pub key_pem_path: Option<PathBuf>,
    /// PEM bundle of CAs whose client certificates are accepted (optional trust bundle). No
    /// default.
    #[schemars(example = &"/etc/svc/tls/clients-ca.pem")]
    pub ca_pem_path: Option<PathBuf>,
}

/// Token-bucket throttle of the client-authenticated protocol endpoints (`/oauth/token`,
/// `/oauth/introspect`, `/oauth/revoke`), per client (as claimed by `client_id` or the Basic user
/// name) and per client IP (the peer address, or the forwarded one from a trusted proxy), before
/// any credential is checked.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EndpointThrottle {
    /// Turn the throttle on. Default: false.
    pub enabled: bool,
    /// Sustained requests per second, for each client and each client IP. Default: 20. Allowed
    /// range: 1..=1000000.
    pub requests_per_second: u32,
    /// Requests a client or client IP may burst above the sustained rate. Default: 40. Allowed
    /// range: 1..=1000000.
    pub burst: u32,
}

impl Default for EndpointThrottle {
    fn default() -> Self {
        Self {
            enabled: false,
            requests_per_second: 20,
            burst: 40,
        }
    }
}
