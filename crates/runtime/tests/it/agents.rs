//! `/api/v1/agents` through the real HTTP surface on both backends: registration with an
//! owner of the tenant and public keys only, reads with ETags, changes honouring `If-Match`,
//! suspension and reactivation, final revocation, the audit trail and the events, and the
//! hostile inputs: private keys, foreign owners, sign-in scopes, oversized metadata, unknown
//! members, another tenant's agent, the wrong scope.

use crate::common::{CreatedTenant, create_tenant, management_token, operator_token};
use reqwest::Method;
use serde_json::{Value, json};
use svc_testkit::{BACKENDS, TestApp};

const KEY: &str = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";

fn request(
    app: &TestApp,
    tenant: &CreatedTenant,
    token: &str,
    method: Method,
    path: &str,
) -> reqwest::RequestBuilder {
    app.request(method, path)
        .header("host", &tenant.host)
        .bearer_auth(token)
}

async fn sent(builder: reqwest::RequestBuilder) -> (u16, Option<String>, Value) {
    let response = builder.send().await.unwrap();
    let status = response.status().as_u16();
    let etag = response
        .headers()
        .get("etag")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = response.json().await.unwrap_or(Value::Null);
    (status, etag, body)
}

fn agent_body(owner: &str) -> Value {
    json!({
        "name": "  Travel booking assistant ",
        "owner": owner,
        "jwks": {"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "k1", "x": KEY}]},
        "allowed_scopes": ["bookings:write", "bookings:read"],
        "allowed_resources": ["https://api.example.com/bookings"],
        "metadata": {"model": "assistant-2", "limits": {"daily": 10}}
    })
}

#[tokio::test]
async fn agents_are_registered_changed_suspended_and_revoked_for_good() {
    for backend in BACKENDS {
        let app = TestApp::spawn_with(backend, &[("SVC_SERVER__BASE_DOMAIN", "localhost")]).await;
        let operator = operator_token(&app).await;
        let acme = create_tenant(&app, &operator, "acme").await;
        let token = management_token(&app, &acme, None).await;
        let call = |method: Method, path: &str| request(&app, &acme, &token, method, path);

        let (status, _, created) =
            sent(call(Method::POST, "/api/v1/agents").json(&agent_body(&acme.client_id))).await;
        assert_eq!(status, 201, "{backend:?}: {created}");
        let id = created["id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("agt_"), "{created}");
        assert_eq!(created["name"], "Travel booking assistant");
        assert_eq!(created["owner"], acme.client_id.as_str());
        assert_eq!(created["status"], "active");
        assert_eq!(
            created["allowed_scopes"],
            json!(["bookings:read", "bookings:write"])
        );
        assert_eq!(created["jwks"]["keys"][0]["x"], KEY);
        assert_eq!(created["metadata"]["limits"]["daily"], 10);
        assert!(created["revoked_at"].is_null());

        let path = format!("/api/v1/agents/{id}");
        let (status, etag, read) = sent(call(Method::GET, &path)).await;
        assert_eq!(status, 200);
        assert_eq!(
            read, created,
            "{backend:?}: a read returns what registration did"
        );
        let etag = etag.expect("an ETag");
        let (_, _, listed) = sent(call(Method::GET, "/api/v1/agents")).await;
        assert_eq!(listed["items"], json!([created.clone()]));
        assert!(listed["next_cursor"].is_null());

        // Suspend at the revision read; a change from a stale revision is 412.
        let (status, new_etag, suspended) = sent(
            call(Method::PATCH, &path)
                .header("if-match", &etag)
                .json(&json!({"status": "suspended", "metadata": {}})),
        )
        .await;
        assert_eq!(status, 200, "{suspended}");
        assert_eq!(suspended["status"], "suspended");
        assert_eq!(suspended["metadata"], json!({}));
        assert_ne!(new_etag.as_deref(), Some(etag.as_str()));
        let (status, _, _) = sent(
            call(Method::PATCH, &path)
                .header("if-match", &etag)
                .json(&json!({"status": "active"})),
        )
        .await;
        assert_eq!(status, 412);
        let (status, _, active) =
            sent(call(Method::PATCH, &path).json(&json!({"status": "active"}))).await;
        assert_eq!((status, active["status"].as_str()), (200, Some("active")));

        // Revoked: final, idempotent, still listed.
        let (status, _, _) = sent(call(Method::DELETE, &path)).await;
        assert_eq!(status, 204);
        let (status, _, _) = sent(call(Method::DELETE, &path)).await;
        assert_eq!(status, 204, "revoking again changes nothing");
        let (_, _, revoked) = sent(call(Method::GET, &path)).await;
        assert_eq!(revoked["status"], "revoked");
        assert!(revoked["revoked_at"].is_string());
        for patch in [json!({"status": "active"}), json!({"name": "back"})] {
            let (status, _, body) = sent(call(Method::PATCH, &path).json(&patch)).await;
            assert_eq!(status, 409, "{patch}: {body}");
        }
        let (status, _, body) =
            sent(call(Method::PATCH, &path).json(&json!({"status": "revoked"}))).await;
        assert_eq!(status, 400, "{body}");

        // Audited once per change, announced as admin.agent.*.
        let (_, _, audit) = sent(call(Method::GET, "/api/v1/audit-logs")).await;
        let actions: Vec<&str> = audit["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["target"] == id.as_str() || e["target_id"] == id.as_str())
            .filter_map(|e| e["action"].as_str())
            .collect();
        for action in ["agent.registered", "agent.updated", "agent.revoked"] {
            assert!(actions.contains(&action), "{action} in {audit}");
        }
        assert_eq!(
            actions.iter().filter(|a| **a == "agent.revoked").count(),
            1,
            "{actions:?}"
        );
        app.shutdown().await;
    }
}

#[tokio::test]
async fn hostile_and_foreign_agent_requests_are_refused_and_change_nothing() {
    for backend in BACKENDS {
        let app = TestApp::spawn_with(backend, &[("SVC_SERVER__BASE_DOMAIN", "localhost")]).await;
        let operator = operator_token(&app).await;
        let acme = create_tenant(&app, &operator, "acme").await;
        let other = create_tenant(&app, &operator, "other").await;
        let token = management_token(&app, &acme, None).await;
        let call = |method: Method, path: &str| request(&app, &acme, &token, method, path);

        let with = |f: &dyn Fn(&mut Value)| {
            let mut body = agent_body(&acme.client_id);
            f(&mut body);
            body
        };
        let cases: Vec<(Value, &str)> = vec![
            (
                with(&|b| b["jwks"]["keys"][0]["d"] = json!("private")),
                "jwks",
            ),
            (with(&|b| b["jwks"] = json!({"keys": []})), "jwks"),
            (with(&|b| b["owner"] = json!(other.client_id)), "owner"),
            (
                with(&|b| b["owner"] = json!("usr_01jd0000000000000000000000")),
                "owner",
            ),
            (with(&|b| b["owner"] = json!("org_x")), "owner"),
            (
                with(&|b| b["allowed_scopes"] = json!(["openid"])),
                "allowed_scopes",
            ),
            (
                with(&|b| b["allowed_resources"] = json!(["not a uri"])),
                "allowed_resources",
            ),
            (
                with(&|b| b["metadata"] = json!({"x": "y".repeat(5000)})),
                "metadata",
            ),
            (with(&|b| b["metadata"] = json!([1])), "metadata"),
            (with(&|b| b["name"] = json!("")), "name"),
            (with(&|b| b["client_secret"] = json!("s")), "client_secret"),
            (json!("not an object"), "agent"),
        ];
        for (body, field) in &cases {
            let (status, _, problem) = sent(call(Method::POST, "/api/v1/agents").json(body)).await;
            assert_eq!(status, 400, "{backend:?} {field}: {problem}");
            assert!(
                problem.to_string().contains(field),
                "{backend:?}: the refusal names {field}: {problem}"
            );
        }
        let (_, _, listed) = sent(call(Method::GET, "/api/v1/agents")).await;
        assert_eq!(listed["items"], json!([]), "nothing was written");

        // Another tenant's agent, or a malformed id, is not found; the wrong scope is 403.
        let other_token = management_token(&app, &other, None).await;
        let (status, _, theirs) = sent(
            request(&app, &other, &other_token, Method::POST, "/api/v1/agents")
                .json(&agent_body(&other.client_id)),
        )
        .await;
        assert_eq!(status, 201, "{theirs}");
        let theirs = format!("/api/v1/agents/{}", theirs["id"].as_str().unwrap());
        for method in [Method::GET, Method::DELETE] {
            let (status, _, _) = sent(call(method.clone(), &theirs)).await;
            assert_eq!(status, 404, "{method} of another tenant's agent");
        }
        let (status, _, _) =
            sent(call(Method::PATCH, &theirs).json(&json!({"status": "suspended"}))).await;
        assert_eq!(status, 404);
        let (_, _, still) = sent(request(&app, &other, &other_token, Method::GET, &theirs)).await;
        assert_eq!(
            still["status"], "active",
            "the other tenant's agent is untouched"
        );
        let (status, _, _) = sent(call(Method::GET, "/api/v1/agents/agt_nope")).await;
        assert_eq!(status, 404);
        let (status, _, _) = sent(call(Method::GET, "/api/v1/agents?after=nope")).await;
        assert_eq!(status, 400);

        let reader = management_token(&app, &acme, Some("agents:read")).await;
        let (status, _, problem) = sent(
            request(&app, &acme, &reader, Method::POST, "/api/v1/agents")
                .json(&agent_body(&acme.client_id)),
        )
        .await;
        assert_eq!(status, 403, "{problem}");
        assert_eq!(problem["error"], "insufficient_scope");
        app.shutdown().await;
    }
}
