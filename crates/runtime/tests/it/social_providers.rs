//! Social sign-in providers through the management API (issue 20 item 3), on both backends:
//! tenant `acme` configures an `oidc` provider, a self-managed `gitlab`, a GitHub Enterprise
//! Server `github` and an `oauth2` server, the OpenID ones read from a discovery server the test
//! runs on 127.0.0.1 (the guarded egress allows loopback outside production); lists, reads,
//! replaces and removes them; secrets never come back; every refusal names its member (slug,
//! preset, a discovery document naming another issuer, scopes without `openid`, plain http to
//! another host, an oversized secret, Apple's key and ids); the 17th provider is refused;
//! `globex` sees none of acme's; scopes are enforced; a person's social links are listed and a
//! missing one is not found. With `[social]` off the routes and their OpenAPI operations do
//! not exist, with `[generic_oauth]` off the generic presets are refused, and
//! `[generic_oauth]` without `[social]` stops the start.

use crate::common::{CreatedTenant, create_tenant, management_token, operator_token};
use reqwest::Method as M;
use serde_json::{Value, json};
use svc_testkit::{BACKENDS, TestApp};

const BASE: &str = "/api/v1/social-providers";
const SECRET: &str = "upstream-secret-never-shown";

/// A throwaway P-256 key (PKCS#8 PEM), as Apple's `.p8` files are.
const P256_PEM: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgC0t9GnfmOLA3nAFT
nMU3w45MYamErgEkgZLE9TtGx2OhRANCAATLChInrXAU6PoStGVWSq7H7djRjRZc
9wm4nJ73XM3tJaIZjE2Hy4PUkwR3qS9ZysmPJnZvXBhbncbWH6b6X+jC
-----END PRIVATE KEY-----
";
/// A throwaway Ed25519 key: PKCS#8 too, but not what Apple signs with.
const ED25519_PEM: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIE/JaMXjRcoiy1SH30b1B0z1Gy03ktQRR5xd/Hts9DwC
-----END PRIVATE KEY-----
";

/// Discovery documents on 127.0.0.1: `{origin}` and `{origin}/{realm}` are issuers, each
/// naming itself, except `{origin}/liar`, whose document names another issuer.
struct FakeDiscovery {
    origin: String,
}

impl FakeDiscovery {
    async fn start() -> Self {
        use axum::extract::Path;
        use axum::routing::get;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let document = |issuer: String| {
            json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"),
                "jwks_uri": format!("{issuer}/jwks"),
                "userinfo_endpoint": format!("{issuer}/userinfo"),
                "response_types_supported": ["code"],
            })
        };
        let (root, realm) = (origin.clone(), origin.clone());
        let router = axum::Router::new()
            .route(
                "/.well-known/openid-configuration",
                get(move || async move { axum::Json(document(root)) }),
            )
            .route(
                "/{realm}/.well-known/openid-configuration",
                get(move |Path(name): Path<String>| async move {
                    let issuer = if name == "liar" {
                        "https://evil.example".to_owned()
                    } else {
                        format!("{realm}/{name}")
                    };
                    axum::Json(document(issuer))
                }),
            );
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        Self { origin }
    }
}

/// Calls the API on one tenant's host with one token.
struct Api<'a> {
    app: &'a TestApp,
    tenant: &'a CreatedTenant,
    token: String,
}

impl Api<'_> {
    /// The status and the answer as text (to search for secrets) and JSON.
    async fn call(&self, method: M, path: &str, body: Option<Value>) -> (u16, String, Value) {
        let mut request = self
            .app
            .request(method, path)
            .header("host", &self.tenant.host)
            .bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let value = serde_json::from_str(&text).unwrap_or(Value::Null);
        (status, text, value)
    }

    async fn put(&self, slug: &str, body: Value) -> (u16, Value) {
        let (status, text, value) = self
            .call(M::PUT, &format!("{BASE}/{slug}"), Some(body))
            .await;
        assert!(!text.contains(SECRET), "a secret came back: {text}");
        assert!(!text.contains("MIGHAgEAMBMG"), "a key came back: {text}");
        (status, value)
    }

    /// The member a refused body names (its `detail` starts with it).
    async fn refused(&self, slug: &str, body: Value) -> String {
        let (status, problem) = self.put(slug, body.clone()).await;
        assert_eq!(status, 400, "{body}: {problem}");
        problem["detail"].as_str().unwrap_or_default().to_owned()
    }
}

