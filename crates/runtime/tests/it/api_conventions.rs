//! The API conventions on applications and the audit log, over real HTTP on SQLite and
//! PostgreSQL: `201 Created` with a `Location` that reads the application (also on an idempotent
//! replay), `ETag` on reads and writes, `If-Match` on replace, delete and secret rotation (a stale
//! or foreign tag is 412 and changes nothing, `*` applies), and `limit`/`after` pagination that
//! walks every application, and every audit entry newest first, exactly once.

use crate::common::{CreatedTenant, create_tenant, management_token, operator_token};
use reqwest::Method;
use serde_json::{Value, json};
use svc_testkit::{BACKENDS, TestApp};

/// The app, a tenant of it and a management token with every scope.
struct Api {
    app: TestApp,
    tenant: CreatedTenant,
    token: String,
}

/// A response's status, its headers and its JSON body (`null` when empty).
struct Answer {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: Value,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }

    fn etag(&self) -> String {
        self.header("etag").expect("an ETag").to_owned()
    }
}

impl Api {
    async fn start(backend: svc_testkit::Backend) -> Self {
        let app = TestApp::spawn_with(backend, &[("SVC_SERVER__BASE_DOMAIN", "localhost")]).await;
        let operator = operator_token(&app).await;
        let tenant = create_tenant(&app, &operator, "acme").await;
        let token = management_token(&app, &tenant, None).await;
        Self { app, tenant, token }
    }

    fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.app
            .request(method, path)
            .header("host", &self.tenant.host)
            .bearer_auth(&self.token)
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Answer {
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap();
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        Answer {
            status,
            headers,
            body,
        }
    }

    async fn get(&self, path: &str) -> Answer {
        self.send(self.request(Method::GET, path)).await
    }

    async fn create(&self, name: &str) -> Answer {
        self.send(
            self.request(Method::POST, "/api/v1/applications")
                .json(&web_app(name)),
        )
        .await
    }
}

fn web_app(name: &str) -> Value {
    json!({
        "name": name,
        "redirect_uris": ["https://shop.example/cb"],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "client_secret_basic",
        "allowed_scopes": ["openid", "offline_access"],
    })
}

/// A 412 `precondition_failed` problem.
fn assert_precondition_failed(answer: &Answer, what: &str) {
    assert_eq!(answer.status, 412, "{what}: {}", answer.body);
    assert_eq!(answer.body["error"], "precondition_failed", "{what}");
    assert_eq!(
        answer.header("content-type"),
        Some("application/problem+json"),
        "{what}"
    );
}

