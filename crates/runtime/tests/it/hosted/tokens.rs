//! What the tokens of a person's sign-in are good for, end to end: the management API only for
//! a tenant administrator (see `administrators`), audience-bound introspection, and nothing at
//! all once the person is suspended.

use super::support::*;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

/// Redeems `code` for `client` and returns the token response, asserting 200.
pub(crate) async fn tokens(world: &World, code: &str, client: &(String, String)) -> Value {
    let response = world.redeem_as(code, &client.0, &client.1).await;
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test]
async fn a_persons_token_without_the_administrator_role_gets_no_management_scope() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        // An application whose tokens are meant for the management API itself.
        let admin_app = world
            .register_with(json!({
                "name": "Admin console",
                "first_party": true,
                "api_audience": format!("{}/api/v1", world.issuer()),
                "allowed_scopes": ["openid", "users:read"],
            }))
            .await;
        let browser = world.browser();
        let code = world
            .code_for(&browser, &admin_app.0, "openid users:read", &[])
            .await;
        let issued = tokens(&world, &code, &admin_app).await;
        assert_eq!(issued["scope"], "openid", "{backend:?}: no role, no scope");
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
        assert!(
            refused.headers()["www-authenticate"]
                .to_str()
                .unwrap()
                .contains("insufficient_scope")
        );
        let problem: Value = refused.json().await.unwrap();
        assert_eq!(problem["error"], "insufficient_scope", "{problem}");
        // The same call with the management application's machine token works.
        let allowed = world
            .api(reqwest::Method::GET, "/api/v1/tenant-users")
            .send()
            .await
            .unwrap();
        assert_eq!(allowed.status(), 200);
        // Conversely, a machine's token has no UserInfo: valid, but no person behind it
        // (RFC 6750 §3.1 insufficient_scope, 403).
        let machine = world
            .api(reqwest::Method::GET, "/userinfo")
            .send()
            .await
            .unwrap();
        assert_eq!(machine.status(), 403);
        assert!(
            machine.headers()["www-authenticate"]
                .to_str()
                .unwrap()
                .contains("error=\"insufficient_scope\"")
        );
        world.shutdown().await;
    }
}

/// Verifies `token` with jsonwebtoken against the tenant's published JWKS (fetched over HTTP),
/// for audience `client_id`; returns the JOSE algorithm and the claims.
pub(crate) async fn verify_id_token(
    world: &World,
    token: &str,
    client_id: &str,
) -> (String, Value) {
    let _ = jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.install_default();
    let jwks: jsonwebtoken::jwk::JwkSet = world
        .app
        .request(reqwest::Method::GET, "/.well-known/jwks.json")
        .header("host", &world.host)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let header = jsonwebtoken::decode_header(token).unwrap();
    assert_eq!(header.typ.as_deref(), Some("JWT"));
    let jwk = jwks
        .find(header.kid.as_deref().unwrap())
        .expect("kid in JWKS");
    let mut validation = jsonwebtoken::Validation::new(header.alg);
    validation.set_audience(&[client_id]);
    validation.set_issuer(&[world.issuer()]);
    validation.set_required_spec_claims(&["iss", "sub", "aud", "exp"]);
    let decoded = jsonwebtoken::decode::<Value>(
        token,
        &jsonwebtoken::DecodingKey::from_jwk(jwk).unwrap(),
        &validation,
    )
    .unwrap_or_else(|e| panic!("{:?} ID token does not verify: {e}", header.alg));
    (format!("{:?}", header.alg), decoded.claims)
}

#[tokio::test]
async fn id_tokens_use_each_applications_signing_algorithm_and_verify_against_the_jwks() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let browser = world.browser();
        for (alg, expected) in [
            (None, "RS256"),
            (Some("ES256"), "ES256"),
            (Some("EdDSA"), "EdDSA"),
        ] {
            let mut registration = json!({"name": format!("App {expected}")});
            if let Some(alg) = alg {
                registration["id_token_signed_response_alg"] = json!(alg);
            }
            let app = world.register_with(registration).await;
            let code = world.code_for(&browser, &app.0, "openid", &[]).await;
            let issued = tokens(&world, &code, &app).await;
            let (jose_alg, claims) =
                verify_id_token(&world, issued["id_token"].as_str().unwrap(), &app.0).await;
            assert_eq!(jose_alg, expected, "{backend:?}");
            assert_eq!(claims["aud"], app.0);
        }
        world.shutdown().await;
    }
}

