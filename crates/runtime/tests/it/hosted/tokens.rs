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

/// Verifies `token` with jsonwebtoken against the tenant's published JWKS (fetched over HTTP),
/// for audience `client_id`; returns the JOSE algorithm and the claims.
async fn verify_id_token(world: &World, token: &str, client_id: &str) -> (String, Value) {
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
