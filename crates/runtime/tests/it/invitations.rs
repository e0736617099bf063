//! Invitations through the management API, on SQLite and PostgreSQL, through real HTTP: create
//! (201, `Location`, idempotent replay), list with filters and pages, read (`ETag`), resend and
//! revoke (`If-Match`, 409 once final); every refusal a 400 naming the field; another tenant's
//! invitation or a malformed id is 404; and each route needs its `users:*` scope. Accepting is
//! the hosted page's (`hosted::invitations`).

use crate::tenant_users::{Api, TwoTenants as World};
use reqwest::Method as M;
use reqwest::header::{ETAG, IF_MATCH, LOCATION};
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

const BASE: &str = "/api/v1/invitations";

async fn organization(api: &Api<'_>, slug: &str) -> String {
    let (status, org) = api
        .call(
            M::POST,
            "/api/v1/organizations",
            Some(json!({"name": slug, "slug": slug})),
        )
        .await;
    assert_eq!(status, 201, "{org}");
    org["id"].as_str().unwrap().to_owned()
}

fn ids(page: &Value) -> Vec<&str> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn invitations_are_created_listed_read_resent_and_revoked() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let api = world.acme();
        let org = organization(&api, "globex").await;

        let created = api
            .request(M::POST, BASE)
            .header("idempotency-key", "invite-ada")
            .json(&json!({"email": "Ada@Example.com", "organization_id": org,
                          "roles": ["admin", "member"], "expires_in_secs": 3600}))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201, "{backend:?}");
        let location = created.headers()[LOCATION].to_str().unwrap().to_owned();
        let ada: Value = created.json().await.unwrap();
        let id = ada["id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("inv_"), "{ada}");
        assert_eq!(location, format!("{BASE}/{id}"));
        assert_eq!(ada["email"], "ada@example.com");
        assert_eq!(ada["roles"], json!(["admin", "member"]));
        assert_eq!(ada["status"], "pending");
        assert_eq!(ada["accepted_by"], Value::Null);
        assert!(
            ada["invited_by"]
                .as_str()
                .unwrap()
                .starts_with("client:app_")
        );
        assert!(ada.get("token").is_none() && ada.get("token_hash").is_none());
        // The same key and body replay the answer; nothing is invited twice.
        let replay = api
            .request(M::POST, BASE)
            .header("idempotency-key", "invite-ada")
            .json(&json!({"email": "Ada@Example.com", "organization_id": org,
                          "roles": ["admin", "member"], "expires_in_secs": 3600}))
            .send()
            .await
            .unwrap();
        assert_eq!(replay.status(), 201);
        assert_eq!(replay.headers()[LOCATION], location.as_str());
        assert_eq!(replay.json::<Value>().await.unwrap()["id"], id.as_str());
        // Without a key, the same invitation again is a conflict.
        let (status, problem) = api
            .call(
                M::POST,
                BASE,
                Some(json!({"email": "ada@example.com", "organization_id": org})),
            )
            .await;
        assert_eq!(
            (status, problem["error"].as_str()),
            (409, Some("conflict")),
            "{problem}"
        );

        let (status, bob) = api
            .call(M::POST, BASE, Some(json!({"email": "bob@example.com"})))
            .await;
        assert_eq!(status, 201, "{bob}");
        assert_eq!(bob["organization_id"], Value::Null);
        assert_eq!(bob["roles"], json!([]));
        let bob_id = bob["id"].as_str().unwrap().to_owned();

        let (_, page) = api.call(M::GET, BASE, None).await;
        assert_eq!(ids(&page), [id.as_str(), bob_id.as_str()]);
        assert_eq!(page["next_cursor"], Value::Null);
        let (_, page) = api
            .call(M::GET, &format!("{BASE}?limit=1&order=desc"), None)
            .await;
        assert_eq!(ids(&page), [bob_id.as_str()]);
        let cursor = page["next_cursor"].as_str().unwrap().to_owned();
        let (_, page) = api
            .call(
                M::GET,
                &format!("{BASE}?limit=1&order=desc&after={cursor}"),
                None,
            )
            .await;
        assert_eq!(ids(&page), [id.as_str()]);
        let (_, page) = api
            .call(
                M::GET,
                &format!("{BASE}?organization_id={org}&status=pending"),
                None,
            )
            .await;
        assert_eq!(ids(&page), [id.as_str()]);
        for bad in [
            "status=stale",
            "organization_id=nope",
            "after=usr_1",
            "colour=red",
        ] {
            let (status, problem) = api.call(M::GET, &format!("{BASE}?{bad}"), None).await;
            assert_eq!(status, 400, "{bad}: {problem}");
        }

        // Read with its ETag; a resend needs the current one.
        let path = format!("{BASE}/{id}");
        let read = api.request(M::GET, &path).send().await.unwrap();
        assert_eq!(read.status(), 200);
        let etag = read.headers()[ETAG].to_str().unwrap().to_owned();
        let resent = api
            .request(M::POST, &format!("{path}/resend"))
            .header(IF_MATCH, &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(resent.status(), 200);
        let new_etag = resent.headers()[ETAG].to_str().unwrap().to_owned();
        assert_ne!(new_etag, etag);
        let stale = api
            .request(M::DELETE, &path)
            .header(IF_MATCH, &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(stale.status(), 412);
        let revoked = api
            .request(M::DELETE, &path)
            .header(IF_MATCH, &new_etag)
            .send()
            .await
            .unwrap();
        assert_eq!(revoked.status(), 204);
        let (_, read) = api.call(M::GET, &path, None).await;
        assert_eq!(read["status"], "revoked");
        for (method, target) in [
            (M::DELETE, path.clone()),
            (M::POST, format!("{path}/resend")),
        ] {
            let (status, problem) = api.call(method.clone(), &target, None).await;
            assert_eq!(status, 409, "{method} {target}: {problem}");
        }
        let (_, page) = api
            .call(M::GET, &format!("{BASE}?status=revoked"), None)
            .await;
        assert_eq!(ids(&page), [id.as_str()]);
        // Revoked, the address may be invited again.
        let (status, _) = api
            .call(
                M::POST,
                BASE,
                Some(json!({"email": "ada@example.com", "organization_id": org})),
            )
            .await;
        assert_eq!(status, 201);

        // Another tenant finds none of it; a malformed id is not found either.
        let globex = world.globex();
        for (method, target) in [
            (M::GET, path.clone()),
            (M::DELETE, format!("{BASE}/{bob_id}")),
            (M::POST, format!("{BASE}/{bob_id}/resend")),
            (M::GET, format!("{BASE}/inv_nope")),
            (M::GET, format!("{BASE}/{org}")),
        ] {
            let (status, problem) = globex.call(method.clone(), &target, None).await;
            assert_eq!(status, 404, "{method} {target}: {problem}");
        }
        let (_, page) = globex.call(M::GET, BASE, None).await;
        assert_eq!(page["items"], json!([]));
        let (status, problem) = globex
            .call(
                M::POST,
                BASE,
                Some(json!({"email": "x@example.com", "organization_id": org})),
            )
            .await;
        assert_eq!(status, 400, "another tenant's organization: {problem}");
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .starts_with("organization_id")
        );
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn refused_bodies_name_the_field_and_write_nothing() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let api = world.acme();
        let org = organization(&api, "globex").await;
        let suspended = organization(&api, "sleepy").await;
        let (status, _) = api
            .call(
                M::POST,
                &format!("/api/v1/organizations/{suspended}/suspend"),
                None,
            )
            .await;
        assert_eq!(status, 200);
        let cases = [
            (json!({"email": "nope"}), "email"),
            (json!({"email": 5}), "email"),
            (json!({}), "email"),
            (
                json!({"email": "a@example.com", "organization_id": "org_x"}),
                "organization_id",
            ),
            (
                json!({"email": "a@example.com", "organization_id": suspended}),
                "organization_id",
            ),
            (
                json!({"email": "a@example.com", "organization_id": org, "roles": ["tenant_admin"]}),
                "roles",
            ),
            (
                json!({"email": "a@example.com", "organization_id": org, "roles": ["ghost"]}),
                "roles",
            ),
            (
                json!({"email": "a@example.com", "organization_id": org, "roles": []}),
                "roles",
            ),
            (
                json!({"email": "a@example.com", "roles": ["owner"]}),
                "roles",
            ),
            (json!({"email": "a@example.com", "roles": "owner"}), "roles"),
            (
                json!({"email": "a@example.com", "expires_in_secs": 60}),
                "expires_in_secs",
            ),
            (
                json!({"email": "a@example.com", "expires_in_secs": 2_592_001}),
                "expires_in_secs",
            ),
            (
                json!({"email": "a@example.com", "expires_in_secs": -1}),
                "expires_in_secs",
            ),
            (
                json!({"email": "a@example.com", "token": "join_x"}),
                "token",
            ),
        ];
        for (body, field) in cases {
            let (status, problem) = api.call(M::POST, BASE, Some(body.clone())).await;
            assert_eq!(status, 400, "{backend:?}: {body}: {problem}");
            let detail = problem["detail"].as_str().unwrap();
            assert!(detail.contains(field), "{body}: {detail}");
        }
        for raw in ["[]", "\"ada@example.com\"", "null", "{"] {
            let response = api
                .request(M::POST, BASE)
                .header("content-type", "application/json")
                .body(raw)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 400, "{raw}");
        }
        let (_, page) = api.call(M::GET, BASE, None).await;
        assert_eq!(page["items"], json!([]), "nothing written");
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn invitations_need_a_token_with_the_users_scopes() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let full = world.acme();
        let (_, created) = full
            .call(M::POST, BASE, Some(json!({"email": "ada@example.com"})))
            .await;
        let path = format!("{BASE}/{}", created["id"].as_str().unwrap());
        let reader = world.acme_with("users:read").await;
        for target in [BASE.to_owned(), path.clone()] {
            let (status, body) = reader.call(M::GET, &target, None).await;
            assert_eq!(status, 200, "{backend:?}: GET {target}: {body}");
        }
        for (method, target, body) in [
            (
                M::POST,
                BASE.to_owned(),
                Some(json!({"email": "bob@example.com"})),
            ),
            (M::POST, format!("{path}/resend"), None),
            (M::DELETE, path.clone(), None),
        ] {
            let (status, problem) = reader.call(method.clone(), &target, body).await;
            assert_eq!(
                (status, problem["error"].as_str()),
                (403, Some("insufficient_scope")),
                "{method} {target}"
            );
        }
        let organizations = world.acme_with("organizations:write").await;
        let (status, _) = organizations
            .call(M::POST, BASE, Some(json!({"email": "bob@example.com"})))
            .await;
        assert_eq!(status, 403, "organizations:write does not invite");
        let writer = world.acme_with("users:write").await;
        let (status, _) = writer
            .call(M::POST, BASE, Some(json!({"email": "bob@example.com"})))
            .await;
        assert_eq!(status, 201);
        let (status, _) = writer.call(M::GET, BASE, None).await;
        assert_eq!(status, 403, "write implies nothing about read");
        world.app.shutdown().await;
    }
}
