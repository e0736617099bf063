//! The API reference checked against the server that serves it (`[openapi].enabled`): the
//! document is OpenAPI 3.1, it says exactly what the router serves, the server answers as it
//! says, and the interactive UI works with nothing fetched from elsewhere.
//!
//! - `openapi-spec-validator` (PyPI, `interop/api/.venv`) validates `/openapi.json` as 3.1;
//! - `schemathesis` (PyPI, same venv) drives every documented operation of a live server, each
//!   with the credential its security scheme names (`interop/api/schemathesis.toml`), and fails
//!   on any server error, undocumented status, content type or header, or schema violation;
//! - `interop/api/ui.mjs` opens Swagger UI at `/` in Chromium, waits for every operation to
//!   render, fails on any request to another origin, console error or CSP violation, and saves
//!   a full-page screenshot to `$SVCTEST_ARTIFACTS_DIR` (default `target/test-artifacts/`);
//! - parity: every operation of the document reaches a route (not the router's 404 or 405
//!   fallback), and every method a route answers (not 405) is an operation of the document,
//!   the routes read from the `Debug` text of the router the service really runs.
//!
//! Each test starts the service single-tenant (the issuer is the loopback origin) with
//! `SVC_OPENAPI__ENABLED=true`. The prerequisites come from `bash scripts/interop-setup.sh`;
//! without them these tests fail and say so.

use crate::common::{
    CreatedTenant, create_tenant, default_tenant, management_token, operator_token,
};
use crate::hosted::support::{Browser, CHALLENGE, REDIRECT, VERIFIER, param};
use crate::interop::{
    ONE_AT_A_TIME, Prerequisite, ScriptRun, chromium_path, create_application, repo_root,
    require_prerequisites, run_command, run_script, str_field,
};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;
use svc_http::openapi::tags;
use svc_testkit::{Backend, TestApp};

/// The person whose access token UserInfo is called with.
const PERSON_EMAIL: &str = "grace.hopper@example.com";
const PERSON_PASSWORD: &str = "Compiler-A-0-1952!";
/// schemathesis' seed: a failure it reports is reproduced by running it again.
const SEED: u64 = 1_500_115;
/// Test cases per operation and phase (bounded so a backend takes a couple of minutes on two
/// cores).
const MAX_EXAMPLES: u32 = 20;
/// The checks schemathesis runs on every response.
const CHECKS: &str = "not_a_server_error,status_code_conformance,content_type_conformance,\
                      response_schema_conformance,response_headers_conformance";
/// How long one schemathesis or validator run may take.
const TOOL_TIMEOUT: Duration = Duration::from_secs(420);
/// The 404 the router answers for a path no route matches (crates/http/src/fallback.rs).
const FALLBACK_404: &str = "no resource matches the request path";

/// Routes that are deliberately not operations of the document, each with its reason.
const NOT_OPERATIONS: &[(&str, &str)] = &[
    (
        "/auth/",
        "the hosted HTML pages a person's browser fills in (sign-in, consent, sign-up, \
         verification, password reset, sessions): forms with CSRF tokens, not an API",
    ),
    (
        "/oauth/authorize/resume",
        "where a hosted page hands an authorization request back after sign-in or consent: \
         reached only by the browser, carrying the interaction cookie",
    ),
    (
        "/oauth/device/verify",
        "the device verification page (RFC 8628 §3.3): a hosted HTML form with a CSRF token \
         where a person types a device's code; the device is given its URL, not an API",
    ),
    ("/", "the API reference's own UI page"),
    ("/openapi.json", "the document itself"),
    (
        "/api-docs/{file}",
        "the UI's vendored static files (JavaScript, CSS, icons)",
    ),
    (
        "/problems",
        "the HTML index of the problem types the document's problem `type` URIs point at",
    ),
    (
        "/problems/{slug}",
        "the HTML page of one problem type (the `type` URI of a problem)",
    ),
    (
        "/scim/v2",
        "SCIM 2.0 (RFC 7644) describes itself: /scim/v2/ServiceProviderConfig, /Schemas and \
         /ResourceTypes, which directories read; its errors are RFC 7644 bodies, not problems",
    ),
    (
        "/scim/v2/",
        "SCIM 2.0 (RFC 7644) describes itself: /scim/v2/ServiceProviderConfig, /Schemas and \
         /ResourceTypes, which directories read; its errors are RFC 7644 bodies, not problems",
    ),
];

fn api_venv() -> PathBuf {
    repo_root().join("interop/api/.venv/bin")
}

/// Fails (never skips) when `interop/api/.venv` is missing.
fn require_api_venv() {
    for tool in ["schemathesis", "openapi-spec-validator"] {
        let path = api_venv().join(tool);
        assert!(
            path.exists(),
            "{} is missing.\nRun `bash scripts/interop-setup.sh` (installs \
             interop/api/requirements.txt into interop/api/.venv), then run the tests again.",
            path.display()
        );
    }
}

