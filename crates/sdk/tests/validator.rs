//! The resource-server `Validator` against a live issuer on 127.0.0.1: discovery (OpenID Connect
//! Discovery 1.0 §4), JWKS caching, refresh on key rotation, the refresh limit that keeps forged
//! `kid`s from turning resource servers into amplifiers, and failures as `KeysUnavailable`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use common::*;
use jsonwebtoken::jwk::JwkSet;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use svc_sdk::{KeySourceError, Requirements, ValidationError, Validator};

/// A stand-in issuer serving discovery and a JWKS that the test can change.
#[derive(Clone)]
struct Idp {
    issuer: String,
    /// What discovery claims the issuer is (normally `issuer`).
    discovered_issuer: Arc<Mutex<String>>,
    jwks: Arc<Mutex<JwkSet>>,
    jwks_status: Arc<AtomicU16>,
    oversized: Arc<AtomicBool>,
    discovery_hits: Arc<AtomicUsize>,
    jwks_hits: Arc<AtomicUsize>,
}

impl Idp {
    async fn spawn(keys: &[&TestKey]) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let idp = Idp {
            issuer: issuer.clone(),
            discovered_issuer: Arc::new(Mutex::new(issuer)),
            jwks: Arc::new(Mutex::new(jwks(keys))),
            jwks_status: Arc::new(AtomicU16::new(200)),
            oversized: Arc::new(AtomicBool::new(false)),
            discovery_hits: Arc::new(AtomicUsize::new(0)),
            jwks_hits: Arc::new(AtomicUsize::new(0)),
        };
        let app = Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/jwks", get(jwks_document))
            .with_state(idp.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        idp
    }

    fn publish(&self, keys: &[&TestKey]) {
        *self.jwks.lock().unwrap() = jwks(keys);
    }

    fn hits(&self) -> (usize, usize) {
        (
            self.discovery_hits.load(Ordering::SeqCst),
            self.jwks_hits.load(Ordering::SeqCst),
        )
    }

    /// Claims and requirements for this issuer (the fixtures use a fixed https issuer).
    fn claims(&self) -> Value {
        let mut c = claims();
        c["iss"] = json!(self.issuer);
        c
    }

    fn requirements(&self) -> Requirements {
        Requirements {
            issuer: self.issuer.clone(),
            ..requirements()
        }
    }

    fn validator(&self) -> Validator {
        Validator::new(&self.issuer)
    }
}

async fn discovery(State(idp): State<Idp>) -> Json<Value> {
    idp.discovery_hits.fetch_add(1, Ordering::SeqCst);
    let discovered = idp.discovered_issuer.lock().unwrap().clone();
    Json(json!({
        "issuer": discovered,
        "jwks_uri": format!("{}/jwks", idp.issuer),
        "authorization_endpoint": format!("{}/oauth/authorize", idp.issuer),
        "token_endpoint": format!("{}/oauth/token", idp.issuer),
    }))
}

