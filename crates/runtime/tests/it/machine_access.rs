//! Machine access end to end, as a new user tries it: an operator creates a tenant, the tenant's
//! management application obtains a client_credentials token on the tenant's host, registers and
//! lists applications, and every refusal the spec names comes back precisely.

use crate::binary;
use base64::Engine;
use serde_json::{Value, json};
use svc_testkit::{BACKENDS, Backend, Process, TestApp};

/// Creates an operator token with the real CLI against the app's database.
async fn operator_token(app: &TestApp) -> String {
    let work = tempfile::tempdir().unwrap();
    let mut env: Vec<(&str, &str)> = Vec::new();
    let db;
    match &app.database_url {
        Some(url) => {
            db = url.clone();
            env.push(("DATABASE_URL", &db));
        }
        None => {
            db = format!("sqlite://{}", app.sqlite_path().display());
            env.push(("DATABASE_URL", &db));
        }
    }
    let exit = Process::run(
        binary(),
        work.path(),
        &["operator", "create-token", "--name", "e2e"],
        &env,
    )
    .await;
    assert_eq!(exit.code, Some(0), "{}\n{}", exit.stdout, exit.stderr);
    let token = exit
        .stdout
        .lines()
        .find(|l| l.starts_with("svcop_"))
        .expect("token printed once")
        .trim()
        .to_owned();
    assert!(
        !exit.stderr.contains(&token),
        "the token is printed on stdout only, once"
    );
    token
}

struct Tenant {
    host: String,
    client_id: String,
    client_secret: String,
}

async fn create_tenant(app: &TestApp, operator: &str, slug: &str) -> Tenant {
    let response = app
        .request(reqwest::Method::POST, "/api/v1/control-plane/tenants")
        .bearer_auth(operator)
        .json(&json!({"slug": slug, "display_name": slug.to_uppercase()}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["tenant"]["slug"], slug);
    let port = app.url.rsplit(':').next().unwrap();
    Tenant {
        host: format!("{slug}.localhost:{port}"),
        client_id: body["management_application"]["client_id"]
            .as_str()
            .unwrap()
            .to_owned(),
        client_secret: body["management_application"]["client_secret"]
            .as_str()
            .unwrap()
            .to_owned(),
    }
}

async fn token(app: &TestApp, tenant: &Tenant, scope: Option<&str>) -> reqwest::Response {
    let mut form = vec![("grant_type", "client_credentials")];
    if let Some(scope) = scope {
        form.push(("scope", scope));
    }
    app.request(reqwest::Method::POST, "/oauth/token")
        .header("host", &tenant.host)
        .basic_auth(&tenant.client_id, Some(&tenant.client_secret))
        .form(&form)
        .send()
        .await
        .unwrap()
}

async fn access_token(app: &TestApp, tenant: &Tenant, scope: Option<&str>) -> String {
    let response = token(app, tenant, scope).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["cache-control"], "no-store");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["token_type"], "Bearer");
    assert!(
        body.get("refresh_token").is_none(),
        "never a refresh token for client_credentials"
    );
    body["access_token"].as_str().unwrap().to_owned()
}

fn env() -> Vec<(&'static str, &'static str)> {
    vec![("SVC_SERVER__BASE_DOMAIN", "localhost")]
}

