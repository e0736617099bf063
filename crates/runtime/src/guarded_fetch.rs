//! Outbound GETs of documents at addresses someone outside the operator chose (an application's
//! `jwks_uri`, a client ID metadata document): one SSRF guard for all of them, the same as
//! webhook deliveries (`svc_webhooks::egress`):
//!
//! - `https` only in production (`http` is allowed outside production for local test servers);
//! - in production every resolved address must be public (no loopback, private, link-local,
//!   carrier-grade NAT, unspecified, multicast, or mapped/translated forms of those), checked
//!   by the client's resolver so the address checked is the address connected to;
//! - no redirects (a 3xx is an answer like any other non-200), a 5 s timeout, a size cap per
//!   kind of document, read in chunks so a large body is dropped before it is held whole;
//! - optionally a JSON content type (`application/json` or `application/…+json`);
//! - the answer's freshness (`Cache-Control: max-age`, `no-store`/`no-cache` as zero) for
//!   callers that cache.
//!
//! Errors are short, secret-free sentences naming the document ("jwks_uri answered 404"), fit
//! for an `error_description`.

use std::sync::Arc;
use std::time::Duration;
use svc_domain::{TargetPolicy, WebhookUrl};
use svc_webhooks::egress::{check_target, describe_failure};

/// Time for the whole fetch.
const TIMEOUT: Duration = Duration::from_secs(5);

/// What is fetched, for the limits and the words of an error.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Kind {
    /// How errors name the document (`jwks_uri`, `client_id`).
    pub name: &'static str,
    /// The largest body accepted.
    pub max_bytes: usize,
    /// Whether the answer must say it is JSON.
    pub json_only: bool,
}

/// A fetched document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fetched {
    /// The body, at most the kind's `max_bytes`.
    pub body: Vec<u8>,
    /// How long the answer says it stays fresh: `Some(0)` for `no-store`/`no-cache`, `None`
    /// when it does not say.
    pub max_age: Option<Duration>,
}

/// The guarded client of one deployment.
pub(crate) struct GuardedFetcher {
    policy: TargetPolicy,
    client: Option<reqwest::Client>,
}

impl GuardedFetcher {
    pub(crate) fn new(production: bool) -> Self {
        Self::trusting(production, &[])
    }

    /// Like [`GuardedFetcher::new`], trusting the CA certificates `roots` (PEM) besides the
    /// platform's ([`crate::BuildOptions::outbound_roots`]); a root that does not parse leaves
    /// the fetcher without a client (every fetch then fails, naming it).
    pub(crate) fn trusting(production: bool, roots: &[Vec<u8>]) -> Self {
        let policy = TargetPolicy {
            https_only: production,
            standard_port_only: false,
            public_only: production,
        };
        let mut builder = svc_webhooks::guarded_client_builder(
            policy,
            TIMEOUT,
            Arc::new(svc_webhooks::SystemLookup),
        );
        for pem in roots {
            match reqwest::Certificate::from_pem(pem) {
                Ok(root) => builder = builder.add_root_certificate(root),
                Err(_) => {
                    return Self {
                        policy,
                        client: None,
                    };
                }
            }
        }
        Self {
            policy,
            client: builder.build().ok(),
        }
    }

    /// GETs `uri` as a document of `kind`.
    pub(crate) async fn get(&self, uri: &str, kind: Kind) -> Result<Fetched, String> {
        self.get_authorized(uri, kind, None).await
    }

