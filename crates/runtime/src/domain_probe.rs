//! The runtime's [`DomainProbe`]: how domain verification looks at the outside world, built
//! from `[verified_domains]`.
//!
//! - TXT records are asked of a `hickory-resolver` pointed at `dns_servers` (or the system's
//!   resolvers), without a cache (a record just published counts at once) and with one attempt
//!   per server within `timeout_ms`. The name is asked fully qualified, so no search domain of
//!   the host is ever appended to a tenant's domain.
//! - The HTTPS file is fetched with the SSRF-guarded client of webhook deliveries
//!   (`svc_webhooks::egress`): https on 443 only, every resolved address public (checked by the
//!   resolver that hands the addresses to the connection, so no rebinding), no redirects, no
//!   proxy, `timeout_ms` in total and at most [`MAX_BODY_BYTES`]. The host is resolved by the
//!   same configured DNS servers as the TXT records, so both methods see one view of DNS.

use async_trait::async_trait;
use futures_util::future::BoxFuture;
use hickory_resolver::TokioResolver;
use hickory_resolver::config::{NameServerConfig, ResolveHosts, ResolverConfig};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::net::{DnsError, NetError};
use hickory_resolver::proto::rr::RData;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use svc_config::VerifiedDomainsConfig;
use svc_domain::{TargetPolicy, WELL_KNOWN_PATH};
use svc_manage::domains::{DomainProbe, ProbeError};
use svc_webhooks::egress::{Lookup, describe_failure, guarded_client};

/// Largest verification file read; the one line it must hold is about 60 bytes.
pub(crate) const MAX_BODY_BYTES: usize = 4 * 1024;

/// What the HTTPS method may reach in service: https, port 443, public addresses only.
const HTTPS_POLICY: TargetPolicy = TargetPolicy {
    https_only: true,
    standard_port_only: true,
    public_only: true,
};

/// The runtime's probe.
pub(crate) struct RuntimeDomainProbe {
    resolver: TokioResolver,
    client: reqwest::Client,
    timeout: Duration,
    https: bool,
    /// Where the well-known file of a domain is fetched: `https://<domain>` in service; a unit
    /// test serves it over http on a local port.
    origin: Origin,
}

/// The scheme and port of the verification file's URL.
#[derive(Debug, Clone, Copy)]
struct Origin {
    scheme: &'static str,
    port: Option<u16>,
}

impl RuntimeDomainProbe {
    /// The probe `[verified_domains]` describes.
    pub(crate) fn new(config: &VerifiedDomainsConfig) -> Result<Self, crate::RuntimeError> {
        let timeout = Duration::from_millis(u64::from(config.timeout_ms));
        let resolver = resolver(&config.dns_servers, timeout).map_err(|e| {
            crate::RuntimeError::Bootstrap(format!(
                "cannot build the DNS resolver of verified_domains: {e}"
            ))
        })?;
        let lookup = Arc::new(ResolverLookup(resolver.clone()));
        let client = guarded_client(HTTPS_POLICY, timeout, lookup).map_err(|e| {
            crate::RuntimeError::Bootstrap(format!(
                "cannot build the HTTP client of verified_domains: {e}"
            ))
        })?;
        Ok(Self {
            resolver,
            client,
            timeout,
            https: config.https_check,
            origin: Origin {
                scheme: "https",
                port: None,
            },
        })
    }

    fn url(&self, domain: &str) -> String {
        match self.origin.port {
            Some(port) => format!("{}://{domain}:{port}{WELL_KNOWN_PATH}", self.origin.scheme),
            None => format!("{}://{domain}{WELL_KNOWN_PATH}", self.origin.scheme),
        }
    }
}

