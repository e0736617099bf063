//! Tenant roles of people end to end, on SQLite and PostgreSQL, through real HTTP: the tenant's
//! management application reads and replaces a person's roles (`tenant_admin`), each change
//! audited once; hostile bodies are refused naming `roles` and write nothing; another tenant's
//! token, an unknown or a malformed id find nothing; a removed person cannot be given roles; and
//! each route needs its `users:*` scope.

use crate::tenant_users::{Api, TwoTenants as World};
use reqwest::Method as M;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

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

fn roles_path(user: &str) -> String {
    format!("/api/v1/tenant-users/{user}/roles")
}

/// The roles `api` reads for `user` (asserting a 200).
async fn roles(api: &Api<'_>, user: &str) -> Value {
    let (status, body) = api.call(M::GET, &roles_path(user), None).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// The `tenant_user.roles_changed` audit entries about `user`, newest first.
async fn role_audit(api: &Api<'_>, user: &str) -> Vec<Value> {
    let (status, audit) = api
        .call(
            M::GET,
            &format!("/api/v1/audit-logs?target={user}&action=tenant_user.roles_changed&limit=200"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{audit}");
    audit["items"].as_array().unwrap().clone()
}

#[tokio::test]
async fn tenant_roles_are_set_and_read_and_each_change_audited_once() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let api = world.acme();
        let ada = person(&api, "ada@example.com").await;
        assert_eq!(roles(&api, &ada).await, json!({"roles": []}));

        let (status, set) = api
            .call(
                M::PUT,
                &roles_path(&ada),
                Some(json!({"roles": ["tenant_admin", "tenant_admin"]})),
            )
            .await;
        assert_eq!(status, 200, "{backend:?}: {set}");
        assert_eq!(set, json!({"roles": ["tenant_admin"]}), "repeats collapse");
        assert_eq!(roles(&api, &ada).await, set);

        // The same roles again: 200, nothing written.
        let (status, again) = api
            .call(
                M::PUT,
                &roles_path(&ada),
                Some(json!({"roles": ["tenant_admin"]})),
            )
            .await;
        assert_eq!((status, &again), (200, &set));
        let audit = role_audit(&api, &ada).await;
        assert_eq!(audit.len(), 1, "{audit:?}");
        let actor = format!("client:{}", world.acme.client_id);
        assert_eq!(audit[0]["actor"], actor.as_str());
        assert_eq!(audit[0]["target"], ada.as_str());

        // Taken away.
        let (status, cleared) = api
            .call(M::PUT, &roles_path(&ada), Some(json!({"roles": []})))
            .await;
        assert_eq!((status, &cleared), (200, &json!({"roles": []})));
        assert_eq!(roles(&api, &ada).await, json!({"roles": []}));
        assert_eq!(role_audit(&api, &ada).await.len(), 2);

        // A removed person holds none and cannot be given any.
        let (status, _) = api
            .call(
                M::PUT,
                &roles_path(&ada),
                Some(json!({"roles": ["tenant_admin"]})),
            )
            .await;
        assert_eq!(status, 200);
        let (status, _) = api
            .call(M::DELETE, &format!("/api/v1/tenant-users/{ada}"), None)
            .await;
        assert_eq!(status, 204);
        assert_eq!(roles(&api, &ada).await, json!({"roles": []}));
        let (status, problem) = api
            .call(
                M::PUT,
                &roles_path(&ada),
                Some(json!({"roles": ["tenant_admin"]})),
            )
            .await;
        assert_eq!((status, problem["error"].as_str()), (409, Some("conflict")));
        assert_eq!(roles(&api, &ada).await, json!({"roles": []}));
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn hostile_role_bodies_are_refused_naming_roles_and_write_nothing() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let api = world.acme();
        let ada = person(&api, "ada@example.com").await;
        let path = roles_path(&ada);
        let (status, _) = api
            .call(M::PUT, &path, Some(json!({"roles": ["tenant_admin"]})))
            .await;
        assert_eq!(status, 200);
        let audit_before = role_audit(&api, &ada).await.len();

        let bodies = [
            json!({"roles": [], "extra": true}),
            json!({"roles": ["tenant_admin"], "user_id": ada}),
            json!({"role": ["tenant_admin"]}),
            json!({}),
            json!({"roles": "tenant_admin"}),
            json!({"roles": null}),
            json!({"roles": {"tenant_admin": true}}),
            json!({"roles": [1]}),
            json!({"roles": [null]}),
            json!({"roles": [["tenant_admin"]]}),
            json!({"roles": ["owner"]}),
            json!({"roles": ["admin"]}),
            json!({"roles": ["member"]}),
            json!({"roles": ["Tenant_Admin"]}),
            json!({"roles": ["tenant_admin "]}),
            json!({"roles": [""]}),
            json!({"roles": ["x".repeat(5000)]}),
            json!({"roles": vec!["tenant_admin"; 17]}),
            json!(["tenant_admin"]),
            json!("tenant_admin"),
            json!(null),
        ];
        for body in bodies {
            let (status, problem) = api.call(M::PUT, &path, Some(body.clone())).await;
            assert_eq!(status, 400, "{backend:?}: {body}: {problem}");
            assert_eq!(problem["error"], "bad_request");
            let detail = problem["detail"].as_str().unwrap();
            assert!(detail.contains("roles"), "{body}: {detail}");
            assert!(detail.len() < 400, "{body}: the echo is cut: {detail}");
        }
        let (_, problem) = api
            .call(M::PUT, &path, Some(json!({"roles": ["owner"]})))
            .await;
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("tenant roles are tenant_admin"),
            "{problem}"
        );
        for raw in ["{\"roles\": ", "not json", ""] {
            let response = api
                .request(M::PUT, &path)
                .header("content-type", "application/json")
                .body(raw)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 400, "{raw:?}");
            assert_eq!(
                response.headers()["content-type"],
                "application/problem+json"
            );
        }

        // Nothing was written.
        assert_eq!(roles(&api, &ada).await, json!({"roles": ["tenant_admin"]}));
        assert_eq!(role_audit(&api, &ada).await.len(), audit_before);
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn another_tenant_and_unknown_or_malformed_ids_find_no_roles() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let acme = world.acme();
        let globex = world.globex();
        let ada = person(&acme, "ada@example.com").await;
        let gus = person(&globex, "gus@example.com").await;
        let body = json!({"roles": ["tenant_admin"]});

        for (api, id) in [
            (&globex, ada.as_str()),
            (&acme, gus.as_str()),
            (&acme, "usr_01jd0000000000000000000000"),
            (&acme, "nope"),
            (&acme, "usr_"),
            (&acme, "USR_01JD0000000000000000000000"),
            (&acme, "app_01jd0000000000000000000000"),
        ] {
            let (status, problem) = api.call(M::GET, &roles_path(id), None).await;
            assert_eq!(
                (status, problem["error"].as_str()),
                (404, Some("not_found")),
                "{backend:?}: GET {id}"
            );
            let (status, problem) = api.call(M::PUT, &roles_path(id), Some(body.clone())).await;
            assert_eq!(
                (status, problem["error"].as_str()),
                (404, Some("not_found")),
                "{backend:?}: PUT {id}"
            );
        }

        // Nothing was written, on either side.
        assert_eq!(roles(&acme, &ada).await, json!({"roles": []}));
        assert_eq!(roles(&globex, &gus).await, json!({"roles": []}));
        assert!(role_audit(&acme, &ada).await.is_empty());
        assert!(role_audit(&globex, &gus).await.is_empty());
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn tenant_roles_need_the_users_scopes() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let full = world.acme();
        let ada = person(&full, "ada@example.com").await;
        let path = roles_path(&ada);
        let grant = json!({"roles": ["tenant_admin"]});

        let reader = world.acme_with("users:read").await;
        let (status, body) = reader.call(M::GET, &path, None).await;
        assert_eq!((status, body), (200, json!({"roles": []})), "{backend:?}");
        let (status, problem) = reader.call(M::PUT, &path, Some(grant.clone())).await;
        assert_eq!(
            (status, problem["error"].as_str()),
            (403, Some("insufficient_scope")),
            "a read-only token cannot grant roles"
        );

        let organizations = world.acme_with("organizations:write").await;
        let (status, _) = organizations.call(M::PUT, &path, Some(grant.clone())).await;
        assert_eq!(status, 403);
        let (status, _) = organizations.call(M::GET, &path, None).await;
        assert_eq!(status, 403);

        let anonymous = world
            .app
            .request(M::PUT, &path)
            .header("host", &world.acme.host)
            .json(&grant)
            .send()
            .await
            .unwrap();
        assert_eq!(anonymous.status(), 401);
        assert!(anonymous.headers().contains_key("www-authenticate"));

        // Nothing the refused callers tried took effect.
        assert_eq!(roles(&full, &ada).await, json!({"roles": []}));
        assert!(role_audit(&full, &ada).await.is_empty());

        let writer = world.acme_with("users:write").await;
        let (status, set) = writer.call(M::PUT, &path, Some(grant.clone())).await;
        assert_eq!((status, set), (200, grant.clone()), "users:write grants");
        let (status, _) = writer.call(M::GET, &path, None).await;
        assert_eq!(status, 403, "write implies nothing about read");
        assert_eq!(roles(&full, &ada).await, grant);
        world.app.shutdown().await;
    }
}
