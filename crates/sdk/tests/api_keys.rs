//! API keys at a resource server (`Validator::with_introspection`) against a stand-in issuer on
//! 127.0.0.1 that serves discovery and an RFC 7662 introspection endpoint: the endpoint is
//! discovered, asked with the resource server's Basic credentials, active answers go through
//! the same rules as a token's claims and are reused for the cache TTL only, inactive answers
//! and other token types are refused, and an unreachable endpoint is 503, not a refusal.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use svc_sdk::{Requirements, ValidationError, Validator};

const AUDIENCE: &str = "https://trips.example";
const TENANT: &str = "ten_01jd000000000000000000acme";
const KEY: &str = "svck_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
/// `rs:secret` in HTTP Basic.
const BASIC: &str = "Basic cnM6c2VjcmV0";

#[derive(Clone)]
struct Issuer {
    url: String,
    /// The answer for [`KEY`].
    answer: Arc<Mutex<Value>>,
    status: Arc<AtomicU16>,
    hits: Arc<AtomicUsize>,
}

async fn discovery(State(issuer): State<Issuer>) -> Json<Value> {
    Json(json!({
        "issuer": issuer.url,
        "jwks_uri": format!("{}/jwks", issuer.url),
        "introspection_endpoint": format!("{}/introspect", issuer.url),
    }))
}

