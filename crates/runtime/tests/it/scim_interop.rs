//! scim2-tester (PyPI, `interop/scim/check.py`) against a live `/scim/v2` on SQLite and
//! PostgreSQL: discovery, CRUD (with `attributes` / `excludedAttributes`), PATCH add, remove and
//! replace, and the misc checks, of Users and Groups (the Group resource type is discovered,
//! and its checks must run), every result SUCCESS or SKIPPED (failures are printed), except
//! the one result `check.py` explains (a server-set `type` / `primary` of the one address,
//! compared by the tester with the nulls it sent), which must stay that one.

use crate::common::{default_tenant, management_token, operator_token};
use crate::interop::{repo_root, run_command};
use serde_json::{Value, json};
use std::time::Duration;
use svc_testkit::{Backend, TestApp};

async fn scim2_tester(backend: Backend) {
    let python = repo_root().join("interop/scim/.venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `bash scripts/interop-setup.sh`",
        python.display()
    );
    let app = TestApp::spawn_with(
        backend,
        &[
            ("SVC_TENANT__DEFAULT_TENANT_SLUG", "default"),
            ("SVC_SCIM__ENABLED", "true"),
        ],
    )
    .await;
    let operator = operator_token(&app).await;
    let tenant = default_tenant(&app, &operator).await;
    let management = management_token(&app, &tenant, None).await;
    let created: Value = app
        .request(reqwest::Method::POST, "/api/v1/scim/tokens")
        .bearer_auth(&management)
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = created["token"].as_str().unwrap().to_owned();
    let url = format!("{}/scim/v2", app.url);
    let run = run_command(
        &python,
        &[repo_root().join("interop/scim/check.py")],
        &repo_root().join("interop/scim"),
        &[("SCIM_URL", url.as_str()), ("SCIM_TOKEN", token.as_str())],
        Duration::from_secs(300),
    )
    .await;
    let summary = run.summary(&format!("scim2-tester on {backend:?}"));
    assert!(
        summary["counts"]["SUCCESS"].as_u64().unwrap_or(0) >= 60,
        "{summary}"
    );
    // The Group resource type is discovered and checked too (CRUD, PATCH, search).
    let group_successes = run
        .stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line.trim()).ok())
        .filter(|line| line["resource_type"] == "Group" && line["status"] == "SUCCESS")
        .count();
    println!("scim2-tester on {backend:?}: {group_successes} Group checks SUCCESS");
    assert!(group_successes >= 15, "{group_successes}: {}", run.stdout);
    assert!(
        summary["explained"]
            .as_array()
            .is_some_and(|e| e.len() <= 1),
        "{summary}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn interop_scim2_tester_sqlite() {
    scim2_tester(Backend::Sqlite).await;
}

#[tokio::test]
async fn interop_scim2_tester_postgres() {
    scim2_tester(Backend::Postgres).await;
}