    /// [`GuardedFetcher::get`] with `bearer` as the access token when given (RFC 6750 §2.1).
    pub(crate) async fn get_authorized(
        &self,
        uri: &str,
        kind: Kind,
        bearer: Option<&str>,
    ) -> Result<Fetched, String> {
        let name = kind.name;
        let (client, url) = self.target(uri, kind)?;
        let mut request = client
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(token) = bearer {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.map_err(|e| unreachable(name, &e))?;
        if response.status() != reqwest::StatusCode::OK {
            return Err(format!("{name} answered {}", response.status().as_u16()));
        }
        let headers = response.headers();
        if kind.json_only && !is_json(headers.get(reqwest::header::CONTENT_TYPE)) {
            return Err(format!("{name} did not answer with a JSON content type"));
        }
        let max_age = max_age(headers.get(reqwest::header::CACHE_CONTROL));
        let body = read_capped(response, kind).await?;
        Ok(Fetched { body, max_age })
    }

    /// POSTs the form `form` to `uri`, with HTTP Basic authentication `basic` when given (RFC
    /// 6749 §2.3.1: both halves form-urlencoded before they are joined); any status is an
    /// answer, its body capped like a document of `kind`.
    pub(crate) async fn post_form(
        &self,
        uri: &str,
        kind: Kind,
        form: &[(&str, &str)],
        basic: Option<(&str, &str)>,
    ) -> Result<(u16, Vec<u8>), String> {
        let name = kind.name;
        let (client, url) = self.target(uri, kind)?;
        let mut request = client
            .post(url)
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some((user, password)) = basic {
            let encode =
                |v: &str| url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>();
            request = request.basic_auth(encode(user), Some(encode(password)));
        }
        let response = request
            .form(form)
            .send()
            .await
            .map_err(|e| unreachable(name, &e))?;
        let status = response.status().as_u16();
        Ok((status, read_capped(response, kind).await?))
    }

    /// The client and checked URL for a request to `uri`.
    fn target(&self, uri: &str, kind: Kind) -> Result<(&reqwest::Client, reqwest::Url), String> {
        let name = kind.name;
        let url = WebhookUrl::parse(uri).map_err(|_| format!("{name} is not an http(s) URL"))?;
        check_target(self.policy, &url).map_err(|e| format!("{name} refused: {e}"))?;
        let client = self.client.as_ref().ok_or("cannot build the HTTP client")?;
        Ok((client, url.url().clone()))
    }
}

fn unreachable(name: &str, e: &reqwest::Error) -> String {
    format!(
        "{name} could not be fetched: {}",
        describe_failure(e, TIMEOUT)
    )
}

/// The body, read in chunks and dropped once it passes the kind's cap.
async fn read_capped(mut response: reqwest::Response, kind: Kind) -> Result<Vec<u8>, String> {
    let name = kind.name;
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|_| format!("{name} could not be read"))?
    {
        if body.len() + chunk.len() > kind.max_bytes {
            return Err(format!(
                "{name} document is larger than {} KiB",
                kind.max_bytes / 1024
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// `application/json` or `application/<anything>+json`, parameters aside.
fn is_json(value: Option<&reqwest::header::HeaderValue>) -> bool {
    let Some(essence) = value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
    else {
        return false;
    };
    essence == "application/json"
        || essence
            .strip_prefix("application/")
            .is_some_and(|subtype| subtype.ends_with("+json") && subtype.len() > "+json".len())
}

/// RFC 9111 §5.2.2: `no-store` and `no-cache` mean not fresh at all; else `max-age`.
fn max_age(value: Option<&reqwest::header::HeaderValue>) -> Option<Duration> {
    let directives = value?.to_str().ok()?;
    let mut age = None;
    for directive in directives.split(',').map(str::trim) {
        let lower = directive.to_ascii_lowercase();
        if lower == "no-store" || lower == "no-cache" {
            return Some(Duration::ZERO);
        }
        if let Some(seconds) = lower.strip_prefix("max-age=") {
            age = seconds
                .trim_matches('"')
                .parse::<u64>()
                .ok()
                .map(Duration::from_secs);
        }
    }
    age
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use axum::http::header;
    use axum::routing::get;

    const DOC: Kind = Kind {
        name: "client_id",
        max_bytes: 1024,
        json_only: true,
    };

    /// Serves `router` on a loopback port: its base URL.
    pub(crate) async fn serve(router: axum::Router) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        format!("http://{addr}")
    }

    #[tokio::test]
    async fn json_documents_come_with_their_freshness_and_other_answers_are_refused() {
        let json = |cache: &'static str| {
            move || async move {
                (
                    [
                        (header::CONTENT_TYPE, "application/json; charset=utf-8"),
                        (header::CACHE_CONTROL, cache),
                    ],
                    r#"{"client_id":"x"}"#,
                )
            }
        };
        let base = serve(
            axum::Router::new()
                .route("/fresh", get(json("public, max-age=600")))
                .route("/nostore", get(json("max-age=600, no-store")))
                .route(
                    "/plus",
                    get(|| async { ([(header::CONTENT_TYPE, "application/client+json")], "{}") }),
                )
                .route("/text", get(|| async { "{}" }))
                .route(
                    "/missing",
                    get(|| async { (axum::http::StatusCode::NOT_FOUND, "{}") }),
                )
                .route(
                    "/created",
                    get(|| async { (axum::http::StatusCode::CREATED, "{}") }),
                ),
        )
        .await;
        let guard = GuardedFetcher::new(false);
        let fresh = guard.get(&format!("{base}/fresh"), DOC).await.unwrap();
        assert_eq!(fresh.body, br#"{"client_id":"x"}"#);
        assert_eq!(fresh.max_age, Some(Duration::from_secs(600)));
        let no_store = guard.get(&format!("{base}/nostore"), DOC).await.unwrap();
        assert_eq!(no_store.max_age, Some(Duration::ZERO));
        let plus = guard.get(&format!("{base}/plus"), DOC).await.unwrap();
        assert_eq!(plus.max_age, None);
        assert_eq!(
            guard.get(&format!("{base}/text"), DOC).await.unwrap_err(),
            "client_id did not answer with a JSON content type"
        );
        assert_eq!(
            guard
                .get(&format!("{base}/missing"), DOC)
                .await
                .unwrap_err(),
            "client_id answered 404"
        );
        assert_eq!(
            guard
                .get(&format!("{base}/created"), DOC)
                .await
                .unwrap_err(),
            "client_id answered 201",
            "only 200 is a document"
        );
    }

    #[test]
    fn content_types_and_cache_directives_are_read_as_rfc_9111_says() {
        let h = |v: &'static str| reqwest::header::HeaderValue::from_static(v);
        assert!(is_json(Some(&h("application/json"))));
        assert!(is_json(Some(&h("Application/JSON ; charset=utf-8"))));
        assert!(is_json(Some(&h("application/oauth-client+json"))));
        assert!(!is_json(Some(&h("application/+json"))));
        assert!(!is_json(Some(&h("text/json"))));
        assert!(!is_json(Some(&h("application/jsonp"))));
        assert!(!is_json(None));
        assert_eq!(
            max_age(Some(&h("max-age=60"))),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            max_age(Some(&h("public, MAX-AGE=\"5\""))),
            Some(Duration::from_secs(5))
        );
        assert_eq!(max_age(Some(&h("no-cache"))), Some(Duration::ZERO));
        assert_eq!(max_age(Some(&h("public"))), None);
        assert_eq!(max_age(Some(&h("max-age=soon"))), None);
        assert_eq!(max_age(None), None);
    }
}
