//! The signed-in person's CIBA requests as JSON (`/api/v1/identity/ciba/requests*`), on SQLite
//! and PostgreSQL: listed for the person of the session only (decoys and other people's never),
//! approved or denied through the API with the client's polls following, and the refusals: no
//! session (401), a decision from another origin or without one (403), another person's, an
//! unknown, a malformed or an already decided request (404, one answer). Then the same through
//! a token for the person (ADR 0010): approval with the token's session, and the refusals — no
//! `ciba:approve` (403 insufficient_scope; a third-party application is never granted it), a
//! machine token and an API key (403), garbage, another tenant's host, a revoked token and a
//! token whose session was signed out (401).

use crate::ciba::{ciba_client, poll, signed_in, start, started, world};
use crate::hosted::support::{Browser, PASSWORD, World};
use reqwest::Method;
use serde_json::Value;
use std::time::Duration;
use svc_testkit::BACKENDS;

const LIST: &str = "/api/v1/identity/ciba/requests";

/// `GET` the list as `browser`: status and body.
async fn list(browser: &Browser) -> (u16, Value) {
    let response = browser.request(Method::GET, LIST).send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// `POST …/{id}/{decision}` as `browser` with `origin` (if any): status and body.
async fn decide(browser: &Browser, id: &str, decision: &str, origin: Option<&str>) -> (u16, Value) {
    let mut request = browser.request(Method::POST, &format!("{LIST}/{id}/{decision}"));
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test]
async fn the_person_lists_approves_and_denies_their_requests_through_the_api() {
    for backend in BACKENDS {
        let world: World = world(backend).await;
        let client = ciba_client(&world).await;
        let auth_req_id = started(&world, &client, &world.user).await;
        // A decoy for an unknown hint is never listed.
        let (status, _) = start(
            &world,
            &client,
            &[("scope", "openid"), ("login_hint", "nobody@example.com")],
        )
        .await;
        assert_eq!(status, 200);

        // No session: 401, as a problem.
        let (status, body) = list(&world.browser()).await;
        assert_eq!(status, 401, "{body}");
        assert_eq!(body["status"], 401);

        let browser = signed_in(&world, &world.user, PASSWORD).await;
        let (status, body) = list(&browser).await;
        assert_eq!(status, 200, "{body}");
        let requests = body["requests"].as_array().unwrap();
        assert_eq!(requests.len(), 1, "{body}");
        let request = &requests[0];
        assert_eq!(request["client_name"], "Bank terminal");
        assert_eq!(request["binding_message"], "W4SCT");
        assert!(request["expires_at"].is_string(), "{request}");
        let id = request["id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("cib_"), "{id}");

        // Decisions need the tenant's own origin.
        let origin = world.issuer();
        for bad in [None, Some("http://evil.example"), Some("null")] {
            let (status, body) = decide(&browser, &id, "approve", bad).await;
            assert_eq!(status, 403, "{bad:?}: {body}");
        }
        // Another person sees nothing and cannot decide it.
        world.create_user("bob@example.com", PASSWORD).await;
        let bob = signed_in(&world, "bob@example.com", PASSWORD).await;
        let (_, theirs) = list(&bob).await;
        assert_eq!(theirs["requests"], serde_json::json!([]));
        let (status, _) = decide(&bob, &id, "approve", Some(&origin)).await;
        assert_eq!(status, 404);
        for unknown in ["cib_01jd3xk1q7e8ccbz6r9v0w2y4m", "not-an-id", "%00"] {
            let (status, _) = decide(&browser, unknown, "approve", Some(&origin)).await;
            assert_eq!(status, 404, "{unknown}");
        }
        // Still pending for its person after all that.
        let (status, body) = poll(&world, &client, &auth_req_id).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("authorization_pending"))
        );

        let (status, body) = decide(&browser, &id, "approve", Some(&origin)).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["status"], "approved");
        assert_eq!(body["id"], id.as_str());
        let (status, _) = decide(&browser, &id, "deny", Some(&origin)).await;
        assert_eq!(status, 404, "decided once");
        tokio::time::sleep(Duration::from_millis(1_100)).await;
        let (status, tokens) = poll(&world, &client, &auth_req_id).await;
        assert_eq!(status, 200, "{tokens}");
        assert!(tokens["id_token"].is_string(), "{tokens}");

        // A denial reaches the client as access_denied.
        let denied_req = started(&world, &client, &world.user).await;
        let (_, body) = list(&browser).await;
        let id = body["requests"][0]["id"].as_str().unwrap().to_owned();
        let (status, body) = decide(&browser, &id, "deny", Some(&origin)).await;
        assert_eq!((status, body["status"].as_str()), (200, Some("denied")));
        let (status, body) = poll(&world, &client, &denied_req).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("access_denied"))
        );
        world.shutdown().await;
    }
}