/// A resolver asking `servers` (the system's when empty), uncached, one attempt, `timeout` per
/// query.
fn resolver(servers: &[SocketAddr], timeout: Duration) -> Result<TokioResolver, NetError> {
    let mut builder = if servers.is_empty() {
        TokioResolver::builder_tokio()?
    } else {
        let name_servers = servers
            .iter()
            .map(|server| {
                let mut ns = NameServerConfig::udp_and_tcp(server.ip());
                for connection in &mut ns.connections {
                    connection.port = server.port();
                }
                ns
            })
            .collect();
        TokioResolver::builder_with_config(
            ResolverConfig::from_name_servers(name_servers),
            TokioRuntimeProvider::default(),
        )
    };
    let options = builder.options_mut();
    options.timeout = timeout;
    options.attempts = 1;
    options.cache_size = 0;
    options.use_hosts_file = ResolveHosts::Never;
    builder.build()
}

/// `name` fully qualified, so no search domain is appended.
fn fqdn(name: &str) -> String {
    format!("{}.", name.trim_end_matches('.'))
}

/// The guarded client's name resolution, through the configured DNS servers.
struct ResolverLookup(TokioResolver);

impl Lookup for ResolverLookup {
    fn lookup(&self, host: String) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        let resolver = self.0.clone();
        Box::pin(async move {
            let found = resolver
                .lookup_ip(fqdn(&host))
                .await
                .map_err(|e| std::io::Error::other(dns_failure(&e)))?;
            Ok(found.iter().collect())
        })
    }
}

/// A lookup failure in a few words (never any record content).
fn dns_failure(e: &NetError) -> String {
    match e {
        NetError::Dns(DnsError::NoRecordsFound(_)) => "no such record".into(),
        NetError::Dns(DnsError::ResponseCode(code)) => format!("the DNS server answered {code}"),
        NetError::Timeout => "no answer from the DNS servers in time".into(),
        _ => "the DNS servers could not be reached".into(),
    }
}

#[async_trait]
impl DomainProbe for RuntimeDomainProbe {
    async fn txt_records(&self, name: &str) -> Result<Vec<String>, ProbeError> {
        // The resolver's own timeout applies per query; this bounds the whole lookup.
        let lookup = tokio::time::timeout(self.timeout * 2, self.resolver.txt_lookup(fqdn(name)))
            .await
            .map_err(|_| ProbeError::Failed("no answer from the DNS servers in time".into()))?;
        match lookup {
            Ok(found) => Ok(found
                .answers()
                .iter()
                .filter_map(|record| match &record.data {
                    // A TXT record's strings, joined (RFC 7208 §3.3): long values are split.
                    RData::TXT(txt) => Some(
                        txt.txt_data
                            .iter()
                            .map(|part| String::from_utf8_lossy(part))
                            .collect::<String>(),
                    ),
                    _ => None,
                })
                .collect()),
            Err(NetError::Dns(DnsError::NoRecordsFound(_))) => Err(ProbeError::NotFound),
            Err(e) => Err(ProbeError::Failed(dns_failure(&e))),
        }
    }

