//! Social sign-in in Chromium against a real third-party OpenID provider, on both backends:
//! node `oidc-provider` (panva's certified OpenID Provider, run by `interop/sso/provider.mjs`,
//! unchanged) configured in svc as a generic `oidc` social provider. `interop/social/browser.mjs`
//! drives the browser through svc's sign-in page ("Continue with …"), the provider's own login
//! (and consent) pages, svc's callback and on to the application, and tries the provider's
//! answer again (same browser, another browser); this test then redeems the application's code
//! and checks who signed in and that they were created just in time.
//!
//! Two providers, each its own oidc-provider with its own account (so the second sign-in is a
//! second person, not a link to the first): `acme` answers in the query (a top-level GET that
//! carries svc's `SameSite=Lax` attempt cookie), `globex` by `response_mode=form_post` (a
//! cross-site POST that does not: svc relays it from its own origin through a page whose
//! Continue button the script presses).
//!
//! Hosts: Chromium reaches svc as `http://localhost:<port>` (single-tenant, the issuer follows
//! the Host) and the providers as `http://127.0.0.1:<port>` — another site, so the `form_post`
//! answer really is cross-site. The callback registered at each provider is therefore
//! `http://localhost:<port>/auth/social/callback`. Prerequisites come from
//! `bash scripts/interop-setup.sh`; without them this test fails and says so.

use crate::common::single_tenant;
use crate::enterprise_sso::json;
use crate::hosted::support::{CHALLENGE, VERIFIER};
use crate::interop::{Prerequisite, chromium_path, repo_root, require_prerequisites, run_script};
use crate::oidc_provider::{OidcProvider, OpAccount};
use reqwest::Method as M;
use serde_json::{Value, json};
use std::path::Path;
use svc_testkit::{BACKENDS, TestApp};

/// The application's redirect URI: never served (the browser script intercepts it).
const REDIRECT_URI: &str = "http://127.0.0.1:65502/callback";
/// svc's client at each oidc-provider.
const OP_CLIENT_ID: &str = "svc-social-interop";
const OP_CLIENT_SECRET: &str = "oidc-provider-social-secret-7d41e0";
const SCOPE: &str = "openid email profile";

/// What every checked run reports passed.
const CHECKS: &[&str] = &[
    "social_button_shown",
    "social_cookie_httponly_lax",
    "provider_sign_in",
    "social_cookie_cleared",
    "session_cookie_set",
    "application_got_code",
    "replay_refused",
    "other_browser_refused",
    "no_csp_violation",
];

/// One social provider of the tenant and the oidc-provider account signing in through it.
struct Upstream {
    slug: &'static str,
    display_name: &'static str,
    response_mode: &'static str,
    op: OpAccount,
}

const ACME: Upstream = Upstream {
    slug: "acme",
    display_name: "Acme ID",
    response_mode: "query",
    op: OpAccount {
        account: "ada-lovelace",
        email: "ada@acme-id.example",
        name: "Ada Lovelace",
    },
};

const GLOBEX: Upstream = Upstream {
    slug: "globex",
    display_name: "Globex Account",
    response_mode: "form_post",
    op: OpAccount {
        account: "grace-hopper",
        email: "grace@globex-id.example",
        name: "Grace Hopper",
    },
};

/// The deployment under test, its management token and its application.
struct Svc {
    app: TestApp,
    token: String,
    client_id: String,
    client_secret: String,
}

