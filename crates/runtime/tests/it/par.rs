//! Pushed authorization requests (RFC 9126) over HTTP, on SQLite and PostgreSQL: push, then
//! authorize with the `request_uri`, sign in, consent, and redeem the code; the refusals of the
//! PAR endpoint (RFC 9126 §2.3) and of the authorization endpoint (§4); an application that
//! requires pushed requests (§6); and the `[oidc].pushed_authorization_requests` switch.
//!
//! Expiry (60 s) is tested by the engine tests with a manual clock
//! (`svc-oauth` `token::tests::pushed::an_expired_pushed_request_is_an_error_page`) and its purge
//! by the store conformance suite (`expired_pushed_requests_are_purged`): this server runs on
//! the wall clock.

use crate::hosted::support::{
    Browser, CHALLENGE, Page, REDIRECT, Setup, World, follow_to_client, param,
};
use reqwest::Method;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

/// The request the tests push: the world's defaults, with `extra` replacing or adding.
fn request(extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut list = vec![
        ("response_type", "code"),
        ("redirect_uri", REDIRECT),
        ("scope", "openid profile"),
        ("state", "pushed-state"),
        ("nonce", "pushed-nonce"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ];
    for (name, value) in extra {
        list.retain(|(n, _)| n != name);
        list.push((name, value));
    }
    list.into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// `POST /oauth/par` on `host` with Basic `client_id:secret` and `form`.
async fn push_to(
    world: &World,
    host: &str,
    (client_id, secret): (&str, &str),
    form: &[(String, String)],
) -> (u16, reqwest::header::HeaderMap, Value) {
    let response = world
        .app
        .request(Method::POST, "/oauth/par")
        .header("host", host)
        .basic_auth(client_id, Some(secret))
        .form(form)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, headers, body)
}

/// Pushes the world's default request as its application; the `request_uri`.
async fn push(world: &World, extra: &[(&str, &str)]) -> String {
    let credentials = (world.client_id.as_str(), world.client_secret.as_str());
    let (status, headers, body) = push_to(world, &world.host, credentials, &request(extra)).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(headers["cache-control"], "no-store");
    assert_eq!(body["expires_in"], 60);
    let uri = body["request_uri"].as_str().unwrap().to_owned();
    assert!(
        uri.starts_with("urn:ietf:params:oauth:request_uri:"),
        "{uri}"
    );
    uri
}

/// `/oauth/authorize` with `client_id`, `request_uri` and `extra`.
fn authorize_path(client_id: &str, request_uri: &str, extra: &[(&str, &str)]) -> String {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    query
        .append_pair("client_id", client_id)
        .append_pair("request_uri", request_uri);
    for (k, v) in extra {
        query.append_pair(k, v);
    }
    format!("/oauth/authorize?{}", query.finish())
}

/// An error page of `/oauth/authorize` showing `error`.
fn assert_error_page(page: &Page, error: &str, what: &str) {
    assert_eq!(page.status, 400, "{what}: {}", page.body);
    assert!(page.location().is_none(), "{what}: never a redirect");
    assert!(page.body.contains(error), "{what}: {}", page.body);
}

#[tokio::test]
async fn a_pushed_request_signs_in_and_its_code_redeems() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let request_uri = push(&world, &[]).await;
        let browser = world.browser();
        let path = authorize_path(&world.client_id, &request_uri, &[]);
        let location = follow_to_client(&browser, &path, REDIRECT, &world.user).await;
        assert_eq!(param(&location, "error"), None, "{location}");
        assert_eq!(
            param(&location, "state").as_deref(),
            Some("pushed-state"),
            "the pushed parameters are the ones used (RFC 9126 §4)"
        );
        let code = param(&location, "code").unwrap();
        let redeemed = world.redeem(&code).await;
        assert_eq!(redeemed.status(), 200);
        let tokens: Value = redeemed.json().await.unwrap();
        assert!(tokens["id_token"].is_string(), "{tokens}");

        // Single use, even in the browser that completed it.
        let again = browser.get(&path).await;
        assert_error_page(&again, "invalid_request_uri", "a reused request_uri");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn a_request_uri_is_refused_to_another_client_another_tenant_and_beside_other_parameters() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let request_uri = push(&world, &[]).await;
        let (other_client, _) = world.register("Other", false).await;
        let browser = world.browser();
        let stolen = browser
            .get(&authorize_path(&other_client, &request_uri, &[]))
            .await;
        assert_error_page(&stolen, "invalid_request_uri", "another client's");
        let beta = world.other_tenant("beta").await;
        let foreign = Browser::new(&world.app, &beta.host)
            .get(&authorize_path(&world.client_id, &request_uri, &[]))
            .await;
        assert_eq!(foreign.status, 400, "another tenant: {}", foreign.body);
        assert!(foreign.location().is_none());
        for extra in [
            ("scope", "openid"),
            ("redirect_uri", REDIRECT),
            ("state", "x"),
        ] {
            let mixed = browser
                .get(&authorize_path(&world.client_id, &request_uri, &[extra]))
                .await;
            // The page shows the code; the description naming the parameter is logged (and
            // checked by the engine tests).
            assert_error_page(&mixed, "invalid_request", extra.0);
        }
        // None of the refusals used it up.
        let own = browser
            .get(&authorize_path(&world.client_id, &request_uri, &[]))
            .await;
        assert_eq!(own.status, 303, "{}", own.body);
        assert!(own.location().unwrap().starts_with("/auth/sign-in?"));
        world.shutdown().await;
    }
}

