//! API resources end to end, on SQLite and PostgreSQL, through real HTTP: a tenant's management
//! application registers, lists, reads, changes and deletes the APIs it protects (with
//! `Location`, `ETag`/`If-Match`, pages and idempotent creation); another tenant's token finds
//! none of it (404 on every path); hostile bodies are refused naming the field (or as too large)
//! and write nothing, never a 500; and each route needs its `applications:*` scope.

use crate::tenant_users::{Api, TwoTenants as World};
use reqwest::Method as M;
use reqwest::header::{ETAG, IF_MATCH, LOCATION};
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

const BASE: &str = "/api/v1/api-resources";

/// Sends `method path` with `If-Match: if_match` (when given) and `body`: the status, the `ETag`
/// (if any) and the JSON body (`Null` if none).
async fn send(
    api: &Api<'_>,
    method: M,
    path: &str,
    if_match: Option<&str>,
    body: Option<Value>,
) -> (u16, Option<String>, Value) {
    let mut request = api.request(method, path);
    if let Some(tag) = if_match {
        request = request.header(IF_MATCH, tag);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let etag = response
        .headers()
        .get(ETAG)
        .map(|v| v.to_str().unwrap().to_owned());
    let text = response.text().await.unwrap();
    (
        status,
        etag,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

/// Registers `body` on `api`'s tenant, asserting 201; the view.
async fn register(api: &Api<'_>, body: Value) -> Value {
    let (status, created) = api.call(M::POST, BASE, Some(body.clone())).await;
    assert_eq!(status, 201, "{body}: {created}");
    created
}

/// The ids of every API resource of `api`'s tenant.
async fn resource_ids(api: &Api<'_>) -> Vec<String> {
    let (status, page) = api.call(M::GET, &format!("{BASE}?limit=200"), None).await;
    assert_eq!(status, 200, "{page}");
    ids(&page)
}

fn ids(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_owned())
        .collect()
}

fn sorted_keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

#[tokio::test]
async fn api_resources_live_a_whole_lifecycle() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let api = world.acme();

        // Create: 201, Location, the view with its permissions sorted by name.
        let created = api
            .request(M::POST, BASE)
            .json(&json!({
                "identifier": "https://api.example.com",
                "name": "Invoices API",
                "permissions": [
                    {"name": "invoices:write", "description": "Create and change invoices"},
                    {"name": "invoices:read", "description": "Read invoices"}
                ]
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201, "{backend:?}");
        let location = created.headers()[LOCATION].to_str().unwrap().to_owned();
        let invoices: Value = created.json().await.unwrap();
        let id = invoices["id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("res_"), "{invoices}");
        assert_eq!(location, format!("{BASE}/{id}"));
        assert_eq!(
            sorted_keys(&invoices),
            [
                "created_at",
                "id",
                "identifier",
                "name",
                "permissions",
                "updated_at"
            ]
        );
        assert_eq!(invoices["identifier"], "https://api.example.com");
        assert_eq!(invoices["name"], "Invoices API");
        assert_eq!(
            invoices["permissions"],
            json!([
                {"name": "invoices:read", "description": "Read invoices"},
                {"name": "invoices:write", "description": "Create and change invoices"}
            ])
        );
        let (status, taken) = api
            .call(
                M::POST,
                BASE,
                Some(json!({"identifier": "https://api.example.com", "name": "Again"})),
            )
            .await;
        assert_eq!((status, taken["error"].as_str()), (409, Some("conflict")));
        assert!(taken["detail"].as_str().unwrap().contains("identifier"));

        // Idempotent create: the replay is the same resource, Location included; defaults.
        let retry = || {
            api.request(M::POST, BASE)
                .header("idempotency-key", "register-billing-1")
                .json(&json!({"identifier": "urn:acme:billing", "name": "Billing"}))
        };
        let first = retry().send().await.unwrap();
        assert_eq!(first.status(), 201);
        let first_location = first.headers()[LOCATION].to_str().unwrap().to_owned();
        let billing: Value = first.json().await.unwrap();
        assert_eq!(billing["permissions"], json!([]));
        let again = retry().send().await.unwrap();
        assert_eq!(again.status(), 201);
        assert_eq!(again.headers()["idempotent-replayed"], "true");
        assert_eq!(again.headers()[LOCATION], first_location.as_str());
        assert_eq!(again.json::<Value>().await.unwrap(), billing);
        assert_eq!(resource_ids(&api).await.len(), 2, "one resource, not two");

        // List: pages, both orders.
        let billing_id = billing["id"].as_str().unwrap();
        let (_, page) = api.call(M::GET, &format!("{BASE}?limit=1"), None).await;
        assert_eq!(ids(&page), [id.as_str()]);
        assert_eq!(page["items"][0], invoices, "list items are the full view");
        let cursor = page["next_cursor"].as_str().unwrap().to_owned();
        let (_, rest) = api
            .call(M::GET, &format!("{BASE}?limit=1&after={cursor}"), None)
            .await;
        assert_eq!(ids(&rest), [billing_id]);
        assert!(rest["next_cursor"].is_null());
        let (_, newest) = api.call(M::GET, &format!("{BASE}?order=desc"), None).await;
        assert_eq!(ids(&newest), [billing_id, &id]);
        for bad in [
            "?after=org_01jd2n4k6m8p0r2t4v6x8z0b2d",
            "?colour=red",
            "?limit=x",
        ] {
            let (status, problem) = api.call(M::GET, &format!("{BASE}{bad}"), None).await;
            assert_eq!(status, 400, "{bad}: {problem}");
        }

        // Read with ETag; change with If-Match; a stale tag is 412 and changes nothing.
        let (status, tag0, read) = send(&api, M::GET, &location, None, None).await;
        assert_eq!((status, &read), (200, &invoices));
        let tag0 = tag0.unwrap();
        let (status, tag1, patched) = send(
            &api,
            M::PATCH,
            &location,
            Some(&tag0),
            Some(json!({
                "identifier": "https://api.example.com",
                "name": "Invoices API v2",
                "permissions": [
                    {"name": "invoices:read", "description": "Read every invoice"},
                    {"name": "invoices:export"}
                ]
            })),
        )
        .await;
        assert_eq!(status, 200, "{patched}");
        let tag1 = tag1.unwrap();
        assert_ne!(tag1, tag0);
        assert_eq!(patched["name"], "Invoices API v2");
        assert_eq!(patched["identifier"], "https://api.example.com");
        assert_eq!(
            patched["permissions"],
            json!([
                {"name": "invoices:export", "description": ""},
                {"name": "invoices:read", "description": "Read every invoice"}
            ]),
            "replaced whole"
        );
        let (status, _, problem) = send(
            &api,
            M::PATCH,
            &location,
            Some(&tag0),
            Some(json!({"name": "Mallory"})),
        )
        .await;
        assert_eq!(
            (status, problem["error"].as_str()),
            (412, Some("precondition_failed"))
        );
        let (status, _, problem) = send(
            &api,
            M::PATCH,
            &location,
            Some(&tag1),
            Some(json!({"identifier": "https://elsewhere.example"})),
        )
        .await;
        assert_eq!(status, 400, "{problem}");
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .starts_with("identifier: "),
            "{problem}"
        );
        let (status, tag_same, unchanged) =
            send(&api, M::PATCH, &location, Some("*"), Some(json!({}))).await;
        assert_eq!((status, &unchanged), (200, &patched), "nothing to change");
        assert_eq!(tag_same.as_deref(), Some(tag1.as_str()));
        let (_, _, still) = send(&api, M::GET, &location, None, None).await;
        assert_eq!(still, patched);

        // Delete: a stale tag is 412; then 204, and it is gone.
        let (status, _, _) = send(&api, M::DELETE, &location, Some(&tag0), None).await;
        assert_eq!(status, 412);
        let (status, _, _) = send(&api, M::DELETE, &location, Some(&tag1), None).await;
        assert_eq!(status, 204);
        let (status, problem) = api.call(M::GET, &location, None).await;
        assert_eq!(
            (status, problem["error"].as_str()),
            (404, Some("not_found"))
        );
        let (status, _) = api.call(M::DELETE, &location, None).await;
        assert_eq!(status, 404);
        assert_eq!(resource_ids(&api).await, [billing_id]);
        // The identifier is free again.
        register(
            &api,
            json!({"identifier": "https://api.example.com", "name": "Invoices"}),
        )
        .await;

        // The audit log tells the resource's story.
        let (status, audit) = api
            .call(
                M::GET,
                &format!("/api/v1/audit-logs?target={id}&limit=200"),
                None,
            )
            .await;
        assert_eq!(status, 200, "{audit}");
        let mut actions: Vec<&str> = audit["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["action"].as_str().unwrap())
            .collect();
        actions.reverse();
        assert_eq!(
            actions,
            [
                "api_resource.created",
                "api_resource.updated",
                "api_resource.deleted"
            ],
            "{backend:?}"
        );
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn another_tenant_finds_nothing_and_malformed_ids_are_not_found() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let api = world.acme();
        let other = world.globex();
        let resource = register(
            &api,
            json!({"identifier": "https://api.example.com", "name": "Invoices",
                   "permissions": [{"name": "invoices:read"}]}),
        )
        .await;
        let id = resource["id"].as_str().unwrap().to_owned();
        let path = format!("{BASE}/{id}");
        let (_, tag, _) = send(&api, M::GET, &path, None, None).await;

        let probes: Vec<(M, Option<Value>)> = vec![
            (M::GET, None),
            (M::PATCH, Some(json!({"name": "Mallory"}))),
            (M::PATCH, Some(json!({"permissions": []}))),
            (M::DELETE, None),
        ];
        for (method, body) in &probes {
            for if_match in [None, Some("*"), tag.as_deref()] {
                let (status, _, problem) =
                    send(&other, method.clone(), &path, if_match, body.clone()).await;
                assert_eq!(
                    (status, problem["error"].as_str()),
                    (404, Some("not_found")),
                    "{backend:?}: {method} {path} {if_match:?}"
                );
            }
        }
        // Its list does not show it; it may register the same identifier for itself.
        assert!(resource_ids(&other).await.is_empty());
        let mine = register(
            &other,
            json!({"identifier": "https://api.example.com", "name": "Globex invoices"}),
        )
        .await;
        assert_ne!(mine["id"], resource["id"]);

        // Acme's resource is untouched.
        let (status, read) = api.call(M::GET, &path, None).await;
        assert_eq!((status, &read), (200, &resource));

        // Malformed ids, or ids of another kind, are not found either.
        for path in [
            format!("{BASE}/nope"),
            format!("{BASE}/org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
            format!("{BASE}/res_01jd2p6r8t0v2x4z6b8d0f2h4k"),
            format!("{BASE}/{}", "r".repeat(300)),
        ] {
            for method in [M::GET, M::DELETE] {
                let (status, problem) = api.call(method.clone(), &path, None).await;
                assert_eq!(
                    (status, problem["error"].as_str()),
                    (404, Some("not_found")),
                    "{method} {path}"
                );
            }
            let (status, _) = api.call(M::PATCH, &path, Some(json!({"name": "X"}))).await;
            assert_eq!(status, 404, "PATCH {path}");
        }
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn hostile_bodies_are_refused_naming_the_field_and_write_nothing() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let api = world.acme();
        let resource = register(
            &api,
            json!({"identifier": "https://api.example.com", "name": "Invoices",
                   "permissions": [{"name": "invoices:read", "description": "Read"}]}),
        )
        .await;
        let id = resource["id"].as_str().unwrap().to_owned();
        let path = format!("{BASE}/{id}");

        let ok = "https://new.example";
        let perms = |list: Value| json!({"identifier": ok, "name": "A", "permissions": list});
        let many: Vec<Value> = (0..101)
            .map(|i| json!({"name": format!("a:{i}")}))
            .collect();
        let creates = [
            (
                json!({"identifier": ok, "name": "A", "owner": "me"}),
                "unknown field `owner`",
            ),
            (json!({"identifier": ok}), "name"),
            (json!({"name": "A"}), "identifier"),
            (json!({"identifier": 5, "name": "A"}), "identifier"),
            (json!({"identifier": ok, "name": ["A"]}), "name"),
            (perms(json!("invoices:read")), "permissions"),
            (perms(json!({"name": "a:b"})), "permissions"),
            (perms(json!(["a:b"])), "permissions"),
            (perms(json!([{"name": 1}])), "permissions[0].name"),
            (
                perms(json!([{"name": "a:b", "description": 1}])),
                "description",
            ),
            (
                perms(json!([{"name": "a:b", "scope": "x"}])),
                "unknown field `scope`",
            ),
            (
                json!({"identifier": "api.example.com", "name": "A"}),
                "identifier",
            ),
            (
                json!({"identifier": "https://a.example/#f", "name": "A"}),
                "identifier",
            ),
            (
                json!({"identifier": "https://a.example/\u{0}", "name": "A"}),
                "identifier",
            ),
            (
                json!({"identifier": format!("https://a.example/{}", "x".repeat(2048)), "name": "A"}),
                "identifier",
            ),
            (json!({"identifier": ok, "name": "x".repeat(129)}), "name"),
            (json!({"identifier": ok, "name": "A\u{0}B"}), "name"),
            (json!({"identifier": ok, "name": "A\u{1b}[31m"}), "name"),
            (json!({"identifier": ok, "name": "  "}), "name"),
            (perms(json!([{"name": "invoices"}])), "<resource>:<action>"),
            (perms(json!([{"name": "openid"}])), "permissions[0].name"),
            (perms(json!([{"name": "é:read"}])), "permissions[0].name"),
            (perms(json!([{"name": "a:b\u{7}"}])), "permissions[0].name"),
            (
                perms(json!([{"name": "a:b"}, {"name": "a:b"}])),
                "listed twice",
            ),
            (perms(Value::Array(many)), "at most 100"),
            (
                perms(json!([{"name": "a:b", "description": "d".repeat(257)}])),
                "permissions[0].description",
            ),
            (
                perms(json!([{"name": "a:b", "description": "bell\u{7}"}])),
                "permissions[0].description",
            ),
        ];
        for (body, needle) in creates {
            let (status, problem) = api.call(M::POST, BASE, Some(body.clone())).await;
            assert_eq!(status, 400, "{backend:?}: {body}: {problem}");
            assert_eq!(problem["error"], "bad_request");
            let detail = problem["detail"].as_str().unwrap();
            assert!(detail.contains(needle), "{body}: {detail}");
        }
        for raw in [
            "{\"identifier\": ",
            "[]",
            "null",
            "not json",
            "{\"name\": 1e999}",
        ] {
            let response = api
                .request(M::POST, BASE)
                .header("content-type", "application/json")
                .body(raw)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 400, "{raw}");
            assert_eq!(
                response.headers()["content-type"],
                "application/problem+json"
            );
        }

        // Larger than the server takes (16 KiB here): 413, whatever the shape.
        let thousand: Vec<Value> = (0..1000)
            .map(|i| json!({"name": format!("invoices:action-{i}"), "description": "x"}))
            .collect();
        let oversized = [
            perms(Value::Array(thousand.clone())),
            json!({"identifier": ok, "name": "x".repeat(20_000)}),
        ];
        for body in &oversized {
            for (method, target) in [(M::POST, BASE), (M::PATCH, path.as_str())] {
                let response = api
                    .request(method.clone(), target)
                    .json(body)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(response.status(), 413, "{method} {target}");
            }
        }

        let patches = [
            (json!({"name": null}), "name"),
            (json!({"permissions": null}), "permissions"),
            (json!({"identifier": null}), "identifier"),
            (json!({"identifier": "https://other.example"}), "identifier"),
            (json!({"identifier": 7}), "identifier"),
            (json!({"name": "tab\tname"}), "name"),
            (json!({"permissions": [{"name": "a"}]}), "permissions"),
            (json!({"permissions": {"name": "a:b"}}), "permissions"),
            (
                json!({"created_at": "2026-01-01T00:00:00Z"}),
                "unknown field `created_at`",
            ),
            (json!({"id": id}), "unknown field `id`"),
        ];
        for (body, needle) in patches {
            let (status, problem) = api.call(M::PATCH, &path, Some(body.clone())).await;
            assert_eq!(status, 400, "{body}: {problem}");
            let detail = problem["detail"].as_str().unwrap();
            assert!(detail.contains(needle), "{body}: {detail}");
        }
        let (status, _) = api
            .call(
                M::PATCH,
                &path,
                Some(json!({"permissions": (0..101).map(|i| json!({"name": format!("a:{i}")})).collect::<Vec<_>>()})),
            )
            .await;
        assert_eq!(status, 400);
        let bad_tag = api
            .request(M::PATCH, &path)
            .header(IF_MATCH, b"\"r1\xff\"".as_slice())
            .json(&json!({"name": "B"}))
            .send()
            .await
            .unwrap();
        assert_eq!(bad_tag.status(), 400, "If-Match must be visible ASCII");

        // Nothing was written.
        assert_eq!(resource_ids(&api).await, [id.as_str()]);
        let (_, now) = api.call(M::GET, &path, None).await;
        assert_eq!(now, resource);
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn api_resources_need_a_token_with_the_applications_scopes() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let full = world.acme();
        let resource = register(
            &full,
            json!({"identifier": "https://api.example.com", "name": "Invoices"}),
        )
        .await;
        let path = format!("{BASE}/{}", resource["id"].as_str().unwrap());
        let scoped = |scope: &'static str| {
            let world = &world;
            async move { world.acme_with(scope).await }
        };
        let writes: Vec<(M, String, Option<Value>)> = vec![
            (
                M::POST,
                BASE.to_owned(),
                Some(json!({"identifier": "urn:b", "name": "B"})),
            ),
            (M::PATCH, path.clone(), Some(json!({"name": "B"}))),
            (M::DELETE, path.clone(), None),
        ];

        let reader = scoped("applications:read").await;
        for read in [BASE, path.as_str()] {
            let (status, body) = reader.call(M::GET, read, None).await;
            assert_eq!(status, 200, "{backend:?}: GET {read}: {body}");
        }
        for (method, target, body) in &writes {
            let (status, problem) = reader.call(method.clone(), target, body.clone()).await;
            assert_eq!(
                (status, problem["error"].as_str()),
                (403, Some("insufficient_scope")),
                "{method} {target}"
            );
        }

        for unrelated in ["organizations:read", "users:write"] {
            let other = scoped(unrelated).await;
            for read in [BASE, path.as_str()] {
                let (status, problem) = other.call(M::GET, read, None).await;
                assert_eq!(
                    (status, problem["error"].as_str()),
                    (403, Some("insufficient_scope")),
                    "{unrelated}: GET {read}"
                );
            }
            let (method, target, body) = &writes[0];
            let (status, _) = other.call(method.clone(), target, body.clone()).await;
            assert_eq!(status, 403, "{unrelated}: {method} {target}");
        }

        let writer = scoped("applications:write").await;
        let (status, created) = writer
            .call(
                M::POST,
                BASE,
                Some(json!({"identifier": "urn:c", "name": "C"})),
            )
            .await;
        assert_eq!(status, 201, "applications:write registers: {created}");
        let (status, _) = writer.call(M::GET, BASE, None).await;
        assert_eq!(status, 403, "write implies nothing about read");

        let anonymous = world
            .app
            .request(M::GET, BASE)
            .header("host", &world.acme.host)
            .send()
            .await
            .unwrap();
        assert_eq!(anonymous.status(), 401);
        assert!(anonymous.headers().contains_key("www-authenticate"));

        // Nothing the reader tried took effect.
        let (_, still) = full.call(M::GET, &path, None).await;
        assert_eq!(still, resource);
        world.app.shutdown().await;
    }
}