    async fn well_known(&self, domain: &str) -> Result<String, ProbeError> {
        if !self.https {
            return Err(ProbeError::Refused(
                "the HTTPS method is switched off".into(),
            ));
        }
        let mut response = self
            .client
            .get(self.url(domain))
            .send()
            .await
            .map_err(|e| {
                let text = describe_failure(&e, self.timeout);
                if text.starts_with("target refused") {
                    ProbeError::Refused(text)
                } else {
                    ProbeError::Failed(text)
                }
            })?;
        match response.status().as_u16() {
            200 => {}
            404 | 410 => return Err(ProbeError::NotFound),
            other => return Err(ProbeError::Failed(format!("the server answered {other}"))),
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|_| ProbeError::Failed("the answer could not be read".into()))?
        {
            if body.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(ProbeError::Failed(format!(
                    "the file is larger than {MAX_BODY_BYTES} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        String::from_utf8(body).map_err(|_| ProbeError::Failed("the file is not UTF-8".into()))
    }

    fn https_enabled(&self) -> bool {
        self.https
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name resolves to 127.0.0.1, as a domain whose DNS points at the loopback would.
    struct Loopback;

    impl Lookup for Loopback {
        fn lookup(&self, _host: String) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
            Box::pin(async { Ok(vec![IpAddr::from([127, 0, 0, 1])]) })
        }
    }

    async fn serve(router: axum::Router) -> u16 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        port
    }

    /// A probe fetching `http://<domain>:<port>` through the guard with `policy`, every name
    /// resolving to the loopback (the guard's `Lookup` seam).
    fn probe(policy: TargetPolicy, port: u16) -> RuntimeDomainProbe {
        let config = VerifiedDomainsConfig {
            dns_servers: vec!["127.0.0.1:9".parse().unwrap()],
            timeout_ms: 2_000,
            https_check: true,
        };
        let timeout = Duration::from_secs(2);
        RuntimeDomainProbe {
            resolver: resolver(&config.dns_servers, timeout).unwrap(),
            client: guarded_client(policy, timeout, Arc::new(Loopback)).unwrap(),
            timeout,
            https: true,
            origin: Origin {
                scheme: "http",
                port: Some(port),
            },
        }
    }

    const OPEN: TargetPolicy = TargetPolicy {
        https_only: false,
        standard_port_only: false,
        public_only: false,
    };

    #[tokio::test]
    async fn the_well_known_file_is_read_within_limits_and_redirects_are_not_followed() {
        use axum::routing::get;
        let port = serve(
            axum::Router::new()
                .route(
                    "/.well-known/svc-domain-verification.txt",
                    get(|headers: axum::http::HeaderMap| async move {
                        let host = headers
                            .get("host")
                            .and_then(|h| h.to_str().ok())
                            .unwrap_or_default()
                            .to_owned();
                        match host.split(':').next() {
                            Some("good.example") => "svc-domain-verification=abc\n".into(),
                            Some("huge.example") => "x".repeat(MAX_BODY_BYTES + 1),
                            _ => String::new(),
                        }
                    }),
                )
                .fallback(|| async { axum::http::StatusCode::NOT_FOUND }),
        )
        .await;
        let open = probe(OPEN, port);
        assert_eq!(
            open.well_known("good.example").await.unwrap(),
            "svc-domain-verification=abc\n"
        );
        assert_eq!(
            open.well_known("huge.example").await.unwrap_err(),
            ProbeError::Failed(format!("the file is larger than {MAX_BODY_BYTES} bytes"))
        );

        let moved = serve(axum::Router::new().route(
            "/.well-known/svc-domain-verification.txt",
            get(|| async { axum::response::Redirect::temporary("http://good.example/") }),
        ))
        .await;
        assert_eq!(
            probe(OPEN, moved)
                .well_known("good.example")
                .await
                .unwrap_err(),
            ProbeError::Failed("the server answered 307".into())
        );
        let missing = serve(axum::Router::new()).await;
        assert_eq!(
            probe(OPEN, missing)
                .well_known("good.example")
                .await
                .unwrap_err(),
            ProbeError::NotFound
        );
    }

    #[tokio::test]
    async fn a_domain_resolving_to_the_loopback_is_refused_before_any_connection() {
        let hits = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let counter = hits.clone();
        let port = serve(axum::Router::new().fallback(move || {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async { "svc-domain-verification=abc" }
        }))
        .await;
        let guarded = probe(
            TargetPolicy {
                public_only: true,
                ..OPEN
            },
            port,
        );
        match guarded.well_known("good.example").await {
            Err(ProbeError::Refused(text)) => {
                assert!(text.contains("internal address"), "{text}");
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 0);
    }

    #[test]
    fn names_are_asked_fully_qualified_and_service_urls_are_https_on_443() {
        assert_eq!(
            fqdn("_svc-verification.example.com"),
            "_svc-verification.example.com."
        );
        assert_eq!(fqdn("example.com."), "example.com.");
        const {
            assert!(HTTPS_POLICY.https_only && HTTPS_POLICY.standard_port_only);
            assert!(HTTPS_POLICY.public_only);
        }
    }
}
