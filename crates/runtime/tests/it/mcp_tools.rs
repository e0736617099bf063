//! MCP tool authorization (issue 19 item 7) end to end, on SQLite and PostgreSQL: `svc-sdk`'s
//! sample MCP server (`crates/sdk/examples/mcp_server.rs`, compiled in here) registered as an API
//! resource with one permission per tool; what a client finds by following the server's `401`
//! (RFC 9728 metadata naming the svc issuer, whose RFC 8414 metadata names the agent
//! challenge); an agent's audience-bound token that lists and calls only the tools its scopes
//! name; `403 insufficient_scope` naming the held and the missing tool permission; a token for another API
//! refused. The service runs single-tenant so the SDK's validator reaches the issuer by name.

#[path = "../../../sdk/examples/mcp_server.rs"]
pub(crate) mod mcp_server;

use crate::agent_challenge::{JWT_BEARER, now};
use crate::common::{send_json, single_tenant};
use crate::interop::str_field;
use reqwest::Method;
use serde_json::{Value, json};
use svc_crypto::SigningKey;
use svc_domain::SigningAlg;
use svc_testkit::{BACKENDS, TestApp};

async fn post_json(app: &TestApp, token: &str, path: &str, body: Value) -> Value {
    send_json(app, token, Method::POST, path, body, 201).await
}