async fn jwks_document(State(idp): State<Idp>) -> Response {
    idp.jwks_hits.fetch_add(1, Ordering::SeqCst);
    let status = StatusCode::from_u16(idp.jwks_status.load(Ordering::SeqCst)).unwrap();
    if !status.is_success() {
        return status.into_response();
    }
    let mut doc = serde_json::to_value(&*idp.jwks.lock().unwrap()).unwrap();
    if idp.oversized.load(Ordering::SeqCst) {
        doc["padding"] = json!("x".repeat(300 * 1024));
    }
    Json(doc).into_response()
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

#[tokio::test]
async fn discovers_the_keys_once_and_caches_them() {
    let key = TestKey::es256("k1");
    let idp = Idp::spawn(&[&key]).await;
    let validator = idp.validator();
    let token = key.sign(&idp.claims());
    for _ in 0..3 {
        let claims = validator
            .validate_at(Some(&bearer(&token)), &idp.requirements(), NOW)
            .await
            .unwrap();
        assert_eq!(claims.iss, idp.issuer);
    }
    assert_eq!(idp.hits(), (1, 1));
}

#[tokio::test]
async fn a_rotated_key_triggers_one_refresh() {
    let (old, new) = (TestKey::es256("old"), TestKey::eddsa("new"));
    let idp = Idp::spawn(&[&old]).await;
    let validator = idp.validator();
    let req = idp.requirements();
    validator
        .validate_at(Some(&bearer(&old.sign(&idp.claims()))), &req, NOW)
        .await
        .unwrap();
    assert_eq!(idp.hits(), (1, 1));

    // The issuer publishes the next key, then signs with it.
    idp.publish(&[&old, &new]);
    let token = new.sign(&idp.claims());
    validator
        .validate_at(Some(&bearer(&token)), &req, NOW)
        .await
        .unwrap();
    assert_eq!(idp.hits(), (1, 2), "one JWKS refresh, no new discovery");
    validator
        .validate_at(Some(&bearer(&token)), &req, NOW)
        .await
        .unwrap();
    validator
        .validate_at(Some(&bearer(&old.sign(&idp.claims()))), &req, NOW)
        .await
        .unwrap();
    assert_eq!(idp.hits(), (1, 2), "both keys now cached");
}

#[tokio::test]
async fn a_flood_of_unknown_kids_refreshes_at_most_once_per_interval() {
    let key = TestKey::es256("real");
    let idp = Idp::spawn(&[&key]).await;
    let validator = Arc::new(idp.validator());
    let req = idp.requirements();
    validator
        .validate_at(Some(&bearer(&key.sign(&idp.claims()))), &req, NOW)
        .await
        .unwrap();

    let forger = TestKey::es256("unused");
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..40 {
        let mut header = forger.header();
        header.kid = Some(format!("forged-{i}"));
        let token = forger.sign_with(&header, &idp.claims());
        let (validator, req) = (Arc::clone(&validator), req.clone());
        tasks.spawn(async move {
            validator
                .validate_at(Some(&bearer(&token)), &req, NOW)
                .await
        });
    }
    while let Some(result) = tasks.join_next().await {
        assert_eq!(result.unwrap().unwrap_err(), ValidationError::UnknownKey);
    }
    assert_eq!(idp.hits(), (1, 2), "initial load plus a single refresh");

    // Known keys keep working throughout, from the cache.
    validator
        .validate_at(Some(&bearer(&key.sign(&idp.claims()))), &req, NOW)
        .await
        .unwrap();
    assert_eq!(idp.hits(), (1, 2));
}

#[tokio::test]
async fn after_the_interval_an_unknown_kid_may_refresh_again() {
    let key = TestKey::es256("real");
    let idp = Idp::spawn(&[&key]).await;
    let validator = idp
        .validator()
        .with_refresh_interval(Duration::from_millis(1000));
    let req = idp.requirements();
    let forged = |kid: &str| {
        let mut header = key.header();
        header.kid = Some(kid.into());
        bearer(&key.sign_with(&header, &idp.claims()))
    };
    validator
        .validate_at(Some(&bearer(&key.sign(&idp.claims()))), &req, NOW)
        .await
        .unwrap();
    assert_eq!(
        validator
            .validate_at(Some(&forged("x1")), &req, NOW)
            .await
            .unwrap_err(),
        ValidationError::UnknownKey
    );
    assert_eq!(
        validator
            .validate_at(Some(&forged("x2")), &req, NOW)
            .await
            .unwrap_err(),
        ValidationError::UnknownKey
    );
    assert_eq!(idp.hits(), (1, 2));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(
        validator
            .validate_at(Some(&forged("x3")), &req, NOW)
            .await
            .unwrap_err(),
        ValidationError::UnknownKey
    );
    assert_eq!(idp.hits(), (1, 3));
}

#[tokio::test]
async fn the_cache_expires_after_its_ttl() {
    let key = TestKey::eddsa("k");
    let idp = Idp::spawn(&[&key]).await;
    let validator = idp.validator().with_cache_ttl(Duration::from_millis(200));
    let header = bearer(&key.sign(&idp.claims()));
    validator
        .validate_at(Some(&header), &idp.requirements(), NOW)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(250)).await;
    validator
        .validate_at(Some(&header), &idp.requirements(), NOW)
        .await
        .unwrap();
    assert_eq!(idp.hits(), (1, 2));
}

