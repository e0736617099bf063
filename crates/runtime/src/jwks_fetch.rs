//! Fetching an application's `jwks_uri` for `private_key_jwt` (RFC 7523 §3, RFC 7591 §2), through
//! the deployment's guarded fetcher (`crate::guarded_fetch`: the webhooks' SSRF guard, no
//! redirects, a 5 s timeout) with a 64 KiB cap on the document.

use crate::guarded_fetch::{GuardedFetcher, Kind};
use async_trait::async_trait;
use svc_oauth::client_auth::JwksFetcher;

/// Largest JWKS document accepted.
const MAX_BYTES: usize = 64 * 1024;

const JWKS: Kind = Kind {
    name: "jwks_uri",
    max_bytes: MAX_BYTES,
    // Servers publish key sets as `application/jwk-set+json`, `application/json` and, often
    // enough, `text/plain`: the key set's own checks decide.
    json_only: false,
};

/// The runtime's `jwks_uri` fetcher.
pub(crate) struct GuardedJwksFetcher {
    fetcher: GuardedFetcher,
}

impl GuardedJwksFetcher {
    pub(crate) fn new(production: bool) -> Self {
        Self {
            fetcher: GuardedFetcher::new(production),
        }
    }
}

#[async_trait]
impl JwksFetcher for GuardedJwksFetcher {
    async fn fetch(&self, uri: &str) -> Result<String, String> {
        let fetched = self.fetcher.get(uri, JWKS).await?;
        String::from_utf8(fetched.body).map_err(|_| "jwks_uri document is not UTF-8".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guarded_fetch::tests::serve;

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
