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

/// Status, headers and JSON body of a request.
async fn send(request: reqwest::RequestBuilder) -> (u16, reqwest::header::HeaderMap, Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, headers, body)
}

fn etag(headers: &reqwest::header::HeaderMap) -> String {
    headers
        .get(reqwest::header::ETAG)
        .unwrap_or_else(|| panic!("no ETag in {headers:?}"))
        .to_str()
        .unwrap()
        .to_owned()
}

/// The API conventions on tenants, on SQLite and PostgreSQL: `201` with a `Location` that reads
/// the tenant (also on an idempotent replay), an `ETag` on reads and changes, `If-Match` on
/// `PATCH` (a suspension is a change too), and `limit`/`after` walking every tenant once.
#[tokio::test]
async fn tenants_answer_location_etags_honour_if_match_and_page() {
    for backend in svc_testkit::BACKENDS {
        let app = TestApp::spawn_with(backend, &env()).await;
        let operator = operator_token(&app).await;
        let cp =
            |method: reqwest::Method, path: &str| app.request(method, path).bearer_auth(&operator);
        let body = json!({"slug": "globex", "display_name": "Globex"});
        let (status, headers, created) = send(
            cp(reqwest::Method::POST, "/api/v1/control-plane/tenants")
                .header("idempotency-key", "globex-1")
                .json(&body),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        let id = created["tenant"]["id"].as_str().unwrap().to_owned();
        let location = headers[reqwest::header::LOCATION]
            .to_str()
            .unwrap()
            .to_owned();
        assert_eq!(location, format!("/api/v1/control-plane/tenants/{id}"));
        let credentials = &created["management_application"];
        assert!(
            credentials["client_secret"]
                .as_str()
                .unwrap()
                .starts_with("cs_")
        );
        assert_eq!(credentials["application"]["is_management"], true);
        assert_eq!(
            credentials["client_id"],
            credentials["application"]["client_id"]
        );
        let (status, headers, replayed) = send(
            cp(reqwest::Method::POST, "/api/v1/control-plane/tenants")
                .header("idempotency-key", "globex-1")
                .json(&body),
        )
        .await;
        assert_eq!(status, 201);
        assert_eq!(headers["idempotent-replayed"], "true");
        assert_eq!(headers[reqwest::header::LOCATION], location.as_str());
        assert_eq!(replayed, created);

        let (status, headers, read) = send(cp(reqwest::Method::GET, &location)).await;
        assert_eq!(status, 200);
        assert_eq!(read, created["tenant"]);
        let first = etag(&headers);

        let patch = |tag: &str, name: &str| {
            cp(reqwest::Method::PATCH, &location)
                .header(reqwest::header::IF_MATCH, tag)
                .json(&json!({"display_name": name}))
        };
        let (status, headers, renamed) = send(patch(&first, "Globex Corp")).await;
        assert_eq!(status, 200, "{renamed}");
        assert_eq!(renamed["display_name"], "Globex Corp");
        let second = etag(&headers);
        assert_ne!(second, first);
        let (_, headers, _) = send(cp(reqwest::Method::GET, &location)).await;
        assert_eq!(etag(&headers), second);

        for stale in [first.as_str(), "\"nope\"", "garbage"] {
            let (status, headers, problem) = send(patch(stale, "Lost")).await;
            assert_eq!(status, 412, "{stale}: {problem}");
            assert_eq!(problem["error"], "precondition_failed");
            assert!(
                headers[reqwest::header::CONTENT_TYPE]
                    .to_str()
                    .unwrap()
                    .starts_with("application/problem+json")
            );
        }
        let (_, _, unchanged) = send(cp(reqwest::Method::GET, &location)).await;
        assert_eq!(unchanged, renamed, "nothing changed");

        // A suspension moves the revision: the tag read before it is stale.
        let (status, headers, suspended) =
            send(cp(reqwest::Method::POST, &format!("{location}/suspend"))).await;
        assert_eq!(status, 200);
        assert_eq!(suspended["status"], "suspended");
        let third = etag(&headers);
        assert_ne!(third, second);
        let (status, _, _) = send(patch(&second, "Lost")).await;
        assert_eq!(status, 412);
        let (status, _, starred) = send(patch("*", "Globex Inc")).await;
        assert_eq!(status, 200, "{starred}");
        assert_eq!(starred["status"], "suspended", "the suspension is kept");
        let (status, _, _) =
            send(cp(reqwest::Method::PATCH, &location).json(&json!({"signup_enabled": true})))
                .await;
        assert_eq!(status, 200, "no If-Match: unconditional");

        // Pages of two walk every tenant once, in id order.
        for slug in ["p1", "p2", "p3", "p4"] {
            let (status, _, _) = send(
                cp(reqwest::Method::POST, "/api/v1/control-plane/tenants")
                    .json(&json!({"slug": slug, "display_name": slug})),
            )
            .await;
            assert_eq!(status, 201);
        }
        let (_, _, everything) = send(cp(
            reqwest::Method::GET,
            "/api/v1/control-plane/tenants?limit=200",
        ))
        .await;
        let all: Vec<String> = everything["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_owned())
            .collect();
        assert!(all.len() >= 5 && all.contains(&id));
        for order in ["asc", "desc"] {
            let mut seen = Vec::new();
            let mut cursor: Option<String> = None;
            loop {
                let mut path = format!("/api/v1/control-plane/tenants?limit=2&order={order}");
                if let Some(after) = &cursor {
                    path.push_str(&format!("&after={after}"));
                }
                let (status, _, page) = send(cp(reqwest::Method::GET, &path)).await;
                assert_eq!(status, 200, "{page}");
                let items = page["items"].as_array().unwrap();
                assert!(items.len() <= 2);
                seen.extend(items.iter().map(|t| t["id"].as_str().unwrap().to_owned()));
                match page["next_cursor"].as_str() {
                    Some(next) => cursor = Some(next.to_owned()),
                    None => break,
                }
            }
            if order == "desc" {
                seen.reverse();
            }
            assert_eq!(seen, all, "every tenant once, in id order ({order})");
        }
        for path in [
            "/api/v1/control-plane/tenants?after=nope",
            "/api/v1/control-plane/tenants?limit=x",
            "/api/v1/control-plane/tenants?page=2",
            "/api/v1/control-plane/tenants?order=random",
        ] {
            let (status, _, problem) = send(cp(reqwest::Method::GET, path)).await;
            assert_eq!(status, 400, "{path}: {problem}");
            assert_eq!(problem["error"], "bad_request");
        }

        // New management credentials: the client id and a secret that works at once.
        let (status, _, issued) = send(cp(
            reqwest::Method::POST,
            &format!("{location}/management-credentials"),
        ))
        .await;
        assert_eq!(status, 200, "{issued}");
        assert_eq!(issued["client_id"], credentials["client_id"]);
        assert_ne!(issued["client_secret"], credentials["client_secret"]);
        app.shutdown().await;
    }
}