#[tokio::test]
async fn discovery_naming_another_issuer_is_refused() {
    let key = TestKey::es256("k");
    let idp = Idp::spawn(&[&key]).await;
    *idp.discovered_issuer.lock().unwrap() = "https://evil.example".into();
    let err = idp
        .validator()
        .validate_at(
            Some(&bearer(&key.sign(&idp.claims()))),
            &idp.requirements(),
            NOW,
        )
        .await
        .unwrap_err();
    let ValidationError::KeysUnavailable(KeySourceError::IssuerMismatch { discovered, .. }) = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(discovered, "https://evil.example");
    assert_eq!(err.status(), 503);
    assert_eq!(
        idp.hits(),
        (1, 0),
        "the JWKS of an unverified issuer is never fetched"
    );
}

#[tokio::test]
async fn an_unreachable_issuer_is_keys_unavailable() {
    // A port that was free a moment ago: connection refused.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let key = TestKey::es256("k");
    let mut claims = claims();
    claims["iss"] = json!(issuer);
    let req = Requirements {
        issuer: issuer.clone(),
        ..requirements()
    };
    let err = Validator::new(&issuer)
        .validate_at(Some(&bearer(&key.sign(&claims))), &req, NOW)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ValidationError::KeysUnavailable(KeySourceError::Network { .. })
        ),
        "{err:?}"
    );
    assert_eq!((err.status(), err.error_code()), (503, "server_error"));
}

#[tokio::test]
async fn a_failing_jwks_endpoint_is_not_hammered_and_recovers() {
    let key = TestKey::es256("k");
    let idp = Idp::spawn(&[&key]).await;
    idp.jwks_status.store(500, Ordering::SeqCst);
    let validator = idp
        .validator()
        .with_refresh_interval(Duration::from_millis(1000));
    let header = bearer(&key.sign(&idp.claims()));
    let req = idp.requirements();
    for _ in 0..5 {
        let err = validator
            .validate_at(Some(&header), &req, NOW)
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                ValidationError::KeysUnavailable(KeySourceError::Status { status: 500, .. })
            ),
            "{err:?}"
        );
    }
    assert_eq!(idp.hits(), (1, 1), "one attempt per interval");

    idp.jwks_status.store(200, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    validator
        .validate_at(Some(&header), &req, NOW)
        .await
        .unwrap();
    assert_eq!(idp.hits(), (2, 2), "after a failure, discovery is redone");
}

