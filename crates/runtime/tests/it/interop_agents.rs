//! Agents against real third-party clients: `interop/authlib/agent.py` drives challenge-response
//! (`[challenge]`) with Authlib's `AssertionSession` (RFC 7521/7523, its assertion signed by
//! joserfc) under an ES256 key this test generated and registered for the agent; PyJWT verifies
//! the token, the API's resource server introspects it, and a replayed answer is refused.
//! The service runs single-tenant (issuer `http://127.0.0.1:<port>`) on both backends.

use crate::common::{default_tenant, operator_token};
use crate::interop::{Prerequisite, repo_root, require_prerequisites, run_script, str_field};
use base64::Engine;
use serde_json::{Value, json};
use svc_testkit::{Backend, TestApp};

const BOOKINGS: &str = "https://bookings.interop.example";

/// `method path` with `body` as the tenant's management application, expecting `status`.
async fn call(app: &TestApp, token: &str, path: &str, body: Value, status: u16) -> Value {
    let response = app
        .request(reqwest::Method::POST, path)
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let got = response.status().as_u16();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    assert_eq!(got, status, "POST {path}: {body}");
    body
}

/// PKCS#8 PEM of `key`'s private half, as Authlib and joserfc read it.
pub(crate) fn pem(key: &svc_crypto::SigningKey) -> String {
    let der = key.to_pkcs8().unwrap();
    let body = base64::engine::general_purpose::STANDARD.encode(der.as_slice());
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(64)
        .map(|line| std::str::from_utf8(line).unwrap())
        .collect();
    format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        lines.join("\n")
    )
}

async fn authlib_agent(backend: Backend) {
    require_prerequisites(&[Prerequisite::Venv]);
    let app = TestApp::spawn_with(
        backend,
        &[
            ("SVC_TENANT__DEFAULT_TENANT_SLUG", "default"),
            ("SVC_CHALLENGE__ENABLED", "true"),
        ],
    )
    .await;
    let tenant = default_tenant(&app, &operator_token(&app).await).await;
    let token = app
        .request(reqwest::Method::POST, "/oauth/token")
        .basic_auth(&tenant.client_id, Some(&tenant.client_secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    let token = str_field(&token, "access_token");
    call(
        &app,
        &token,
        "/api/v1/api-resources",
        json!({"identifier": BOOKINGS, "name": "Bookings",
               "permissions": [{"name": "bookings:read"}, {"name": "bookings:write"}]}),
        201,
    )
    .await;
    let server = call(
        &app,
        &token,
        "/api/v1/applications",
        json!({"name": "Bookings API", "grant_types": ["client_credentials"],
               "token_endpoint_auth_method": "client_secret_basic", "redirect_uris": [],
               "first_party": true, "allowed_scopes": [], "api_audience": BOOKINGS}),
        201,
    )
    .await;
    let key = svc_crypto::SigningKey::generate(svc_domain::SigningAlg::Es256).unwrap();
    let agent = call(
        &app,
        &token,
        "/api/v1/agents",
        json!({"name": "Interop agent (authlib)", "owner": tenant.client_id,
               "jwks": {"keys": [key.public_jwk()]},
               "allowed_scopes": ["bookings:read", "bookings:write"],
               "allowed_resources": [BOOKINGS]}),
        201,
    )
    .await;
    let agent = str_field(&agent, "id");
    let env = vec![
        ("ISSUER".to_owned(), app.url.clone()),
        ("AGENT_ID".to_owned(), agent.clone()),
        ("AGENT_PRIVATE_KEY_PEM".to_owned(), pem(&key)),
        ("AGENT_KID".to_owned(), key.kid().to_owned()),
        ("RESOURCE".to_owned(), BOOKINGS.to_owned()),
        ("RS_CLIENT_ID".to_owned(), str_field(&server, "client_id")),
        (
            "RS_CLIENT_SECRET".to_owned(),
            str_field(&server, "client_secret"),
        ),
    ];
    let run = run_script(
        &repo_root().join("interop/authlib/.venv/bin/python"),
        &repo_root().join("interop/authlib/agent.py"),
        &env,
    )
    .await;
    let summary = run.summary(&format!("authlib agent on {backend:?}"));
    assert_eq!(summary["issuer"], app.url);
    assert_eq!(summary["sub"], agent.as_str(), "{summary}");
    assert_eq!(summary["aud"], BOOKINGS, "{summary}");
    assert_eq!(summary["subject_type"], "agent", "{summary}");
    assert_eq!(summary["introspected"], true, "{summary}");
    assert_eq!(summary["replay_error"], "invalid_grant", "{summary}");
    assert_eq!(summary["second_token"], true, "{summary}");
    app.shutdown().await;
}

#[tokio::test]
async fn interop_authlib_agent_sqlite() {
    authlib_agent(Backend::Sqlite).await;
}

#[tokio::test]
async fn interop_authlib_agent_postgres() {
    authlib_agent(Backend::Postgres).await;
}
