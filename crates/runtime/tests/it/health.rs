//! Health, metrics and the common HTTP behaviour, on both backends.

use svc_testkit::{BACKENDS, TestApp};

#[tokio::test]
async fn health_endpoints_answer_exact_bodies_on_both_backends() {
    for backend in BACKENDS {
        let app = TestApp::spawn(backend).await;
        for path in ["/health/live", "/health/startup", "/health/ready"] {
            let response = app.get(path).await;
            assert_eq!(response.status(), 200, "{backend:?} {path}");
            assert_eq!(
                response.text().await.unwrap(),
                r#"{"status":"ok"}"#,
                "{backend:?} {path}"
            );
        }
        app.shutdown().await;
    }
}

#[tokio::test]
async fn metrics_expose_requests_pools_and_build_info() {
    for backend in BACKENDS {
        let app = TestApp::spawn_with(
            backend,
            &[("SVC_SERVER__METRICS_BEARER_TOKEN", "scrape-token")],
        )
        .await;
        assert_eq!(app.get("/health/ready").await.status(), 200);
        let response = app
            .request(reqwest::Method::GET, "/metrics")
            .bearer_auth("scrape-token")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let body = response.text().await.unwrap();
        assert!(body.contains("svc_http_requests_total"), "{body}");
        assert!(
            body.contains(r#"route="/health/ready""#),
            "route template label:\n{body}"
        );
        assert!(
            body.contains("svc_http_request_duration_seconds_bucket"),
            "{body}"
        );
        assert!(
            body.contains(r#"svc_db_pool_connections{pool="main",state="max"}"#),
            "{body}"
        );
        assert!(body.contains("svc_build_info"), "{body}");
        app.shutdown().await;
    }
}

#[tokio::test]
async fn metrics_bearer_token_guards_the_endpoint() {
    let app = TestApp::spawn_with(
        svc_testkit::Backend::Sqlite,
        &[("SVC_SERVER__METRICS_BEARER_TOKEN", "m-token-123")],
    )
    .await;
    assert_eq!(app.get("/metrics").await.status(), 401);
    let wrong = app
        .request(reqwest::Method::GET, "/metrics")
        .bearer_auth("m-token-124")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let right = app
        .request(reqwest::Method::GET, "/metrics")
        .bearer_auth("m-token-123")
        .send()
        .await
        .unwrap();
    assert_eq!(right.status(), 200);
    app.shutdown().await;
}

#[tokio::test]
async fn unknown_routes_and_methods_are_problem_json_with_request_ids() {
    let app = TestApp::spawn(svc_testkit::Backend::Sqlite).await;
    let missing = app.get("/no/such/route?code=secret").await;
    assert_eq!(missing.status(), 404);
    assert_eq!(
        missing.headers()["content-type"],
        "application/problem+json"
    );
    assert!(missing.headers().contains_key("x-request-id"));
    let body: serde_json::Value = missing.json().await.unwrap();
    assert_eq!(body["status"], 404);
    assert_eq!(body["error"], "not_found");
    assert!(
        body["type"].as_str().unwrap().ends_with("/not-found"),
        "{body}"
    );

    let wrong_method = app
        .request(reqwest::Method::DELETE, "/health/ready")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong_method.status(), 405);
    let body: serde_json::Value = wrong_method.json().await.unwrap();
    assert_eq!(body["error"], "method_not_allowed");

    let echoed = app
        .request(reqwest::Method::GET, "/health/live")
        .header("x-request-id", "abc-123")
        .send()
        .await
        .unwrap();
    assert_eq!(echoed.headers()["x-request-id"], "abc-123");
    let hostile = app
        .request(reqwest::Method::GET, "/health/live")
        .header("x-request-id", "a".repeat(500))
        .send()
        .await
        .unwrap();
    assert_ne!(
        hostile.headers()["x-request-id"].to_str().unwrap(),
        "a".repeat(500)
    );
    app.shutdown().await;
}

#[tokio::test]
async fn oversized_bodies_are_refused_before_routing() {
    let app = TestApp::spawn_with(
        svc_testkit::Backend::Sqlite,
        &[("SVC_SERVER__MAX_REQUEST_BODY_BYTES", "1024")],
    )
    .await;
    let response = app
        .request(reqwest::Method::POST, "/health/live")
        .body(vec![b'x'; 4096])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn allowed_hosts_refuse_foreign_hosts_but_not_probes() {
    let app = TestApp::spawn_with(
        svc_testkit::Backend::Sqlite,
        &[
            (
                "SVC_SERVER__ALLOWED_HOSTS",
                r#"["id.localhost","*.id.localhost"]"#,
            ),
            ("SVC_SERVER__BASE_DOMAIN", "id.localhost"),
            ("SVC_SERVER__METRICS_BEARER_TOKEN", "t"),
        ],
    )
    .await;
    let foreign = app
        .request(reqwest::Method::GET, "/metrics")
        .bearer_auth("t")
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 400);
    let body: serde_json::Value = foreign.json().await.unwrap();
    assert_eq!(body["error"], "bad_request");
    let tenant = app
        .request(reqwest::Method::GET, "/metrics")
        .bearer_auth("t")
        .header("host", "acme.id.localhost:8080")
        .send()
        .await
        .unwrap();
    assert_eq!(tenant.status(), 200);
    let probe = app
        .request(reqwest::Method::GET, "/health/ready")
        .header("host", "10.0.0.7:8080")
        .send()
        .await
        .unwrap();
    assert_eq!(probe.status(), 200, "health probes use IP hosts");
    app.shutdown().await;
}

#[tokio::test]
async fn forwarded_host_is_trusted_only_from_trusted_proxies() {
    let env = [
        ("SVC_SERVER__ALLOWED_HOSTS", r#"["id.localhost"]"#),
        ("SVC_SERVER__METRICS_BEARER_TOKEN", "t"),
    ];
    let untrusted = TestApp::spawn_with(svc_testkit::Backend::Sqlite, &env).await;
    let spoofed = untrusted
        .request(reqwest::Method::GET, "/metrics")
        .bearer_auth("t")
        .header("host", "evil.example")
        .header("x-forwarded-host", "id.localhost")
        .send()
        .await
        .unwrap();
    assert_eq!(
        spoofed.status(),
        400,
        "X-Forwarded-Host from an untrusted peer is ignored"
    );
    untrusted.shutdown().await;

    let trusted = TestApp::spawn_with(
        svc_testkit::Backend::Sqlite,
        &[
            env[0],
            env[1],
            ("SVC_SERVER__TRUSTED_PROXIES", r#"["127.0.0.1/32"]"#),
        ],
    )
    .await;
    let forwarded = trusted
        .request(reqwest::Method::GET, "/metrics")
        .bearer_auth("t")
        .header("host", "10.1.2.3")
        .header("x-forwarded-host", "id.localhost")
        .send()
        .await
        .unwrap();
    assert_eq!(
        forwarded.status(),
        200,
        "a trusted proxy's X-Forwarded-Host is the request's host"
    );
    trusted.shutdown().await;
}
