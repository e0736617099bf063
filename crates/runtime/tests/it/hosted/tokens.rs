//! What the tokens of a person's sign-in are good for, end to end: never the management API,
//! audience-bound introspection, and nothing at all once the person is suspended.

use super::support::*;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

/// Redeems `code` for `client` and returns the token response, asserting 200.
async fn tokens(world: &World, code: &str, client: &(String, String)) -> Value {
    let response = world.redeem_as(code, &client.0, &client.1).await;
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test]
async fn a_persons_token_is_refused_by_the_management_api_even_with_its_audience_and_scope() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        // An application whose tokens are meant for the management API itself.
        let admin_app = world
            .register_with(json!({
                "name": "Admin console",
                "api_audience": format!("{}/api/v1", world.issuer()),
                "allowed_scopes": ["openid", "users:read"],
            }))
            .await;
        let browser = world.browser();
        let code = world
            .code_for(&browser, &admin_app.0, "openid users:read", &[])
            .await;
        let issued = tokens(&world, &code, &admin_app).await;
        assert_eq!(issued["scope"], "openid users:read");
        let access = issued["access_token"].as_str().unwrap();

        let refused = world
            .app
            .request(reqwest::Method::GET, "/api/v1/tenant-users")
            .header("host", &world.host)
            .bearer_auth(access)
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 403, "{backend:?}");
        let problem: Value = refused.json().await.unwrap();
        assert_eq!(problem["error"], "forbidden", "{problem}");
        assert!(
            problem["detail"].as_str().unwrap().contains("roles"),
            "{problem}"
        );
        // The same call with the management application's machine token works.
        let allowed = world
            .api(reqwest::Method::GET, "/api/v1/tenant-users")
            .send()
            .await
            .unwrap();
        assert_eq!(allowed.status(), 200);
        world.shutdown().await;
    }
}