impl Svc {
    async fn start(backend: svc_testkit::Backend) -> Self {
        let (app, _tenant, token) = single_tenant(
            backend,
            &[
                ("SVC_AUTH__ARGON2_MEMORY_KIB", "8192"),
                ("SVC_AUTH__ARGON2_ITERATIONS", "1"),
                ("SVC_SOCIAL__ENABLED", "true"),
                ("SVC_GENERIC_OAUTH__ENABLED", "true"),
            ],
        )
        .await;
        let (status, created) = json(
            app.request(M::POST, "/api/v1/applications")
                .bearer_auth(&token)
                .json(&json!({
                    "name": "Social interop",
                    "redirect_uris": [REDIRECT_URI],
                    "grant_types": ["authorization_code"],
                    "token_endpoint_auth_method": "client_secret_basic",
                    "allowed_scopes": ["openid", "profile", "email"],
                    "first_party": true,
                }))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        let text = |k: &str| created[k].as_str().unwrap().to_owned();
        Self {
            client_id: text("client_id"),
            client_secret: text("client_secret"),
            app,
            token,
        }
    }

    fn api(&self, method: M, path: &str) -> reqwest::RequestBuilder {
        self.app.request(method, path).bearer_auth(&self.token)
    }

    /// `http://localhost:<port>`: how the browser reaches this deployment.
    fn localhost(&self) -> String {
        let local = self.app.url.replacen("://127.0.0.1:", "://localhost:", 1);
        assert_ne!(local, self.app.url, "not on 127.0.0.1: {}", self.app.url);
        local
    }

    /// The `Host` header of [`Svc::localhost`].
    fn localhost_host(&self) -> String {
        self.localhost().trim_start_matches("http://").to_owned()
    }

    /// Configures `who` as a generic `oidc` social provider at `issuer`.
    async fn configure(&self, who: &Upstream, issuer: &str) {
        let (status, view) = json(
            self.api(M::PUT, &format!("/api/v1/social-providers/{}", who.slug))
                .json(&json!({
                    "preset": "oidc",
                    "issuer": issuer,
                    "display_name": who.display_name,
                    "client_id": OP_CLIENT_ID,
                    "client_secret": OP_CLIENT_SECRET,
                    "response_mode": who.response_mode,
                }))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 201, "{view}");
        // The redirect URI follows the origin of the request (the management token is bound
        // to the 127.0.0.1 issuer); the browser's sign-ins on localhost use the localhost one,
        // which is what the providers register.
        assert_eq!(
            view["redirect_uri"],
            format!("{}/auth/social/callback", self.app.url),
            "{view}"
        );
        assert!(!view.to_string().contains(OP_CLIENT_SECRET), "{view}");
    }

    /// The application's authorization request on the localhost origin.
    fn authorize_url(&self, state: &str) -> String {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.client_id)
            .append_pair("redirect_uri", REDIRECT_URI)
            .append_pair("scope", SCOPE)
            .append_pair("state", state)
            .append_pair("nonce", &format!("nonce-{state}"))
            .append_pair("code_challenge", CHALLENGE)
            .append_pair("code_challenge_method", "S256");
        format!("{}/oauth/authorize?{}", self.localhost(), query.finish())
    }

