//! Access-control policies end to end, on SQLite and PostgreSQL, through real HTTP: a tenant's
//! management application creates, lists, reads, changes and deletes policies (`Location`,
//! `ETag`/`If-Match`, idempotent creation, `admin.policy.*` events in the audit log); targets
//! must be the tenant's own applications, organizations and roles; hostile and misspelt bodies
//! are refused naming the member and write nothing; another tenant finds none of it (404); and
//! each route needs its `policies:*` scope. What the policies do to sign-in and tokens is
//! proven in the engine tests (`svc_oauth` `token::tests::policies`) and the hosted tests.

use crate::tenant_users::{Api, TwoTenants as World};
use reqwest::Method as M;
use reqwest::header::{ETAG, IF_MATCH, LOCATION};
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

const BASE: &str = "/api/v1/policies";

async fn created(api: &Api<'_>, path: &str, body: Value) -> Value {
    let (status, value) = api.call(M::POST, path, Some(body.clone())).await;
    assert_eq!(status, 201, "{path} {body}: {value}");
    value
}

/// An application, an organization and a custom role of `api`'s tenant: their ids and key.
async fn targets(api: &Api<'_>) -> (String, String) {
    let org = created(
        api,
        "/api/v1/organizations",
        json!({"name": "Finance", "slug": "finance"}),
    )
    .await;
    created(
        api,
        "/api/v1/roles",
        json!({"key": "accountant", "kind": "organization"}),
    )
    .await;
    let app = created(
        api,
        "/api/v1/applications",
        json!({
            "name": "Books",
            "redirect_uris": ["https://books.example/cb"],
            "grant_types": ["authorization_code"],
            "token_endpoint_auth_method": "none",
            "allowed_scopes": ["openid"]
        }),
    )
    .await;
    (
        app["client_id"]
            .as_str()
            .or(app["id"].as_str())
            .unwrap()
            .to_owned(),
        org["id"].as_str().unwrap().to_owned(),
    )
}

