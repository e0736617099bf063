//! MCP authorization against a real MCP client nobody here wrote (issue 19, "done when"): the MCP
//! TypeScript SDK's own OAuth client (`interop/mcp/client.mjs`) connects to `svc-sdk`'s sample
//! MCP server (compiled in here from `crates/sdk/examples/mcp_server.rs`), follows its 401 to the
//! RFC 9728 metadata and svc's RFC 8414 metadata, registers itself (RFC 7591, registration open),
//! sends a person through the hosted pages in Chromium (PKCE, RFC 8707 `resource`), and lists and
//! calls tools with the audience-bound token; a tool the person's roles do not grant is refused
//! until an administrator grants it, then the SDK's step-up re-authorization gets it. The service
//! runs single-tenant (issuer `http://127.0.0.1:<port>`) on SQLite and PostgreSQL.

use crate::common::{send_json as call, single_tenant};
use crate::interop::{
    Prerequisite, chromium_path, repo_root, require_prerequisites, run_script, str_field,
};
use crate::mcp_tools::mcp_server;
use reqwest::Method;
use serde_json::{Value, json};
use std::path::Path;
use svc_testkit::Backend;

/// Where the MCP client is sent back to; never served (the script intercepts it).
const REDIRECT_URI: &str = "http://127.0.0.1:65501/callback";
const EMAIL: &str = "grace.hopper@example.com";
const PASSWORD: &str = "Compiler-A-0-1952!";

async fn mcp_typescript_sdk(backend: Backend) {
    require_prerequisites(&[
        Prerequisite::Chromium,
        Prerequisite::NodeModules,
        Prerequisite::PlaywrightCore,
        Prerequisite::McpSdk,
    ]);
    let (app, tenant, token) = single_tenant(
        backend,
        &[
            ("SVC_AUTH__ARGON2_MEMORY_KIB", "8192"),
            ("SVC_AUTH__ARGON2_ITERATIONS", "1"),
            ("SVC_DYNAMIC_REGISTRATION__ENABLED", "true"),
        ],
    )
    .await;

    // The MCP server on a loopback port, registered as an API with a permission per tool.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mcp_url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let router = mcp_server::router(
        svc_sdk::Validator::new(&app.url),
        mcp_server::McpConfig {
            issuer: app.url.clone(),
            tenant_id: tenant.id.clone(),
            resource: mcp_url.clone(),
        },
    );
    let server = tokio::spawn(async move { axum::serve(listener, router).await });
    call(
        &app,
        &token,
        Method::POST,
        "/api/v1/api-resources",
        json!({"identifier": mcp_url, "name": "Trips (MCP)",
               "permissions": [{"name": "tools:search", "description": "Search trips"},
                               {"name": "tools:book", "description": "Book trips"}]}),
        201,
    )
    .await;
    // Grace may search (a tenant role), not book; registration is open to anyone.
    call(
        &app,
        &token,
        Method::POST,
        "/api/v1/roles",
        json!({"key": "traveller", "kind": "tenant",
               "permissions": [{"resource": mcp_url, "name": "tools:search"}]}),
        201,
    )
    .await;
    let user = call(
        &app,
        &token,
        Method::POST,
        "/api/v1/tenant-users",
        json!({"email": EMAIL, "password": PASSWORD, "name": "Grace Hopper", "email_verified": true}),
        201,
    )
    .await;
    let user = str_field(&user, "id");
    call(
        &app,
        &token,
        Method::PUT,
        &format!("/api/v1/tenant-users/{user}/roles"),
        json!({"roles": ["traveller"]}),
        200,
    )
    .await;
    call(
        &app,
        &token,
        Method::PUT,
        "/api/v1/registration-policy",
        json!({"policy": "open"}),
        200,
    )
    .await;

    let grant = json!({"permissions": [{"resource": mcp_url, "name": "tools:search"},
                                       {"resource": mcp_url, "name": "tools:book"}]});
    let env: Vec<(String, String)> = [
        ("ISSUER", app.url.clone()),
        ("MCP_URL", mcp_url.clone()),
        ("REDIRECT_URI", REDIRECT_URI.to_owned()),
        ("USER_EMAIL", EMAIL.to_owned()),
        ("USER_PASSWORD", PASSWORD.to_owned()),
        ("USER_ID", user.clone()),
        ("MANAGEMENT_TOKEN", token.clone()),
        ("GRANT_URL", format!("{}/api/v1/roles/traveller", app.url)),
        ("GRANT_BODY", grant.to_string()),
        ("CHROMIUM_PATH", chromium_path().display().to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let run = run_script(
        Path::new("node"),
        &repo_root().join("interop/mcp/client.mjs"),
        &env,
    )
    .await;
    let summary = run.summary(&format!("MCP TypeScript SDK on {backend:?}"));
    assert_eq!(summary["issuer"], app.url);
    assert_eq!(summary["resource"], mcp_url.as_str());
    // Pairwise for a registered third-party client, and the same in every token it got.
    assert!(
        summary["sub"].as_str().is_some_and(|sub| sub != user),
        "{summary}"
    );
    assert_eq!(summary["tools_before"], json!(["search"]), "{summary}");
    assert_eq!(
        summary["tools_after"],
        json!(["search", "book"]),
        "{summary}"
    );
    assert_eq!(summary["refused_status"], 403, "{summary}");

    // The client the SDK registered is an ordinary application of the tenant: public, PKCE,
    // the registered scope the MCP server's metadata offered.
    let client_id = str_field(&summary, "client_id");
    let registered = call(
        &app,
        &token,
        Method::GET,
        &format!("/api/v1/applications/{client_id}"),
        Value::Null,
        200,
    )
    .await;
    assert_eq!(
        registered["token_endpoint_auth_method"], "none",
        "{registered}"
    );
    assert_eq!(
        registered["redirect_uris"],
        json!([REDIRECT_URI]),
        "{registered}"
    );
    server.abort();
    app.shutdown().await;
}

#[tokio::test]
async fn interop_mcp_typescript_sdk_sqlite() {
    mcp_typescript_sdk(Backend::Sqlite).await;
}

#[tokio::test]
async fn interop_mcp_typescript_sdk_postgres() {
    mcp_typescript_sdk(Backend::Postgres).await;
}
