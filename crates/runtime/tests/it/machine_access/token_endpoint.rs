//! The token endpoint end to end: access tokens verified with an independent JOSE library,
//! precise errors for hostile requests, per-client throttling, and `private_key_jwt` clients.

use super::support::*;
use base64::Engine;
use serde_json::{Value, json};
use svc_testkit::{Backend, TestApp};

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
    // An oversized body is refused before anything is parsed or written.
    let oversized = app
        .request(reqwest::Method::POST, "/oauth/token")
        .header("host", &acme.host)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!(
            "grant_type=client_credentials&pad={}",
            "x".repeat(2 * 1024 * 1024)
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(oversized.status(), 413);
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