/// The agent's token for `resource` with `scope` (all it may have when `None`).
async fn agent_token(
    app: &TestApp,
    key: &SigningKey,
    agent: &str,
    resource: &str,
    scope: Option<&str>,
) -> String {
    let challenge: Value = app
        .request(Method::POST, "/oauth/agent/challenge")
        .form(&[("agent_id", agent)])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let assertion = key
        .sign_jwt(
            "JWT",
            &json!({"iss": agent, "sub": agent, "aud": app.url, "exp": now() + 60,
                    "iat": now(), "nonce": challenge["challenge"]}),
        )
        .unwrap();
    let mut form = vec![
        ("grant_type", JWT_BEARER),
        ("assertion", assertion.as_str()),
        ("resource", resource),
    ];
    if let Some(scope) = scope {
        form.push(("scope", scope));
    }
    let answer: Value = app
        .request(Method::POST, "/oauth/token")
        .form(&form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    str_field(&answer, "access_token")
}

/// A JSON-RPC call to the MCP server: status, `WWW-Authenticate`, body.
pub(crate) async fn rpc(
    http: &reqwest::Client,
    endpoint: &str,
    token: Option<&str>,
    method: &str,
    params: Value,
) -> (u16, String, Value) {
    let mut request = http
        .post(endpoint)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (
        status,
        challenge,
        response.json().await.unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn an_agent_calls_only_the_tools_its_token_names() {
    for backend in BACKENDS {
        let (app, tenant, management) =
            single_tenant(backend, &[("SVC_CHALLENGE__ENABLED", "true")]).await;

        // The MCP server on a loopback port, registered as an API with a permission per tool.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let resource = format!("{base}/mcp");
        let router = mcp_server::router(
            svc_sdk::Validator::new(&app.url),
            mcp_server::McpConfig {
                issuer: app.url.clone(),
                tenant_id: tenant.id.clone(),
                resource: resource.clone(),
            },
        );
        let server = tokio::spawn(async move { axum::serve(listener, router).await });
        post_json(
            &app,
            &management,
            "/api/v1/api-resources",
            json!({"identifier": resource, "name": "Trips (MCP)",
                   "permissions": [{"name": "tools:search"}, {"name": "tools:book"}]}),
        )
        .await;
        post_json(
            &app,
            &management,
            "/api/v1/api-resources",
            json!({"identifier": "https://other.example", "name": "Other",
                   "permissions": [{"name": "tools:search"}]}),
        )
        .await;
        let key = SigningKey::generate(SigningAlg::EdDsa).unwrap();
        let agent = post_json(
            &app,
            &management,
            "/api/v1/agents",
            json!({"name": "Trip agent", "owner": tenant.client_id,
                   "jwks": {"keys": [key.public_jwk()]},
                   "allowed_scopes": ["tools:search", "tools:book"],
                   "allowed_resources": [resource, "https://other.example"]}),
        )
        .await;
        let agent = str_field(&agent, "id");
        let http = reqwest::Client::new();

        // Without a token: 401 pointing to the RFC 9728 metadata, which names svc, whose
        // RFC 8414 metadata names the agent challenge.
        let (status, challenge, _) = rpc(&http, &resource, None, "initialize", json!({})).await;
        assert_eq!(status, 401, "{backend:?}");
        let metadata_url = format!("{base}/.well-known/oauth-protected-resource/mcp");
        assert!(
            challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
            "{challenge}"
        );
        let metadata: Value = http
            .get(&metadata_url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(metadata["resource"], resource.as_str());
        assert_eq!(metadata["authorization_servers"], json!([app.url]));
        assert_eq!(
            metadata["scopes_supported"],
            json!(["tools:search", "tools:book"])
        );
        let server_metadata: Value = http
            .get(format!(
                "{}/.well-known/oauth-authorization-server",
                app.url
            ))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            server_metadata["agent_challenge_endpoint"],
            format!("{}/oauth/agent/challenge", app.url)
        );

        // A token naming one tool: initialize, a list of that tool alone, calls of it only.
        let search_only = agent_token(&app, &key, &agent, &resource, Some("tools:search")).await;
        let (status, _, init) = rpc(
            &http,
            &resource,
            Some(&search_only),
            "initialize",
            json!({}),
        )
        .await;
        assert_eq!(status, 200, "{init}");
        assert_eq!(init["result"]["capabilities"], json!({"tools": {}}));
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        // A notification is accepted without an answer, with a valid token only; no stream.
        for (token, status) in [(Some(search_only.as_str()), 202), (None, 401)] {
            let mut request = http
                .post(&resource)
                .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), status);
            if status == 202 {
                assert_eq!(response.text().await.unwrap(), "");
            }
        }
        let stream = http
            .get(&resource)
            .bearer_auth(&search_only)
            .send()
            .await
            .unwrap();
        assert_eq!(stream.status(), 405);
        let (_, _, listed) = rpc(
            &http,
            &resource,
            Some(&search_only),
            "tools/list",
            json!({}),
        )
        .await;
        let names: Vec<&str> = listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(names, ["search"]);
        let (status, _, called) = rpc(
            &http,
            &resource,
            Some(&search_only),
            "tools/call",
            json!({"name": "search", "arguments": {"to": "Lisbon"}}),
        )
        .await;
        assert_eq!(status, 200, "{called}");
        assert_eq!(
            called["result"]["content"][0]["text"],
            format!("search done for {agent}")
        );
        let (status, challenge, _) = rpc(
            &http,
            &resource,
            Some(&search_only),
            "tools/call",
            json!({"name": "book", "arguments": {}}),
        )
        .await;
        assert_eq!(status, 403);
        assert!(
            challenge.contains("error=\"insufficient_scope\"")
                && challenge.contains("scope=\"tools:search tools:book\""),
            "{challenge}"
        );

        // Without `scope`, every tool it may have there.
        let every = agent_token(&app, &key, &agent, &resource, None).await;
        let (_, _, listed) = rpc(&http, &resource, Some(&every), "tools/list", json!({})).await;
        assert_eq!(
            listed["result"]["tools"].as_array().unwrap().len(),
            2,
            "{listed}"
        );
        let (status, _, _) = rpc(
            &http,
            &resource,
            Some(&every),
            "tools/call",
            json!({"name": "book", "arguments": {}}),
        )
        .await;
        assert_eq!(status, 200);

        // A token for another API is not this server's, whatever its scopes.
        let elsewhere = agent_token(
            &app,
            &key,
            &agent,
            "https://other.example",
            Some("tools:search"),
        )
        .await;
        let (status, challenge, _) = rpc(
            &http,
            &resource,
            Some(&elsewhere),
            "tools/call",
            json!({"name": "search", "arguments": {}}),
        )
        .await;
        assert_eq!(status, 401);
        assert!(challenge.contains("invalid_token"), "{challenge}");
        server.abort();
        app.shutdown().await;
    }
}