/// Where test artifacts go: `$SVCTEST_ARTIFACTS_DIR`, else `target/test-artifacts/`.
fn artifacts_dir() -> PathBuf {
    let dir = std::env::var_os("SVCTEST_ARTIFACTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/test-artifacts"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A single-tenant service with the API reference on.
async fn spawn(backend: Backend, mail: &Path) -> TestApp {
    let sink = format!("file:{}", mail.join("mail.jsonl").display());
    TestApp::spawn_with(
        backend,
        &[
            ("SVC_TENANT__DEFAULT_TENANT_SLUG", "default"),
            ("SVC_AUTH__ARGON2_MEMORY_KIB", "8192"),
            ("SVC_AUTH__ARGON2_ITERATIONS", "1"),
            ("SVC_EMAIL__PROVIDER", "log"),
            ("SVC_EMAIL__LOG__SINK", &sink),
            ("SVC_OPENAPI__ENABLED", "true"),
            // Every documented operation is served: dynamic registration is off by default.
            ("SVC_DYNAMIC_REGISTRATION__ENABLED", "true"),
            // Every optional protocol endpoint on, so the document holds (and the fuzzer
            // reaches) all of them.
            ("SVC_CIBA__ENABLED", "true"),
            ("SVC_ENTERPRISE_SSO__ENABLED", "true"),
            ("SVC_SOCIAL__ENABLED", "true"),
            ("SVC_GENERIC_OAUTH__ENABLED", "true"),
        ],
    )
    .await
}

/// `/openapi.json` of the running server.
async fn document(app: &TestApp) -> Value {
    let response = app.get("/openapi.json").await;
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = response.text().await.unwrap();
    assert_eq!(status, 200, "GET /openapi.json: {text}");
    assert_eq!(
        content_type.as_deref(),
        Some("application/json"),
        "GET /openapi.json"
    );
    serde_json::from_str(&text).unwrap()
}

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// `(METHOD, path)` of every operation of `doc`.
fn operations(doc: &Value) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    if let Some(paths) = doc["paths"].as_object() {
        for (path, item) in paths {
            for method in METHODS {
                if item.get(method).is_some() {
                    out.insert((method.to_uppercase(), path.clone()));
                }
            }
        }
    }
    out
}

/// The operator, the default tenant with fresh management credentials and a token holding all
/// of its management scopes, a person's access token and a `metrics:read` service token: the
/// credentials of every security scheme of the document.
struct Credentials {
    operator: String,
    tenant: CreatedTenant,
    management: String,
    person: String,
    /// The `Cookie` header of the person's browser session (the Identity operations).
    person_cookie: String,
    metrics: String,
    /// An initial access token (RFC 7591 §3) of the tenant, unlimited.
    initial_access_token: String,
    /// A client registered at `/oauth/register`, and its registration access token (RFC 7592).
    registered_client: String,
    registration_access_token: String,
    /// Another one, for the delete operation (with its own token: the first one stays).
    doomed_registered_client: String,
    doomed_registration_access_token: String,
}

impl Credentials {
    /// The value of the person's `svc_session` cookie.
    fn person_session(&self) -> String {
        self.person_cookie
            .split("; ")
            .find_map(|c| c.strip_prefix("svc_session="))
            .expect("the person's browser holds svc_session")
            .to_owned()
    }
}

/// Resources schemathesis works on, so that operations on one resource reach their logic
/// instead of answering 404 to generated ids: a `target` to read, change, suspend, rotate and
/// test, and a `doomed` one per resource for the delete operation (the target stays).
struct Fixtures {
    /// The tenant's origin (the issuer), which the person's decisions come from.
    origin: String,
    application: String,
    doomed_application: String,
    user: String,
    doomed_user: String,
    /// A person with a live session, left alone by the suspend and delete operations (both
    /// end a person's sessions).
    session_user: String,
    session: String,
    /// An application the authorization endpoint accepts, and its redirect URI.
    client_id: String,
    webhook: String,
    doomed_webhook: String,
    delivery: String,
    /// An organization with `user` as its member, and one for the delete operation.
    organization: String,
    doomed_organization: String,
    /// A custom role to read and change (held by `application`), and one for the delete
    /// operation.
    role: String,
    doomed_role: String,
    /// An API resource to read and change, and one for the delete operation.
    api_resource: String,
    doomed_api_resource: String,
    /// An access-control policy to read and change, and one for the delete operation.
    policy: String,
    doomed_policy: String,
    /// An invitation to read and resend, and one for the revoke operation.
    invitation: String,
    doomed_invitation: String,
    tenant: String,
    doomed_tenant: String,
    /// The client registered at `/oauth/register` (read and replaced), and the one deleted with
    /// its own registration access token.
    registered_client: String,
    doomed_registered_client: String,
    doomed_registration_access_token: String,
}

/// `POST path` with `body` as `token`, asserting `status`; the answer.
async fn post(app: &TestApp, token: &str, path: &str, body: Value, status: u16) -> Value {
    let response = app
        .request(Method::POST, path)
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let got = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(got, status, "POST {path} {body}: {text}");
    serde_json::from_str(&text).unwrap()
}

impl Credentials {
    async fn provision(app: &TestApp) -> Self {
        let operator = operator_token(app).await;
        let tenant = default_tenant(app, &operator).await;
        // No scope asked: every scope of the management application.
        let management = management_token(app, &tenant, None).await;
        let reader = create_application(
            app,
            &management,
            json!({
                "name": "Metrics reader",
                "grant_types": ["client_credentials"],
                "token_endpoint_auth_method": "client_secret_basic",
                "allowed_scopes": ["metrics:read"],
            }),
        )
        .await;
        let reader = CreatedTenant {
            id: tenant.id.clone(),
            host: tenant.host.clone(),
            client_id: str_field(&reader, "client_id"),
            client_secret: str_field(&reader, "client_secret"),
        };
        let metrics = management_token(app, &reader, Some("metrics:read")).await;
        let (client_id, client_secret) = relying_party(app, &management).await;
        create_person(app, &management, PERSON_EMAIL).await;
        let (person, person_cookie) =
            sign_in(app, &tenant.host, &client_id, &client_secret, PERSON_EMAIL).await;
        // Dynamic client registration: open, one registered client and an initial access token,
        // so the RFC 7592 operations reach their logic with that client's token.
        let opened = app
            .request(Method::PUT, "/api/v1/registration-policy")
            .bearer_auth(&management)
            .json(&json!({"policy": "open"}))
            .send()
            .await
            .unwrap();
        assert_eq!(opened.status(), 200, "opening registration");
        let initial = post(
            app,
            &management,
            "/api/v1/registration-tokens",
            json!({}),
            201,
        )
        .await;
        let mut registered = Vec::new();
        for name in ["Registered", "Doomed registered"] {
            let response = app
                .request(Method::POST, "/oauth/register")
                .json(&json!({"client_name": name, "redirect_uris": [REDIRECT]}))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 201, "registering a client");
            registered.push(response.json::<Value>().await.unwrap());
        }
        let doomed = registered.pop().unwrap();
        let registered = registered.pop().unwrap();
        Self {
            operator,
            tenant,
            management,
            person,
            person_cookie,
            metrics,
            initial_access_token: str_field(&initial, "token"),
            registered_client: str_field(&registered, "client_id"),
            registration_access_token: str_field(&registered, "registration_access_token"),
            doomed_registered_client: str_field(&doomed, "client_id"),
            doomed_registration_access_token: str_field(&doomed, "registration_access_token"),
        }
    }
}

