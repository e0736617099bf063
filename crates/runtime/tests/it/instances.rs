//! Ephemeral signing keys (no `[kms]`) serve one instance per database (issue 21 item 2): a
//! second instance on the same database would sign with other keys and refuse the first one's
//! tokens, so it refuses to start and says why (on SQLite and PostgreSQL); a clean stop releases
//! the database at once, and a killed instance's claim expires so a restart just waits.

use crate::binary;
use std::time::{Duration, Instant};
use svc_testkit::{Backend, Process, TestApp};

/// The refusal both backends give.
fn assert_refused(exit: &svc_testkit::Exit, what: &str) {
    assert!(
        exit.code.is_some_and(|c| c != 0),
        "{what}: exits, not serves: {:?}",
        exit.code
    );
    let said = format!("{}{}", exit.stdout, exit.stderr);
    assert!(
        said.contains("another svc-runtime instance"),
        "{what}: {said}"
    );
    assert!(said.contains("[kms]"), "{what}: says what to do: {said}");
}

/// The `kid`s the service at `url` publishes.
async fn kids(url: &str) -> Vec<String> {
    let jwks: serde_json::Value = reqwest::get(format!("{url}/.well-known/jwks.json"))
        .await
        .unwrap()
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

#[tokio::test]
async fn a_second_instance_on_the_same_postgres_database_without_kms_is_refused() {
    let first = TestApp::spawn(Backend::Postgres).await;
    let url = first.database_url.clone().expect("a PostgreSQL database");
    let dir = tempfile::tempdir().unwrap();
    let second = Process::spawn(
        binary(),
        dir.path(),
        &["--log-format", "json"],
        &[("DATABASE_URL", url.as_str()), ("SVC_SERVER__PORT", "0")],
    );
    let exit = second.wait(Duration::from_secs(60)).await;
    assert_refused(&exit, "PostgreSQL");
    // The first one never noticed.
    assert_eq!(first.get("/health/ready").await.status(), 200);
    first.shutdown().await;
}

#[tokio::test]
async fn on_sqlite_a_stopped_instance_frees_the_database_at_once_and_a_killed_one_soon() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("data/svc.db").display());
    let serve =
        |env: &[(&str, &str)]| Process::spawn(binary(), dir.path(), &["--log-format", "json"], env);
    let first = serve(&[("SVC_SERVER__PORT", "0")]);
    let url = first.wait_for_url(Duration::from_secs(30)).await;
    let first_kids = kids(&url).await;
    let own_db = [("DATABASE_URL", db.as_str()), ("SVC_SERVER__PORT", "0")];
    let exit = serve(&own_db).wait(Duration::from_secs(60)).await;
    assert_refused(&exit, "SQLite");

    // A clean stop (SIGTERM) releases it: the next one starts without waiting.
    first.terminate();
    let stopped = first.wait(Duration::from_secs(30)).await;
    assert_eq!(stopped.code, Some(0), "{}", stopped.stderr);
    let started = Instant::now();
    let mut second = serve(&own_db);
    let url = second.wait_for_url(Duration::from_secs(30)).await;
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    // Ephemeral keys died with the first process: the restart has keys of its own.
    let second_kids = kids(&url).await;
    assert!(!second_kids.is_empty());
    assert!(
        first_kids.iter().all(|k| !second_kids.contains(k)),
        "ephemeral keys are never shared or persisted"
    );

    // Killed, it cannot release: the next one waits for the claim to expire, then serves.
    second.kill_now();
    let started = Instant::now();
    let third = serve(&own_db);
    third.wait_for_url(Duration::from_secs(40)).await;
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "it waited for the dead instance's claim: {:?}",
        started.elapsed()
    );
    third.terminate();
    let _ = third.wait(Duration::from_secs(30)).await;
}

#[tokio::test]
async fn an_async_plane_that_signs_logout_tokens_takes_the_database_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("data/svc.db").display());
    let serve = |plane: &str, backchannel: &str| {
        Process::spawn(
            binary(),
            dir.path(),
            &["--log-format", "json"],
            &[
                ("DATABASE_URL", db.as_str()),
                ("SVC_SERVER__PORT", "0"),
                ("SVC_RUNTIME_PLANE", plane),
                ("SVC_LOGOUT__BACKCHANNEL", backchannel),
            ],
        )
    };
    let auth = serve("auth", "true");
    auth.wait_for_url(Duration::from_secs(30)).await;
    // Without back-channel logout the async plane signs nothing: it shares the database.
    let quiet = serve("async", "false");
    quiet.wait_for_url(Duration::from_secs(30)).await;
    quiet.terminate();
    let stopped = quiet.wait(Duration::from_secs(30)).await;
    assert_eq!(stopped.code, Some(0), "{}", stopped.stderr);
    // With it, it would sign logout tokens with keys the auth plane never publishes.
    let exit = serve("async", "true").wait(Duration::from_secs(60)).await;
    assert_refused(&exit, "an async plane sending back-channel logout tokens");
    auth.terminate();
    let _ = auth.wait(Duration::from_secs(30)).await;
}
