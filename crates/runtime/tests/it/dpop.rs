//! DPoP (RFC 9449) over HTTP, on SQLite and PostgreSQL: bound tokens from every grant the tests
//! can drive (client credentials, authorization code with `dpop_jkt` and through PAR, refresh),
//! their use at UserInfo and the management API, introspection, the refusals of hostile proofs
//! (RFC 9449 §4.3 and the FAPI 2.0 DPoP negative tests), `dpop_bound_access_tokens`, server
//! nonces and the `[dpop]` switch.

use crate::common::{CreatedTenant, create_tenant, operator_token};
use crate::hosted::support::{REDIRECT, Setup, VERIFIER, World};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::Method;
use serde_json::{Map, Value, json};
use svc_crypto::SigningKey;
use svc_domain::{Clock, OsRandom, Rng, SigningAlg, SystemClock};
use svc_testkit::{BACKENDS, TestApp};

/// A client's DPoP key and the proofs it makes.
pub(crate) struct Prover {
    key: SigningKey,
}

/// What a proof says; the defaults are a good proof for `POST url`.
#[derive(Clone)]
pub(crate) struct Claims<'a> {
    method: &'a str,
    url: String,
    token: Option<&'a str>,
    nonce: Option<&'a str>,
    iat_offset: i64,
}

impl<'a> Claims<'a> {
    pub(crate) fn post(url: String) -> Self {
        Self {
            method: "POST",
            url,
            token: None,
            nonce: None,
            iat_offset: 0,
        }
    }

    fn get(url: String, token: &'a str) -> Self {
        Self {
            method: "GET",
            url,
            token: Some(token),
            nonce: None,
            iat_offset: 0,
        }
    }
}

fn now() -> i64 {
    SystemClock.now().unix_timestamp()
}

