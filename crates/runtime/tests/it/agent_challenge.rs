//! Agent challenge-response (`[challenge]`, issue 19 item 3) over HTTP, on SQLite and
//! PostgreSQL: a registered agent gets a challenge, answers it with an assertion signed by its
//! registered key (the JWT bearer grant, RFC 7523 §2.1) and receives an access token naming it,
//! for an API it is allowed, DPoP-bound when it sends a proof; suspension and revocation end its
//! tokens at introspection at once; and every hostile answer is refused: a challenge answered
//! twice, given to another agent, expired or forged; a key the agent does not (or no longer)
//! hold; `alg: none` and HS256; wrong `iss`/`sub`/`aud`/`exp`; a resource or scope beyond the
//! agent's; client authentication alongside; another tenant; the switch off.

use crate::dpop::{Claims, Prover};
use crate::hosted::support::{Setup, World};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use svc_crypto::SigningKey;
use svc_domain::{Clock, SigningAlg, SystemClock};
use svc_testkit::BACKENDS;

pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
pub(crate) const BOOKINGS: &str = "https://api.example.com/bookings";
pub(crate) const HOTELS: &str = "https://api.example.com/hotels";

pub(crate) fn now() -> i64 {
    SystemClock.now().unix_timestamp()
}

pub(crate) fn claims_of(token: &str) -> Value {
    let payload = token.split('.').nth(1).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

async fn world(backend: svc_testkit::Backend, lifetime: &'static str) -> World {
    World::new(
        backend,
        Setup {
            env: vec![
                ("SVC_CHALLENGE__ENABLED", "true"),
                ("SVC_CHALLENGE__CHALLENGE_LIFETIME_SECS", lifetime),
            ],
            ..Setup::default()
        },
    )
    .await
}

/// The two APIs of the tenant, and a resource server for the bookings API (introspects).
async fn apis(world: &World) -> (String, String) {
    for (identifier, permissions) in [
        (BOOKINGS, vec!["bookings:read", "bookings:write"]),
        (HOTELS, vec!["hotels:read"]),
    ] {
        let permissions: Vec<Value> = permissions.iter().map(|p| json!({"name": p})).collect();
        let created = world
            .api(Method::POST, "/api/v1/api-resources")
            .json(
                &json!({"identifier": identifier, "name": identifier, "permissions": permissions}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201, "{}", created.text().await.unwrap());
    }
    world
        .register_with(json!({
            "name": "Bookings API",
            "grant_types": ["client_credentials"],
            "redirect_uris": [],
            "post_logout_redirect_uris": [],
            "allowed_scopes": [],
            "api_audience": BOOKINGS,
        }))
        .await
}

/// Registers an agent holding `key`: its id.
async fn agent(world: &World, key: &SigningKey, resources: &[&str]) -> String {
    let created = world
        .api(Method::POST, "/api/v1/agents")
        .json(&json!({
            "name": "Booking assistant",
            "owner": world.client_id,
            "jwks": {"keys": [key.public_jwk()]},
            "allowed_scopes": ["bookings:read", "bookings:write", "hotels:read", "flights:read"],
            "allowed_resources": resources,
        }))
        .send()
        .await
        .unwrap();
    let body: Value = created.json().await.unwrap();
    body["id"].as_str().expect("agent registered").to_owned()
}

async fn challenge_on(world: &World, host: &str, agent: &str) -> (u16, Value) {
    let response = world
        .app
        .request(Method::POST, "/oauth/agent/challenge")
        .header("host", host)
        .form(&[("agent_id", agent)])
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    if status == 200 {
        assert_eq!(response.headers()["cache-control"], "no-store");
    }
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A fresh challenge for `agent`.
pub(crate) async fn challenge(world: &World, agent: &str) -> String {
    let (status, body) = challenge_on(world, &world.host, agent).await;
    assert_eq!(status, 200, "{body}");
    body["challenge"].as_str().unwrap().to_owned()
}

/// The claims of a good assertion of `agent` answering `nonce`, with `overrides` (`null`
/// removes a claim).
fn assertion_claims(world: &World, agent: &str, nonce: &str, overrides: Value) -> Value {
    let mut claims = json!({
        "iss": agent,
        "sub": agent,
        "aud": world.issuer(),
        "exp": now() + 60,
        "iat": now(),
        "nonce": nonce,
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

fn signed(key: &SigningKey, claims: &Value) -> String {
    key.sign_jwt("JWT", claims).unwrap()
}

async fn grant_on(
    world: &World,
    host: &str,
    form: &[(&str, &str)],
    headers: &[(&str, &str)],
) -> (u16, Value) {
    let mut request = world
        .app
        .request(Method::POST, "/oauth/token")
        .header("host", host)
        .form(form);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    (
        response.status().as_u16(),
        response.json().await.unwrap_or(Value::Null),
    )
}

async fn grant(world: &World, assertion: &str, extra: &[(&str, &str)]) -> (u16, Value) {
    let mut form = vec![("grant_type", JWT_BEARER), ("assertion", assertion)];
    form.extend_from_slice(extra);
    grant_on(world, &world.host, &form, &[]).await
}

/// Introspection by the bookings API's resource server.
pub(crate) async fn introspect(world: &World, server: &(String, String), token: &str) -> Value {
    world
        .app
        .request(Method::POST, "/oauth/introspect")
        .header("host", &world.host)
        .basic_auth(&server.0, Some(&server.1))
        .form(&[("token", token)])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn set_status(world: &World, agent: &str, status: &str) {
    let response = world
        .api(Method::PATCH, &format!("/api/v1/agents/{agent}"))
        .json(&json!({"status": status}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

fn assert_refused(answer: &(u16, Value), error: &str, words: &str, what: &str) {
    assert_eq!(answer.0, 400, "{what}: {}", answer.1);
    assert_eq!(answer.1["error"], error, "{what}: {}", answer.1);
    let description = answer.1["error_description"].as_str().unwrap_or_default();
    assert!(description.contains(words), "{what}: {description}");
    assert!(answer.1.get("access_token").is_none(), "{what}");
}

#[tokio::test]
async fn agents_answer_challenges_for_tokens_and_lose_them_when_suspended_or_revoked() {
    for backend in BACKENDS {
        let world = world(backend, "60").await;
        let discovery = world.discovery().await;
        assert_eq!(
            discovery["agent_challenge_endpoint"],
            format!("{}/oauth/agent/challenge", world.issuer())
        );
        assert!(
            discovery["grant_types_supported"]
                .as_array()
                .unwrap()
                .contains(&json!(JWT_BEARER))
        );
        let server = apis(&world).await;
        let key = SigningKey::generate(SigningAlg::EdDsa).unwrap();
        let id = agent(&world, &key, &[BOOKINGS, HOTELS]).await;

        let (status, answer) = challenge_on(&world, &world.host, &id).await;
        assert_eq!(status, 200, "{backend:?}: {answer}");
        assert_eq!(answer["expires_in"], 60);
        let nonce = answer["challenge"].as_str().unwrap();
        let assertion = signed(&key, &assertion_claims(&world, &id, nonce, json!({})));
        let (status, tokens) = grant(
            &world,
            &assertion,
            &[("resource", BOOKINGS), ("scope", "bookings:read")],
        )
        .await;
        assert_eq!(status, 200, "{backend:?}: {tokens}");
        assert_eq!(tokens["token_type"], "Bearer");
        assert_eq!(tokens["scope"], "bookings:read");
        assert_eq!(
            tokens["expires_in"], 300,
            "an agent's token lives the agent lifetime"
        );
        assert!(tokens.get("refresh_token").is_none());
        let access = tokens["access_token"].as_str().unwrap();
        let claims = claims_of(access);
        assert_eq!(claims["sub"], id.as_str());
        assert_eq!(claims["client_id"], id.as_str());
        assert_eq!(claims["subject_type"], "agent");
        assert_eq!(claims["aud"], BOOKINGS);
        assert_eq!(claims["iss"], world.issuer());
        let seen = introspect(&world, &server, access).await;
        assert_eq!(seen["active"], true, "{seen}");
        assert_eq!(seen["sub"], id.as_str());
        assert_eq!(seen["subject_type"], "agent");

        // The same answer again: the challenge is spent.
        assert_refused(
            &grant(&world, &assertion, &[("resource", BOOKINGS)]).await,
            "invalid_grant",
            "already answered",
            "replayed assertion",
        );

        // A scope beyond the agent's is refused before the challenge is spent: the same
        // challenge then still works. Without `scope`, everything it may hold at that API.
        let nonce = challenge(&world, &id).await;
        let assertion = signed(&key, &assertion_claims(&world, &id, &nonce, json!({})));
        for (extra, error, words) in [
            (
                vec![("resource", HOTELS), ("scope", "bookings:read")],
                "invalid_scope",
                "bookings:read",
            ),
            (
                vec![("resource", BOOKINGS), ("scope", "flights:read")],
                "invalid_scope",
                "flights:read",
            ),
            (vec![], "invalid_target", "resource is required"),
            (
                vec![("resource", "https://api.example.com/payments")],
                "invalid_target",
                "may obtain",
            ),
        ] {
            assert_refused(
                &grant(&world, &assertion, &extra).await,
                error,
                words,
                &format!("{extra:?}"),
            );
        }
        let (status, tokens) = grant(&world, &assertion, &[("resource", HOTELS)]).await;
        assert_eq!(status, 200, "{tokens}");
        assert_eq!(tokens["scope"], "hotels:read");
        assert_eq!(
            claims_of(tokens["access_token"].as_str().unwrap())["aud"],
            HOTELS
        );

        // DPoP-bound when a proof comes with it.
        let prover = Prover::new(SigningAlg::Es256);
        let proof = prover.proof(&Claims::post(format!("{}/oauth/token", world.issuer())));
        let nonce = challenge(&world, &id).await;
        let assertion = signed(&key, &assertion_claims(&world, &id, &nonce, json!({})));
        let form = [
            ("grant_type", JWT_BEARER),
            ("assertion", assertion.as_str()),
            ("resource", BOOKINGS),
        ];
        let (status, bound) = grant_on(&world, &world.host, &form, &[("dpop", &proof)]).await;
        assert_eq!(status, 200, "{bound}");
        assert_eq!(bound["token_type"], "DPoP");
        assert_eq!(
            claims_of(bound["access_token"].as_str().unwrap())["cnf"]["jkt"],
            prover.jkt()
        );

        // Suspended: its tokens are inactive at once and it gets no new one; reactivated, it
        // does again; revoked, never again.
        set_status(&world, &id, "suspended").await;
        assert_eq!(
            introspect(&world, &server, access).await,
            json!({"active": false})
        );
        let nonce = challenge(&world, &id).await;
        let assertion = signed(&key, &assertion_claims(&world, &id, &nonce, json!({})));
        assert_refused(
            &grant(&world, &assertion, &[("resource", BOOKINGS)]).await,
            "invalid_grant",
            "not valid",
            "suspended agent",
        );
        set_status(&world, &id, "active").await;
        assert_eq!(introspect(&world, &server, access).await["active"], true);
        let (status, _) = grant(&world, &assertion, &[("resource", BOOKINGS)]).await;
        assert_eq!(
            status, 200,
            "the refused answer did not spend the challenge"
        );
        let revoked = world
            .api(Method::DELETE, &format!("/api/v1/agents/{id}"))
            .send()
            .await
            .unwrap();
        assert_eq!(revoked.status(), 204);
        assert_eq!(
            introspect(&world, &server, access).await,
            json!({"active": false})
        );
        let nonce = challenge(&world, &id).await;
        let assertion = signed(&key, &assertion_claims(&world, &id, &nonce, json!({})));
        assert_refused(
            &grant(&world, &assertion, &[("resource", BOOKINGS)]).await,
            "invalid_grant",
            "not valid",
            "revoked agent",
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn hostile_answers_are_refused_and_issue_nothing() {
    for backend in BACKENDS {
        let world = world(backend, "10").await;
        apis(&world).await;
        let key = SigningKey::generate(SigningAlg::Es256).unwrap();
        let id = agent(&world, &key, &[BOOKINGS]).await;
        let other_key = SigningKey::generate(SigningAlg::Es256).unwrap();
        let other = agent(&world, &other_key, &[BOOKINGS]).await;
        // Answered only at the end, once it has expired.
        let expiring = challenge(&world, &id).await;
        let started = Instant::now();

        // The challenge endpoint: an agent id is required and well formed; an unknown one gets
        // a challenge of the same shape (which nothing can answer).
        for form in [vec![], vec![("agent_id", "usr_01jd0000000000000000000000")]] {
            let response = world
                .app
                .request(Method::POST, "/oauth/agent/challenge")
                .header("host", &world.host)
                .form(&form)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 400, "{form:?}");
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["error"], "invalid_request");
        }
        let ghost = "agt_01jd0000000000000000000000";
        let (status, ghost_answer) = challenge_on(&world, &world.host, ghost).await;
        assert_eq!(status, 200);
        let real = challenge(&world, &id).await;
        assert_eq!(
            ghost_answer["challenge"].as_str().unwrap().len(),
            real.len(),
            "the same shape for an agent that does not exist"
        );
        let ghost_assertion = signed(
            &key,
            &assertion_claims(
                &world,
                ghost,
                ghost_answer["challenge"].as_str().unwrap(),
                json!({}),
            ),
        );
        assert_refused(
            &grant(&world, &ghost_assertion, &[]).await,
            "invalid_grant",
            "not valid",
            "unknown agent",
        );

        // Created before the good answer's challenge, which lives only 10 s.
        let other_tenant = world.other_tenant("globex").await;
        let nonce = challenge(&world, &id).await;
        let good = assertion_claims(&world, &id, &nonce, json!({}));
        let stranger = SigningKey::generate(SigningAlg::Es256).unwrap();
        let b64 = |v: &Value| URL_SAFE_NO_PAD.encode(v.to_string());
        let none = format!("{}.{}.", b64(&json!({"alg": "none"})), b64(&good));
        let hs256 = {
            let header = b64(&json!({"alg": "HS256", "typ": "JWT"}));
            let input = format!("{header}.{}", b64(&good));
            let secret = key.public_jwk().to_string();
            let mac = svc_crypto::digest::hmac_sha256(secret.as_bytes(), input.as_bytes());
            format!("{input}.{}", URL_SAFE_NO_PAD.encode(mac))
        };
        let other_nonce = challenge(&world, &other).await;
        let cases: Vec<(String, &str, &str)> = vec![
            (
                signed(&stranger, &good),
                "not valid",
                "a key the agent never registered",
            ),
            (
                signed(&other_key, &good),
                "not valid",
                "another agent's key",
            ),
            (none, "never none", "alg none"),
            (
                hs256,
                "never none or HMAC",
                "HS256 with the public key as secret",
            ),
            (
                signed(
                    &key,
                    &assertion_claims(&world, &id, &other_nonce, json!({})),
                ),
                "not a challenge given to this agent",
                "another agent's challenge",
            ),
            (
                signed(&key, &assertion_claims(&world, &id, "AAAA", json!({}))),
                "not a challenge given to this agent",
                "a forged challenge",
            ),
            (
                signed(
                    &key,
                    &assertion_claims(&world, &id, &nonce, json!({"nonce": null})),
                ),
                "nonce",
                "no challenge",
            ),
            (
                signed(
                    &key,
                    &assertion_claims(&world, &id, &nonce, json!({"sub": other})),
                ),
                "sub the agent's or a person's",
                "sub another agent",
            ),
            (
                signed(
                    &key,
                    &assertion_claims(
                        &world,
                        &id,
                        &nonce,
                        json!({"aud": "https://elsewhere.example"}),
                    ),
                ),
                "aud",
                "another audience",
            ),
            (
                signed(
                    &key,
                    &assertion_claims(&world, &id, &nonce, json!({"exp": null})),
                ),
                "exp",
                "no exp",
            ),
            (
                signed(
                    &key,
                    &assertion_claims(&world, &id, &nonce, json!({"exp": now() + 3600})),
                ),
                "within",
                "a long-lived assertion",
            ),
            (
                signed(
                    &key,
                    &assertion_claims(&world, &id, &nonce, json!({"exp": now() - 5})),
                ),
                "expired",
                "an expired assertion",
            ),
            ("not-a-jwt".into(), "not a signed JWT", "garbage"),
            ("x".repeat(20_000), "too large", "oversized"),
        ];
        for (assertion, words, what) in &cases {
            assert_refused(
                &grant(&world, assertion, &[]).await,
                "invalid_grant",
                words,
                &format!("{backend:?}: {what}"),
            );
        }

        // The management API is never an agent's target, even when registered as an API.
        let management = format!("{}/api/v1", world.issuer());
        assert_refused(
            &grant(&world, &signed(&key, &good), &[("resource", &management)]).await,
            "invalid_target",
            "never the management API",
            "management API",
        );
        // Client authentication alongside, and repeated parameters.
        let answer = signed(&key, &good);
        for extra in [
            vec![("client_id", world.client_id.as_str())],
            vec![("client_secret", "x")],
            vec![("assertion", answer.as_str())],
        ] {
            let mut form = vec![("grant_type", JWT_BEARER), ("assertion", answer.as_str())];
            form.extend(extra.iter().copied());
            let refused = grant_on(&world, &world.host, &form, &[]).await;
            assert_eq!(
                (refused.0, refused.1["error"].as_str()),
                (400, Some("invalid_request")),
                "{extra:?}"
            );
        }
        let basic = grant_on(
            &world,
            &world.host,
            &[("grant_type", JWT_BEARER), ("assertion", answer.as_str())],
            &[("authorization", "Basic YTpi")],
        )
        .await;
        assert_eq!(basic.1["error"], "invalid_request", "{}", basic.1);

        // Another tenant knows neither the agent nor its challenge.
        let (status, _) = challenge_on(&world, &other_tenant.host, &id).await;
        assert_eq!(
            status, 200,
            "challenges are handed out for any well-formed id"
        );
        let foreign = grant_on(
            &world,
            &other_tenant.host,
            &[("grant_type", JWT_BEARER), ("assertion", answer.as_str())],
            &[],
        )
        .await;
        assert_refused(&foreign, "invalid_grant", "not valid", "another tenant");

        // Nothing above spent the good answer; a key taken off the agent no longer signs.
        let (status, body) = grant(&world, &answer, &[]).await;
        assert_eq!(status, 200, "{backend:?}: {body}");
        let rotated = SigningKey::generate(SigningAlg::Es256).unwrap();
        let patched = world
            .api(Method::PATCH, &format!("/api/v1/agents/{id}"))
            .json(&json!({"jwks": {"keys": [rotated.public_jwk()]}}))
            .send()
            .await
            .unwrap();
        assert_eq!(patched.status(), 200);
        let nonce = challenge(&world, &id).await;
        let claims = assertion_claims(&world, &id, &nonce, json!({}));
        assert_refused(
            &grant(&world, &signed(&key, &claims), &[]).await,
            "invalid_grant",
            "not valid",
            "a key no longer registered",
        );
        assert_eq!(grant(&world, &signed(&rotated, &claims), &[]).await.0, 200);

        // An expired challenge.
        if let Some(rest) = Duration::from_secs(11).checked_sub(started.elapsed()) {
            tokio::time::sleep(rest).await;
        }
        let late = assertion_claims(&world, &id, &expiring, json!({}));
        assert_refused(
            &grant(&world, &signed(&rotated, &late), &[]).await,
            "invalid_grant",
            "expired",
            "expired challenge",
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn switched_off_nothing_is_served_or_advertised() {
    let world = World::new(svc_testkit::Backend::Sqlite, Setup::default()).await;
    let discovery = world.discovery().await;
    assert!(discovery.get("agent_challenge_endpoint").is_none());
    assert!(
        !discovery["grant_types_supported"]
            .as_array()
            .unwrap()
            .contains(&json!(JWT_BEARER))
    );
    let (status, _) = challenge_on(&world, &world.host, "agt_01jd0000000000000000000000").await;
    assert_eq!(status, 404);
    let key = SigningKey::generate(SigningAlg::Es256).unwrap();
    let id = "agt_01jd0000000000000000000000";
    let assertion = signed(&key, &assertion_claims(&world, id, "AAAA", json!({})));
    let (status, body) = grant(&world, &assertion, &[]).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("unsupported_grant_type"))
    );
    world.shutdown().await;
}
