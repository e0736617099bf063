//! Enterprise single sign-on end to end (issue 20 item 2), on both backends, with a real
//! upstream: a second svc deployment (its own process-level app and database, its default
//! tenant at `http://127.0.0.1:<port>`) is the organization's OpenID provider. The
//! organization of tenant `acme` verifies `corp.example` (through the local DNS server) and is
//! connected to it through the management API; people then sign in from acme's sign-in page by
//! their address, through the upstream's own sign-in page, and come back with a session.
//!
//! Covered: configuration (discovery read, secret never shown, refusals naming the field,
//! another tenant's organization), home-realm discovery (a domain without a connection),
//! just-in-time provisioning with membership, linking to an existing account on a verified
//! address, the authorization request continued to the application with `amr` `fed`,
//! enforcement of SSO for password sign-in, and the attacks: a `state` replayed in another
//! browser, a callback replayed, a mix-up `iss`, an upstream error, an address at a domain the
//! organization does not own, an unverified upstream address colliding with an existing
//! account. The `sso.*` events are checked as a webhook receiver gets them. Answers no real
//! provider gives come from a provider the test controls (`hostile_upstream_answers_…`): ID
//! tokens with a wrong `aud` or `iss`, another sign-in's nonce or none, expired, `alg: none`,
//! HS256 keyed with the public key, signed by an unknown key, a tampered payload; a refused
//! code; no ID token. Each rule is also a unit test of the engine's `sso::id_token`.

use crate::common::{CreatedTenant, single_tenant};
use crate::dns::LocalDns;
use crate::hosted::support::{
    Browser, CHALLENGE, PASSWORD, Page, REDIRECT, VERIFIER, follow_to_client, param,
};
use crate::webhooks::support::Receiver;
use reqwest::Method as M;
use serde_json::{Value, json};
use std::time::Duration;
use svc_testkit::{BACKENDS, TestApp};

/// One deployment in single-tenant mode (issuer `http://127.0.0.1:<port>`, a loopback origin
/// the other side may register as an http redirect URI): its app, default tenant, management
/// token, and one first-party code-flow application.
pub(crate) struct Side {
    pub(crate) app: TestApp,
    pub(crate) tenant: CreatedTenant,
    pub(crate) token: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: String,
}

impl Side {
    /// A deployment with `env`, whose application redirects to `redirect_uri`.
    pub(crate) async fn start(
        backend: svc_testkit::Backend,
        env: &[(&str, &str)],
        redirect_uri: &str,
    ) -> Self {
        let mut all = vec![
            ("SVC_AUTH__ARGON2_MEMORY_KIB", "8192"),
            ("SVC_AUTH__ARGON2_ITERATIONS", "1"),
        ];
        all.extend_from_slice(env);
        let (app, tenant, token) = single_tenant(backend, &all).await;
        let response = app
            .request(M::POST, "/api/v1/applications")
            .bearer_auth(&token)
            .json(&json!({
                "name": "Sign-in",
                "redirect_uris": [redirect_uri],
                "grant_types": ["authorization_code"],
                "token_endpoint_auth_method": "client_secret_basic",
                "allowed_scopes": ["openid", "profile", "email"],
                "first_party": true,
            }))
            .send()
            .await
            .unwrap();
        let (status, created) = json(response).await;
        assert_eq!(status, 201, "{created}");
        Self {
            client_id: created["client_id"].as_str().unwrap().to_owned(),
            client_secret: created["client_secret"].as_str().unwrap().to_owned(),
            app,
            tenant,
            token,
        }
    }

    pub(crate) fn issuer(&self) -> String {
        self.app.url.clone()
    }

    pub(crate) fn browser(&self) -> Browser {
        Browser::new(&self.app, &self.tenant.host)
    }

    /// A management API request with the tenant's token.
    pub(crate) fn api(&self, method: M, path: &str) -> reqwest::RequestBuilder {
        self.app.request(method, path).bearer_auth(&self.token)
    }

    /// An active person with [`PASSWORD`].
    pub(crate) async fn person(&self, email: &str, verified: bool) -> Value {
        let (status, body) = json(
            self.api(M::POST, "/api/v1/tenant-users")
                .json(&json!({
                    "email": email, "password": PASSWORD, "name": "Grace Hopper",
                    "email_verified": verified,
                }))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 201, "{body}");
        body
    }

