//! Roles end to end, on SQLite and PostgreSQL, through real HTTP: a tenant's management
//! application lists the built-in roles, creates custom ones holding permissions of its API
//! resources (with `Location`, `ETag`/`If-Match` and idempotent creation), changes them and the
//! built-in organization roles' permissions, assigns them to people, members and applications,
//! and deletes them once nobody holds them; another tenant's token finds none of it (404);
//! hostile bodies are refused (400, 413) and write nothing, never a 500; and each route needs
//! its scope (`policies:*` for roles, `applications:*` for an application's roles).

use crate::tenant_users::{Api, TwoTenants as World};
use reqwest::Method as M;
use reqwest::header::{ETAG, IF_MATCH, LOCATION};
use serde_json::{Value, json};
use svc_domain::{
    ApiResource, ApiResourceId, Clock, OsRandom, Permission, PermissionName, SystemClock, TenantId,
};
use svc_testkit::BACKENDS;

const BASE: &str = "/api/v1/roles";
const BILLING: &str = "https://api.acme.example/billing";

/// Registers an API resource of `tenant` defining `permissions`, through the store.
async fn resource(world: &World, tenant: &str, identifier: &str, permissions: &[&str]) -> String {
    let now = SystemClock.now();
    let resource = ApiResource {
        id: ApiResourceId::generate(&SystemClock, &OsRandom),
        tenant_id: TenantId::parse(tenant).unwrap(),
        identifier: identifier.to_owned(),
        name: "Billing API".to_owned(),
        permissions: permissions
            .iter()
            .map(|p| Permission {
                name: PermissionName::parse(p).unwrap(),
                description: String::new(),
            })
            .collect(),
        created_at: now,
        updated_at: now,
    };
    let store = world.app.store().await;
    let mut tx = store.write().await.unwrap();
    tx.insert_api_resource(&resource).await.unwrap();
    tx.commit().await.unwrap();
    store.close().await;
    resource.id.to_string()
}

/// Creates a pre-provisioned user on `api`'s tenant; its id.
async fn person(api: &Api<'_>, email: &str) -> String {
    let (status, user) = api
        .call(
            M::POST,
            "/api/v1/tenant-users",
            Some(json!({"email": email})),
        )
        .await;
    assert_eq!(status, 201, "{user}");
    user["id"].as_str().unwrap().to_owned()
}

/// Registers a web application on `api`'s tenant; its client id.
async fn application(api: &Api<'_>) -> String {
    let body = json!({
        "name": "Billing worker",
        "redirect_uris": ["https://worker.example/cb"],
        "grant_types": ["authorization_code"],
        "token_endpoint_auth_method": "client_secret_basic",
        "allowed_scopes": ["openid"],
    });
    let (status, app) = api.call(M::POST, "/api/v1/applications", Some(body)).await;
    assert_eq!(status, 201, "{app}");
    app["client_id"].as_str().unwrap().to_owned()
}

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

fn role_path(key: &str) -> String {
    format!("{BASE}/{key}")
}

fn app_roles(app: &str) -> String {
    format!("/api/v1/applications/{app}/roles")
}

/// The keys of every role `api` lists.
async fn keys(api: &Api<'_>) -> Vec<String> {
    let (status, list) = api.call(M::GET, BASE, None).await;
    assert_eq!(status, 200, "{list}");
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap().to_owned())
        .collect()
}

/// `(status, error)` of a problem answer.
fn problem(answer: &(u16, Value)) -> (u16, Option<&str>) {
    (answer.0, answer.1["error"].as_str())
}

