//! Signing keys under svc-kms custody: two processes on one Unix socket, persistence of wrapped
//! keys, refusal of a wrong client key, readiness following the daemon, a whole rotation cycle
//! driven by an injected clock, and the `keys rotate` command.

use crate::binary;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use svc_domain::{KeyState, ManualClock, SigningAlg};
use svc_runtime::BuildOptions;
use svc_testkit::{Backend, KmsDaemon, Process, TestApp};
use time::OffsetDateTime;

fn env_refs(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

async fn kids(app: &TestApp) -> Vec<String> {
    let jwks: Value = app
        .get("/.well-known/jwks.json")
        .await
        .json()
        .await
        .unwrap();
    jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kid"].as_str().unwrap().to_owned())
        .collect()
}

async fn ready(app: &TestApp) -> u16 {
    app.get("/health/ready").await.status().as_u16()
}

#[tokio::test]
async fn kms_backed_keys_are_stored_wrapped_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let kms = KmsDaemon::start(dir.path()).await;
    let (db_url, guard) = svc_store_postgres::testing::fresh_database().await.unwrap();
    let mut env = kms.env();
    env.push(("DATABASE_URL".into(), db_url.clone()));
    let first = TestApp::spawn_with(Backend::Sqlite, &env_refs(&env)).await;
    let before = kids(&first).await;
    assert_eq!(before.len(), 3, "one key per algorithm: {before:?}");
    let tenant = first.tenant("default").await;

    // Stored only sealed: the ciphertext is not a parseable private key and the data key is wrapped.
    let store = first.store().await;
    let mut read = store.read().await.unwrap();
    let records = read.signing_keys(&tenant.id).await.unwrap();
    drop(read);
    assert_eq!(records.len(), 3);
    for record in &records {
        assert!(svc_crypto::SigningKey::from_pkcs8(record.alg, &record.sealed.ciphertext).is_err());
        assert!(
            record.sealed.wrapped_dek.len() > 32,
            "the data key is stored wrapped, not raw"
        );
    }
    first.shutdown().await;

    let second = TestApp::spawn_with(Backend::Sqlite, &env_refs(&env)).await;
    let mut after = kids(&second).await;
    let mut expected = before.clone();
    after.sort();
    expected.sort();
    assert_eq!(
        after, expected,
        "the same keys after a restart: they were unwrapped through the KMS"
    );
    second.shutdown().await;
    guard.drop_database().await.unwrap();
}

#[tokio::test]
async fn readiness_follows_the_kms_and_recovers_when_it_returns() {
    let dir = tempfile::tempdir().unwrap();
    let mut kms = KmsDaemon::start(dir.path()).await;
    let app = TestApp::spawn_with(Backend::Sqlite, &env_refs(&kms.env())).await;
    assert_eq!(ready(&app).await, 200);
    kms.stop().await;
    assert_eq!(ready(&app).await, 503, "KMS gone: not ready");
    assert_eq!(app.get("/health/live").await.status(), 200);
    kms.restart().await;
    let mut status = 0;
    for _ in 0..50 {
        status = ready(&app).await;
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200, "readiness recovers without a restart");
    app.shutdown().await;
}