impl Fixtures {
    async fn create(app: &TestApp, credentials: &Credentials) -> Self {
        let management = credentials.management.as_str();
        let application = |name: &str| {
            json!({
                "name": name,
                "redirect_uris": [REDIRECT],
                "grant_types": ["authorization_code"],
                "token_endpoint_auth_method": "client_secret_basic",
                "allowed_scopes": ["openid", "email"],
            })
        };
        let application_id = |created: Value| str_field(&created, "client_id");
        let target = create_application(app, management, application("Target")).await;
        let doomed = create_application(app, management, application("Doomed")).await;

        let user = create_person(app, management, "target@example.com").await;
        let doomed_user = create_person(app, management, "doomed@example.com").await;
        let session_user = create_person(app, management, "signed-in@example.com").await;
        // It signs in once, so it has a session to list and revoke.
        let (client_id, client_secret) = relying_party(app, management).await;
        let host = credentials.tenant.host.clone();
        sign_in(
            app,
            &host,
            &client_id,
            &client_secret,
            "signed-in@example.com",
        )
        .await;
        let sessions = app
            .request(
                Method::GET,
                &format!("/api/v1/tenant-users/{session_user}/sessions"),
            )
            .bearer_auth(management)
            .send()
            .await
            .unwrap();
        let sessions: Value = sessions.json().await.unwrap();
        let session = str_field(&sessions["items"][0], "id");

        let webhook = |description: &str| {
            json!({
                "url": "https://hooks.example.com/svc",
                "event_types": ["tenant_user.invited"],
                "description": description,
            })
        };
        let target_hook = post(app, management, "/api/v1/webhooks", webhook("Target"), 201).await;
        let doomed_hook = post(app, management, "/api/v1/webhooks", webhook("Doomed"), 201).await;
        let target_hook = str_field(&target_hook, "id");
        let delivery = post(
            app,
            management,
            &format!("/api/v1/webhooks/{target_hook}/test"),
            json!({}),
            202,
        )
        .await;

        let organization = |slug: &str| json!({"name": slug.to_uppercase(), "slug": slug});
        let target_org = post(
            app,
            management,
            "/api/v1/organizations",
            organization("target"),
            201,
        )
        .await;
        let target_org = str_field(&target_org, "id");
        let doomed_org = post(
            app,
            management,
            "/api/v1/organizations",
            organization("doomed"),
            201,
        )
        .await;
        post(
            app,
            management,
            &format!("/api/v1/organizations/{target_org}/members"),
            json!({"user_id": user}),
            201,
        )
        .await;

        let api_resource = |identifier: &str| {
            json!({
                "identifier": identifier,
                "name": "Invoices API",
                "permissions": [{"name": "invoices:read", "description": "Read invoices"}],
            })
        };
        let target_resource = post(
            app,
            management,
            "/api/v1/api-resources",
            api_resource("https://target.example/api"),
            201,
        )
        .await;
        let doomed_resource = post(
            app,
            management,
            "/api/v1/api-resources",
            api_resource("https://doomed.example/api"),
            201,
        )
        .await;

        let policy = |name: &str| json!({"name": name, "rules": {"max_session_age_secs": 86400}});
        let target_policy = post(app, management, "/api/v1/policies", policy("target"), 201).await;
        let doomed_policy = post(app, management, "/api/v1/policies", policy("doomed"), 201).await;

        let role = |key: &str| json!({"key": key, "kind": "tenant", "description": key});
        let target_role = post(app, management, "/api/v1/roles", role("target-role"), 201).await;
        let target_role = str_field(&target_role, "key");
        let doomed_role = post(app, management, "/api/v1/roles", role("doomed-role"), 201).await;
        let target_app = application_id(target.clone());
        let response = app
            .request(
                Method::PUT,
                &format!("/api/v1/applications/{target_app}/roles"),
            )
            .bearer_auth(management)
            .json(&json!({"roles": [target_role]}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "application roles");

        let invitation = |email: &str| json!({"email": email, "organization_id": target_org});
        let target_invitation = post(
            app,
            management,
            "/api/v1/invitations",
            invitation("invited@example.com"),
            201,
        )
        .await;
        let doomed_invitation = post(
            app,
            management,
            "/api/v1/invitations",
            invitation("uninvited@example.com"),
            201,
        )
        .await;

        let operator = credentials.operator.as_str();
        let tenant = create_tenant(app, operator, "target").await;
        let doomed_tenant = create_tenant(app, operator, "doomed").await;
        Self {
            origin: format!("http://{}", credentials.tenant.host),
            application: application_id(target),
            doomed_application: application_id(doomed),
            user,
            doomed_user,
            session_user,
            session,
            client_id,
            webhook: target_hook,
            doomed_webhook: str_field(&doomed_hook, "id"),
            delivery: str_field(&delivery, "id"),
            organization: target_org,
            doomed_organization: str_field(&doomed_org, "id"),
            role: target_role,
            doomed_role: str_field(&doomed_role, "key"),
            api_resource: str_field(&target_resource, "id"),
            doomed_api_resource: str_field(&doomed_resource, "id"),
            policy: str_field(&target_policy, "id"),
            doomed_policy: str_field(&doomed_policy, "id"),
            invitation: str_field(&target_invitation, "id"),
            doomed_invitation: str_field(&doomed_invitation, "id"),
            tenant: tenant.id,
            doomed_tenant: doomed_tenant.id,
            registered_client: credentials.registered_client.clone(),
            doomed_registered_client: credentials.doomed_registered_client.clone(),
            doomed_registration_access_token: credentials.doomed_registration_access_token.clone(),
        }
    }

    /// The configuration of one run: `interop/api/schemathesis.toml` and, for the operations of
    /// `part`, the fixtures' ids as the values of their path parameters, and a valid client and
    /// redirect URI for the authorization endpoint (each in 80 % of the cases; the rest stay
    /// generated, unknown ids included). An operation id that no longer exists makes
    /// schemathesis fail the run (`unmatched_filter`), so this list cannot silently go stale.
    fn config(&self, part: Part) -> String {
        let mut out =
            std::fs::read_to_string(repo_root().join("interop/api/schemathesis.toml")).unwrap();
        out.push_str("\n# This run's fixtures (crates/runtime/tests/it/openapi.rs, Fixtures).\n");
        let bindings: Vec<Binding<'_>> = match part {
            Part::Tenant => vec![
                (
                    &[
                        "getApplication",
                        "updateApplication",
                        "rotateApplicationSecret",
                    ],
                    vec![("path.id", &self.application)],
                ),
                (
                    &["deleteApplication"],
                    vec![("path.id", &self.doomed_application)],
                ),
                (
                    &[
                        "getTenantUser",
                        "updateTenantUser",
                        "suspendTenantUser",
                        "reactivateTenantUser",
                        "listTenantUserSessions",
                    ],
                    vec![("path.id", &self.user)],
                ),
                (&["removeTenantUser"], vec![("path.id", &self.doomed_user)]),
                (
                    &[
                        "getOrganization",
                        "updateOrganization",
                        "suspendOrganization",
                        "reactivateOrganization",
                        "addOrganizationMember",
                        "listOrganizationMembers",
                    ],
                    vec![("path.id", &self.organization)],
                ),
                (
                    &["deleteOrganization"],
                    vec![("path.id", &self.doomed_organization)],
                ),
                (&["getRole", "updateRole"], vec![("path.key", &self.role)]),
                (&["deleteRole"], vec![("path.key", &self.doomed_role)]),
                (
                    &["getApplicationRoles", "setApplicationRoles"],
                    vec![("path.id", &self.application)],
                ),
                (
                    &["getApiResource", "updateApiResource"],
                    vec![("path.id", &self.api_resource)],
                ),
                (
                    &["deleteApiResource"],
                    vec![("path.id", &self.doomed_api_resource)],
                ),
                (
                    &["getPolicy", "updatePolicy"],
                    vec![("path.id", &self.policy)],
                ),
                (&["deletePolicy"], vec![("path.id", &self.doomed_policy)]),
                (
                    &[
                        "getOrganizationMember",
                        "updateOrganizationMemberRoles",
                        "removeOrganizationMember",
                    ],
                    vec![
                        ("path.id", &self.organization),
                        ("path.user_id", &self.user),
                    ],
                ),
                (
                    &["getInvitation", "resendInvitation"],
                    vec![("path.id", &self.invitation)],
                ),
                (
                    &["revokeInvitation"],
                    vec![("path.id", &self.doomed_invitation)],
                ),
                (
                    &["listTenantUserOrganizations"],
                    vec![("path.id", &self.user)],
                ),
                (
                    &["getTenantUserRoles", "setTenantUserRoles"],
                    vec![("path.id", &self.user)],
                ),
                (
                    &["revokeTenantUserSession"],
                    vec![
                        ("path.id", &self.session_user),
                        ("path.session_id", &self.session),
                    ],
                ),
                (
                    &["authorize"],
                    vec![
                        ("query.client_id", &self.client_id),
                        ("query.redirect_uri", REDIRECT),
                        ("query.scope", "openid email"),
                        ("query.code_challenge", CHALLENGE),
                        ("query.code_challenge_method", "S256"),
                    ],
                ),
                (
                    &["authorizeWithForm"],
                    vec![
                        ("body.client_id", &self.client_id),
                        ("body.redirect_uri", REDIRECT),
                        ("body.scope", "openid email"),
                        ("body.code_challenge", CHALLENGE),
                        ("body.code_challenge_method", "S256"),
                    ],
                ),
                (
                    &[
                        "getWebhook",
                        "updateWebhook",
                        "patchWebhook",
                        "sendWebhookTest",
                        "rotateWebhookSecret",
                        "listWebhookDeliveries",
                    ],
                    vec![("path.id", &self.webhook)],
                ),
                (&["deleteWebhook"], vec![("path.id", &self.doomed_webhook)]),
                (
                    &["getWebhookDelivery", "redeliverWebhookDelivery"],
                    vec![
                        ("path.id", &self.webhook),
                        ("path.delivery_id", &self.delivery),
                    ],
                ),
            ],
            Part::ControlPlane => vec![
                (
                    &[
                        "getTenant",
                        "updateTenant",
                        "suspendTenant",
                        "reactivateTenant",
                        "issueManagementCredentials",
                    ],
                    vec![("path.id", &self.tenant)],
                ),
                (&["deleteTenant"], vec![("path.id", &self.doomed_tenant)]),
            ],
        };
        let mut dictionaries = BTreeMap::new();
        let mut operations = String::new();
        for (ids, params) in bindings {
            let ids: Vec<String> = ids.iter().map(|id| format!("{id:?}")).collect();
            let params: Vec<String> = params
                .iter()
                .map(|(key, value)| {
                    let next = format!("value_{}", dictionaries.len() + 1);
                    let name = dictionaries
                        .entry((*value).to_owned())
                        .or_insert(next)
                        .clone();
                    format!("{key:?} = {{ dictionary = {name:?}, probability = 0.8 }}")
                })
                .collect();
            operations.push_str(&format!(
                "\n[[operations]]\ninclude-operation-id = [{}]\nparameters = {{ {} }}\n",
                ids.join(", "),
                params.join(", ")
            ));
        }
        for (value, name) in dictionaries {
            out.push_str(&format!("\n[dictionaries.{name}]\nvalues = [{value:?}]\n"));
        }
        out.push_str(&operations);
        if part == Part::Tenant {
            // The person's decisions come from the tenant's own origin (the session cookie
            // comes from the environment, `[auth.openapi.session]`).
            out.push_str(&format!(
                "\n[[operations]]\ninclude-tag = {:?}\nheaders = {{ Origin = {:?} }}\n",
                svc_http::openapi::tags::IDENTITY,
                self.origin,
            ));
            // RFC 7592: the registered clients' ids always (a generated id, or another
            // operation's `client_id`, only meets 401); the delete takes another registered
            // client, with its own registration access token (the scheme's token is the first
            // client's, which must outlive the run).
            out.push_str(&format!(
                "\n[[operations]]\n\
                 include-operation-id = [\"readClientRegistration\", \"replaceClientRegistration\"]\n\
                 parameters = {{ \"path.client_id\" = {:?} }}\n",
                self.registered_client,
            ));
            out.push_str(&format!(
                "\n[[operations]]\ninclude-operation-id = [\"deleteClientRegistration\"]\n\
                 parameters = {{ \"path.client_id\" = {:?} }}\n\
                 headers = {{ Authorization = {:?} }}\n",
                self.doomed_registered_client,
                format!("Bearer {}", self.doomed_registration_access_token),
            ));
        }
        out
    }
}

