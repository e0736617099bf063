//! Human administrators end to end (issue 17 item 7), on SQLite and PostgreSQL: a person holding
//! `tenant_admin` signs in through a first-party console whose audience is the management API,
//! gets the management scopes they asked for, manages applications with that token, and is the
//! audit log's actor; the role taken away stops the token already issued at once and the next
//! refresh carries no management scope; a third-party console never gets them; a suspended
//! administrator's token is refused.

use super::support::*;
use super::tokens::tokens;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

const CONSOLE_SCOPE: &str = "openid offline_access applications:read applications:write users:read";

/// A console application of `world` for the management API.
async fn console(world: &World, first_party: bool) -> (String, String) {
    world
        .register_with(json!({
            "name": "Admin console",
            "first_party": first_party,
            "api_audience": format!("{}/api/v1", world.issuer()),
            "allowed_scopes": ["openid", "offline_access", "applications:read",
                               "applications:write", "users:read"],
        }))
        .await
}

/// Ada's id, looked up through the management API.
pub(super) async fn ada_id(world: &World) -> String {
    let list: Value = world
        .api(
            reqwest::Method::GET,
            "/api/v1/tenant-users?email=ada@example.com",
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    list["items"][0]["id"].as_str().unwrap().to_owned()
}

/// Sets Ada's tenant roles with the machine token.
async fn set_roles(world: &World, user: &str, roles: &[&str]) {
    let response = world
        .api(
            reqwest::Method::PUT,
            &format!("/api/v1/tenant-users/{user}/roles"),
        )
        .json(&json!({ "roles": roles }))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["roles"], json!(roles));
}

/// Calls the management API with a person's `token`.
pub(super) async fn call(
    world: &World,
    token: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = world
        .app
        .request(method, path)
        .header("host", &world.host)
        .bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

pub(super) async fn refresh(world: &World, client: &(String, String), token: &str) -> Value {
    let response = world
        .app
        .request(reqwest::Method::POST, "/oauth/token")
        .header("host", &world.host)
        .basic_auth(&client.0, Some(&client.1))
        .form(&[("grant_type", "refresh_token"), ("refresh_token", token)])
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test]
async fn a_tenant_admin_manages_applications_with_a_code_flow_token() {
    use reqwest::Method as M;
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let console = console(&world, true).await;
        let ada = ada_id(&world).await;
        set_roles(&world, &ada, &["tenant_admin"]).await;

        let browser = world.browser();
        let code = world
            .code_for(&browser, &console.0, CONSOLE_SCOPE, &[])
            .await;
        let issued = tokens(&world, &code, &console).await;
        assert_eq!(
            issued["scope"],
            "applications:read applications:write offline_access openid users:read",
            "{backend:?}"
        );
        let access = issued["access_token"].as_str().unwrap().to_owned();

        let (status, created) = call(
            &world,
            &access,
            M::POST,
            "/api/v1/applications",
            Some(
                json!({"name": "Made by Ada", "grant_types": ["client_credentials"],
                        "token_endpoint_auth_method": "client_secret_basic"}),
            ),
        )
        .await;
        assert_eq!(status, 201, "{backend:?}: {created}");
        let (status, listed) = call(&world, &access, M::GET, "/api/v1/applications", None).await;
        assert_eq!(status, 200, "{listed}");
        // A scope the token does not hold is still refused, role or not.
        let (status, problem) = call(&world, &access, M::GET, "/api/v1/webhooks", None).await;
        assert_eq!(status, 403, "{problem}");
        assert_eq!(problem["error"], "insufficient_scope");

        // The audit log names the person, not the console.
        let audit: Value = world
            .api(
                M::GET,
                &format!(
                    "/api/v1/audit-logs?action=application.created&target={}",
                    created["client_id"].as_str().unwrap()
                ),
            )
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(audit["items"][0]["actor"], format!("user:{ada}"), "{audit}");

        // The role taken away: the token already issued stops at once…
        set_roles(&world, &ada, &[]).await;
        let (status, problem) = call(&world, &access, M::GET, "/api/v1/applications", None).await;
        assert_eq!(status, 403, "{backend:?}: {problem}");
        assert_eq!(problem["error"], "insufficient_scope");
        // …and the next refresh carries no management scope.
        let refreshed = refresh(&world, &console, issued["refresh_token"].as_str().unwrap()).await;
        assert_eq!(refreshed["scope"], "offline_access openid", "{refreshed}");
        // Given back, it does not revive the narrowed family, but a new sign-in has it again.
        set_roles(&world, &ada, &["tenant_admin"]).await;
        let again = refresh(
            &world,
            &console,
            refreshed["refresh_token"].as_str().unwrap(),
        )
        .await;
        assert_eq!(again["scope"], "offline_access openid");
        let code = world
            .code_for(&browser, &console.0, CONSOLE_SCOPE, &[])
            .await;
        let fresh = tokens(&world, &code, &console).await;
        let fresh_access = fresh["access_token"].as_str().unwrap().to_owned();
        let (status, _) = call(&world, &fresh_access, M::GET, "/api/v1/applications", None).await;
        assert_eq!(status, 200);

        // Suspended, the administrator's token is refused as invalid.
        let suspended = world
            .api(M::POST, &format!("/api/v1/tenant-users/{ada}/suspend"))
            .send()
            .await
            .unwrap();
        assert_eq!(suspended.status(), 200);
        let (status, problem) =
            call(&world, &fresh_access, M::GET, "/api/v1/applications", None).await;
        assert_eq!(status, 401, "{problem}");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn a_third_party_console_never_carries_management_scopes() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let console = console(&world, false).await;
        let ada = ada_id(&world).await;
        set_roles(&world, &ada, &["tenant_admin"]).await;
        let browser = world.browser();
        let code = world
            .code_for(&browser, &console.0, CONSOLE_SCOPE, &[])
            .await;
        let issued = tokens(&world, &code, &console).await;
        assert_eq!(issued["scope"], "offline_access openid", "{backend:?}");
        let (status, problem) = call(
            &world,
            issued["access_token"].as_str().unwrap(),
            reqwest::Method::GET,
            "/api/v1/applications",
            None,
        )
        .await;
        assert_eq!(status, 403, "{problem}");
        world.shutdown().await;
    }
}