fn unique() -> String {
    let mut bytes = [0u8; 12];
    OsRandom.fill(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

impl Prover {
    pub(crate) fn new(alg: SigningAlg) -> Self {
        Self {
            key: SigningKey::generate(alg).unwrap(),
        }
    }

    /// RFC 7638 thumbprint of the key: what `cnf.jkt` must be.
    pub(crate) fn jkt(&self) -> &str {
        self.key.kid()
    }

    fn public_jwk(&self) -> Value {
        let mut jwk = self.key.public_jwk();
        for member in ["kid", "alg", "use"] {
            jwk.as_object_mut().unwrap().remove(member);
        }
        jwk
    }

    fn header(&self) -> Map<String, Value> {
        let mut header = Map::new();
        header.insert("typ".into(), json!("dpop+jwt"));
        header.insert("jwk".into(), self.public_jwk());
        header
    }

    fn payload(claims: &Claims<'_>) -> Value {
        let mut payload = json!({
            "jti": unique(),
            "htm": claims.method,
            "htu": claims.url,
            "iat": now() + claims.iat_offset,
        });
        if let Some(token) = claims.token {
            payload["ath"] = json!(svc_sdk::dpop::access_token_hash(token));
        }
        if let Some(nonce) = claims.nonce {
            payload["nonce"] = json!(nonce);
        }
        payload
    }

    pub(crate) fn proof(&self, claims: &Claims<'_>) -> String {
        self.key
            .sign_jws(self.header(), &Self::payload(claims))
            .unwrap()
    }

    /// A proof with `header` and `payload` changed by the closures (signed by this key).
    fn tampered(
        &self,
        claims: &Claims<'_>,
        header: impl FnOnce(&mut Map<String, Value>),
        payload: impl FnOnce(&mut Value),
    ) -> String {
        let mut h = self.header();
        header(&mut h);
        let mut p = Self::payload(claims);
        payload(&mut p);
        self.key.sign_jws(h, &p).unwrap()
    }
}

/// A tenant of its own, and a DPoP-bound or bearer client_credentials token of its management
/// application.
async fn machine(app: &TestApp, slug: &str) -> CreatedTenant {
    // Tenants are told apart by host (`{slug}.localhost:{port}`): see `spawn`.
    let operator = operator_token(app).await;
    create_tenant(app, &operator, slug).await
}

/// The app on `backend` serving tenants by host, with `env`.
async fn spawn(backend: svc_testkit::Backend, env: &[(&str, &str)]) -> TestApp {
    let mut all = vec![("SVC_SERVER__BASE_DOMAIN", "localhost")];
    all.extend_from_slice(env);
    TestApp::spawn_with(backend, &all).await
}

fn token_url(host: &str) -> String {
    format!("http://{host}/oauth/token")
}

/// `POST /oauth/token` with client_credentials for `tenant`'s management app and `proofs`.
async fn client_credentials(
    app: &TestApp,
    tenant: &CreatedTenant,
    proofs: &[&str],
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = app
        .request(Method::POST, "/oauth/token")
        .header("host", &tenant.host)
        .basic_auth(&tenant.client_id, Some(&tenant.client_secret));
    for proof in proofs {
        request = request.header("dpop", *proof);
    }
    let response = request
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.json().await.unwrap())
}

/// `GET /api/v1/applications` on `host` with `authorization` and an optional proof.
async fn list_applications(
    app: &TestApp,
    host: &str,
    authorization: &str,
    proof: Option<&str>,
) -> (u16, String) {
    let mut request = app
        .request(Method::GET, "/api/v1/applications")
        .header("host", host)
        .header("authorization", authorization);
    if let Some(proof) = proof {
        request = request.header("dpop", proof);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, challenge)
}

fn claims_of(token: &str) -> Value {
    let payload = token.split('.').nth(1).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

#[tokio::test]
async fn a_proof_is_spent_only_by_an_authenticated_client() {
    for backend in BACKENDS {
        let app = spawn(backend, &[]).await;
        let tenant = machine(&app, "robots").await;
        let prover = Prover::new(SigningAlg::Es256);
        let proof = prover.proof(&Claims::post(token_url(&tenant.host)));
        // Someone who saw the proof sends it with wrong credentials: refused, and the proof is
        // not burnt for its owner.
        let stolen = app
            .request(Method::POST, "/oauth/token")
            .header("host", &tenant.host)
            .basic_auth(&tenant.client_id, Some("not-the-secret"))
            .header("dpop", &proof)
            .form(&[("grant_type", "client_credentials")])
            .send()
            .await
            .unwrap();
        assert_eq!(stolen.status(), 401);
        let (status, _, body) = client_credentials(&app, &tenant, &[&proof]).await;
        assert_eq!(status, 200, "{backend:?}: {body}");
        assert_eq!(body["token_type"], "DPoP");
        // Once used by its owner, it is spent.
        let (status, _, body) = client_credentials(&app, &tenant, &[&proof]).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_dpop_proof")),
            "{body}"
        );
        app.shutdown().await;
    }
}

#[tokio::test]
async fn client_credentials_tokens_are_bound_and_used_with_their_key() {
    for backend in BACKENDS {
        let app = spawn(backend, &[]).await;
        let tenant = machine(&app, "robots").await;
        let prover = Prover::new(SigningAlg::Es256);
        let url = token_url(&tenant.host);
        let (status, _, body) =
            client_credentials(&app, &tenant, &[&prover.proof(&Claims::post(url.clone()))]).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["token_type"], "DPoP", "RFC 9449 §5");
        let token = body["access_token"].as_str().unwrap().to_owned();
        assert_eq!(
            claims_of(&token)["cnf"]["jkt"],
            prover.jkt(),
            "RFC 9449 §6.1"
        );

        // The management API takes it with the DPoP scheme and a proof for this request.
        let api = format!("http://{}/api/v1/applications", tenant.host);
        let good = prover.proof(&Claims::get(api.clone(), &token));
        let (status, _) =
            list_applications(&app, &tenant.host, &format!("DPoP {token}"), Some(&good)).await;
        assert_eq!(status, 200);
        // The same proof again is a replay.
        let (status, challenge) =
            list_applications(&app, &tenant.host, &format!("DPoP {token}"), Some(&good)).await;
        assert_eq!(status, 401);
        assert!(challenge.contains("invalid_dpop_proof"), "{challenge}");
        // As a bearer token it is refused (RFC 9449 §7.2), with or without a proof.
        let (status, challenge) =
            list_applications(&app, &tenant.host, &format!("Bearer {token}"), None).await;
        assert_eq!(status, 401);
        assert!(challenge.starts_with("DPoP"), "{challenge}");
        // No proof, a proof by another key, a proof without or with a wrong ath.
        let other = Prover::new(SigningAlg::EdDsa);
        let cases = [
            ("no proof", None),
            (
                "another key",
                Some(other.proof(&Claims::get(api.clone(), &token))),
            ),
            (
                "no ath",
                Some(prover.proof(&Claims {
                    token: None,
                    ..Claims::get(api.clone(), &token)
                })),
            ),
            (
                "another token's ath",
                Some(prover.proof(&Claims::get(api.clone(), "another.token.value"))),
            ),
            (
                "another URL",
                Some(prover.proof(&Claims::get(
                    format!("http://{}/api/v1/users", tenant.host),
                    &token,
                ))),
            ),
            (
                "another method",
                Some(prover.proof(&Claims {
                    method: "DELETE",
                    ..Claims::get(api.clone(), &token)
                })),
            ),
        ];
        for (what, proof) in cases {
            let (status, challenge) = list_applications(
                &app,
                &tenant.host,
                &format!("DPoP {token}"),
                proof.as_deref(),
            )
            .await;
            assert_eq!(status, 401, "{what}");
            assert!(challenge.starts_with("DPoP"), "{what}: {challenge}");
        }

        // Introspection tells a resource server the binding (RFC 9449 §6.2).
        let introspected: Value = app
            .request(Method::POST, "/oauth/introspect")
            .header("host", &tenant.host)
            .basic_auth(&tenant.client_id, Some(&tenant.client_secret))
            .form(&[("token", token.as_str())])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(introspected["active"], true, "{introspected}");
        assert_eq!(introspected["token_type"], "DPoP");
        assert_eq!(introspected["cnf"]["jkt"], prover.jkt());

        // A bearer token with the DPoP scheme is refused; with Bearer it works as before.
        let (_, _, bearer) = client_credentials(&app, &tenant, &[]).await;
        assert_eq!(bearer["token_type"], "Bearer");
        let plain = bearer["access_token"].as_str().unwrap();
        assert!(claims_of(plain).get("cnf").is_none());
        let proof = prover.proof(&Claims::get(api.clone(), plain));
        let (status, _) =
            list_applications(&app, &tenant.host, &format!("DPoP {plain}"), Some(&proof)).await;
        assert_eq!(status, 401, "the DPoP scheme needs a bound token");
        let (status, _) =
            list_applications(&app, &tenant.host, &format!("Bearer {plain}"), None).await;
        assert_eq!(status, 200);
        app.shutdown().await;
    }
}

