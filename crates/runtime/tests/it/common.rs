//! Helpers every surface's tests share: an operator token from the real CLI, a tenant created
//! over the control plane with its management credentials, and a management access token.

use crate::binary;
use serde_json::{Value, json};
use svc_testkit::{Process, TestApp};

/// A tenant created over the control plane.
pub(crate) struct CreatedTenant {
    /// `ten_…`
    pub(crate) id: String,
    /// `{slug}.localhost:{port}`: the tenant's host (apps run with base domain `localhost`).
    pub(crate) host: String,
    /// The management application's client id.
    pub(crate) client_id: String,
    /// Its secret.
    pub(crate) client_secret: String,
}

/// Creates an operator token with the real CLI against the app's database.
pub(crate) async fn operator_token(app: &TestApp) -> String {
    let db = match &app.database_url {
        Some(url) => url.clone(),
        None => format!("sqlite://{}", app.sqlite_path().display()),
    };
    operator_token_at(&db).await
}

/// Creates an operator token with the real CLI against the database at `db` (for services run
/// as child processes, which have no [`TestApp`]).
pub(crate) async fn operator_token_at(db: &str) -> String {
    let work = tempfile::tempdir().unwrap();
    let exit = Process::run(
        binary(),
        work.path(),
        &["operator", "create-token", "--name", "e2e"],
        &[("DATABASE_URL", db)],
    )
    .await;
    assert_eq!(exit.code, Some(0), "{}\n{}", exit.stdout, exit.stderr);
    exit.stdout
        .lines()
        .find(|l| l.starts_with("svcop_"))
        .expect("token printed")
        .trim()
        .to_owned()
}

/// Creates tenant `slug` as `operator`.
pub(crate) async fn create_tenant(app: &TestApp, operator: &str, slug: &str) -> CreatedTenant {
    let response = app
        .request(reqwest::Method::POST, "/api/v1/control-plane/tenants")
        .bearer_auth(operator)
        .json(&json!({"slug": slug, "display_name": slug.to_uppercase()}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let body: Value = response.json().await.unwrap();
    let port = app.url.rsplit(':').next().unwrap();
    let text = |v: &Value| v.as_str().unwrap().to_owned();
    CreatedTenant {
        id: text(&body["tenant"]["id"]),
        host: format!("{slug}.localhost:{port}"),
        client_id: text(&body["management_application"]["client_id"]),
        client_secret: text(&body["management_application"]["client_secret"]),
    }
}

/// The zero-config `default` tenant of a single-tenant app (issuer: the app's own origin), with
/// management credentials issued to `operator` over the control plane.
pub(crate) async fn default_tenant(app: &TestApp, operator: &str) -> CreatedTenant {
    let tenants = app
        .request(reqwest::Method::GET, "/api/v1/control-plane/tenants")
        .bearer_auth(operator)
        .send()
        .await
        .unwrap();
    assert_eq!(tenants.status(), 200);
    let tenants: Value = tenants.json().await.unwrap();
    let id = tenants["items"]
        .as_array()
        .unwrap_or_else(|| panic!("tenant list: {tenants}"))
        .iter()
        .find(|t| t["slug"] == "default")
        .and_then(|t| t["id"].as_str())
        .unwrap_or_else(|| panic!("no default tenant in {tenants}"))
        .to_owned();
    let credentials = app
        .request(
            reqwest::Method::POST,
            &format!("/api/v1/control-plane/tenants/{id}/management-credentials"),
        )
        .bearer_auth(operator)
        .send()
        .await
        .unwrap();
    let status = credentials.status();
    let credentials: Value = credentials.json().await.unwrap();
    assert!(
        status.is_success(),
        "management credentials: {status} {credentials}"
    );
    let text = |v: &Value| v.as_str().unwrap().to_owned();
    CreatedTenant {
        id,
        host: app.url.trim_start_matches("http://").to_owned(),
        client_id: text(&credentials["client_id"]),
        client_secret: text(&credentials["client_secret"]),
    }
}

/// A client_credentials token of the tenant's management application, for `scope` (all of
/// its scopes when `None`).
pub(crate) async fn management_token(
    app: &TestApp,
    tenant: &CreatedTenant,
    scope: Option<&str>,
) -> String {
    let mut form = vec![("grant_type", "client_credentials")];
    if let Some(scope) = scope {
        form.push(("scope", scope));
    }
    let response = app
        .request(reqwest::Method::POST, "/oauth/token")
        .header("host", &tenant.host)
        .basic_auth(&tenant.client_id, Some(&tenant.client_secret))
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    body["access_token"].as_str().unwrap().to_owned()
}

/// A client_credentials token of a tenant's management application (every scope it holds) from
/// the service at `url` (`http://ip:port`), the tenant named by `host`.
pub(crate) async fn management_token_at(
    client: &reqwest::Client,
    url: &str,
    host: &str,
    id: &str,
    secret: &str,
) -> String {
    let response = client
        .post(format!("{url}/oauth/token"))
        .header("host", host)
        .basic_auth(id, Some(secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    body["access_token"].as_str().unwrap().to_owned()
}

/// `method path` with `token` as the bearer and `body` as JSON (none when `Value::Null`),
/// asserting the answer's `status`; the answer's JSON (`Null` when it has none).
pub(crate) async fn send_json(
    app: &TestApp,
    token: &str,
    method: reqwest::Method,
    path: &str,
    body: Value,
    status: u16,
) -> Value {
    let mut request = app.request(method.clone(), path).bearer_auth(token);
    if !body.is_null() {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let got = response.status().as_u16();
    let answer: Value = response.json().await.unwrap_or(Value::Null);
    assert_eq!(got, status, "{method} {path}: {answer}");
    answer
}

/// A single-tenant app on `backend` (the zero-config `default` tenant, issuer = the app's own
/// origin) with `extra` settings, that tenant, and a client_credentials token of its management
/// application with every scope it holds.
pub(crate) async fn single_tenant(
    backend: svc_testkit::Backend,
    extra: &[(&str, &str)],
) -> (TestApp, CreatedTenant, String) {
    single_tenant_trusting(backend, extra, Vec::new()).await
}

/// [`single_tenant`] whose client ID metadata document fetches also trust the CA certificates
/// `roots` (PEM; `svc_runtime::BuildOptions::outbound_roots`).
pub(crate) async fn single_tenant_trusting(
    backend: svc_testkit::Backend,
    extra: &[(&str, &str)],
    roots: Vec<Vec<u8>>,
) -> (TestApp, CreatedTenant, String) {
    let mut env = vec![("SVC_TENANT__DEFAULT_TENANT_SLUG", "default")];
    env.extend_from_slice(extra);
    let options = svc_runtime::BuildOptions {
        outbound_roots: roots,
        ..TestApp::options()
    };
    let app = TestApp::try_spawn_with_options(backend, &env, options)
        .await
        .unwrap_or_else(|e| panic!("test app failed to start: {e}"));
    let tenant = default_tenant(&app, &operator_token(&app).await).await;
    let response = app
        .request(reqwest::Method::POST, "/oauth/token")
        .basic_auth(&tenant.client_id, Some(&tenant.client_secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    let token = body["access_token"].as_str().unwrap().to_owned();
    (app, tenant, token)
}
