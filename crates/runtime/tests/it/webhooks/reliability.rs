//! The async plane as real `svc-runtime` processes against one PostgreSQL: killed with SIGKILL
//! in the middle of a burst of 1,000 events, cut off from PostgreSQL for seconds during
//! delivery, and run twice side by side. Events come from the control plane (an in-process app
//! with its own workers off); every event must reach the receiver, duplicates only for attempts
//! that were in flight.

use super::support::{Receiver, World};
use crate::binary;
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::time::Duration;
use svc_testkit::{Backend, FaultyProxy, Process};

/// The control plane in-process: no relay or delivery of its own.
fn control_env(database: &str) -> Vec<(&str, &str)> {
    vec![
        ("DATABASE_URL", database),
        ("SVC_SERVER__BASE_DOMAIN", "localhost"),
        ("SVC_DEPLOYMENT__BACKGROUND_TASKS_ENABLED", "false"),
    ]
}

/// An async-plane process on `database`.
fn async_plane(dir: &std::path::Path, database: &str, lease_secs: &str) -> Process {
    Process::spawn(
        binary(),
        dir,
        &[],
        &[
            ("DATABASE_URL", database),
            ("SVC_RUNTIME_PLANE", "async"),
            ("SVC_SERVER__PORT", "0"),
            ("SVC_SERVER__BASE_DOMAIN", "localhost"),
            ("SVC_DATABASE__CONNECT_TIMEOUT_SECS", "1"),
            ("SVC_WEBHOOKS__POLL_INTERVAL_MS", "20"),
            ("SVC_WEBHOOKS__LEASE_SECS", lease_secs),
            ("SVC_WEBHOOKS__REQUEST_TIMEOUT_SECS", "2"),
            ("SVC_WEBHOOKS__RETRY_SCHEDULE_SECS", "[1, 1, 1, 1, 1, 1]"),
            ("SVC_WEBHOOKS__MAX_CONCURRENT_DELIVERIES", "16"),
        ],
    )
}

