//! Problem bodies from fallbacks, handlers and panics; request id propagation.

use axum::body::Body;
use http::Request;
use svc_http::HttpSettings;

use crate::common::{TestApp, from_peer, problem, settings};

#[tokio::test]
async fn unknown_path_is_a_404_problem() {
    let app = TestApp::new(settings());
    let body = problem(app.get("/nope?code=abc").await, 404, "not_found").await;
    assert_eq!(body["title"], "Not Found");
    assert!(
        !body.to_string().contains("code=abc"),
        "the path is not echoed"
    );
}

#[tokio::test]
async fn wrong_method_is_a_405_problem_with_allow() {
    let app = TestApp::new(settings());
    let res = app
        .send(Request::delete("/items/1").body(Body::empty()).unwrap())
        .await;
    let allow = res.headers()["allow"].to_str().unwrap().to_owned();
    assert!(allow.contains("GET"), "{allow}");
    problem(res, 405, "method_not_allowed").await;

    let res = app
        .send(Request::post("/health/live").body(Body::empty()).unwrap())
        .await;
    assert!(res.headers().contains_key("allow"));
    problem(res, 405, "method_not_allowed").await;
}

#[tokio::test]
async fn type_base_comes_from_settings_when_configured() {
    let app = TestApp::new(HttpSettings {
        error_type_base: Some("https://docs.example.com/problems/".into()),
        ..settings()
    });
    let req = Request::get("/nope")
        .header("host", "acme.example.com")
        .body(Body::empty())
        .unwrap();
    let body = problem(app.send(req).await, 404, "not_found").await;
    assert_eq!(body["type"], "https://docs.example.com/problems/not-found");
}

#[tokio::test]
async fn type_base_comes_from_the_request_host_and_scheme() {
    let app = TestApp::new(HttpSettings {
        tls: true,
        ..settings()
    });
    let req = Request::get("/nope")
        .header("host", "Acme.Example.com:8443")
        .body(Body::empty())
        .unwrap();
    let body = problem(app.send(req).await, 404, "not_found").await;
    assert_eq!(
        body["type"],
        "https://acme.example.com:8443/problems/not-found"
    );

    let plain = TestApp::new(settings());
    let req = Request::get("/nope")
        .header("host", "localhost:8080")
        .body(Body::empty())
        .unwrap();
    let body = problem(plain.send(req).await, 404, "not_found").await;
    assert_eq!(body["type"], "http://localhost:8080/problems/not-found");
}

#[tokio::test]
async fn trusted_proxy_sets_the_type_base() {
    let app = TestApp::new(HttpSettings {
        trusted_proxies: vec!["10.0.0.0/8".parse().unwrap()],
        ..settings()
    });
    let req = || {
        Request::get("/nope")
            .header("host", "internal:8080")
            .header("x-forwarded-proto", "https")
            .header("x-forwarded-host", "id.example.com")
            .body(Body::empty())
            .unwrap()
    };
    let body = problem(
        app.send(from_peer(req(), "10.1.1.1:5000")).await,
        404,
        "not_found",
    )
    .await;
    assert_eq!(body["type"], "https://id.example.com/problems/not-found");

    let body = problem(
        app.send(from_peer(req(), "192.0.2.1:5000")).await,
        404,
        "not_found",
    )
    .await;
    assert_eq!(body["type"], "http://internal:8080/problems/not-found");
}

#[tokio::test]
async fn server_errors_hide_their_cause() {
    let app = TestApp::new(settings());
    let body = problem(app.get("/boom").await, 500, "server_error").await;
    assert!(!body.to_string().contains("db-internal"), "{body}");
    assert!(body["type"].as_str().unwrap().ends_with("/server-error"));
}

#[tokio::test]
async fn a_panicking_handler_is_a_500_problem_without_the_message() {
    let app = TestApp::new(settings());
    let body = problem(app.get("/panic").await, 500, "server_error").await;
    assert!(!body.to_string().contains("secret-panic-message"), "{body}");
}

#[tokio::test]
async fn request_id_is_propagated_or_replaced() {
    let app = TestApp::new(settings());
    let req = Request::get("/nope")
        .header("x-request-id", "lb-7f3a:01")
        .body(Body::empty())
        .unwrap();
    let res = app.send(req).await;
    assert_eq!(res.headers()["x-request-id"], "lb-7f3a:01");
    let body = problem(res, 404, "not_found").await;
    assert_eq!(body["request_id"], "lb-7f3a:01");

    for hostile in [
        "x".repeat(200),
        "id with spaces".into(),
        "\"},{\"a\":\"".into(),
    ] {
        let req = Request::get("/items/1")
            .header("x-request-id", hostile.as_str())
            .body(Body::empty())
            .unwrap();
        let res = app.send(req).await;
        let echoed = res.headers()["x-request-id"].to_str().unwrap();
        assert_ne!(echoed, hostile);
        assert!(uuid::Uuid::parse_str(echoed).is_ok(), "{echoed}");
    }
}

#[tokio::test]
async fn every_response_gets_nosniff_and_a_request_id() {
    let app = TestApp::new(settings());
    let res = app.get("/items/1").await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    assert!(res.headers().contains_key("x-request-id"));
    assert!(
        !res.headers().contains_key("cache-control"),
        "only problems force no-store"
    );
}