/// A first-party application of the person's, whose tokens are for the tenant's API and may
/// carry `ciba:approve` (`first_party` as given): `(client_id, secret)`.
async fn approving_app(world: &World, first_party: bool) -> (String, String) {
    world
        .register_with(serde_json::json!({
            "name": "Bank app",
            "first_party": first_party,
            "api_audience": format!("{}/api/v1", world.issuer()),
            "allowed_scopes": ["openid", "ciba:approve"],
        }))
        .await
}

/// A token of `app` for the world's person with `scope`, and the browser signed in for it.
async fn token_for(world: &World, app: &(String, String), scope: &str) -> (String, Browser) {
    let browser = world.browser();
    let code = world.code_for(&browser, &app.0, scope, &[]).await;
    let issued = crate::hosted::tokens::tokens(world, &code, app).await;
    let token = issued["access_token"].as_str().unwrap().to_owned();
    (token, browser)
}

/// `method path` on `host` with `authorization` (no cookie, no origin): status, body and
/// `WWW-Authenticate`.
async fn with_token(
    world: &World,
    host: &str,
    method: Method,
    path: &str,
    authorization: &str,
) -> (u16, Value, Option<String>) {
    let response = world
        .app
        .request(method, path)
        .header("host", host)
        .header("authorization", authorization)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = response.json().await.unwrap_or(Value::Null);
    (status, body, challenge)
}