/// Records `count` events by changing the subscription's description `count` times, 16
/// requests at a time; each change is an `admin.webhook.updated` event.
async fn burst(world: &World, webhook: &str, count: usize) {
    let path = format!("/api/v1/webhooks/{webhook}");
    let statuses: Vec<u16> = futures_util::stream::iter(0..count)
        .map(|n| {
            let request = world
                .api(reqwest::Method::PUT, &path)
                .json(&json!({"description": format!("change {n}")}));
            async move { request.send().await.unwrap().status().as_u16() }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
}

/// Distinct event ids the receiver got, and how many times each delivery id arrived.
fn tally(receiver: &Receiver) -> (HashSet<String>, HashMap<String, usize>) {
    let mut events = HashSet::new();
    let mut deliveries: HashMap<String, usize> = HashMap::new();
    for request in receiver.seen() {
        // A duplicate of a delivery the receiver had already accepted is a replay it
        // acknowledges; anything else must verify.
        assert!(
            matches!(
                request.verdict,
                Some(Ok(()) | Err(svc_sdk::WebhookError::Replayed(_)))
            ),
            "every delivery verifies: {:?}",
            request.verdict
        );
        events.insert(request.json()["id"].as_str().unwrap().to_owned());
        *deliveries
            .entry(request.header("x-svc-delivery").to_owned())
            .or_default() += 1;
    }
    (events, deliveries)
}

async fn wait_for_events(receiver: &Receiver, count: usize, within: Duration) {
    let deadline = std::time::Instant::now() + within;
    while tally(receiver).0.len() < count {
        assert!(
            std::time::Instant::now() < deadline,
            "only {} of {count} events arrived",
            tally(receiver).0.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every delivery of `webhook` once all `count` have settled as succeeded (attempts left in
/// flight by a killed worker settle when their lease runs out and they are sent again).
async fn settled_deliveries(world: &World, webhook: &str, count: usize) -> Vec<Value> {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let all = all_deliveries(world, webhook).await;
        if all.len() == count && all.iter().all(|d| d["status"] == "succeeded") {
            return all;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "deliveries never settled: {} of {count}, {} not succeeded",
            all.len(),
            all.iter().filter(|d| d["status"] != "succeeded").count()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Every delivery of `webhook`, with its attempts (paging through the history API).
async fn all_deliveries(world: &World, webhook: &str) -> Vec<Value> {
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut path = format!("/api/v1/webhooks/{webhook}/deliveries?limit=100");
        if let Some(after) = &cursor {
            path.push_str(&format!("&after={after}"));
        }
        let page: Value = world
            .api(reqwest::Method::GET, &path)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        all.extend(page["items"].as_array().unwrap().iter().cloned());
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return all,
        }
    }
}

async fn setup(database: &str) -> (World, Receiver, String) {
    let world = World::new(Backend::Sqlite, &control_env(database)).await;
    let receiver = Receiver::default();
    let url = receiver.start().await;
    let created = world.subscribe(&url, &["admin.webhook.updated"]).await;
    receiver.verify_with(created["secret"].as_str().unwrap());
    (world, receiver, created["id"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn a_sigkilled_async_plane_loses_no_event_of_a_burst_of_1000() {
    let (database, guard) = svc_store_postgres::testing::fresh_database().await.unwrap();
    let (world, receiver, webhook) = setup(&database).await;
    *receiver.delay.lock().unwrap() = Duration::from_millis(20);
    let dir = tempfile::tempdir().unwrap();
    let mut first = async_plane(dir.path(), &database, "5");
    first.wait_for_url(Duration::from_secs(20)).await;

    let events = tokio::spawn({
        let (host, token, url) = (
            world.tenant.host.clone(),
            world.token.clone(),
            world.app.url.clone(),
        );
        let webhook = webhook.clone();
        async move {
            let client = reqwest::Client::new();
            let path = format!("{url}/api/v1/webhooks/{webhook}");
            futures_util::stream::iter(0..1000)
                .map(|n| {
                    client
                        .put(&path)
                        .header("host", &host)
                        .bearer_auth(&token)
                        .json(&json!({"description": format!("change {n}")}))
                        .send()
                })
                .buffer_unordered(16)
                .for_each(|r| async move { assert_eq!(r.unwrap().status(), 200) })
                .await;
        }
    });
    // Kill it while the burst is still being delivered.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while tally(&receiver).0.len() < 200 {
        assert!(
            std::time::Instant::now() < deadline,
            "deliveries never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    first.kill_now();
    let at_kill = tally(&receiver).0.len();
    let exit = first.wait(Duration::from_secs(10)).await;
    assert_eq!(exit.code, None, "killed by a signal");
    assert!(
        at_kill < 1000,
        "the kill came mid-burst ({at_kill} delivered)"
    );

    let second = async_plane(dir.path(), &database, "5");
    second.wait_for_url(Duration::from_secs(20)).await;
    events.await.unwrap();
    wait_for_events(&receiver, 1000, Duration::from_secs(90)).await;

    let history = settled_deliveries(&world, &webhook, 1000).await;
    let (delivered, per_delivery) = tally(&receiver);
    assert_eq!(delivered.len(), 1000, "every event at least once");
    let duplicates: Vec<&String> = per_delivery
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, _)| id)
        .collect();
    // Only attempts in flight at the kill can repeat: at most one per concurrency slot.
    assert!(
        duplicates.len() <= 16,
        "{} duplicated deliveries",
        duplicates.len()
    );
    let interrupted: HashSet<&str> = history
        .iter()
        .filter(|d| {
            d["history"].as_array().unwrap().iter().any(|a| {
                a["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("worker stopped"))
            })
        })
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    for duplicate in &duplicates {
        assert!(
            interrupted.contains(duplicate.as_str()),
            "{duplicate} repeated without an interrupted attempt"
        );
    }
    eprintln!(
        "SIGKILL after {at_kill} events: 1000/1000 delivered, {} duplicated deliveries, {} interrupted attempts",
        duplicates.len(),
        interrupted.len()
    );
    second.terminate();
    second.wait(Duration::from_secs(20)).await;
    world.app.shutdown().await;
    guard.drop_database().await.unwrap();
}

#[tokio::test]
async fn delivery_survives_a_postgres_outage_and_recovers_by_itself() {
    let (database, guard) = svc_store_postgres::testing::fresh_database().await.unwrap();
    let upstream = "127.0.0.1:5432";
    assert!(
        database.contains(upstream),
        "the outage test expects PostgreSQL at {upstream}"
    );
    let proxy = FaultyProxy::start(upstream.parse().unwrap()).await;
    let through_proxy = database.replace(upstream, &proxy.addr().to_string());
    let (world, receiver, webhook) = setup(&database).await;
    *receiver.delay.lock().unwrap() = Duration::from_millis(10);
    let dir = tempfile::tempdir().unwrap();
    let worker = async_plane(dir.path(), &through_proxy, "15");
    let url = worker.wait_for_url(Duration::from_secs(20)).await;

    burst(&world, &webhook, 300).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while tally(&receiver).0.len() < 30 {
        assert!(
            std::time::Instant::now() < deadline,
            "deliveries never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    proxy.cut();
    let ready = |url: String| async move {
        reqwest::get(format!("{url}/health/ready"))
            .await
            .map(|r| r.status().as_u16())
            .unwrap_or(0)
    };
    let mut saw_unready = false;
    for _ in 0..30 {
        if ready(url.clone()).await == 503 {
            saw_unready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(saw_unready, "readiness reports the outage");
    tokio::time::sleep(Duration::from_secs(3)).await;
    let during = tally(&receiver).0.len();
    proxy.restore();

    wait_for_events(&receiver, 300, Duration::from_secs(60)).await;
    assert!(
        during < 300,
        "the outage happened mid-delivery ({during} delivered before it ended)"
    );
    settled_deliveries(&world, &webhook, 300).await;
    assert_eq!(
        ready(url).await,
        200,
        "the same process recovered by itself"
    );
    let (_, per_delivery) = tally(&receiver);
    eprintln!(
        "PostgreSQL outage of 3 s after {during} events: 300/300 delivered, {} duplicated deliveries",
        per_delivery.values().filter(|n| **n > 1).count()
    );
    worker.terminate();
    let exit = worker.wait(Duration::from_secs(20)).await;
    assert_eq!(exit.code, Some(0), "{}", exit.stderr);
    world.app.shutdown().await;
    guard.drop_database().await.unwrap();
}

#[tokio::test]
async fn two_async_instances_share_the_work_without_sending_an_attempt_twice() {
    let (database, guard) = svc_store_postgres::testing::fresh_database().await.unwrap();
    let (world, receiver, webhook) = setup(&database).await;
    *receiver.delay.lock().unwrap() = Duration::from_millis(5);
    let dir = tempfile::tempdir().unwrap();
    let one = async_plane(dir.path(), &database, "10");
    let two = async_plane(dir.path(), &database, "10");
    one.wait_for_url(Duration::from_secs(20)).await;
    two.wait_for_url(Duration::from_secs(20)).await;

    burst(&world, &webhook, 500).await;
    wait_for_events(&receiver, 500, Duration::from_secs(60)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (events, per_delivery) = tally(&receiver);
    assert_eq!(events.len(), 500);
    assert_eq!(per_delivery.len(), 500, "one delivery per event");
    assert_eq!(
        receiver.seen().len(),
        500,
        "HTTP attempts = deliveries: no attempt sent twice"
    );
    let worked = |p: &Process| p.stdout_text().matches("\"webhook attempt\"").count();
    let (by_one, by_two) = (worked(&one), worked(&two));
    assert_eq!(by_one + by_two, 500, "each attempt logged once");
    assert!(
        by_one > 0 && by_two > 0,
        "both instances delivered ({by_one} / {by_two})"
    );
    eprintln!("two async instances: {by_one} + {by_two} attempts for 500 deliveries");
    one.terminate();
    two.terminate();
    one.wait(Duration::from_secs(20)).await;
    two.wait(Duration::from_secs(20)).await;
    world.app.shutdown().await;
    guard.drop_database().await.unwrap();
}