/// Operation ids, and the values bound to their parameters (`"path.id"`, `"query.scope"`, …).
type Binding<'a> = (&'static [&'static str], Vec<(&'static str, &'a str)>);

/// Which operations one schemathesis run covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Everything but the control plane: the tenant's management API, the protocol endpoints,
    /// discovery, health and metrics.
    Tenant,
    /// The operator's control plane (suspends and deletes tenants, rotates credentials).
    ControlPlane,
}

impl Part {
    fn name(self) -> &'static str {
        match self {
            Self::Tenant => "tenant",
            Self::ControlPlane => "control-plane",
        }
    }

    fn filter(self) -> [&'static str; 2] {
        match self {
            Self::Tenant => ["--exclude-tag", tags::CONTROL_PLANE],
            Self::ControlPlane => ["--include-tag", tags::CONTROL_PLANE],
        }
    }
}

/// A confidential code-flow application the people below sign in to: `(client_id, secret)`.
async fn relying_party(app: &TestApp, management: &str) -> (String, String) {
    let client = create_application(
        app,
        management,
        json!({
            "name": "API reference RP",
            "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "client_secret_basic",
            "allowed_scopes": ["openid", "profile", "email"],
            "first_party": true,
        }),
    )
    .await;
    (
        str_field(&client, "client_id"),
        str_field(&client, "client_secret"),
    )
}

