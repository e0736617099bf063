//! The SSRF guard for requests to tenant-chosen addresses (webhook receivers, `jwks_uri`):
//! an HTTP client whose DNS resolver refuses internal addresses, so the address that was checked
//! is the address connected to (no check-then-connect race, no DNS rebinding), plus the static
//! [`TargetPolicy`] check for what the resolver never sees (IP-literal hosts, scheme, port).
//!
//! The client never follows redirects, ignores proxy variables (a proxy would hide the target
//! from the resolver), and has connect and total timeouts.

use futures_util::future::BoxFuture;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use svc_domain::{TargetError, TargetPolicy, WebhookUrl, is_public_ip};

/// Name resolution, a seam so tests can play DNS tricks without a DNS server.
pub trait Lookup: Send + Sync + 'static {
    /// The addresses of `host`.
    fn lookup(&self, host: String) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>>;
}

/// The operating system's resolver.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup(&self, host: String) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((host.as_str(), 0)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// A target refused after resolution: the name resolved to an address that is not public.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RefusedTarget(pub TargetError);

/// A reqwest resolver that hands out addresses only when every address of the name is allowed.
struct GuardedResolver {
    public_only: bool,
    lookup: Arc<dyn Lookup>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let public_only = self.public_only;
        let lookup = self.lookup.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let ips = lookup.lookup(host).await?;
            // One internal address among public ones is refused too: a name that mixes them is
            // a rebinding attempt, not a receiver.
            if public_only && let Some(ip) = ips.iter().find(|ip| !is_public_ip(**ip)) {
                return Err(Box::new(RefusedTarget(TargetError::InternalAddress(*ip)))
                    as Box<dyn std::error::Error + Send + Sync>);
            }
            let addrs: Addrs = Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// An HTTP client for tenant-chosen targets under `policy`: every connection goes through the
/// guarded resolver; no redirects, no proxies, `timeout` in total.
pub fn guarded_client(
    policy: TargetPolicy,
    timeout: Duration,
    lookup: Arc<dyn Lookup>,
) -> Result<reqwest::Client, reqwest::Error> {
    guarded_client_builder(policy, timeout, lookup).build()
}

/// The builder behind [`guarded_client`], for a caller that adds to it (trusted roots) before
/// building; everything the guard needs is already set.
pub fn guarded_client_builder(
    policy: TargetPolicy,
    timeout: Duration,
    lookup: Arc<dyn Lookup>,
) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .dns_resolver(Arc::new(GuardedResolver {
            public_only: policy.public_only,
            lookup,
        }))
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .connect_timeout(timeout.min(Duration::from_secs(5)))
        .timeout(timeout)
        .user_agent(concat!("svc-webhooks/", env!("CARGO_PKG_VERSION")))
}

/// The static half of the guard, for every attempt (a policy may have tightened since the
/// subscription was created).
pub fn check_target(policy: TargetPolicy, url: &WebhookUrl) -> Result<(), TargetError> {
    policy.check(url)
}

