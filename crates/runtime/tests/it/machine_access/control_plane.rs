//! The control plane: operator authentication, conflicts, validation, idempotency keys, and
//! tenant suspension and deletion.

use super::support::*;
use serde_json::{Value, json};
use svc_testkit::{Backend, TestApp};

#[tokio::test]
async fn control_plane_rules_conflicts_idempotency_and_suspension() {
    let app = TestApp::spawn_with(Backend::Postgres, &env()).await;
    let operator = operator_token(&app).await;
    let unauthenticated = app
        .request(reqwest::Method::GET, "/api/v1/control-plane/tenants")
        .send()
        .await
        .unwrap();
    assert_eq!(unauthenticated.status(), 401);
    let wrong = app
        .request(reqwest::Method::GET, "/api/v1/control-plane/tenants")
        .bearer_auth("svcop_not-a-real-token")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);

    let acme = create_tenant(&app, &operator, "acme").await;
    let duplicate = app
        .request(reqwest::Method::POST, "/api/v1/control-plane/tenants")
        .bearer_auth(&operator)
        .json(&json!({"slug": "acme", "display_name": "Again"}))
        .send()
        .await
        .unwrap();
    assert_eq!(duplicate.status(), 409);
    assert_eq!(
        duplicate.json::<Value>().await.unwrap()["error"],
        "conflict"
    );
    for bad in [
        json!({"slug": "Not A Label", "display_name": "x"}),
        json!({"slug": "ok"}),
        json!({"slug": "ok", "display_name": "x", "extra": 1}),
    ] {
        let response = app
            .request(reqwest::Method::POST, "/api/v1/control-plane/tenants")
            .bearer_auth(&operator)
            .json(&bad)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400, "{bad}");
    }

    // Idempotency: same key + same body replays; same key + other body conflicts.
    let post = |body: Value| {
        app.request(reqwest::Method::POST, "/api/v1/control-plane/tenants")
            .bearer_auth(&operator)
            .header("idempotency-key", "create-initech-1")
            .json(&body)
            .send()
    };
    let first = post(json!({"slug": "initech", "display_name": "Initech"}))
        .await
        .unwrap();
    assert_eq!(first.status(), 201);
    let first: Value = first.json().await.unwrap();
    let replay = post(json!({"slug": "initech", "display_name": "Initech"}))
        .await
        .unwrap();
    assert_eq!(replay.status(), 201);
    assert_eq!(replay.headers()["idempotent-replayed"], "true");
    assert_eq!(
        replay.json::<Value>().await.unwrap()["tenant"]["id"],
        first["tenant"]["id"]
    );
    let other = post(json!({"slug": "initech2", "display_name": "Other"}))
        .await
        .unwrap();
    assert_eq!(other.status(), 409);

    // Suspension: every surface of the tenant answers 403 forbidden.
    let tenant_id = {
        let list: Value = app
            .request(reqwest::Method::GET, "/api/v1/control-plane/tenants")
            .bearer_auth(&operator)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["slug"] == "acme")
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let suspended = app
        .request(
            reqwest::Method::POST,
            &format!("/api/v1/control-plane/tenants/{tenant_id}/suspend"),
        )
        .bearer_auth(&operator)
        .send()
        .await
        .unwrap();
    assert_eq!(suspended.status(), 200);
    tokio::time::sleep(std::time::Duration::from_secs(6)).await; // the tenant cache's TTL
    for (method, path) in [
        (reqwest::Method::POST, "/oauth/token"),
        (reqwest::Method::GET, "/.well-known/openid-configuration"),
        (reqwest::Method::GET, "/api/v1/applications"),
    ] {
        let response = app
            .request(method, path)
            .header("host", &acme.host)
            .basic_auth(&acme.client_id, Some(&acme.client_secret))
            .form(&[("grant_type", "client_credentials")])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 403, "{path}");
    }
    let deleted = app
        .request(
            reqwest::Method::DELETE,
            &format!("/api/v1/control-plane/tenants/{tenant_id}"),
        )
        .bearer_auth(&operator)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    let gone = app
        .request(
            reqwest::Method::GET,
            &format!("/api/v1/control-plane/tenants/{tenant_id}"),
        )
        .bearer_auth(&operator)
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    app.shutdown().await;
}
