//! Fetching an application's `jwks_uri` for `private_key_jwt` (RFC 7523 §3, RFC 7591 §2):
//! outbound requests to an address a tenant chose, so they are fenced like any server-side
//! request forgery target (RFC 9700 §4.15 is about redirects; OWASP SSRF guidance for the rest):
//!
//! - `https` only in production (`http` is allowed outside production for local test servers);
//! - every resolved address must be public in production (no loopback, private, link-local,
//!   carrier-grade NAT, unspecified, multicast or IPv4-mapped forms of those), and the request is
//!   pinned to the address that was checked so DNS cannot change between check and use;
//! - no redirects, a 5 s timeout and a 64 KiB cap on the document.

use async_trait::async_trait;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;
use svc_oauth::client_auth::JwksFetcher;

/// Largest JWKS document accepted.
const MAX_BYTES: usize = 64 * 1024;

/// The runtime's `jwks_uri` fetcher.
pub(crate) struct GuardedJwksFetcher {
    production: bool,
}

impl GuardedJwksFetcher {
    pub(crate) fn new(production: bool) -> Self {
        Self { production }
    }
}

/// Whether an address is one a tenant-supplied URL may reach in production.
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b)) // carrier-grade NAT, RFC 6598
                || (a == 192 && b == 0 && v4.octets()[2] == 0) // IETF protocol assignments
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local, RFC 4193
                || (first & 0xffc0) == 0xfe80 // link-local
                || (first == 0x2001 && v6.segments()[1] == 0x0db8)) // documentation
        }
    }
}

#[async_trait]
impl JwksFetcher for GuardedJwksFetcher {
    async fn fetch(&self, uri: &str) -> Result<String, String> {
        let url = url::Url::parse(uri).map_err(|_| "jwks_uri is not a URL".to_owned())?;
        match url.scheme() {
            "https" => {}
            "http" if !self.production => {}
            _ => return Err("jwks_uri must use https".into()),
        }
        let host = url.host_str().ok_or("jwks_uri has no host")?.to_owned();
        let port = url.port_or_known_default().ok_or("jwks_uri has no port")?;
        let bare = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((bare.as_str(), port))
            .await
            .map_err(|_| "jwks_uri host does not resolve".to_owned())?
            .collect();
        let addr = *addrs.first().ok_or("jwks_uri host does not resolve")?;
        if self.production && addrs.iter().any(|a| !is_public(a.ip())) {
            return Err("jwks_uri resolves to an internal address".into());
        }
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(5))
            .resolve(&bare, addr)
            .build()
            .map_err(|_| "cannot build the HTTP client".to_owned())?;
        let mut response = client
            .get(url)
            .send()
            .await
            .map_err(|_| "jwks_uri could not be fetched".to_owned())?;
        if !response.status().is_success() {
            return Err(format!("jwks_uri answered {}", response.status().as_u16()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|_| "jwks_uri could not be read".to_owned())?
        {
            if body.len() + chunk.len() > MAX_BYTES {
                return Err("jwks_uri document is larger than 64 KiB".into());
            }
            body.extend_from_slice(&chunk);
        }
        String::from_utf8(body).map_err(|_| "jwks_uri document is not UTF-8".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_not_public() {
        for internal in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "2001:db8::1",
            "198.51.100.7",
        ] {
            assert!(!is_public(internal.parse().unwrap()), "{internal}");
        }
        for public in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    async fn serve(router: axum::Router) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        format!("http://{addr}")
    }

    #[tokio::test]
    async fn development_fetches_a_local_document_within_limits_and_never_follows_redirects() {
        use axum::routing::get;
        let base = serve(
            axum::Router::new()
                .route("/jwks", get(|| async { r#"{"keys":[]}"# }))
                .route("/huge", get(|| async { "x".repeat(MAX_BYTES + 1) }))
                .route(
                    "/moved",
                    get(|| async { axum::response::Redirect::temporary("/jwks") }),
                ),
        )
        .await;
        let guard = GuardedJwksFetcher::new(false);
        assert_eq!(
            guard.fetch(&format!("{base}/jwks")).await.unwrap(),
            r#"{"keys":[]}"#
        );
        assert_eq!(
            guard.fetch(&format!("{base}/huge")).await.unwrap_err(),
            "jwks_uri document is larger than 64 KiB"
        );
        assert_eq!(
            guard.fetch(&format!("{base}/moved")).await.unwrap_err(),
            "jwks_uri answered 307"
        );
        assert_eq!(
            guard.fetch("http://127.0.0.1:1/jwks").await.unwrap_err(),
            "jwks_uri could not be fetched"
        );
    }

    #[tokio::test]
    async fn production_refuses_plain_http_and_internal_targets() {
        let guard = GuardedJwksFetcher::new(true);
        assert_eq!(
            guard.fetch("http://example.com/jwks").await.unwrap_err(),
            "jwks_uri must use https"
        );
        assert_eq!(
            guard.fetch("https://127.0.0.1:1/jwks").await.unwrap_err(),
            "jwks_uri resolves to an internal address"
        );
        assert_eq!(
            guard.fetch("https://[::1]/jwks").await.unwrap_err(),
            "jwks_uri resolves to an internal address"
        );
        assert_eq!(
            guard.fetch("ftp://example.com/jwks").await.unwrap_err(),
            "jwks_uri must use https"
        );
    }
}