/// A short, secret-free description of a failed request: what the history and logs show.
pub fn describe_failure(error: &reqwest::Error, timeout: Duration) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(refused) = e.downcast_ref::<RefusedTarget>() {
            return format!("target refused: {refused}");
        }
        source = e.source();
    }
    if error.is_timeout() {
        if timeout < Duration::from_secs(1) {
            format!("no answer within {} ms", timeout.as_millis())
        } else {
            format!("no answer within {} s", timeout.as_secs())
        }
    } else if error.is_connect() {
        "could not connect to the receiver (DNS or TCP/TLS failure)".into()
    } else {
        "the request failed before an answer arrived".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A resolver that answers every name with fixed addresses, and counts lookups.
    struct FixedLookup(Vec<IpAddr>, Arc<Mutex<u32>>);

    impl Lookup for FixedLookup {
        fn lookup(&self, _host: String) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
            *self.1.lock().unwrap() += 1;
            let ips = self.0.clone();
            Box::pin(async move { Ok(ips) })
        }
    }

    async fn receiver() -> (SocketAddr, Arc<Mutex<u32>>) {
        let hits = Arc::new(Mutex::new(0u32));
        let counter = hits.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move || {
                let counter = counter.clone();
                async move {
                    *counter.lock().unwrap() += 1;
                    "ok"
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (addr, hits)
    }

    const PUBLIC_ONLY: TargetPolicy = TargetPolicy {
        https_only: false,
        standard_port_only: false,
        public_only: true,
    };

    #[tokio::test]
    async fn a_name_resolving_to_an_internal_address_is_refused_before_any_connection() {
        let (addr, hits) = receiver().await;
        for ips in [
            vec!["127.0.0.1".parse().unwrap()],
            // Rebinding: a public address first, the internal one after it.
            vec![
                "93.184.216.34".parse().unwrap(),
                "127.0.0.1".parse().unwrap(),
            ],
            vec!["::ffff:127.0.0.1".parse().unwrap()],
        ] {
            let lookups = Arc::new(Mutex::new(0));
            let client = guarded_client(
                PUBLIC_ONLY,
                Duration::from_secs(2),
                Arc::new(FixedLookup(ips.clone(), lookups.clone())),
            )
            .unwrap();
            let url = format!("http://hooks.example.test:{}/hook", addr.port());
            let error = client.post(&url).send().await.unwrap_err();
            let text = describe_failure(&error, Duration::from_secs(2));
            assert!(
                text.starts_with("target refused: url points to an internal address"),
                "{ips:?}: {text}"
            );
            assert_eq!(*lookups.lock().unwrap(), 1);
        }
        assert_eq!(*hits.lock().unwrap(), 0, "the receiver was never reached");
    }

    #[tokio::test]
    async fn allowed_targets_are_reached_through_the_same_client_and_redirects_are_not_followed() {
        let (addr, hits) = receiver().await;
        let open = TargetPolicy {
            public_only: false,
            ..PUBLIC_ONLY
        };
        let client = guarded_client(
            open,
            Duration::from_secs(2),
            Arc::new(FixedLookup(
                vec!["127.0.0.1".parse().unwrap()],
                Arc::new(Mutex::new(0)),
            )),
        )
        .unwrap();
        let answer = client
            .post(format!("http://receiver.test:{}/hook", addr.port()))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        assert_eq!(*hits.lock().unwrap(), 1);

        let redirecting = axum::Router::new().route(
            "/moved",
            axum::routing::post(|| async { axum::response::Redirect::temporary("/elsewhere") }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, redirecting).await.unwrap() });
        let answer = client
            .post(format!("http://127.0.0.1:{port}/moved"))
            .send()
            .await
            .unwrap();
        assert_eq!(
            answer.status(),
            307,
            "the redirect is returned, not followed"
        );
    }

    #[tokio::test]
    async fn timeouts_and_unreachable_hosts_are_described_without_the_url() {
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = silent.local_addr().unwrap().port();
        // Accepts connections and never answers.
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = silent.accept().await {
                held.push(socket);
            }
        });
        let open = TargetPolicy {
            public_only: false,
            ..PUBLIC_ONLY
        };
        let timeout = Duration::from_millis(300);
        let client = guarded_client(open, timeout, Arc::new(SystemLookup)).unwrap();
        let error = client
            .post(format!("http://127.0.0.1:{port}/secret-token-in-path"))
            .send()
            .await
            .unwrap_err();
        let text = describe_failure(&error, Duration::from_secs(15));
        assert_eq!(text, "no answer within 15 s");
        let error = client
            .post("http://127.0.0.1:1/x")
            .send()
            .await
            .unwrap_err();
        let text = describe_failure(&error, timeout);
        assert!(
            !text.contains("127.0.0.1") && !text.contains("/x"),
            "{text}"
        );
    }
}