#[tokio::test]
async fn hostile_proofs_are_refused_at_the_token_endpoint_and_issue_nothing() {
    for backend in BACKENDS {
        let app = spawn(backend, &[]).await;
        let tenant = machine(&app, "robots").await;
        let prover = Prover::new(SigningAlg::Es256);
        let url = token_url(&tenant.host);
        let good = Claims::post(url.clone());
        let private = {
            let mut jwk = prover.public_jwk();
            jwk["d"] = json!("AAAA");
            jwk
        };
        // Headers naming an algorithm the key cannot sign with, and a garbage signature.
        let unsigned = |alg: &str| {
            let h = URL_SAFE_NO_PAD.encode(
                json!({"typ": "dpop+jwt", "alg": alg, "jwk": prover.public_jwk()}).to_string(),
            );
            let p = URL_SAFE_NO_PAD.encode(Prover::payload(&good).to_string());
            format!("{h}.{p}.c2lnbmF0dXJl")
        };
        let other = Prover::new(SigningAlg::Es256);
        let cases: Vec<(&str, Vec<String>)> = vec![
            ("not a JWT", vec!["not-a-jwt".into()]),
            ("alg none", vec![unsigned("none")]),
            ("HS256", vec![unsigned("HS256")]),
            ("ES256 with a bad signature", vec![unsigned("ES256")]),
            (
                "wrong typ",
                vec![prover.tampered(
                    &good,
                    |h| {
                        h.insert("typ".into(), json!("JWT"));
                    },
                    |_| {},
                )],
            ),
            (
                "no jwk",
                vec![prover.tampered(
                    &good,
                    |h| {
                        h.remove("jwk");
                    },
                    |_| {},
                )],
            ),
            (
                "a private key in jwk",
                vec![prover.tampered(
                    &good,
                    |h| {
                        h.insert("jwk".into(), private.clone());
                    },
                    |_| {},
                )],
            ),
            (
                "signed by another key",
                vec![other.tampered(
                    &good,
                    |h| {
                        h.insert("jwk".into(), prover.public_jwk());
                    },
                    |_| {},
                )],
            ),
            (
                "wrong htm",
                vec![prover.proof(&Claims {
                    method: "GET",
                    ..good.clone()
                })],
            ),
            (
                "wrong htu",
                vec![prover.proof(&Claims::post(format!("http://{}/oauth/par", tenant.host)))],
            ),
            (
                "iat an hour ago",
                vec![prover.proof(&Claims {
                    iat_offset: -3600,
                    ..good.clone()
                })],
            ),
            (
                "iat in an hour",
                vec![prover.proof(&Claims {
                    iat_offset: 3600,
                    ..good.clone()
                })],
            ),
            (
                "no jti",
                vec![prover.tampered(
                    &good,
                    |_| {},
                    |p| {
                        p.as_object_mut().unwrap().remove("jti");
                    },
                )],
            ),
            (
                "no iat",
                vec![prover.tampered(
                    &good,
                    |_| {},
                    |p| {
                        p.as_object_mut().unwrap().remove("iat");
                    },
                )],
            ),
            (
                "two headers",
                vec![prover.proof(&good), prover.proof(&good)],
            ),
        ];
        for (what, proofs) in cases {
            let refs: Vec<&str> = proofs.iter().map(String::as_str).collect();
            let (status, headers, body) = client_credentials(&app, &tenant, &refs).await;
            assert_eq!(status, 400, "{what}: {body}");
            assert_eq!(body["error"], "invalid_dpop_proof", "{what}: {body}");
            assert!(body.get("access_token").is_none(), "{what}");
            assert_eq!(headers["cache-control"], "no-store");
        }
        // Accepted, as the RFC and FAPI require: iat 10 s either side, extra claims, htu with a
        // query; and a replay of an accepted proof is refused.
        let tolerated = [
            prover.proof(&Claims {
                iat_offset: -10,
                ..good.clone()
            }),
            prover.proof(&Claims {
                iat_offset: 10,
                ..good.clone()
            }),
            prover.tampered(&good, |_| {}, |p| p["extra"] = json!({"x": 1})),
            prover.proof(&Claims::post(format!("{url}?q=1"))),
        ];
        for proof in &tolerated {
            let (status, _, body) = client_credentials(&app, &tenant, &[proof]).await;
            assert_eq!(status, 200, "{body}");
        }
        let (status, _, body) = client_credentials(&app, &tenant, &[&tolerated[0]]).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_dpop_proof"))
        );
        app.shutdown().await;
    }
}

