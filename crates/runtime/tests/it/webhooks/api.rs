//! The subscription API over HTTP: create (secret shown once, 32-byte entropy rule, unknown
//! types with the catalog), read without the secret, list, update, delete, idempotency, scopes,
//! tenant isolation and hostile input, on SQLite and PostgreSQL.

use super::support::{World, fast_delivery};
use crate::common::{create_tenant, management_token, operator_token};
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

async fn send(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

#[tokio::test]
async fn subscriptions_are_created_read_listed_updated_and_deleted_with_the_secret_shown_once() {
    for backend in BACKENDS {
        let world = World::new(backend, &fast_delivery()).await;
        let (status, created) = send(
            world
                .api(reqwest::Method::POST, "/api/v1/webhooks")
                .header("idempotency-key", "create-1")
                .json(&json!({
                    "url": "https://hooks.example.com/svc",
                    "event_types": ["auth.login.success", "tenant_user.invited", "auth.login.success"],
                    "description": "CRM sync",
                })),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        let id = created["id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("whk_"));
        let secret = created["secret"].as_str().unwrap().to_owned();
        assert!(
            secret.starts_with("whsec_") && secret.len() == 50,
            "{secret}"
        );
        assert_eq!(
            created["event_types"],
            json!(["auth.login.success", "tenant_user.invited"])
        );
        assert_eq!(created["active"], true);
        assert_eq!(created["description"], "CRM sync");
        for field in [
            "url",
            "created_at",
            "updated_at",
            "disabled_reason",
            "previous_secret_expires_at",
        ] {
            assert!(created.get(field).is_some(), "{field} missing: {created}");
        }

        // Replaying the same key and body answers the same, once.
        let replay = world
            .api(reqwest::Method::POST, "/api/v1/webhooks")
            .header("idempotency-key", "create-1")
            .json(&json!({
                "url": "https://hooks.example.com/svc",
                "event_types": ["auth.login.success", "tenant_user.invited", "auth.login.success"],
                "description": "CRM sync",
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(replay.headers()["idempotent-replayed"], "true");
        let replayed: Value = replay.json().await.unwrap();
        assert_eq!(replayed["id"], created["id"]);

        // Reads never show the secret.
        let (status, read) =
            send(world.api(reqwest::Method::GET, &format!("/api/v1/webhooks/{id}"))).await;
        assert_eq!(status, 200);
        assert!(read.get("secret").is_none());
        assert!(!read.to_string().contains(&secret));
        let (status, list) = send(world.api(reqwest::Method::GET, "/api/v1/webhooks")).await;
        assert_eq!(status, 200);
        assert_eq!(list["items"].as_array().unwrap().len(), 1);
        assert!(!list.to_string().contains(&secret));

        let (status, updated) = send(
            world
                .api(reqwest::Method::PUT, &format!("/api/v1/webhooks/{id}"))
                .json(
                    &json!({"event_types": ["auth.logout"], "active": false, "description": null}),
                ),
        )
        .await;
        assert_eq!(status, 200, "{updated}");
        assert_eq!(updated["event_types"], json!(["auth.logout"]));
        assert_eq!(updated["active"], false);
        assert_eq!(updated["description"], Value::Null);
        assert_eq!(updated["url"], "https://hooks.example.com/svc");

        let (status, rotated) = send(world.api(
            reqwest::Method::POST,
            &format!("/api/v1/webhooks/{id}/rotate-secret"),
        ))
        .await;
        assert_eq!(status, 200, "{rotated}");
        assert_ne!(rotated["secret"], json!(secret));
        assert!(rotated["previous_secret_expires_at"].is_string());

        let (status, catalog) =
            send(world.api(reqwest::Method::GET, "/api/v1/webhooks/event-types")).await;
        assert_eq!(status, 200);
        let items = catalog["items"].as_array().unwrap();
        assert!(
            items
                .iter()
                .any(|i| i["type"] == "security.refresh_token.reuse")
        );
        assert!(
            items.iter().all(|i| i["type"] != "wallet.tx.signed"),
            "a type nothing records is not advertised"
        );

        let (status, _) =
            send(world.api(reqwest::Method::DELETE, &format!("/api/v1/webhooks/{id}"))).await;
        assert_eq!(status, 204);
        let (status, gone) =
            send(world.api(reqwest::Method::GET, &format!("/api/v1/webhooks/{id}"))).await;
        assert_eq!(status, 404);
        assert_eq!(gone["error"], "not_found");

        // Audited, every change.
        let (_, audit) = send(world.api(reqwest::Method::GET, "/api/v1/audit-logs?limit=50")).await;
        let actions: Vec<&str> = audit["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["action"].as_str())
            .collect();
        for action in [
            "webhook.created",
            "webhook.updated",
            "webhook.secret_rotated",
            "webhook.deleted",
        ] {
            assert!(actions.contains(&action), "{action} not in {actions:?}");
        }
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn weak_secrets_unknown_types_bad_urls_and_hostile_bodies_get_clear_errors_and_write_nothing()
{
    for backend in BACKENDS {
        let world = World::new(backend, &fast_delivery()).await;
        let post = |body: Value| {
            world
                .api(reqwest::Method::POST, "/api/v1/webhooks")
                .json(&body)
        };

        // A 20-byte secret (40 hex characters) is refused, and the answer says why.
        let (status, problem) = send(post(json!({
            "url": "https://hooks.example.com/a",
            "event_types": ["auth.logout"],
            "secret": "0123456789abcdef0123456789abcdef01234567",
        })))
        .await;
        assert_eq!(status, 400);
        assert_eq!(problem["error"], "bad_request");
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.contains("secret") && detail.contains("256 are required (32 random bytes)"),
            "{detail}"
        );

        let (status, problem) = send(post(
            json!({"url": "https://hooks.example.com/a", "event_types": ["auth.logon"]}),
        ))
        .await;
        assert_eq!(status, 400);
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.contains(
                "event type \"auth.logon\" is unknown; valid types are: auth.login.success"
            ),
            "{detail}"
        );

        // A type of a feature still to come is not offered, so it is not accepted either.
        let (status, problem) = send(post(
            json!({"url": "https://hooks.example.com/a", "event_types": ["auth.logout", "wallet.tx.signed"]}),
        ))
        .await;
        assert_eq!(status, 400);
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.contains("\"wallet.tx.signed\" is not recorded by this version"),
            "{detail}"
        );

        for body in [
            json!({"event_types": ["auth.logout"]}),
            json!({"url": "https://hooks.example.com/a"}),
            json!({"url": "https://hooks.example.com/a", "event_types": []}),
            json!({"url": "ftp://hooks.example.com/a", "event_types": ["auth.logout"]}),
            json!({"url": "https://u:p@hooks.example.com/a", "event_types": ["auth.logout"]}),
            json!({"url": "https://hooks.example.com/a", "event_types": ["auth.logout"], "extra": 1}),
            json!({"url": 5, "event_types": ["auth.logout"]}),
            json!({"url": "https://hooks.example.com/a", "event_types": ["auth.logout"], "description": "x\u{0}y"}),
            json!({"url": "https://hooks.example.com/a", "event_types": ["auth.logout"], "secret": "a".repeat(300)}),
        ] {
            let (status, problem) = send(post(body.clone())).await;
            assert_eq!(status, 400, "{body}: {problem}");
            assert_eq!(problem["error"], "bad_request", "{body}");
        }
        let (status, _) = send(
            world
                .api(reqwest::Method::POST, "/api/v1/webhooks")
                .header("content-type", "application/json")
                .body("{\"url\": \"https://h.example/a\", \"event_types\": [\"auth.logout\""),
        )
        .await;
        assert_eq!(status, 400);
        let (status, _) = send(
            world
                .api(reqwest::Method::POST, "/api/v1/webhooks")
                .header("content-type", "application/json")
                .body(format!(
                    "{{\"url\": \"https://h.example/{}\", \"event_types\": []}}",
                    "a".repeat(2 * 1024 * 1024)
                )),
        )
        .await;
        assert_eq!(status, 413);
        for path in [
            "/api/v1/webhooks/whk_nope",
            "/api/v1/webhooks/..%2f..%2fetc",
            "/api/v1/webhooks/app_01jd0000000000000000000000",
        ] {
            let (status, _) = send(world.api(reqwest::Method::GET, path)).await;
            assert_eq!(status, 404, "{path}");
        }
        let (status, _) = send(world.api(reqwest::Method::GET, "/api/v1/webhooks?limit=abc")).await;
        assert_eq!(status, 400);
        let (_, list) = send(world.api(reqwest::Method::GET, "/api/v1/webhooks")).await;
        assert_eq!(list["items"], json!([]), "nothing was written");
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn scopes_and_tenants_are_enforced_tenant_first() {
    for backend in BACKENDS {
        let world = World::new(backend, &fast_delivery()).await;
        let created = world
            .subscribe("https://hooks.example.com/a", &["auth.logout"])
            .await;
        let id = created["id"].as_str().unwrap();

        // Another tenant's token on its own host cannot see acme's subscription.
        let operator = operator_token(&world.app).await;
        let other = create_tenant(&world.app, &operator, "other").await;
        let other_token = management_token(&world.app, &other, None).await;
        let on_other = |method: reqwest::Method, path: &str| {
            world
                .app
                .request(method, path)
                .header("host", &other.host)
                .bearer_auth(&other_token)
        };
        for (method, path) in [
            (reqwest::Method::GET, format!("/api/v1/webhooks/{id}")),
            (reqwest::Method::DELETE, format!("/api/v1/webhooks/{id}")),
            (reqwest::Method::POST, format!("/api/v1/webhooks/{id}/test")),
            (
                reqwest::Method::GET,
                format!("/api/v1/webhooks/{id}/deliveries"),
            ),
        ] {
            let (status, _) = send(on_other(method.clone(), &path)).await;
            assert_eq!(status, 404, "{method} {path}");
        }
        // acme's token on the other tenant's host is refused before any scope is looked at.
        let (status, problem) = send(
            world
                .app
                .request(reqwest::Method::GET, "/api/v1/webhooks")
                .header("host", &other.host)
                .bearer_auth(&world.token),
        )
        .await;
        assert_eq!(status, 401, "{problem}");

        // Read-only tokens read but cannot write; write-only tokens cannot read.
        let read_only = management_token(&world.app, &world.tenant, Some("webhooks:read")).await;
        let (status, _) = send(
            world
                .app
                .request(reqwest::Method::GET, "/api/v1/webhooks")
                .header("host", &world.tenant.host)
                .bearer_auth(&read_only),
        )
        .await;
        assert_eq!(status, 200);
        let (status, problem) = send(
            world
                .app
                .request(reqwest::Method::POST, "/api/v1/webhooks")
                .header("host", &world.tenant.host)
                .bearer_auth(&read_only)
                .json(&json!({"url": "https://h.example/a", "event_types": ["auth.logout"]})),
        )
        .await;
        assert_eq!(status, 403);
        assert_eq!(problem["error"], "insufficient_scope");
        let write_only = management_token(&world.app, &world.tenant, Some("webhooks:write")).await;
        let (status, _) = send(
            world
                .app
                .request(
                    reqwest::Method::GET,
                    &format!("/api/v1/webhooks/{id}/deliveries"),
                )
                .header("host", &world.tenant.host)
                .bearer_auth(&write_only),
        )
        .await;
        assert_eq!(status, 403);
        let (status, _) = send(
            world
                .app
                .request(reqwest::Method::GET, "/api/v1/webhooks")
                .header("host", &world.tenant.host),
        )
        .await;
        assert_eq!(status, 401);
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn internal_targets_are_refused_when_switched_off() {
    let mut env = fast_delivery();
    env.push(("SVC_WEBHOOKS__ALLOW_INTERNAL_TARGETS", "false"));
    let world = World::new(svc_testkit::Backend::Sqlite, &env).await;
    for (url, why) in [
        ("http://hooks.example.com/a", "url must use https"),
        ("https://127.0.0.1/a", "internal address (127.0.0.1)"),
        ("https://2130706433/a", "internal address (127.0.0.1)"),
        ("https://0x7f000001/a", "internal address (127.0.0.1)"),
        ("https://[::1]/a", "internal address (::1)"),
        ("https://[::ffff:169.254.169.254]/a", "internal address"),
        (
            "https://169.254.169.254/latest/meta-data/",
            "internal address (169.254.169.254)",
        ),
        ("https://10.0.0.8/a", "internal address (10.0.0.8)"),
        ("https://192.168.1.1/a", "internal address (192.168.1.1)"),
    ] {
        let (status, problem) = send(
            world
                .api(reqwest::Method::POST, "/api/v1/webhooks")
                .json(&json!({"url": url, "event_types": ["auth.logout"]})),
        )
        .await;
        assert_eq!(status, 400, "{url}");
        assert!(
            problem["detail"].as_str().unwrap().contains(why),
            "{url}: {problem}"
        );
    }
    world.app.shutdown().await;
}
