//! `/health/*`: exact bodies and the readiness rules.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use svc_http::{Health, ReadinessCheck};

use crate::common::{TestApp, settings, text};

struct Check {
    name: &'static str,
    result: Result<(), String>,
}

#[async_trait]
impl ReadinessCheck for Check {
    fn name(&self) -> &str {
        self.name
    }
    async fn check(&self) -> Result<(), String> {
        self.result.clone()
    }
}

struct HungDatabase;

#[async_trait]
impl ReadinessCheck for HungDatabase {
    fn name(&self) -> &str {
        "db.identity"
    }
    async fn check(&self) -> Result<(), String> {
        std::future::pending().await
    }
}

fn ok(name: &'static str) -> Arc<dyn ReadinessCheck> {
    Arc::new(Check {
        name,
        result: Ok(()),
    })
}

async fn probe(app: &TestApp, path: &str) -> (u16, String) {
    let res = app.get(path).await;
    assert_eq!(res.headers()["content-type"], "application/json");
    assert_eq!(res.headers()["cache-control"], "no-store");
    (res.status().as_u16(), text(res).await)
}

const OK: &str = r#"{"status":"ok"}"#;
const UNAVAILABLE: &str = r#"{"status":"unavailable"}"#;

#[tokio::test]
async fn live_is_always_ok_and_startup_follows_mark_started() {
    let app = TestApp::with_health(settings(), Health::new(vec![ok("db")]));
    assert_eq!(probe(&app, "/health/live").await, (200, OK.into()));
    assert_eq!(
        probe(&app, "/health/startup").await,
        (503, UNAVAILABLE.into())
    );
    assert_eq!(
        probe(&app, "/health/ready").await,
        (503, UNAVAILABLE.into())
    );

    app.state.health.mark_started();
    assert_eq!(probe(&app, "/health/startup").await, (200, OK.into()));
    assert_eq!(probe(&app, "/health/ready").await, (200, OK.into()));
}

#[tokio::test]
async fn a_failing_check_makes_ready_503_without_leaking_the_reason() {
    let failing = Arc::new(Check {
        name: "worker.outbox",
        result: Err("heartbeat 90 s old".into()),
    });
    let app = TestApp::with_health(settings(), Health::new(vec![ok("db"), failing]));
    app.state.health.mark_started();
    assert_eq!(
        probe(&app, "/health/ready").await,
        (503, UNAVAILABLE.into())
    );
    assert_eq!(probe(&app, "/health/live").await, (200, OK.into()));
}

#[tokio::test(start_paused = true)]
async fn a_hanging_check_times_out_and_ready_answers_503() {
    let health =
        Health::with_check_timeout(vec![Arc::new(HungDatabase)], Duration::from_millis(200));
    // The request timeout must not be what ends the probe.
    let app = TestApp::with_health(
        svc_http::HttpSettings {
            request_timeout: Duration::ZERO,
            ..settings()
        },
        health,
    );
    app.state.health.mark_started();
    assert_eq!(
        probe(&app, "/health/ready").await,
        (503, UNAVAILABLE.into())
    );
}

#[tokio::test]
async fn draining_turns_ready_503_but_not_live() {
    let app = TestApp::with_health(settings(), Health::new(vec![ok("db")]));
    app.state.health.mark_started();
    assert_eq!(probe(&app, "/health/ready").await.0, 200);
    app.state.health.start_draining();
    assert_eq!(
        probe(&app, "/health/ready").await,
        (503, UNAVAILABLE.into())
    );
    assert_eq!(probe(&app, "/health/live").await, (200, OK.into()));
}