fn ids(list: &Value) -> Vec<&str> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn policies_live_a_whole_lifecycle() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let api = world.acme();
        let (app, org) = targets(&api).await;

        let response = api
            .request(M::POST, BASE)
            .header("idempotency-key", "finance-mfa-1")
            .json(&json!({
                "name": "Finance needs MFA from the office",
                "targets": {"applications": [app], "organizations": [org],
                            "roles": ["accountant", "tenant_admin"]},
                "rules": {
                    "require_acr": "urn:svc:aal2",
                    "allowed_ip_ranges": ["203.0.113.7/24", "2001:db8::/32", "203.0.113.0/24"],
                    "sign_in_methods": ["pwd", "hwk"],
                    "max_session_age_secs": 28800
                }
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201, "{backend:?}");
        let location = response.headers()[LOCATION].to_str().unwrap().to_owned();
        let policy: Value = response.json().await.unwrap();
        let id = policy["id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("pol_"), "{policy}");
        assert_eq!(location, format!("{BASE}/{id}"));
        assert_eq!(policy["enabled"], true);
        assert_eq!(policy["description"], "");
        assert_eq!(
            policy["rules"],
            json!({
                "require_acr": "urn:svc:aal2",
                "allowed_ip_ranges": ["203.0.113.0/24", "2001:db8::/32"],
                "sign_in_methods": ["hwk", "pwd"],
                "max_session_age_secs": 28800
            }),
            "networks normalised and deduplicated, lists sorted"
        );
        assert_eq!(
            policy["targets"]["roles"],
            json!(["accountant", "tenant_admin"])
        );
        // The idempotent retry replays; the same name again is a conflict.
        let replay = api
            .request(M::POST, BASE)
            .header("idempotency-key", "finance-mfa-1")
            .json(&json!({
                "name": "Finance needs MFA from the office",
                "targets": {"applications": [app], "organizations": [org],
                            "roles": ["accountant", "tenant_admin"]},
                "rules": {
                    "require_acr": "urn:svc:aal2",
                    "allowed_ip_ranges": ["203.0.113.7/24", "2001:db8::/32", "203.0.113.0/24"],
                    "sign_in_methods": ["pwd", "hwk"],
                    "max_session_age_secs": 28800
                }
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(replay.headers()["idempotent-replayed"], "true");
        let (status, taken) = api
            .call(
                M::POST,
                BASE,
                Some(json!({"name": "Finance needs MFA from the office",
                            "rules": {"max_session_age_secs": 60}})),
            )
            .await;
        assert_eq!((status, taken["error"].as_str()), (409, Some("conflict")));
        let everyone = created(
            &api,
            BASE,
            json!({"name": "Sign in daily", "enabled": false,
                   "rules": {"max_session_age_secs": 86400}}),
        )
        .await;
        assert_eq!(
            everyone["targets"],
            json!({"applications": [], "organizations": [], "roles": []})
        );
        assert_eq!(everyone["rules"]["require_acr"], Value::Null);

        let (status, list) = api.call(M::GET, BASE, None).await;
        assert_eq!(status, 200);
        assert_eq!(ids(&list), [id.as_str(), everyone["id"].as_str().unwrap()]);
        assert!(list["next_cursor"].is_null());
        assert_eq!(list["items"][0], policy);

        // Read with ETag, change with If-Match; a stale tag changes nothing.
        let read = api.request(M::GET, &location).send().await.unwrap();
        let tag0 = read.headers()[ETAG].to_str().unwrap().to_owned();
        assert_eq!(read.json::<Value>().await.unwrap(), policy);
        let changed = api
            .request(M::PATCH, &location)
            .header(IF_MATCH, &tag0)
            .json(&json!({"enabled": false, "rules": {"allowed_ip_ranges": ["10.0.0.0/8"]}}))
            .send()
            .await
            .unwrap();
        assert_eq!(changed.status(), 200);
        let tag1 = changed.headers()[ETAG].to_str().unwrap().to_owned();
        let changed: Value = changed.json().await.unwrap();
        assert_eq!(changed["enabled"], false);
        assert_eq!(
            changed["rules"],
            json!({"require_acr": null, "allowed_ip_ranges": ["10.0.0.0/8"],
                   "sign_in_methods": [], "max_session_age_secs": null}),
            "rules replace the whole object"
        );
        assert_eq!(changed["targets"], policy["targets"], "targets untouched");
        let stale = api
            .request(M::PATCH, &location)
            .header(IF_MATCH, &tag0)
            .json(&json!({"enabled": true}))
            .send()
            .await
            .unwrap();
        assert_eq!(stale.status(), 412);
        let (_, now) = api.call(M::GET, &location, None).await;
        assert_eq!(now, changed);

        // Delete with If-Match.
        let stale = api
            .request(M::DELETE, &location)
            .header(IF_MATCH, &tag0)
            .send()
            .await
            .unwrap();
        assert_eq!(stale.status(), 412);
        let gone = api
            .request(M::DELETE, &location)
            .header(IF_MATCH, &tag1)
            .send()
            .await
            .unwrap();
        assert_eq!(gone.status(), 204);
        let (status, _) = api.call(M::GET, &location, None).await;
        assert_eq!(status, 404);

        // Audited, one entry per change, with the policy as target.
        let (_, audit) = api
            .call(M::GET, &format!("/api/v1/audit-logs?target={id}"), None)
            .await;
        let mut actions: Vec<&str> = audit["items"]
            .as_array()
            .unwrap_or_else(|| panic!("{audit}"))
            .iter()
            .filter_map(|e| e["action"].as_str())
            .collect();
        actions.sort_unstable();
        assert_eq!(
            actions,
            ["policy.created", "policy.deleted", "policy.updated"],
            "{audit}"
        );
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn hostile_policies_are_refused_naming_the_member_and_write_nothing() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let api = world.acme();
        let globex = world.globex();
        let (app, org) = targets(&api).await;
        let (their_app, their_org) = targets(&globex).await;
        let rules = json!({"max_session_age_secs": 600});
        let refused = [
            (json!({"name": "p", "rules": {}}), "rules"),
            (
                json!({"name": "p", "rules": {"require_acr": "urn:other:gold"}}),
                "rules.require_acr",
            ),
            (
                json!({"name": "p", "rules": {"require_mfa": true}}),
                "require_mfa",
            ),
            (
                json!({"name": "p", "rules": {"allowed_ip_ranges": ["10.0.0.0/33"]}}),
                "rules.allowed_ip_ranges",
            ),
            (
                json!({"name": "p", "rules": {"allowed_ip_ranges": ["intranet"]}}),
                "rules.allowed_ip_ranges",
            ),
            (
                json!({"name": "p", "rules": {"allowed_ip_ranges": "10.0.0.0/8"}}),
                "allowed_ip_ranges",
            ),
            (
                json!({"name": "p", "rules": {"sign_in_methods": ["sms"]}}),
                "rules.sign_in_methods",
            ),
            (
                json!({"name": "p", "rules": {"max_session_age_secs": 59}}),
                "rules.max_session_age_secs",
            ),
            (
                json!({"name": "p", "rules": {"max_session_age_secs": -1}}),
                "max_session_age_secs",
            ),
            (json!({"name": "", "rules": rules}), "name"),
            (json!({"name": "a\u{7}b", "rules": rules}), "name"),
            (json!({"name": "p"}), "rules"),
            (
                json!({"name": "p", "rules": rules, "targets": {"users": []}}),
                "users",
            ),
            (
                json!({"name": "p", "rules": rules, "targets": {"applications": [their_app]}}),
                "targets.applications",
            ),
            (
                json!({"name": "p", "rules": rules, "targets": {"organizations": [their_org]}}),
                "targets.organizations",
            ),
            (
                json!({"name": "p", "rules": rules, "targets": {"organizations": ["acme"]}}),
                "targets.organizations",
            ),
            (
                json!({"name": "p", "rules": rules, "targets": {"roles": ["nobody"]}}),
                "targets.roles",
            ),
            (
                json!({"name": "p", "rules": rules, "targets": {"roles": ["Admin'--"]}}),
                "targets.roles",
            ),
            (
                json!({"name": "p", "rules": rules, "id": "pol_x"}),
                "unknown field `id`",
            ),
        ];
        for (body, needle) in &refused {
            let (status, problem) = api.call(M::POST, BASE, Some(body.clone())).await;
            assert_eq!(status, 400, "{backend:?} {body}: {problem}");
            let detail = problem["detail"].as_str().unwrap_or_default();
            assert!(detail.contains(needle), "{body}: {detail}");
        }
        for raw in ["[]", "null", "\"p\"", "{", ""] {
            let response = api
                .request(M::POST, BASE)
                .header("content-type", "application/json")
                .body(raw)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 400, "{raw:?}");
        }
        let many: Vec<String> = (0..51).map(|i| format!("10.{i}.0.0/16")).collect();
        let (status, _) = api
            .call(
                M::POST,
                BASE,
                Some(json!({"name": "p", "rules": {"allowed_ip_ranges": many}})),
            )
            .await;
        assert_eq!(status, 400);
        let (status, list) = api.call(M::GET, BASE, None).await;
        assert_eq!((status, ids(&list).len()), (200, 0), "nothing was written");

        // A valid policy, then hostile patches and cross-tenant paths.
        let policy = created(
            &api,
            BASE,
            json!({"name": "p", "targets": {"applications": [app], "organizations": [org]},
                   "rules": rules}),
        )
        .await;
        let path = format!("{BASE}/{}", policy["id"].as_str().unwrap());
        for (body, needle) in [
            (json!({"name": null}), "null"),
            (json!({"rules": null}), "null"),
            (json!({"enabled": "yes"}), "enabled"),
            (json!({"rules": {}}), "rules"),
            (json!({"targets": {"roles": ["nobody"]}}), "targets.roles"),
            (
                json!({"created_at": "2026-01-01T00:00:00Z"}),
                "unknown field `created_at`",
            ),
        ] {
            let (status, problem) = api.call(M::PATCH, &path, Some(body.clone())).await;
            assert_eq!(status, 400, "{body}: {problem}");
            let detail = problem["detail"].as_str().unwrap_or_default();
            assert!(detail.contains(needle), "{body}: {detail}");
        }
        let (_, unchanged) = api.call(M::GET, &path, None).await;
        assert_eq!(unchanged, policy);
        for method in [M::GET, M::PATCH, M::DELETE] {
            let body = (method == M::PATCH).then(|| json!({"enabled": false}));
            let (status, _) = globex.call(method.clone(), &path, body.clone()).await;
            assert_eq!(status, 404, "{method} across tenants");
            for bad in [
                "pol_nope",
                "..%2F..%2Fapplications",
                "res_01jd2p6r8t0v2x4z6b8d0f2h4k",
            ] {
                let (status, _) = api
                    .call(method.clone(), &format!("{BASE}/{bad}"), body.clone())
                    .await;
                assert_eq!(status, 404, "{method} {bad}");
            }
        }
        let (_, theirs) = globex.call(M::GET, BASE, None).await;
        assert_eq!(ids(&theirs).len(), 0);
        let (_, still) = api.call(M::GET, &path, None).await;
        assert_eq!(still, policy);
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn policies_need_a_token_with_the_policies_scopes() {
    for backend in BACKENDS {
        let world = World::new(backend).await;
        let policy = created(
            &world.acme(),
            BASE,
            json!({"name": "p", "rules": {"max_session_age_secs": 600}}),
        )
        .await;
        let path = format!("{BASE}/{}", policy["id"].as_str().unwrap());
        let reader = world.acme_with("policies:read").await;
        for read in [BASE, path.as_str()] {
            assert_eq!(reader.call(M::GET, read, None).await.0, 200, "{read}");
        }
        let (status, problem) = reader
            .call(
                M::POST,
                BASE,
                Some(json!({"name": "q", "rules": {"max_session_age_secs": 600}})),
            )
            .await;
        assert_eq!(
            (status, problem["error"].as_str()),
            (403, Some("insufficient_scope"))
        );
        let (status, _) = reader.call(M::DELETE, &path, None).await;
        assert_eq!(status, 403);
        let other = world.acme_with("applications:write").await;
        assert_eq!(other.call(M::GET, BASE, None).await.0, 403);
        let writer = world.acme_with("policies:write").await;
        assert_eq!(
            writer.call(M::GET, BASE, None).await.0,
            403,
            "write implies no read"
        );
        let (status, _) = writer
            .call(M::PATCH, &path, Some(json!({"enabled": false})))
            .await;
        assert_eq!(status, 200);
        world.app.shutdown().await;
    }
}