#[tokio::test]
async fn the_par_endpoint_refuses_bad_pushes_as_json() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let me = (world.client_id.as_str(), world.client_secret.as_str());
        let host = world.host.clone();

        let (status, headers, body) =
            push_to(&world, &host, (me.0, "cs_wrong"), &request(&[])).await;
        assert_eq!(status, 401, "{body}");
        assert_eq!(body["error"], "invalid_client");
        assert_eq!(headers["www-authenticate"], "Basic realm=\"svc\"");

        let (other_client, _) = world.register("Other", false).await;
        let cases = [
            (
                request(&[("client_id", &other_client)]),
                "invalid_request",
                "client_id",
            ),
            (
                request(&[("request_uri", "urn:ietf:params:oauth:request_uri:pr_x")]),
                "invalid_request",
                "request_uri",
            ),
            (
                request(&[("redirect_uri", "https://evil.example/cb")]),
                "invalid_request",
                "redirect_uri",
            ),
            (
                request(&[("scope", "openid admin")]),
                "invalid_scope",
                "admin",
            ),
            (
                request(&[("response_type", "token")]),
                "unsupported_response_type",
                "response_type",
            ),
        ];
        for (form, error, mentions) in cases {
            let (status, headers, body) = push_to(&world, &host, me, &form).await;
            assert_eq!(status, 400, "{mentions}: {body}");
            assert_eq!(body["error"], error, "{mentions}: {body}");
            assert!(
                body["error_description"]
                    .as_str()
                    .unwrap()
                    .contains(mentions),
                "{body}"
            );
            assert_eq!(headers["cache-control"], "no-store");
        }

        // RFC 9126 §2.3: 413 beyond the body limit, 405 for another method.
        let huge = "x".repeat(2 * 1024 * 1024);
        let (status, _, _) = push_to(&world, &host, me, &request(&[("state", &huge)])).await;
        assert_eq!(status, 413);
        let get = world
            .app
            .request(Method::GET, "/oauth/par")
            .header("host", &host)
            .send()
            .await
            .unwrap();
        assert_eq!(get.status(), 405);
        world.shutdown().await;
    }
}

#[tokio::test]
async fn an_application_requiring_pushed_requests_is_refused_a_plain_one() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let (client_id, secret) = world
            .register_with(json!({"require_pushed_authorization_requests": true}))
            .await;
        let view: Value = world
            .api(Method::GET, &format!("/api/v1/applications/{client_id}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(view["require_pushed_authorization_requests"], true);

        // A plain request: its redirect URI is valid, so the refusal goes there (RFC 9126 §6).
        let plain = world.authorize_path("openid", "st", &[]);
        let plain = plain.replace(&world.client_id, &client_id);
        let page = world.browser().get(&plain).await;
        assert_eq!(page.status, 303, "{}", page.body);
        let location = page.location().unwrap();
        assert!(location.starts_with(REDIRECT), "{location}");
        assert_eq!(
            param(&location, "error").as_deref(),
            Some("invalid_request")
        );
        assert_eq!(param(&location, "state").as_deref(), Some("st"));

        // Pushed, it goes through.
        let (status, _, body) =
            push_to(&world, &world.host, (&client_id, &secret), &request(&[])).await;
        assert_eq!(status, 201, "{body}");
        let uri = body["request_uri"].as_str().unwrap();
        let browser = world.browser();
        let path = authorize_path(&client_id, uri, &[]);
        let location = follow_to_client(&browser, &path, REDIRECT, &world.user).await;
        let code = param(&location, "code").unwrap();
        let redeemed = world.redeem_as(&code, &client_id, &secret).await;
        assert_eq!(redeemed.status(), 200);
        world.shutdown().await;
    }
}

#[tokio::test]
async fn a_disabled_deployment_serves_and_advertises_no_par() {
    for backend in BACKENDS {
        let setup = Setup {
            env: vec![("SVC_OIDC__PUSHED_AUTHORIZATION_REQUESTS", "disabled")],
            ..Setup::default()
        };
        let world = World::new(backend, setup).await;
        let doc = world.discovery().await;
        assert!(doc.get("pushed_authorization_request_endpoint").is_none());
        assert!(doc.get("require_pushed_authorization_requests").is_none());
        let me = (world.client_id.as_str(), world.client_secret.as_str());
        let (status, _, _) = push_to(&world, &world.host, me, &request(&[])).await;
        assert_eq!(status, 404, "unrouted");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn a_required_deployment_refuses_plain_requests_and_says_so() {
    for backend in BACKENDS {
        let setup = Setup {
            env: vec![("SVC_OIDC__PUSHED_AUTHORIZATION_REQUESTS", "required")],
            ..Setup::default()
        };
        let world = World::new(backend, setup).await;
        let doc = world.discovery().await;
        assert_eq!(
            doc["pushed_authorization_request_endpoint"],
            format!("{}/oauth/par", world.issuer())
        );
        assert_eq!(doc["require_pushed_authorization_requests"], true);
        let page = world
            .browser()
            .get(&world.authorize_path("openid", "st", &[]))
            .await;
        let location = page.location().unwrap();
        assert!(location.starts_with(REDIRECT), "{location}");
        assert_eq!(
            param(&location, "error").as_deref(),
            Some("invalid_request")
        );

        let request_uri = push(&world, &[]).await;
        let browser = world.browser();
        let path = authorize_path(&world.client_id, &request_uri, &[]);
        let location = follow_to_client(&browser, &path, REDIRECT, &world.user).await;
        let code = param(&location, "code").unwrap();
        let redeemed = world.redeem(&code).await;
        let status = redeemed.status();
        let tokens: Value = redeemed.json().await.unwrap();
        assert_eq!(status, 200, "{tokens}");
        assert!(tokens["access_token"].is_string());
        world.shutdown().await;
    }
}