#[tokio::test]
async fn claims_and_acr_reach_the_id_token_and_an_unmet_essential_acr_is_refused() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let client = (world.client_id.clone(), world.client_secret.clone());
        let browser = world.browser();
        let code = world
            .code_for(
                &browser,
                &client.0,
                "openid profile",
                &[
                    ("claims", r#"{"id_token":{"name":null,"email":null}}"#),
                    ("acr_values", "urn:svc:aal1"),
                ],
            )
            .await;
        let issued = tokens(&world, &code, &client).await;
        let (_, claims) =
            verify_id_token(&world, issued["id_token"].as_str().unwrap(), &client.0).await;
        assert_eq!(claims["acr"], "urn:svc:aal1", "{backend:?}: {claims}");
        assert_eq!(claims["name"], "Ada Lovelace");
        assert!(claims.get("email").is_none(), "email scope not granted");

        let path = world.authorize_path(
            "openid",
            "aal2",
            &[(
                "claims",
                r#"{"id_token":{"acr":{"essential":true,"values":["urn:svc:aal2"]}}}"#,
            )],
        );
        let refused = browser.get(&path).await;
        assert_eq!(refused.status, 303);
        let location = refused.location().unwrap();
        assert!(location.starts_with(REDIRECT), "{location}");
        assert_eq!(
            param(&location, "error").as_deref(),
            Some("unmet_authentication_requirements")
        );
        assert_eq!(param(&location, "state").as_deref(), Some("aal2"));
        world.shutdown().await;
    }
}

#[tokio::test]
async fn userinfo_takes_header_tokens_only_and_a_suspended_persons_tokens_stop_working() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let client = (world.client_id.clone(), world.client_secret.clone());
        let browser = world.browser();
        let code = world
            .code_for(&browser, &client.0, "openid email offline_access", &[])
            .await;
        let issued = tokens(&world, &code, &client).await;
        let access = issued["access_token"].as_str().unwrap();
        let refresh = issued["refresh_token"].as_str().unwrap();
        let userinfo = || {
            world
                .app
                .request(reqwest::Method::GET, "/userinfo")
                .header("host", &world.host)
                .bearer_auth(access)
                .send()
        };
        let introspect = || {
            world
                .app
                .request(reqwest::Method::POST, "/oauth/introspect")
                .header("host", &world.host)
                .basic_auth(&client.0, Some(&client.1))
                .form(&[("token", access)])
                .send()
        };
        assert_eq!(userinfo().await.unwrap().status(), 200);
        // RFC 9700 §4.9 (RFC 6750 §2.2, §2.3): the token is never taken from the URL or the
        // form body, only from the Authorization header.
        let in_query = world
            .app
            .request(
                reqwest::Method::GET,
                &format!("/userinfo?access_token={access}"),
            )
            .header("host", &world.host)
            .send()
            .await
            .unwrap();
        let in_body = world
            .app
            .request(reqwest::Method::POST, "/userinfo")
            .header("host", &world.host)
            .form(&[("access_token", access)])
            .send()
            .await
            .unwrap();
        for refused in [in_query, in_body] {
            assert_eq!(refused.status(), 401);
            assert_eq!(
                refused.headers()["www-authenticate"],
                "Bearer realm=\"svc\""
            );
        }
        let live: Value = introspect().await.unwrap().json().await.unwrap();
        assert_eq!(live["active"], true, "{live}");

        let users: Value = world
            .api(reqwest::Method::GET, "/api/v1/tenant-users")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let ada = users["items"][0]["id"].as_str().unwrap().to_owned();
        let suspended = world
            .api(
                reqwest::Method::POST,
                &format!("/api/v1/tenant-users/{ada}/suspend"),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(suspended.status(), 200);

        let refused = world
            .app
            .request(reqwest::Method::POST, "/oauth/token")
            .header("host", &world.host)
            .basic_auth(&client.0, Some(&client.1))
            .form(&[("grant_type", "refresh_token"), ("refresh_token", refresh)])
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 400, "{backend:?}");
        assert_eq!(
            refused.json::<Value>().await.unwrap()["error"],
            "invalid_grant"
        );
        let info = userinfo().await.unwrap();
        assert_eq!(info.status(), 401);
        assert!(
            info.headers()["www-authenticate"]
                .to_str()
                .unwrap()
                .contains("invalid_token")
        );
        let dead: Value = introspect().await.unwrap().json().await.unwrap();
        assert_eq!(dead, json!({"active": false}));
        world.shutdown().await;
    }
}
