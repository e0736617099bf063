//! Runtime planes and database topology.

use svc_testkit::{Backend, TestApp};

#[tokio::test]
async fn single_planes_start_when_all_in_one_is_forbidden_and_all_does_not() {
    for plane in ["auth", "control", "async"] {
        let app = TestApp::spawn_with(
            Backend::Sqlite,
            &[
                ("SVC_RUNTIME_PLANE", plane),
                ("SVC_DEPLOYMENT__ALLOW_ALL_IN_ONE_RUNTIME_PLANE", "false"),
            ],
        )
        .await;
        assert_eq!(app.get("/health/ready").await.status(), 200, "{plane}");
        app.shutdown().await;
    }
    let refused = TestApp::try_spawn_with(
        Backend::Sqlite,
        &[
            ("SVC_RUNTIME_PLANE", "all"),
            ("SVC_DEPLOYMENT__ALLOW_ALL_IN_ONE_RUNTIME_PLANE", "false"),
        ],
    )
    .await;
    let error = refused.err().expect("all must be refused");
    assert!(error.contains("SVC_RUNTIME_PLANE"), "{error}");

    let bogus =
        TestApp::try_spawn_with(Backend::Sqlite, &[("SVC_RUNTIME_PLANE", "everything")]).await;
    let error = bogus.err().expect("unknown plane must be refused");
    assert!(
        error.contains("auth") && error.contains("control") && error.contains("async"),
        "{error}"
    );
}

#[tokio::test]
async fn split_by_plane_opens_only_the_planes_own_pool() {
    let (auth_url, guard) = svc_store_postgres::testing::fresh_database().await.unwrap();
    let app = TestApp::spawn_with(
        Backend::Postgres,
        &[
            ("SVC_RUNTIME_PLANE", "auth"),
            ("SVC_DEPLOYMENT__DATABASE_TOPOLOGY", "split_by_plane"),
            ("DATABASE_AUTH_URL", &auth_url),
            ("SVC_DATABASE__AUTH_POOL__MAX_CONNECTIONS", "3"),
            ("SVC_SERVER__METRICS_BEARER_TOKEN", "t"),
        ],
    )
    .await;
    let metrics = app
        .request(reqwest::Method::GET, "/metrics")
        .bearer_auth("t")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains(r#"svc_db_pool_connections{pool="auth",state="max"} 3"#),
        "{metrics}"
    );
    assert!(
        !metrics.contains(r#"pool="control""#) && !metrics.contains(r#"pool="main""#),
        "{metrics}"
    );
    app.shutdown().await;

    // The auth plane migrated its own database, not only the fallback one.
    let store = svc_store_postgres::PgStore::connect(
        &auth_url,
        &svc_store_postgres::testing::test_settings(),
    )
    .await
    .unwrap();
    let status = svc_store::Store::migration_status(&store).await.unwrap();
    assert!(
        status.is_current(),
        "auth database left unmigrated: {status:?}"
    );
    svc_store::Store::close(&store).await;
    guard.drop_database().await.unwrap();
}