#[tokio::test]
async fn roles_are_created_read_changed_and_deleted() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let api = world.acme();
        let billing = resource(
            &world,
            &world.acme.id,
            BILLING,
            &["invoices:read", "invoices:export"],
        )
        .await;

        // The built-in roles, tenant_admin with the management scopes of this issuer.
        let (status, list) = api.call(M::GET, BASE, None).await;
        assert_eq!(status, 200, "{backend:?}: {list}");
        assert_eq!(
            keys(&api).await,
            ["tenant_admin", "owner", "admin", "member"]
        );
        let admin = &list["data"][0];
        assert_eq!(admin["kind"], "tenant");
        assert_eq!(admin["built_in"], true);
        assert_eq!(admin["created_at"], Value::Null);
        let scopes = admin["permissions"].as_array().unwrap();
        assert!(
            scopes.iter().any(|p| p["name"] == "policies:write"),
            "{admin}"
        );
        for p in scopes {
            let resource = p["resource"].as_str().unwrap();
            assert!(
                resource.ends_with(&format!("{}/api/v1", world.acme.host)),
                "{p}"
            );
            assert_eq!(p["resource_id"], Value::Null);
        }
        let (status, etag, owner) = send(&api, M::GET, &role_path("owner"), None, None).await;
        assert_eq!((status, etag), (200, None), "built-in roles have no ETag");
        assert_eq!(owner["kind"], "organization");

        // Created idempotently, with Location; permissions resolved and sorted.
        let body = json!({
            "key": "billing_service",
            "kind": "tenant",
            "description": "Reads and exports invoices.",
            "permissions": [
                {"resource": BILLING, "name": "invoices:read"},
                {"resource": BILLING, "name": "invoices:export"},
                {"resource": BILLING, "name": "invoices:read"},
            ],
        });
        let mut created = Vec::new();
        for _ in 0..2 {
            let response = api
                .request(M::POST, BASE)
                .header("idempotency-key", "create-billing-service")
                .json(&body)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 201);
            assert_eq!(
                response.headers()[LOCATION],
                "/api/v1/roles/billing_service"
            );
            created.push(response.json::<Value>().await.unwrap());
        }
        assert_eq!(created[0], created[1], "the replay answers the same");
        let role = &created[0];
        assert_eq!(role["built_in"], false);
        assert_eq!(
            role["permissions"],
            json!([
                {"resource": BILLING, "resource_id": billing, "name": "invoices:export"},
                {"resource": BILLING, "resource_id": billing, "name": "invoices:read"},
            ])
        );
        let (status, etag, read) =
            send(&api, M::GET, &role_path("billing_service"), None, None).await;
        assert_eq!((status, &read), (200, role));
        let etag = etag.expect("a custom role has an ETag");

        for (body, status) in [
            (json!({"key": "owner", "kind": "organization"}), 409),
            (
                json!({"key": "billing_service", "kind": "organization"}),
                409,
            ),
            (
                json!({"key": "x", "kind": "tenant",
                       "permissions": [{"resource": "https://nope.example", "name": "a:b"}]}),
                400,
            ),
            (
                json!({"key": "x", "kind": "tenant",
                       "permissions": [{"resource": BILLING, "name": "invoices:void"}]}),
                400,
            ),
        ] {
            let answer = api.call(M::POST, BASE, Some(body.clone())).await;
            assert_eq!(answer.0, status, "{body}: {}", answer.1);
        }

        // Changed at the revision read.
        let patch = json!({"permissions": [{"resource": BILLING, "name": "invoices:read"}]});
        let path = role_path("billing_service");
        let (status, _, _) = send(&api, M::PATCH, &path, Some("\"r1\""), Some(patch.clone())).await;
        assert_eq!(status, 412);
        let (status, new_etag, changed) =
            send(&api, M::PATCH, &path, Some(&etag), Some(patch)).await;
        assert_eq!(status, 200, "{changed}");
        assert_ne!(new_etag.as_deref(), Some(etag.as_str()));
        assert_eq!(changed["permissions"].as_array().unwrap().len(), 1);
        assert_eq!(changed["description"], "Reads and exports invoices.");

        // Built-in organization roles change their permissions only; tenant_admin not at all.
        let grant = json!({"permissions": [{"resource": BILLING, "name": "invoices:read"}]});
        let (status, etag, owner) = send(
            &api,
            M::PATCH,
            &role_path("owner"),
            None,
            Some(grant.clone()),
        )
        .await;
        assert_eq!((status, etag), (200, None), "{owner}");
        assert_eq!(owner["permissions"][0]["name"], "invoices:read");
        for (path, body) in [
            (role_path("owner"), json!({"description": "Bosses"})),
            (role_path("tenant_admin"), grant.clone()),
        ] {
            let answer = api.call(M::PATCH, &path, Some(body)).await;
            assert_eq!(problem(&answer), (400, Some("bad_request")), "{path}");
        }
        let answer = api.call(M::DELETE, &role_path("member"), None).await;
        assert_eq!(problem(&answer), (400, Some("bad_request")));

        // Held by a person: not deleted until taken away.
        let ada = person(&api, "ada@example.com").await;
        let user_roles = format!("/api/v1/tenant-users/{ada}/roles");
        let (status, set) = api
            .call(
                M::PUT,
                &user_roles,
                Some(json!({"roles": ["billing_service", "tenant_admin"]})),
            )
            .await;
        assert_eq!(
            (status, &set),
            (200, &json!({"roles": ["billing_service", "tenant_admin"]}))
        );
        let answer = api.call(M::DELETE, &path, None).await;
        assert_eq!(problem(&answer), (409, Some("conflict")), "{}", answer.1);
        assert!(
            answer.1["detail"].as_str().unwrap().contains("1 holder"),
            "{}",
            answer.1
        );
        let (status, _) = api.call(M::GET, &path, None).await;
        assert_eq!(status, 200, "still there");
        let (status, _) = api
            .call(
                M::PUT,
                &user_roles,
                Some(json!({"roles": ["tenant_admin"]})),
            )
            .await;
        assert_eq!(status, 200);
        let (status, _, _) = send(&api, M::DELETE, &path, Some("\"r1\""), None).await;
        assert_eq!(status, 412);
        let (status, etag, _) = send(&api, M::GET, &path, None, None).await;
        assert_eq!(status, 200);
        let (status, _, _) = send(&api, M::DELETE, &path, etag.as_deref(), None).await;
        assert_eq!(status, 204);
        let (status, _) = api.call(M::GET, &path, None).await;
        assert_eq!(status, 404);
        assert_eq!(
            keys(&api).await,
            ["tenant_admin", "owner", "admin", "member"]
        );

        let (status, audit) = api
            .call(
                M::GET,
                "/api/v1/audit-logs?target=billing_service&limit=200",
                None,
            )
            .await;
        assert_eq!(status, 200);
        let actions: Vec<&str> = audit["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["action"].as_str().unwrap())
            .collect();
        assert_eq!(actions, ["role.deleted", "role.updated", "role.created"]);
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn custom_roles_are_held_by_people_members_and_applications_of_their_kind() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let api = world.acme();
        for body in [
            json!({"key": "billing_service", "kind": "tenant"}),
            json!({"key": "auditor", "kind": "organization"}),
        ] {
            let (status, role) = api.call(M::POST, BASE, Some(body)).await;
            assert_eq!(status, 201, "{backend:?}: {role}");
        }
        let app = application(&api).await;
        let ada = person(&api, "ada@example.com").await;

        // Applications: custom tenant roles only.
        let path = app_roles(&app);
        assert_eq!(
            api.call(M::GET, &path, None).await,
            (200, json!({"roles": []}))
        );
        let (status, set) = api
            .call(
                M::PUT,
                &path,
                Some(json!({"roles": ["billing_service", "billing_service"]})),
            )
            .await;
        assert_eq!(
            (status, &set),
            (200, &json!({"roles": ["billing_service"]}))
        );
        assert_eq!(api.call(M::GET, &path, None).await, (200, set.clone()));
        for roles in [
            json!(["tenant_admin"]),
            json!(["auditor"]),
            json!(["owner"]),
            json!(["nobody"]),
        ] {
            let answer = api.call(M::PUT, &path, Some(json!({"roles": roles}))).await;
            assert_eq!(problem(&answer), (400, Some("bad_request")), "{roles}");
            assert!(
                answer.1["detail"].as_str().unwrap().contains("roles"),
                "{}",
                answer.1
            );
        }
        assert_eq!(api.call(M::GET, &path, None).await, (200, set));
        let (status, audit) = api
            .call(
                M::GET,
                &format!("/api/v1/audit-logs?target={app}&action=application.roles_changed"),
                None,
            )
            .await;
        assert_eq!(status, 200);
        assert_eq!(audit["items"].as_array().unwrap().len(), 1, "{audit}");

        // People and members: their kind only.
        let user_roles = format!("/api/v1/tenant-users/{ada}/roles");
        let answer = api
            .call(M::PUT, &user_roles, Some(json!({"roles": ["auditor"]})))
            .await;
        assert_eq!(problem(&answer), (400, Some("bad_request")));
        assert!(
            answer.1["detail"].as_str().unwrap().contains("auditor"),
            "{}",
            answer.1
        );
        let (_, org) = api
            .call(
                M::POST,
                "/api/v1/organizations",
                Some(json!({"name": "Acme", "slug": "acme"})),
            )
            .await;
        let members = format!(
            "/api/v1/organizations/{}/members",
            org["id"].as_str().unwrap()
        );
        let answer = api
            .call(
                M::POST,
                &members,
                Some(json!({"user_id": ada, "roles": ["billing_service"]})),
            )
            .await;
        assert_eq!(problem(&answer), (400, Some("bad_request")));
        assert!(
            answer.1["detail"]
                .as_str()
                .unwrap()
                .contains("billing_service"),
            "{}",
            answer.1
        );
        let (status, member) = api
            .call(
                M::POST,
                &members,
                Some(json!({"user_id": ada, "roles": ["auditor", "member"]})),
            )
            .await;
        assert_eq!(status, 201, "{member}");
        assert_eq!(member["roles"], json!(["auditor", "member"]));

        // Held: neither role goes until taken away.
        for key in ["billing_service", "auditor"] {
            let answer = api.call(M::DELETE, &role_path(key), None).await;
            assert_eq!(problem(&answer), (409, Some("conflict")), "{key}");
        }
        let (status, _) = api.call(M::PUT, &path, Some(json!({"roles": []}))).await;
        assert_eq!(status, 200);
        let (status, _) = api
            .call(
                M::PATCH,
                &format!("{members}/{ada}"),
                Some(json!({"roles": ["member"]})),
            )
            .await;
        assert_eq!(status, 200);
        for key in ["billing_service", "auditor"] {
            let (status, body) = api.call(M::DELETE, &role_path(key), None).await;
            assert_eq!(status, 204, "{key}: {body}");
        }
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn another_tenants_roles_and_applications_are_not_found() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let (acme, globex) = (world.acme(), world.globex());
        let (status, _) = globex
            .call(
                M::POST,
                BASE,
                Some(json!({"key": "globex-role", "kind": "tenant"})),
            )
            .await;
        assert_eq!(status, 201);
        let app = application(&acme).await;
        let (status, _) = acme
            .call(M::PUT, &app_roles(&app), Some(json!({"roles": []})))
            .await;
        assert_eq!(status, 200);

        let path = role_path("globex-role");
        for (method, body) in [
            (M::GET, None),
            (M::PATCH, Some(json!({"description": "mine now"}))),
            (M::DELETE, None),
        ] {
            let answer = acme.call(method.clone(), &path, body).await;
            assert_eq!(
                problem(&answer),
                (404, Some("not_found")),
                "{backend:?}: {method}"
            );
        }
        assert_eq!(
            keys(&acme).await.len(),
            4,
            "acme lists none of globex's roles"
        );
        let answer = acme
            .call(
                M::POST,
                BASE,
                Some(json!({"key": "globex-role", "kind": "tenant"})),
            )
            .await;
        assert_eq!(
            answer.0, 201,
            "the same key is free in another tenant: {}",
            answer.1
        );
        let (status, _) = acme.call(M::DELETE, &path, None).await;
        assert_eq!(status, 204);
        let (status, theirs) = globex.call(M::GET, &path, None).await;
        assert_eq!((status, theirs["key"].as_str()), (200, Some("globex-role")));

        for target in [
            app_roles(&app),
            app_roles("app_01jd0000000000000000000000"),
            app_roles("not-an-id"),
        ] {
            let answer = globex.call(M::GET, &target, None).await;
            assert_eq!(problem(&answer), (404, Some("not_found")), "GET {target}");
            let answer = globex
                .call(M::PUT, &target, Some(json!({"roles": []})))
                .await;
            assert_eq!(problem(&answer), (404, Some("not_found")), "PUT {target}");
        }
        for key in ["nobody", "Not%20A%20Key", &"k".repeat(200)] {
            let answer = acme.call(M::GET, &role_path(key), None).await;
            assert_eq!(problem(&answer), (404, Some("not_found")), "{key}");
        }
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn hostile_role_bodies_are_refused_and_write_nothing() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let api = world.acme();
        resource(&world, &world.acme.id, BILLING, &["invoices:read"]).await;
        let (status, _) = api
            .call(
                M::POST,
                BASE,
                Some(json!({"key": "kept", "kind": "tenant"})),
            )
            .await;
        assert_eq!(status, 201);
        let app = application(&api).await;
        let (_, before) = api.call(M::GET, BASE, None).await;

        let many: Vec<Value> = (0..101)
            .map(|_| json!({"resource": BILLING, "name": "invoices:read"}))
            .collect();
        let creates = [
            json!({"key": "a", "kind": "tenant", "built_in": true}),
            json!({"key": "a"}),
            json!({"kind": "tenant"}),
            json!({"key": 5, "kind": "tenant"}),
            json!({"key": "a", "kind": "global"}),
            json!({"key": "A", "kind": "tenant"}),
            json!({"key": "a".repeat(65), "kind": "tenant"}),
            json!({"key": "a", "kind": "tenant", "description": "x".repeat(300)}),
            json!({"key": "a", "kind": "tenant", "description": "\u{0}"}),
            json!({"key": "a", "kind": "tenant", "permissions": "invoices:read"}),
            json!({"key": "a", "kind": "tenant", "permissions": [{"resource": BILLING}]}),
            json!({"key": "a", "kind": "tenant", "permissions": [{"resource": BILLING, "name": "x"}]}),
            json!({"key": "a", "kind": "tenant", "permissions": [{"resource": BILLING, "name": "invoices:read", "x": 1}]}),
            json!({"key": "a", "kind": "tenant", "permissions": many}),
            json!({"key": "a", "kind": "tenant", "permissions": [{"resource": "x".repeat(5000), "name": "a:b"}]}),
            json!([]),
            json!(null),
        ];
        for body in creates {
            let answer = api.call(M::POST, BASE, Some(body.clone())).await;
            assert_eq!(
                problem(&answer),
                (400, Some("bad_request")),
                "{backend:?}: {body}: {}",
                answer.1
            );
            assert!(
                answer.1["detail"].as_str().unwrap().len() < 600,
                "the echo is cut"
            );
        }
        let patches = [
            json!({"kind": "organization"}),
            json!({"key": "renamed"}),
            json!({"description": null}),
            json!({"permissions": null}),
            json!({"permissions": [{"resource": BILLING, "name": "invoices:void"}]}),
            json!({"description": 5}),
            json!([]),
        ];
        for body in patches {
            let answer = api
                .call(M::PATCH, &role_path("kept"), Some(body.clone()))
                .await;
            assert_eq!(
                problem(&answer),
                (400, Some("bad_request")),
                "{body}: {}",
                answer.1
            );
        }
        let puts = [
            json!({}),
            json!({"roles": "kept"}),
            json!({"roles": [null]}),
            json!({"roles": ["kept"], "extra": 1}),
            json!({"roles": vec!["kept"; 17]}),
            json!({"roles": ["x".repeat(5000)]}),
            json!([["kept"]]),
        ];
        for body in puts {
            let answer = api.call(M::PUT, &app_roles(&app), Some(body.clone())).await;
            assert_eq!(
                problem(&answer),
                (400, Some("bad_request")),
                "{body}: {}",
                answer.1
            );
        }
        for (method, path) in [
            (M::POST, BASE.to_owned()),
            (M::PATCH, role_path("kept")),
            (M::PUT, app_roles(&app)),
        ] {
            for raw in ["{\"key\": ", "not json", ""] {
                let response = api
                    .request(method.clone(), &path)
                    .header("content-type", "application/json")
                    .body(raw)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(response.status(), 400, "{method} {path} {raw:?}");
                assert_eq!(
                    response.headers()["content-type"],
                    "application/problem+json"
                );
            }
            let huge = json!({"key": "a", "kind": "tenant", "description": "x".repeat(20_000)});
            let response = api
                .request(method.clone(), &path)
                .json(&huge)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 413, "{method} {path}");
        }
        let (_, after) = api.call(M::GET, BASE, None).await;
        assert_eq!(after, before, "nothing was written");
        assert_eq!(
            api.call(M::GET, &app_roles(&app), None).await,
            (200, json!({"roles": []}))
        );
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn roles_need_the_policies_scopes_and_application_roles_the_applications_scopes() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let full = world.acme();
        let (status, _) = full
            .call(
                M::POST,
                BASE,
                Some(json!({"key": "kept", "kind": "tenant"})),
            )
            .await;
        assert_eq!(status, 201);
        let app = application(&full).await;
        let refused = (403, Some("insufficient_scope"));

        let reader = world.acme_with("policies:read").await;
        for path in [BASE.to_owned(), role_path("kept"), role_path("owner")] {
            let (status, body) = reader.call(M::GET, &path, None).await;
            assert_eq!(status, 200, "{backend:?}: GET {path}: {body}");
        }
        let writes: Vec<(M, String, Option<Value>)> = vec![
            (
                M::POST,
                BASE.to_owned(),
                Some(json!({"key": "b", "kind": "tenant"})),
            ),
            (
                M::PATCH,
                role_path("kept"),
                Some(json!({"description": "x"})),
            ),
            (M::DELETE, role_path("kept"), None),
        ];
        for (method, path, body) in &writes {
            let answer = reader.call(method.clone(), path, body.clone()).await;
            assert_eq!(problem(&answer), refused, "{method} {path}");
        }
        for (method, body) in [(M::GET, None), (M::PUT, Some(json!({"roles": ["kept"]})))] {
            let answer = reader.call(method.clone(), &app_roles(&app), body).await;
            assert_eq!(problem(&answer), refused, "{method} application roles");
        }

        let apps = world.acme_with("applications:read").await;
        assert_eq!(problem(&apps.call(M::GET, BASE, None).await), refused);
        assert_eq!(apps.call(M::GET, &app_roles(&app), None).await.0, 200);
        let answer = apps
            .call(M::PUT, &app_roles(&app), Some(json!({"roles": ["kept"]})))
            .await;
        assert_eq!(problem(&answer), refused);
        let app_writer = world.acme_with("applications:write").await;
        let answer = app_writer
            .call(M::PUT, &app_roles(&app), Some(json!({"roles": ["kept"]})))
            .await;
        assert_eq!(answer, (200, json!({"roles": ["kept"]})));

        let users = world.acme_with("users:write").await;
        assert_eq!(problem(&users.call(M::GET, BASE, None).await), refused);

        let writer = world.acme_with("policies:write").await;
        let (status, created) = writer
            .call(M::POST, BASE, Some(json!({"key": "b", "kind": "tenant"})))
            .await;
        assert_eq!(status, 201, "policies:write creates: {created}");
        assert_eq!(problem(&writer.call(M::GET, BASE, None).await), refused);

        let anonymous = world
            .app
            .request(M::GET, BASE)
            .header("host", &world.acme.host)
            .send()
            .await
            .unwrap();
        assert_eq!(anonymous.status(), 401);
        let (_, kept) = full.call(M::GET, &role_path("kept"), None).await;
        assert_eq!(
            kept["description"], "",
            "nothing the reader tried took effect"
        );
        world.app.shutdown().await;
    }
}
