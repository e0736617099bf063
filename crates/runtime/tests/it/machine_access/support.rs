//! Shared helpers for the machine access tests: an operator token from the real CLI, tenant
//! creation with its management credentials, token requests on a tenant's host, and the
//! environment that serves tenants under `localhost`.

pub(super) use crate::common::operator_token;
use serde_json::{Value, json};
use svc_testkit::TestApp;

pub(super) struct Tenant {
    pub(super) host: String,
    pub(super) client_id: String,
    pub(super) client_secret: String,
}

pub(super) async fn create_tenant(app: &TestApp, operator: &str, slug: &str) -> Tenant {
    let response = app
        .request(reqwest::Method::POST, "/api/v1/control-plane/tenants")
        .bearer_auth(operator)
        .json(&json!({"slug": slug, "display_name": slug.to_uppercase()}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["tenant"]["slug"], slug);
    let port = app.url.rsplit(':').next().unwrap();
    Tenant {
        host: format!("{slug}.localhost:{port}"),
        client_id: body["management_application"]["client_id"]
            .as_str()
            .unwrap()
            .to_owned(),
        client_secret: body["management_application"]["client_secret"]
            .as_str()
            .unwrap()
            .to_owned(),
    }
}

pub(super) async fn token(
    app: &TestApp,
    tenant: &Tenant,
    scope: Option<&str>,
) -> reqwest::Response {
    let mut form = vec![("grant_type", "client_credentials")];
    if let Some(scope) = scope {
        form.push(("scope", scope));
    }
    app.request(reqwest::Method::POST, "/oauth/token")
        .header("host", &tenant.host)
        .basic_auth(&tenant.client_id, Some(&tenant.client_secret))
        .form(&form)
        .send()
        .await
        .unwrap()
}

pub(super) async fn access_token(app: &TestApp, tenant: &Tenant, scope: Option<&str>) -> String {
    let response = token(app, tenant, scope).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["cache-control"], "no-store");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["token_type"], "Bearer");
    assert!(
        body.get("refresh_token").is_none(),
        "never a refresh token for client_credentials"
    );
    body["access_token"].as_str().unwrap().to_owned()
}

pub(super) fn env() -> Vec<(&'static str, &'static str)> {
    vec![("SVC_SERVER__BASE_DOMAIN", "localhost")]
}

pub(super) async fn token_status(app: &TestApp, tenant: &Tenant) -> u16 {
    token(app, tenant, None).await.status().as_u16()
}
