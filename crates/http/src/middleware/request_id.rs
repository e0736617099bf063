//! Request id: one id per request, carried in `x-request-id` both ways and in the tracing span.
//!
//! Integrators log `x-request-id` (spec "Errors"), and 5xx problem bodies point at the logs only
//! through it, so the id must be present on every response. An incoming id is kept when it is
//! safe to log and echo (1..=128 chars of `[A-Za-z0-9._:-]`); anything else (too long, control
//! characters, JSON or log-injection attempts) is replaced by a fresh UUID v4.

use std::fmt;
use std::sync::Arc;

use axum::extract::{FromRequestParts, MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use http::request::Parts;
use http::{HeaderName, HeaderValue};
use tracing::Instrument;

use super::UNMATCHED_ROUTE;

/// Header carrying the request id in both directions.
pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// Longest incoming id that is kept.
const MAX_LEN: usize = 128;

/// The id of the current request, in request extensions for handlers, extractors and logs.
///
/// Also an extractor; outside the middleware stack it yields a fresh id instead of failing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RequestId(Arc<str>);

impl RequestId {
    /// A fresh random id (UUID v4, hyphenated).
    #[must_use]
    pub fn generate() -> Self {
        Self(Arc::from(uuid::Uuid::new_v4().to_string()))
    }

    /// Accepts `raw` when it is 1..=128 chars of `[A-Za-z0-9._:-]`.
    #[must_use]
    pub fn parse(raw: &str) -> Option<Self> {
        let ok = !raw.is_empty()
            && raw.len() <= MAX_LEN
            && raw
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
        ok.then(|| Self(Arc::from(raw)))
    }

    /// The id as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for RequestId {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(parts
            .extensions
            .get::<Self>()
            .cloned()
            .unwrap_or_else(Self::generate))
    }
}

/// Picks the id, exposes it to the inner layers, runs them inside a span that carries it, and
/// echoes it on the response.
pub(crate) async fn request_id(mut req: Request, next: Next) -> Response {
    let id = req
        .headers()
        .get(&REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(RequestId::parse)
        .unwrap_or_else(RequestId::generate);
    let header = HeaderValue::from_str(id.as_str()).ok();
    // Downstream code reading the header sees the same id the logs use, never the hostile one.
    match &header {
        Some(value) => req.headers_mut().insert(REQUEST_ID_HEADER, value.clone()),
        None => req.headers_mut().remove(REQUEST_ID_HEADER),
    };
    req.extensions_mut().insert(id.clone());

    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or(UNMATCHED_ROUTE, MatchedPath::as_str);
    let span = tracing::info_span!(
        "http_request",
        request_id = %id,
        method = %req.method(),
        route = %route,
    );

    let mut res = next.run(req).instrument(span).await;
    if let Some(value) = header {
        res.headers_mut().insert(REQUEST_ID_HEADER, value);
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::body::Body;
    use axum::routing::get;
    use tower::ServiceExt;

    fn app() -> Router {
        Router::new()
            .route(
                "/",
                get(|id: RequestId, headers: http::HeaderMap| async move {
                    // The handler sees the same id in the extension and the header.
                    assert_eq!(headers[&REQUEST_ID_HEADER], id.as_str());
                    id.to_string()
                }),
            )
            .layer(axum::middleware::from_fn(request_id))
    }

    async fn call(header: Option<&str>) -> (String, String) {
        let mut req = Request::builder().uri("/");
        if let Some(h) = header {
            req = req.header("x-request-id", h);
        }
        let res = app()
            .oneshot(req.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let echoed = res.headers()["x-request-id"].to_str().unwrap().to_owned();
        let body = axum::body::to_bytes(res.into_body(), 1024).await.unwrap();
        (echoed, String::from_utf8(body.to_vec()).unwrap())
    }

    #[test]
    fn parse_accepts_only_the_safe_alphabet() {
        assert!(RequestId::parse("abc-123_x.y:z").is_some());
        assert!(RequestId::parse(&"a".repeat(128)).is_some());
        assert!(RequestId::parse("").is_none());
        assert!(RequestId::parse(&"a".repeat(129)).is_none());
        assert!(RequestId::parse("a b").is_none());
        assert!(RequestId::parse("a\"}").is_none());
        assert!(RequestId::parse("é").is_none());
    }

    #[tokio::test]
    async fn valid_incoming_id_is_propagated() {
        let (echoed, seen) = call(Some("trace-42:abc")).await;
        assert_eq!(echoed, "trace-42:abc");
        assert_eq!(seen, "trace-42:abc");
    }

    #[tokio::test]
    async fn hostile_ids_are_replaced_by_a_fresh_uuid() {
        for hostile in [&"x".repeat(129), "a\tb", "<script>", "x y", "{\"a\":1}"] {
            let (echoed, seen) = call(Some(hostile)).await;
            assert_ne!(echoed, hostile);
            assert_eq!(echoed, seen);
            assert!(uuid::Uuid::parse_str(&echoed).is_ok(), "{echoed}");
        }
    }

    #[tokio::test]
    async fn missing_id_is_generated_and_unique() {
        let (a, _) = call(None).await;
        let (b, _) = call(None).await;
        assert!(uuid::Uuid::parse_str(&a).is_ok());
        assert_ne!(a, b);
    }
}