/// An app serving tenants under `localhost` with `env`.
async fn spawn(backend: svc_testkit::Backend, env: &[(&str, &str)]) -> TestApp {
    let mut all = vec![
        ("SVC_SERVER__BASE_DOMAIN", "localhost"),
        ("SVC_AUTH__ARGON2_MEMORY_KIB", "8192"),
        ("SVC_AUTH__ARGON2_ITERATIONS", "1"),
    ];
    all.extend_from_slice(env);
    TestApp::spawn_with(backend, &all).await
}

fn secret(preset: &str) -> Value {
    json!({"preset": preset, "client_id": "svc-client", "client_secret": SECRET})
}

fn with(mut body: Value, key: &str, value: Value) -> Value {
    body[key] = value;
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn social_providers_are_configured_read_replaced_and_removed() {
    for backend in BACKENDS {
        let app = spawn(
            backend,
            &[
                ("SVC_SOCIAL__ENABLED", "true"),
                ("SVC_GENERIC_OAUTH__ENABLED", "true"),
            ],
        )
        .await;
        let operator = operator_token(&app).await;
        let (acme, globex) = (
            create_tenant(&app, &operator, "acme").await,
            create_tenant(&app, &operator, "globex").await,
        );
        let api = Api {
            app: &app,
            tenant: &acme,
            token: management_token(&app, &acme, None).await,
        };
        let other = Api {
            app: &app,
            tenant: &globex,
            token: management_token(&app, &globex, None).await,
        };
        let fake = FakeDiscovery::start().await;
        let origin = &fake.origin;
        let redirect = format!("http://{}/auth/social/callback", acme.host);

        // An OpenID provider by its issuer: discovery read now, endpoints kept.
        let corp = json!({"preset": "oidc", "client_id": "svc-client", "client_secret": SECRET,
                          "display_name": "Corp", "issuer": format!("{origin}/corp"),
                          "response_mode": "form_post"});
        let (status, view) = api.put("corp", corp.clone()).await;
        assert_eq!(status, 201, "{view}");
        assert_eq!(view["issuer"], format!("{origin}/corp"));
        assert_eq!(view["jwks_uri"], format!("{origin}/corp/jwks"));
        assert_eq!(view["token_endpoint"], format!("{origin}/corp/token"));
        assert_eq!(view["token_endpoint_auth_method"], "client_secret_basic");
        assert_eq!(view["scopes"], json!(["openid", "email", "profile"]));
        assert_eq!(view["response_mode"], "form_post");
        assert_eq!(view["redirect_uri"], redirect);
        assert_eq!(view["enabled"], true);

        // A self-managed GitLab: its base URL is its issuer.
        let gitlab = with(
            secret("gitlab"),
            "base_url",
            json!(format!("{origin}/gitlab")),
        );
        let (status, view) = api.put("gitlab", gitlab).await;
        assert_eq!(status, 201, "{view}");
        assert_eq!(view["issuer"], format!("{origin}/gitlab"));
        assert_eq!(view["display_name"], "GitLab");

        // GitHub Enterprise Server: fixed paths under its base URL, no discovery.
        let github = with(
            secret("github"),
            "base_url",
            json!("https://gh.corp.example"),
        );
        let (status, view) = api.put("github", github).await;
        assert_eq!(status, 201, "{view}");
        assert_eq!(
            view["authorization_endpoint"],
            "https://gh.corp.example/login/oauth/authorize"
        );
        assert_eq!(
            view["userinfo_endpoint"],
            "https://gh.corp.example/api/v3/user"
        );
        assert_eq!(
            view["emails_endpoint"],
            "https://gh.corp.example/api/v3/user/emails"
        );
        assert_eq!(view["token_endpoint_auth_method"], "client_secret_post");
        assert_eq!(view["scopes"], json!(["read:user", "user:email"]));
        assert!(view.get("issuer").is_none() && view.get("jwks_uri").is_none());

        // Any OAuth 2.0 server by its endpoints.
        let oauth2 = json!({"preset": "oauth2", "client_id": "svc-client", "client_secret": SECRET,
                            "display_name": "Books", "scopes": ["profile"],
                            "token_endpoint_auth_method": "client_secret_post",
                            "authorization_endpoint": "https://books.example/oauth/authorize",
                            "token_endpoint": "https://books.example/oauth/token",
                            "userinfo_endpoint": "https://books.example/api/me"});
        let (status, view) = api.put("books", oauth2).await;
        assert_eq!(status, 201, "{view}");
        assert_eq!(view["userinfo_endpoint"], "https://books.example/api/me");

        // Listed by slug, read one by one; never a secret.
        let (status, text, list) = api.call(M::GET, BASE, None).await;
        assert_eq!(status, 200, "{list}");
        assert!(!text.contains(SECRET), "{text}");
        let slugs: Vec<&str> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["slug"].as_str().unwrap())
            .collect();
        assert_eq!(slugs, ["books", "corp", "github", "gitlab"]);
        let (status, text, read) = api.call(M::GET, &format!("{BASE}/corp"), None).await;
        assert_eq!((status, read["display_name"].as_str()), (200, Some("Corp")));
        assert!(!text.contains(SECRET) && !text.contains("sealed"), "{text}");

        // Replaced: 200, created_at kept; the secret is required again.
        let (status, replaced) = api
            .put("corp", with(corp.clone(), "enabled", json!(false)))
            .await;
        assert_eq!(status, 200, "{replaced}");
        assert_eq!(replaced["enabled"], false);
        assert_eq!(replaced["created_at"], read["created_at"]);
        let mut without = corp.clone();
        without.as_object_mut().unwrap().remove("client_secret");
        assert!(
            api.refused("corp", without)
                .await
                .starts_with("client_secret")
        );

        // Another tenant sees none of it.
        let (status, _, theirs) = other.call(M::GET, BASE, None).await;
        assert_eq!(
            (status, theirs["items"].as_array().map(Vec::len)),
            (200, Some(0))
        );
        assert_eq!(
            other.call(M::GET, &format!("{BASE}/corp"), None).await.0,
            404
        );
        assert_eq!(
            other.call(M::DELETE, &format!("{BASE}/corp"), None).await.0,
            404
        );

        // Every refusal names its member.
        let liar = with(corp.clone(), "issuer", json!(format!("{origin}/liar")));
        let cases: Vec<(&str, Value, &str)> = vec![
            ("Bad_Slug", secret("google"), "slug"),
            ("x", secret("facebook"), "preset"),
            ("x", liar, "issuer"),
            (
                "x",
                with(corp.clone(), "scopes", json!(["email"])),
                "scopes",
            ),
            (
                "x",
                with(corp.clone(), "issuer", json!("http://idp.example.com")),
                "issuer",
            ),
            (
                "x",
                with(secret("gitlab"), "base_url", json!("ftp://gl.example")),
                "base_url",
            ),
            (
                "x",
                with(secret("google"), "client_secret", json!("s".repeat(513))),
                "client_secret",
            ),
            (
                "x",
                with(secret("microsoft"), "directory", json!("not a directory")),
                "directory",
            ),
            ("x", with(secret("google"), "unknown", json!(1)), "unknown"),
        ];
        for (slug, body, field) in cases {
            let detail = api.refused(slug, body.clone()).await;
            assert!(detail.contains(field), "{body}: {detail}");
        }
        // Apple: only its validation (the real Apple is not reachable from a test).
        let key = json!({"team_id": "ABCDE12345", "key_id": "XYZ9876543", "private_key": P256_PEM});
        let apple =
            |key: Value| json!({"preset": "apple", "client_id": "com.acme.web", "apple": key});
        let cases: Vec<(Value, &str)> = vec![
            (
                apple(with(
                    key.clone(),
                    "private_key",
                    json!("-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----"),
                )),
                "apple.private_key",
            ),
            (
                apple(with(key.clone(), "private_key", json!(ED25519_PEM))),
                "apple.private_key",
            ),
            (
                with(apple(key.clone()), "client_secret", json!(SECRET)),
                "client_secret",
            ),
            (
                json!({"preset": "apple", "client_id": "com.acme.web"}),
                "apple",
            ),
            (
                apple(json!({"key_id": "XYZ9876543", "private_key": P256_PEM})),
                "team_id",
            ),
            (
                apple(with(key.clone(), "team_id", json!("lower12345"))),
                "apple.team_id",
            ),
        ];
        for (body, field) in cases {
            let detail = api.refused("apple", body.clone()).await;
            assert!(detail.contains(field), "{body}: {detail}");
        }

        // Scopes: policies:read reads, policies:write writes; neither without; no token, 401.
        let reader = Api {
            app: &app,
            tenant: &acme,
            token: management_token(&app, &acme, Some("policies:read")).await,
        };
        assert_eq!(reader.call(M::GET, BASE, None).await.0, 200);
        let (status, _, problem) = reader
            .call(M::PUT, &format!("{BASE}/x"), Some(secret("google")))
            .await;
        assert_eq!(
            (status, problem["error"].as_str()),
            (403, Some("insufficient_scope"))
        );
        assert_eq!(
            reader
                .call(M::DELETE, &format!("{BASE}/corp"), None)
                .await
                .0,
            403
        );
        let users_only = Api {
            app: &app,
            tenant: &acme,
            token: management_token(&app, &acme, Some("users:read")).await,
        };
        assert_eq!(users_only.call(M::GET, BASE, None).await.0, 403);
        let anonymous = app
            .request(M::GET, BASE)
            .header("host", &acme.host)
            .send()
            .await
            .unwrap();
        assert_eq!(anonymous.status().as_u16(), 401);

        // A person's links: none yet; removing a missing one, or another tenant's person's, 404.
        let (status, _, person) = api
            .call(
                M::POST,
                "/api/v1/tenant-users",
                Some(json!({"email": "grace@acme.example", "password": "correct horse battery"})),
            )
            .await;
        assert_eq!(status, 201, "{person}");
        let links = format!(
            "/api/v1/tenant-users/{}/social-links",
            person["id"].as_str().unwrap()
        );
        let (status, _, listed) = api.call(M::GET, &links, None).await;
        assert_eq!((status, listed), (200, json!({"items": []})));
        assert_eq!(
            api.call(M::DELETE, &format!("{links}/corp"), None).await.0,
            404
        );
        assert_eq!(
            api.call(M::DELETE, &format!("{links}/Not_A_Slug"), None)
                .await
                .0,
            404
        );
        assert_eq!(other.call(M::GET, &links, None).await.0, 404);
        assert_eq!(
            api.call(M::GET, "/api/v1/tenant-users/usr_nope/social-links", None)
                .await
                .0,
            404
        );
        assert_eq!(users_only.call(M::GET, &links, None).await.0, 200);
        assert_eq!(reader.call(M::GET, &links, None).await.0, 403);

        // Removed: 204, then not found.
        assert_eq!(
            api.call(M::DELETE, &format!("{BASE}/books"), None).await.0,
            204
        );
        assert_eq!(
            api.call(M::GET, &format!("{BASE}/books"), None).await.0,
            404
        );
        assert_eq!(
            api.call(M::DELETE, &format!("{BASE}/books"), None).await.0,
            404
        );

        // At most 16: three are left, thirteen more fit, the seventeenth is a conflict.
        let filler = with(
            secret("github"),
            "base_url",
            json!("https://gh.corp.example"),
        );
        for n in 0..13 {
            let (status, view) = api.put(&format!("gh{n}"), filler.clone()).await;
            assert_eq!(status, 201, "{n}: {view}");
        }
        let (status, problem) = api.put("one-more", filler.clone()).await;
        assert_eq!(status, 409, "{problem}");
        assert!(
            problem["detail"].as_str().unwrap().contains("16"),
            "{problem}"
        );
        let (status, _) = api.put("gh0", filler).await;
        assert_eq!(status, 200, "replacing one is no new provider");
        app.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn social_routes_exist_only_when_enabled_and_generic_presets_only_with_generic_oauth() {
    for backend in BACKENDS {
        let fake = FakeDiscovery::start().await;
        // Off: no routes, no operations.
        let app = spawn(backend, &[("SVC_OPENAPI__ENABLED", "true")]).await;
        let operator = operator_token(&app).await;
        let acme = create_tenant(&app, &operator, "acme").await;
        let api = Api {
            app: &app,
            tenant: &acme,
            token: management_token(&app, &acme, None).await,
        };
        assert_eq!(api.call(M::GET, BASE, None).await.0, 404);
        assert_eq!(api.put("google", secret("google")).await.0, 404);
        let (status, _, person) = api
            .call(
                M::POST,
                "/api/v1/tenant-users",
                Some(json!({"email": "ada@acme.example", "password": "correct horse battery"})),
            )
            .await;
        assert_eq!(status, 201, "{person}");
        let links = format!(
            "/api/v1/tenant-users/{}/social-links",
            person["id"].as_str().unwrap()
        );
        assert_eq!(api.call(M::GET, &links, None).await.0, 404);
        let (status, _, doc) = api.call(M::GET, "/openapi.json", None).await;
        assert_eq!(status, 200);
        let paths: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
        assert!(
            !paths.iter().any(|p| p.contains("social")),
            "no social operation is documented: {paths:?}"
        );
        app.shutdown().await;

        // On without [generic_oauth]: the named presets only.
        let app = spawn(
            backend,
            &[
                ("SVC_SOCIAL__ENABLED", "true"),
                ("SVC_OPENAPI__ENABLED", "true"),
            ],
        )
        .await;
        let operator = operator_token(&app).await;
        let acme = create_tenant(&app, &operator, "acme").await;
        let api = Api {
            app: &app,
            tenant: &acme,
            token: management_token(&app, &acme, None).await,
        };
        let oidc = json!({"preset": "oidc", "client_id": "c", "client_secret": SECRET,
                          "display_name": "Corp", "issuer": fake.origin});
        assert!(api.refused("corp", oidc).await.starts_with("preset"));
        let oauth2 = json!({"preset": "oauth2", "client_id": "c", "client_secret": SECRET,
                            "display_name": "Books",
                            "authorization_endpoint": "https://books.example/a",
                            "token_endpoint": "https://books.example/t",
                            "userinfo_endpoint": "https://books.example/me"});
        assert!(api.refused("books", oauth2).await.starts_with("preset"));
        let gitlab = with(
            secret("gitlab"),
            "base_url",
            json!(format!("{}/gl", fake.origin)),
        );
        assert_eq!(api.put("gitlab", gitlab).await.0, 201);
        let (status, _, doc) = api.call(M::GET, "/openapi.json", None).await;
        assert_eq!(status, 200);
        for path in [
            "/api/v1/social-providers",
            "/api/v1/social-providers/{slug}",
            "/api/v1/tenant-users/{id}/social-links",
            "/api/v1/tenant-users/{id}/social-links/{provider}",
        ] {
            assert!(doc["paths"][path].is_object(), "{path} is documented");
        }
        app.shutdown().await;

        // [generic_oauth] alone stops the start, naming the key.
        let refused = TestApp::try_spawn_with(backend, &[("SVC_GENERIC_OAUTH__ENABLED", "true")])
            .await
            .err()
            .expect("generic_oauth without social must not start");
        assert!(refused.contains("generic_oauth.enabled"), "{refused}");
    }
}
