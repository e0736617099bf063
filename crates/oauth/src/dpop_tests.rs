//! Unit tests of [`super`]: switching off, nonces, replay and the resource binding rule.

use super::*;
use serde_json::{Map, json};
use svc_crypto::SigningKey;
use svc_domain::{
    ManualClock, MfaPolicy, PairwiseSecret, SeededRandom, SigningAlg, TenantSlug, TenantStatus,
};

const URL: &str = "https://acme.id.example/oauth/token";

fn start() -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()
}

fn tenant(seed: u64) -> Tenant {
    let clock = ManualClock::new(start());
    let rng = SeededRandom::new(seed);
    Tenant {
        id: TenantId::generate(&clock, &rng),
        slug: TenantSlug::parse("acme").unwrap(),
        display_name: "Acme".into(),
        status: TenantStatus::Active,
        signup_enabled: false,
        mfa_policy: MfaPolicy::Default,
        pairwise_secret: PairwiseSecret::generate(&rng),
        created_at: start(),
        updated_at: start(),
    }
}

fn dpop(settings: DpopSettings, clock: &Arc<ManualClock>) -> Dpop {
    Dpop::new(
        settings,
        Arc::new(InstanceReplay::default()),
        Arc::clone(clock) as Arc<dyn Clock>,
    )
}

/// A proof for `URL` made at `iat` with `key`, carrying `nonce` when given.
fn proof(key: &SigningKey, jti: &str, iat: OffsetDateTime, nonce: Option<&str>) -> String {
    let mut jwk = key.public_jwk();
    jwk.as_object_mut().unwrap().remove("kid");
    let mut header = Map::new();
    header.insert("typ".into(), json!("dpop+jwt"));
    header.insert("jwk".into(), jwk);
    let mut claims = json!({"jti": jti, "htm": "POST", "htu": URL, "iat": iat.unix_timestamp()});
    if let Some(nonce) = nonce {
        claims["nonce"] = json!(nonce);
    }
    key.sign_jws(header, &claims).unwrap()
}

async fn verify(dpop: &Dpop, tenant: &Tenant, proof: &str) -> Result<Option<Proof>, OAuthError> {
    dpop.verify(tenant, Ok(Some(proof)), "POST", URL, None)
        .await
}

#[tokio::test]
async fn a_good_proof_yields_its_key_once() {
    let clock = Arc::new(ManualClock::new(start()));
    let dpop = dpop(DpopSettings::default(), &clock);
    let acme = tenant(1);
    let key = SigningKey::generate(SigningAlg::Es256).unwrap();
    let first = proof(&key, "j-1", start(), None);
    let verified = verify(&dpop, &acme, &first).await.unwrap().unwrap();
    assert_eq!(verified.jkt, key.kid());
    // RFC 9449 §11.1: the same proof again is a replay, within the window.
    clock.advance(time::Duration::seconds(30));
    let replay = verify(&dpop, &acme, &first).await.unwrap_err();
    assert_eq!(replay.code(), ErrorCode::InvalidDpopProof);
    // Another tenant keeps its own record; no header is no proof.
    assert!(verify(&dpop, &tenant(2), &first).await.unwrap().is_some());
    assert_eq!(
        dpop.verify(&acme, Ok(None), "POST", URL, None)
            .await
            .unwrap(),
        None
    );
    // Two headers are refused.
    let two = dpop
        .verify(&acme, Err(ProofError::Multiple), "POST", URL, None)
        .await
        .unwrap_err();
    assert_eq!(two.code(), ErrorCode::InvalidDpopProof);
}

