//! API keys that act as a person or an agent at one of the tenant's APIs (issue 19 item 5,
//! `[api_keys].subject_keys`), on SQLite and PostgreSQL, end to end: created through
//! `/api/v1/api-keys`, refused by the management API, described at introspection to that API's
//! resource servers only, and accepted by `svc-sdk` (`Validator::with_introspection`) in the
//! sample MCP server — a person's key carrying only the permissions their roles still grant,
//! an agent's within its allowed scopes; revocation, a role taken away and suspension end what
//! the key may do at the next call. Bad requests are refused, each naming the member at fault.

use crate::common::{send_json, single_tenant};
use crate::interop::str_field;
use crate::mcp_tools::{mcp_server, rpc};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;
use svc_testkit::{BACKENDS, TestApp};

const EMAIL: &str = "grace.hopper@example.com";

/// `/oauth/introspect` of `key` by the confidential application `(id, secret)`.
async fn introspect(app: &TestApp, (id, secret): (&str, &str), key: &str) -> Value {
    app.request(Method::POST, "/oauth/introspect")
        .basic_auth(id, Some(secret))
        .form(&[("token", key)])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// The tenant's management application, calling its API.
struct Admin<'a> {
    app: &'a TestApp,
    token: &'a str,
}

impl Admin<'_> {
    async fn call(&self, method: Method, path: &str, body: Value, status: u16) -> Value {
        send_json(self.app, self.token, method, path, body, status).await
    }
}

/// A confidential resource server application for `audience`: its id and secret.
async fn resource_server(app: &TestApp, token: &str, audience: &str) -> (String, String) {
    let created = send_json(
        app,
        token,
        Method::POST,
        "/api/v1/applications",
        json!({"name": format!("RS {audience}"), "grant_types": ["client_credentials"],
               "token_endpoint_auth_method": "client_secret_basic", "redirect_uris": [],
               "first_party": true, "allowed_scopes": [], "api_audience": audience}),
        201,
    )
    .await;
    (
        str_field(&created, "client_id"),
        str_field(&created, "client_secret"),
    )
}