    /// Runs `browser.mjs` for `who` through `issuer`, redeems the code and checks the ID token
    /// and UserInfo; the person's UserInfo.
    async fn sign_in(&self, what: &str, who: &Upstream, issuer: &str) -> Value {
        let state = format!("st-{}", who.slug);
        let svc_url = self.localhost();
        let env: Vec<(String, String)> = [
            ("SVC_URL", svc_url.as_str()),
            ("AUTHORIZE_URL", self.authorize_url(&state).as_str()),
            ("REDIRECT_URI", REDIRECT_URI),
            ("PROVIDER_SLUG", who.slug),
            ("PROVIDER_NAME", who.display_name),
            ("RESPONSE_MODE", who.response_mode),
            ("UPSTREAM_ISSUER", issuer),
            ("UPSTREAM_LOGIN", who.op.account),
            ("UPSTREAM_PASSWORD", "any password: the dev login takes any"),
            ("CHROMIUM_PATH", &chromium_path().display().to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let run = run_script(
            Path::new("node"),
            &repo_root().join("interop/social/browser.mjs"),
            &env,
        )
        .await;
        let summary = run.summary(what);
        crate::interop::assert_checks(&summary, CHECKS);
        assert_eq!(summary["svc"], svc_url.as_str(), "{summary}");
        assert_eq!(summary["provider"], who.slug, "{summary}");
        assert_eq!(summary["callback"]["iss"], issuer, "{summary}");
        assert_eq!(
            summary["callback"]["method"],
            if who.response_mode == "form_post" {
                "POST"
            } else {
                "GET"
            },
            "{summary}"
        );
        assert_eq!(
            summary["provider_request"]["redirect_uri"],
            format!("{svc_url}/auth/social/callback"),
            "{summary}"
        );
        assert_eq!(summary["provider_request"]["nonce"], true, "{summary}");
        assert_eq!(summary["application"]["state"], state.as_str(), "{summary}");
        assert_eq!(summary["application"]["iss"], svc_url.as_str(), "{summary}");
        assert_eq!(summary["replay"]["status"], 400, "{summary}");
        assert_eq!(summary["other_browser"]["status"], 400, "{summary}");
        let pages: Vec<&str> = summary["pages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(pages.contains(&"provider-login"), "{summary}");
        assert_eq!(
            pages.contains(&"relay"),
            who.response_mode == "form_post",
            "{summary}"
        );

        // The code, redeemed as the application would (on the origin it was issued for).
        let code = summary["application"]["code"].as_str().unwrap();
        let host = self.localhost_host();
        let (status, tokens) = json(
            self.app
                .request(M::POST, "/oauth/token")
                .header("host", &host)
                .basic_auth(&self.client_id, Some(&self.client_secret))
                .form(&[
                    ("grant_type", "authorization_code"),
                    ("code", code),
                    ("redirect_uri", REDIRECT_URI),
                    ("code_verifier", VERIFIER),
                ])
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{what}: {tokens}");
        let claims = crate::enterprise_sso::decode(tokens["id_token"].as_str().unwrap());
        assert_eq!(claims["iss"], svc_url.as_str(), "{claims}");
        assert_eq!(claims["aud"], self.client_id.as_str(), "{claims}");
        assert_eq!(claims["nonce"], format!("nonce-{state}"), "{claims}");
        assert_eq!(claims["amr"], json!(["fed"]), "{what}: {claims}");
        let (status, info) = json(
            self.app
                .request(M::GET, "/userinfo")
                .header("host", &host)
                .bearer_auth(tokens["access_token"].as_str().unwrap())
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{info}");
        assert_eq!(info["email"], who.op.email, "{info}");
        assert_eq!(info["email_verified"], true, "{info}");
        assert_eq!(info["sub"], claims["sub"], "{info}");
        eprintln!("{what}: signed in as {info} with amr {}", claims["amr"]);
        info
    }

    /// The tenant's users.
    async fn users(&self) -> Vec<Value> {
        let (status, users) = json(
            self.api(M::GET, "/api/v1/tenant-users?limit=100")
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{users}");
        users["items"]
            .as_array()
            .unwrap_or_else(|| panic!("tenant users: {users}"))
            .clone()
    }

    /// The person `sub` was created just in time: the only tenant user with `email`, verified.
    async fn assert_created(&self, sub: &str, email: &str) {
        let users = self.users().await;
        let with: Vec<&Value> = users.iter().filter(|u| u["email"] == email).collect();
        assert_eq!(with.len(), 1, "{email}: {users:?}");
        assert_eq!(with[0]["id"], sub, "{:?}", with[0]);
        assert_eq!(with[0]["email_verified"], true, "{:?}", with[0]);
    }
}

/// Signs `who` in through `op`, printing the provider's log when it fails.
async fn signed_in(svc: &Svc, what: &str, who: &Upstream, op: &OidcProvider) -> Value {
    let run = std::panic::AssertUnwindSafe(svc.sign_in(what, who, &op.issuer));
    match futures_util::FutureExt::catch_unwind(run).await {
        Ok(info) => info,
        Err(panic) => {
            eprintln!("--- oidc-provider log ---\n{}", op.log());
            std::panic::resume_unwind(panic);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interop_social_chromium_against_oidc_provider() {
    require_prerequisites(&[
        Prerequisite::Chromium,
        Prerequisite::NodeModules,
        Prerequisite::PlaywrightCore,
    ]);
    let oidc_provider = repo_root().join("interop/node_modules/oidc-provider/package.json");
    assert!(
        oidc_provider.exists(),
        "{} is missing: run `bash scripts/interop-setup.sh`",
        oidc_provider.display()
    );
    for backend in BACKENDS {
        let started = std::time::Instant::now();
        let svc = Svc::start(backend).await;
        let callback = format!("{}/auth/social/callback", svc.localhost());
        let acme = OidcProvider::start(&callback, (OP_CLIENT_ID, OP_CLIENT_SECRET), &ACME.op).await;
        let globex =
            OidcProvider::start(&callback, (OP_CLIENT_ID, OP_CLIENT_SECRET), &GLOBEX.op).await;
        svc.configure(&ACME, &acme.issuer).await;
        svc.configure(&GLOBEX, &globex.issuer).await;
        let before = svc.users().await.len();

        // (1) The query answer: a fresh address, created just in time.
        let what = format!("social sign-in through oidc-provider (query) on {backend:?}");
        let ada = signed_in(&svc, &what, &ACME, &acme).await;
        svc.assert_created(ada["sub"].as_str().unwrap(), ACME.op.email)
            .await;

        // (2) The form_post answer, relayed: a second person the same way.
        let what = format!("social sign-in through oidc-provider (form_post) on {backend:?}");
        let grace = signed_in(&svc, &what, &GLOBEX, &globex).await;
        svc.assert_created(grace["sub"].as_str().unwrap(), GLOBEX.op.email)
            .await;
        assert_ne!(grace["sub"], ada["sub"]);
        assert_eq!(svc.users().await.len(), before + 2);

        acme.stop().await;
        globex.stop().await;
        svc.app.shutdown().await;
        eprintln!("interop_social on {backend:?}: {:?}", started.elapsed());
    }
}
