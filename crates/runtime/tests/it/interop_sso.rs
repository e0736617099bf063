//! Enterprise single sign-on in Chromium against two real upstream providers, on both
//! backends: node `oidc-provider` (panva's certified OpenID Provider, `interop/sso/provider.mjs`)
//! and a second svc deployment. `interop/sso/browser.mjs` drives the browser through svc's
//! sign-in page ("Sign in with SSO"), the provider's own login (and consent) pages, svc's
//! callback and on to the application, and tries the callback again (same browser, another
//! browser); this test then redeems the application's code and checks who signed in.
//!
//! Hosts: Chromium reaches the downstream svc as `http://localhost:<port>` (single-tenant, the
//! issuer follows the Host) and the upstreams as `http://127.0.0.1:<port>`. Cookies ignore
//! ports, so two svc deployments on the same host would share `svc_session` in a real browser;
//! on different hosts they never do. The downstream's callback registered at each upstream is
//! therefore `http://localhost:<port>/auth/sso/callback`.
//!
//! The downstream's organizations verify their domains through the local DNS server
//! (`crate::dns`): `corp` owns `corp.example` and is connected to oidc-provider, `globex` owns
//! `globex.example` and is connected to the upstream svc; the people are provisioned just in
//! time on their first sign-in. Prerequisites come from `bash scripts/interop-setup.sh`;
//! without them this test fails and says so.

use crate::common::single_tenant;
use crate::dns::LocalDns;
use crate::hosted::support::{CHALLENGE, VERIFIER};
use crate::interop::{Prerequisite, chromium_path, repo_root, require_prerequisites, run_script};
use crate::oidc_provider::{OidcProvider, OpAccount};
use reqwest::Method as M;
use serde_json::{Value, json};
use std::path::Path;
use svc_testkit::{BACKENDS, TestApp};

/// The application's redirect URI: never served (the browser script intercepts it).
const REDIRECT_URI: &str = "http://127.0.0.1:65501/callback";
/// The upstream svc person's password.
const PASSWORD: &str = "Analytical-Engine-1843!";
/// oidc-provider's account and client.
const OP_ACCOUNT: &str = "ada-lovelace";
const OP_EMAIL: &str = "ada@corp.example";
const OP_CLIENT_ID: &str = "svc-interop";
const OP_CLIENT_SECRET: &str = "oidc-provider-interop-secret-2f7c91";
/// The upstream svc's person.
const SVC_EMAIL: &str = "grace@globex.example";
const SCOPE: &str = "openid email profile";

/// What every checked run reports passed.
const CHECKS: &[&str] = &[
    "sso_form_shown",
    "sso_cookie_httponly_lax",
    "provider_sign_in",
    "sso_cookie_cleared",
    "session_cookie_set",
    "application_got_code",
    "replay_refused",
    "other_browser_refused",
    "no_csp_violation",
];

