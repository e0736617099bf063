//! Dynamic client registration (RFC 7591) and its management protocol (RFC 7592) over HTTP, on
//! SQLite and PostgreSQL: the deployment switch and the tenant's policy (and what discovery
//! advertises under each), a registration that then signs a person in through the code flow,
//! reading, replacing and deleting it with its registration access token, the audit trail, and
//! the refusals: fragments and `javascript:` in redirect URIs, a `jwks_uri` at an internal
//! address, unknown metadata, software statements, management scopes, another client's token,
//! an application created through the management API, and the rate limit per address; the
//! `protected` policy with initial access tokens (missing, wrong, spent, deleted); software
//! statements of a trusted issuer (their metadata win) and every way one is refused; and a
//! tenant's own trusted issuers (set through the registration policy, refused by name when
//! hostile, vouching for that tenant alone).

use crate::hosted::support::{REDIRECT, Setup, World};
use reqwest::Method;
use serde_json::{Value, json};
use svc_testkit::{BACKENDS, Backend};

/// A world serving `/oauth/register`, `per_hour` registrations per address per hour.
async fn world(backend: Backend, per_hour: &'static str) -> World {
    World::new(
        backend,
        Setup {
            env: vec![
                ("SVC_DYNAMIC_REGISTRATION__ENABLED", "true"),
                (
                    "SVC_DYNAMIC_REGISTRATION__MAX_REGISTRATIONS_PER_HOUR",
                    per_hour,
                ),
            ],
            ..Setup::default()
        },
    )
    .await
}

/// Sets the tenant's registration policy through the management API.
async fn set_policy(world: &World, policy: &str) -> reqwest::Response {
    world
        .api(Method::PUT, "/api/v1/registration-policy")
        .json(&json!({ "policy": policy }))
        .send()
        .await
        .unwrap()
}