/// An active person with [`PERSON_PASSWORD`]: the user's id.
async fn create_person(app: &TestApp, management: &str, email: &str) -> String {
    let body = json!({
        "email": email,
        "password": PERSON_PASSWORD,
        "name": "Grace Hopper",
        "email_verified": true,
    });
    let user = post(app, management, "/api/v1/tenant-users", body, 201).await;
    str_field(&user, "id")
}

/// `email` signs in through the hosted pages to `client_id`: the access token
/// (`openid profile email`).
async fn sign_in(
    app: &TestApp,
    host: &str,
    client_id: &str,
    client_secret: &str,
    email: &str,
) -> (String, String) {
    let browser = Browser::new(app, host);
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", REDIRECT)
        .append_pair("scope", "openid profile email")
        .append_pair("state", "st")
        .append_pair("code_challenge", CHALLENGE)
        .append_pair("code_challenge_method", "S256")
        .finish();
    let mut page = browser.get(&format!("/oauth/authorize?{query}")).await;
    let mut code = None;
    for _ in 0..6 {
        assert_eq!(page.status, 303, "{}", page.body);
        let location = page.location().unwrap();
        if location.starts_with(REDIRECT) {
            code = param(&location, "code");
            break;
        }
        page = if location.starts_with("/auth/sign-in?") {
            let interaction = param(&location, "interaction").unwrap();
            browser
                .sign_in(Some(&interaction), email, PERSON_PASSWORD)
                .await
        } else if location.starts_with("/auth/consent?") {
            browser
                .submit(&location, "/auth/consent", &[("decision", "allow")])
                .await
        } else {
            browser.get(&location).await
        };
    }
    let code = code.expect("the authorization request reached the application");
    let token = app
        .request(Method::POST, "/oauth/token")
        .basic_auth(client_id, Some(client_secret))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
        ])
        .send()
        .await
        .unwrap();
    let status = token.status();
    let token: Value = token.json().await.unwrap();
    assert_eq!(status, 200, "code redeemed: {token}");
    let cookie = browser.cookie_header().expect("a session cookie");
    (str_field(&token, "access_token"), cookie)
}