    /// `/oauth/authorize?…` for the application, with PKCE, `state` and a nonce.
    pub(crate) fn authorize_path(&self, scope: &str) -> String {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.client_id)
            .append_pair("redirect_uri", REDIRECT)
            .append_pair("scope", scope)
            .append_pair("state", "st")
            .append_pair("nonce", "n-1")
            .append_pair("code_challenge", CHALLENGE)
            .append_pair("code_challenge_method", "S256");
        format!("/oauth/authorize?{}", query.finish())
    }

    /// Redeems a code of the application (its redirect URI being [`REDIRECT`]).
    pub(crate) async fn redeem(&self, code: &str) -> (u16, Value) {
        json(
            self.app
                .request(M::POST, "/oauth/token")
                .basic_auth(&self.client_id, Some(&self.client_secret))
                .form(&[
                    ("grant_type", "authorization_code"),
                    ("code", code),
                    ("redirect_uri", REDIRECT),
                    ("code_verifier", VERIFIER),
                ])
                .send()
                .await
                .unwrap(),
        )
        .await
    }
}

/// The answer's JSON and status.
pub(crate) async fn json(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// acme's organization `corp`, verifying `corp.example` through `dns`.
async fn verified_org(world: &Side, dns: &LocalDns, slug: &str, domain: &str) -> String {
    let (status, org) = json(
        world
            .api(M::POST, "/api/v1/organizations")
            .json(&json!({"slug": slug, "name": slug}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{org}");
    let org = org["id"].as_str().unwrap().to_owned();
    let (status, claim) = json(
        world
            .api(M::POST, &format!("/api/v1/organizations/{org}/domains"))
            .json(&json!({"name": domain}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{claim}");
    let txt = claim["verification"]["dns_txt"]["value"].as_str().unwrap();
    dns.set_txt(&format!("_svc-verification.{domain}"), &[txt]);
    let path = format!(
        "/api/v1/organizations/{org}/domains/{}/verify",
        claim["id"].as_str().unwrap()
    );
    let (status, verified) = json(world.api(M::POST, &path).send().await.unwrap()).await;
    assert_eq!(status, 200, "{verified}");
    org
}

/// Starts single sign-on for `email` in `browser` (from the sign-in page of `interaction`):
/// the page that moves on to the provider, or the refusal.
async fn start(browser: &Browser, interaction: Option<&str>, email: &str) -> Page {
    let path = match interaction {
        Some(i) => format!("/auth/sign-in?interaction={i}"),
        None => "/auth/sign-in".to_owned(),
    };
    let page = browser.get(&path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("action=\"/auth/sso\""), "{}", page.body);
    let csrf = page.field("csrf").unwrap();
    let mut form = vec![("csrf", csrf.as_str()), ("email", email)];
    if let Some(i) = interaction {
        form.push(("interaction", i));
    }
    browser.post("/auth/sso", &form).await
}

/// Where a page that moves on by itself (a `meta` refresh at once) goes: the provider after a
/// start, the next step after a successful return.
pub(crate) fn refresh_target(page: &Page) -> String {
    assert_eq!(page.status, 200, "{}", page.body);
    let marker = "content=\"0;url=";
    let at = page.body.find(marker).expect("a meta refresh") + marker.len();
    let end = at + page.body[at..].find('"').unwrap();
    page.body[at..end]
        .replace("&amp;", "&")
        .replace("&#38;", "&")
}

/// Signs in at the provider as `email` and returns the callback URL it sends the browser to.
async fn at_provider(up: &Side, url: &str, email: &str) -> String {
    let browser = up.browser();
    let mut page = browser.get(url).await;
    for _ in 0..6 {
        assert_eq!(page.status, 303, "{}", page.body);
        let location = page.location().unwrap();
        if location.contains("/auth/sso/callback") {
            return location;
        }
        page = if location.starts_with("/auth/sign-in?") {
            let interaction = param(&location, "interaction").unwrap();
            browser.sign_in(Some(&interaction), email, PASSWORD).await
        } else {
            browser.get(&location).await
        };
    }
    panic!("the provider did not send the browser back");
}

/// The whole round: start at acme, sign in at the provider, come back. The callback's answer.
async fn round(
    down: &Browser,
    up: &Side,
    interaction: Option<&str>,
    email: &str,
) -> (Page, String) {
    let started = start(down, interaction, email).await;
    let callback = at_provider(up, &refresh_target(&started), email).await;
    (down.get(&callback).await, callback)
}

/// The person the downstream's UserInfo names for the browser's session, through a code for
/// its application.
pub(crate) async fn userinfo(down: &Side, browser: &Browser) -> Value {
    let location =
        follow_to_client(browser, &down.authorize_path("openid email"), REDIRECT, "-").await;
    let (status, tokens) = down.redeem(&param(&location, "code").unwrap()).await;
    assert_eq!(status, 200, "{tokens}");
    let (status, info) = json(
        down.app
            .request(M::GET, "/userinfo")
            .bearer_auth(tokens["access_token"].as_str().unwrap())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{info}");
    info
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn organizations_sign_in_through_their_own_provider_and_attacks_are_refused() {
    for backend in BACKENDS {
        let dns = LocalDns::start().await;
        let servers: &'static str = Box::leak(dns.servers_setting().into_boxed_str());
        let world = Side::start(
            backend,
            &[
                ("SVC_ENTERPRISE_SSO__ENABLED", "true"),
                ("SVC_VERIFIED_DOMAINS__DNS_SERVERS", servers),
                ("SVC_VERIFIED_DOMAINS__TIMEOUT_MS", "1500"),
            ],
            REDIRECT,
        )
        .await;
        let callback = format!("{}/auth/sso/callback", world.issuer());
        let up = Side::start(backend, &[], &callback).await;
        let org = verified_org(&world, &dns, "corp", "corp.example").await;
        let receiver = Receiver::default();
        let hook = receiver.start().await;
        let (status, subscribed) = json(
            world
                .api(M::POST, "/api/v1/webhooks")
                .json(&json!({"url": hook, "event_types": [
                    "sso.configured", "sso.login.success", "sso.login.failed",
                    "sso.user.provisioned"]}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 201, "{subscribed}");

        // --- Configuration -------------------------------------------------------------
        let sso_path = format!("/api/v1/organizations/{org}/sso");
        let put = |body: Value| world.api(M::PUT, &sso_path).json(&body).send();
        // No connection yet: not found; the first one needs a secret.
        let (status, _) = json(world.api(M::GET, &sso_path).send().await.unwrap()).await;
        assert_eq!(status, 404);
        let (status, problem) = json(
            put(json!({"issuer": up.issuer(), "client_id": up.client_id}))
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 400, "{problem}");
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("client_secret")
        );
        // An issuer whose discovery document cannot be read, or names another issuer.
        for (issuer, says) in [
            (
                "http://127.0.0.1:9/nothing-here".to_owned(),
                "discovery document",
            ),
            (format!("{}/", up.issuer()), "names issuer"),
            ("not a url".to_owned(), "absolute https URL"),
        ] {
            let (status, problem) = json(
                put(json!({"issuer": issuer, "client_id": "x", "client_secret": "y"}))
                    .await
                    .unwrap(),
            )
            .await;
            assert_eq!(status, 400, "{issuer}: {problem}");
            let detail = problem["detail"].as_str().unwrap();
            assert!(detail.starts_with("issuer"), "{detail}");
            assert!(detail.contains(says), "{issuer}: {detail}");
        }
        for hostile in [
            json!({"issuer": up.issuer(), "client_id": "x", "client_secret": "y", "admin": true}),
            json!({"issuer": up.issuer(), "client_id": "", "client_secret": "y"}),
            json!({"issuer": up.issuer(), "client_id": "x", "client_secret": "y",
                   "scopes": ["email"]}),
            json!([]),
        ] {
            let (status, problem) = json(put(hostile.clone()).await.unwrap()).await;
            assert_eq!(status, 400, "{hostile}: {problem}");
        }
        let (status, _) = json(world.api(M::GET, &sso_path).send().await.unwrap()).await;
        assert_eq!(status, 404, "nothing was written by the refusals");
        let (status, view) = json(
            put(json!({"issuer": up.issuer(), "client_id": up.client_id,
                       "client_secret": up.client_secret}))
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(status, 201, "{view}");
        assert_eq!(view["issuer"], up.issuer().as_str());
        assert_eq!(
            view["token_endpoint"],
            format!("{}/oauth/token", up.issuer())
        );
        assert_eq!(view["redirect_uri"], callback.as_str());
        assert_eq!(view["scopes"], json!(["openid", "email", "profile"]));
        assert_eq!(view["enforced"], false);
        let shown = view.to_string();
        assert!(!shown.contains(&up.client_secret), "{shown}");
        assert!(view.get("client_secret").is_none() && view.get("sealed_secret").is_none());
        // Replaced without a secret: the sealed one stays (sign-in below proves it opens).
        let (status, view) = json(
            put(json!({"issuer": up.issuer(), "client_id": up.client_id}))
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{view}");
        // An unknown or malformed organization id is not found (another tenant's rows are
        // unreachable by construction: the store conformance suite checks it on both backends).
        for path in [
            "/api/v1/organizations/org_01jd2n4k6m8p0r2t4v6x8z0b2d/sso",
            "/api/v1/organizations/../sso",
            "/api/v1/organizations/%3Cscript%3E/sso",
        ] {
            let (status, _) = json(world.api(M::GET, path).send().await.unwrap()).await;
            assert_eq!(status, 404, "{path}");
        }

        // --- Home-realm discovery ------------------------------------------------------
        let stranger = world.browser();
        let refused = start(&stranger, None, "pat@elsewhere.example").await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert!(
            refused.body.contains("Single sign-on is not set up"),
            "{}",
            refused.body
        );
        assert!(stranger.cookie("svc_sso").is_none());

        // --- Just-in-time provisioning, continuing an authorization request -------------
        up.person("grace@corp.example", true).await;
        let browser = world.browser();
        let authorize = world.authorize_path("openid email");
        let first = browser.get(&authorize).await;
        let interaction = param(&first.location().unwrap(), "interaction").unwrap();
        let (back, _) = round(&browser, &up, Some(&interaction), "grace@corp.example").await;
        // A page that moves on by itself, not a 303: the provider's form-action would refuse
        // the redirects that follow its sign-in form to the application's origin.
        assert_eq!(back.status, 200, "{}", back.body);
        assert!(
            back.set_cookies()
                .iter()
                .any(|c| c.starts_with("svc_sso=;")),
            "the attempt cookie is cleared: {:?}",
            back.set_cookies()
        );
        let mut page = browser.get(&refresh_target(&back)).await;
        let location = loop {
            let location = page.location().unwrap();
            if location.starts_with(REDIRECT) {
                break location;
            }
            page = browser.get(&location).await;
        };
        let code = param(&location, "code").unwrap();
        let (status, tokens) = world.redeem(&code).await;
        assert_eq!(status, 200, "{tokens}");
        let claims = decode(tokens["id_token"].as_str().unwrap());
        assert_eq!(claims["amr"], json!(["fed"]), "{claims}");
        assert_eq!(claims["acr"], "urn:svc:aal1");
        let grace = userinfo(&world, &browser).await;
        assert_eq!(grace["email"], "grace@corp.example");
        assert_eq!(grace["email_verified"], true);
        // A member of the organization now.
        let (status, members) = json(
            world
                .api(M::GET, &format!("/api/v1/organizations/{org}/members"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200);
        assert!(
            members.to_string().contains(grace["sub"].as_str().unwrap()),
            "{members}"
        );
        // The second time, the same person (the link), no second provisioning.
        let again = world.browser();
        let (back, _) = round(&again, &up, None, "grace@corp.example").await;
        assert_eq!(back.status, 200, "{}", back.body);
        assert_eq!(userinfo(&world, &again).await["sub"], grace["sub"]);

        // --- Linking an existing account on a verified address --------------------------
        let ada = world.person("ada@corp.example", false).await;
        up.person("ada@corp.example", true).await;
        let linked = world.browser();
        let (back, _) = round(&linked, &up, None, "ada@corp.example").await;
        assert_eq!(back.status, 200, "{}", back.body);
        assert_eq!(userinfo(&world, &linked).await["sub"], ada["id"]);

        // --- private_key_jwt: no secret, an assertion signed by the tenant's own key -------
        // The upstream refuses a loopback jwks_uri, so acme's published key set is registered
        // inline: what a provider would fetch from `client_jwks_uri`.
        let (status, acme_keys) = json(
            world
                .app
                .request(M::GET, "/.well-known/jwks.json")
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200);
        let (status, keyed) = json(
            up.api(M::POST, "/api/v1/applications")
                .json(&json!({
                    "name": "Acme sign-in (keys)",
                    "redirect_uris": [callback],
                    "grant_types": ["authorization_code"],
                    "token_endpoint_auth_method": "private_key_jwt",
                    "jwks": acme_keys,
                    "allowed_scopes": ["openid", "profile", "email"],
                    "first_party": true,
                }))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 201, "{keyed}");
        let keyed_id = keyed["client_id"].as_str().unwrap();
        let (status, problem) = json(
            put(json!({"issuer": up.issuer(), "client_id": keyed_id,
                       "token_endpoint_auth_method": "private_key_jwt",
                       "client_secret": "not-for-keys"}))
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(status, 400, "{problem}");
        let (status, view) = json(
            put(json!({"issuer": up.issuer(), "client_id": keyed_id,
                       "token_endpoint_auth_method": "private_key_jwt"}))
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{view}");
        assert_eq!(view["token_endpoint_auth_method"], "private_key_jwt");
        assert_eq!(
            view["client_jwks_uri"],
            format!("{}/.well-known/jwks.json", world.issuer())
        );
        let keyed_browser = world.browser();
        let (back, _) = round(&keyed_browser, &up, None, "grace@corp.example").await;
        assert_eq!(back.status, 200, "{}", back.body);
        assert_eq!(userinfo(&world, &keyed_browser).await["sub"], grace["sub"]);
        // Back to the secret: switching needs it again.
        let (status, problem) = json(
            put(json!({"issuer": up.issuer(), "client_id": up.client_id}))
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 400, "{problem}");
        let (status, view) = json(
            put(json!({"issuer": up.issuer(), "client_id": up.client_id,
                       "client_secret": up.client_secret}))
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{view}");
        assert!(view.get("client_jwks_uri").is_none(), "{view}");

        // --- Attacks ----------------------------------------------------------------------
        // A state (and code) replayed in another browser, and the callback replayed.
        let victim = world.browser();
        let started = start(&victim, None, "grace@corp.example").await;
        let callback_url = at_provider(&up, &refresh_target(&started), "grace@corp.example").await;
        let attacker = world.browser();
        let _ = start(&attacker, None, "grace@corp.example").await;
        let stolen = attacker.get(&callback_url).await;
        assert_eq!(stolen.status, 400, "{}", stolen.body);
        assert!(
            stolen.body.contains("started in another browser"),
            "{}",
            stolen.body
        );
        assert!(attacker.cookie("svc_session").is_none());
        let no_cookie = world.browser().get(&callback_url).await;
        assert_eq!(no_cookie.status, 400);
        let own = victim.get(&callback_url).await;
        assert_eq!(
            own.status, 200,
            "the victim's own attempt is intact: {}",
            own.body
        );
        let replayed = victim.get(&callback_url).await;
        assert_eq!(replayed.status, 400, "{}", replayed.body);

        // Mix-up: the answer names another issuer, or none though the provider sends it.
        for iss in [Some("https://evil.example"), None] {
            let b = world.browser();
            let started = start(&b, None, "grace@corp.example").await;
            let url = at_provider(&up, &refresh_target(&started), "grace@corp.example").await;
            assert!(
                param(&url, "iss").is_some(),
                "svc sends iss (RFC 9207): {url}"
            );
            let mut parsed = reqwest::Url::parse(&url).unwrap();
            let pairs: Vec<(String, String)> = parsed
                .query_pairs()
                .filter(|(k, _)| k != "iss")
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            {
                let mut query = parsed.query_pairs_mut();
                query.clear();
                for (k, v) in &pairs {
                    query.append_pair(k, v);
                }
                if let Some(iss) = iss {
                    query.append_pair("iss", iss);
                }
            }
            parsed.set_query(parsed.query().map(str::to_owned).as_deref());
            let page = b.get(parsed.as_str()).await;
            assert_eq!(page.status, 401, "{iss:?}: {}", page.body);
            assert!(page.body.contains("could not be accepted"), "{}", page.body);
            assert!(b.cookie("svc_session").is_none());
        }

        // The provider refused (the person declined).
        let b = world.browser();
        let started = start(&b, None, "grace@corp.example").await;
        let provider = refresh_target(&started);
        let state = param(&provider, "state").unwrap();
        let declined = b
            .get(&format!(
                "/auth/sso/callback?error=access_denied&state={state}&iss={}",
                up.issuer()
            ))
            .await;
        assert_eq!(declined.status, 401, "{}", declined.body);

        // An address at a domain the organization does not own, and an unverified upstream
        // address colliding with an existing account: refused, nothing created or linked.
        dns.set_txt("_svc-verification.evil.example", &["nothing"]);
        up.person("eve@evil.example", true).await;
        up.person("bob@corp.example", false).await;
        world.person("bob@corp.example", false).await;
        for (login, email) in [
            ("grace@corp.example", "eve@evil.example"),
            ("grace@corp.example", "bob@corp.example"),
        ] {
            let b = world.browser();
            // Discovery is by the typed address; the provider then asserts another person.
            let started = start(&b, None, login).await;
            let url = at_provider(&up, &refresh_target(&started), email).await;
            let page = b.get(&url).await;
            assert_eq!(page.status, 401, "{email}: {}", page.body);
            assert!(b.cookie("svc_session").is_none());
        }
        let (_, users) = json(
            world
                .api(M::GET, "/api/v1/tenant-users?limit=100")
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert!(!users.to_string().contains("eve@evil.example"), "{users}");
        // Bob's own password still works: his account was not taken over.
        let bob = world.browser();
        assert_eq!(
            bob.sign_in(None, "bob@corp.example", PASSWORD).await.status,
            303
        );

        // --- Enforcement ------------------------------------------------------------------
        let (status, view) = json(
            put(json!({"issuer": up.issuer(), "client_id": up.client_id, "enforced": true}))
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{view}");
        world.person("lin@example.com", true).await;
        let b = world.browser();
        let refused = b.sign_in(None, "ada@corp.example", PASSWORD).await;
        assert_eq!(refused.status, 403, "{}", refused.body);
        assert!(refused.body.contains("single sign-on"), "{}", refused.body);
        // No password is reset for that domain either.
        let reset = b
            .submit(
                "/auth/forgot-password",
                "/auth/forgot-password",
                &[("email", "ada@corp.example")],
            )
            .await;
        assert_eq!(reset.status, 403, "{}", reset.body);
        assert!(reset.body.contains("single sign-on"), "{}", reset.body);
        // Other domains are not concerned.
        assert_eq!(
            world
                .browser()
                .sign_in(None, "lin@example.com", PASSWORD)
                .await
                .status,
            303
        );

        // --- A suspended organization signs nobody in ----------------------------------
        let suspend = format!("/api/v1/organizations/{org}/suspend");
        let (status, body) = json(world.api(M::POST, &suspend).send().await.unwrap()).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            start(&world.browser(), None, "grace@corp.example")
                .await
                .status,
            400
        );
        let reactivate = format!("/api/v1/organizations/{org}/reactivate");
        let (status, body) = json(world.api(M::POST, &reactivate).send().await.unwrap()).await;
        assert_eq!(status, 200, "{body}");

        // --- Removal ----------------------------------------------------------------------
        let (status, _) = json(world.api(M::DELETE, &sso_path).send().await.unwrap()).await;
        assert_eq!(status, 204);
        let (status, _) = json(world.api(M::DELETE, &sso_path).send().await.unwrap()).await;
        assert_eq!(status, 404);
        assert_eq!(
            start(&world.browser(), None, "grace@corp.example")
                .await
                .status,
            400
        );
        assert_eq!(
            world
                .browser()
                .sign_in(None, "ada@corp.example", PASSWORD)
                .await
                .status,
            303,
            "enforcement ends with the connection"
        );

        // --- Events -----------------------------------------------------------------------
        let seen = receiver
            .wait_for(Duration::from_secs(20), |seen| {
                let types: Vec<&str> = seen.iter().map(|r| r.header("x-svc-event")).collect();
                types.iter().filter(|t| **t == "sso.login.failed").count() >= 5
                    && types.contains(&"sso.user.provisioned")
                    && types.iter().filter(|t| **t == "sso.login.success").count() >= 3
                    && types.iter().filter(|t| **t == "sso.configured").count() >= 4
            })
            .await;
        let bodies: Vec<Value> = seen.iter().map(|r| r.json()).collect();
        let failed: Vec<&str> = bodies
            .iter()
            .filter(|b| b["type"] == "sso.login.failed")
            .filter_map(|b| b["data"]["reason"].as_str())
            .collect();
        for reason in ["upstream_error", "domain_not_owned", "email_unverified"] {
            assert!(failed.contains(&reason), "{reason} in {failed:?}");
        }
        let provisioned = bodies
            .iter()
            .find(|b| b["type"] == "sso.user.provisioned")
            .unwrap();
        assert_eq!(provisioned["data"]["user_id"], grace["sub"]);
        assert_eq!(provisioned["data"]["organization_id"], org.as_str());
        assert!(
            !seen
                .iter()
                .any(|r| String::from_utf8_lossy(&r.body).contains(&up.client_secret))
        );
        world.app.shutdown().await;
        up.app.shutdown().await;
    }
}

/// The payload of a JWT (not verified: the token endpoint just issued it).
pub(crate) fn decode(jwt: &str) -> Value {
    use base64::Engine;
    let payload = jwt.split('.').nth(1).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// A provider we control, for answers no real provider gives: its discovery document and key
/// set are proper, its token endpoint answers whatever the test set last.
struct FakeProvider {
    issuer: String,
    key: svc_crypto::SigningKey,
    next: std::sync::Arc<std::sync::Mutex<(u16, Value)>>,
}

impl FakeProvider {
    async fn start() -> Self {
        use axum::routing::{get, post};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let key = svc_crypto::SigningKey::generate(svc_crypto::SigningAlg::Es256).unwrap();
        let next = std::sync::Arc::new(std::sync::Mutex::new((500, Value::Null)));
        let discovery = json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "jwks_uri": format!("{issuer}/jwks"),
            "response_types_supported": ["code"],
            "authorization_response_iss_parameter_supported": true,
        });
        let jwks = json!({"keys": [key.public_jwk()]});
        let answer = next.clone();
        let router = axum::Router::new()
            .route(
                "/.well-known/openid-configuration",
                get(move || async move { axum::Json(discovery) }),
            )
            .route("/jwks", get(move || async move { axum::Json(jwks) }))
            .route(
                "/token",
                post(move || async move {
                    let (status, body) = answer.lock().unwrap().clone();
                    (
                        axum::http::StatusCode::from_u16(status).unwrap(),
                        axum::Json(body),
                    )
                }),
            );
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        Self { issuer, key, next }
    }

    /// The token endpoint's next answer: `id_token` in a 200.
    fn answer_with(&self, id_token: &str) {
        *self.next.lock().unwrap() = (
            200,
            json!({"access_token": "at", "token_type": "Bearer", "id_token": id_token}),
        );
    }
}

/// The base64url of `value`'s JSON.
fn segment(value: &Value) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_upstream_answers_sign_nobody_in() {
    for backend in BACKENDS {
        let dns = LocalDns::start().await;
        let servers: &'static str = Box::leak(dns.servers_setting().into_boxed_str());
        let world = Side::start(
            backend,
            &[
                ("SVC_ENTERPRISE_SSO__ENABLED", "true"),
                ("SVC_VERIFIED_DOMAINS__DNS_SERVERS", servers),
                ("SVC_VERIFIED_DOMAINS__TIMEOUT_MS", "1500"),
                // Twelve starts below, then one too many from this address.
                ("SVC_AUTH__PASSWORD_VERIFY_IP_MAX_ATTEMPTS", "12"),
            ],
            REDIRECT,
        )
        .await;
        let org = verified_org(&world, &dns, "corp", "corp.example").await;
        let fake = FakeProvider::start().await;
        let (status, view) = json(
            world
                .api(M::PUT, &format!("/api/v1/organizations/{org}/sso"))
                .json(&json!({"issuer": fake.issuer, "client_id": "svc-client",
                              "client_secret": "upstream-secret"}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 201, "{view}");
        let now = svc_domain::Clock::now(&svc_domain::SystemClock).unix_timestamp();
        let claims = |nonce: &str| {
            json!({
                "iss": fake.issuer, "aud": "svc-client", "sub": "u-1", "nonce": nonce,
                "exp": now + 300, "iat": now, "email": "grace@corp.example",
                "email_verified": true,
            })
        };
        let signed = |claims: &Value| fake.key.sign_jwt("JWT", claims).unwrap();
        let stranger = svc_crypto::SigningKey::generate(svc_crypto::SigningAlg::Es256).unwrap();
        type Forge<'a> = Box<dyn Fn(&str) -> String + 'a>;
        let cases: Vec<(&str, Forge)> = vec![
            (
                "wrong aud",
                Box::new(|n| {
                    let mut c = claims(n);
                    c["aud"] = json!("someone-else");
                    signed(&c)
                }),
            ),
            (
                "wrong iss (mix-up)",
                Box::new(|n| {
                    let mut c = claims(n);
                    c["iss"] = json!("https://evil.example");
                    signed(&c)
                }),
            ),
            (
                "another sign-in's nonce",
                Box::new(|_| signed(&claims("replayed-nonce"))),
            ),
            (
                "no nonce",
                Box::new(|n| {
                    let mut c = claims(n);
                    c.as_object_mut().unwrap().remove("nonce");
                    signed(&c)
                }),
            ),
            (
                "expired",
                Box::new(|n| {
                    let mut c = claims(n);
                    c["exp"] = json!(now - 3600);
                    c["iat"] = json!(now - 7200);
                    signed(&c)
                }),
            ),
            (
                "alg none",
                Box::new(|n| {
                    format!(
                        "{}.{}.",
                        segment(&json!({"alg": "none"})),
                        segment(&claims(n))
                    )
                }),
            ),
            (
                "HS256 keyed with the public key",
                Box::new(|n| {
                    let header = json!({"alg": "HS256", "kid": fake.key.kid()});
                    let input = format!("{}.{}", segment(&header), segment(&claims(n)));
                    let secret = fake.key.public_jwk().to_string();
                    let mac = svc_crypto::digest::hmac_sha256(secret.as_bytes(), input.as_bytes());
                    use base64::Engine;
                    let mac = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac);
                    format!("{input}.{mac}")
                }),
            ),
            (
                "signed by an unknown key",
                Box::new(|n| stranger.sign_jwt("JWT", &claims(n)).unwrap()),
            ),
            (
                "a tampered payload",
                Box::new(|n| {
                    let good = signed(&claims(n));
                    let parts: Vec<&str> = good.split('.').collect();
                    let mut c = claims(n);
                    c["sub"] = json!("u-admin");
                    format!("{}.{}.{}", parts[0], segment(&c), parts[2])
                }),
            ),
        ];
        let callback = |state: &str| {
            format!(
                "/auth/sso/callback?code=c0de&state={state}&iss={}",
                fake.issuer
            )
        };
        for (what, forge) in &cases {
            let b = world.browser();
            let provider = refresh_target(&start(&b, None, "grace@corp.example").await);
            assert!(
                provider.starts_with(&format!("{}/authorize?", fake.issuer)),
                "{provider}"
            );
            let nonce = param(&provider, "nonce").unwrap();
            fake.answer_with(&forge(&nonce));
            let page = b.get(&callback(&param(&provider, "state").unwrap())).await;
            assert_eq!(page.status, 401, "{what}: {}", page.body);
            assert!(b.cookie("svc_session").is_none(), "{what}");
        }
        // The token endpoint refusing the code, or answering without an ID token.
        for answer in [
            (400, json!({"error": "invalid_grant"})),
            (200, json!({"access_token": "at", "token_type": "Bearer"})),
        ] {
            let b = world.browser();
            let provider = refresh_target(&start(&b, None, "grace@corp.example").await);
            *fake.next.lock().unwrap() = answer.clone();
            let page = b.get(&callback(&param(&provider, "state").unwrap())).await;
            assert_eq!(page.status, 401, "{answer:?}: {}", page.body);
        }
        // Nobody was created by any of that.
        let (_, users) = json(
            world
                .api(M::GET, "/api/v1/tenant-users?limit=100")
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert!(!users.to_string().contains("grace@corp.example"), "{users}");
        // The control: the same provider with a proper token signs the person in (JIT), and
        // the same callback a second time is refused.
        let b = world.browser();
        let provider = refresh_target(&start(&b, None, "grace@corp.example").await);
        fake.answer_with(&signed(&claims(&param(&provider, "nonce").unwrap())));
        let url = callback(&param(&provider, "state").unwrap());
        let page = b.get(&url).await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert_eq!(refresh_target(&page), "/auth/account");
        assert!(b.cookie("svc_session").is_some());
        assert_eq!(b.get(&url).await.status, 400);
        let (_, users) = json(
            world
                .api(M::GET, "/api/v1/tenant-users?limit=100")
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert!(users.to_string().contains("grace@corp.example"), "{users}");
        // Each start writes an attempt: past the sign-in limit per address, 429 and nothing.
        let limited = start(&world.browser(), None, "grace@corp.example").await;
        assert_eq!(limited.status, 429, "{}", limited.body);
        assert!(limited.headers.get("retry-after").is_some());
        world.app.shutdown().await;
    }
}