/// A public (PKCE-only) code-flow application of the world's tenant: its client id.
async fn register_public(world: &World) -> String {
    let response = world
        .api(Method::POST, "/api/v1/applications")
        .json(&json!({
            "name": "SPA",
            "redirect_uris": [REDIRECT],
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

/// Signs in at the hosted pages and returns the code for `client_id` with `extra` parameters.
async fn code(world: &World, client_id: &str, extra: &[(&str, &str)]) -> String {
    let browser = world.browser();
    world
        .code_for(&browser, client_id, "openid profile offline_access", extra)
        .await
}

/// `POST /oauth/token` on the world's tenant with `form` and an optional proof.
async fn token_request(world: &World, form: &[(&str, &str)], proof: Option<&str>) -> (u16, Value) {
    let mut request = world
        .app
        .request(Method::POST, "/oauth/token")
        .header("host", &world.host);
    if let Some(proof) = proof {
        request = request.header("dpop", proof);
    }
    let response = request.form(form).send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// Redeems `code` for the public client `client_id` with `proof`.
async fn redeem_public(
    world: &World,
    client_id: &str,
    code: &str,
    proof: Option<&str>,
) -> (u16, Value) {
    let form = [
        ("grant_type", "authorization_code"),
        ("client_id", client_id),
        ("code", code),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
    ];
    token_request(world, &form, proof).await
}

async fn refresh_public(
    world: &World,
    client_id: &str,
    refresh_token: &str,
    proof: Option<&str>,
) -> (u16, Value) {
    let form = [
        ("grant_type", "refresh_token"),
        ("client_id", client_id),
        ("refresh_token", refresh_token),
    ];
    token_request(world, &form, proof).await
}

async fn userinfo(world: &World, authorization: &str, proof: Option<&str>) -> (u16, String, Value) {
    let mut request = world
        .app
        .request(Method::GET, "/userinfo")
        .header("host", &world.host)
        .header("authorization", authorization);
    if let Some(proof) = proof {
        request = request.header("dpop", proof);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let text = response.text().await.unwrap();
    (
        status,
        challenge,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn a_public_clients_code_refresh_and_userinfo_are_bound_to_its_key() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let spa = register_public(&world).await;
        let prover = Prover::new(SigningAlg::EdDsa);
        let other = Prover::new(SigningAlg::Es256);
        let url = token_url(&world.host);

        // RFC 9449 §10: a code bound with dpop_jkt needs a proof of that key; a failed attempt
        // burns it.
        let bound = code(&world, &spa, &[("dpop_jkt", prover.jkt())]).await;
        let (status, body) = redeem_public(&world, &spa, &bound, None).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_dpop_proof"))
        );
        let (status, _) = redeem_public(
            &world,
            &spa,
            &bound,
            Some(&prover.proof(&Claims::post(url.clone()))),
        )
        .await;
        assert_eq!(status, 400, "the refused redemption burned the code");
        let bound = code(&world, &spa, &[("dpop_jkt", prover.jkt())]).await;
        let (status, body) = redeem_public(
            &world,
            &spa,
            &bound,
            Some(&other.proof(&Claims::post(url.clone()))),
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_dpop_proof"))
        );
        // A malformed dpop_jkt is refused at the authorization endpoint.
        let browser = world.browser();
        let page = browser
            .get(
                &world
                    .authorize_path("openid", "s", &[("dpop_jkt", "short")])
                    .replace(&world.client_id, &spa),
            )
            .await;
        let location = page.location().unwrap_or_default();
        assert!(location.contains("error=invalid_request"), "{location}");

        let bound = code(&world, &spa, &[("dpop_jkt", prover.jkt())]).await;
        let (status, tokens) = redeem_public(
            &world,
            &spa,
            &bound,
            Some(&prover.proof(&Claims::post(url.clone()))),
        )
        .await;
        assert_eq!(status, 200, "{tokens}");
        assert_eq!(tokens["token_type"], "DPoP");
        let access = tokens["access_token"].as_str().unwrap().to_owned();
        assert_eq!(claims_of(&access)["cnf"]["jkt"], prover.jkt());

        // UserInfo: the DPoP scheme with a proof carrying ath; nothing else.
        let ui = format!("http://{}/userinfo", world.host);
        let (status, _, claims) = userinfo(
            &world,
            &format!("DPoP {access}"),
            Some(&prover.proof(&Claims::get(ui.clone(), &access))),
        )
        .await;
        assert_eq!(status, 200, "{claims}");
        assert!(claims["sub"].is_string());
        let (status, challenge, _) = userinfo(&world, &format!("Bearer {access}"), None).await;
        assert_eq!(status, 401);
        assert!(challenge.starts_with("DPoP"), "{challenge}");
        let (status, challenge, _) = userinfo(
            &world,
            &format!("DPoP {access}"),
            Some(&prover.proof(&Claims {
                token: None,
                ..Claims::get(ui.clone(), &access)
            })),
        )
        .await;
        assert_eq!(status, 401);
        assert!(challenge.contains("invalid_dpop_proof"), "{challenge}");
        let (status, challenge, _) = userinfo(
            &world,
            &format!("DPoP {access}"),
            Some(&other.proof(&Claims::get(ui.clone(), &access))),
        )
        .await;
        assert_eq!(status, 401);
        assert!(challenge.contains("invalid_token"), "{challenge}");

        // RFC 9449 §5: a public client's refresh token is bound too. Refusals do not rotate it.
        let refresh = tokens["refresh_token"].as_str().unwrap().to_owned();
        let (status, body) = refresh_public(&world, &spa, &refresh, None).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_dpop_proof"))
        );
        let (status, body) = refresh_public(
            &world,
            &spa,
            &refresh,
            Some(&other.proof(&Claims::post(url.clone()))),
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_dpop_proof"))
        );
        let (status, refreshed) = refresh_public(
            &world,
            &spa,
            &refresh,
            Some(&prover.proof(&Claims::post(url.clone()))),
        )
        .await;
        assert_eq!(status, 200, "{refreshed}");
        assert_eq!(refreshed["token_type"], "DPoP");
        assert_eq!(
            claims_of(refreshed["access_token"].as_str().unwrap())["cnf"]["jkt"],
            prover.jkt()
        );

        // Without dpop_jkt, the proof at the token endpoint binds (no pre-binding needed).
        let plain = code(&world, &spa, &[]).await;
        let (status, tokens) = redeem_public(
            &world,
            &spa,
            &plain,
            Some(&other.proof(&Claims::post(url.clone()))),
        )
        .await;
        assert_eq!(status, 200, "{tokens}");
        assert_eq!(
            claims_of(tokens["access_token"].as_str().unwrap())["cnf"]["jkt"],
            other.jkt()
        );
        world.shutdown().await;
    }
}

#[tokio::test]
async fn a_proof_at_par_binds_the_code_and_confidential_refresh_is_not_bound() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let prover = Prover::new(SigningAlg::Es256);
        let par = format!("http://{}/oauth/par", world.host);
        let form = [
            ("response_type", "code"),
            ("client_id", world.client_id.as_str()),
            ("redirect_uri", REDIRECT),
            ("scope", "openid offline_access"),
            ("state", "st"),
            ("code_challenge", crate::hosted::support::CHALLENGE),
            ("code_challenge_method", "S256"),
        ];
        let push = |proof: String, extra: Option<(&'static str, String)>| {
            let mut form: Vec<(String, String)> = form
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            if let Some((k, v)) = extra {
                form.push((k.to_owned(), v));
            }
            world
                .app
                .request(Method::POST, "/oauth/par")
                .header("host", &world.host)
                .header("dpop", proof)
                .basic_auth(&world.client_id, Some(&world.client_secret))
                .form(&form)
                .send()
        };
        // dpop_jkt and the proof must agree (RFC 9449 §10.1).
        let other = Prover::new(SigningAlg::EdDsa);
        let refused = push(
            prover.proof(&Claims::post(par.clone())),
            Some(("dpop_jkt", other.jkt().to_owned())),
        )
        .await
        .unwrap();
        assert_eq!(refused.status(), 400);
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["error"], "invalid_dpop_proof");

        let pushed: Value = push(prover.proof(&Claims::post(par.clone())), None)
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let request_uri = pushed["request_uri"].as_str().unwrap();
        let browser = world.browser();
        let path = format!(
            "/oauth/authorize?client_id={}&request_uri={}",
            world.client_id,
            url::form_urlencoded::byte_serialize(request_uri.as_bytes()).collect::<String>()
        );
        let location =
            crate::hosted::support::follow_to_client(&browser, &path, REDIRECT, &world.user).await;
        let code = crate::hosted::support::param(&location, "code").unwrap();
        // Redeemed by the confidential client without a proof: refused (bound at PAR).
        let unproved = world.redeem(&code).await;
        assert_eq!(unproved.status(), 400);
        let body: Value = unproved.json().await.unwrap();
        assert_eq!(body["error"], "invalid_dpop_proof");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn an_application_registered_for_bound_tokens_must_send_proofs() {
    for backend in BACKENDS {
        let world = World::new(backend, Setup::default()).await;
        let (id, secret) = world
            .register_with(json!({
                "name": "Strict",
                "grant_types": ["client_credentials"],
                "redirect_uris": [],
                "post_logout_redirect_uris": [],
                "allowed_scopes": [],
                "dpop_bound_access_tokens": true,
            }))
            .await;
        let view: Value = world
            .api(Method::GET, &format!("/api/v1/applications/{id}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(view["dpop_bound_access_tokens"], true);
        let token = |proof: Option<String>| {
            let mut request = world
                .app
                .request(Method::POST, "/oauth/token")
                .header("host", &world.host)
                .basic_auth(&id, Some(&secret));
            if let Some(proof) = proof {
                request = request.header("dpop", proof);
            }
            request.form(&[("grant_type", "client_credentials")]).send()
        };
        let refused = token(None).await.unwrap();
        assert_eq!(refused.status(), 400);
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["error"], "invalid_dpop_proof", "{body}");
        let prover = Prover::new(SigningAlg::Rs256);
        let granted = token(Some(prover.proof(&Claims::post(token_url(&world.host)))))
            .await
            .unwrap();
        assert_eq!(granted.status(), 200);
        let body: Value = granted.json().await.unwrap();
        assert_eq!(body["token_type"], "DPoP");
        world.shutdown().await;
    }
}

#[tokio::test]
async fn required_nonces_are_handed_out_and_checked() {
    for backend in BACKENDS {
        let app = spawn(backend, &[("SVC_DPOP__REQUIRE_NONCE", "true")]).await;
        let tenant = machine(&app, "robots").await;
        let prover = Prover::new(SigningAlg::Es256);
        let url = token_url(&tenant.host);
        // RFC 9449 §8: first use_dpop_nonce with the nonce, then success with it.
        let (status, headers, body) =
            client_credentials(&app, &tenant, &[&prover.proof(&Claims::post(url.clone()))]).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("use_dpop_nonce"))
        );
        let nonce = headers["dpop-nonce"].to_str().unwrap().to_owned();
        let with_nonce = Claims {
            nonce: Some(&nonce),
            ..Claims::post(url.clone())
        };
        let (status, headers, body) =
            client_credentials(&app, &tenant, &[&prover.proof(&with_nonce)]).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(headers["dpop-nonce"].to_str().unwrap(), nonce);
        let (status, _, body) = client_credentials(
            &app,
            &tenant,
            &[&prover.proof(&Claims {
                nonce: Some("forged"),
                ..Claims::post(url.clone())
            })],
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("use_dpop_nonce"))
        );
        // RFC 9449 §9: the resource answers 401 with a DPoP challenge and the nonce.
        let token = body_token(&app, &tenant, &prover, &nonce).await;
        let api = format!("http://{}/api/v1/applications", tenant.host);
        let (status, challenge) = list_applications(
            &app,
            &tenant.host,
            &format!("DPoP {token}"),
            Some(&prover.proof(&Claims::get(api.clone(), &token))),
        )
        .await;
        assert_eq!(status, 401);
        assert!(challenge.contains("use_dpop_nonce"), "{challenge}");
        let (status, _) = list_applications(
            &app,
            &tenant.host,
            &format!("DPoP {token}"),
            Some(&prover.proof(&Claims {
                nonce: Some(&nonce),
                ..Claims::get(api.clone(), &token)
            })),
        )
        .await;
        assert_eq!(status, 200);
        app.shutdown().await;
    }
}

async fn body_token(app: &TestApp, tenant: &CreatedTenant, prover: &Prover, nonce: &str) -> String {
    let claims = Claims {
        nonce: Some(nonce),
        ..Claims::post(token_url(&tenant.host))
    };
    let (status, _, body) = client_credentials(app, tenant, &[&prover.proof(&claims)]).await;
    assert_eq!(status, 200, "{body}");
    body["access_token"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn discovery_advertises_dpop_and_switching_it_off_ignores_proofs() {
    for backend in BACKENDS {
        let app = spawn(backend, &[]).await;
        let tenant = machine(&app, "robots").await;
        let doc: Value = app
            .request(Method::GET, "/.well-known/openid-configuration")
            .header("host", &tenant.host)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            doc["dpop_signing_alg_values_supported"],
            json!(["ES256", "EdDSA", "RS256", "PS256"])
        );
        app.shutdown().await;

        let off = spawn(backend, &[("SVC_DPOP__ENABLED", "false")]).await;
        let tenant = machine(&off, "robots").await;
        let doc: Value = off
            .request(Method::GET, "/.well-known/openid-configuration")
            .header("host", &tenant.host)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(doc.get("dpop_signing_alg_values_supported").is_none());
        let (status, _, body) = client_credentials(&off, &tenant, &["not even a JWT"]).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["token_type"], "Bearer");
        // No application is promised a binding nobody enforces (RFC 9449 §5.2), and nothing is
        // stored by the refusal.
        let token = body["access_token"].as_str().unwrap().to_owned();
        let applications = || async {
            let listed: Value = off
                .request(Method::GET, "/api/v1/applications")
                .header("host", &tenant.host)
                .bearer_auth(&token)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            listed["items"].as_array().unwrap().len()
        };
        let before = applications().await;
        let refused = off
            .request(Method::POST, "/api/v1/applications")
            .header("host", &tenant.host)
            .bearer_auth(&token)
            .json(&json!({
                "name": "Strict",
                "grant_types": ["client_credentials"],
                "redirect_uris": [],
                "token_endpoint_auth_method": "client_secret_basic",
                "dpop_bound_access_tokens": true,
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 400);
        let problem: Value = refused.json().await.unwrap();
        assert!(
            problem["error_description"]
                .as_str()
                .unwrap()
                .contains("[dpop].enabled"),
            "{problem}"
        );
        assert_eq!(applications().await, before);
        off.shutdown().await;
    }
}