#[tokio::test]
async fn openapi_document_validates_as_3_1_sqlite() {
    require_api_venv();
    let mail = tempfile::tempdir().unwrap();
    let app = spawn(Backend::Sqlite, mail.path()).await;
    let doc = document(&app).await;
    let version = doc["openapi"].as_str().unwrap_or_default();
    assert!(version.starts_with("3.1"), "openapi = {:?}", doc["openapi"]);

    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("openapi.json");
    std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let turn = ONE_AT_A_TIME.lock().await;
    let run = run_command(
        &api_venv().join("openapi-spec-validator"),
        &[
            "--schema".into(),
            "3.1".into(),
            "--validation-errors".into(),
            "all".into(),
            file.display().to_string(),
        ],
        work.path(),
        &[],
        TOOL_TIMEOUT,
    )
    .await;
    drop(turn);
    assert!(
        run.code == Some(0) && run.stdout.contains(": OK"),
        "openapi-spec-validator rejected /openapi.json (exit {:?}).\n--- stdout ---\n{}\n--- stderr ---\n{}",
        run.code,
        run.stdout,
        run.stderr
    );
    eprintln!(
        "openapi-spec-validator (OpenAPI {version}, {} operations): {} ({:?})",
        operations(&doc).len(),
        run.stdout.trim(),
        run.elapsed
    );
    app.shutdown().await;
}

/// One schemathesis run over the operations of `part`, its output printed; with the directory
/// of its reports.
async fn schemathesis(
    app: &TestApp,
    credentials: &Credentials,
    fixtures: &Fixtures,
    backend: Backend,
    part: Part,
) -> (ScriptRun, PathBuf) {
    let work = tempfile::tempdir().unwrap();
    let reports =
        artifacts_dir().join(format!("schemathesis-{backend:?}-{}", part.name()).to_lowercase());
    let _ = std::fs::remove_dir_all(&reports);
    std::fs::create_dir_all(&reports).unwrap();
    // Kept next to the reports so a failure can be replayed by hand (no secret in it: the
    // credentials come from the environment).
    let config = reports.join("schemathesis.toml");
    std::fs::write(&config, fixtures.config(part)).unwrap();
    let mut args: Vec<String> = [
        "--config-file",
        &config.display().to_string(),
        "run",
        &format!("{}/openapi.json", app.url),
        "--checks",
        CHECKS,
        "--max-examples",
        &MAX_EXAMPLES.to_string(),
        "--seed",
        &SEED.to_string(),
        "--workers",
        "1",
        "--request-timeout",
        "30",
        "--report",
        "junit,ndjson",
        "--report-dir",
        &reports.display().to_string(),
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    args.extend(part.filter().iter().map(|s| (*s).to_owned()));
    eprintln!(
        "schemathesis on {backend:?} ({}): schemathesis {}",
        part.name(),
        args.join(" ")
    );
    let run = run_command(
        &api_venv().join("schemathesis"),
        &args,
        work.path(),
        &[
            ("SVC_API_TENANT_TOKEN", &credentials.management),
            ("SVC_API_OPERATOR_TOKEN", &credentials.operator),
            ("SVC_API_ACCESS_TOKEN", &credentials.person),
            ("SVC_API_SESSION", &credentials.person_session()),
            ("SVC_API_METRICS_TOKEN", &credentials.metrics),
            ("SVC_API_CLIENT_ID", &credentials.tenant.client_id),
            ("SVC_API_CLIENT_SECRET", &credentials.tenant.client_secret),
            (
                "SVC_API_REGISTRATION_ACCESS_TOKEN",
                &credentials.registration_access_token,
            ),
            (
                "SVC_API_INITIAL_ACCESS_TOKEN",
                &credentials.initial_access_token,
            ),
        ],
        TOOL_TIMEOUT,
    )
    .await;
    eprintln!(
        "--- schemathesis on {backend:?} ({}), exit {:?} after {:?} ---\n{}\n{}",
        part.name(),
        run.code,
        run.elapsed,
        run.stdout,
        run.stderr
    );
    (run, reports)
}

/// `Selected: a/b` and `Tested: c` of schemathesis' summary: `(a, b, c)`.
fn selection(stdout: &str) -> (usize, usize, usize) {
    let number = |label: &str| -> Option<&str> {
        stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix(label).map(str::trim))
    };
    let selected = number("Selected:")
        .and_then(|v| v.split_once('/'))
        .and_then(|(a, b)| Some((a.trim().parse().ok()?, b.trim().parse().ok()?)));
    let tested = number("Tested:").and_then(|v| v.parse().ok());
    match (selected, tested) {
        (Some((a, b)), Some(c)) => (a, b, c),
        _ => panic!("no `Selected:`/`Tested:` in schemathesis' summary:\n{stdout}"),
    }
}

/// The statuses each documented operation answered, from the run's NDJSON report (read by
/// `interop/api/statuses.py`: the events nest generated bodies deeper than serde_json's
/// recursion limit): `"METHOD path" → {status → count}`.
async fn statuses(
    reports: &Path,
    documented: &BTreeSet<(String, String)>,
) -> BTreeMap<String, BTreeMap<String, u64>> {
    let mut args = vec![
        repo_root()
            .join("interop/api/statuses.py")
            .display()
            .to_string(),
    ];
    for entry in std::fs::read_dir(reports).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "ndjson") {
            args.push(path.display().to_string());
        }
    }
    let run = run_command(
        &api_venv().join("python"),
        &args,
        reports,
        &[],
        TOOL_TIMEOUT,
    )
    .await;
    assert_eq!(run.code, Some(0), "statuses.py: {}", run.stderr);
    let table: BTreeMap<String, BTreeMap<String, u64>> =
        serde_json::from_str(run.stdout.trim()).unwrap();
    table
        .into_iter()
        .filter(|(label, _)| {
            label.split_once(' ').is_some_and(|(method, path)| {
                documented.contains(&(method.to_owned(), path.to_owned()))
            })
        })
        .collect()
}

