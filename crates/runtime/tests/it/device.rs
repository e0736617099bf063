//! The device authorization grant (RFC 8628) over HTTP, on SQLite and PostgreSQL: a public
//! client starts it, a person approves it in a browser (sign-in, consent with the code shown
//! again), the device's polls get `authorization_pending`, `slow_down` with `Retry-After`, then
//! the tokens once; a second redemption revokes what the first issued. Then the refusals: a
//! declined request (`access_denied`), another client's device code, unknown codes, user-code
//! guessing from one address, clients not registered for the grant, bad scopes, hostile input
//! on the page, and the `[device_authorization].enabled` switch.
//!
//! Expiry (`expired_token`, 600 s by default, 60 s at least) is the engine's check with the
//! order of RFC 8628 §3.5 (`svc-oauth` `token::device::tests`); the store conformance suite
//! covers expired lookups, decisions and the purge. This server runs on the wall clock.

use crate::hosted::support::{Browser, PASSWORD, Setup, World, param};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;
use svc_testkit::{BACKENDS, Backend};

const GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// A world whose devices poll every second and whose addresses may type three wrong codes.
async fn world(backend: Backend) -> World {
    World::new(
        backend,
        Setup {
            env: vec![
                ("SVC_DEVICE_AUTHORIZATION__INTERVAL_SECS", "1"),
                ("SVC_DEVICE_AUTHORIZATION__MAX_USER_CODE_ATTEMPTS", "3"),
            ],
            ..Setup::default()
        },
    )
    .await
}

