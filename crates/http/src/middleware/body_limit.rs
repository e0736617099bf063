//! Request body limit (`max_request_body_bytes`), answered with 413 `payload_too_large`.
//!
//! A declared `Content-Length` over the limit is refused before any handler (or 405 fallback)
//! runs, so a client cannot make us read a body we will refuse anyway. A body without a length
//! (chunked, HTTP/2 streams) is wrapped in [`http_body_util::Limited`], so whoever reads past the
//! limit gets an error; axum's extractors turn that into a 413 rejection, which the response
//! middleware renders as a problem. [`axum::extract::DefaultBodyLimit`] is set to the same value
//! by the router, so axum's own 2 MiB default never disagrees with the configured limit.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::header::CONTENT_LENGTH;
use http_body_util::Limited;

use crate::Problem;

/// Refuses oversized declared bodies and caps undeclared ones.
pub(crate) async fn limit_body(State(max): State<usize>, req: Request, next: Next) -> Response {
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let max_u64 = u64::try_from(max).unwrap_or(u64::MAX);
    if declared.is_some_and(|len| len > max_u64) {
        return Problem::payload_too_large().into_response();
    }
    next.run(req.map(|body| Body::new(Limited::new(body, max))))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::body::Bytes;
    use axum::routing::post;
    use http::StatusCode;
    use tower::ServiceExt;

    fn app(max: usize) -> Router {
        Router::new()
            .route(
                "/",
                post(|body: Bytes| async move { body.len().to_string() }),
            )
            // Disable axum's own default so this test sees only our wrapper.
            .layer(axum::extract::DefaultBodyLimit::disable())
            .layer(axum::middleware::from_fn_with_state(max, limit_body))
    }

    fn streamed(len: usize) -> Body {
        let chunks = (0..len).map(|_| Ok::<_, std::io::Error>(Bytes::from_static(b"x")));
        Body::from_stream(futures_util::stream::iter(chunks))
    }

    #[tokio::test]
    async fn declared_length_over_the_limit_is_refused_without_reading() {
        let req = Request::post("/")
            .header(CONTENT_LENGTH, "11")
            .body(Body::from("hello world"))
            .unwrap();
        let res = app(10).oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert!(
            res.extensions()
                .get::<crate::error::problem::ProblemExtension>()
                .is_some()
        );
    }

    #[tokio::test]
    async fn streamed_body_fails_once_past_the_limit() {
        let req = Request::post("/").body(streamed(11)).unwrap();
        let res = app(10).oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);

        let req = Request::post("/").body(streamed(10)).unwrap();
        let res = app(10).oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
    }
}
