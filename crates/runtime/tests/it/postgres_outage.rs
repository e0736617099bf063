//! Readiness follows the database: PostgreSQL becoming unreachable turns `/health/ready` into
//! 503, and its return recovers without a restart. The outage is a real severed TCP path
//! between the service and the real PostgreSQL server.

use std::time::Duration;
use svc_testkit::{Backend, FaultyProxy, TestApp};

async fn ready_status(app: &TestApp) -> u16 {
    app.get("/health/ready").await.status().as_u16()
}

async fn wait_for_status(app: &TestApp, want: u16) {
    for _ in 0..100 {
        if ready_status(app).await == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("/health/ready never became {want}");
}

#[tokio::test]
async fn readiness_turns_503_while_postgres_is_unreachable_and_recovers() {
    let (db_url, guard) = svc_store_postgres::testing::fresh_database().await.unwrap();
    let upstream = "127.0.0.1:5432";
    assert!(
        db_url.contains(upstream),
        "the outage test expects the test server at {upstream}"
    );
    let proxy = FaultyProxy::start(upstream.parse().unwrap()).await;
    let url = db_url.replace(upstream, &proxy.addr().to_string());
    let app = TestApp::spawn_with(
        Backend::Sqlite,
        &[
            ("DATABASE_URL", &url),
            ("SVC_DATABASE__CONNECT_TIMEOUT_SECS", "1"),
        ],
    )
    .await;
    assert_eq!(ready_status(&app).await, 200);
    assert_eq!(app.get("/health/live").await.status(), 200);

    proxy.cut();
    wait_for_status(&app, 503).await;
    let body = app.get("/health/ready").await.text().await.unwrap();
    assert_eq!(
        body, r#"{"status":"unavailable"}"#,
        "no details in the body"
    );
    assert_eq!(
        app.get("/health/live").await.status(),
        200,
        "liveness does not depend on the database"
    );

    proxy.restore();
    wait_for_status(&app, 200).await;
    app.shutdown().await;
    guard.drop_database().await.unwrap();
}
