//! The interop suite: real third-party clients drive the real service over loopback.
//!
//! - `interop/openid-client/rp.mjs`: openid-client v6 (a certified relying party) with jose as
//!   the independent JOSE check, the hosted pages driven in Chromium by playwright-core, and
//!   dynamic client registration (RFC 7591/7592) with a code flow as the registered client, and
//!   a client known by the URL of its client ID metadata document (served here on loopback);
//! - `interop/authlib/jar.py`: signed request objects (RFC 9101) built from Authlib's request,
//!   signed with joserfc, sent by value and pushed, a forged one refused.
//! - `interop/authlib/rar.py`: Rich Authorization Requests (RFC 9396), plain and pushed, with
//!   narrowing at the code exchange and a widening refresh refused.
//! - `interop/authlib/rp.py`: Authlib's `OAuth2Session` with `client_secret_basic` and
//!   `client_secret_post`, the hosted forms driven by `requests`, PyJWT as the JOSE check;
//! - `interop/authlib/agent.py` (run from `interop_agents.rs`): agent challenge-response with
//!   Authlib's `AssertionSession`;
//! - `interop/authlib/mfa.py`: the second factor (`[two_factor]`) with pyotp as the independent
//!   authenticator app: enrolment, step-up for `acr_values`, sign-in with a TOTP or backup code,
//!   replay and reuse refused, `acr`/`amr` in the ID token, access token and introspection;
//! - `interop/browser/pages.mjs`: the hosted pages themselves in Chromium (labels, focus,
//!   accessible errors, security headers, 375 px, JavaScript off, cookie attributes), the
//!   second-factor pages included;
//! - `interop/browser/passkeys.mjs`: passkeys (`[passkey]`) with Chromium's own WebAuthn client
//!   and the DevTools virtual authenticator: registration on the account page, passkey
//!   sign-ins (autofill and button) checked by openid-client (`acr` aal2, `amr` user +
//!   hwk|swk), the browser's failure without a credential, and the pages without JavaScript.
//!   The browser reaches the service as `http://localhost:<port>` (WebAuthn wants a domain RP
//!   ID), so that is its issuer.
//!
//! Each test starts the service single-tenant (issuer `http://127.0.0.1:<port>`), provisions
//! through the real HTTP APIs (operator token → management credentials → applications and a
//! user), runs one script and asserts its exit status and JSON summary. The prerequisites
//! (Chromium, `interop/node_modules`, `interop/authlib/.venv`) come from
//! `bash scripts/interop-setup.sh`; without them these tests fail and say so.

#[path = "../../../sdk/examples/resource_server.rs"]
mod resource_server;

use crate::common::{default_tenant, operator_token};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use svc_testkit::{Backend, TestApp};

/// Where the third-party clients are sent back to; never served (the scripts intercept it).
const REDIRECT_URI: &str = "http://127.0.0.1:65500/callback";
/// The API the relying parties' access tokens are for: the public client's tokens carry it as
/// `aud`, and the confidential client registered with it is the resource server that may
/// introspect them (RFC 7662 §4: a caller describes only its own audience's tokens).
const API_AUDIENCE: &str = "https://api.interop.example";
/// An API resource registered in the tenant, whose permissions the user's roles partly hold;
/// the svc-sdk sample resource server serves it.
const INVOICES_API: &str = "https://invoices.interop.example";
/// Where RP-initiated logout returns; never served either.
const POST_LOGOUT_REDIRECT_URI: &str = "http://127.0.0.1:65500/logged-out";
const USER_EMAIL: &str = "ada.lovelace@example.com";
const USER_PASSWORD: &str = "Analytical-Engine-1843!";
/// How long one script may take (Chromium start included).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(240);

/// One interop script at a time: the machine has two cores and each runs Chromium or Python.
pub(crate) static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

pub(crate) fn chromium_path() -> PathBuf {
    std::env::var_os("CHROMIUM_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"))
}

/// Fails (never skips) when something `scripts/interop-setup.sh` installs is missing.
pub(crate) fn require_prerequisites(needs: &[Prerequisite]) {
    let root = repo_root();
    let mut missing = Vec::new();
    for need in needs {
        let path = match need {
            Prerequisite::Chromium => chromium_path(),
            Prerequisite::NodeModules => {
                root.join("interop/node_modules/openid-client/package.json")
            }
            Prerequisite::PlaywrightCore => {
                root.join("interop/node_modules/playwright-core/package.json")
            }
            Prerequisite::McpSdk => {
                root.join("interop/node_modules/@modelcontextprotocol/sdk/package.json")
            }
            Prerequisite::Venv => root.join("interop/authlib/.venv/bin/python"),
        };
        if !path.exists() {
            missing.push(path.display().to_string());
        }
    }
    if which("node").is_none() && needs.contains(&Prerequisite::NodeModules) {
        missing.push("node (Node.js 20+) on PATH".to_owned());
    }
    assert!(
        missing.is_empty(),
        "the interop suite's prerequisites are missing: {}.\n\
         Run `bash scripts/interop-setup.sh` (installs Chromium, interop/node_modules and \
         interop/authlib/.venv), then run the tests again.",
        missing.join(", ")
    );
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prerequisite {
    Chromium,
    NodeModules,
    PlaywrightCore,
    /// The MCP TypeScript SDK (`@modelcontextprotocol/sdk`) in `interop/node_modules`.
    McpSdk,
    Venv,
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|candidate| candidate.is_file())
    })
}