#[tokio::test]
async fn a_token_for_the_person_lists_and_decides_while_its_session_lives() {
    for backend in BACKENDS {
        let world: World = world(backend).await;
        let client = ciba_client(&world).await;
        let app = approving_app(&world, true).await;
        let (token, browser) = token_for(&world, &app, "openid ciba:approve").await;
        let claims = crate::hosted::support::payload(&token);
        assert!(
            claims["sid"]
                .as_str()
                .is_some_and(|s| s.starts_with("ses_")),
            "a token issued in a session names it: {claims}"
        );
        let bearer = format!("Bearer {token}");
        let host = world.host.clone();

        let auth_req_id = started(&world, &client, &world.user).await;
        let (status, body, _) = with_token(&world, &host, Method::GET, LIST, &bearer).await;
        assert_eq!(status, 200, "{backend:?}: {body}");
        let id = body["requests"][0]["id"].as_str().unwrap().to_owned();
        assert_eq!(body["requests"].as_array().unwrap().len(), 1, "{body}");
        // No Origin needed: the token is no ambient credential.
        let approve = format!("{LIST}/{id}/approve");
        let (status, body, _) = with_token(&world, &host, Method::POST, &approve, &bearer).await;
        assert_eq!(
            (status, body["status"].as_str()),
            (200, Some("approved")),
            "{body}"
        );
        tokio::time::sleep(Duration::from_millis(1_100)).await;
        let (status, tokens) = poll(&world, &client, &auth_req_id).await;
        assert_eq!(status, 200, "{tokens}");
        let id_token = crate::hosted::support::payload(tokens["id_token"].as_str().unwrap());
        assert_eq!(
            (&id_token["auth_time"], &id_token["sid"]),
            (&claims["auth_time"], &claims["sid"]),
            "the approval carries the token's session"
        );

        // The refusals, each before anything is decided.
        let pending = started(&world, &client, &world.user).await;
        let deny_path = |id: &str| format!("{LIST}/{id}/deny");
        let (_, body, _) = with_token(&world, &host, Method::GET, LIST, &bearer).await;
        let id = body["requests"][0]["id"].as_str().unwrap().to_owned();
        // Without the scope: 403 insufficient_scope.
        let (narrow, _) = token_for(&world, &app, "openid").await;
        let (status, body, challenge) = with_token(
            &world,
            &host,
            Method::GET,
            LIST,
            &format!("Bearer {narrow}"),
        )
        .await;
        assert_eq!(status, 403, "{body}");
        assert!(challenge.unwrap().contains("insufficient_scope"));
        // A third-party application is never granted the scope (its pairwise token would
        // name nobody here): dropped at issuance, so its token is 403 insufficient_scope.
        let third = approving_app(&world, false).await;
        let (pairwise, _) = token_for(&world, &third, "openid ciba:approve").await;
        let third_claims = crate::hosted::support::payload(&pairwise);
        assert_eq!(third_claims["scope"], "openid", "{third_claims}");
        let (status, body, challenge) = with_token(
            &world,
            &host,
            Method::GET,
            LIST,
            &format!("Bearer {pairwise}"),
        )
        .await;
        assert_eq!(status, 403, "{body}");
        assert!(challenge.unwrap().contains("insufficient_scope"));
        // The machine's management token holds no such scope; an API key acts for nobody.
        let machine = world.api(Method::GET, LIST).send().await.unwrap();
        assert_eq!(machine.status(), 403);
        let (status, _, _) = with_token(
            &world,
            &host,
            Method::GET,
            LIST,
            &format!("Bearer {}", "svck_".repeat(8)),
        )
        .await;
        assert_eq!(status, 403);
        // Garbage, another scheme, another tenant's host: 401.
        for authorization in ["Bearer not.a.token", "Basic YTpi", "Bearer"] {
            let (status, _, _) = with_token(&world, &host, Method::GET, LIST, authorization).await;
            assert_eq!(status, 401, "{authorization}");
        }
        let beta = world.other_tenant("beta").await;
        let (status, _, _) = with_token(&world, &beta.host, Method::GET, LIST, &bearer).await;
        assert_eq!(status, 401, "another tenant's host");
        let (status, _, _) =
            with_token(&world, &beta.host, Method::POST, &deny_path(&id), &bearer).await;
        assert_eq!(status, 401, "another tenant's host");
        // A revoked token: 401.
        let (revoked, _) = token_for(&world, &app, "openid ciba:approve").await;
        let response = world
            .app
            .request(Method::POST, "/oauth/revoke")
            .header("host", &host)
            .basic_auth(&app.0, Some(&app.1))
            .form(&[("token", revoked.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let (status, _, challenge) = with_token(
            &world,
            &host,
            Method::POST,
            &deny_path(&id),
            &format!("Bearer {revoked}"),
        )
        .await;
        assert_eq!(status, 401);
        assert!(challenge.unwrap().contains("invalid_token"));
        // Still pending after all that.
        let (status, body) = poll(&world, &client, &pending).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("authorization_pending"))
        );

        // The person signs out in the browser: the token no longer acts for them.
        let page = browser
            .submit("/auth/sign-out", "/auth/sign-out", &[])
            .await;
        assert_eq!(page.status, 303, "{}", page.body);
        let (status, body, challenge) =
            with_token(&world, &host, Method::POST, &deny_path(&id), &bearer).await;
        assert_eq!(status, 401, "{body}");
        assert!(challenge.unwrap().contains("invalid_token"));
        tokio::time::sleep(Duration::from_millis(1_100)).await;
        let (status, body) = poll(&world, &client, &pending).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("authorization_pending")),
            "an ended session decided nothing"
        );
        world.shutdown().await;
    }
}
