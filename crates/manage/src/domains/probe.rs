//! The port through which domain verification looks at the outside world: the TXT records of
//! a name and the body of a domain's HTTPS well-known file. The runtime implements it (a DNS
//! resolver it can point at any server, and the SSRF-guarded HTTP client), so this crate needs
//! neither a resolver nor an HTTP client, and the use-case tests script it.

use async_trait::async_trait;

/// Why a probe found nothing to compare. Each is shown to the caller (the texts name the record
/// or URL, never anything it held), so none carries a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// The name does not exist (NXDOMAIN) or has no record of the type asked.
    #[error("no such record")]
    NotFound,
    /// The lookup or fetch failed or timed out (SERVFAIL, no answer, TLS, a non-200 status):
    /// what happened, in a few words.
    #[error("{0}")]
    Failed(String),
    /// The target was refused before any request: it resolves to an internal address, or the
    /// check is switched off.
    #[error("{0}")]
    Refused(String),
}

/// Looks up what a domain publishes.
#[async_trait]
pub trait DomainProbe: Send + Sync {
    /// The TXT records at `name` (each record's strings joined, as RFC 7208 §3.3 reads them).
    async fn txt_records(&self, name: &str) -> Result<Vec<String>, ProbeError>;

    /// The body of `https://<domain>/.well-known/svc-domain-verification.txt`, fetched through
    /// the SSRF guard (public addresses only, no redirects, a small size cap, a timeout).
    async fn well_known(&self, domain: &str) -> Result<String, ProbeError>;

    /// Whether the HTTPS method is offered (`verified_domains.https_check`).
    fn https_enabled(&self) -> bool;
}
