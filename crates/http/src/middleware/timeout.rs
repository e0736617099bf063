//! Request timeout (`server.request_timeout_secs`): a handler running longer gets 503
//! `server_error` with detail "request timed out".
//!
//! The handler future is dropped at the deadline, which cancels its pending IO; work it spawned
//! elsewhere is not stopped. [`std::time::Duration::ZERO`] disables the timeout (development).

use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::Problem;

/// Runs the inner service under the deadline.
pub(crate) async fn enforce_timeout(
    State(limit): State<Duration>,
    req: Request,
    next: Next,
) -> Response {
    if limit.is_zero() {
        return next.run(req).await;
    }
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(res) => res,
        Err(_elapsed) => {
            let timeout_ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX);
            tracing::warn!(timeout_ms, "request timed out");
            Problem::timed_out().into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::body::Body;
    use axum::routing::get;
    use http::StatusCode;
    use tower::ServiceExt;

    fn app(limit: Duration) -> Router {
        Router::new()
            .route(
                "/slow",
                get(|| async {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    "done"
                }),
            )
            .route("/fast", get(|| async { "done" }))
            .layer(axum::middleware::from_fn_with_state(limit, enforce_timeout))
    }

    #[tokio::test(start_paused = true)]
    async fn slow_handler_gets_503() {
        let req = Request::get("/slow").body(Body::empty()).unwrap();
        let res = app(Duration::from_millis(50)).oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    }

    #[tokio::test]
    async fn fast_handler_is_untouched_and_zero_disables() {
        let req = Request::get("/fast").body(Body::empty()).unwrap();
        let res = app(Duration::from_millis(50)).oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        let req = Request::get("/fast").body(Body::empty()).unwrap();
        let res = app(Duration::ZERO).oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
    }
}
