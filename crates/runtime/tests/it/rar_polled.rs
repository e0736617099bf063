//! Rich Authorization Requests (RFC 9396) on the polled grants, over HTTP on SQLite and
//! PostgreSQL: a device authorization and a CIBA request take `authorization_details` of the
//! application's registered types; the person sees them in words (the device's consent page, the
//! CIBA approval page and the CIBA JSON list), escaped; the tokens the poll yields carry them,
//! narrowed when the poll asks; hostile details are `invalid_authorization_details` at the start,
//! and the parameter is refused by name while `[oidc].authorization_details` is off.

use crate::hosted::support::{PASSWORD, Setup, World, payload};
use crate::rar::{payment, payment_type};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;
use svc_testkit::{BACKENDS, Backend};

const DEVICE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";
const CIBA_GRANT: &str = "urn:openid:params:grant-type:ciba";

async fn polled_world(backend: Backend, details: bool) -> World {
    let mut env = vec![
        ("SVC_CIBA__ENABLED", "true"),
        ("SVC_CIBA__INTERVAL_SECS", "1"),
        ("SVC_DEVICE_AUTHORIZATION__INTERVAL_SECS", "1"),
    ];
    if details {
        env.push(("SVC_OIDC__AUTHORIZATION_DETAILS", "true"));
    }
    World::new(
        backend,
        Setup {
            env,
            ..Setup::default()
        },
    )
    .await
}

/// A confidential client of both polled grants, registering the payment type when `details`.
async fn polled_client(world: &World, details: bool) -> (String, String) {
    let mut body = json!({
        "name": "Bank terminal",
        "redirect_uris": [],
        "post_logout_redirect_uris": [],
        "grant_types": [DEVICE_GRANT, CIBA_GRANT, "refresh_token"],
    });
    if details {
        body["authorization_details_types"] = json!([payment_type()]);
    }
    world.register_with(body).await
}