/// The answer's status and JSON.
async fn json(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A single-tenant deployment with `env` and a management token.
struct Deployment {
    app: TestApp,
    token: String,
}

impl Deployment {
    async fn start(backend: svc_testkit::Backend, env: &[(&str, &str)]) -> Self {
        let mut all = vec![
            ("SVC_AUTH__ARGON2_MEMORY_KIB", "8192"),
            ("SVC_AUTH__ARGON2_ITERATIONS", "1"),
        ];
        all.extend_from_slice(env);
        let (app, _tenant, token) = single_tenant(backend, &all).await;
        Self { app, token }
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

    /// The `Host` header of [`Deployment::localhost`].
    fn localhost_host(&self) -> String {
        self.localhost().trim_start_matches("http://").to_owned()
    }

    /// A first-party code-flow application redirecting to `redirect_uri`: (id, secret).
    async fn application(&self, redirect_uri: &str) -> (String, String) {
        let (status, created) = json(
            self.api(M::POST, "/api/v1/applications")
                .json(&json!({
                    "name": "SSO interop",
                    "redirect_uris": [redirect_uri],
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
        (text("client_id"), text("client_secret"))
    }

    /// An organization `slug` verifying `domain` through `dns`; its id.
    async fn verified_org(&self, dns: &LocalDns, slug: &str, domain: &str) -> String {
        let (status, org) = json(
            self.api(M::POST, "/api/v1/organizations")
                .json(&json!({"slug": slug, "name": slug}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 201, "{org}");
        let org = org["id"].as_str().unwrap().to_owned();
        let (status, claim) = json(
            self.api(M::POST, &format!("/api/v1/organizations/{org}/domains"))
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
        let (status, verified) = json(self.api(M::POST, &path).send().await.unwrap()).await;
        assert_eq!(status, 200, "{verified}");
        org
    }

    /// Connects `org` to the provider `issuer` with the client `(id, secret)`.
    async fn connect(&self, org: &str, issuer: &str, (id, secret): (&str, &str)) {
        let (status, view) = json(
            self.api(M::PUT, &format!("/api/v1/organizations/{org}/sso"))
                .json(&json!({"issuer": issuer, "client_id": id, "client_secret": secret}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 201, "{view}");
        assert_eq!(view["issuer"], issuer, "{view}");
        // The redirect URI follows the origin of the request (the management token is bound
        // to the 127.0.0.1 issuer); the browser's sign-ins on localhost use the localhost one,
        // which is what the upstreams register.
        assert_eq!(
            view["redirect_uri"],
            format!("{}/auth/sso/callback", self.app.url),
            "{view}"
        );
        assert!(!view.to_string().contains(secret), "{view}");
    }
}

/// The downstream deployment under test and its application.
struct Downstream {
    svc: Deployment,
    client_id: String,
    client_secret: String,
}

impl Downstream {
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
        format!(
            "{}/oauth/authorize?{}",
            self.svc.localhost(),
            query.finish()
        )
    }

    /// Runs `browser.mjs` for `email` through `upstream`, redeems the code and checks the
    /// session; the person's UserInfo.
    async fn sign_in(&self, what: &str, email: &str, upstream: (&str, &str, &str)) -> Value {
        let (issuer, login, password) = upstream;
        let state = format!("st-{}", what.replace(' ', "-"));
        let svc_url = self.svc.localhost();
        let env: Vec<(String, String)> = [
            ("SVC_URL", svc_url.as_str()),
            ("AUTHORIZE_URL", self.authorize_url(&state).as_str()),
            ("REDIRECT_URI", REDIRECT_URI),
            ("SSO_EMAIL", email),
            ("UPSTREAM_ISSUER", issuer),
            ("UPSTREAM_LOGIN", login),
            ("UPSTREAM_PASSWORD", password),
            ("CHROMIUM_PATH", &chromium_path().display().to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let run = run_script(
            Path::new("node"),
            &repo_root().join("interop/sso/browser.mjs"),
            &env,
        )
        .await;
        let summary = run.summary(what);
        crate::interop::assert_checks(&summary, CHECKS);
        assert_eq!(summary["svc"], svc_url.as_str(), "{summary}");
        assert_eq!(summary["callback"]["iss"], issuer, "{summary}");
        assert_eq!(summary["application"]["state"], state.as_str(), "{summary}");
        assert_eq!(summary["application"]["iss"], svc_url.as_str(), "{summary}");
        assert_eq!(summary["replay"]["status"], 400, "{summary}");
        let pages: Vec<&str> = summary["pages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(pages.contains(&"provider-login"), "{summary}");

        // The code, redeemed as the application would (on the origin it was issued for).
        let code = summary["application"]["code"].as_str().unwrap();
        let host = self.svc.localhost_host();
        let (status, tokens) = json(
            self.svc
                .app
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
        assert!(
            claims["amr"]
                .as_array()
                .is_some_and(|a| a.iter().any(|v| v == "fed")),
            "{what}: amr has fed: {claims}"
        );
        assert_eq!(claims["acr"], "urn:svc:aal1", "{claims}");
        let (status, info) = json(
            self.svc
                .app
                .request(M::GET, "/userinfo")
                .header("host", &host)
                .bearer_auth(tokens["access_token"].as_str().unwrap())
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{info}");
        assert_eq!(info["email"], email, "{info}");
        assert_eq!(info["email_verified"], true, "{info}");
        assert_eq!(info["sub"], claims["sub"], "{info}");
        eprintln!("{what}: signed in as {info} with amr {}", claims["amr"]);
        info
    }

    /// The person `sub` is a tenant user with `email` and a member of `org`.
    async fn assert_provisioned(&self, sub: &str, email: &str, org: &str) {
        let (status, users) = json(
            self.svc
                .api(M::GET, "/api/v1/tenant-users?limit=100")
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{users}");
        let user = users["items"]
            .as_array()
            .unwrap_or_else(|| panic!("tenant users: {users}"))
            .iter()
            .find(|u| u["id"] == sub)
            .unwrap_or_else(|| panic!("{sub} not among the tenant users: {users}"));
        assert_eq!(user["email"], email, "{user}");
        assert_eq!(user["email_verified"], true, "{user}");
        let (status, members) = json(
            self.svc
                .api(M::GET, &format!("/api/v1/organizations/{org}/members"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{members}");
        assert!(members.to_string().contains(sub), "{members}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interop_sso_chromium_against_oidc_provider_and_svc() {
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
        let dns = LocalDns::start().await;
        let servers: &'static str = Box::leak(dns.servers_setting().into_boxed_str());
        let svc = Deployment::start(
            backend,
            &[
                ("SVC_ENTERPRISE_SSO__ENABLED", "true"),
                ("SVC_VERIFIED_DOMAINS__DNS_SERVERS", servers),
                ("SVC_VERIFIED_DOMAINS__TIMEOUT_MS", "1500"),
            ],
        )
        .await;
        let (client_id, client_secret) = svc.application(REDIRECT_URI).await;
        let callback = format!("{}/auth/sso/callback", svc.localhost());
        let down = Downstream {
            svc,
            client_id,
            client_secret,
        };
        let corp = down.svc.verified_org(&dns, "corp", "corp.example").await;
        let globex = down
            .svc
            .verified_org(&dns, "globex", "globex.example")
            .await;

        // (1) node oidc-provider.
        let op = OidcProvider::start(
            &callback,
            (OP_CLIENT_ID, OP_CLIENT_SECRET),
            &OpAccount {
                account: OP_ACCOUNT,
                email: OP_EMAIL,
                name: "Ada Lovelace",
            },
        )
        .await;
        down.svc
            .connect(&corp, &op.issuer, (OP_CLIENT_ID, OP_CLIENT_SECRET))
            .await;
        let what = format!("SSO through oidc-provider on {backend:?}");
        let run = std::panic::AssertUnwindSafe(down.sign_in(
            &what,
            OP_EMAIL,
            (
                &op.issuer,
                OP_ACCOUNT,
                "any password: the dev login takes any",
            ),
        ));
        let ada = match futures_util::FutureExt::catch_unwind(run).await {
            Ok(info) => info,
            Err(panic) => {
                eprintln!("--- oidc-provider log ---\n{}", op.log());
                std::panic::resume_unwind(panic);
            }
        };
        down.assert_provisioned(ada["sub"].as_str().unwrap(), OP_EMAIL, &corp)
            .await;
        op.stop().await;

        // (2) another svc deployment.
        let up = Deployment::start(backend, &[]).await;
        let (up_id, up_secret) = up.application(&callback).await;
        let (status, person) = json(
            up.api(M::POST, "/api/v1/tenant-users")
                .json(&json!({
                    "email": SVC_EMAIL, "password": PASSWORD, "name": "Grace Hopper",
                    "email_verified": true,
                }))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 201, "{person}");
        down.svc
            .connect(&globex, &up.app.url, (&up_id, &up_secret))
            .await;
        let what = format!("SSO through another svc on {backend:?}");
        let grace = down
            .sign_in(&what, SVC_EMAIL, (&up.app.url, SVC_EMAIL, PASSWORD))
            .await;
        down.assert_provisioned(grace["sub"].as_str().unwrap(), SVC_EMAIL, &globex)
            .await;
        assert_ne!(grace["sub"], ada["sub"]);
        // The upstream's subject is its own, not the downstream's.
        assert_ne!(grace["sub"], person["id"]);

        down.svc.app.shutdown().await;
        up.app.shutdown().await;
        eprintln!("interop_sso on {backend:?}: {:?}", started.elapsed());
    }
}