/// Registers a public client of the device grant (and refresh tokens): its `client_id`.
async fn device_client(world: &World) -> String {
    let response = world
        .api(Method::POST, "/api/v1/applications")
        .json(&json!({
            "name": "Living-room TV",
            "redirect_uris": [],
            "grant_types": [GRANT, "refresh_token"],
            "token_endpoint_auth_method": "none",
            "allowed_scopes": ["openid", "profile", "email", "offline_access"],
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let body: Value = response.json().await.unwrap();
    assert!(
        body.get("client_secret").is_none_or(Value::is_null),
        "{body}"
    );
    body["client_id"].as_str().unwrap().to_owned()
}

/// `POST /oauth/device/code` as the public client `client_id` with `form`.
async fn start(world: &World, client_id: &str, form: &[(&str, &str)]) -> (u16, Value) {
    let mut body = vec![("client_id", client_id)];
    body.extend_from_slice(form);
    let response = world
        .app
        .request(Method::POST, "/oauth/device/code")
        .header("host", &world.host)
        .form(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Starts a device authorization for `openid profile offline_access`: the response.
async fn started(world: &World, client_id: &str) -> Value {
    let (status, body) = start(
        world,
        client_id,
        &[("scope", "openid profile offline_access")],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body
}

/// One poll as `client_id`: status, `Retry-After`, body.
async fn poll(world: &World, client_id: &str, device_code: &str) -> (u16, Option<String>, Value) {
    let response = world
        .app
        .request(Method::POST, "/oauth/token")
        .header("host", &world.host)
        .form(&[
            ("grant_type", GRANT),
            ("device_code", device_code),
            ("client_id", client_id),
        ])
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    assert_eq!(response.headers()["cache-control"], "no-store");
    let retry = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, retry, response.json().await.unwrap())
}

/// Polls once the interval (1 s) has passed since the previous poll.
async fn poll_on_time(world: &World, client_id: &str, device_code: &str) -> (u16, Value) {
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let (status, _, body) = poll(world, client_id, device_code).await;
    (status, body)
}

/// The path and query of an absolute URL of the world.
fn local(world: &World, url: &str) -> String {
    url.strip_prefix(&world.issuer()).unwrap().to_owned()
}

/// Types `code` on the verification page as `browser`; the answer.
async fn enter(browser: &Browser, code: &str) -> crate::hosted::support::Page {
    browser
        .submit(
            "/oauth/device/verify",
            "/oauth/device/verify",
            &[("user_code", code)],
        )
        .await
}

/// Follows `browser` from the answer to a typed code through sign-in to the consent page,
/// checks it shows the client and `user_code`, and answers `decision`: where it ends.
async fn consent(
    world: &World,
    browser: &Browser,
    typed: &str,
    user_code: &str,
    decision: &str,
) -> String {
    let (end, shown) = through_consent(world, browser, typed, decision).await;
    assert!(shown.contains("Living-room TV"), "{shown}");
    assert!(
        shown.contains(user_code),
        "the code is shown again: {shown}"
    );
    end
}

/// Follows `browser` from the answer to a typed code through sign-in to the consent page and
/// answers `decision`: where it ends, and the consent page's body.
pub(crate) async fn through_consent(
    world: &World,
    browser: &Browser,
    typed: &str,
    decision: &str,
) -> (String, String) {
    let mut shown = String::new();
    let mut page = enter(browser, typed).await;
    for _ in 0..6 {
        assert_eq!(page.status, 303, "{}", page.body);
        let location = page.location().unwrap();
        if location.starts_with("/auth/sign-in?") {
            let interaction = param(&location, "interaction").unwrap();
            page = browser
                .sign_in(Some(&interaction), &world.user, PASSWORD)
                .await;
        } else if location.starts_with("/auth/consent?") {
            shown = browser.get(&location).await.body;
            page = browser
                .submit(&location, "/auth/consent", &[("decision", decision)])
                .await;
        } else if location.starts_with(&world.issuer()) {
            return (location, shown);
        } else {
            page = browser.get(&location).await;
        }
    }
    panic!("the device request did not come back to the verification page");
}

#[tokio::test]
async fn a_device_is_approved_in_a_browser_and_its_poll_gets_tokens_once() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let client = device_client(&world).await;
        let device = started(&world, &client).await;
        let user_code = device["user_code"].as_str().unwrap().to_owned();
        let device_code = device["device_code"].as_str().unwrap().to_owned();
        assert!(device_code.starts_with("dc_"), "{device}");
        assert_eq!(user_code.len(), 9, "{device}");
        assert!(
            user_code
                .chars()
                .all(|c| c == '-' || "BCDFGHJKLMNPQRSTVWXZ".contains(c)),
            "{user_code}"
        );
        let verify = format!("{}/oauth/device/verify", world.issuer());
        assert_eq!(device["verification_uri"], verify.as_str());
        assert_eq!(
            device["verification_uri_complete"],
            format!("{verify}?user_code={user_code}").as_str()
        );
        assert_eq!(device["expires_in"], 600);
        assert_eq!(device["interval"], 1);

        // RFC 8628 §3.5: pending, then too fast (the interval grows by 5 s).
        let (status, _, body) = poll(&world, &client, &device_code).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("authorization_pending"))
        );
        let (status, retry, body) = poll(&world, &client, &device_code).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("slow_down")),
            "{body}"
        );
        assert_eq!(retry.as_deref(), Some("6"));

        // The link of `verification_uri_complete` fills the code in; the person types it in
        // lower case without the dash, signs in and consents.
        let browser = world.browser();
        let complete = local(
            &world,
            device["verification_uri_complete"].as_str().unwrap(),
        );
        let page = browser.get(&complete).await;
        assert_eq!(page.status, 200);
        page.assert_secure("device verification page");
        assert!(
            page.body.contains(&format!("value=\"{user_code}\"")),
            "{}",
            page.body
        );
        let typed = user_code.replace('-', "").to_lowercase();
        let end = consent(&world, &browser, &typed, &user_code, "allow").await;
        assert_eq!(end, format!("{verify}?result=approved"));
        let done = browser.get(&local(&world, &end)).await;
        assert_eq!(done.status, 200);
        assert!(done.body.contains("Device connected"), "{}", done.body);

        // The grown interval (6 s) holds from the last poll.
        tokio::time::sleep(Duration::from_millis(6_100)).await;
        let (status, _, tokens) = poll(&world, &client, &device_code).await;
        assert_eq!(status, 200, "{tokens}");
        assert_eq!(tokens["token_type"], "Bearer");
        assert!(tokens["id_token"].is_string(), "{tokens}");
        let refresh = tokens["refresh_token"].as_str().unwrap().to_owned();
        assert_eq!(tokens["scope"], "offline_access openid profile");
        let userinfo = world
            .app
            .request(Method::GET, "/userinfo")
            .header("host", &world.host)
            .bearer_auth(tokens["access_token"].as_str().unwrap())
            .send()
            .await
            .unwrap();
        assert_eq!(userinfo.status(), 200);
        // The request is decided: the page no longer knows its code.
        let again = enter(&browser, &user_code).await;
        assert_eq!(again.status, 400, "a decided code is unknown to the page");

        // Redeemed twice: refused, and what the first redemption issued is revoked.
        tokio::time::sleep(Duration::from_millis(6_100)).await;
        let (status, _, body) = poll(&world, &client, &device_code).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_grant")),
            "{body}"
        );
        let refreshed = world
            .app
            .request(Method::POST, "/oauth/token")
            .header("host", &world.host)
            .form(&[
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh.as_str()),
                ("client_id", client.as_str()),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(refreshed.status(), 400, "the family died with the reuse");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn declined_foreign_and_unknown_device_codes_are_refused() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let client = device_client(&world).await;
        let other = device_client(&world).await;
        let device = started(&world, &client).await;
        let device_code = device["device_code"].as_str().unwrap();
        let user_code = device["user_code"].as_str().unwrap();

        // Another client's device code is invalid and leaves it untouched: the owner's first
        // poll right after is on time.
        let (status, _, body) = poll(&world, &other, device_code).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_grant"))
        );
        let (_, _, body) = poll(&world, &client, device_code).await;
        assert_eq!(body["error"], "authorization_pending");
        let (_, _, body) = poll(&world, &client, "dc_unknown").await;
        assert_eq!(body["error"], "invalid_grant");

        let browser = world.browser();
        let end = consent(&world, &browser, user_code, user_code, "deny").await;
        assert!(end.contains("error=access_denied"), "{end}");
        let page = browser.get(&local(&world, &end)).await;
        assert_eq!(page.status, 403);
        assert!(page.body.contains("You declined"), "{}", page.body);
        let (status, body) = poll_on_time(&world, &client, device_code).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("access_denied"))
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn guessing_user_codes_is_limited_per_address() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let client = device_client(&world).await;
        let device = started(&world, &client).await;
        let user_code = device["user_code"].as_str().unwrap();
        let browser = world.browser();
        // Wrong, malformed, hostile: each a 400 on the form, the input shown escaped.
        for typed in ["BCDF-GHJK", "not a code", "\"><script>alert(1)</script>"] {
            let page = enter(&browser, typed).await;
            assert_eq!(page.status, 400, "{typed}: {}", page.body);
            assert!(!page.body.contains("<script>alert"), "{}", page.body);
            assert!(
                page.body.contains("This code is not valid"),
                "{}",
                page.body
            );
        }
        // Three wrong codes spent this address's attempts: even the right code is refused,
        // from another browser too.
        let page = enter(&world.browser(), user_code).await;
        assert_eq!(page.status, 429, "{}", page.body);
        assert!(page.body.contains("Too many wrong codes"), "{}", page.body);
        // The device's request is intact.
        let (_, _, body) = poll(&world, &client, device["device_code"].as_str().unwrap()).await;
        assert_eq!(body["error"], "authorization_pending");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn only_registered_clients_start_a_device_authorization_for_allowed_scopes() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let client = device_client(&world).await;
        // The world's code-flow application is not registered for the grant.
        let response = world
            .app
            .request(Method::POST, "/oauth/device/code")
            .header("host", &world.host)
            .basic_auth(&world.client_id, Some(&world.client_secret))
            .form(&[("scope", "openid")])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"], "unauthorized_client", "{body}");
        // Nor may it poll with the grant.
        let (status, _, body) = poll(&world, &world.client_id, "dc_x").await;
        assert_eq!(
            status, 401,
            "a confidential client without its secret: {body}"
        );

        for (form, error) in [
            (vec![], "invalid_scope"),
            (vec![("scope", "openid admin")], "invalid_scope"),
            (
                vec![("scope", "openid"), ("scope", "profile")],
                "invalid_request",
            ),
        ] {
            let (status, body) = start(&world, &client, &form).await;
            assert_eq!(
                (status, body["error"].as_str()),
                (400, Some(error)),
                "{form:?}"
            );
        }
        let (status, body) = start(
            &world,
            "app_01jb7q3m2x8v6n4k0t5r9c1d2e",
            &[("scope", "openid")],
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (401, Some("invalid_client"))
        );
        // A device code is no authorization code.
        let device = started(&world, &client).await;
        let code = world
            .app
            .request(Method::POST, "/oauth/token")
            .header("host", &world.host)
            .form(&[
                ("grant_type", "authorization_code"),
                ("code", device["device_code"].as_str().unwrap()),
                ("redirect_uri", "https://app.example.com/callback"),
                ("client_id", client.as_str()),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(code.status(), 400);
        // Discovery says where, and which grant.
        let metadata: Value = world
            .app
            .request(Method::GET, "/.well-known/openid-configuration")
            .header("host", &world.host)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            metadata["device_authorization_endpoint"],
            format!("{}/oauth/device/code", world.issuer()).as_str()
        );
        assert!(
            metadata["grant_types_supported"]
                .as_array()
                .unwrap()
                .contains(&json!(GRANT))
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn a_disabled_device_grant_is_not_served_or_advertised() {
    let world = World::new(
        Backend::Sqlite,
        Setup {
            env: vec![("SVC_DEVICE_AUTHORIZATION__ENABLED", "false")],
            ..Setup::default()
        },
    )
    .await;
    let client = device_client(&world).await;
    let (status, _) = start(&world, &client, &[("scope", "openid")]).await;
    assert_eq!(status, 404);
    assert_eq!(
        world.browser().get("/oauth/device/verify").await.status,
        404
    );
    let (status, _, body) = poll(&world, &client, "dc_x").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("unsupported_grant_type"))
    );
    let metadata: Value = world
        .app
        .request(Method::GET, "/.well-known/oauth-authorization-server")
        .header("host", &world.host)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(metadata.get("device_authorization_endpoint").is_none());
    assert!(
        !metadata["grant_types_supported"]
            .as_array()
            .unwrap()
            .contains(&json!(GRANT))
    );
    world.shutdown().await;
}

/// The whole grant once, for tests of other surfaces: a new device client, a device
/// authorization approved by the world's person in a fresh browser, and the first poll's
/// answer (status and body).
pub(crate) async fn approved_device_tokens(world: &World) -> (u16, Value) {
    let client = device_client(world).await;
    let device = started(world, &client).await;
    let user_code = device["user_code"].as_str().unwrap();
    let end = consent(world, &world.browser(), user_code, user_code, "allow").await;
    assert!(end.ends_with("?result=approved"), "{end}");
    let (status, _, body) = poll(world, &client, device["device_code"].as_str().unwrap()).await;
    (status, body)
}