async fn introspect(
    State(issuer): State<Issuer>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    issuer.hits.fetch_add(1, Ordering::SeqCst);
    let status = StatusCode::from_u16(issuer.status.load(Ordering::SeqCst)).unwrap();
    if status != StatusCode::OK {
        return status.into_response();
    }
    let authorized = headers.get("authorization").and_then(|v| v.to_str().ok()) == Some(BASIC);
    if !authorized {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    if form.get("token").map(String::as_str) != Some(KEY) {
        return Json(json!({"active": false})).into_response();
    }
    Json(issuer.answer.lock().unwrap().clone()).into_response()
}

impl Issuer {
    async fn spawn() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let issuer = Issuer {
            answer: Arc::new(Mutex::new(json!({
                "active": true, "token_type": "api_key", "iss": url, "aud": AUDIENCE,
                "sub": "usr_01jd3k2m4n5p6q7r8s9t0v1w2x", "subject_type": "human",
                "client_id": "apik_01jd3k2m4n5p6q7r8s9t0v1w2x",
                "jti": "apik_01jd3k2m4n5p6q7r8s9t0v1w2x", "scope": "trips:read",
                "iat": 1_700_000_000, "tenant_id": TENANT,
            }))),
            url,
            status: Arc::new(AtomicU16::new(200)),
            hits: Arc::new(AtomicUsize::new(0)),
        };
        let app = Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/introspect", post(introspect))
            .with_state(issuer.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        issuer
    }

    fn requirements(&self) -> Requirements {
        Requirements::new(&self.url, AUDIENCE, TENANT)
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

fn bearer(key: &str) -> String {
    format!("Bearer {key}")
}

#[tokio::test]
async fn an_active_key_passes_the_same_rules_and_is_reused_for_the_ttl_only() {
    let issuer = Issuer::spawn().await;
    let validator = Validator::new(&issuer.url)
        .with_introspection("rs", "secret")
        .with_key_cache_ttl(Duration::from_millis(300));
    let auth = bearer(KEY);
    let claims = validator
        .validate(Some(&auth), &issuer.requirements().with_scope("trips:read"))
        .await
        .unwrap();
    assert_eq!(claims.sub, "usr_01jd3k2m4n5p6q7r8s9t0v1w2x");
    assert_eq!(claims.scope, ["trips:read"]);
    // No expiry on the key: trusted until the cache entry ends.
    assert!(claims.exp > claims.iat);
    // Within the TTL: no second question, and the rules still apply to the cached claims.
    assert_eq!(
        validator
            .validate(
                Some(&auth),
                &issuer.requirements().with_scope("trips:write")
            )
            .await
            .unwrap_err(),
        ValidationError::InsufficientScope {
            required: "trips:write".into()
        }
    );
    let other_api = Requirements::new(&issuer.url, "https://other.example", TENANT);
    assert_eq!(
        validator
            .validate(Some(&auth), &other_api)
            .await
            .unwrap_err(),
        ValidationError::WrongAudience
    );
    let other_tenant = Requirements::new(&issuer.url, AUDIENCE, "ten_01jd000000000000000000glob");
    assert_eq!(
        validator
            .validate(Some(&auth), &other_tenant)
            .await
            .unwrap_err(),
        ValidationError::WrongTenant
    );
    assert_eq!(issuer.hits(), 1);
    // Revoked at the issuer: refused once the entry has ended.
    *issuer.answer.lock().unwrap() = json!({"active": false});
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert_eq!(
        validator
            .validate(Some(&auth), &issuer.requirements())
            .await
            .unwrap_err(),
        ValidationError::InactiveKey
    );
    assert_eq!(issuer.hits(), 2);
    // Inactive answers are not cached: the next call asks again.
    let _ = validator
        .validate(Some(&auth), &issuer.requirements())
        .await;
    assert_eq!(issuer.hits(), 3);
}

#[tokio::test]
async fn other_answers_unknown_keys_and_failures_are_told_apart() {
    let issuer = Issuer::spawn().await;
    let validator = Validator::new(&issuer.url)
        .with_introspection("rs", "secret")
        .with_key_cache_ttl(Duration::ZERO);
    let auth = bearer(KEY);
    // An active answer that is not an API key (an access token described) is refused.
    issuer.answer.lock().unwrap()["token_type"] = json!("Bearer");
    assert_eq!(
        validator
            .validate(Some(&auth), &issuer.requirements())
            .await
            .unwrap_err(),
        ValidationError::InactiveKey
    );
    // Another issuer's answer fails rule 3.
    {
        let mut answer = issuer.answer.lock().unwrap();
        answer["token_type"] = json!("api_key");
        answer["iss"] = json!("https://elsewhere.example");
    }
    assert_eq!(
        validator
            .validate(Some(&auth), &issuer.requirements())
            .await
            .unwrap_err(),
        ValidationError::WrongIssuer
    );
    // An unknown key is inactive; the DPoP scheme never fits a key.
    let unknown = bearer("svck_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
    assert_eq!(
        validator
            .validate(Some(&unknown), &issuer.requirements())
            .await
            .unwrap_err(),
        ValidationError::InactiveKey
    );
    issuer.answer.lock().unwrap()["iss"] = json!(issuer.url);
    assert_eq!(
        validator
            .validate(Some(&format!("DPoP {KEY}")), &issuer.requirements())
            .await
            .unwrap_err(),
        ValidationError::DpopTokenNotBound
    );
    // The endpoint failing is 503, never a refusal of the key.
    issuer.status.store(500, Ordering::SeqCst);
    let error = validator
        .validate(Some(&auth), &issuer.requirements())
        .await
        .unwrap_err();
    assert_eq!(error.status(), 503, "{error:?}");
    // Wrong resource server credentials: the issuer says 401, the key is not judged.
    issuer.status.store(200, Ordering::SeqCst);
    let stranger = Validator::new(&issuer.url).with_introspection("rs", "wrong");
    assert_eq!(
        stranger
            .validate(Some(&auth), &issuer.requirements())
            .await
            .unwrap_err()
            .status(),
        503
    );
}

#[tokio::test]
async fn without_introspection_a_key_is_no_token() {
    let issuer = Issuer::spawn().await;
    let validator = Validator::new(&issuer.url);
    assert_eq!(
        validator
            .validate(Some(&bearer(KEY)), &issuer.requirements())
            .await
            .unwrap_err(),
        ValidationError::MalformedToken
    );
    assert_eq!(issuer.hits(), 0);
}