/// A running single-tenant service with the clients and the user the scripts need.
struct Fixture {
    app: TestApp,
    issuer: String,
    public_client_id: String,
    basic: (String, String),
    post: (String, String),
    /// The id of `acme`, an organization the interop user belongs to (`globex` exists too,
    /// without them).
    organization: String,
    /// The id of `globex`.
    other_organization: String,
    /// The default tenant's id.
    tenant_id: String,
    _mail: tempfile::TempDir,
}

impl Fixture {
    async fn start(backend: Backend) -> Self {
        Self::start_with(backend, &[]).await
    }

    /// Like [`Fixture::start`], with `extra` settings in the service's environment (after the
    /// fixture's own, so they may override them).
    async fn start_with(backend: Backend, extra: &[(&str, &str)]) -> Self {
        let mail = tempfile::tempdir().unwrap();
        let sink = format!("file:{}", mail.path().join("mail.jsonl").display());
        let mut env = vec![
            ("SVC_TENANT__DEFAULT_TENANT_SLUG", "default"),
            ("SVC_AUTH__ARGON2_MEMORY_KIB", "8192"),
            ("SVC_AUTH__ARGON2_ITERATIONS", "1"),
            ("SVC_EMAIL__PROVIDER", "log"),
            ("SVC_EMAIL__LOG__SINK", sink.as_str()),
            // Devices and CIBA clients poll every second (openid-client honours `interval`).
            ("SVC_DEVICE_AUTHORIZATION__INTERVAL_SECS", "1"),
            ("SVC_CIBA__ENABLED", "true"),
            ("SVC_CIBA__INTERVAL_SECS", "1"),
        ];
        env.extend_from_slice(extra);
        let app = TestApp::spawn_with(backend, &env).await;
        let issuer = app.url.clone();
        let discovery = get_json(&app, "/.well-known/openid-configuration").await;
        assert_eq!(
            discovery["issuer"], issuer,
            "{backend:?}: single-tenant issuer is the loopback origin"
        );

        let (management, tenant_id) = management_token(&app).await;
        let public = create_application(
            &app,
            &management,
            json!({
                "name": "Interop public RP (openid-client)",
                "redirect_uris": [REDIRECT_URI],
                "post_logout_redirect_uris": [POST_LOGOUT_REDIRECT_URI],
                "grant_types": [
                    "authorization_code",
                    "refresh_token",
                    "urn:ietf:params:oauth:grant-type:device_code"
                ],
                "token_endpoint_auth_method": "none",
                "allowed_scopes": ["openid", "profile", "email", "offline_access"],
                "first_party": false,
                "api_audience": API_AUDIENCE,
            }),
        )
        .await;
        let mut confidential = Vec::new();
        for method in ["client_secret_basic", "client_secret_post"] {
            let created = create_application(
                &app,
                &management,
                json!({
                    "name": format!("Interop confidential RP ({method})"),
                    "redirect_uris": [REDIRECT_URI],
                    "post_logout_redirect_uris": [POST_LOGOUT_REDIRECT_URI],
                    "grant_types": [
                        "authorization_code",
                        "refresh_token",
                        "urn:openid:params:grant-type:ciba"
                    ],
                    "token_endpoint_auth_method": method,
                    "allowed_scopes": ["openid", "profile", "email", "offline_access"],
                    "first_party": false,
                    "api_audience": API_AUDIENCE,
                }),
            )
            .await;
            let secret = created["client_secret"]
                .as_str()
                .unwrap_or_else(|| panic!("{method} client without a secret: {created}"))
                .to_owned();
            confidential.push((str_field(&created, "client_id"), secret));
        }
        assert_eq!(public["api_audience"], API_AUDIENCE, "{public}");
        let user = create_user(&app, &management).await;
        register_invoices_api(&app, &management).await;
        // The person belongs to `acme` (as a member and an accountant), not to `globex`: the
        // openid-client run signs in to each.
        let organization = create_organization(&app, &management, "acme", Some(&user)).await;
        let other_organization = create_organization(&app, &management, "globex", None).await;
        let post = confidential.pop().unwrap();
        let basic = confidential.pop().unwrap();
        Self {
            issuer,
            public_client_id: str_field(&public, "client_id"),
            basic,
            post,
            organization,
            other_organization,
            tenant_id,
            app,
            _mail: mail,
        }
    }

    fn common_env(&self) -> Vec<(String, String)> {
        vec![
            ("ISSUER".into(), self.issuer.clone()),
            ("REDIRECT_URI".into(), REDIRECT_URI.into()),
            (
                "POST_LOGOUT_REDIRECT_URI".into(),
                POST_LOGOUT_REDIRECT_URI.into(),
            ),
            ("USER_EMAIL".into(), USER_EMAIL.into()),
            ("USER_PASSWORD".into(), USER_PASSWORD.into()),
            (
                "CHROMIUM_PATH".into(),
                chromium_path().display().to_string(),
            ),
        ]
    }
}

pub(crate) fn str_field(value: &Value, key: &str) -> String {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("no string {key} in {value}"))
        .to_owned()
}

async fn get_json(app: &TestApp, path: &str) -> Value {
    let response = app.get(path).await;
    let status = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(status, 200, "GET {path}: {text}");
    serde_json::from_str(&text).unwrap()
}