#[tokio::test]
async fn checking_spends_nothing_until_the_proof_is_recorded() {
    let clock = Arc::new(ManualClock::new(start()));
    let dpop = dpop(DpopSettings::default(), &clock);
    let acme = tenant(1);
    let key = SigningKey::generate(SigningAlg::Es256).unwrap();
    let one = proof(&key, "j-1", start(), None);
    // A caller refused before the record (say, a client failing authentication) spends
    // nothing: the same proof still checks and records once.
    for _ in 0..3 {
        assert!(
            dpop.check(&acme, Ok(Some(&one)), "POST", URL, None)
                .unwrap()
                .is_some()
        );
    }
    let checked = dpop
        .check(&acme, Ok(Some(&one)), "POST", URL, None)
        .unwrap()
        .unwrap();
    assert_eq!(dpop.record(&acme, checked).await.unwrap().jkt, key.kid());
    let again = dpop
        .check(&acme, Ok(Some(&one)), "POST", URL, None)
        .unwrap()
        .unwrap();
    assert_eq!(
        dpop.record(&acme, again).await.unwrap_err().code(),
        ErrorCode::InvalidDpopProof,
        "recorded once, a replay after"
    );
}

#[tokio::test]
async fn switched_off_ignores_every_header() {
    let clock = Arc::new(ManualClock::new(start()));
    let off = dpop(
        DpopSettings {
            enabled: false,
            ..DpopSettings::default()
        },
        &clock,
    );
    let acme = tenant(1);
    assert_eq!(verify(&off, &acme, "not even a JWT").await.unwrap(), None);
    assert_eq!(off.current_nonce(&acme), None);
}

#[tokio::test]
async fn a_required_nonce_is_handed_out_and_rotates() {
    let clock = Arc::new(ManualClock::new(start()));
    let dpop = dpop(
        DpopSettings {
            require_nonce: true,
            ..DpopSettings::default()
        },
        &clock,
    );
    let acme = tenant(1);
    let key = SigningKey::generate(SigningAlg::EdDsa).unwrap();
    // Without a nonce: use_dpop_nonce, and the error carries the one to use.
    let refused = verify(&dpop, &acme, &proof(&key, "a", start(), None))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), ErrorCode::UseDpopNonce);
    let nonce = refused.dpop_nonce().unwrap().to_owned();
    assert_eq!(dpop.current_nonce(&acme).as_deref(), Some(nonce.as_str()));
    // Another tenant's nonce is another value.
    assert_ne!(dpop.current_nonce(&tenant(2)), Some(nonce.clone()));
    // A wrong nonce is refused the same way; the right one passes.
    let wrong = verify(&dpop, &acme, &proof(&key, "b", start(), Some("forged")))
        .await
        .unwrap_err();
    assert_eq!(wrong.code(), ErrorCode::UseDpopNonce);
    assert!(
        verify(&dpop, &acme, &proof(&key, "c", start(), Some(&nonce)))
            .await
            .unwrap()
            .is_some()
    );
    // One lifetime later a new nonce is current and the old one still accepted; two lifetimes
    // later the old one is stale.
    clock.advance(time::Duration::seconds(300));
    let now = clock.now();
    assert_ne!(dpop.current_nonce(&acme), Some(nonce.clone()));
    assert!(
        verify(&dpop, &acme, &proof(&key, "d", now, Some(&nonce)))
            .await
            .unwrap()
            .is_some()
    );
    clock.advance(time::Duration::seconds(300));
    let now = clock.now();
    let stale = verify(&dpop, &acme, &proof(&key, "e", now, Some(&nonce)))
        .await
        .unwrap_err();
    assert_eq!(stale.code(), ErrorCode::UseDpopNonce);
}

#[tokio::test]
async fn a_stale_proof_is_refused_and_its_jti_needs_no_memory() {
    let clock = Arc::new(ManualClock::new(start()));
    let dpop = dpop(DpopSettings::default(), &clock);
    let acme = tenant(1);
    let key = SigningKey::generate(SigningAlg::Es256).unwrap();
    let made = proof(&key, "j", start(), None);
    verify(&dpop, &acme, &made).await.unwrap();
    // Past the window the proof is stale: refused for its age, whatever the record says.
    clock.advance(time::Duration::seconds(61));
    let stale = verify(&dpop, &acme, &made).await.unwrap_err();
    assert_eq!(stale.code(), ErrorCode::InvalidDpopProof);
    assert!(stale.description().contains("too old"), "{stale}");
}

