//! The signed-in person's CIBA requests as JSON (`/api/v1/identity/ciba/requests*`), on SQLite
//! and PostgreSQL: listed for the person of the session only (decoys and other people's never),
//! approved or denied through the API with the client's polls following, and the refusals: no
//! session (401), a decision from another origin or without one (403), another person's, an
//! unknown, a malformed or an already decided request (404, one answer).

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