#[tokio::test]
async fn a_new_user_creates_a_tenant_gets_a_token_and_manages_applications() {
    for backend in BACKENDS {
        let app = TestApp::spawn_with(backend, &env()).await;
        let operator = operator_token(&app).await;
        let acme = create_tenant(&app, &operator, "acme").await;
        let globex = create_tenant(&app, &operator, "globex").await;
        let token = access_token(&app, &acme, None).await;

        // Create and list an application on acme's host.
        let created = app
            .request(reqwest::Method::POST, "/api/v1/applications")
            .header("host", &acme.host)
            .bearer_auth(&token)
            .json(&json!({
                "name": "Billing backend",
                "redirect_uris": [],
                "grant_types": ["client_credentials"],
                "token_endpoint_auth_method": "client_secret_post",
                "allowed_scopes": ["invoices:read"],
                "api_audience": "https://billing.example.com",
                "first_party": true,
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201, "{backend:?}");
        let created: Value = created.json().await.unwrap();
        assert!(
            created["client_secret"]
                .as_str()
                .unwrap()
                .starts_with("cs_")
        );
        let listed: Value = app
            .request(reqwest::Method::GET, "/api/v1/applications")
            .header("host", &acme.host)
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let ids: Vec<&str> = listed["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["client_id"].as_str().unwrap())
            .collect();
        assert!(
            ids.contains(&created["client_id"].as_str().unwrap()),
            "{listed}"
        );
        assert!(
            !listed.to_string().contains("secret_hash"),
            "never the stored hash"
        );

        // The new application gets its own token, with its own audience and scopes.
        let billing = Tenant {
            host: acme.host.clone(),
            client_id: created["client_id"].as_str().unwrap().to_owned(),
            client_secret: created["client_secret"].as_str().unwrap().to_owned(),
        };
        let post_token = app
            .request(reqwest::Method::POST, "/oauth/token")
            .header("host", &billing.host)
            .form(&[
                ("grant_type", "client_credentials"),
                ("client_id", &billing.client_id),
                ("client_secret", &billing.client_secret),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(post_token.status(), 200);
        // A token for another audience (the billing API) is refused by the management API.
        let billing_token: Value = post_token.json().await.unwrap();
        let wrong_audience = app
            .request(reqwest::Method::GET, "/api/v1/applications")
            .header("host", &acme.host)
            .bearer_auth(billing_token["access_token"].as_str().unwrap())
            .send()
            .await
            .unwrap();
        assert_eq!(wrong_audience.status(), 401, "aud is checked before scope");

        // The same management token is refused on another tenant's host.
        let foreign = app
            .request(reqwest::Method::GET, "/api/v1/applications")
            .header("host", &globex.host)
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(foreign.status(), 401, "signed by acme's keys, not globex's");
        // Another tenant's application id is simply not found.
        let globex_token = access_token(&app, &globex, None).await;
        let probe = app
            .request(
                reqwest::Method::GET,
                &format!("/api/v1/applications/{}", billing.client_id),
            )
            .header("host", &globex.host)
            .bearer_auth(&globex_token)
            .send()
            .await
            .unwrap();
        assert_eq!(probe.status(), 404);

        // Without a token: 401 with a Bearer challenge; without the scope: 403 insufficient_scope.
        let anonymous = app
            .request(reqwest::Method::GET, "/api/v1/applications")
            .header("host", &acme.host)
            .send()
            .await
            .unwrap();
        assert_eq!(anonymous.status(), 401);
        assert!(
            anonymous.headers()["www-authenticate"]
                .to_str()
                .unwrap()
                .starts_with("Bearer")
        );
        let read_only = access_token(&app, &acme, Some("applications:read")).await;
        let refused = app
            .request(reqwest::Method::POST, "/api/v1/applications")
            .header("host", &acme.host)
            .bearer_auth(&read_only)
            .json(&json!({"name": "x", "grant_types": ["client_credentials"], "token_endpoint_auth_method": "client_secret_basic", "allowed_scopes": [], "redirect_uris": [], "first_party": false}))
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 403);
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["error"], "insufficient_scope");

        // The audit log recorded the creation, attributed to the management client.
        let audit_token = access_token(&app, &acme, Some("audit:read")).await;
        let audit: Value = app
            .request(
                reqwest::Method::GET,
                "/api/v1/audit-logs?action=application.created",
            )
            .header("host", &acme.host)
            .bearer_auth(&audit_token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let entry = &audit["items"][0];
        assert_eq!(entry["actor"], format!("client:{}", acme.client_id));
        assert_eq!(entry["target"], billing.client_id);
        assert!(
            entry["request_id"].is_string() && entry["client_ip"] == "127.0.0.1",
            "{entry}"
        );
        app.shutdown().await;
    }
}

#[tokio::test]
async fn access_tokens_verify_with_an_independent_jose_library_against_discovered_keys() {
    let _ = jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.install_default();
    let app = TestApp::spawn_with(Backend::Postgres, &env()).await;
    let operator = operator_token(&app).await;
    let acme = create_tenant(&app, &operator, "acme").await;
    let token = access_token(&app, &acme, Some("applications:read")).await;
    let discovery: Value = app
        .request(reqwest::Method::GET, "/.well-known/openid-configuration")
        .header("host", &acme.host)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let issuer = discovery["issuer"].as_str().unwrap().to_owned();
    let jwks_path = discovery["jwks_uri"].as_str().unwrap().replace(&issuer, "");
    let jwks: jsonwebtoken::jwk::JwkSet = app
        .request(reqwest::Method::GET, &jwks_path)
        .header("host", &acme.host)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let header = jsonwebtoken::decode_header(&token).unwrap();
    assert_eq!(header.typ.as_deref(), Some("at+jwt"));
    assert_eq!(header.alg, jsonwebtoken::Algorithm::ES256);
    let key =
        jsonwebtoken::DecodingKey::from_jwk(jwks.find(header.kid.as_deref().unwrap()).unwrap())
            .unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.set_issuer(&[&issuer]);
    validation.set_audience(&[format!("{issuer}/api/v1")]);
    let claims = jsonwebtoken::decode::<Value>(&token, &key, &validation)
        .unwrap()
        .claims;
    assert_eq!(claims["client_id"], acme.client_id);
    assert_eq!(claims["sub"], acme.client_id);
    assert_eq!(claims["subject_type"], "system");
    assert_eq!(claims["scope"], "applications:read");
    assert!(claims["tenant_id"].as_str().unwrap().starts_with("ten_"));
    assert!(claims["jti"].is_string() && claims["nbf"].is_number() && claims["iat"].is_number());
    app.shutdown().await;
}

/// A hostile token request: form, Basic credentials, expected status and error code.
type Case = (
    Vec<(&'static str, String)>,
    Option<(String, String)>,
    u16,
    &'static str,
);

#[tokio::test]
async fn hostile_token_requests_get_precise_errors() {
    let app = TestApp::spawn_with(Backend::Sqlite, &env()).await;
    let operator = operator_token(&app).await;
    let acme = create_tenant(&app, &operator, "acme").await;
    let send = |form: Vec<(&'static str, String)>, basic: Option<(String, String)>| {
        let mut request = app
            .request(reqwest::Method::POST, "/oauth/token")
            .header("host", &acme.host)
            .form(&form);
        if let Some((id, secret)) = basic {
            request = request.basic_auth(id, Some(secret));
        }
        request.send()
    };
    let creds = Some((acme.client_id.clone(), acme.client_secret.clone()));
    let cases: Vec<Case> = vec![
        (
            vec![("grant_type", "password".into())],
            creds.clone(),
            400,
            "unsupported_grant_type",
        ),
        (vec![], creds.clone(), 400, "invalid_request"),
        (
            vec![
                ("grant_type", "client_credentials".into()),
                ("grant_type", "client_credentials".into()),
            ],
            creds.clone(),
            400,
            "invalid_request",
        ),
        (
            vec![("grant_type", "client_credentials".into())],
            Some((acme.client_id.clone(), "cs_wrong".into())),
            401,
            "invalid_client",
        ),
        (
            vec![("grant_type", "client_credentials".into())],
            Some(("app_01jd0000000000000000000000".into(), "cs_x".into())),
            401,
            "invalid_client",
        ),
        (
            vec![
                ("grant_type", "client_credentials".into()),
                ("client_id", acme.client_id.clone()),
                ("client_secret", acme.client_secret.clone()),
            ],
            None,
            401,
            "invalid_client",
        ),
        (
            vec![
                ("grant_type", "client_credentials".into()),
                ("scope", "root:everything".into()),
            ],
            creds.clone(),
            400,
            "invalid_scope",
        ),
        (
            vec![
                ("grant_type", "client_credentials".into()),
                ("scope", "a  b".into()),
            ],
            creds.clone(),
            400,
            "invalid_scope",
        ),
        (
            vec![
                ("grant_type", "authorization_code".into()),
                ("code", "x".into()),
            ],
            creds.clone(),
            400,
            "unauthorized_client",
        ),
        (
            vec![
                ("grant_type", "client_credentials".into()),
                ("resource", "https://elsewhere.example".into()),
            ],
            creds.clone(),
            400,
            "invalid_target",
        ),
    ];
    for (form, basic, status, error) in cases {
        let described = format!("{form:?}");
        let response = send(form, basic).await.unwrap();
        assert_eq!(response.status().as_u16(), status, "{described}");
        assert_eq!(response.headers()["cache-control"], "no-store");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"], error, "{described}: {body}");
        assert!(
            !body.to_string().contains(&acme.client_secret),
            "secrets are never echoed"
        );
    }
    // A JSON body is not a token request.
    let json_body = app
        .request(reqwest::Method::POST, "/oauth/token")
        .header("host", &acme.host)
        .basic_auth(&acme.client_id, Some(&acme.client_secret))
        .json(&json!({"grant_type": "client_credentials"}))
        .send()
        .await
        .unwrap();
    assert_eq!(json_body.status(), 400);
    // Basic with a malformed header.
    let garbage = app
        .request(reqwest::Method::POST, "/oauth/token")
        .header("host", &acme.host)
        .header(
            "authorization",
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode("no-colon")
            ),
        )
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    assert_eq!(garbage.status(), 401);
    app.shutdown().await;
}

#[tokio::test]
async fn control_plane_rules_conflicts_idempotency_and_suspension() {
    let app = TestApp::spawn_with(Backend::Postgres, &env()).await;
    let operator = operator_token(&app).await;
    let unauthenticated = app
        .request(reqwest::Method::GET, "/api/v1/control-plane/tenants")
        .send()
        .await
        .unwrap();
    assert_eq!(unauthenticated.status(), 401);
    let wrong = app
        .request(reqwest::Method::GET, "/api/v1/control-plane/tenants")
        .bearer_auth("svcop_not-a-real-token")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);

    let acme = create_tenant(&app, &operator, "acme").await;
    let duplicate = app
        .request(reqwest::Method::POST, "/api/v1/control-plane/tenants")
        .bearer_auth(&operator)
        .json(&json!({"slug": "acme", "display_name": "Again"}))
        .send()
        .await
        .unwrap();
    assert_eq!(duplicate.status(), 409);
    assert_eq!(
        duplicate.json::<Value>().await.unwrap()["error"],
        "conflict"
    );
    for bad in [
        json!({"slug": "Not A Label", "display_name": "x"}),
        json!({"slug": "ok"}),
        json!({"slug": "ok", "display_name": "x", "extra": 1}),
    ] {
        let response = app
            .request(reqwest::Method::POST, "/api/v1/control-plane/tenants")
            .bearer_auth(&operator)
            .json(&bad)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400, "{bad}");
    }

    // Idempotency: same key + same body replays; same key + other body conflicts.
    let post = |body: Value| {
        app.request(reqwest::Method::POST, "/api/v1/control-plane/tenants")
            .bearer_auth(&operator)
            .header("idempotency-key", "create-initech-1")
            .json(&body)
            .send()
    };
    let first = post(json!({"slug": "initech", "display_name": "Initech"}))
        .await
        .unwrap();
    assert_eq!(first.status(), 201);
    let first: Value = first.json().await.unwrap();
    let replay = post(json!({"slug": "initech", "display_name": "Initech"}))
        .await
        .unwrap();
    assert_eq!(replay.status(), 201);
    assert_eq!(replay.headers()["idempotent-replayed"], "true");
    assert_eq!(
        replay.json::<Value>().await.unwrap()["tenant"]["id"],
        first["tenant"]["id"]
    );
    let other = post(json!({"slug": "initech2", "display_name": "Other"}))
        .await
        .unwrap();
    assert_eq!(other.status(), 409);

    // Suspension: every surface of the tenant answers 403 forbidden.
    let tenant_id = {
        let list: Value = app
            .request(reqwest::Method::GET, "/api/v1/control-plane/tenants")
            .bearer_auth(&operator)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["slug"] == "acme")
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let suspended = app
        .request(
            reqwest::Method::POST,
            &format!("/api/v1/control-plane/tenants/{tenant_id}/suspend"),
        )
        .bearer_auth(&operator)
        .send()
        .await
        .unwrap();
    assert_eq!(suspended.status(), 200);
    tokio::time::sleep(std::time::Duration::from_secs(6)).await; // the tenant cache's TTL
    for (method, path) in [
        (reqwest::Method::POST, "/oauth/token"),
        (reqwest::Method::GET, "/.well-known/openid-configuration"),
        (reqwest::Method::GET, "/api/v1/applications"),
    ] {
        let response = app
            .request(method, path)
            .header("host", &acme.host)
            .basic_auth(&acme.client_id, Some(&acme.client_secret))
            .form(&[("grant_type", "client_credentials")])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 403, "{path}");
    }
    let deleted = app
        .request(
            reqwest::Method::DELETE,
            &format!("/api/v1/control-plane/tenants/{tenant_id}"),
        )
        .bearer_auth(&operator)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    let gone = app
        .request(
            reqwest::Method::GET,
            &format!("/api/v1/control-plane/tenants/{tenant_id}"),
        )
        .bearer_auth(&operator)
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    app.shutdown().await;
}

#[tokio::test]
async fn the_token_endpoint_is_throttled_per_client_with_retry_after() {
    let mut env = env();
    env.extend([
        ("SVC_SERVER__ENDPOINT_THROTTLE__ENABLED", "true"),
        ("SVC_SERVER__ENDPOINT_THROTTLE__REQUESTS_PER_SECOND", "1"),
        ("SVC_SERVER__ENDPOINT_THROTTLE__BURST", "3"),
    ]);
    let app = TestApp::spawn_with(Backend::Sqlite, &env).await;
    let operator = operator_token(&app).await;
    let acme = create_tenant(&app, &operator, "acme").await;
    let mut statuses = Vec::new();
    for _ in 0..5 {
        let response = token(&app, &acme, None).await;
        statuses.push(response.status().as_u16());
        if response.status() == 429 {
            assert!(response.headers().contains_key("retry-after"));
            assert_eq!(
                response.json::<Value>().await.unwrap()["error"],
                "rate_limited"
            );
        }
    }
    assert_eq!(&statuses[..3], &[200, 200, 200]);
    assert!(statuses[3..].contains(&429), "{statuses:?}");
    app.shutdown().await;
}

#[tokio::test]
async fn metrics_accept_a_metrics_read_service_token_and_nothing_less() {
    let app = TestApp::spawn_with(Backend::Sqlite, &env()).await;
    let operator = operator_token(&app).await;
    let acme = create_tenant(&app, &operator, "acme").await;
    let admin = access_token(&app, &acme, None).await;
    let scraper: Value = app
        .request(reqwest::Method::POST, "/api/v1/applications")
        .header("host", &acme.host)
        .bearer_auth(&admin)
        .json(&json!({
            "name": "Prometheus",
            "redirect_uris": [],
            "grant_types": ["client_credentials"],
            "token_endpoint_auth_method": "client_secret_basic",
            "allowed_scopes": ["metrics:read"],
            "first_party": true,
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let scraper = Tenant {
        host: acme.host.clone(),
        client_id: scraper["client_id"].as_str().unwrap().to_owned(),
        client_secret: scraper["client_secret"].as_str().unwrap().to_owned(),
    };
    let metrics_token = access_token(&app, &scraper, Some("metrics:read")).await;
    let scrape = |token: Option<String>| {
        let mut request = app
            .request(reqwest::Method::GET, "/metrics")
            .header("host", &acme.host);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    assert_eq!(scrape(None).await.unwrap().status(), 401);
    assert_eq!(
        scrape(Some(admin)).await.unwrap().status(),
        403,
        "no metrics:read scope"
    );
    let ok = scrape(Some(metrics_token)).await.unwrap();
    assert_eq!(ok.status(), 200);
    assert!(ok.text().await.unwrap().contains("svc_http_requests_total"));
    app.shutdown().await;
}

#[tokio::test]
async fn the_zero_config_default_tenant_gets_management_credentials_from_an_operator() {
    for backend in BACKENDS {
        let app = TestApp::spawn(backend).await;
        let operator = operator_token(&app).await;
        let tenants: Value = app
            .request(reqwest::Method::GET, "/api/v1/control-plane/tenants")
            .bearer_auth(&operator)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let default = tenants["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["slug"] == "default")
            .expect("default tenant");
        let id = default["id"].as_str().unwrap();
        let issued = app
            .request(
                reqwest::Method::POST,
                &format!("/api/v1/control-plane/tenants/{id}/management-credentials"),
            )
            .bearer_auth(&operator)
            .send()
            .await
            .unwrap();
        assert_eq!(issued.status(), 200);
        let issued: Value = issued.json().await.unwrap();
        let host = app.url.trim_start_matches("http://").to_owned();
        let tenant = Tenant {
            host,
            client_id: issued["client_id"].as_str().unwrap().to_owned(),
            client_secret: issued["client_secret"].as_str().unwrap().to_owned(),
        };
        let token = access_token(&app, &tenant, Some("applications:read")).await;
        let apps: Value = app
            .request(reqwest::Method::GET, "/api/v1/applications")
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(apps["items"][0]["is_management"], true, "{apps}");
        // Issuing again invalidates the previous secret at once.
        app.request(
            reqwest::Method::POST,
            &format!("/api/v1/control-plane/tenants/{id}/management-credentials"),
        )
        .bearer_auth(&operator)
        .send()
        .await
        .unwrap();
        assert_eq!(token_status(&app, &tenant).await, 401);
        app.shutdown().await;
    }
}

async fn token_status(app: &TestApp, tenant: &Tenant) -> u16 {
    token(app, tenant, None).await.status().as_u16()
}

#[tokio::test]
async fn private_key_jwt_clients_authenticate_with_single_use_assertions() {
    let app = TestApp::spawn_with(Backend::Postgres, &env()).await;
    let operator = operator_token(&app).await;
    let acme = create_tenant(&app, &operator, "acme").await;
    let admin = access_token(&app, &acme, None).await;
    let key = svc_crypto::SigningKey::generate(svc_domain::SigningAlg::Es256).unwrap();
    let created: Value = app
        .request(reqwest::Method::POST, "/api/v1/applications")
        .header("host", &acme.host)
        .bearer_auth(&admin)
        .json(&json!({
            "name": "Signed client",
            "redirect_uris": [],
            "grant_types": ["client_credentials"],
            "token_endpoint_auth_method": "private_key_jwt",
            "allowed_scopes": ["reports:read"],
            "api_audience": "https://reports.example.com",
            "first_party": false,
            "jwks": {"keys": [key.public_jwk()]},
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let client_id = created["client_id"].as_str().expect("created").to_owned();
    assert!(
        created.get("client_secret").is_none(),
        "private_key_jwt clients get no secret"
    );
    let issuer = format!("http://{}", acme.host);
    let now = svc_domain::Clock::now(&svc_domain::SystemClock).unix_timestamp();
    let assertion = |jti: &str, exp: i64| {
        key.sign_jwt("JWT", &json!({"iss": client_id, "sub": client_id, "aud": issuer, "jti": jti, "iat": now, "exp": exp}))
            .unwrap()
    };
    let send = |assertion: String| {
        app.request(reqwest::Method::POST, "/oauth/token")
            .header("host", &acme.host)
            .form(&[
                ("grant_type", "client_credentials"),
                (
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                ),
                ("client_assertion", assertion.as_str()),
            ])
            .send()
    };
    let ok = send(assertion("jti-1", now + 60)).await.unwrap();
    assert_eq!(ok.status(), 200);
    let body: Value = ok.json().await.unwrap();
    assert_eq!(body["scope"], "reports:read");
    for (case, assertion) in [
        ("replayed jti", assertion("jti-1", now + 60)),
        ("expired", assertion("jti-2", now - 10)),
        ("too long-lived", assertion("jti-3", now + 3600)),
    ] {
        let refused = send(assertion).await.unwrap();
        assert_eq!(refused.status(), 401, "{case}");
        assert_eq!(
            refused.json::<Value>().await.unwrap()["error"],
            "invalid_client",
            "{case}"
        );
    }
    // alg none: an unsigned assertion naming the client.
    let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let unsigned = format!(
        "{}.{}.",
        b64(json!({"alg": "none", "typ": "JWT"})),
        b64(
            json!({"iss": client_id, "sub": client_id, "aud": issuer, "jti": "jti-4", "exp": now + 60})
        )
    );
    assert_eq!(send(unsigned).await.unwrap().status(), 401);
    app.shutdown().await;
}
