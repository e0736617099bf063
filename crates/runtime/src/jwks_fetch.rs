//! Fetching an application's `jwks_uri` for `private_key_jwt` (RFC 7523 §3, RFC 7591 §2):
//! outbound requests to an address a tenant chose, so they go through the same SSRF guard as
//! webhook deliveries (`svc_webhooks::egress`):
//!
//! - `https` only in production (`http` is allowed outside production for local test servers);
//! - in production every resolved address must be public (no loopback, private, link-local,
//!   carrier-grade NAT, unspecified, multicast, or mapped/translated forms of those), checked
//!   by the client's resolver so the address checked is the address connected to;
//! - no redirects, a 5 s timeout and a 64 KiB cap on the document.

use async_trait::async_trait;
use std::sync::Arc;
use std::time::Duration;
use svc_domain::{TargetPolicy, WebhookUrl};
use svc_oauth::client_auth::JwksFetcher;
use svc_webhooks::egress::{check_target, describe_failure, guarded_client};

/// Largest JWKS document accepted.
const MAX_BYTES: usize = 64 * 1024;
/// Time for the whole fetch.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The runtime's `jwks_uri` fetcher.
pub(crate) struct GuardedJwksFetcher {
    policy: TargetPolicy,
    client: Option<reqwest::Client>,
}

impl GuardedJwksFetcher {
    pub(crate) fn new(production: bool) -> Self {
        let policy = TargetPolicy {
            https_only: production,
            standard_port_only: false,
            public_only: production,
        };
        let client = guarded_client(policy, TIMEOUT, Arc::new(svc_webhooks::SystemLookup)).ok();
        Self { policy, client }
    }
}

#[async_trait]
impl JwksFetcher for GuardedJwksFetcher {
    async fn fetch(&self, uri: &str) -> Result<String, String> {
        let url =
            WebhookUrl::parse(uri).map_err(|_| "jwks_uri is not an http(s) URL".to_owned())?;
        check_target(self.policy, &url).map_err(|e| format!("jwks_uri refused: {e}"))?;
        let client = self.client.as_ref().ok_or("cannot build the HTTP client")?;
        let mut response = client.get(url.url().clone()).send().await.map_err(|e| {
            format!(
                "jwks_uri could not be fetched: {}",
                describe_failure(&e, TIMEOUT)
            )
        })?;
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
        assert!(
            guard
                .fetch("http://127.0.0.1:1/jwks")
                .await
                .unwrap_err()
                .starts_with("jwks_uri could not be fetched")
        );
    }

    #[tokio::test]
    async fn production_refuses_plain_http_and_internal_targets() {
        let guard = GuardedJwksFetcher::new(true);
        assert_eq!(
            guard.fetch("http://example.com/jwks").await.unwrap_err(),
            "jwks_uri refused: url must use https"
        );
        for internal in [
            "https://127.0.0.1:1/jwks",
            "https://[::1]/jwks",
            "https://[::ffff:169.254.169.254]/jwks",
            "https://2130706433/jwks",
        ] {
            let refused = guard.fetch(internal).await.unwrap_err();
            assert!(
                refused.contains("internal address"),
                "{internal}: {refused}"
            );
        }
        let by_name = guard.fetch("https://localhost:1/jwks").await.unwrap_err();
        assert!(
            by_name.contains("target refused") && by_name.contains("internal address"),
            "a name resolving to loopback is refused after resolution: {by_name}"
        );
        assert_eq!(
            guard.fetch("ftp://example.com/jwks").await.unwrap_err(),
            "jwks_uri is not an http(s) URL"
        );
    }
}
