//! Organizations end to end, on SQLite and PostgreSQL, through real HTTP: a tenant's management
//! application creates, lists, reads, changes, suspends, reactivates and deletes organizations
//! and manages their members (with `Location`, `ETag`/`If-Match`, pages and idempotent
//! creation); another tenant's token finds none of it (404 on every path, 400 for its people);
//! hostile bodies are refused naming the field and write nothing; and each route needs its
//! `organizations:*` scope.

use crate::tenant_users::{Api, TwoTenants as World};
use reqwest::Method as M;
use reqwest::header::{ETAG, IF_MATCH, LOCATION};
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

const BASE: &str = "/api/v1/organizations";

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

/// The ids of every organization of `api`'s tenant.
async fn org_ids(api: &Api<'_>) -> Vec<String> {
    let (status, page) = api.call(M::GET, &format!("{BASE}?limit=200"), None).await;
    assert_eq!(status, 200, "{page}");
    ids(&page, "id")
}

fn ids(page: &Value, key: &str) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o[key].as_str().unwrap().to_owned())
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
async fn organizations_and_their_members_live_a_whole_lifecycle() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let api = world.acme();
        let ada = person(&api, "ada@example.com").await;
        let bob = person(&api, "bob@example.com").await;

        // Create: 201, Location, the view.
        let created = api
            .request(M::POST, BASE)
            .json(&json!({"name": "Acme Europe", "slug": "acme-eu",
                          "metadata": {"plan": "enterprise", "regions": ["eu-west"]}}))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201, "{backend:?}");
        let location = created.headers()[LOCATION].to_str().unwrap().to_owned();
        let eu: Value = created.json().await.unwrap();
        let id = eu["id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("org_"), "{eu}");
        assert_eq!(location, format!("{BASE}/{id}"));
        assert_eq!(
            sorted_keys(&eu),
            [
                "created_at",
                "id",
                "metadata",
                "name",
                "slug",
                "status",
                "updated_at"
            ]
        );
        assert_eq!(
            (
                eu["slug"].as_str(),
                eu["name"].as_str(),
                eu["status"].as_str()
            ),
            (Some("acme-eu"), Some("Acme Europe"), Some("active"))
        );
        assert_eq!(eu["metadata"]["regions"], json!(["eu-west"]));
        let (status, taken) = api
            .call(
                M::POST,
                BASE,
                Some(json!({"name": "Again", "slug": "acme-eu"})),
            )
            .await;
        assert_eq!((status, taken["error"].as_str()), (409, Some("conflict")));

        // Idempotent create: the replay is the same organization, Location included.
        let retry = || {
            api.request(M::POST, BASE)
                .header("idempotency-key", "create-acme-us-1")
                .json(&json!({"name": "Acme US", "slug": "acme-us"}))
        };
        let first = retry().send().await.unwrap();
        assert_eq!(first.status(), 201);
        let first_location = first.headers()[LOCATION].to_str().unwrap().to_owned();
        let us: Value = first.json().await.unwrap();
        assert_eq!(us["metadata"], json!({}));
        let again = retry().send().await.unwrap();
        assert_eq!(again.status(), 201);
        assert_eq!(again.headers()["idempotent-replayed"], "true");
        assert_eq!(again.headers()[LOCATION], first_location.as_str());
        assert_eq!(again.json::<Value>().await.unwrap(), us);
        assert_eq!(org_ids(&api).await.len(), 2, "one organization, not two");

        // List: pages, both orders.
        let (_, page) = api.call(M::GET, &format!("{BASE}?limit=1"), None).await;
        assert_eq!(ids(&page, "id"), [id.as_str()]);
        let cursor = page["next_cursor"].as_str().unwrap().to_owned();
        let (_, rest) = api
            .call(M::GET, &format!("{BASE}?limit=1&after={cursor}"), None)
            .await;
        assert_eq!(ids(&rest, "id"), [us["id"].as_str().unwrap()]);
        assert!(rest["next_cursor"].is_null());
        let (_, newest) = api.call(M::GET, &format!("{BASE}?order=desc"), None).await;
        assert_eq!(ids(&newest, "id"), [us["id"].as_str().unwrap(), &id]);
        for bad in ["?after=usr_01jd0000000000000000000000", "?colour=red"] {
            let (status, problem) = api.call(M::GET, &format!("{BASE}{bad}"), None).await;
            assert_eq!(status, 400, "{bad}: {problem}");
        }

        // Read with ETag; change with If-Match; a stale tag is 412 and changes nothing.
        let (status, tag0, read) = send(&api, M::GET, &location, None, None).await;
        assert_eq!((status, &read), (200, &eu));
        let tag0 = tag0.unwrap();
        let (status, tag1, patched) = send(
            &api,
            M::PATCH,
            &location,
            Some(&tag0),
            Some(json!({"name": "Acme Europe GmbH", "metadata": {"plan": "team"}})),
        )
        .await;
        assert_eq!(status, 200, "{patched}");
        let tag1 = tag1.unwrap();
        assert_ne!(tag1, tag0);
        assert_eq!(patched["name"], "Acme Europe GmbH");
        assert_eq!(patched["slug"], "acme-eu");
        assert_eq!(
            patched["metadata"],
            json!({"plan": "team"}),
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
        let (_, _, still) = send(&api, M::GET, &location, None, None).await;
        assert_eq!(still, patched);

        // Suspend and reactivate, each once.
        let (status, tag2, suspended) = send(
            &api,
            M::POST,
            &format!("{location}/suspend"),
            Some(&tag1),
            None,
        )
        .await;
        assert_eq!(
            (status, suspended["status"].as_str()),
            (200, Some("suspended"))
        );
        let (status, _, _) = send(&api, M::POST, &format!("{location}/suspend"), None, None).await;
        assert_eq!(status, 409);
        let (status, _, _) = send(
            &api,
            M::POST,
            &format!("{location}/reactivate"),
            Some(&tag1),
            None,
        )
        .await;
        assert_eq!(status, 412, "the suspension made tag1 stale");
        let (status, _, active) = send(
            &api,
            M::POST,
            &format!("{location}/reactivate"),
            tag2.as_deref(),
            None,
        )
        .await;
        assert_eq!((status, active["status"].as_str()), (200, Some("active")));
        let (status, _, _) =
            send(&api, M::POST, &format!("{location}/reactivate"), None, None).await;
        assert_eq!(status, 409);

        // Members: added (default role, given roles), listed, read, re-roled, removed.
        let members = format!("{location}/members");
        let added = api
            .request(M::POST, &members)
            .json(&json!({"user_id": ada}))
            .send()
            .await
            .unwrap();
        assert_eq!(added.status(), 201);
        assert_eq!(
            added.headers()[LOCATION].to_str().unwrap(),
            format!("{members}/{ada}")
        );
        let m_ada: Value = added.json().await.unwrap();
        assert_eq!(
            sorted_keys(&m_ada),
            [
                "created_at",
                "organization_id",
                "roles",
                "updated_at",
                "user_id"
            ]
        );
        assert_eq!(m_ada["roles"], json!(["member"]));
        assert_eq!(m_ada["organization_id"], id.as_str());
        let (status, m_bob) = api
            .call(
                M::POST,
                &members,
                Some(json!({"user_id": bob, "roles": ["owner", "admin"]})),
            )
            .await;
        assert_eq!(status, 201, "{m_bob}");
        assert_eq!(m_bob["roles"], json!(["admin", "owner"]));
        let (status, problem) = api
            .call(M::POST, &members, Some(json!({"user_id": ada})))
            .await;
        assert_eq!((status, problem["error"].as_str()), (409, Some("conflict")));

        let mut by_user = [ada.clone(), bob.clone()];
        by_user.sort();
        let (_, page) = api.call(M::GET, &format!("{members}?limit=1"), None).await;
        assert_eq!(ids(&page, "user_id"), by_user[..1]);
        let cursor = page["next_cursor"].as_str().unwrap().to_owned();
        let (_, rest) = api
            .call(M::GET, &format!("{members}?after={cursor}"), None)
            .await;
        assert_eq!(ids(&rest, "user_id"), by_user[1..]);
        assert!(rest["next_cursor"].is_null());
        let (status, read) = api.call(M::GET, &format!("{members}/{ada}"), None).await;
        assert_eq!((status, &read), (200, &m_ada));
        let (status, changed) = api
            .call(
                M::PATCH,
                &format!("{members}/{ada}"),
                Some(json!({"roles": ["admin"]})),
            )
            .await;
        assert_eq!(status, 200, "{changed}");
        assert_eq!(changed["roles"], json!(["admin"]));

        // A person's organizations.
        let (status, mine) = api
            .call(
                M::GET,
                &format!("/api/v1/tenant-users/{ada}/organizations"),
                None,
            )
            .await;
        assert_eq!(status, 200, "{mine}");
        assert_eq!(mine["items"].as_array().unwrap().len(), 1);
        assert_eq!(mine["items"][0]["roles"], json!(["admin"]));
        assert_eq!(
            mine["items"][0]["organization"],
            json!({"id": id, "slug": "acme-eu", "name": "Acme Europe GmbH", "status": "active"})
        );

        let (status, _) = api.call(M::DELETE, &format!("{members}/{bob}"), None).await;
        assert_eq!(status, 204);
        let (status, _) = api.call(M::DELETE, &format!("{members}/{bob}"), None).await;
        assert_eq!(status, 404);
        let (_, page) = api.call(M::GET, &members, None).await;
        assert_eq!(ids(&page, "user_id"), [ada.as_str()]);

        // Delete: a stale tag is 412; then 204, and the memberships are gone with it.
        let (status, _, _) = send(&api, M::DELETE, &location, Some(&tag0), None).await;
        assert_eq!(status, 412);
        let (_, tag_now, _) = send(&api, M::GET, &location, None, None).await;
        let (status, _, _) = send(&api, M::DELETE, &location, tag_now.as_deref(), None).await;
        assert_eq!(status, 204);
        let (status, problem) = api.call(M::GET, &location, None).await;
        assert_eq!(
            (status, problem["error"].as_str()),
            (404, Some("not_found"))
        );
        let (status, _) = api.call(M::GET, &members, None).await;
        assert_eq!(status, 404);
        let (_, mine) = api
            .call(
                M::GET,
                &format!("/api/v1/tenant-users/{ada}/organizations"),
                None,
            )
            .await;
        assert_eq!(mine, json!({"items": []}));

        // The audit log tells the organization's story.
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
                "organization.created",
                "organization.updated",
                "organization.suspended",
                "organization.reactivated",
                "organization.member_added",
                "organization.member_added",
                "organization.member_roles_changed",
                "organization.member_removed",
                "organization.deleted",
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
        let ada = person(&api, "ada@example.com").await;
        let (_, org) = api
            .call(M::POST, BASE, Some(json!({"name": "Acme", "slug": "acme"})))
            .await;
        let id = org["id"].as_str().unwrap().to_owned();
        let (status, _) = api
            .call(
                M::POST,
                &format!("{BASE}/{id}/members"),
                Some(json!({"user_id": ada})),
            )
            .await;
        assert_eq!(status, 201);
        let eve = person(&other, "eve@globex.example").await;

        let org_path = format!("{BASE}/{id}");
        let member_path = format!("{org_path}/members/{ada}");
        let probes: Vec<(M, String, Option<Value>)> = vec![
            (M::GET, org_path.clone(), None),
            (M::PATCH, org_path.clone(), Some(json!({"name": "Mallory"}))),
            (M::DELETE, org_path.clone(), None),
            (M::POST, format!("{org_path}/suspend"), None),
            (M::POST, format!("{org_path}/reactivate"), None),
            (M::GET, format!("{org_path}/members"), None),
            (
                M::POST,
                format!("{org_path}/members"),
                Some(json!({"user_id": eve})),
            ),
            (M::GET, member_path.clone(), None),
            (
                M::PATCH,
                member_path.clone(),
                Some(json!({"roles": ["owner"]})),
            ),
            (M::DELETE, member_path.clone(), None),
            (
                M::GET,
                format!("/api/v1/tenant-users/{ada}/organizations"),
                None,
            ),
        ];
        for (method, path, body) in &probes {
            let (status, problem) = other.call(method.clone(), path, body.clone()).await;
            assert_eq!(
                (status, problem["error"].as_str()),
                (404, Some("not_found")),
                "{backend:?}: {method} {path}"
            );
        }
        // The other tenant's list does not show it; its own organization cannot take acme's
        // person, with the answer an unknown id gets.
        assert!(org_ids(&other).await.is_empty());
        let (_, mine) = other
            .call(
                M::POST,
                BASE,
                Some(json!({"name": "Globex", "slug": "acme"})),
            )
            .await;
        let mine = mine["id"].as_str().unwrap().to_owned();
        let mut answers = Vec::new();
        for user_id in [ada.as_str(), "usr_01jd2m8q3v7x9k4n6p0r5t2w8y"] {
            let (status, problem) = other
                .call(
                    M::POST,
                    &format!("{BASE}/{mine}/members"),
                    Some(json!({"user_id": user_id})),
                )
                .await;
            assert_eq!(status, 400, "{problem}");
            let detail = problem["detail"].as_str().unwrap().to_owned();
            assert!(detail.starts_with("user_id"), "{detail}");
            answers.push(detail);
        }
        assert_eq!(answers[0], answers[1], "no existence leaks across tenants");

        // Acme's organization and membership are untouched.
        let (status, read) = api.call(M::GET, &org_path, None).await;
        assert_eq!((status, &read), (200, &org));
        let (status, m) = api.call(M::GET, &member_path, None).await;
        assert_eq!((status, &m["roles"]), (200, &json!(["member"])));

        // Malformed ids, or ids of another kind, are not found either.
        for path in [
            format!("{BASE}/nope"),
            format!("{BASE}/{ada}"),
            format!("{BASE}/org_01jd2n4k6m8p0r2t4v6x8z0b2d"),
            format!("{BASE}/nope/members"),
            format!("{org_path}/members/nope"),
            format!("{org_path}/members/{id}"),
            "/api/v1/tenant-users/nope/organizations".to_owned(),
            format!("/api/v1/tenant-users/{id}/organizations"),
        ] {
            let (status, problem) = api.call(M::GET, &path, None).await;
            assert_eq!(
                (status, problem["error"].as_str()),
                (404, Some("not_found")),
                "{path}"
            );
        }
        let (status, _) = api
            .call(
                M::PATCH,
                &format!("{BASE}/nope"),
                Some(json!({"name": "X"})),
            )
            .await;
        assert_eq!(status, 404);
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn hostile_bodies_are_refused_naming_the_field_and_write_nothing() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let api = world.acme();
        let ada = person(&api, "ada@example.com").await;
        let (_, org) = api
            .call(M::POST, BASE, Some(json!({"name": "Acme", "slug": "acme"})))
            .await;
        let id = org["id"].as_str().unwrap().to_owned();
        let org_path = format!("{BASE}/{id}");
        let members = format!("{org_path}/members");
        let (status, _) = api
            .call(M::POST, &members, Some(json!({"user_id": ada})))
            .await;
        assert_eq!(status, 201);

        let deep = json!({"a": {"b": {"c": {"d": {"e": {"f": true}}}}}});
        let big = json!({"blob": "x".repeat(5 * 1024)});
        let creates = [
            (
                json!({"name": "A", "slug": "a", "owner": "me"}),
                "unknown field `owner`",
            ),
            (json!({"name": 5, "slug": "a"}), "name"),
            (json!({"name": "A", "slug": ["a"]}), "slug"),
            (json!({"name": "A"}), "slug"),
            (
                json!({"name": "A", "slug": "a", "metadata": "x"}),
                "metadata",
            ),
            (
                json!({"name": "A", "slug": "a", "metadata": [1]}),
                "metadata",
            ),
            (
                json!({"name": "A", "slug": "a", "metadata": big}),
                "metadata",
            ),
            (
                json!({"name": "A", "slug": "a", "metadata": deep}),
                "metadata",
            ),
            (json!({"name": "A", "slug": "Acme"}), "slug"),
            (json!({"name": "A", "slug": "acme corp"}), "slug"),
            (json!({"name": "x".repeat(300), "slug": "a"}), "name"),
            (json!({"name": "A\u{0}B", "slug": "a"}), "name"),
            (json!({"name": "A\u{1b}[31m", "slug": "a"}), "name"),
            (json!({"name": "  ", "slug": "a"}), "name"),
        ];
        for (body, needle) in creates {
            let (status, problem) = api.call(M::POST, BASE, Some(body.clone())).await;
            assert_eq!(status, 400, "{backend:?}: {body}: {problem}");
            assert_eq!(problem["error"], "bad_request");
            let detail = problem["detail"].as_str().unwrap();
            assert!(detail.contains(needle), "{body}: {detail}");
        }
        for raw in ["{\"name\": ", "[]", "null", "not json"] {
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

        let patches = [
            (json!({"name": null}), "name"),
            (json!({"slug": null}), "slug"),
            (json!({"slug": "UPPER"}), "slug"),
            (json!({"status": "suspended"}), "unknown field `status`"),
            (json!({"metadata": {"k": [[[[[1]]]]]}}), "metadata"),
            (json!({"name": "tab\tname"}), "name"),
        ];
        for (body, needle) in patches {
            let (status, problem) = api.call(M::PATCH, &org_path, Some(body.clone())).await;
            assert_eq!(status, 400, "{body}: {problem}");
            let detail = problem["detail"].as_str().unwrap();
            assert!(detail.contains(needle), "{body}: {detail}");
        }

        let bob = person(&api, "bob@example.com").await;
        let new_members = [
            (json!({"user_id": bob, "roles": []}), "roles"),
            (json!({"user_id": bob, "roles": ["tenant_admin"]}), "roles"),
            (json!({"user_id": bob, "roles": ["Owner"]}), "roles"),
            (json!({"user_id": bob, "roles": "owner"}), "roles"),
            (
                json!({"user_id": bob, "roles": vec!["member"; 17]}),
                "roles",
            ),
            (json!({"user_id": 5}), "user_id"),
            (json!({"user_id": "nope"}), "user_id"),
            (json!({"roles": ["member"]}), "user_id"),
            (
                json!({"user_id": bob, "role": "owner"}),
                "unknown field `role`",
            ),
        ];
        for (body, needle) in new_members {
            let (status, problem) = api.call(M::POST, &members, Some(body.clone())).await;
            assert_eq!(status, 400, "{body}: {problem}");
            let detail = problem["detail"].as_str().unwrap();
            assert!(detail.contains(needle), "{body}: {detail}");
        }
        let (_, problem) = api
            .call(
                M::POST,
                &members,
                Some(json!({"user_id": bob, "roles": ["tenant_admin"]})),
            )
            .await;
        let detail = problem["detail"].as_str().unwrap();
        assert!(detail.contains("owner, admin, member"), "{detail}");
        for (body, needle) in [
            (json!({"roles": []}), "roles"),
            (json!({"roles": ["tenant_admin"]}), "roles"),
            (json!({}), "roles"),
            (json!({"roles": ["admin"], "user_id": bob}), "unknown field"),
        ] {
            let (status, problem) = api
                .call(M::PATCH, &format!("{members}/{ada}"), Some(body.clone()))
                .await;
            assert_eq!(status, 400, "{body}: {problem}");
            let detail = problem["detail"].as_str().unwrap();
            assert!(detail.contains(needle), "{body}: {detail}");
        }

        // Nothing was written.
        assert_eq!(org_ids(&api).await, [id.as_str()]);
        let (_, now) = api.call(M::GET, &org_path, None).await;
        assert_eq!(now, org);
        let (_, page) = api.call(M::GET, &members, None).await;
        assert_eq!(ids(&page, "user_id"), [ada.as_str()]);
        assert_eq!(page["items"][0]["roles"], json!(["member"]));
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn organizations_need_a_token_with_the_organizations_scopes() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let full = world.acme();
        let ada = person(&full, "ada@example.com").await;
        let (_, org) = full
            .call(M::POST, BASE, Some(json!({"name": "Acme", "slug": "acme"})))
            .await;
        let id = org["id"].as_str().unwrap().to_owned();
        let org_path = format!("{BASE}/{id}");
        let members = format!("{org_path}/members");
        let member = format!("{members}/{ada}");
        let (status, _) = full
            .call(M::POST, &members, Some(json!({"user_id": ada})))
            .await;
        assert_eq!(status, 201);
        let scoped = |scope: &'static str| {
            let world = &world;
            async move { world.acme_with(scope).await }
        };

        let reads = [
            BASE.to_owned(),
            org_path.clone(),
            members.clone(),
            member.clone(),
            format!("/api/v1/tenant-users/{ada}/organizations"),
        ];
        let writes: Vec<(M, String, Option<Value>)> = vec![
            (
                M::POST,
                BASE.to_owned(),
                Some(json!({"name": "B", "slug": "b"})),
            ),
            (M::PATCH, org_path.clone(), Some(json!({"name": "B"}))),
            (M::DELETE, org_path.clone(), None),
            (M::POST, format!("{org_path}/suspend"), None),
            (M::POST, format!("{org_path}/reactivate"), None),
            (M::POST, members.clone(), Some(json!({"user_id": ada}))),
            (M::PATCH, member.clone(), Some(json!({"roles": ["owner"]}))),
            (M::DELETE, member.clone(), None),
        ];

        let reader = scoped("organizations:read").await;
        for path in &reads {
            let (status, body) = reader.call(M::GET, path, None).await;
            assert_eq!(status, 200, "{backend:?}: GET {path}: {body}");
        }
        for (method, path, body) in &writes {
            let (status, problem) = reader.call(method.clone(), path, body.clone()).await;
            assert_eq!(
                (status, problem["error"].as_str()),
                (403, Some("insufficient_scope")),
                "{method} {path}"
            );
        }

        let users_only = scoped("users:read").await;
        let (status, problem) = users_only.call(M::GET, BASE, None).await;
        assert_eq!(
            (status, problem["error"].as_str()),
            (403, Some("insufficient_scope"))
        );

        let writer = scoped("organizations:write").await;
        let (status, created) = writer
            .call(M::POST, BASE, Some(json!({"name": "B", "slug": "b"})))
            .await;
        assert_eq!(status, 201, "organizations:write creates: {created}");
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
        let (_, still) = full.call(M::GET, &org_path, None).await;
        assert_eq!(still, org);
        let (_, m) = full.call(M::GET, &member, None).await;
        assert_eq!(m["roles"], json!(["member"]));
        world.app.shutdown().await;
    }
}
