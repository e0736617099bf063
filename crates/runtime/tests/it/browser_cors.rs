//! CORS for single-page applications on `/oauth/token`, `/oauth/revoke` and `/userinfo`, on
//! SQLite and PostgreSQL: the origins of the tenant's public applications' redirect URIs are
//! answered (preflight and actual requests, with `Vary: Origin`), and nothing else is: not a
//! confidential application's origin, not an unknown one, not another tenant's, not the
//! introspection endpoint. A public client's whole code flow ends in a token response its page
//! can read.

use crate::hosted::support::{CHALLENGE, Setup, VERIFIER, World, follow_to_client, param};
use reqwest::Method;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

const SPA: &str = "https://spa.example.com";
const SPA_CALLBACK: &str = "https://spa.example.com/callback";

/// Registers the public single-page application: its client id.
async fn spa(world: &World) -> String {
    let response = world
        .api(Method::POST, "/api/v1/applications")
        .json(&json!({
            "name": "Single-page app",
            "redirect_uris": [SPA_CALLBACK],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
            "allowed_scopes": ["openid", "profile", "offline_access"],
            "first_party": true,
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let body: Value = response.json().await.unwrap();
    body["client_id"].as_str().unwrap().to_owned()
}

/// A preflight of `path` on `host` from `origin`: status and headers.
async fn preflight(
    world: &World,
    host: &str,
    path: &str,
    origin: &str,
) -> (u16, reqwest::header::HeaderMap) {
    let response = world
        .app
        .request(Method::OPTIONS, path)
        .header("host", host)
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type, dpop")
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.headers().clone())
}

fn header<'a>(headers: &'a reqwest::header::HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).map(|v| v.to_str().unwrap())
}

#[tokio::test]
async fn public_clients_origins_may_call_the_browser_endpoints_and_nobody_else() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let client_id = spa(&world).await;

        for path in ["/oauth/token", "/oauth/revoke", "/userinfo"] {
            let (status, headers) = preflight(&world, &world.host, path, SPA).await;
            assert_eq!(status, 204, "{path}");
            assert_eq!(header(&headers, "access-control-allow-origin"), Some(SPA));
            assert!(
                header(&headers, "access-control-allow-methods")
                    .unwrap()
                    .contains("POST")
            );
            let allowed = header(&headers, "access-control-allow-headers").unwrap();
            assert!(
                allowed.contains("content-type") && allowed.contains("dpop"),
                "{allowed}"
            );
            assert_eq!(header(&headers, "access-control-max-age"), Some("600"));
            assert!(header(&headers, "access-control-allow-credentials").is_none());
            assert_eq!(header(&headers, "vary"), Some("origin"));
        }
        // A confidential application's origin, an unknown one, `null`: refused, no CORS.
        for origin in ["https://app.example.com", "https://evil.example", "null"] {
            let (status, headers) = preflight(&world, &world.host, "/oauth/token", origin).await;
            assert_eq!(status, 403, "{origin}");
            assert!(
                header(&headers, "access-control-allow-origin").is_none(),
                "{origin}"
            );
        }
        // Introspection is for resource servers: no CORS at all.
        let (status, headers) = preflight(&world, &world.host, "/oauth/introspect", SPA).await;
        assert_ne!(status, 204);
        assert!(header(&headers, "access-control-allow-origin").is_none());
        // Another tenant's hosts are not opened by this tenant's applications.
        let beta = world.other_tenant("beta").await;
        let (status, headers) = preflight(&world, &beta.host, "/oauth/token", SPA).await;
        assert_eq!(status, 403);
        assert!(header(&headers, "access-control-allow-origin").is_none());

        // The whole flow: the page reads its token response, and an error it can read too.
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &client_id)
            .append_pair("redirect_uri", SPA_CALLBACK)
            .append_pair("scope", "openid offline_access")
            .append_pair("state", "spa")
            .append_pair("code_challenge", CHALLENGE)
            .append_pair("code_challenge_method", "S256");
        let path = format!("/oauth/authorize?{}", query.finish());
        let location = follow_to_client(&world.browser(), &path, SPA_CALLBACK, &world.user).await;
        let code = param(&location, "code").unwrap();
        let redeem = |origin: &'static str, code: String| {
            let client_id = client_id.clone();
            let world = &world;
            async move {
                world
                    .app
                    .request(Method::POST, "/oauth/token")
                    .header("host", &world.host)
                    .header("origin", origin)
                    .form(&[
                        ("grant_type", "authorization_code"),
                        ("client_id", client_id.as_str()),
                        ("code", code.as_str()),
                        ("redirect_uri", SPA_CALLBACK),
                        ("code_verifier", VERIFIER),
                    ])
                    .send()
                    .await
                    .unwrap()
            }
        };
        let response = redeem(SPA, code.clone()).await;
        assert_eq!(response.status(), 200);
        assert_eq!(
            header(response.headers(), "access-control-allow-origin"),
            Some(SPA)
        );
        let exposed = header(response.headers(), "access-control-expose-headers").unwrap();
        assert!(exposed.contains("dpop-nonce"), "{exposed}");
        let tokens: Value = response.json().await.unwrap();
        let access = tokens["access_token"].as_str().unwrap().to_owned();
        let userinfo = world
            .app
            .request(Method::GET, "/userinfo")
            .header("host", &world.host)
            .header("origin", SPA)
            .bearer_auth(&access)
            .send()
            .await
            .unwrap();
        assert_eq!(userinfo.status(), 200);
        assert_eq!(
            header(userinfo.headers(), "access-control-allow-origin"),
            Some(SPA)
        );
        // Without Origin (a server): untouched.
        let server = world
            .app
            .request(Method::GET, "/userinfo")
            .header("host", &world.host)
            .bearer_auth(&access)
            .send()
            .await
            .unwrap();
        assert_eq!(server.status(), 200);
        assert!(header(server.headers(), "access-control-allow-origin").is_none());
        // The replayed code (which also revokes what it issued): an error the page can read;
        // from elsewhere, one it cannot.
        let response = redeem(SPA, code.clone()).await;
        assert_eq!(response.status(), 400);
        assert_eq!(
            header(response.headers(), "access-control-allow-origin"),
            Some(SPA)
        );
        let response = redeem("https://evil.example", code).await;
        assert_eq!(response.status(), 400);
        assert!(header(response.headers(), "access-control-allow-origin").is_none());
        assert_eq!(header(response.headers(), "vary"), Some("origin"));

        world.shutdown().await;
    }
}
