//! Allowed hosts and trusted-proxy handling through the whole stack.

use axum::body::Body;
use http::Request;
use svc_http::HttpSettings;

use crate::common::{TestApp, from_peer, problem, settings, text};

fn allowlist() -> TestApp {
    TestApp::new(HttpSettings {
        allowed_hosts: vec!["id.example.com".into(), "*.tenants.example.com".into()],
        ..settings()
    })
}

fn with_host(uri: &str, host: &str) -> Request<Body> {
    Request::get(uri)
        .header("host", host)
        .body(Body::empty())
        .unwrap()
}

#[tokio::test]
async fn exact_and_wildcard_hosts_pass() {
    let app = allowlist();
    for host in [
        "id.example.com",
        "ID.EXAMPLE.COM:8443",
        "acme.tenants.example.com",
        "a.b.tenants.example.com:443",
    ] {
        let res = app.send(with_host("/items/1", host)).await;
        assert_eq!(res.status(), 200, "{host}");
    }
}

#[tokio::test]
async fn other_hosts_are_refused_with_400() {
    let app = allowlist();
    for host in [
        "evil.example",
        "tenants.example.com",
        "xtenants.example.com",
        "10.0.0.5",
    ] {
        let body = problem(
            app.send(with_host("/items/1", host)).await,
            400,
            "bad_request",
        )
        .await;
        assert_eq!(body["detail"], "host not allowed");
        // A refused host is never echoed into the problem type.
        assert!(!body["type"].as_str().unwrap().contains(host), "{body}");
    }
    let missing = Request::get("/items/1").body(Body::empty()).unwrap();
    problem(app.send(missing).await, 400, "bad_request").await;
    let malformed = with_host("/items/1", "user@id.example.com");
    problem(app.send(malformed).await, 400, "bad_request").await;
}

#[tokio::test]
async fn health_is_exempt_from_the_host_check() {
    let app = allowlist();
    let res = app.send(with_host("/health/live", "10.0.0.5:8080")).await;
    assert_eq!(res.status(), 200);
    let res = app
        .send(Request::get("/health/live").body(Body::empty()).unwrap())
        .await;
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn forwarded_host_counts_only_from_a_trusted_proxy() {
    let app = TestApp::new(HttpSettings {
        allowed_hosts: vec!["id.example.com".into()],
        trusted_proxies: vec!["10.0.0.0/8".parse().unwrap()],
        ..settings()
    });
    let req = || {
        Request::get("/items/1")
            .header("host", "10.0.0.9:8080")
            .header("x-forwarded-host", "id.example.com")
            .body(Body::empty())
            .unwrap()
    };
    assert_eq!(
        app.send(from_peer(req(), "10.0.0.1:1234")).await.status(),
        200
    );
    problem(
        app.send(from_peer(req(), "203.0.113.5:1234")).await,
        400,
        "bad_request",
    )
    .await;
}

fn proxied_ctx_request() -> Request<Body> {
    Request::get("/ctx")
        .header("host", "backend:8080")
        .header("x-forwarded-for", "198.51.100.1, 203.0.113.7, 10.0.0.3")
        .header("x-forwarded-proto", "https")
        .header("x-forwarded-host", "id.example.com")
        .body(Body::empty())
        .unwrap()
}

#[tokio::test]
async fn client_context_honours_forwarded_headers_only_from_trusted_peers() {
    let app = TestApp::new(HttpSettings {
        trusted_proxies: vec!["10.0.0.0/8".parse().unwrap()],
        ..settings()
    });

    let trusted = app
        .send(from_peer(proxied_ctx_request(), "10.0.0.2:4000"))
        .await;
    assert_eq!(text(trusted).await, "203.0.113.7|https|id.example.com");

    let untrusted = app
        .send(from_peer(proxied_ctx_request(), "192.0.2.44:4000"))
        .await;
    assert_eq!(text(untrusted).await, "192.0.2.44|http|backend:8080");

    // No ConnectInfo at all: unknown peer, nothing forwarded is believed.
    let unknown = app.send(proxied_ctx_request()).await;
    assert_eq!(text(unknown).await, "|http|backend:8080");
}