/// `method path` on the tenant's host with `token` as Bearer and `body` as JSON: status,
/// headers, body.
async fn call(
    world: &World,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = world.app.request(method, path).header("host", &world.host);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    (
        status,
        headers,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Registers `metadata`: status and body.
async fn register(world: &World, metadata: &Value) -> (u16, Value) {
    let (status, headers, body) =
        call(world, Method::POST, "/oauth/register", None, Some(metadata)).await;
    assert_eq!(headers["cache-control"], "no-store", "{body}");
    (status, body)
}

/// The `registration_endpoint` the tenant's discovery documents advertise (both the same).
async fn advertised(world: &World) -> Option<String> {
    let mut found = Vec::new();
    for path in [
        "/.well-known/openid-configuration",
        "/.well-known/oauth-authorization-server",
    ] {
        let (status, _, doc) = call(world, Method::GET, path, None, None).await;
        assert_eq!(status, 200);
        found.push(doc["registration_endpoint"].as_str().map(str::to_owned));
    }
    assert_eq!(found[0], found[1]);
    found.remove(0)
}

/// Ids of the tenant's applications.
async fn application_ids(world: &World) -> Vec<String> {
    let response = world
        .api(Method::GET, "/api/v1/applications?limit=100")
        .send()
        .await
        .unwrap();
    let body: Value = response.json().await.unwrap();
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["client_id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_registered_client_signs_a_person_in_and_manages_its_registration() {
    for backend in BACKENDS {
        let world = world(backend, "3").await;
        // The deployment serves registration, the tenant has not opened it.
        assert_eq!(advertised(&world).await, None, "{backend:?}");
        let (status, _, body) = call(
            &world,
            Method::POST,
            "/oauth/register",
            None,
            Some(&json!({"redirect_uris": [REDIRECT]})),
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (403, Some("access_denied")),
            "{body}"
        );
        let policy = set_policy(&world, "open").await;
        assert_eq!(policy.status(), 200);
        assert_eq!(
            policy.json::<Value>().await.unwrap(),
            json!({"policy": "open", "client_id_metadata_documents": false,
                "software_statement_issuers": []})
        );
        let endpoint = advertised(&world).await;
        assert_eq!(endpoint, Some(format!("{}/oauth/register", world.issuer())));

        let (status, info) = register(
            &world,
            &json!({
                "client_name": "Partner app",
                "redirect_uris": [REDIRECT],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "scope": "openid profile offline_access",
            }),
        )
        .await;
        assert_eq!(status, 201, "{info}");
        let id = info["client_id"].as_str().unwrap().to_owned();
        let secret = info["client_secret"].as_str().unwrap().to_owned();
        let token = info["registration_access_token"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            secret.starts_with("cs_") && token.starts_with("rat_"),
            "{info}"
        );
        assert_eq!(info["client_secret_expires_at"], 0);
        assert_eq!(info["token_endpoint_auth_method"], "client_secret_basic");
        assert_eq!(info["scope"], "offline_access openid profile");
        assert!(info["client_id_issued_at"].as_i64().unwrap() > 1_700_000_000);
        let uri = format!("{}/oauth/register/{id}", world.issuer());
        assert_eq!(info["registration_client_uri"], uri.as_str());
        let path = format!("/oauth/register/{id}");

        // A third-party client: the person consents, then the code is redeemed with its secret.
        let browser = world.browser();
        let code = world.code_for(&browser, &id, "openid profile", &[]).await;
        let tokens = world.redeem_as(&code, &id, &secret).await;
        assert_eq!(tokens.status(), 200);
        let tokens: Value = tokens.json().await.unwrap();
        assert!(tokens["id_token"].is_string(), "{tokens}");

        // The management API sees it, third-party, and the audit log names the client itself.
        let app: Value = world
            .api(Method::GET, &format!("/api/v1/applications/{id}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(app["first_party"], false, "{app}");
        assert_eq!(app["name"], "Partner app");
        let audit: Value = world
            .api(Method::GET, &format!("/api/v1/audit-logs?target={id}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let entry = &audit["items"][0];
        assert_eq!(entry["action"], "application.created", "{audit}");
        assert_eq!(entry["actor"], format!("client:{id}"));

        // RFC 7592 read: the registration, without secret or token.
        let (status, headers, read) = call(&world, Method::GET, &path, Some(&token), None).await;
        assert_eq!(status, 200, "{read}");
        assert_eq!(headers["cache-control"], "no-store");
        assert_eq!(read["client_name"], "Partner app");
        assert!(
            read.get("client_secret").is_none() && read.get("registration_access_token").is_none()
        );

        // Replace: the body names the client; the current secret may be sent, another may not.
        let replacement = json!({
            "client_id": id, "client_secret": secret, "client_name": "Partner app v2",
            "redirect_uris": [REDIRECT], "scope": "openid",
        });
        let (status, _, replaced) =
            call(&world, Method::PUT, &path, Some(&token), Some(&replacement)).await;
        assert_eq!(status, 200, "{replaced}");
        assert_eq!(replaced["client_name"], "Partner app v2");
        assert_eq!(replaced["scope"], "openid");
        assert!(
            replaced.get("client_secret").is_none(),
            "the secret is kept, not shown"
        );
        for (body, field) in [
            (
                json!({"client_name": "x", "redirect_uris": [REDIRECT]}),
                "client_id",
            ),
            (
                json!({"client_id": "app_other", "redirect_uris": [REDIRECT]}),
                "client_id",
            ),
            (
                json!({"client_id": id, "client_secret": "cs_mine", "redirect_uris": [REDIRECT]}),
                "client_secret",
            ),
            (
                json!({"client_id": id, "redirect_uris": [REDIRECT], "registration_access_token": token}),
                "registration_access_token",
            ),
        ] {
            let (status, _, refused) =
                call(&world, Method::PUT, &path, Some(&token), Some(&body)).await;
            assert_eq!(status, 400, "{body}: {refused}");
            assert_eq!(refused["error"], "invalid_client_metadata");
            assert!(
                refused["error_description"]
                    .as_str()
                    .unwrap()
                    .contains(field),
                "{refused}"
            );
        }
        let (_, _, unchanged) = call(&world, Method::GET, &path, Some(&token), None).await;
        assert_eq!(
            unchanged["client_name"], "Partner app v2",
            "refusals write nothing"
        );

        // Delete: gone for RFC 7592, for the management API and for the token endpoint.
        let (status, _, _) = call(&world, Method::DELETE, &path, Some(&token), None).await;
        assert_eq!(status, 204);
        let (status, headers, gone) = call(&world, Method::GET, &path, Some(&token), None).await;
        assert_eq!(
            (status, gone["error"].as_str()),
            (401, Some("invalid_token"))
        );
        assert!(
            headers["www-authenticate"]
                .to_str()
                .unwrap()
                .contains("invalid_token")
        );
        assert!(!application_ids(&world).await.contains(&id));
        let grant = world
            .app
            .request(Method::POST, "/oauth/token")
            .header("host", &world.host)
            .basic_auth(&id, Some(&secret))
            .form(&[("grant_type", "client_credentials")])
            .send()
            .await
            .unwrap();
        assert_eq!(grant.status(), 401);

        // Closing registration refuses new ones and stops advertising it.
        assert_eq!(set_policy(&world, "disabled").await.status(), 200);
        assert_eq!(advertised(&world).await, None);
        world.shutdown().await;
    }
}

#[tokio::test]
async fn hostile_registrations_are_refused_and_write_nothing() {
    for backend in BACKENDS {
        let world = world(backend, "100").await;
        assert_eq!(set_policy(&world, "open").await.status(), 200);
        let before = application_ids(&world).await;
        let jwks_uri = |uri: &str| {
            json!({"grant_types": ["client_credentials"], "response_types": [],
                   "token_endpoint_auth_method": "private_key_jwt", "jwks_uri": uri})
        };
        let cases = [
            (
                json!({"redirect_uris": ["https://rp.example/cb#frag"]}),
                "invalid_redirect_uri",
                "fragment",
            ),
            (
                json!({"redirect_uris": ["javascript:alert(1)"]}),
                "invalid_redirect_uri",
                "redirect_uris",
            ),
            (
                json!({"redirect_uris": [REDIRECT], "post_logout_redirect_uris": ["javascript://x"]}),
                "invalid_redirect_uri",
                "post_logout_redirect_uris",
            ),
            (
                jwks_uri("https://127.0.0.1/jwks.json"),
                "invalid_client_metadata",
                "internal address",
            ),
            (
                jwks_uri("https://169.254.169.254/latest/meta-data"),
                "invalid_client_metadata",
                "internal address",
            ),
            (
                jwks_uri("https://[::1]:8443/jwks"),
                "invalid_client_metadata",
                "internal address",
            ),
            (
                json!({"redirect_uris": [REDIRECT], "logo_uri": "https://rp.example/logo.png"}),
                "invalid_client_metadata",
                "logo_uri",
            ),
            (
                json!({"redirect_uris": [REDIRECT], "software_statement": "eyJhbGciOiJSUzI1NiJ9.e30.c2ln"}),
                "invalid_software_statement",
                "not accepted",
            ),
            (
                json!({"redirect_uris": [REDIRECT], "scope": "openid applications:write"}),
                "invalid_client_metadata",
                "management API scope",
            ),
            (
                json!({"redirect_uris": [REDIRECT], "response_types": ["token"]}),
                "invalid_client_metadata",
                "response_types",
            ),
            (
                json!({"redirect_uris": [REDIRECT], "client_id": "app_mine"}),
                "invalid_client_metadata",
                "client_id",
            ),
            (
                json!({"grant_types": ["client_credentials"], "token_endpoint_auth_method": "none", "response_types": []}),
                "invalid_client_metadata",
                "grant_types",
            ),
            (
                json!({"redirect_uris": "https://rp.example/cb"}),
                "invalid_client_metadata",
                "expected a sequence",
            ),
            (
                json!(["not", "an", "object"]),
                "invalid_client_metadata",
                "not valid client metadata",
            ),
        ];
        for (metadata, code, says) in cases {
            let (status, body) = register(&world, &metadata).await;
            assert_eq!(status, 400, "{backend:?} {metadata}: {body}");
            assert_eq!(body["error"], code, "{metadata}: {body}");
            let description = body["error_description"].as_str().unwrap();
            assert!(description.contains(says), "{metadata}: {description}");
        }
        // Not JSON at all.
        let response = world
            .app
            .request(Method::POST, "/oauth/register")
            .header("host", &world.host)
            .form(&[("redirect_uris", REDIRECT)])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400);
        assert_eq!(
            response.json::<Value>().await.unwrap()["error"],
            "invalid_client_metadata"
        );
        assert_eq!(application_ids(&world).await, before, "nothing was written");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn registration_access_tokens_are_per_client_and_registrations_are_rate_limited() {
    for backend in BACKENDS {
        let world = world(backend, "3").await;
        assert_eq!(set_policy(&world, "open").await.status(), 200);
        let mut registered = Vec::new();
        for name in ["One", "Two"] {
            let (status, info) = register(
                &world,
                &json!({"client_name": name, "redirect_uris": [REDIRECT],
                        "token_endpoint_auth_method": "none"}),
            )
            .await;
            assert_eq!(status, 201, "{info}");
            assert!(
                info.get("client_secret").is_none(),
                "a public client has no secret"
            );
            registered.push(info);
        }
        let one = registered[0]["client_id"].as_str().unwrap();
        let two_token = registered[1]["registration_access_token"].as_str().unwrap();
        let one_token = registered[0]["registration_access_token"].as_str().unwrap();
        let refused = [
            (
                format!("/oauth/register/{one}"),
                Some(two_token),
                "another client's token",
            ),
            (format!("/oauth/register/{one}"), None, "no token"),
            (
                format!("/oauth/register/{one}"),
                Some("rat_guess"),
                "a guessed token",
            ),
            (
                format!("/oauth/register/{}", world.client_id),
                Some(one_token),
                "a management-created application",
            ),
            (
                "/oauth/register/not-an-id".to_owned(),
                Some(one_token),
                "a malformed id",
            ),
        ];
        for (path, token, what) in &refused {
            for method in [Method::GET, Method::DELETE] {
                let (status, headers, body) =
                    call(&world, method.clone(), path, *token, None).await;
                assert_eq!(status, 401, "{what} {method}: {body}");
                assert_eq!(body["error"], "invalid_token", "{what}");
                assert!(headers.contains_key("www-authenticate"), "{what}");
            }
            let (status, _, _) = call(
                &world, Method::PUT, path, *token,
                Some(&json!({"client_id": one, "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"})),
            )
            .await;
            assert_eq!(status, 401, "{what} PUT");
        }
        assert!(
            application_ids(&world).await.contains(&one.to_owned()),
            "nothing was deleted"
        );
        assert!(application_ids(&world).await.contains(&world.client_id));

        // Three registrations per address per hour: the third counts (a refused one would too),
        // the fourth is refused with Retry-After.
        let (status, body) = register(
            &world,
            &json!({"redirect_uris": ["https://rp.example/cb#x"]}),
        )
        .await;
        assert_eq!(status, 400, "{body}");
        let response = world
            .app
            .request(Method::POST, "/oauth/register")
            .header("host", &world.host)
            .json(&json!({"redirect_uris": [REDIRECT]}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 429);
        let retry: u64 = response.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=3600).contains(&retry), "{retry}");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn a_deployment_without_registration_serves_and_advertises_none() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        // The tenant's policy can be set either way; the endpoint still does not exist.
        assert_eq!(set_policy(&world, "open").await.status(), 200);
        let bad = set_policy(&world, "closed").await;
        assert_eq!(bad.status(), 400);
        let read: Value = world
            .api(Method::GET, "/api/v1/registration-policy")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            read,
            json!({"policy": "open", "client_id_metadata_documents": false,
                "software_statement_issuers": []})
        );
        assert_eq!(advertised(&world).await, None);
        let (status, _, _) = call(
            &world,
            Method::POST,
            "/oauth/register",
            None,
            Some(&json!({"redirect_uris": [REDIRECT]})),
        )
        .await;
        assert_eq!(status, 404);
        world.shutdown().await;
    }
}

#[tokio::test]
async fn protected_registration_spends_an_initial_access_token() {
    for backend in BACKENDS {
        let world = world(backend, "100").await;
        assert_eq!(set_policy(&world, "protected").await.status(), 200);
        assert_eq!(
            advertised(&world).await,
            Some(format!("{}/oauth/register", world.issuer()))
        );
        let metadata = json!({"client_name": "Invited", "redirect_uris": [REDIRECT]});
        let (status, headers, body) = call(
            &world,
            Method::POST,
            "/oauth/register",
            None,
            Some(&metadata),
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (401, Some("invalid_token")),
            "{body}"
        );
        assert!(
            headers["www-authenticate"]
                .to_str()
                .unwrap()
                .contains("invalid_token")
        );

        // Out-of-range settings are refused; a one-use token is shown once.
        for bad in [
            json!({"max_uses": 0}),
            json!({"expires_in_secs": 10}),
            json!({"uses": 3}),
        ] {
            let refused = world
                .api(Method::POST, "/api/v1/registration-tokens")
                .json(&bad)
                .send()
                .await
                .unwrap();
            assert_eq!(refused.status(), 400, "{bad}");
        }
        let created = world
            .api(Method::POST, "/api/v1/registration-tokens")
            .json(&json!({"max_uses": 1, "expires_in_secs": 600}))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201);
        let location = created.headers()["location"].to_str().unwrap().to_owned();
        let created: Value = created.json().await.unwrap();
        let token = created["token"].as_str().unwrap().to_owned();
        let id = created["id"].as_str().unwrap().to_owned();
        assert!(
            token.starts_with("iatok_") && id.starts_with("iat_"),
            "{created}"
        );
        assert_eq!(location, format!("/api/v1/registration-tokens/{id}"));

        let (status, _, body) = call(
            &world,
            Method::POST,
            "/oauth/register",
            Some("iatok_guessed"),
            Some(&metadata),
        )
        .await;
        assert_eq!(status, 401, "{body}");
        // A refused registration spends nothing.
        let (status, _, body) = call(
            &world,
            Method::POST,
            "/oauth/register",
            Some(&token),
            Some(&json!({"redirect_uris": ["javascript:alert(1)"]})),
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_redirect_uri"))
        );
        let (status, _, info) = call(
            &world,
            Method::POST,
            "/oauth/register",
            Some(&token),
            Some(&metadata),
        )
        .await;
        assert_eq!(status, 201, "{info}");
        assert!(info["registration_access_token"].is_string());
        let (status, _, body) = call(
            &world,
            Method::POST,
            "/oauth/register",
            Some(&token),
            Some(&metadata),
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (401, Some("invalid_token")),
            "spent"
        );

        let listed: Value = world
            .api(Method::GET, "/api/v1/registration-tokens")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(listed["items"][0]["id"], id.as_str(), "{listed}");
        assert_eq!(listed["items"][0]["uses"], 1);
        assert_eq!(listed["items"][0]["max_uses"], 1);
        assert!(listed["items"][0].get("token").is_none(), "never listed");

        let delete = |path: String| world.api(Method::DELETE, &path).send();
        assert_eq!(delete(location.clone()).await.unwrap().status(), 204);
        assert_eq!(delete(location.clone()).await.unwrap().status(), 404);
        assert_eq!(
            delete("/api/v1/registration-tokens/not-an-id".into())
                .await
                .unwrap()
                .status(),
            404
        );
        world.shutdown().await;
    }
}

/// A statement signed by `key` with `claims`.
fn statement(key: &svc_crypto::SigningKey, claims: &Value) -> String {
    key.sign_jwt("JWT", claims).unwrap()
}

#[tokio::test]
async fn software_statements_of_a_trusted_issuer_vouch_for_metadata() {
    const ISSUER: &str = "https://softwarehouse.example";
    let key = svc_crypto::SigningKey::generate(svc_crypto::SigningAlg::Es256).unwrap();
    let stranger = svc_crypto::SigningKey::generate(svc_crypto::SigningAlg::Es256).unwrap();
    let trusted = json!([{
        "issuer": ISSUER,
        "jwks": json!({"keys": [key.public_key().to_json()]}).to_string(),
    }])
    .to_string();
    // The app reads its environment for the whole test: the value lives as long.
    let trusted: &'static str = Box::leak(trusted.into_boxed_str());
    for backend in BACKENDS {
        let world = World::new(
            backend,
            Setup {
                env: vec![
                    ("SVC_DYNAMIC_REGISTRATION__ENABLED", "true"),
                    (
                        "SVC_DYNAMIC_REGISTRATION__SOFTWARE_STATEMENT_ISSUERS",
                        trusted,
                    ),
                ],
                ..Setup::default()
            },
        )
        .await;
        assert_eq!(set_policy(&world, "open").await.status(), 200);
        let now = svc_domain::Clock::now(&svc_domain::SystemClock).unix_timestamp();
        let vouched = json!({
            "iss": ISSUER, "iat": now, "exp": now + 600, "jti": "st-1",
            "software_id": "4NRB1-0XZABZI9E6-5SM3R", "software_version": "2.1",
            "client_name": "Vouched Shop", "redirect_uris": [REDIRECT],
        });
        let (status, body) = register(
            &world,
            &json!({
                "client_name": "Whatever I say",
                "redirect_uris": ["https://other.example/cb"],
                "scope": "openid profile",
                "software_statement": statement(&key, &vouched),
            }),
        )
        .await;
        assert_eq!(status, 201, "{body}");
        assert_eq!(
            body["client_name"], "Vouched Shop",
            "the statement wins: {body}"
        );
        assert_eq!(body["redirect_uris"], json!([REDIRECT]));
        assert_eq!(
            body["scope"], "openid profile",
            "plain metadata the statement lacks"
        );

        let before = application_ids(&world).await.len();
        let refusals = [
            (
                statement(
                    &key,
                    &json!({"iss": "https://elsewhere.example", "exp": now + 600}),
                ),
                "unapproved_software_statement",
            ),
            (statement(&stranger, &vouched), "invalid_software_statement"),
            (
                statement(&key, &json!({"iss": ISSUER, "exp": now - 10})),
                "invalid_software_statement",
            ),
            (
                statement(
                    &key,
                    &json!({"iss": ISSUER, "logo_uri": "https://x.example/l.png"}),
                ),
                "invalid_software_statement",
            ),
            (
                statement(&key, &json!({"iss": ISSUER, "client_id": "app_mine"})),
                "invalid_software_statement",
            ),
            (
                statement(
                    &key,
                    &json!({"iss": ISSUER, "redirect_uris": ["javascript:alert(1)"]}),
                ),
                "invalid_redirect_uri",
            ),
            (
                "eyJhbGciOiJub25lIn0.eyJpc3MiOiJodHRwczovL3NvZnR3YXJlaG91c2UuZXhhbXBsZSJ9."
                    .to_owned(),
                "invalid_software_statement",
            ),
        ];
        for (token, code) in refusals {
            let (status, body) = register(
                &world,
                &json!({"redirect_uris": [REDIRECT], "software_statement": token}),
            )
            .await;
            assert_eq!(status, 400, "{backend:?} {code}: {body}");
            assert_eq!(body["error"], code, "{body}");
        }
        assert_eq!(
            application_ids(&world).await.len(),
            before,
            "nothing written"
        );
        world.shutdown().await;
    }
}

/// `PUT /api/v1/registration-policy` with `body` as the world's management client: status and
/// body.
async fn put_policy(world: &World, body: &Value) -> (u16, Value) {
    let response = world
        .api(Method::PUT, "/api/v1/registration-policy")
        .json(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

#[tokio::test]
async fn a_tenant_trusts_its_own_statement_issuers_which_vouch_for_it_alone() {
    const ISSUER: &str = "https://tenant-house.example";
    let key = svc_crypto::SigningKey::generate(svc_crypto::SigningAlg::EdDsa).unwrap();
    let jwks = json!({"keys": [key.public_key().to_json()]});
    for backend in BACKENDS {
        // No issuer in the deployment's configuration.
        let world = world(backend, "50").await;
        let now = svc_domain::Clock::now(&svc_domain::SystemClock).unix_timestamp();
        let vouched = json!({
            "iss": ISSUER, "iat": now, "exp": now + 600,
            "client_name": "Vouched by the tenant's house", "redirect_uris": [REDIRECT],
        });
        let metadata = json!({
            "redirect_uris": ["https://other.example/cb"],
            "software_statement": statement(&key, &vouched),
        });
        assert_eq!(set_policy(&world, "open").await.status(), 200);
        // Nobody trusts anyone yet: refused, as before.
        let (status, body) = register(&world, &metadata).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_software_statement")),
            "{body}"
        );

        // Hostile issuer lists: each refused by name, nothing stored.
        let mut private = key.public_key().to_json();
        private["d"] = json!("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A");
        let many: Vec<Value> = (0..9)
            .map(|i| json!({"issuer": format!("https://h{i}.example"), "jwks": jwks}))
            .collect();
        let hostile = [
            (
                json!([{"issuer": "", "jwks": jwks}]),
                "software_statement_issuers[0].issuer",
            ),
            (
                json!([{"issuer": "https://a.example\n", "jwks": jwks}]),
                "software_statement_issuers[0].issuer",
            ),
            (
                json!([{"issuer": ISSUER, "jwks": jwks}, {"issuer": ISSUER, "jwks": jwks}]),
                "software_statement_issuers[1].issuer",
            ),
            (
                json!([{"issuer": ISSUER, "jwks": {"keys": [private]}}]),
                "software_statement_issuers[0].jwks",
            ),
            (
                json!([{"issuer": ISSUER, "jwks": {"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}}]),
                "software_statement_issuers[0].jwks",
            ),
            (
                json!([{"issuer": ISSUER, "jwks": {"keys": []}}]),
                "software_statement_issuers[0].jwks",
            ),
            (
                json!([{"issuer": ISSUER, "jwks": "not a set"}]),
                "software_statement_issuers[0].jwks",
            ),
            (
                json!([{"issuer": ISSUER, "jwks": {"keys": [{"kty": "EC", "x": "A".repeat(17_000)}]}}]),
                "software_statement_issuers[0].jwks",
            ),
            (Value::Array(many), "software_statement_issuers"),
        ];
        for (issuers, field) in hostile {
            let (status, body) = put_policy(
                &world,
                &json!({"policy": "open", "software_statement_issuers": issuers}),
            )
            .await;
            assert_eq!(status, 400, "{backend:?} {field}: {body}");
            assert!(
                body["detail"].as_str().unwrap().contains(field),
                "{field}: {body}"
            );
        }
        let (status, body) = put_policy(
            &world,
            &json!({"policy": "open", "software_statement_issuers": [{"issuer": ISSUER, "extra": 1, "jwks": jwks}]}),
        )
        .await;
        assert_eq!(status, 400, "unknown member: {body}");
        let read = world
            .api(Method::GET, "/api/v1/registration-policy")
            .send()
            .await
            .unwrap();
        let body: Value = read.json().await.unwrap();
        assert_eq!(
            body["software_statement_issuers"],
            json!([]),
            "nothing stored: {body}"
        );

        // Trusted by this tenant: the statement vouches here.
        let (status, body) = put_policy(
            &world,
            &json!({"policy": "open", "software_statement_issuers": [{"issuer": ISSUER, "jwks": jwks}]}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["software_statement_issuers"][0]["issuer"], ISSUER);
        assert_eq!(body["software_statement_issuers"][0]["jwks"], jwks);
        let (status, body) = register(&world, &metadata).await;
        assert_eq!(status, 201, "{backend:?}: {body}");
        assert_eq!(body["client_name"], "Vouched by the tenant's house");
        assert_eq!(body["redirect_uris"], json!([REDIRECT]));
        // Leaving the list out keeps it; the audit log names the issuers.
        let (status, body) = put_policy(&world, &json!({"policy": "open"})).await;
        assert_eq!(
            (
                status,
                body["software_statement_issuers"][0]["issuer"].as_str()
            ),
            (200, Some(ISSUER))
        );
        let audit: Value = world
            .api(
                Method::GET,
                "/api/v1/audit-logs?action=registration_policy.set",
            )
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(
            audit
                .to_string()
                .contains(&format!("software_statement_issuers={ISSUER}")),
            "{audit}"
        );

        // Another tenant of the same deployment does not trust it.
        let beta = world.other_tenant("beta").await;
        let beta_token = crate::hosted::support::management_token(
            &world.app,
            &beta.host,
            &beta.client_id,
            &beta.client_secret,
        )
        .await;
        let opened = world
            .app
            .request(Method::PUT, "/api/v1/registration-policy")
            .header("host", &beta.host)
            .bearer_auth(&beta_token)
            .json(&json!({"policy": "open"}))
            .send()
            .await
            .unwrap();
        assert_eq!(opened.status(), 200);
        let response = world
            .app
            .request(Method::POST, "/oauth/register")
            .header("host", &beta.host)
            .json(&json!({"redirect_uris": [REDIRECT], "software_statement": statement(&key, &vouched)}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"], "invalid_software_statement", "{body}");

        // An empty list trusts none of its own again.
        let (status, _) = put_policy(
            &world,
            &json!({"policy": "open", "software_statement_issuers": []}),
        )
        .await;
        assert_eq!(status, 200);
        let (status, body) = register(&world, &metadata).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_software_statement")),
            "{body}"
        );
        world.shutdown().await;
    }
}