#[tokio::test]
async fn an_oversized_jwks_is_refused() {
    let key = TestKey::es256("k");
    let idp = Idp::spawn(&[&key]).await;
    idp.oversized.store(true, Ordering::SeqCst);
    let err = idp
        .validator()
        .validate_at(
            Some(&bearer(&key.sign(&idp.claims()))),
            &idp.requirements(),
            NOW,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ValidationError::KeysUnavailable(KeySourceError::TooLarge { .. })
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn malformed_or_refused_headers_cause_no_fetch() {
    let key = TestKey::es256("k");
    let idp = Idp::spawn(&[&key]).await;
    let validator = idp.validator();
    let req = idp.requirements();
    let none = unsigned(
        &json!({"alg": "none", "typ": "at+jwt", "kid": "k"}),
        &idp.claims(),
        "",
    );
    let mut jwt_typ = key.header();
    jwt_typ.typ = Some("JWT".into());
    let cases = [
        (None, ValidationError::MissingToken),
        (
            Some("Basic dXNlcjpwYXNz".to_owned()),
            ValidationError::MissingToken,
        ),
        (
            Some("Bearer".to_owned()),
            ValidationError::MalformedAuthorization,
        ),
        (
            Some("Bearer a b".to_owned()),
            ValidationError::MalformedAuthorization,
        ),
        (
            Some(format!("Bearer {}", "a".repeat(10 * 1024))),
            ValidationError::MalformedAuthorization,
        ),
        (Some(bearer("not.a.jwt")), ValidationError::MalformedToken),
        (Some(bearer(&none)), ValidationError::DisallowedAlgorithm),
        (
            Some(bearer(&key.sign_with(&jwt_typ, &idp.claims()))),
            ValidationError::WrongTokenType,
        ),
    ];
    for (header, expected) in cases {
        let err = validator
            .validate_at(header.as_deref(), &req, NOW)
            .await
            .unwrap_err();
        assert_eq!(err, expected);
        assert_eq!(err.status(), 401);
    }
    assert_eq!(idp.hits(), (0, 0));
}

#[tokio::test]
async fn the_validators_own_issuer_is_enforced() {
    // Keys of one issuer never vouch for tokens naming another, whatever the requirements say.
    let key = TestKey::es256("k");
    let validator = Validator::with_jwks("https://beta.id.example", jwks(&[&key]));
    let err = validator
        .validate_at(Some(&bearer(&key.sign(&claims()))), &requirements(), NOW)
        .await
        .unwrap_err();
    assert_eq!(err, ValidationError::WrongIssuer);
}

#[tokio::test]
async fn offline_validator_runs_all_ten_rules() {
    let key = TestKey::eddsa("k");
    let validator = Validator::with_jwks(ISSUER, jwks(&[&key]));
    assert_eq!(validator.issuer(), ISSUER);
    let ok = validator
        .validate_at(
            Some(&format!("bearer {}", key.sign(&claims()))),
            &requirements(),
            NOW,
        )
        .await;
    assert_eq!(ok.unwrap().tenant_id, TENANT);
    let mut other = claims();
    other["tenant_id"] = json!("ten_other");
    other["scope"] = json!("users:write");
    assert_eq!(
        validator
            .validate_at(Some(&bearer(&key.sign(&other))), &requirements(), NOW)
            .await
            .unwrap_err(),
        ValidationError::WrongTenant
    );
    let stranger = TestKey::eddsa("stranger");
    assert_eq!(
        validator
            .validate_at(
                Some(&bearer(&stranger.sign(&claims()))),
                &requirements(),
                NOW
            )
            .await
            .unwrap_err(),
        ValidationError::UnknownKey
    );
}

#[tokio::test]
async fn dpop_bound_tokens_need_the_dpop_scheme_and_a_matching_proof() {
    let key = TestKey::es256("k");
    let validator = Validator::with_jwks(ISSUER, jwks(&[&key]));
    let mut bound = claims();
    bound["cnf"] = json!({"jkt": "thumb-1"});
    let bound = key.sign(&bound);
    let unbound = key.sign(&claims());
    let with_proof = requirements().with_dpop_jkt("thumb-1");

    let ok = validator
        .validate_at(Some(&format!("DPoP {bound}")), &with_proof, NOW)
        .await
        .unwrap();
    assert_eq!(ok.cnf.unwrap().jkt, "thumb-1");

    let cases = [
        // RFC 9449 §7.2: a DPoP-bound token presented as a bearer token is refused.
        (
            bearer(&bound),
            with_proof.clone(),
            ValidationError::DpopProofRequired,
        ),
        (
            format!("DPoP {bound}"),
            requirements(),
            ValidationError::DpopProofRequired,
        ),
        (
            format!("DPoP {bound}"),
            requirements().with_dpop_jkt("thumb-2"),
            ValidationError::DpopKeyMismatch,
        ),
        (
            format!("DPoP {unbound}"),
            with_proof.clone(),
            ValidationError::DpopTokenNotBound,
        ),
    ];
    for (header, req, expected) in cases {
        let err = validator
            .validate_at(Some(&header), &req, NOW)
            .await
            .unwrap_err();
        assert_eq!(err, expected);
        assert_eq!(err.status(), 401);
        assert!(
            err.www_authenticate()
                .starts_with("DPoP error=\"invalid_token\"")
        );
    }
    // An unbound token with the Bearer scheme ignores any proof.
    validator
        .validate_at(Some(&bearer(&unbound)), &with_proof, NOW)
        .await
        .unwrap();
}

#[tokio::test]
async fn validate_reads_the_system_clock() {
    let key = TestKey::es256("k");
    let validator = Validator::with_jwks(ISSUER, jwks(&[&key]));
    let now = i64::try_from(jsonwebtoken::get_current_timestamp()).unwrap();
    let mut live = claims();
    live["iat"] = json!(now);
    live["nbf"] = json!(now);
    live["exp"] = json!(now + 60);
    validator
        .validate(Some(&bearer(&key.sign(&live))), &requirements())
        .await
        .unwrap();
    // The fixtures' fixed NOW lies years away from the real clock: expired or not yet valid.
    let mut stale = claims();
    stale["exp"] = json!(now - 3600);
    assert_eq!(
        validator
            .validate(Some(&bearer(&key.sign(&stale))), &requirements())
            .await
            .unwrap_err(),
        ValidationError::Expired
    );
}
