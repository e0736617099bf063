//! `[verified_domains]`: how the proof of an organization's domain claim is looked up — which
//! DNS servers answer the TXT queries, how long a lookup may take, and whether the HTTPS
//! well-known method is offered.

use std::net::SocketAddr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Verification of the domains organizations claim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct VerifiedDomainsConfig {
    /// DNS servers asked for the `_svc-verification.<domain>` TXT records, as `ip:port`
    /// (`["127.0.0.1:5353"]`), over UDP and TCP. Empty: the system's resolvers
    /// (`/etc/resolv.conf`). Answers are never cached, so a record just published counts at
    /// once.
    #[schemars(with = "Vec<String>")]
    pub dns_servers: Vec<SocketAddr>,
    /// Milliseconds one verification lookup (DNS query or HTTPS fetch) may take. Default: 5000.
    /// Allowed range: 100..=30000.
    pub timeout_ms: u32,
    /// Offer the HTTPS method: the file `https://<domain>/.well-known/svc-domain-verification.txt`,
    /// fetched through the SSRF guard (public addresses only, no redirects, 4 KiB at most).
    /// Default: true.
    pub https_check: bool,
}

impl Default for VerifiedDomainsConfig {
    fn default() -> Self {
        Self {
            dns_servers: Vec::new(),
            timeout_ms: 5_000,
            https_check: true,
        }
    }
}
