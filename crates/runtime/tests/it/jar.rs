//! Signed request objects (RFC 9101, JAR) over HTTP, on SQLite and PostgreSQL: sent by value to
//! `/oauth/authorize` and pushed to `/oauth/par`, signed with a key the application registered;
//! the refusals each hostile request object gets (`alg: none`, another key, expired, another
//! audience, another issuer, another kind of JWT, outside parameters that disagree, a nested
//! request); and the `[oidc].request_objects` switch (disabled, required) with its discovery
//! fields. Authlib drives the same flow in `interop.rs` (`interop/authlib/jar.py`).

use crate::hosted::support::{CHALLENGE, Page, REDIRECT, Setup, World, follow_to_client, param};
use base64::Engine;
use reqwest::Method;
use serde_json::{Value, json};
use svc_crypto::SigningKey;
use svc_domain::{Clock, SigningAlg, SystemClock};
use svc_testkit::BACKENDS;

/// An application of `world` with `key` registered: `(client_id, client_secret)`.
async fn signing_client(world: &World, key: &SigningKey) -> (String, String) {
    world
        .register_with(json!({"name": "Signed requests", "jwks": {"keys": [key.public_jwk()]}}))
        .await
}

/// The claims of a good request object of `client_id` for `world`, with `overrides` (a `null`
/// member removes the claim).
fn claims(world: &World, client_id: &str, overrides: Value) -> Value {
    let now = SystemClock.now().unix_timestamp();
    let mut claims = json!({
        "iss": client_id,
        "aud": world.issuer(),
        "client_id": client_id,
        "exp": now + 120,
        "iat": now,
        "nbf": now,
        "jti": format!("jar-{now}"),
        "response_type": "code",
        "redirect_uri": REDIRECT,
        "scope": "openid profile",
        "state": "signed-state",
        "nonce": "signed-nonce",
        "code_challenge": CHALLENGE,
        "code_challenge_method": "S256",
        "max_age": 3600,
    });
    for (name, value) in overrides.as_object().unwrap() {
        if value.is_null() {
            claims.as_object_mut().unwrap().remove(name);
        } else {
            claims[name] = value.clone();
        }
    }
    claims
}

/// `/oauth/authorize` with `client_id`, `request` and `extra`.
fn authorize_path(client_id: &str, request: &str, extra: &[(&str, &str)]) -> String {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    query
        .append_pair("client_id", client_id)
        .append_pair("request", request);
    for (k, v) in extra {
        query.append_pair(k, v);
    }
    format!("/oauth/authorize?{}", query.finish())
}

fn assert_error_page(page: &Page, error: &str, what: &str) {
    assert_eq!(page.status, 400, "{what}: {}", page.body);
    assert!(page.location().is_none(), "{what}: never a redirect");
    assert!(page.body.contains(error), "{what}: {}", page.body);
}

/// The ID token's claims, read without verification (the flow's own checks verify tokens).
fn id_token_claims(tokens: &Value) -> Value {
    let token = tokens["id_token"].as_str().unwrap();
    let payload = token.split('.').nth(1).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[tokio::test]
async fn a_signed_request_by_value_signs_in_and_its_code_redeems() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let key = SigningKey::generate(SigningAlg::Es256).unwrap();
        let (client_id, secret) = signing_client(&world, &key).await;
        let token = key
            .sign_jwt(
                "oauth-authz-req+jwt",
                &claims(&world, &client_id, json!({})),
            )
            .unwrap();
        // OIDC Core §6.1 clients repeat response_type and scope outside: agreeing is fine.
        let path = authorize_path(
            &client_id,
            &token,
            &[("response_type", "code"), ("scope", "openid profile")],
        );
        let browser = world.browser();
        let location = follow_to_client(&browser, &path, REDIRECT, &world.user).await;
        assert_eq!(param(&location, "error"), None, "{location}");
        assert_eq!(
            param(&location, "state").as_deref(),
            Some("signed-state"),
            "the request object's parameters are the ones used"
        );
        let code = param(&location, "code").unwrap();
        let redeemed = world.redeem_as(&code, &client_id, &secret).await;
        assert_eq!(redeemed.status(), 200);
        let tokens: Value = redeemed.json().await.unwrap();
        assert_eq!(tokens["scope"], "openid profile", "{tokens}");
        assert_eq!(id_token_claims(&tokens)["nonce"], "signed-nonce");

        // An RS256-signed one of a client registering its key by jwks works too.
        let rsa = SigningKey::generate(SigningAlg::Rs256).unwrap();
        let (rsa_client, rsa_secret) = signing_client(&world, &rsa).await;
        let token = rsa
            .sign_jwt("JWT", &claims(&world, &rsa_client, json!({"state": "rsa"})))
            .unwrap();
        let location = follow_to_client(
            &browser,
            &authorize_path(&rsa_client, &token, &[]),
            REDIRECT,
            &world.user,
        )
        .await;
        assert_eq!(
            param(&location, "state").as_deref(),
            Some("rsa"),
            "{location}"
        );
        let code = param(&location, "code").unwrap();
        assert_eq!(
            world
                .redeem_as(&code, &rsa_client, &rsa_secret)
                .await
                .status(),
            200
        );
        world.shutdown().await;
    }
}