#[test]
fn resources_bind_tokens_to_the_dpop_scheme_and_key() {
    let bound = json!({"cnf": {"jkt": "k1"}});
    let plain = json!({});
    let proof = |jkt: &str| Proof { jkt: jkt.into() };
    // A bound token: DPoP scheme and the same key only.
    assert!(check_binding(&bound, true, Some(&proof("k1"))).is_ok());
    for (scheme, with) in [
        (true, Some(proof("k2"))),
        (true, None),
        (false, Some(proof("k1"))),
        (false, None),
    ] {
        let refused = check_binding(&bound, scheme, with.as_ref()).unwrap_err();
        assert_eq!(refused.code(), ErrorCode::InvalidToken, "{scheme} {with:?}");
    }
    assert!(
        check_binding(&bound, false, None)
            .unwrap_err()
            .dpop_challenge()
    );
    assert!(!OAuthError::invalid_token("expired").dpop_challenge());
    // A bearer token: Bearer scheme only.
    assert!(check_binding(&plain, false, None).is_ok());
    assert_eq!(
        check_binding(&plain, true, Some(&proof("k1")))
            .unwrap_err()
            .code(),
        ErrorCode::InvalidToken
    );
}

/// RFC 9449 §11.1 across instances: two processes' checkers on one database (each its own pool
/// on PostgreSQL) accept a proof once between them, even when it is raced.
async fn replay_is_shared_through(stores: [Arc<dyn Store>; 2]) {
    let clock = Arc::new(ManualClock::new(start()));
    let instances = stores.map(|store| {
        Arc::new(Dpop::new(
            DpopSettings::default(),
            Arc::new(StoreReplay(store)),
            Arc::clone(&clock) as Arc<dyn Clock>,
        ))
    });
    let acme = Arc::new(tenant(1));
    let key = SigningKey::generate(SigningAlg::Es256).unwrap();
    let first = proof(&key, "shared", start(), None);
    assert!(
        verify(&instances[0], &acme, &first)
            .await
            .unwrap()
            .is_some()
    );
    let elsewhere = verify(&instances[1], &acme, &first).await.unwrap_err();
    assert_eq!(elsewhere.code(), ErrorCode::InvalidDpopProof, "{elsewhere}");

    let raced = Arc::new(proof(&key, "raced", start(), None));
    let attempts = (0..16).map(|i| {
        let (dpop, acme, raced) = (
            Arc::clone(&instances[i % 2]),
            Arc::clone(&acme),
            Arc::clone(&raced),
        );
        tokio::spawn(async move { verify(&dpop, &acme, &raced).await.is_ok() })
    });
    let mut accepted = 0;
    for attempt in attempts {
        accepted += usize::from(attempt.await.unwrap());
    }
    assert_eq!(accepted, 1, "exactly one of the racing uses is accepted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_database_record_is_shared_by_instances_on_sqlite() {
    let store: Arc<dyn Store> = Arc::new(svc_store_sqlite::testing::temp_store().await.unwrap());
    replay_is_shared_through([store.clone(), store]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_database_record_is_shared_by_instances_on_postgres() {
    let (url, _guard) = svc_store_postgres::testing::fresh_database().await.unwrap();
    let settings = svc_store_postgres::testing::test_settings();
    let first = svc_store_postgres::PgStore::connect(&url, &settings)
        .await
        .unwrap();
    Store::migrate(&first).await.unwrap();
    let second = svc_store_postgres::PgStore::connect(&url, &settings)
        .await
        .unwrap();
    replay_is_shared_through([Arc::new(first), Arc::new(second)]).await;
}