#[tokio::test]
async fn two_processes_on_one_socket_and_a_wrong_client_key_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let kms = KmsDaemon::start(dir.path()).await;
    let work = tempfile::tempdir().unwrap();
    let mut env = kms.env();
    env.push(("SVC_SERVER__PORT".into(), "0".into()));
    let process = Process::spawn(
        binary(),
        work.path(),
        &["--log-format", "json"],
        &env_refs(&env),
    );
    let url = process.wait_for_url(Duration::from_secs(30)).await;
    let jwks: Value = reqwest::get(format!("{url}/.well-known/jwks.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(jwks["keys"].as_array().unwrap().len(), 3);
    process.terminate();
    assert_eq!(process.wait(Duration::from_secs(30)).await.code, Some(0));

    // A client key the daemon does not know (a fresh key pair from another keygen).
    let other = tempfile::tempdir().unwrap();
    svc_kms::keygen(other.path(), false).unwrap();
    let wrong_key = other.path().join("kms-client.key").display().to_string();
    let mut env = kms.env();
    env.retain(|(k, _)| k != "SVC_KMS__CLIENT_PRIVATE_KEY_PATH");
    env.push(("SVC_KMS__CLIENT_PRIVATE_KEY_PATH".into(), wrong_key));
    let exit = Process::run(binary(), work.path(), &[], &env_refs(&env)).await;
    assert_ne!(exit.code, Some(0));
    assert!(
        exit.stderr.contains("kms.client_private_key_path"),
        "{}",
        exit.stderr
    );
    assert!(!exit.stderr.contains("panicked"), "{}", exit.stderr);

    // No daemon at all: the missing socket is named.
    let mut env = kms.env();
    env.retain(|(k, _)| k != "SVC_KMS__SOCKET_PATH");
    env.push((
        "SVC_KMS__SOCKET_PATH".into(),
        dir.path().join("absent.sock").display().to_string(),
    ));
    let exit = Process::run(binary(), work.path(), &[], &env_refs(&env)).await;
    assert_ne!(exit.code, Some(0));
    assert!(
        exit.stderr.contains("absent.sock") && exit.stderr.contains("svc-kms serve"),
        "{}",
        exit.stderr
    );
}

#[tokio::test]
async fn a_secret_variable_that_moved_to_the_kms_refuses_startup() {
    let work = tempfile::tempdir().unwrap();
    let exit = Process::run(
        binary(),
        work.path(),
        &[],
        &[("SVC_JWT__PRIVATE_KEY", "-----BEGIN PRIVATE KEY-----")],
    )
    .await;
    assert_ne!(exit.code, Some(0));
    assert!(
        exit.stderr.contains(
            "SVC_JWT__PRIVATE_KEY moved to svc-kms: provision it through the key-management service and delete the variable"
        ),
        "{}",
        exit.stderr
    );
    assert!(
        !exit.stderr.contains("BEGIN PRIVATE KEY"),
        "the value is never echoed"
    );
}

/// Waits until the rotation worker has acted on the current clock.
async fn until<F: Fn(&[svc_domain::SigningKeyRecord]) -> bool>(
    app: &TestApp,
    tenant: &svc_domain::Tenant,
    done: F,
) -> Vec<svc_domain::SigningKeyRecord> {
    let store = app.store().await;
    for _ in 0..200 {
        let mut read = store.read().await.unwrap();
        let records: Vec<_> = read
            .signing_keys(&tenant.id)
            .await
            .unwrap()
            .into_iter()
            .filter(|r| r.alg == SigningAlg::Es256)
            .collect();
        drop(read);
        if done(&records) {
            store.close().await;
            return records;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("rotation did not reach the expected state");
}

#[tokio::test]
async fn a_whole_rotation_cycle_with_an_injected_clock() {
    let dir = tempfile::tempdir().unwrap();
    let kms = KmsDaemon::start(dir.path()).await;
    let start = OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_000);
    let clock = Arc::new(ManualClock::new(start));
    let mut env = kms.env();
    env.push(("SVC_JWT__KEY_ROTATION_DAYS".into(), "2".into()));
    let options = BuildOptions {
        clock: clock.clone(),
        rotation_interval: Duration::from_millis(40),
        key_refresh: Duration::ZERO,
        ..BuildOptions::default()
    };
    let app = TestApp::try_spawn_with_options(Backend::Postgres, &env_refs(&env), options)
        .await
        .unwrap();
    let tenant = app.tenant("default").await;
    let keys = app.keys();

    // Day 0: one active ES256 key signs.
    let first = keys
        .access_token_signer(&tenant.id)
        .await
        .unwrap()
        .kid()
        .to_owned();
    let token = keys
        .access_token_signer(&tenant.id)
        .await
        .unwrap()
        .sign_jwt("at+jwt", &serde_json::json!({"n": 1}))
        .unwrap();

    // Period 2 days, publish lead 1 day: after 1 day and a second the next key is published...
    clock.advance(time::Duration::days(1) + time::Duration::seconds(1));
    let records = until(&app, &tenant, |r| {
        r.iter().any(|k| k.state == KeyState::Next)
    })
    .await;
    let next = records
        .iter()
        .find(|k| k.state == KeyState::Next)
        .unwrap()
        .kid
        .clone();
    assert!(
        kids(&app).await.contains(&next),
        "the next key is in JWKS before it signs"
    );
    assert_eq!(
        keys.access_token_signer(&tenant.id).await.unwrap().kid(),
        first,
        "...but the old key still signs"
    );

    // ...and at day 2 it signs, while the old key stays published for the longest token + 1 day.
    clock.advance(time::Duration::days(1));
    until(&app, &tenant, |r| {
        r.iter()
            .any(|k| k.kid == next && k.state == KeyState::Active)
    })
    .await;
    assert_eq!(
        keys.access_token_signer(&tenant.id).await.unwrap().kid(),
        next
    );
    let published = kids(&app).await;
    assert!(
        published.contains(&first),
        "the retired key stays published while its tokens live"
    );
    let jwks: svc_crypto::Jwks = svc_crypto::Jwks::new(
        serde_json::from_str::<Value>(
            &app.get("/.well-known/jwks.json")
                .await
                .text()
                .await
                .unwrap(),
        )
        .unwrap()["keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| svc_crypto::PublicJwk::from_json(k).unwrap()),
    )
    .unwrap();
    assert!(
        svc_crypto::verify_jwt_signature(&jwks, &token, SigningAlg::Es256).is_ok(),
        "old tokens still verify"
    );

    // Past the overlap (15 min access tokens + 1 day), the retired key leaves JWKS.
    clock.advance(time::Duration::days(1) + time::Duration::minutes(16));
    until(&app, &tenant, |r| !r.iter().any(|k| k.kid == first)).await;
    assert!(
        !kids(&app).await.contains(&first),
        "the retired key is gone once its tokens expired"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn keys_rotate_command_switches_signing_keys_at_once_and_keeps_the_old_published() {
    let dir = tempfile::tempdir().unwrap();
    let kms = KmsDaemon::start(dir.path()).await;
    let options = BuildOptions {
        key_refresh: Duration::ZERO,
        ..BuildOptions::default()
    };
    let app = TestApp::try_spawn_with_options(Backend::Postgres, &env_refs(&kms.env()), options)
        .await
        .unwrap();
    let tenant = app.tenant("default").await;
    let before = app
        .keys()
        .access_token_signer(&tenant.id)
        .await
        .unwrap()
        .kid()
        .to_owned();

    let mut env = kms.env();
    env.push(("DATABASE_URL".into(), app.database_url.clone().unwrap()));
    let work = tempfile::tempdir().unwrap();
    let exit = Process::run(
        binary(),
        work.path(),
        &["keys", "rotate", "--tenant", "default"],
        &env_refs(&env),
    )
    .await;
    assert_eq!(exit.code, Some(0), "{}\n{}", exit.stdout, exit.stderr);
    assert!(
        exit.stdout.contains("rotated tenant default"),
        "{}",
        exit.stdout
    );

    let after = app
        .keys()
        .access_token_signer(&tenant.id)
        .await
        .unwrap()
        .kid()
        .to_owned();
    assert_ne!(after, before, "a new key signs at once");
    let published = kids(&app).await;
    assert!(
        published.contains(&before) && published.contains(&after),
        "{published:?}"
    );

    let exit = Process::run(
        binary(),
        work.path(),
        &["keys", "rotate", "--tenant", "nobody"],
        &env_refs(&env),
    )
    .await;
    assert_ne!(exit.code, Some(0));
    assert!(
        exit.stderr.contains("no tenant with slug `nobody`"),
        "{}",
        exit.stderr
    );
    let exit = Process::run(
        binary(),
        work.path(),
        &["keys", "rotate", "--tenant", "default"],
        &[("DATABASE_URL", &env[3].1)],
    )
    .await;
    assert_ne!(exit.code, Some(0));
    assert!(
        exit.stderr.contains("ephemeral"),
        "without [kms] there is nothing to rotate: {}",
        exit.stderr
    );
    app.shutdown().await;
}

#[tokio::test]
async fn the_second_factor_data_key_is_stored_wrapped_once_and_reused_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let kms = KmsDaemon::start(dir.path()).await;
    let (db_url, guard) = svc_store_postgres::testing::fresh_database().await.unwrap();
    let mut env = kms.env();
    env.push(("DATABASE_URL".into(), db_url.clone()));
    env.push(("SVC_TWO_FACTOR__ENABLED".into(), "true".into()));
    let first = TestApp::spawn_with(Backend::Sqlite, &env_refs(&env)).await;
    let store = first.store().await;
    let mut read = store.read().await.unwrap();
    let wrapped = read
        .factor_data_key("totp_seal")
        .await
        .unwrap()
        .expect("stored at start");
    drop(read);
    assert!(
        wrapped.len() > 32,
        "stored wrapped, not as the raw 32 bytes"
    );
    first.shutdown().await;

    // A second start unwraps the stored key (it would refuse to start if the KMS refused) and
    // stores no other.
    let second = TestApp::spawn_with(Backend::Sqlite, &env_refs(&env)).await;
    assert_eq!(ready(&second).await, 200);
    let store = second.store().await;
    let mut read = store.read().await.unwrap();
    assert_eq!(
        read.factor_data_key("totp_seal").await.unwrap(),
        Some(wrapped)
    );
    drop(read);
    second.shutdown().await;
    guard.drop_database().await.unwrap();
}