/// A compact JWS with `header` and `claims` and a junk signature.
fn forged(header: Value, claims: &Value) -> String {
    let b64 = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!("{}.{}.c2ln", b64(&header), b64(claims))
}

/// Parameters sent beside a request object.
type Outside = Vec<(&'static str, &'static str)>;

#[tokio::test]
async fn hostile_request_objects_get_an_error_page_and_no_code() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let key = SigningKey::generate(SigningAlg::Es256).unwrap();
        let (client_id, _) = signing_client(&world, &key).await;
        let stranger = SigningKey::generate(SigningAlg::Es256).unwrap();
        let (other_client, _) = signing_client(&world, &stranger).await;
        let sign = |overrides: Value| {
            key.sign_jwt(
                "oauth-authz-req+jwt",
                &claims(&world, &client_id, overrides),
            )
            .unwrap()
        };
        let now = SystemClock.now().unix_timestamp();
        let good = claims(&world, &client_id, json!({}));
        let unsigned = {
            let b64 =
                |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
            format!("{}.{}.", b64(&json!({"alg": "none"})), b64(&good))
        };
        let cases: Vec<(&str, String, Outside)> = vec![
            ("alg none", unsigned, vec![]),
            (
                "HS256 with the public key as secret",
                forged(json!({"alg": "HS256", "kid": key.kid()}), &good),
                vec![],
            ),
            (
                "another key",
                stranger.sign_jwt("oauth-authz-req+jwt", &good).unwrap(),
                vec![],
            ),
            (
                "a forged signature",
                forged(json!({"alg": "ES256", "kid": key.kid()}), &good),
                vec![],
            ),
            ("expired", sign(json!({"exp": now - 5})), vec![]),
            ("without exp", sign(json!({"exp": null})), vec![]),
            ("too long-lived", sign(json!({"exp": now + 7200})), vec![]),
            (
                "another audience",
                sign(json!({"aud": "https://other.example"})),
                vec![],
            ),
            (
                "another issuer",
                sign(json!({"iss": other_client.as_str()})),
                vec![],
            ),
            (
                "another client_id",
                sign(json!({"client_id": other_client.as_str()})),
                vec![],
            ),
            (
                "an access token's typ",
                key.sign_jwt("at+jwt", &good).unwrap(),
                vec![],
            ),
            (
                "a nested request",
                sign(json!({"request": "x.y.z"})),
                vec![],
            ),
            (
                "a nested request_uri",
                sign(json!({"request_uri": "https://evil.example/r"})),
                vec![],
            ),
            ("a scope array", sign(json!({"scope": ["openid"]})), vec![]),
            (
                "an outside redirect_uri",
                sign(json!({})),
                vec![("redirect_uri", "https://evil.example/cb")],
            ),
            (
                "an outside state that differs",
                sign(json!({})),
                vec![("state", "other")],
            ),
            (
                "an outside nonce missing inside",
                sign(json!({"nonce": null})),
                vec![("nonce", "n")],
            ),
            ("not a JWT", "not-a-jwt".to_owned(), vec![]),
        ];
        let browser = world.browser();
        for (what, token, extra) in &cases {
            let page = browser.get(&authorize_path(&client_id, token, extra)).await;
            assert_error_page(&page, "invalid_request_object", what);
        }
        // The client's own request object, sent under another client_id, is that client's
        // problem: its keys do not verify it.
        let page = browser
            .get(&authorize_path(&other_client, &sign(json!({})), &[]))
            .await;
        assert_error_page(
            &page,
            "invalid_request_object",
            "another client's request object",
        );
        // A request object whose parameters fail the ordinary checks is refused like a plain
        // request with them: an unregistered redirect URI on a page, the rest by redirect.
        let page = browser
            .get(&authorize_path(
                &client_id,
                &sign(json!({"redirect_uri": "https://evil.example/cb"})),
                &[],
            ))
            .await;
        assert_error_page(&page, "invalid_request", "unregistered redirect_uri inside");
        let page = browser
            .get(&authorize_path(
                &client_id,
                &sign(json!({"scope": "openid admin"})),
                &[],
            ))
            .await;
        let location = page.location().unwrap();
        assert!(location.starts_with(REDIRECT), "{location}");
        assert_eq!(param(&location, "error").as_deref(), Some("invalid_scope"));
        assert_eq!(param(&location, "state").as_deref(), Some("signed-state"));
        world.shutdown().await;
    }
}

/// `POST /oauth/par` with Basic credentials and `form`: status and body.
async fn push(world: &World, (id, secret): (&str, &str), form: &[(&str, &str)]) -> (u16, Value) {
    let response = world
        .app
        .request(Method::POST, "/oauth/par")
        .header("host", &world.host)
        .basic_auth(id, Some(secret))
        .form(form)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test]
