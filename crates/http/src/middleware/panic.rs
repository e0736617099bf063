//! Panic containment: a panicking handler becomes a 500 `server_error` problem.
//!
//! The panic message is logged (inside the request span, so with the request id) and never
//! sent: it can contain anything the handler had in hand.

use std::any::Any;

use axum::response::{IntoResponse, Response};
use tower_http::catch_panic::CatchPanicLayer;

use crate::Problem;

/// Signature of the panic handler, so the layer type can be named.
pub(crate) type PanicHandler = fn(Box<dyn Any + Send + 'static>) -> Response;

/// The catch-panic layer with our problem response.
pub(crate) fn layer() -> CatchPanicLayer<PanicHandler> {
    CatchPanicLayer::custom(panic_response as PanicHandler)
}

fn panic_response(err: Box<dyn Any + Send + 'static>) -> Response {
    let message = err
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| err.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("non-string panic payload");
    tracing::error!(panic = message, "handler panicked");
    Problem::server_error().into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::body::Body;
    use axum::routing::get;
    use http::{Request, StatusCode};
    use tower::ServiceExt;

    #[tokio::test]
    async fn panic_becomes_a_server_error_problem_without_the_message() {
        let app = Router::new()
            .route(
                "/",
                get(|| async {
                    if true {
                        panic!("secret-db-password");
                    }
                    "unreachable"
                }),
            )
            .layer(layer());
        let res = app
            .oneshot(Request::get("/").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = axum::body::to_bytes(res.into_body(), 4096).await.unwrap();
        let text = String::from_utf8(body.to_vec()).unwrap();
        assert!(!text.contains("secret-db-password"));
        assert!(text.contains("server_error"));
    }
}
