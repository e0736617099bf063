//! Body limit and request timeout through the whole stack.

use axum::body::{Body, Bytes};
use http::Request;

use crate::common::{TestApp, problem, settings, text};

fn streamed(len: usize) -> Body {
    let chunks = (0..len / 8 + 1).map(|_| Ok::<_, std::io::Error>(Bytes::from_static(b"12345678")));
    Body::from_stream(futures_util::stream::iter(chunks))
}

#[tokio::test]
async fn oversized_declared_body_is_413_even_on_health() {
    let app = TestApp::new(settings());
    let req = Request::post("/health/live")
        .header("content-length", "1000000000")
        .body(Body::empty())
        .unwrap();
    problem(app.send(req).await, 413, "payload_too_large").await;

    let req = Request::post("/echo")
        .header("content-length", "65")
        .body(Body::from(vec![b'x'; 65]))
        .unwrap();
    problem(app.send(req).await, 413, "payload_too_large").await;
}

#[tokio::test]
async fn streamed_body_without_length_is_413_once_read_past_the_limit() {
    let app = TestApp::new(settings());
    let req = Request::post("/echo").body(streamed(200)).unwrap();
    problem(app.send(req).await, 413, "payload_too_large").await;

    let req = Request::post("/echo")
        .body(Body::from(vec![b'x'; 64]))
        .unwrap();
    let res = app.send(req).await;
    assert_eq!(res.status(), 200);
    assert_eq!(text(res).await, "64");
}

#[tokio::test]
async fn slow_handler_times_out_with_503() {
    let app = TestApp::new(settings());
    let body = problem(app.get("/slow").await, 503, "server_error").await;
    assert_eq!(body["detail"], "request timed out");
}