/// schemathesis against a live server: the tenant's operations first (management, protocol,
/// discovery, health, metrics), then the control plane's, whose suspend, delete and
/// credential-rotation operations could otherwise take the management token's tenant away
/// from the first run.
async fn schemathesis_finds_no_defect(backend: Backend) {
    require_api_venv();
    // The whole test is one turn: its management token lives five minutes from the moment it is
    // minted, so nothing may queue between minting and the runs.
    let _turn = ONE_AT_A_TIME.lock().await;
    let mail = tempfile::tempdir().unwrap();
    let app = spawn(backend, mail.path()).await;
    let credentials = Credentials::provision(&app).await;
    let fixtures = Fixtures::create(&app, &credentials).await;
    let doc = document(&app).await;
    let all = operations(&doc);
    assert!(
        all.len() > 10,
        "the document has only {} operations: {all:?}",
        all.len()
    );

    let mut failed = Vec::new();
    let mut covered = 0;
    let mut answered = BTreeMap::new();
    for part in [Part::Tenant, Part::ControlPlane] {
        let (run, reports) = schemathesis(&app, &credentials, &fixtures, backend, part).await;
        if run.code != Some(0) {
            failed.push(part.name());
        }
        let (selected, total, tested) = selection(&run.stdout);
        assert_eq!(total, all.len(), "schemathesis read another document");
        assert_eq!(
            tested,
            selected,
            "schemathesis left operations of the {} run untested",
            part.name()
        );
        covered += selected;
        answered.extend(statuses(&reports, &all).await);
    }
    // Nothing is excluded: the two runs split the document by tag, and together they are all of it.
    assert_eq!(
        covered,
        all.len(),
        "the tenant and control-plane runs do not cover the document's {} operations",
        all.len()
    );
    eprintln!(
        "schemathesis on {backend:?}: all {} operations tested, none excluded; the statuses each \
         answered:",
        all.len()
    );
    for (method, path) in &all {
        let label = format!("{method} {path}");
        let seen = answered.get(&label).cloned().unwrap_or_default();
        eprintln!("  {label}: {seen:?}");
    }
    assert!(
        failed.is_empty(),
        "schemathesis found defects on {backend:?} in the {failed:?} run(s); its report is \
         printed above (seed {SEED}; the command line, configuration and every request and answer (NDJSON) \
         are in {})",
        artifacts_dir().display()
    );
    app.shutdown().await;
}

#[tokio::test]
async fn schemathesis_finds_no_defect_sqlite() {
    schemathesis_finds_no_defect(Backend::Sqlite).await;
}

#[tokio::test]
async fn schemathesis_finds_no_defect_postgres() {
    schemathesis_finds_no_defect(Backend::Postgres).await;
}

#[tokio::test]
async fn api_reference_ui_loads_offline_in_chromium() {
    require_prerequisites(&[Prerequisite::Chromium, Prerequisite::PlaywrightCore]);
    let mail = tempfile::tempdir().unwrap();
    let app = spawn(Backend::Sqlite, mail.path()).await;
    let doc = document(&app).await;
    let count = operations(&doc).len();
    assert!(
        count > 10,
        "the document has only {count} operations to render"
    );
    let screenshot = artifacts_dir().join("api-reference.png");
    let _ = std::fs::remove_file(&screenshot);
    let env = vec![
        ("BASE_URL".to_owned(), app.url.clone()),
        ("SCREENSHOT".to_owned(), screenshot.display().to_string()),
        ("MIN_OPERATIONS".to_owned(), count.to_string()),
        (
            "CHROMIUM_PATH".to_owned(),
            chromium_path().display().to_string(),
        ),
    ];
    let run = run_script(
        Path::new("node"),
        &repo_root().join("interop/api/ui.mjs"),
        &env,
    )
    .await;
    let summary = run.summary("the API reference in Chromium");
    assert_eq!(summary["origin"], app.url, "{summary}");
    assert_eq!(summary["operations"], count, "{summary}");
    assert_eq!(summary["other_origins"], 0, "{summary}");
    assert_eq!(summary["csp_violations"], 0, "{summary}");
    assert_eq!(summary["console_errors"], 0, "{summary}");
    assert!(summary["requests"].as_u64().unwrap() >= 4, "{summary}");
    let paths: Vec<&str> = summary["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    for needed in ["/", "/openapi.json", "/api-docs/swagger-ui-bundle.js"] {
        assert!(paths.contains(&needed), "{needed} not requested: {summary}");
    }

    let png = std::fs::read(&screenshot)
        .unwrap_or_else(|e| panic!("no screenshot at {}: {e}", screenshot.display()));
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is not a PNG",
        screenshot.display()
    );
    // IHDR: width and height, big-endian, at bytes 16..24.
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert!(
        png.len() > 20_000 && width >= 1000 && height > 900,
        "screenshot {} is too small to show the reference: {} bytes, {width}x{height}",
        screenshot.display(),
        png.len()
    );
    eprintln!(
        "API reference screenshot: {} ({width}x{height}, {} bytes)",
        screenshot.display(),
        png.len()
    );
    app.shutdown().await;
}

/// The paths of the router from its `Debug` text: axum 0.8 prints `Router { path_router:
/// PathRouter { routes, node: Node { paths: {RouteId(n): "/path", …} } }, fallback_router: …`;
/// only the routes before `fallback_router` are routes (the fallback router holds axum's own
/// catch-all `/{*__private__axum_fallback}`).
fn router_paths(debug: &str) -> BTreeSet<String> {
    assert!(
        debug.starts_with("Router { path_router: PathRouter {"),
        "the router's Debug text has changed shape: {debug}"
    );
    let end = debug
        .find("fallback_router:")
        .unwrap_or_else(|| panic!("no fallback_router in the router's Debug text: {debug}"));
    let mut paths = BTreeSet::new();
    let mut rest = &debug[..end];
    while let Some(at) = rest.find("RouteId(") {
        rest = &rest[at + "RouteId(".len()..];
        let Some(close) = rest.find("): \"") else {
            continue;
        };
        if !rest[..close].chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let start = close + "): \"".len();
        let Some(end) = rest[start..].find('"') else {
            break;
        };
        paths.insert(rest[start..start + end].to_owned());
        rest = &rest[start + end..];
    }
    paths
}