#[tokio::test]
async fn keys_act_as_a_person_or_an_agent_at_one_api() {
    for backend in BACKENDS {
        let (app, tenant, token) =
            single_tenant(backend, &[("SVC_API_KEYS__SUBJECT_KEYS", "true")]).await;
        let api = Admin {
            app: &app,
            token: &token,
        };

        // The MCP server as the API, its resource server credentials, another API beside it.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mcp = format!("http://{}/mcp", listener.local_addr().unwrap());
        for (identifier, permissions) in [
            (
                mcp.as_str(),
                json!([{"name": "tools:search"}, {"name": "tools:book"}]),
            ),
            ("https://other.example", json!([{"name": "tools:search"}])),
        ] {
            api.call(
                Method::POST,
                "/api/v1/api-resources",
                json!({"identifier": identifier, "name": identifier, "permissions": permissions}),
                201,
            )
            .await;
        }
        let rs = resource_server(&app, &token, &mcp).await;
        let other_rs = resource_server(&app, &token, "https://other.example").await;
        let validator = svc_sdk::Validator::new(&app.url)
            .with_introspection(&rs.0, &rs.1)
            .with_key_cache_ttl(Duration::ZERO);
        let router = mcp_server::router(
            validator,
            mcp_server::McpConfig {
                issuer: app.url.clone(),
                tenant_id: tenant.id.clone(),
                resource: mcp.clone(),
            },
        );
        let server = tokio::spawn(async move { axum::serve(listener, router).await });

        // Grace may search there (a tenant role), not book.
        api.call(
            Method::POST,
            "/api/v1/roles",
            json!({"key": "traveller", "kind": "tenant",
                   "permissions": [{"resource": mcp, "name": "tools:search"}]}),
            201,
        )
        .await;
        let grace = api
            .call(
                Method::POST,
                "/api/v1/tenant-users",
                json!({"email": EMAIL, "name": "Grace Hopper", "email_verified": true,
                   "password": "Compiler-A-0-1952!"}),
                201,
            )
            .await;
        let grace = str_field(&grace, "id");
        let roles = format!("/api/v1/tenant-users/{grace}/roles");
        api.call(Method::PUT, &roles, json!({"roles": ["traveller"]}), 200)
            .await;
        let agent_key = svc_crypto::SigningKey::generate(svc_domain::SigningAlg::EdDsa).unwrap();
        let agent = api
            .call(
                Method::POST,
                "/api/v1/agents",
                json!({"name": "Trip agent", "owner": tenant.client_id,
                   "jwks": {"keys": [agent_key.public_jwk()]},
                   "allowed_scopes": ["tools:search", "tools:book"],
                   "allowed_resources": [mcp]}),
                201,
            )
            .await;
        let agent = str_field(&agent, "id");

        // A person's key asking for both tools: it carries what Grace holds, search only.
        let created = api
            .call(
                Method::POST,
                "/api/v1/api-keys",
                json!({"name": "Grace's trips script", "subject": grace, "resource": mcp,
                   "scopes": ["tools:search", "tools:book"]}),
                201,
            )
            .await;
        assert_eq!(created["subject"], grace.as_str(), "{created}");
        assert!(created["resource_id"].as_str().unwrap().starts_with("res_"));
        let person_key = str_field(&created, "key");
        let person_key_id = str_field(&created, "id");
        let http = reqwest::Client::new();
        let (status, _, init) = rpc(&http, &mcp, Some(&person_key), "initialize", json!({})).await;
        assert_eq!(status, 200, "{backend:?}: {init}");
        let (_, _, listed) = rpc(&http, &mcp, Some(&person_key), "tools/list", json!({})).await;
        assert_eq!(listed["result"]["tools"][0]["name"], "search", "{listed}");
        assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 1);
        let (status, _, called) = rpc(
            &http,
            &mcp,
            Some(&person_key),
            "tools/call",
            json!({"name": "search", "arguments": {}}),
        )
        .await;
        assert_eq!(status, 200, "{called}");
        assert_eq!(
            called["result"]["content"][0]["text"],
            format!("search done for {grace}")
        );
        let (status, challenge, _) = rpc(
            &http,
            &mcp,
            Some(&person_key),
            "tools/call",
            json!({"name": "book", "arguments": {}}),
        )
        .await;
        assert_eq!(status, 403, "{challenge}");
        assert!(challenge.contains("insufficient_scope"), "{challenge}");

        // Introspection: that API's resource server sees Grace; another API's sees nothing;
        // the management API refuses the key.
        let seen = introspect(&app, (&rs.0, &rs.1), &person_key).await;
        assert_eq!(seen["active"], true, "{seen}");
        assert_eq!(seen["sub"], grace.as_str());
        assert_eq!(seen["subject_type"], "human");
        assert_eq!(seen["aud"], mcp.as_str());
        assert_eq!(seen["scope"], "tools:search");
        assert_eq!(seen["token_type"], "api_key");
        assert_eq!(seen["client_id"], person_key_id.as_str());
        let elsewhere = introspect(&app, (&other_rs.0, &other_rs.1), &person_key).await;
        assert_eq!(elsewhere, json!({"active": false}));
        send_json(
            &app,
            &person_key,
            Method::GET,
            "/api/v1/applications",
            Value::Null,
            401,
        )
        .await;

        // An agent's key books; the agent suspended, it stops at the next call.
        let created = api
            .call(
                Method::POST,
                "/api/v1/api-keys",
                json!({"name": "agent key", "subject": agent, "resource": mcp,
                   "scopes": ["tools:book"]}),
                201,
            )
            .await;
        let agent_api_key = str_field(&created, "key");
        let (status, _, called) = rpc(
            &http,
            &mcp,
            Some(&agent_api_key),
            "tools/call",
            json!({"name": "book", "arguments": {}}),
        )
        .await;
        assert_eq!(status, 200, "{called}");
        assert_eq!(
            called["result"]["content"][0]["text"],
            format!("book done for {agent}")
        );
        let seen = introspect(&app, (&rs.0, &rs.1), &agent_api_key).await;
        assert_eq!(seen["subject_type"], "agent", "{seen}");
        api.call(
            Method::PATCH,
            &format!("/api/v1/agents/{agent}"),
            json!({"status": "suspended"}),
            200,
        )
        .await;
        let (status, challenge, _) =
            rpc(&http, &mcp, Some(&agent_api_key), "tools/list", json!({})).await;
        assert_eq!(status, 401, "{challenge}");
        assert!(challenge.contains("invalid_token"), "{challenge}");

        // Grace's role taken away: her key grants nothing and is inactive; given back, it works;
        // revoked, it is refused at once (no cache here).
        api.call(Method::PUT, &roles, json!({"roles": []}), 200)
            .await;
        let (status, _, _) = rpc(&http, &mcp, Some(&person_key), "tools/list", json!({})).await;
        assert_eq!(status, 401);
        api.call(Method::PUT, &roles, json!({"roles": ["traveller"]}), 200)
            .await;
        let (status, _, _) = rpc(&http, &mcp, Some(&person_key), "tools/list", json!({})).await;
        assert_eq!(status, 200);
        let revoke = format!("/api/v1/api-keys/{person_key_id}");
        api.call(Method::DELETE, &revoke, Value::Null, 204).await;
        let (status, _, _) = rpc(&http, &mcp, Some(&person_key), "tools/list", json!({})).await;
        assert_eq!(status, 401);
        assert_eq!(
            introspect(&app, (&rs.0, &rs.1), &person_key).await,
            json!({"active": false})
        );

        // Bad requests, each refused with the member named and nothing created.
        let before = api
            .call(Method::GET, "/api/v1/api-keys?limit=200", Value::Null, 200)
            .await;
        let count = before["items"].as_array().unwrap().len();
        for (body, status, member) in [
            (
                json!({"name": "x", "subject": grace, "scopes": ["tools:search"]}),
                400,
                "resource",
            ),
            (
                json!({"name": "x", "resource": mcp, "scopes": ["tools:search"]}),
                400,
                "subject",
            ),
            (
                json!({"name": "x", "subject": "app_01jd3k2m4n5p6q7r8s9t0v1w2x", "resource": mcp,
                       "scopes": ["tools:search"]}),
                400,
                "subject",
            ),
            (
                json!({"name": "x", "subject": grace, "resource": "https://unknown.example",
                       "scopes": ["tools:search"]}),
                400,
                "resource",
            ),
            (
                json!({"name": "x", "subject": grace, "resource": mcp,
                       "scopes": ["users:write"]}),
                400,
                "scopes",
            ),
            (
                json!({"name": "x", "subject": grace, "resource": mcp, "scopes": []}),
                400,
                "scopes",
            ),
            (
                json!({"name": "x", "subject": agent, "resource": "https://other.example",
                       "scopes": ["tools:search"]}),
                400,
                "subject",
            ),
        ] {
            let problem = api
                .call(Method::POST, "/api/v1/api-keys", body.clone(), status)
                .await;
            assert!(
                problem["detail"]
                    .as_str()
                    .is_some_and(|d| d.starts_with(&format!("{member}:"))),
                "{backend:?}: {body} → {problem} should name {member}"
            );
        }
        // Handing out a key in Grace's name needs users:write.
        let narrow: Value = app
            .request(Method::POST, "/oauth/token")
            .basic_auth(&tenant.client_id, Some(&tenant.client_secret))
            .form(&[
                ("grant_type", "client_credentials"),
                ("scope", "applications:write applications:read"),
            ])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        send_json(
            &app,
            &str_field(&narrow, "access_token"),
            Method::POST,
            "/api/v1/api-keys",
            json!({"name": "x", "subject": grace, "resource": mcp, "scopes": ["tools:search"]}),
            403,
        )
        .await;
        let after = api
            .call(Method::GET, "/api/v1/api-keys?limit=200", Value::Null, 200)
            .await;
        assert_eq!(after["items"].as_array().unwrap().len(), count);
        server.abort();
        app.shutdown().await;
    }
}
