//! The API conventions on the tenant-user routes, end to end on SQLite and PostgreSQL: `201` with
//! a `Location` that reads the user back, a strong `ETag` on reading and on every change,
//! `If-Match` on every change (current tag, list, `*`, stale tag, foreign tag), racing changes
//! from one revision admitting exactly one, and `limit`/`after` walking users and sessions each
//! exactly once.

use crate::common::{create_tenant, management_token as token, operator_token};
use crate::tenant_users::{Api, PW, spawn};
use reqwest::Method as M;
use reqwest::header::{ETAG, IF_MATCH, LOCATION};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use svc_domain::{Clock, SecretHash, Session, SessionId, SystemClock, TenantId, UserId};
use svc_testkit::{BACKENDS, TestApp};

const BASE: &str = "/api/v1/tenant-users";

/// Sends `method path` with `If-Match: if_match` (when given) and `body`; returns the status,
/// the `ETag` (if any) and the JSON body (`Null` if none).
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
    if status == 412 {
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json"
        );
    }
    let text = response.text().await.unwrap();
    (
        status,
        etag,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

/// Reads the user at `path`: its body and its `ETag`.
async fn read(api: &Api<'_>, path: &str) -> (Value, String) {
    let (status, etag, body) = send(api, M::GET, path, None, None).await;
    assert_eq!(status, 200, "{path}: {body}");
    let etag = etag.expect("GET answers an ETag");
    assert!(
        etag.starts_with('"') && etag.ends_with('"') && !etag.starts_with("W/"),
        "strong: {etag}"
    );
    (body, etag)
}

#[tokio::test]
async fn tenant_users_answer_locations_etags_and_honour_if_match() {
    for backend in BACKENDS {
        let dir = tempfile::tempdir().unwrap();
        let app = spawn(backend, &dir.path().join("mail.jsonl")).await;
        let operator = operator_token(&app).await;
        let acme = create_tenant(&app, &operator, "acme").await;
        let api = Api {
            app: &app,
            tenant: &acme,
            token: token(&app, &acme, None).await,
        };

        // 201 with a Location that reads the user back.
        let created = api
            .request(M::POST, BASE)
            .json(&json!({"email": "ada@example.com", "name": "Ada", "password": PW}))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201, "{backend:?}");
        let location = created.headers()[LOCATION].to_str().unwrap().to_owned();
        let ada: Value = created.json().await.unwrap();
        assert_eq!(location, format!("{BASE}/{}", ada["id"].as_str().unwrap()));
        let (got, tag0) = read(&api, &location).await;
        assert_eq!(got, ada, "{backend:?}");
        let (_, again) = read(&api, &location).await;
        assert_eq!(again, tag0, "a stable tag while nothing changes");

        // PATCH with the current tag: 200 and a new tag, the one a GET then answers.
        let (status, tag1, patched) = send(
            &api,
            M::PATCH,
            &location,
            Some(&tag0),
            Some(json!({"name": "Ada Lovelace"})),
        )
        .await;
        assert_eq!(status, 200, "{backend:?}: {patched}");
        let tag1 = tag1.expect("a successful change answers its ETag");
        assert_ne!(tag1, tag0);
        assert_eq!(read(&api, &location).await, (patched.clone(), tag1.clone()));

        // A stale tag, a foreign one or an unquoted one: 412, and nothing changed.
        for stale in [tag0.as_str(), "\"nope\"", "garbage", "W/\"r1\""] {
            let (status, _, problem) = send(
                &api,
                M::PATCH,
                &location,
                Some(stale),
                Some(json!({"name": "Mallory"})),
            )
            .await;
            assert_eq!(
                (status, problem["error"].as_str()),
                (412, Some("precondition_failed")),
                "{backend:?} {stale}: {problem}"
            );
        }
        assert_eq!(read(&api, &location).await, (patched.clone(), tag1.clone()));

        // `*`, and a list holding the current tag, let a change through.
        let (status, tag2, _) = send(
            &api,
            M::PATCH,
            &location,
            Some("*"),
            Some(json!({"given_name": "Ada"})),
        )
        .await;
        assert_eq!(status, 200);
        let tag2 = tag2.unwrap();
        let listed = format!("\"other\", {tag2}");
        let (status, tag3, _) = send(
            &api,
            M::PATCH,
            &location,
            Some(&listed),
            Some(json!({"family_name": "Lovelace"})),
        )
        .await;
        assert_eq!(status, 200);
        let tag3 = tag3.unwrap();

        // Suspend and reactivate change the user: If-Match applies, and they answer the new tag.
        let suspend = format!("{location}/suspend");
        let reactivate = format!("{location}/reactivate");
        let (status, _, _) = send(&api, M::POST, &suspend, Some(&tag2), None).await;
        assert_eq!(status, 412, "{backend:?}");
        assert_eq!(read(&api, &location).await.0["status"], "active");
        let (status, tag4, suspended) = send(&api, M::POST, &suspend, Some(&tag3), None).await;
        assert_eq!(
            (status, suspended["status"].as_str()),
            (200, Some("suspended"))
        );
        let tag4 = tag4.unwrap();
        assert_eq!(read(&api, &location).await.1, tag4);
        let (status, _, _) = send(&api, M::POST, &reactivate, Some(&tag3), None).await;
        assert_eq!(status, 412);
        assert_eq!(read(&api, &location).await.0["status"], "suspended");
        let (status, tag5, back) = send(&api, M::POST, &reactivate, Some(&tag4), None).await;
        assert_eq!((status, back["status"].as_str()), (200, Some("active")));
        let tag5 = tag5.unwrap();

        // DELETE: a stale tag removes nothing; the current one removes.
        let (status, _, _) = send(&api, M::DELETE, &location, Some(&tag4), None).await;
        assert_eq!(status, 412);
        assert_eq!(read(&api, &location).await.0["status"], "active");
        let (status, _, _) = send(&api, M::DELETE, &location, Some(&tag5), None).await;
        assert_eq!(status, 204);
        let (tombstone, _) = read(&api, &location).await;
        assert_eq!(tombstone["status"], "removed");

        // Racing changes made from one revision: exactly one applies, the others are 412.
        let (status, _, bob) = send(
            &api,
            M::POST,
            BASE,
            None,
            Some(json!({"email": "bob@example.com"})),
        )
        .await;
        assert_eq!(status, 201);
        let bob_path = format!("{BASE}/{}", bob["id"].as_str().unwrap());
        let (_, bob_tag) = read(&api, &bob_path).await;
        let racers = (0..6).map(|i| {
            let (api, path, tag) = (&api, bob_path.as_str(), bob_tag.as_str());
            async move {
                let body = json!({"name": format!("racer {i}")});
                let (status, _, body) = send(api, M::PATCH, path, Some(tag), Some(body)).await;
                (status, body)
            }
        });
        let outcomes = futures_util::future::join_all(racers).await;
        let winners: Vec<&Value> = outcomes
            .iter()
            .filter(|(status, _)| *status == 200)
            .map(|(_, body)| body)
            .collect();
        assert_eq!(winners.len(), 1, "{backend:?}: {outcomes:?}");
        assert!(
            outcomes.iter().all(|(s, _)| *s == 200 || *s == 412),
            "{outcomes:?}"
        );
        assert_eq!(read(&api, &bob_path).await.0["name"], winners[0]["name"]);

        app.shutdown().await;
    }
}