/// `/a/{x}/b` → `/a/{}/b`: paths compared whatever their parameters are called.
fn shape(path: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in path.chars() {
        match c {
            '{' => {
                depth += 1;
                out.push('{');
            }
            '}' => {
                depth -= 1;
                out.push('}');
            }
            _ if depth > 0 => {}
            c => out.push(c),
        }
    }
    out
}

/// `path` with each `{name}` replaced by a plausible value: the parameter's example in the
/// document when it has one, else an id-shaped string.
fn fill(path: &str, examples: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = open + rest[open..].find('}').unwrap();
        let name = rest[open + 1..close].trim_start_matches('*');
        out.push_str(
            examples
                .get(name)
                .map_or("01JB7Q3M2X8V6N4K0T5R9C1D2E", String::as_str),
        );
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// The `example` of each path parameter of the operation (or its path item).
fn path_examples(doc: &Value, path: &str, method: &str) -> BTreeMap<String, String> {
    let item = &doc["paths"][path];
    let mut examples = BTreeMap::new();
    for params in [
        &item["parameters"],
        &item[method.to_lowercase()]["parameters"],
    ] {
        for p in params.as_array().into_iter().flatten() {
            if p["in"] == "path" {
                let example = p["example"]
                    .as_str()
                    .or_else(|| p["schema"]["example"].as_str())
                    .or_else(|| p["schema"]["examples"][0].as_str());
                if let (Some(name), Some(example)) = (p["name"].as_str(), example) {
                    examples.insert(name.to_owned(), example.to_owned());
                }
            }
        }
    }
    examples
}

/// `method path` without credentials: `(status, body)`.
async fn probe(client: &reqwest::Client, base: &str, method: &str, path: &str) -> (u16, String) {
    let response = client
        .request(
            Method::from_bytes(method.as_bytes()).unwrap(),
            format!("{base}{path}"),
        )
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// The reason a router path is not an operation, when it is exempt.
fn exemption(path: &str) -> Option<&'static str> {
    NOT_OPERATIONS
        .iter()
        .find(|(exempt, _)| {
            if exempt.ends_with('/') && exempt.len() > 1 {
                path.starts_with(exempt)
            } else {
                path == *exempt
            }
        })
        .map(|(_, why)| *why)
}

#[tokio::test]
async fn every_route_has_an_operation_and_every_operation_a_route() {
    // The app is built here rather than through TestApp so its router can be read before it
    // serves; the probes then go to that very router.
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let cwd = tempfile::tempdir().unwrap();
    let env = [
        ("SVC_SERVER__PORT", "0"),
        ("SVC_TENANT__DEFAULT_TENANT_SLUG", "default"),
        ("SVC_OPENAPI__ENABLED", "true"),
        ("SVC_DYNAMIC_REGISTRATION__ENABLED", "true"),
        ("SVC_CIBA__ENABLED", "true"),
        ("SVC_SCIM__ENABLED", "true"),
        ("SVC_ENTERPRISE_SSO__ENABLED", "true"),
        ("SVC_SOCIAL__ENABLED", "true"),
    ];
    let sources = svc_config::Sources {
        explicit_file: None,
        cwd: cwd.path().to_path_buf(),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    };
    let loaded = svc_config::load(&sources).unwrap();
    let app = svc_runtime::App::build(&loaded, svc_runtime::BuildOptions::default())
        .await
        .unwrap();
    let debug = format!("{:?}", app.router());
    let routes = router_paths(&debug);
    assert!(
        routes.len() >= 20,
        "only {} paths read from the router's Debug text (has axum's format changed?): \
         {routes:?}\n{debug}",
        routes.len()
    );
    let running = app.start().await.unwrap();
    let base = running.url();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let doc: Value = client
        .get(format!("{base}/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let documented = operations(&doc);
    let documented_shapes: BTreeSet<(String, String)> = documented
        .iter()
        .map(|(m, p)| (m.clone(), shape(p)))
        .collect();
    let mut failures = Vec::new();

    // Document → router: each operation reaches a route that takes its method.
    for (method, path) in &documented {
        let url = fill(path, &path_examples(&doc, path, method));
        let (status, body) = probe(&client, &base, method, &url).await;
        if status == 405 || (status == 404 && body.contains(FALLBACK_404)) {
            failures.push(format!(
                "operation {method} {path} has no route: {method} {url} → {status} {body}"
            ));
        }
    }

    // Router → document: each method a route answers is an operation.
    let mut exempted = BTreeMap::new();
    let mut probed = 0;
    for path in &routes {
        if let Some(why) = exemption(path) {
            exempted.insert(path.clone(), why);
            continue;
        }
        let url = fill(path, &BTreeMap::new());
        for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
            let (status, body) = probe(&client, &base, method, &url).await;
            probed += 1;
            if status == 405 {
                continue;
            }
            if status == 404 && body.contains(FALLBACK_404) {
                failures.push(format!(
                    "route {path} answers the router's 404 fallback: {method} {url} → {body}"
                ));
                continue;
            }
            if !documented_shapes.contains(&(method.to_owned(), shape(path))) {
                failures.push(format!(
                    "route {method} {path} is served but not in the document: {method} {url} → \
                     {status} {}",
                    body.chars().take(200).collect::<String>()
                ));
            }
        }
    }
    eprintln!(
        "parity: {} operations in the document, {} router paths, {probed} router probes; \
         not operations by design:",
        documented.len(),
        routes.len()
    );
    for (path, why) in &exempted {
        eprintln!("  {path}: {why}");
    }
    running.shutdown().await.unwrap();
    assert!(
        failures.is_empty(),
        "the document and the router disagree ({} findings):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