/// Operator token from the real CLI, fresh management credentials for the default tenant over
/// the control plane, and a client_credentials token with them.
/// A management token of the default tenant, with the tenant's id.
async fn management_token(app: &TestApp) -> (String, String) {
    let tenant = default_tenant(app, &operator_token(app).await).await;
    let token = app
        .request(reqwest::Method::POST, "/oauth/token")
        .basic_auth(&tenant.client_id, Some(&tenant.client_secret))
        .form(&[
            ("grant_type", "client_credentials"),
            (
                "scope",
                "applications:read applications:write users:read users:write \
                 organizations:read organizations:write policies:read policies:write",
            ),
        ])
        .send()
        .await
        .unwrap();
    let status = token.status();
    let token: Value = token.json().await.unwrap();
    assert_eq!(status, 200, "management token: {token}");
    (str_field(&token, "access_token"), tenant.id)
}

pub(crate) async fn create_application(app: &TestApp, token: &str, body: Value) -> Value {
    let response = app
        .request(reqwest::Method::POST, "/api/v1/applications")
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(status, 201, "POST /api/v1/applications {body}: {text}");
    serde_json::from_str(&text).unwrap()
}

/// Creates the interop user and returns their id.
async fn create_user(app: &TestApp, token: &str) -> String {
    let body = json!({
        "email": USER_EMAIL,
        "password": USER_PASSWORD,
        "name": "Ada Lovelace",
        "email_verified": true,
    });
    let response = app
        .request(reqwest::Method::POST, "/api/v1/tenant-users")
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(
        status, 201,
        "POST /api/v1/tenant-users (the interop user): {text}"
    );
    let user: Value = serde_json::from_str(&text).unwrap();
    str_field(&user, "id")
}

/// Creates the organization `slug` through the organizations API, with `member` (when given)
/// as a member; returns the organization's id.
async fn create_organization(
    app: &TestApp,
    token: &str,
    slug: &str,
    member: Option<&str>,
) -> String {
    let response = app
        .request(reqwest::Method::POST, "/api/v1/organizations")
        .bearer_auth(token)
        .json(&json!({"name": format!("Interop {slug}"), "slug": slug}))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(status, 201, "POST /api/v1/organizations {slug}: {text}");
    let org: Value = serde_json::from_str(&text).unwrap();
    let id = str_field(&org, "id");
    if let Some(user) = member {
        let response = app
            .request(
                reqwest::Method::POST,
                &format!("/api/v1/organizations/{id}/members"),
            )
            .bearer_auth(token)
            .json(&json!({"user_id": user, "roles": ["member", "accountant"]}))
            .send()
            .await
            .unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        assert_eq!(status, 201, "adding the interop user to {slug}: {text}");
    }
    id
}

/// Registers [`INVOICES_API`] with three permissions, gives the built-in organization role
/// `member` `invoices:read` and a custom organization role `accountant` `invoices:write`;
/// nobody holds `invoices:void`.
async fn register_invoices_api(app: &TestApp, token: &str) {
    let calls = [
        (
            reqwest::Method::POST,
            "/api/v1/api-resources",
            json!({
                "identifier": INVOICES_API,
                "name": "Invoices",
                "permissions": [
                    {"name": "invoices:read", "description": "Read invoices"},
                    {"name": "invoices:write", "description": "Issue invoices"},
                    {"name": "invoices:void", "description": "Void invoices"},
                ],
            }),
            201,
        ),
        (
            reqwest::Method::PATCH,
            "/api/v1/roles/member",
            json!({"permissions": [{"resource": INVOICES_API, "name": "invoices:read"}]}),
            200,
        ),
        (
            reqwest::Method::POST,
            "/api/v1/roles",
            json!({
                "key": "accountant",
                "kind": "organization",
                "permissions": [{"resource": INVOICES_API, "name": "invoices:write"}],
            }),
            201,
        ),
    ];
    for (method, path, body, expected) in calls {
        let response = app
            .request(method.clone(), path)
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        assert_eq!(status, expected, "{method} {path}: {text}");
    }
}

/// What a script printed and how it ended.
pub(crate) struct ScriptRun {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) elapsed: Duration,
}

impl ScriptRun {
    /// The last JSON line on stdout (the summary), asserting success.
    pub(crate) fn summary(&self, what: &str) -> Value {
        let summary = self
            .stdout
            .lines()
            .rev()
            .find_map(|line| serde_json::from_str::<Value>(line.trim()).ok());
        assert!(
            self.code == Some(0) && summary.as_ref().is_some_and(|s| s["ok"] == true),
            "{what} failed (exit {:?} after {:?}).\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code,
            self.elapsed,
            self.stdout,
            self.stderr
        );
        let summary = summary.unwrap();
        eprintln!("{what}: {summary} ({:?})", self.elapsed);
        summary
    }
}

pub(crate) async fn run_script(
    program: &Path,
    script: &Path,
    env: &[(String, String)],
) -> ScriptRun {
    let _turn = ONE_AT_A_TIME.lock().await;
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    run_command(
        program,
        &[script.as_os_str()],
        &repo_root().join("interop"),
        &env,
        SCRIPT_TIMEOUT,
    )
    .await
}

/// Runs `program args…` in `cwd` (colours off) and collects what it printed, killing it after
/// `timeout`. The caller holds [`ONE_AT_A_TIME`] when the program is heavy.
pub(crate) async fn run_command(
    program: &Path,
    args: &[impl AsRef<std::ffi::OsStr>],
    cwd: &Path,
    env: &[(&str, &str)],
    timeout: Duration,
) -> ScriptRun {
    let started = Instant::now();
    let child = tokio::process::Command::new(program)
        .args(args)
        .current_dir(cwd)
        .envs(env.iter().copied())
        .env("NO_COLOR", "1")
        .env("COLUMNS", "120")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("could not start {}: {e}", program.display()));
    match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(output) => {
            let output = output.unwrap();
            ScriptRun {
                code: output.status.code(),
                stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
                elapsed: started.elapsed(),
            }
        }
        Err(_) => {
            let args: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy()).collect();
            panic!(
                "{} {} did not finish within {timeout:?} (killed)",
                program.display(),
                args.join(" ")
            )
        }
    }
}

