//! `/metrics`: exposition content and the bearer-token gate.

use std::sync::Arc;

use async_trait::async_trait;
use axum::body::Body;
use http::{HeaderMap, Request};
use secrecy::SecretString;
use svc_http::{HttpSettings, MetricsAuthorizer, PoolStats, PoolStatsSource, Problem};

use crate::common::{TestApp, problem, settings, text};

struct Pool;

impl PoolStatsSource for Pool {
    fn pool_stats(&self) -> PoolStats {
        PoolStats {
            size: 4,
            idle: 1,
            max: 20,
        }
    }
}

fn with_token(token: &str) -> HttpSettings {
    HttpSettings {
        metrics_bearer_token: Some(SecretString::from(token.to_owned())),
        ..settings()
    }
}

async fn scrape(app: &TestApp, authorization: Option<&str>) -> axum::response::Response {
    let mut req = Request::get("/metrics");
    if let Some(value) = authorization {
        req = req.header("authorization", value);
    }
    app.send(req.body(Body::empty()).unwrap()).await
}

#[tokio::test]
async fn exposition_has_route_templates_build_info_and_pool_gauges() {
    let app = TestApp::new(settings());
    app.state.metrics.register_pool("auth", Arc::new(Pool));
    assert_eq!(app.get("/items/42").await.status(), 200);
    assert_eq!(app.get("/items/43").await.status(), 200);
    assert_eq!(app.get("/no/such/user-secret-path").await.status(), 404);

    let res = scrape(&app, None).await;
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.headers()["content-type"],
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    let body = text(res).await;
    assert!(
        body.contains(
            r#"svc_http_requests_total{method="GET",route="/items/{id}",status="200"} 2"#
        ),
        "{body}"
    );
    assert!(
        body.contains(r#"svc_http_requests_total{method="GET",route="unmatched",status="404"} 1"#)
    );
    assert!(
        !body.contains("user-secret-path"),
        "raw paths never become labels"
    );
    assert!(!body.contains("/items/42"));
    assert!(body.contains("svc_http_request_duration_seconds_bucket"));
    assert!(body.contains(r#"svc_build_info{version="9.9.9",commit="deadbeef"} 1"#));
    assert!(body.contains(r#"svc_db_pool_connections{pool="auth",state="idle"} 1"#));
    assert!(body.contains(r#"svc_db_pool_connections{pool="auth",state="in_use"} 3"#));
    assert!(body.contains(r#"svc_db_pool_connections{pool="auth",state="max"} 20"#));
}

#[tokio::test]
async fn token_is_required_when_configured() {
    let app = TestApp::new(with_token("scrape-me-please"));

    let res = scrape(&app, None).await;
    assert_eq!(res.headers()["www-authenticate"], "Bearer");
    problem(res, 401, "unauthorized").await;

    let res = scrape(&app, Some("Bearer scrape-me-pleasX")).await;
    assert_eq!(res.headers()["www-authenticate"], "Bearer");
    problem(res, 401, "unauthorized").await;

    let res = scrape(&app, Some("Basic scrape-me-please")).await;
    problem(res, 401, "unauthorized").await;

    let res = scrape(&app, Some("Bearer scrape-me-please")).await;
    assert_eq!(res.status(), 200);
    assert!(text(res).await.contains("svc_build_info"));
}

struct DenyAll;

#[async_trait]
impl MetricsAuthorizer for DenyAll {
    async fn authorize(
        &self,
        _headers: &HeaderMap,
        _client: &svc_http::ClientContext,
    ) -> Result<(), Problem> {
        Err(Problem::forbidden("token lacks metrics:read"))
    }
}

#[tokio::test]
async fn without_a_token_the_authorizer_seam_decides() {
    let app = TestApp::new(settings());
    assert_eq!(
        scrape(&app, None).await.status(),
        200,
        "open when nothing is configured"
    );
    app.state.metrics.set_authorizer(Arc::new(DenyAll));
    problem(scrape(&app, None).await, 403, "forbidden").await;

    // A configured static token takes precedence over the authorizer.
    let app = TestApp::new(with_token("t0ken"));
    app.state.metrics.set_authorizer(Arc::new(DenyAll));
    assert_eq!(scrape(&app, Some("Bearer t0ken")).await.status(), 200);
}

#[tokio::test]
async fn apps_in_one_process_have_separate_registries() {
    let a = TestApp::new(settings());
    let b = TestApp::new(settings());
    a.get("/items/1").await;
    let b_body = text(scrape(&b, None).await).await;
    assert!(!b_body.contains("/items/{id}"), "{b_body}");
}