/// `POST path` as `client` with `form`: status and body.
async fn post(
    world: &World,
    client: &(String, String),
    path: &str,
    form: &[(&str, &str)],
) -> (u16, Value) {
    let response = world
        .app
        .request(Method::POST, path)
        .header("host", &world.host)
        .basic_auth(&client.0, Some(&client.1))
        .form(form)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// Polls once the interval (1 s) has passed.
async fn poll(world: &World, client: &(String, String), form: &[(&str, &str)]) -> (u16, Value) {
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    post(world, client, "/oauth/token", form).await
}

#[tokio::test]
async fn a_device_shows_its_details_on_consent_and_its_tokens_carry_them() {
    for backend in BACKENDS {
        let world = polled_world(backend, true).await;
        let client = polled_client(&world, true).await;
        let asked = payment(&["initiate", "status"], "Merchant <A>");
        let asked_text = asked.to_string();
        let (status, device) = post(
            &world,
            &client,
            "/oauth/device/code",
            &[("scope", "openid"), ("authorization_details", &asked_text)],
        )
        .await;
        assert_eq!(status, 200, "{device}");
        let user_code = device["user_code"].as_str().unwrap();
        let device_code = device["device_code"].as_str().unwrap();

        // The person types the code, signs in and sees the details in the schema's words.
        let (end, shown) =
            crate::device::through_consent(&world, &world.browser(), user_code, "allow").await;
        assert!(end.ends_with("?result=approved"), "{end}");
        for words in [
            "Make a payment from your account",
            "Payee: Merchant &#60;A&#62;",
            "Currency: EUR",
        ] {
            assert!(shown.contains(words), "{words}: {shown}");
        }
        assert!(!shown.contains("Merchant <A>"), "escaped");

        // The poll narrows them (an action dropped); the tokens carry the narrowing.
        let narrowed = payment(&["initiate"], "Merchant <A>");
        let narrowed_text = narrowed.to_string();
        let (status, tokens) = poll(
            &world,
            &client,
            &[
                ("grant_type", DEVICE_GRANT),
                ("device_code", device_code),
                ("authorization_details", &narrowed_text),
            ],
        )
        .await;
        assert_eq!(status, 200, "{tokens}");
        assert_eq!(tokens["authorization_details"], narrowed, "RFC 9396 §7");
        let access = tokens["access_token"].as_str().unwrap();
        assert_eq!(payload(access)["authorization_details"], narrowed);
        world.shutdown().await;
    }
}

#[tokio::test]
async fn a_ciba_request_lists_its_details_and_the_approved_tokens_carry_them() {
    for backend in BACKENDS {
        let world = polled_world(backend, true).await;
        let client = polled_client(&world, true).await;
        let asked = payment(&["initiate"], "Merchant <A>");
        let asked_text = asked.to_string();
        let (status, started) = post(
            &world,
            &client,
            "/bc-authorize",
            &[
                ("scope", "openid"),
                ("login_hint", &world.user),
                ("authorization_details", &asked_text),
            ],
        )
        .await;
        assert_eq!(status, 200, "{started}");
        let auth_req_id = started["auth_req_id"].as_str().unwrap().to_owned();

        let browser = crate::ciba::signed_in(&world, &world.user, PASSWORD).await;
        let listed: Value = browser
            .request(Method::GET, "/api/v1/identity/ciba/requests")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let request = &listed["requests"][0];
        assert_eq!(request["authorization_details"], asked, "{listed}");
        assert_eq!(
            request["details"][0]["description"], "Make a payment from your account",
            "{listed}"
        );
        let lines = request["details"][0]["lines"].as_array().unwrap();
        assert!(
            lines.contains(&json!({"label": "Payee", "value": "Merchant <A>"})),
            "{listed}"
        );

        let page = browser.get("/auth/ciba").await;
        assert_eq!(page.status, 200);
        for words in [
            "Make a payment from your account",
            "Payee: Merchant &#60;A&#62;",
        ] {
            assert!(page.body.contains(words), "{words}: {}", page.body);
        }
        assert!(!page.body.contains("Merchant <A>"), "escaped");
        let decided = browser
            .submit("/auth/ciba", "/auth/ciba", &[("decision", "approve")])
            .await;
        assert_eq!(
            decided.location().as_deref(),
            Some("/auth/ciba?result=approved")
        );

        let (status, tokens) = poll(
            &world,
            &client,
            &[("grant_type", CIBA_GRANT), ("auth_req_id", &auth_req_id)],
        )
        .await;
        assert_eq!(status, 200, "{tokens}");
        assert_eq!(tokens["authorization_details"], asked);
        let access = tokens["access_token"].as_str().unwrap();
        assert_eq!(payload(access)["authorization_details"], asked);
        world.shutdown().await;
    }
}

#[tokio::test]
async fn polled_starts_refuse_hostile_details_and_refuse_them_by_name_when_off() {
    for backend in BACKENDS {
        let world = polled_world(backend, true).await;
        let client = polled_client(&world, true).await;
        let cases = [
            (
                r#"[{"type":"account_information"}]"#.to_owned(),
                "unknown type",
            ),
            (payment(&["transfer_all"], "A").to_string(), "schema: enum"),
            ("not json".to_owned(), "malformed"),
        ];
        for (details, what) in &cases {
            for (path, mut form) in [
                ("/oauth/device/code", vec![("scope", "openid")]),
                (
                    "/bc-authorize",
                    vec![("scope", "openid"), ("login_hint", world.user.as_str())],
                ),
            ] {
                form.push(("authorization_details", details));
                let (status, body) = post(&world, &client, path, &form).await;
                assert_eq!(
                    (status, body["error"].as_str()),
                    (400, Some("invalid_authorization_details")),
                    "{path} {what}: {body}"
                );
            }
        }
        // A CIBA request for nobody (the decoy) checks details the same way.
        let (status, body) = post(
            &world,
            &client,
            "/bc-authorize",
            &[
                ("scope", "openid"),
                ("login_hint", "nobody@example.com"),
                ("authorization_details", &cases[0].0),
            ],
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_authorization_details")),
            "{body}"
        );
        world.shutdown().await;

        let world = polled_world(backend, false).await;
        let client = polled_client(&world, false).await;
        let details = payment(&["initiate"], "A").to_string();
        for (path, mut form) in [
            ("/oauth/device/code", vec![("scope", "openid")]),
            (
                "/bc-authorize",
                vec![("scope", "openid"), ("login_hint", world.user.as_str())],
            ),
        ] {
            form.push(("authorization_details", &details));
            let (status, body) = post(&world, &client, path, &form).await;
            assert_eq!(
                (status, body["error"].as_str()),
                (400, Some("invalid_request")),
                "{path}: {body}"
            );
            assert!(
                body["error_description"]
                    .as_str()
                    .unwrap()
                    .contains("[oidc].authorization_details"),
                "{path}: {body}"
            );
        }
        world.shutdown().await;
    }
}