#[tokio::test]
async fn applications_carry_etags_and_writes_honour_if_match() {
    for backend in BACKENDS {
        let api = Api::start(backend).await;

        // 201 with a Location that reads what was created.
        let created = api.create("Shop").await;
        assert_eq!(created.status, 201, "{backend:?}: {}", created.body);
        let id = created.body["client_id"].as_str().unwrap().to_owned();
        let location = created.header("location").unwrap().to_owned();
        assert_eq!(location, format!("/api/v1/applications/{id}"));
        let read = api.get(&location).await;
        assert_eq!(read.status, 200);
        let mut without_secret = created.body.clone();
        without_secret
            .as_object_mut()
            .unwrap()
            .remove("client_secret");
        assert_eq!(read.body, without_secret);
        let first = read.etag();
        assert!(
            first.starts_with('"') && first.ends_with('"'),
            "strong: {first}"
        );
        assert_eq!(
            api.get(&location).await.etag(),
            first,
            "stable while unchanged"
        );

        // PUT with the current tag: 200, a new tag, which a read then shows.
        let renamed = api
            .send(
                api.request(Method::PUT, &location)
                    .header("if-match", &first)
                    .json(&web_app("Shop v2")),
            )
            .await;
        assert_eq!(renamed.status, 200, "{}", renamed.body);
        let second = renamed.etag();
        assert_ne!(second, first);
        assert!(renamed.body.get("client_secret").is_none(), "secret kept");
        let read = api.get(&location).await;
        assert_eq!(
            (read.body["name"].as_str(), read.etag()),
            (Some("Shop v2"), second.clone())
        );

        // A stale tag, a foreign one, a weak one: 412, nothing changed.
        for tag in [first.as_str(), "\"nope\"", &format!("W/{second}"), "\"r0\""] {
            let refused = api
                .send(
                    api.request(Method::PUT, &location)
                        .header("if-match", tag)
                        .json(&web_app("Lost update")),
                )
                .await;
            assert_precondition_failed(&refused, &format!("PUT If-Match {tag}"));
        }
        let unchanged = api.get(&location).await;
        assert_eq!(unchanged.body, read.body);
        assert_eq!(unchanged.etag(), second);

        // One of several listed tags, and `*`, apply.
        let listed = api
            .send(
                api.request(Method::PUT, &location)
                    .header("if-match", format!("\"other\", {second}"))
                    .json(&web_app("Shop v3")),
            )
            .await;
        assert_eq!(listed.status, 200, "{}", listed.body);
        let star = api
            .send(
                api.request(Method::PUT, &location)
                    .header("if-match", "*")
                    .json(&web_app("Shop v4")),
            )
            .await;
        assert_eq!(star.status, 200, "{}", star.body);
        let third = star.etag();
        assert_ne!(third, listed.etag());

        // Secret rotation: refused on a stale tag; with the current one, a new secret and tag.
        let rotate = format!("{location}/rotate-secret");
        let refused = api
            .send(
                api.request(Method::POST, &rotate)
                    .header("if-match", &second),
            )
            .await;
        assert_precondition_failed(&refused, "rotate with a stale tag");
        let rotated = api
            .send(
                api.request(Method::POST, &rotate)
                    .header("if-match", &third),
            )
            .await;
        assert_eq!(rotated.status, 200, "{}", rotated.body);
        assert_eq!(rotated.body["client_id"], id);
        assert!(
            rotated.body["client_secret"]
                .as_str()
                .unwrap()
                .starts_with("cs_")
        );
        let fourth = rotated.etag();
        assert_ne!(fourth, third);
        assert_eq!(api.get(&location).await.etag(), fourth);

        // Delete: refused on a stale tag (still there), done with the current one.
        let refused = api
            .send(
                api.request(Method::DELETE, &location)
                    .header("if-match", &third),
            )
            .await;
        assert_precondition_failed(&refused, "delete with a stale tag");
        assert_eq!(api.get(&location).await.status, 200);
        let deleted = api
            .send(
                api.request(Method::DELETE, &location)
                    .header("if-match", &fourth),
            )
            .await;
        assert_eq!(deleted.status, 204, "{}", deleted.body);
        assert_eq!(api.get(&location).await.status, 404);
        let gone = api
            .send(
                api.request(Method::DELETE, &location)
                    .header("if-match", "*"),
            )
            .await;
        assert_eq!(gone.status, 404, "If-Match: * on a missing application");

        // The audit log saw each applied change once, and none of the refused ones.
        let audit = api
            .get(&format!("/api/v1/audit-logs?target={id}&limit=200"))
            .await;
        let actions: Vec<&str> = audit.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["action"].as_str().unwrap())
            .collect();
        assert_eq!(
            actions,
            [
                "application.deleted",
                "application.secret_rotated",
                "application.updated",
                "application.updated",
                "application.updated",
                "application.created",
            ]
        );
        api.app.shutdown().await;
    }
}

#[tokio::test]
async fn an_idempotent_replay_of_a_creation_keeps_its_location() {
    for backend in BACKENDS {
        let api = Api::start(backend).await;
        let create = || {
            api.request(Method::POST, "/api/v1/applications")
                .header("idempotency-key", "shop-1")
                .json(&web_app("Shop"))
        };
        let first = api.send(create()).await;
        assert_eq!(first.status, 201, "{backend:?}: {}", first.body);
        let replay = api.send(create()).await;
        assert_eq!(replay.status, 201);
        assert_eq!(replay.header("idempotent-replayed"), Some("true"));
        assert_eq!(replay.body, first.body);
        let location = first.header("location").unwrap();
        assert_eq!(replay.header("location"), Some(location));
        assert_eq!(api.get(location).await.status, 200);
        api.app.shutdown().await;
    }
}