#[tokio::test]
async fn users_and_sessions_page_with_limit_and_after() {
    for backend in BACKENDS {
        let dir = tempfile::tempdir().unwrap();
        let app = spawn(backend, &dir.path().join("mail.jsonl")).await;
        let operator = operator_token(&app).await;
        let acme = create_tenant(&app, &operator, "acme").await;
        let api = Api {
            app: &app,
            tenant: &acme,
            token: token(&app, &acme, None).await,
        };
        let mut ids = Vec::new();
        for n in 0..7 {
            let (status, _, user) = send(
                &api,
                M::POST,
                BASE,
                None,
                Some(json!({"email": format!("user{n}@example.com")})),
            )
            .await;
            assert_eq!(status, 201, "{backend:?}: {user}");
            ids.push(user["id"].as_str().unwrap().to_owned());
        }

        // Users: every one exactly once, in id order, whatever the page size.
        for limit in [1, 3, 7, 200] {
            let walked = walk(&api, BASE, limit).await;
            let mut sorted = ids.clone();
            sorted.sort();
            assert_eq!(walked, sorted, "{backend:?} limit={limit}");
            // Newest first with `order=desc`, the cursor moving down.
            let walked = walk(&api, &format!("{BASE}?order=desc"), limit).await;
            sorted.reverse();
            assert_eq!(walked, sorted, "{backend:?} desc limit={limit}");
        }
        let (status, _, page) = send(&api, M::GET, &format!("{BASE}?limit=0"), None, None).await;
        assert_eq!(status, 200);
        assert_eq!(page["items"].as_array().unwrap().len(), 1, "clamped to 1");

        // Sessions of one user: each exactly once, newest first.
        let tenant = app.tenant("acme").await.id;
        let user = UserId::parse(&ids[0]).unwrap();
        let mut sessions = Vec::new();
        for n in 0..5 {
            sessions.push(insert_session(&app, &tenant, &user, n).await.to_string());
        }
        sessions.sort();
        sessions.reverse();
        let path = format!("{BASE}/{}/sessions", ids[0]);
        for limit in [1, 2, 5, 50] {
            assert_eq!(walk(&api, &path, limit).await, sessions, "{backend:?}");
        }
        let mut oldest_first = sessions.clone();
        oldest_first.reverse();
        for limit in [2, 50] {
            let walked = walk(&api, &format!("{path}?order=asc"), limit).await;
            assert_eq!(walked, oldest_first, "{backend:?} asc");
        }
        for bad in [
            "?after=usr_01jd0000000000000000000000",
            "?colour=red",
            "?limit=x",
            "?order=newest",
        ] {
            let (status, _, problem) =
                send(&api, M::GET, &format!("{path}{bad}"), None, None).await;
            assert_eq!(status, 400, "{bad}: {problem}");
        }
        app.shutdown().await;
    }
}

