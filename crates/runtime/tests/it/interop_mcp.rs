//! MCP authorization against a real MCP client nobody here wrote (issue 19, "done when"): the MCP
//! TypeScript SDK's own OAuth client (`interop/mcp/client.mjs`) connects to `svc-sdk`'s sample
//! MCP server (compiled in here from `crates/sdk/examples/mcp_server.rs`), follows its 401 to the
//! RFC 9728 metadata and svc's RFC 8414 metadata, registers itself (RFC 7591, registration open),
//! sends a person through the hosted pages in Chromium (PKCE, RFC 8707 `resource`), and lists and
//! calls tools with the audience-bound token; a tool the person's roles do not grant is refused
//! until an administrator grants it, then the SDK's step-up re-authorization gets it. The service
//! runs single-tenant (issuer `http://127.0.0.1:<port>`) on SQLite and PostgreSQL.
//!
//! Then the same run with the SDK's `clientMetadataUrl`: registration is closed, the tenant
//! accepts client ID metadata documents, and the SDK's client_id is the https URL of a document
//! served on loopback with a certificate of a throw-away CA (the SDK takes only https URLs with
//! a path), which the service's document fetcher trusts (`BuildOptions::outbound_roots`): svc
//! fetches the document, the SDK never registers, and the tokens name the URL as `client_id`.

use crate::common::{send_json as call, single_tenant_trusting};
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

/// Serves the MCP client's metadata document over https on loopback, with a server certificate
/// of `tls`'s CA: its URL.
async fn serve_document_over_tls(tls: &svc_testkit::tls::TlsFixture) -> String {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("https://{}/mcp-client.json", listener.local_addr().unwrap());
    let document = json!({
        "client_id": url,
        "client_name": "MCP interop client (client ID metadata document)",
        "redirect_uris": [REDIRECT_URI],
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "scope": "tools:search tools:book",
    })
    .to_string();
    let router = axum::Router::new().route(
        "/mcp-client.json",
        axum::routing::get(
            move || async move { ([("content-type", "application/json")], document) },
        ),
    );
    let config =
        axum_server::tls_rustls::RustlsConfig::from_pem_file(&tls.cert_path, &tls.key_path)
            .await
            .unwrap();
    let server = axum_server::from_tcp_rustls(listener, config).unwrap();
    tokio::spawn(async move { server.serve(router.into_make_service()).await });
    url
}

async fn mcp_typescript_sdk(backend: Backend, by_document: bool) {
    require_prerequisites(&[
        Prerequisite::Chromium,
        Prerequisite::NodeModules,
        Prerequisite::PlaywrightCore,
        Prerequisite::McpSdk,
    ]);
    let certificates = tempfile::tempdir().unwrap();
    let tls = svc_testkit::tls::generate(certificates.path());
    let mut settings = vec![
        ("SVC_AUTH__ARGON2_MEMORY_KIB", "8192"),
        ("SVC_AUTH__ARGON2_ITERATIONS", "1"),
        ("SVC_DYNAMIC_REGISTRATION__ENABLED", "true"),
    ];
    let mut roots = Vec::new();
    if by_document {
        settings.push((
            "SVC_DYNAMIC_REGISTRATION__CLIENT_ID_METADATA_DOCUMENTS",
            "true",
        ));
        roots.push(tls.ca_pem.clone().into_bytes());
    }
    let (app, tenant, token) = single_tenant_trusting(backend, &settings, roots).await;

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
        if by_document {
            json!({"policy": "disabled", "client_id_metadata_documents": true})
        } else {
            json!({"policy": "open"})
        },
        200,
    )
    .await;
    let document_url = if by_document {
        Some(serve_document_over_tls(&tls).await)
    } else {
        None
    };

    let grant = json!({"permissions": [{"resource": mcp_url, "name": "tools:search"},
                                       {"resource": mcp_url, "name": "tools:book"}]});
    let mut env: Vec<(String, String)> = [
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
    if let Some(url) = &document_url {
        env.push(("CLIENT_METADATA_URL".to_owned(), url.clone()));
    }
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

    if let Some(url) = &document_url {
        // The SDK never registered: the application is the document's, listed by its URL.
        assert_eq!(summary["client_id"], url.as_str(), "{summary}");
        assert_eq!(summary["registered"], false, "{summary}");
        let listed = call(
            &app,
            &token,
            Method::GET,
            "/api/v1/applications",
            Value::Null,
            200,
        )
        .await;
        assert!(
            listed.to_string().contains(url.as_str()),
            "the document's application is listed: {listed}"
        );
        server.abort();
        app.shutdown().await;
        return;
    }
    assert_eq!(summary["registered"], true, "{summary}");
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
    mcp_typescript_sdk(Backend::Sqlite, false).await;
}

#[tokio::test]
async fn interop_mcp_typescript_sdk_by_document_sqlite() {
    mcp_typescript_sdk(Backend::Sqlite, true).await;
}

#[tokio::test]
async fn interop_mcp_typescript_sdk_by_document_postgres() {
    mcp_typescript_sdk(Backend::Postgres, true).await;
}

#[tokio::test]
async fn interop_mcp_typescript_sdk_postgres() {
    mcp_typescript_sdk(Backend::Postgres, false).await;
}
