//! Access-control policies as a browser and an application meet them, on SQLite and
//! PostgreSQL: a tenant administrator adds a policy through `/api/v1/policies`; a refresh token
//! issued before it (a password-only sign-in) is refused at once, naming the policy, and its
//! family is revoked; the next sign-in to the application is sent to set up a second factor,
//! then reaches the application at `urn:svc:aal2`; a network rule that leaves the browser out
//! is `access_denied` naming the policy, and one that takes it in lets it through; every
//! refusal is in the audit log as `access_policy.denied.<rule>`.

use super::support::{PASSWORD, REDIRECT, Setup, World, param};
use super::tokens::tokens;
use super::two_factor::{enrol, totp};
use reqwest::Method;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

async fn refresh(world: &World, token: &str) -> (u16, Value) {
    let response = world
        .app
        .request(Method::POST, "/oauth/token")
        .header("host", &world.host)
        .basic_auth(&world.client_id, Some(&world.client_secret))
        .form(&[("grant_type", "refresh_token"), ("refresh_token", token)])
        .send()
        .await
        .unwrap();
    (
        response.status().as_u16(),
        response.json().await.unwrap_or(Value::Null),
    )
}

async fn audited(world: &World, action: &str) -> usize {
    let page: Value = world
        .api(Method::GET, &format!("/api/v1/audit-logs?action={action}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    page["items"].as_array().map_or(0, Vec::len)
}

#[tokio::test]
async fn a_policy_steps_people_up_ends_older_grants_and_fences_networks() {
    for backend in BACKENDS {
        let world = World::new(
            backend,
            Setup {
                first_party: true,
                env: vec![("SVC_TWO_FACTOR__ENABLED", "true")],
                ..Setup::default()
            },
        )
        .await;
        let client = (world.client_id.clone(), world.client_secret.clone());
        let browser = world.browser();
        browser.sign_in(None, &world.user, PASSWORD).await;
        let code = world
            .code_for(&browser, &world.client_id, "openid offline_access", &[])
            .await;
        let before = tokens(&world, &code, &client).await;
        let refresh_token = before["refresh_token"].as_str().unwrap().to_owned();

        let created = world
            .api(Method::POST, "/api/v1/policies")
            .json(&json!({
                "name": "Two factors for the shop",
                "targets": {"applications": [world.client_id]},
                "rules": {"require_acr": "urn:svc:aal2"}
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201, "{backend:?}");
        let policy: Value = created.json().await.unwrap();
        let path = format!("/api/v1/policies/{}", policy["id"].as_str().unwrap());

        // The password-only grant is over: refused naming the policy, and for good.
        let (status, refused) = refresh(&world, &refresh_token).await;
        assert_eq!(
            (status, refused["error"].as_str()),
            (400, Some("invalid_grant"))
        );
        assert!(
            refused["error_description"]
                .as_str()
                .unwrap()
                .contains("Two factors for the shop"),
            "{refused}"
        );
        assert_eq!(audited(&world, "access_policy.denied.require_acr").await, 1);

        // The next sign-in to the application needs a second factor: set one up first.
        let asked = browser
            .get(&world.authorize_path("openid", "st", &[]))
            .await;
        let location = asked.location().unwrap();
        assert!(
            location.starts_with("/auth/account/two-factor?interaction="),
            "{backend:?}: {location}"
        );
        // With one (enrolled in another browser), the same session steps up and gets aal2.
        let (key, _) = enrol(&world.browser(), &world).await;
        let mut page = browser
            .get(&world.authorize_path("openid", "st", &[]))
            .await;
        let mut stepped_up = false;
        for _ in 0..6 {
            let location = page.location().unwrap();
            if location.starts_with(REDIRECT) {
                break;
            }
            page = if location.starts_with("/auth/second-factor?") {
                stepped_up = true;
                browser
                    .submit(
                        &location,
                        "/auth/second-factor",
                        &[("code", &totp(&key, 30))],
                    )
                    .await
            } else {
                browser.get(&location).await
            };
        }
        assert!(stepped_up, "{backend:?}: the policy asked for a step-up");
        let code = param(&page.location().unwrap(), "code").expect("a code after the step-up");
        let after = tokens(&world, &code, &client).await;
        assert!(after["access_token"].is_string(), "{after}");

        // A network rule that leaves the browser (loopback) out refuses, naming the policy.
        let fence = |ranges: Value| {
            world
                .api(Method::PATCH, &path)
                .json(&json!({"rules": {"allowed_ip_ranges": ranges}}))
        };
        assert_eq!(
            fence(json!(["10.0.0.0/8"])).send().await.unwrap().status(),
            200
        );
        let refused = browser
            .get(&world.authorize_path("openid", "st", &[]))
            .await
            .location()
            .unwrap();
        assert!(refused.starts_with(REDIRECT), "{refused}");
        assert_eq!(param(&refused, "error").as_deref(), Some("access_denied"));
        assert!(
            param(&refused, "error_description")
                .unwrap()
                .contains("Two factors for the shop"),
            "{refused}"
        );
        assert_eq!(param(&refused, "code"), None);
        assert_eq!(
            audited(&world, "access_policy.denied.allowed_ip_ranges").await,
            1
        );
        assert_eq!(
            fence(json!(["127.0.0.0/8", "::1/128"]))
                .send()
                .await
                .unwrap()
                .status(),
            200
        );
        let code = world
            .code_for(&browser, &world.client_id, "openid", &[])
            .await;
        assert!(!code.is_empty());
        world.shutdown().await;
    }
}