/// Follows `next_cursor` from the first page of `path` with `limit`, returning every id seen;
/// fails on a repeated id or a page larger than `limit`.
async fn walk(api: &Api<'_>, path: &str, limit: u32) -> Vec<String> {
    let mut seen = Vec::new();
    let mut unique = BTreeSet::new();
    let mut after: Option<String> = None;
    for _ in 0..100 {
        let join = if path.contains('?') { '&' } else { '?' };
        let url = match &after {
            Some(cursor) => format!("{path}{join}limit={limit}&after={cursor}"),
            None => format!("{path}{join}limit={limit}"),
        };
        let (status, _, page) = send(api, M::GET, &url, None, None).await;
        assert_eq!(status, 200, "{url}: {page}");
        let items = page["items"].as_array().unwrap();
        assert!(items.len() <= limit as usize, "{url}");
        for item in items {
            let id = item["id"].as_str().unwrap().to_owned();
            assert!(unique.insert(id.clone()), "{id} seen twice");
            seen.push(id);
        }
        match page["next_cursor"].as_str() {
            Some(cursor) => after = Some(cursor.to_owned()),
            None => return seen,
        }
    }
    panic!("{path}: no last page");
}

/// A live session `n` of `user`, written directly to the app's database.
async fn insert_session(app: &TestApp, tenant: &TenantId, user: &UserId, n: u32) -> SessionId {
    let now = SystemClock.now();
    let now = now
        .replace_nanosecond(now.nanosecond() / 1000 * 1000)
        .unwrap();
    let session = Session {
        id: SessionId::generate(&SystemClock, &svc_domain::OsRandom),
        tenant_id: tenant.clone(),
        user_id: user.clone(),
        secret_hash: SecretHash::of(&format!("ses_s_conventions-{n}")),
        created_at: now,
        auth_time: now,
        amr: vec!["pwd".to_owned()],
        acr: None,
        expires_at: now + time::Duration::days(1),
        last_seen_at: now,
        revoked_at: None,
        user_agent: None,
        ip: None,
    };
    let store = app.store().await;
    let mut tx = store.write().await.unwrap();
    tx.insert_session(&session).await.unwrap();
    tx.commit().await.unwrap();
    store.close().await;
    session.id
}