async fn a_pushed_request_object_stands_for_the_whole_request() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let key = SigningKey::generate(SigningAlg::Es256).unwrap();
        let (client_id, secret) = signing_client(&world, &key).await;
        let me = (client_id.as_str(), secret.as_str());
        let token = key
            .sign_jwt(
                "oauth-authz-req+jwt",
                &claims(&world, &client_id, json!({"state": "pushed-signed"})),
            )
            .unwrap();
        let (status, body) = push(&world, me, &[("request", &token)]).await;
        assert_eq!(status, 201, "{body}");
        let request_uri = body["request_uri"].as_str().unwrap();
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query
            .append_pair("client_id", &client_id)
            .append_pair("request_uri", request_uri);
        let path = format!("/oauth/authorize?{}", query.finish());
        let location = follow_to_client(&world.browser(), &path, REDIRECT, &world.user).await;
        assert_eq!(param(&location, "state").as_deref(), Some("pushed-signed"));
        let code = param(&location, "code").unwrap();
        let redeemed = world.redeem_as(&code, &client_id, &secret).await;
        assert_eq!(redeemed.status(), 200);

        // Refusals are JSON (RFC 9126 §2.3) with invalid_request_object.
        let now = SystemClock.now().unix_timestamp();
        let expired = key
            .sign_jwt(
                "oauth-authz-req+jwt",
                &claims(&world, &client_id, json!({"exp": now - 1})),
            )
            .unwrap();
        let good = key
            .sign_jwt(
                "oauth-authz-req+jwt",
                &claims(&world, &client_id, json!({})),
            )
            .unwrap();
        for (what, form) in [
            ("expired", vec![("request", expired.as_str())]),
            ("alg none", vec![("request", "eyJhbGciOiJub25lIn0.e30.")]),
            (
                "a disagreeing scope",
                vec![("request", good.as_str()), ("scope", "openid")],
            ),
        ] {
            let (status, body) = push(&world, me, &form).await;
            assert_eq!(status, 400, "{what}: {body}");
            assert_eq!(body["error"], "invalid_request_object", "{what}: {body}");
        }
        // The signed parameters still pass the ordinary checks.
        let bad_scope = key
            .sign_jwt(
                "oauth-authz-req+jwt",
                &claims(&world, &client_id, json!({"scope": "openid admin"})),
            )
            .unwrap();
        let (status, body) = push(&world, me, &[("request", &bad_scope)]).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_scope")),
            "{body}"
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn request_objects_can_be_switched_off_or_required() {
    for backend in BACKENDS {
        let setup = Setup {
            env: vec![("SVC_OIDC__REQUEST_OBJECTS", "disabled")],
            ..Setup::default()
        };
        let world = World::new(backend, setup).await;
        let doc = world.discovery().await;
        assert_eq!(doc["request_parameter_supported"], false);
        assert!(
            doc.get("request_object_signing_alg_values_supported")
                .is_none()
        );
        assert!(doc.get("require_signed_request_object").is_none());
        let key = SigningKey::generate(SigningAlg::Es256).unwrap();
        let (client_id, secret) = signing_client(&world, &key).await;
        let token = key
            .sign_jwt(
                "oauth-authz-req+jwt",
                &claims(&world, &client_id, json!({})),
            )
            .unwrap();
        let page = world
            .browser()
            .get(&authorize_path(
                &client_id,
                &token,
                &[("redirect_uri", REDIRECT), ("state", "s")],
            ))
            .await;
        let location = page.location().unwrap();
        assert!(location.starts_with(REDIRECT), "{location}");
        assert_eq!(
            param(&location, "error").as_deref(),
            Some("request_not_supported")
        );
        let (status, body) = push(&world, (&client_id, &secret), &[("request", &token)]).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_request")),
            "{body}"
        );
        world.shutdown().await;

        let setup = Setup {
            env: vec![("SVC_OIDC__REQUEST_OBJECTS", "required")],
            ..Setup::default()
        };
        let world = World::new(backend, setup).await;
        let doc = world.discovery().await;
        assert_eq!(doc["request_parameter_supported"], true);
        assert_eq!(doc["require_signed_request_object"], true);
        assert_eq!(
            doc["request_object_signing_alg_values_supported"],
            json!(["ES256", "EdDSA", "RS256", "PS256"])
        );
        // A plain request: refused at its (valid) redirect URI.
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
        // An unsigned push too.
        let plain = [
            ("response_type", "code"),
            ("redirect_uri", REDIRECT),
            ("scope", "openid"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
        ];
        let (status, body) = push(&world, (&world.client_id, &world.client_secret), &plain).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_request")),
            "{body}"
        );
        // A signed one goes through, and its code redeems.
        let key = SigningKey::generate(SigningAlg::EdDsa).unwrap();
        let (client_id, secret) = signing_client(&world, &key).await;
        let token = key
            .sign_jwt(
                "oauth-authz-req+jwt",
                &claims(&world, &client_id, json!({})),
            )
            .unwrap();
        let location = follow_to_client(
            &world.browser(),
            &authorize_path(&client_id, &token, &[]),
            REDIRECT,
            &world.user,
        )
        .await;
        let code = param(&location, "code").unwrap();
        let redeemed = world.redeem_as(&code, &client_id, &secret).await;
        assert_eq!(redeemed.status(), 200);
        world.shutdown().await;
    }
}