pub(crate) fn assert_checks(summary: &Value, names: &[&str]) {
    for name in names {
        assert_eq!(
            summary["checks"][name], true,
            "check {name} not reported passed in {summary}"
        );
    }
}

/// Publishes the client ID metadata document of a public client on loopback (which a
/// development deployment may fetch); returns its URL, the client's `client_id`.
async fn serve_client_document() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/interop-client.json",
        listener.local_addr().unwrap()
    );
    let document = json!({
        "client_id": url,
        "client_name": "Interop document client (openid-client)",
        "redirect_uris": [REDIRECT_URI],
        "grant_types": ["authorization_code", "refresh_token"],
        "scope": "openid profile offline_access",
    })
    .to_string();
    let router = axum::Router::new().route(
        "/interop-client.json",
        axum::routing::get(
            move || async move { ([("content-type", "application/json")], document) },
        ),
    );
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

async fn openid_client(backend: Backend) {
    require_prerequisites(&[
        Prerequisite::Chromium,
        Prerequisite::NodeModules,
        Prerequisite::PlaywrightCore,
    ]);
    // The run ends with dynamic client registration: the deployment serves it and the tenant
    // opens it before the script's discovery.
    // DPoP nonces are required, so openid-client's DPoP handle must follow use_dpop_nonce.
    let fixture = Fixture::start_with(
        backend,
        &[
            ("SVC_DYNAMIC_REGISTRATION__ENABLED", "true"),
            (
                "SVC_DYNAMIC_REGISTRATION__CLIENT_ID_METADATA_DOCUMENTS",
                "true",
            ),
            ("SVC_DPOP__REQUIRE_NONCE", "true"),
        ],
    )
    .await;
    let (management, _) = management_token(&fixture.app).await;
    let opened = fixture
        .app
        .request(reqwest::Method::PUT, "/api/v1/registration-policy")
        .bearer_auth(&management)
        .json(&json!({"policy": "open", "client_id_metadata_documents": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), 200, "{backend:?}: opening registration");
    // A first-party service behind the API the person's tokens are for: it exchanges them
    // (RFC 8693) to act for the person.
    let gateway = create_application(
        &fixture.app,
        &management,
        json!({
            "name": "Interop gateway (token exchange)",
            "redirect_uris": [],
            "grant_types": [svc_domain::TOKEN_EXCHANGE_GRANT],
            "token_endpoint_auth_method": "client_secret_basic",
            "allowed_scopes": [],
            "first_party": true,
            "api_audience": API_AUDIENCE,
        }),
    )
    .await;
    let gateway_id = str_field(&gateway, "client_id");
    // The person's own app: a first-party public client whose tokens are for the tenant's API
    // and may carry `ciba:approve`, with which it approves a CIBA request (ADR 0010).
    let approver = create_application(
        &fixture.app,
        &management,
        json!({
            "name": "Interop approver app (ciba:approve)",
            "redirect_uris": [REDIRECT_URI],
            "grant_types": ["authorization_code"],
            "token_endpoint_auth_method": "none",
            "allowed_scopes": ["openid", "ciba:approve"],
            "first_party": true,
            "api_audience": format!("{}/api/v1", fixture.issuer),
        }),
    )
    .await;
    let mut env = fixture.common_env();
    env.push((
        "APPROVER_CLIENT_ID".into(),
        str_field(&approver, "client_id"),
    ));
    env.push(("GATEWAY_CLIENT_ID".into(), gateway_id.clone()));
    env.push((
        "GATEWAY_CLIENT_SECRET".into(),
        str_field(&gateway, "client_secret"),
    ));
    env.push(("CLIENT_ID".into(), fixture.public_client_id.clone()));
    env.push(("CONFIDENTIAL_CLIENT_ID".into(), fixture.basic.0.clone()));
    env.push(("CONFIDENTIAL_CLIENT_SECRET".into(), fixture.basic.1.clone()));
    env.push(("API_AUDIENCE".into(), API_AUDIENCE.into()));
    env.push(("ORGANIZATION_ID".into(), fixture.organization.clone()));
    env.push((
        "OTHER_ORGANIZATION_ID".into(),
        fixture.other_organization.clone(),
    ));
    env.push(("INVOICES_API".into(), INVOICES_API.into()));
    env.push(("DOCUMENT_CLIENT_ID".into(), serve_client_document().await));
    let resource_server = serve_invoices_api(&fixture).await;
    env.push(("RESOURCE_SERVER_URL".into(), resource_server));
    let run = run_script(
        Path::new("node"),
        &repo_root().join("interop/openid-client/rp.mjs"),
        &env,
    )
    .await;
    let summary = run.summary(&format!("openid-client on {backend:?}"));
    assert_eq!(summary["issuer"], fixture.issuer);
    assert_eq!(summary["id_token_alg"], "RS256");
    assert_eq!(summary["access_token_aud"], API_AUDIENCE);
    assert_checks(
        &summary,
        &[
            "discovery",
            "authorize_pkce_s256",
            "authorization_response_iss",
            "code_exchange",
            "jose_id_token",
            "jose_access_token",
            "userinfo",
            "refresh_rotates",
            "refresh_reuse_refused",
            "refresh_family_revoked_on_reuse",
            "sso_session_reused",
            "pushed_authorization_request",
            "dpop_code_exchange",
            "dpop_userinfo",
            "dpop_refresh_bound",
            "device_authorization_grant",
            "ciba_poll",
            "ciba_token_approval",
            "organization_claims",
            "organization_not_a_member",
            "resource_permissions_from_roles",
            "resource_server_enforces_permissions",
            "introspection_active",
            "token_exchange_act",
            "token_exchange_never_widens",
            "revoked_access_token_inactive",
            "revoked_refresh_token_refused",
            "end_session",
            "prompt_none_login_required_after_logout",
            "dynamic_client_registration",
            "registered_client_code_flow",
            "registration_read_and_deleted",
            "client_id_metadata_document",
        ],
    );
    // The token openid-client got by exchange, checked by svc-sdk at the API it is for: rule 9
    // refuses it where delegation is not allowed, and accepts it naming the gateway as actor.
    let exchanged = summary["exchanged_access_token"].as_str().unwrap();
    let jwks: svc_sdk::jsonwebtoken::jwk::JwkSet =
        serde_json::from_value(get_json(&fixture.app, "/.well-known/jwks.json").await).unwrap();
    let now = svc_domain::Clock::now(&svc_domain::SystemClock).unix_timestamp();
    let route = svc_sdk::Requirements::new(&fixture.issuer, API_AUDIENCE, &fixture.tenant_id);
    assert_eq!(
        svc_sdk::validate_with_jwks(exchanged, &jwks, &route, now).unwrap_err(),
        svc_sdk::ValidationError::DelegationNotAllowed
    );
    let delegated = route
        .with_delegation(true)
        .with_trusted_actors([gateway_id.clone()]);
    let claims = svc_sdk::validate_with_jwks(exchanged, &jwks, &delegated, now).unwrap();
    assert_eq!(
        claims.act.as_ref().map(|a| a.sub.as_str()),
        Some(gateway_id.as_str())
    );
    assert_eq!(claims.client_id, gateway_id);
    fixture.app.shutdown().await;
}

/// Serves svc-sdk's sample resource server (the crate's example, compiled in here) for
/// [`INVOICES_API`] on a loopback port; returns its base URL.
async fn serve_invoices_api(fixture: &Fixture) -> String {
    let config = resource_server::ApiConfig {
        issuer: fixture.issuer.clone(),
        tenant_id: fixture.tenant_id.clone(),
        audience: INVOICES_API.into(),
    };
    let router = resource_server::router(svc_sdk::Validator::new(&fixture.issuer), config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}")
}

async fn authlib(backend: Backend) {
    require_prerequisites(&[Prerequisite::Venv]);
    let fixture = Fixture::start(backend).await;
    let mut env = fixture.common_env();
    env.push(("CLIENT_ID".into(), fixture.basic.0.clone()));
    env.push(("CLIENT_SECRET".into(), fixture.basic.1.clone()));
    env.push(("POST_CLIENT_ID".into(), fixture.post.0.clone()));
    env.push(("POST_CLIENT_SECRET".into(), fixture.post.1.clone()));
    env.push(("API_AUDIENCE".into(), API_AUDIENCE.into()));
    let run = run_script(
        &repo_root().join("interop/authlib/.venv/bin/python"),
        &repo_root().join("interop/authlib/rp.py"),
        &env,
    )
    .await;
    let summary = run.summary(&format!("authlib on {backend:?}"));
    assert_eq!(summary["issuer"], fixture.issuer);
    assert_eq!(
        summary["auth_methods"],
        json!(["client_secret_basic", "client_secret_post"])
    );
    let flows = summary["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 2, "{summary}");
    for flow in flows {
        assert_eq!(flow["id_token_alg"], "RS256", "{flow}");
        // The access token, verified by PyJWT against the JWKS (RFC 9068).
        assert_eq!(flow["access_token_alg"], "ES256", "{flow}");
        assert_eq!(flow["access_token_typ"], "at+jwt", "{flow}");
        assert_eq!(flow["access_token_aud"], API_AUDIENCE, "{flow}");
        assert_eq!(flow["access_token_sub_matches_id_token"], true, "{flow}");
        // Observed by the script, not reported as constants.
        assert_eq!(flow["refresh_rotated"], true, "{flow}");
        assert_eq!(flow["refreshed_id_token_sub_matches"], true, "{flow}");
        assert_eq!(flow["userinfo_sub_matches"], true, "{flow}");
        assert!(
            flow["pages"]
                .as_array()
                .unwrap()
                .contains(&json!("sign-in")),
            "{flow}"
        );
    }
    fixture.app.shutdown().await;
}

/// `interop/authlib/jar.py`: signed request objects (RFC 9101) built from Authlib's request,
/// signed with joserfc under a key this test generated and registered, by value and pushed.
async fn authlib_jar(backend: Backend) {
    require_prerequisites(&[Prerequisite::Venv]);
    let fixture = Fixture::start(backend).await;
    let (management, _) = management_token(&fixture.app).await;
    let key = svc_crypto::SigningKey::generate(svc_domain::SigningAlg::Es256).unwrap();
    let created = create_application(
        &fixture.app,
        &management,
        json!({
            "name": "Interop JAR RP (authlib)",
            "redirect_uris": [REDIRECT_URI],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "client_secret_basic",
            "allowed_scopes": ["openid", "profile", "email"],
            "first_party": false,
            "jwks": {"keys": [key.public_jwk()]},
        }),
    )
    .await;
    let pem = crate::interop_agents::pem(&key);
    let mut env = fixture.common_env();
    env.push(("JAR_CLIENT_ID".into(), str_field(&created, "client_id")));
    env.push((
        "JAR_CLIENT_SECRET".into(),
        str_field(&created, "client_secret"),
    ));
    env.push(("JAR_PRIVATE_KEY_PEM".into(), pem));
    env.push(("JAR_KID".into(), key.kid().to_owned()));
    let run = run_script(
        &repo_root().join("interop/authlib/.venv/bin/python"),
        &repo_root().join("interop/authlib/jar.py"),
        &env,
    )
    .await;
    let summary = run.summary(&format!("authlib JAR on {backend:?}"));
    assert_eq!(summary["issuer"], fixture.issuer);
    for flow in [&summary["by_value"], &summary["pushed"]] {
        assert_eq!(flow["id_token_alg"], "RS256", "{summary}");
        assert_eq!(flow["nonce_matches"], true, "{summary}");
        let mut scope: Vec<&str> = flow["scope"].as_str().unwrap().split(' ').collect();
        scope.sort_unstable();
        assert_eq!(scope, ["email", "openid", "profile"], "{summary}");
        assert_eq!(flow["pages"], json!(["sign-in", "consent"]), "{summary}");
    }
    assert_eq!(summary["forged_status"], 400, "{summary}");
    assert_eq!(
        summary["forged_is_invalid_request_object"], true,
        "{summary}"
    );
    assert_eq!(summary["forged_redirected"], false, "{summary}");
    fixture.app.shutdown().await;
}

/// `interop/authlib/rar.py`: Rich Authorization Requests (RFC 9396) driven by Authlib, plain and
/// pushed, narrowed at the code exchange, carried by refresh, refused when widened.
async fn authlib_rar(backend: Backend) {
    require_prerequisites(&[Prerequisite::Venv]);
    let fixture =
        Fixture::start_with(backend, &[("SVC_OIDC__AUTHORIZATION_DETAILS", "true")]).await;
    let (management, _) = management_token(&fixture.app).await;
    let created = create_application(
        &fixture.app,
        &management,
        json!({
            "name": "Interop RAR RP (authlib)",
            "redirect_uris": [REDIRECT_URI],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "client_secret_basic",
            "allowed_scopes": ["openid", "offline_access"],
            "first_party": false,
            "authorization_details_types": [{
                "type": "payment_initiation",
                "description": "Make a payment from your account",
                "schema": {
                    "type": "object",
                    "required": ["type", "instructedAmount", "creditorName"],
                    "properties": {
                        "type": {"const": "payment_initiation"},
                        "actions": {"type": "array",
                                    "items": {"enum": ["initiate", "status", "cancel"]}},
                        "instructedAmount": {"type": "object",
                                             "required": ["currency", "amount"]},
                        "creditorName": {"title": "Payee", "type": "string"}
                    },
                    "additionalProperties": false
                }
            }],
        }),
    )
    .await;
    let mut env = fixture.common_env();
    env.push(("RAR_CLIENT_ID".into(), str_field(&created, "client_id")));
    env.push((
        "RAR_CLIENT_SECRET".into(),
        str_field(&created, "client_secret"),
    ));
    let run = run_script(
        &repo_root().join("interop/authlib/.venv/bin/python"),
        &repo_root().join("interop/authlib/rar.py"),
        &env,
    )
    .await;
    let summary = run.summary(&format!("authlib RAR on {backend:?}"));
    assert_eq!(summary["issuer"], fixture.issuer);
    for flow in [&summary["plain"], &summary["pushed"]] {
        assert_eq!(flow["pages"], json!(["sign-in", "consent"]), "{summary}");
        assert_eq!(flow["access_token_details_match"], true, "{summary}");
        assert_eq!(flow["introspection_details_match"], true, "{summary}");
        assert_eq!(flow["refresh_details_are_the_grant"], true, "{summary}");
        assert_eq!(
            flow["widened_refresh_error"], "invalid_authorization_details",
            "{summary}"
        );
        assert_eq!(flow["refresh_after_refusal_works"], true, "{summary}");
    }
    assert_eq!(
        summary["unknown_type_error"], "invalid_authorization_details",
        "{summary}"
    );
    fixture.app.shutdown().await;
}

/// Turns `[two_factor]` on: TOTP authenticators, backup codes and step-up on the hosted pages.
const TWO_FACTOR: (&str, &str) = ("SVC_TWO_FACTOR__ENABLED", "true");
const AAL1: &str = "urn:svc:aal1";
const AAL2: &str = "urn:svc:aal2";

/// `interop/authlib/mfa.py`: the second factor with an independent TOTP (pyotp) and Authlib.
async fn authlib_mfa(backend: Backend) {
    require_prerequisites(&[Prerequisite::Venv]);
    let fixture = Fixture::start_with(backend, &[TWO_FACTOR]).await;
    let mut env = fixture.common_env();
    env.push(("CLIENT_ID".into(), fixture.basic.0.clone()));
    env.push(("CLIENT_SECRET".into(), fixture.basic.1.clone()));
    env.push(("API_AUDIENCE".into(), API_AUDIENCE.into()));
    let run = run_script(
        &repo_root().join("interop/authlib/.venv/bin/python"),
        &repo_root().join("interop/authlib/mfa.py"),
        &env,
    )
    .await;
    let summary = run.summary(&format!("authlib + pyotp second factor on {backend:?}"));
    let mfa_amr = json!(["pwd", "otp", "mfa"]);
    assert_eq!(summary["issuer"], fixture.issuer);
    assert_eq!(summary["acr_values_supported"], json!([AAL1, AAL2]));
    // (a) Asking for aal2 without a factor: no step-up, the ID token says aal1.
    assert_eq!(summary["acr_before"], AAL1, "{summary}");
    assert_eq!(summary["amr_before"], json!(["pwd"]), "{summary}");
    assert!(
        !summary["pages_before"]
            .as_array()
            .unwrap()
            .contains(&json!("second-factor")),
        "{summary}"
    );
    // (b) Enrolment: the QR code, a wrong first code refused, ten backup codes.
    assert_eq!(summary["qr_svg_in_figure_role_img"], true, "{summary}");
    assert_eq!(summary["wrong_enrolment_code_status"], 401, "{summary}");
    assert_eq!(summary["backup_codes_shown"], 10, "{summary}");
    // Set up: the page offers new backup codes and removal, no second setup.
    let actions = summary["two_factor_actions_after_enrolment"]
        .as_array()
        .unwrap();
    assert!(
        actions.contains(&json!("backup_codes"))
            && actions.contains(&json!("remove"))
            && !actions.contains(&json!("setup")),
        "{summary}"
    );
    // The code that confirmed the authenticator raised the enrolling session to aal2.
    assert_eq!(
        summary["enrolment_replaced_session_cookie"], true,
        "{summary}"
    );
    assert_eq!(summary["pages_after_enrolment"], json!([]), "{summary}");
    assert_eq!(summary["acr_after_enrolment"], AAL2, "{summary}");
    assert_eq!(summary["amr_after_enrolment"], mfa_amr, "{summary}");
    // (d) The session signed in before the enrolment is aal1: no step-up without interaction.
    assert_eq!(
        summary["prompt_none_step_up_error"], "interaction_required",
        "{summary}"
    );
    // (c) Step-up: the second-factor page only, a new session, aal2 everywhere.
    assert_eq!(
        summary["pages_step_up"],
        json!(["second-factor"]),
        "{summary}"
    );
    assert_eq!(
        summary["step_up_replaced_session_cookie"], true,
        "{summary}"
    );
    assert_eq!(summary["acr_step_up"], AAL2, "{summary}");
    assert_eq!(summary["amr_step_up"], mfa_amr, "{summary}");
    assert_eq!(summary["at_typ"], "at+jwt", "{summary}");
    assert_eq!(summary["at_acr"], AAL2, "{summary}");
    assert_eq!(summary["at_amr"], mfa_amr, "{summary}");
    assert_eq!(summary["at_auth_time_matches_id_token"], true, "{summary}");
    assert_eq!(summary["introspection_active"], true, "{summary}");
    assert_eq!(summary["introspection_acr"], AAL2, "{summary}");
    assert_eq!(summary["introspection_amr"], mfa_amr, "{summary}");
    // (e) Password then TOTP: a challenge cookie only, then a session at aal2.
    assert_eq!(
        summary["sign_in_with_factor_redirect"], "/auth/second-factor",
        "{summary}"
    );
    assert_eq!(summary["session_cookie_after_password"], false, "{summary}");
    assert_eq!(
        summary["challenge_cookie_after_password"], true,
        "{summary}"
    );
    assert_eq!(summary["totp_sign_in_status"], 303, "{summary}");
    assert_eq!(
        summary["totp_sign_in_redirect"], "/auth/account",
        "{summary}"
    );
    assert_eq!(summary["totp_sign_in_pages"], json!([]), "{summary}");
    assert_eq!(summary["totp_sign_in_acr"], AAL2, "{summary}");
    assert_eq!(summary["totp_sign_in_amr"], mfa_amr, "{summary}");
    // (g) The same TOTP code again, within its window: refused.
    assert_eq!(summary["totp_replay_status"], 401, "{summary}");
    assert_eq!(summary["totp_replay_alert"], true, "{summary}");
    // (f) A backup code signs in once.
    assert_eq!(
        summary["backup_sign_in_pages"],
        json!(["sign-in", "second-factor"]),
        "{summary}"
    );
    assert_eq!(summary["backup_sign_in_acr"], AAL2, "{summary}");
    assert_eq!(summary["backup_sign_in_amr"], mfa_amr, "{summary}");
    assert_eq!(summary["backup_codes_left_after_one_used"], 9, "{summary}");
    assert_eq!(summary["backup_code_reuse_status"], 401, "{summary}");
    fixture.app.shutdown().await;
}

async fn browser(backend: Backend) {
    require_prerequisites(&[
        Prerequisite::Chromium,
        Prerequisite::NodeModules,
        Prerequisite::PlaywrightCore,
    ]);
    // `[two_factor]` on: nothing changes for a person without a factor, and the script enrols
    // one last to check the second-factor pages.
    let fixture = Fixture::start_with(backend, &[TWO_FACTOR]).await;
    let mut env = fixture.common_env();
    env.push(("CLIENT_ID".into(), fixture.public_client_id.clone()));
    let run = run_script(
        Path::new("node"),
        &repo_root().join("interop/browser/pages.mjs"),
        &env,
    )
    .await;
    let summary = run.summary(&format!("hosted pages in Chromium on {backend:?}"));
    assert_checks(
        &summary,
        &[
            "labels_for_every_input",
            "email_focused",
            "no_horizontal_scroll_375",
            "consent_page_375",
            "wrong_password_alert",
            "password_not_echoed",
            "session_cookie_httponly_samesite_lax",
            "security_headers",
            "flow_without_javascript",
            "two_factor_page",
            "totp_setup_page_accessible",
            "qr_code_figure_img",
            "totp_setup_wrong_code_alert",
            "totp_enrolled",
            "step_up_flow",
            "second_factor_page_accessible",
            "second_factor_wrong_code_alert",
            "second_factor_flow",
            "mfa_flow_without_javascript",
            "two_factor_security_headers",
        ],
    );
    assert_eq!(
        summary["two_factor"]["pages_with_code_without_js"],
        json!(["sign-in", "second-factor"]),
        "{summary}"
    );
    fixture.app.shutdown().await;
}

/// Turns `[passkey]` on: the passkeys page, "Sign in with a passkey" and the WebAuthn glue.
const PASSKEYS: (&str, &str) = ("SVC_PASSKEY__ENABLED", "true");

/// The fixture's issuer as the browser must reach it for WebAuthn: `http://localhost:<port>`
/// (a secure context with a domain RP ID; an IP address is neither an RP ID nor a
/// registrable domain). Single-tenant without `oidc.issuer_url`, the issuer follows the Host.
fn localhost_issuer(issuer: &str) -> String {
    let localhost = issuer.replacen("://127.0.0.1:", "://localhost:", 1);
    assert_ne!(
        localhost, issuer,
        "the fixture's issuer is not on 127.0.0.1: {issuer}"
    );
    localhost
}

/// `interop/browser/passkeys.mjs`: passkeys in Chromium with a virtual authenticator, the ID
/// token of the passkey sign-in checked by openid-client.
async fn passkeys(backend: Backend) {
    require_prerequisites(&[
        Prerequisite::Chromium,
        Prerequisite::NodeModules,
        Prerequisite::PlaywrightCore,
    ]);
    let fixture = Fixture::start_with(backend, &[PASSKEYS]).await;
    let issuer = localhost_issuer(&fixture.issuer);
    let mut env: Vec<(String, String)> = fixture
        .common_env()
        .into_iter()
        .filter(|(key, _)| key != "ISSUER")
        .collect();
    env.push(("ISSUER".into(), issuer.clone()));
    env.push(("CLIENT_ID".into(), fixture.public_client_id.clone()));
    let run = run_script(
        Path::new("node"),
        &repo_root().join("interop/browser/passkeys.mjs"),
        &env,
    )
    .await;
    let summary = run.summary(&format!("passkeys in Chromium on {backend:?}"));
    assert_eq!(summary["issuer"], issuer.as_str(), "{summary}");
    assert_checks(
        &summary,
        &[
            "discovery_localhost_issuer",
            "passkeys_page_labels",
            "add_form_shown_with_javascript",
            "csp_allows_glue_by_hash",
            "passkey_registered",
            "passkey_listed",
            "authenticator_holds_resident_credential",
            "ceremony_cookie_httponly_single_use",
            "signed_out",
            "passkey_autofill_sign_in",
            "id_token_aal2_autofill",
            "sign_in_page_offers_passkey",
            "passkey_button_sign_in",
            "id_token_aal2",
            "last_used_recorded",
            "no_credential_error_alert",
            "passkey_form_hidden_without_javascript",
            "password_sign_in_without_javascript",
            "no_csp_violation",
        ],
    );
    // Observed in the ID token openid-client validated, not constants of the script.
    let passkey = &summary["passkey"];
    assert_eq!(passkey["acr"], AAL2, "{summary}");
    // RFC 8176: a hardware key (the virtual authenticator is not backup eligible, so not `swk`),
    // user verification, and as two factors `mfa`; never `pwd`.
    assert_eq!(passkey["amr"], json!(["hwk", "user", "mfa"]), "{summary}");
    assert_eq!(summary["credential"]["backup_eligible"], false, "{summary}");
    assert_eq!(passkey["autofill_acr"], AAL2, "{summary}");
    assert_eq!(passkey["autofill_amr"], passkey["amr"], "{summary}");
    assert_eq!(summary["credential"]["rp_id"], "localhost", "{summary}");
    assert_eq!(summary["password_without_js"]["acr"], AAL1, "{summary}");
    assert_eq!(
        summary["password_without_js"]["amr"],
        json!(["pwd"]),
        "{summary}"
    );
    fixture.app.shutdown().await;
}

#[tokio::test]
async fn interop_openid_client_sqlite() {
    openid_client(Backend::Sqlite).await;
}

#[tokio::test]
async fn interop_openid_client_postgres() {
    openid_client(Backend::Postgres).await;
}

#[tokio::test]
async fn interop_authlib_sqlite() {
    authlib(Backend::Sqlite).await;
}

#[tokio::test]
async fn interop_authlib_postgres() {
    authlib(Backend::Postgres).await;
}

#[tokio::test]
async fn interop_authlib_jar_sqlite() {
    authlib_jar(Backend::Sqlite).await;
}

#[tokio::test]
async fn interop_authlib_jar_postgres() {
    authlib_jar(Backend::Postgres).await;
}

#[tokio::test]
async fn interop_authlib_rar_sqlite() {
    authlib_rar(Backend::Sqlite).await;
}

#[tokio::test]
async fn interop_authlib_rar_postgres() {
    authlib_rar(Backend::Postgres).await;
}

#[tokio::test]
async fn interop_authlib_mfa_sqlite() {
    authlib_mfa(Backend::Sqlite).await;
}

#[tokio::test]
async fn interop_authlib_mfa_postgres() {
    authlib_mfa(Backend::Postgres).await;
}

#[tokio::test]
async fn interop_browser_sqlite() {
    browser(Backend::Sqlite).await;
}

#[tokio::test]
async fn interop_browser_postgres() {
    browser(Backend::Postgres).await;
}

#[tokio::test]
async fn interop_passkeys_sqlite() {
    passkeys(Backend::Sqlite).await;
}

#[tokio::test]
async fn interop_passkeys_postgres() {
    passkeys(Backend::Postgres).await;
}