#[tokio::test]
async fn lists_walk_every_application_and_audit_entry_exactly_once() {
    for backend in BACKENDS {
        let api = Api::start(backend).await;
        let mut created = vec![api.tenant.client_id.clone()];
        for i in 0..5 {
            let answer = api.create(&format!("App {i}")).await;
            assert_eq!(answer.status, 201, "{backend:?}: {}", answer.body);
            created.push(answer.body["client_id"].as_str().unwrap().to_owned());
        }
        created.sort();

        let walk = |path: &'static str, key: &'static str| {
            let api = &api;
            async move {
                let mut seen = Vec::new();
                let mut pages = 0;
                let mut cursor: Option<String> = None;
                loop {
                    let mut url = if path.contains('?') {
                        format!("{path}&limit=2")
                    } else {
                        format!("{path}?limit=2")
                    };
                    if let Some(after) = &cursor {
                        url.push_str(&format!("&after={after}"));
                    }
                    let page = api.get(&url).await;
                    assert_eq!(page.status, 200, "{url}: {}", page.body);
                    let items = page.body["items"].as_array().unwrap();
                    assert!(items.len() <= 2);
                    pages += 1;
                    seen.extend(items.iter().map(|i| i[key].as_str().unwrap().to_owned()));
                    match page.body["next_cursor"].as_str() {
                        Some(next) => cursor = Some(next.to_owned()),
                        None => return (seen, pages),
                    }
                }
            }
        };

        // Applications: id (creation) order, each once.
        let (apps, pages) = walk("/api/v1/applications", "client_id").await;
        assert_eq!(apps, created);
        assert_eq!(pages, 3);
        // `order=desc` walks the same applications newest first, the cursor moving down;
        // `order=asc` is the default spelled out.
        let (newest_first, pages) = walk("/api/v1/applications?order=desc", "client_id").await;
        let mut reversed = created.clone();
        reversed.reverse();
        assert_eq!(newest_first, reversed);
        assert_eq!(pages, 3);
        let (spelled_out, _) = walk("/api/v1/applications?order=asc", "client_id").await;
        assert_eq!(spelled_out, created);

        // The audit log: newest first, each entry once, the same as one big page.
        let (entries, _) = walk("/api/v1/audit-logs", "id").await;
        let all = api.get("/api/v1/audit-logs?limit=200").await;
        let expected: Vec<String> = all.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(entries, expected);
        assert_eq!(
            entries.len(),
            6,
            "the tenant's creation and five applications"
        );
        let mut newest_first = entries.clone();
        newest_first.sort_by(|a, b| b.cmp(a));
        assert_eq!(entries, newest_first);
        let (oldest_first, _) = walk("/api/v1/audit-logs?order=asc", "id").await;
        let mut reversed = entries.clone();
        reversed.reverse();
        assert_eq!(oldest_first, reversed);
        let created_only = api
            .get("/api/v1/audit-logs?action=application.created&limit=3")
            .await;
        assert_eq!(created_only.body["items"].as_array().unwrap().len(), 3);
        let rest = api
            .get(&format!(
                "/api/v1/audit-logs?action=application.created&limit=3&after={}",
                created_only.body["next_cursor"].as_str().unwrap()
            ))
            .await;
        assert_eq!(rest.body["items"].as_array().unwrap().len(), 2);
        assert!(rest.body["next_cursor"].is_null());

        // Malformed cursors and unknown parameters (the old `before` among them) are refused.
        for url in [
            "/api/v1/applications?after=nope",
            "/api/v1/applications?sort=name",
            "/api/v1/applications?order=name",
            "/api/v1/applications?order=DESC",
            "/api/v1/audit-logs?order=",
            "/api/v1/audit-logs?after=nope",
            &format!("/api/v1/audit-logs?before={}", expected[0]),
            "/api/v1/audit-logs?since=yesterday",
        ] {
            let refused = api.get(url).await;
            assert_eq!(refused.status, 400, "{url}: {}", refused.body);
            assert_eq!(refused.body["error"], "bad_request", "{url}");
        }
        api.app.shutdown().await;
    }
}
