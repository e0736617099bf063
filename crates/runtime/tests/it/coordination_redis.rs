//! The Redis coordination backend (issue 21 item 1) with a real Redis (127.0.0.1:6379, started
//! by `scripts/services.sh`), two instances on one PostgreSQL database, each test under a key
//! prefix of its own: the token-endpoint throttle counts across instances, a DPoP proof spent at
//! one instance is refused at the other and recorded in Redis, caches are kept current through
//! Redis publish/subscribe; and with B's path to Redis cut, the failure modes hold — proofs are
//! refused (fail closed), the throttle counts locally (fail open) or refuses and reports the
//! instance not ready (fail closed) — and everything recovers without a restart.

use crate::dpop::{Claims, Prover};
use crate::shared_caches::{BOUND, Pair, SCRAPE, grant, until};
use reqwest::Method;
use std::time::Duration;
use svc_domain::{OsRandom, Rng, SigningAlg};
use svc_testkit::FaultyProxy;

const REDIS: &str = "redis://127.0.0.1:6379/0";

/// A prefix no other test (or run) uses.
pub(crate) fn prefix() -> String {
    let mut bytes = [0u8; 6];
    OsRandom.fill(&mut bytes);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("svctest:{hex}:")
}

/// Keys under `prefix` in Redis.
async fn keys(prefix: &str) -> Vec<String> {
    let client = redis::Client::open(REDIS).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query_async(&mut connection)
        .await
        .unwrap()
}

/// The environment of an instance coordinating through Redis under `prefix`, throttling the
/// token endpoint at `per_second` with `burst`.
fn redis_env(prefix: &str, per_second: u32, burst: u32) -> Vec<(&'static str, String)> {
    vec![
        ("SVC_DEPLOYMENT__COORDINATION_BACKEND", "redis".into()),
        ("SVC_REDIS__URL", REDIS.into()),
        ("SVC_REDIS__KEY_PREFIX", prefix.into()),
        ("SVC_DPOP__ENABLED", "true".into()),
        ("SVC_SERVER__ENDPOINT_THROTTLE__ENABLED", "true".into()),
        (
            "SVC_SERVER__ENDPOINT_THROTTLE__REQUESTS_PER_SECOND",
            per_second.to_string(),
        ),
        ("SVC_SERVER__ENDPOINT_THROTTLE__BURST", burst.to_string()),
    ]
}

/// Generous enough that no test here is throttled unless it means to be.
pub(crate) const ROOMY: (u32, u32) = (200, 400);

pub(crate) fn refs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// A proxy in front of Redis, for B.
async fn redis_proxy() -> (FaultyProxy, String) {
    let upstream = tokio::net::lookup_host("127.0.0.1:6379")
        .await
        .unwrap()
        .next()
        .unwrap();
    let proxy = FaultyProxy::start(upstream).await;
    let url = format!("redis://{}/0", proxy.addr());
    (proxy, url)
}

/// The value of the sample `name` (no labels) on `metrics`.
pub(crate) fn sample(metrics: &str, name: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

#[tokio::test]
async fn the_token_endpoint_throttle_counts_across_instances() {
    let prefix = prefix();
    // 1 per second, a burst of 5, per client and per address (every request here comes from
    // 127.0.0.1): one bucket for both instances admits about 5 of 12 quick requests, one per
    // instance would admit about 9.
    let env = redis_env(&prefix, 1, 5);
    let pair = Pair::start_with(false, &refs(&env), &[]).await;
    let (host_a, host_b) = (pair.acme_a.host.clone(), pair.acme_b.host.clone());
    let (id, secret) = pair.machine_app("Throttled").await;
    let mut statuses = Vec::new();
    for i in 0..12 {
        let (app, host) = if i % 2 == 0 {
            (&pair.a, &host_a)
        } else {
            (&pair.b, &host_b)
        };
        statuses.push(grant(app, host, &id, &secret).await);
    }
    let admitted = statuses.iter().filter(|s| **s == 200).count();
    assert!(
        (3..=6).contains(&admitted),
        "one bucket for both instances: {statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 429),
        "{statuses:?}"
    );
    assert!(
        statuses[10..].iter().all(|s| *s == 429),
        "the shared bucket is empty at the end: {statuses:?}"
    );
    assert!(
        keys(&prefix).await.iter().any(|k| k.contains("throttle:")),
        "the buckets are in Redis"
    );
    pair.stop().await;
}

#[tokio::test]
async fn proof_records_and_cache_announcements_are_shared_through_redis() {
    let prefix = prefix();
    let env = redis_env(&prefix, ROOMY.0, ROOMY.1);
    let pair = Pair::start_with(false, &refs(&env), &[]).await;
    let (host_a, host_b) = (pair.acme_a.host.clone(), pair.acme_b.host.clone());

    // A DPoP proof spent at A is a replay at B (same htu: B is asked with A's host name).
    let prover = Prover::new(SigningAlg::Es256);
    let proof = prover.proof(&Claims::post(format!("http://{host_a}/oauth/token")));
    let dpop_grant = |app: &svc_testkit::TestApp| {
        app.request(Method::POST, "/oauth/token")
            .header("host", &host_a)
            .header("dpop", &proof)
            .basic_auth(&pair.acme_a.client_id, Some(&pair.acme_a.client_secret))
            .form(&[("grant_type", "client_credentials")])
            .send()
    };
    let first = dpop_grant(&pair.a).await.unwrap();
    assert_eq!(first.status(), 200, "{}", first.text().await.unwrap());
    let replay = dpop_grant(&pair.b).await.unwrap();
    assert_eq!(replay.status(), 400);
    let body: serde_json::Value = replay.json().await.unwrap();
    assert_eq!(body["error"], "invalid_dpop_proof", "{body}");
    assert!(
        keys(&prefix).await.iter().any(|k| k.contains("dpop:")),
        "the proof's jti is recorded in Redis"
    );

    // Cache announcements go through Redis: a deletion through A is refused by B at once.
    let (id, secret) = pair.machine_app("Announced").await;
    assert_eq!(grant(&pair.b, &host_b, &id, &secret).await, 200);
    pair.delete_app(&id).await;
    let seen = until(BOUND, 401, || grant(&pair.b, &host_b, &id, &secret))
        .await
        .unwrap_or_else(|got| panic!("B still answers {got} for a deleted application"));
    eprintln!("deleted application refused by the other instance after {seen:?} (Redis)");
    let metrics = pair.b.metrics(SCRAPE).await;
    assert_eq!(sample(&metrics, "svc_change_feed_listening"), Some(1.0));
    assert_eq!(sample(&metrics, "svc_coordination_up"), Some(1.0));
    let received = sample(&metrics, "svc_change_feed_received_total").unwrap_or(0.0);
    assert!(received >= 1.0, "B heard A through Redis: {metrics}");
    pair.stop().await;
}

#[tokio::test]
async fn without_redis_proofs_fail_closed_the_throttle_fails_open_and_all_recovers() {
    let prefix = prefix();
    let env = redis_env(&prefix, ROOMY.0, ROOMY.1);
    let (proxy, b_redis) = redis_proxy().await;
    let pair = Pair::start_with(false, &refs(&env), &[("SVC_REDIS__URL", &b_redis)]).await;
    let host_b = pair.acme_b.host.clone();
    let (id, secret) = pair.machine_app("Resilient").await;
    assert_eq!(grant(&pair.b, &host_b, &id, &secret).await, 200);

    proxy.cut();
    // The throttle counts in B alone meanwhile: the grant still works.
    assert_eq!(grant(&pair.b, &host_b, &id, &secret).await, 200);
    // A proof cannot be recorded: refused, not accepted unrecorded.
    let prover = Prover::new(SigningAlg::Es256);
    let proof = prover.proof(&Claims::post(format!("http://{host_b}/oauth/token")));
    let refused = pair
        .b
        .request(Method::POST, "/oauth/token")
        .header("host", &host_b)
        .header("dpop", &proof)
        .basic_auth(&pair.acme_b.client_id, Some(&pair.acme_b.client_secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 503);
    let body: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(body["error"], "temporarily_unavailable", "{body}");
    // Fail-open throttling keeps B ready; the gauges say what is missing.
    assert_eq!(pair.b.get("/health/ready").await.status(), 200);
    let metrics = pair.b.metrics(SCRAPE).await;
    assert_eq!(
        sample(&metrics, "svc_coordination_up"),
        Some(0.0),
        "{metrics}"
    );

    // Deleted while B hears nothing: refused by B (its caches are emptied while it is deaf).
    pair.delete_app(&id).await;
    until(Duration::from_secs(3), 401, || {
        grant(&pair.b, &host_b, &id, &secret)
    })
    .await
    .unwrap_or_else(|got| panic!("B answers {got} for an application deleted while deaf"));

    proxy.restore();
    let listening = || async {
        let metrics = pair.b.metrics(SCRAPE).await;
        if sample(&metrics, "svc_change_feed_listening") == Some(1.0) {
            200
        } else {
            503
        }
    };
    until(Duration::from_secs(10), 200, listening)
        .await
        .expect("B listens again without a restart");
    let fresh = prover.proof(&Claims::post(format!("http://{host_b}/oauth/token")));
    let recorded = pair
        .b
        .request(Method::POST, "/oauth/token")
        .header("host", &host_b)
        .header("dpop", &fresh)
        .basic_auth(&pair.acme_b.client_id, Some(&pair.acme_b.client_secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    assert_eq!(recorded.status(), 200, "proofs are recorded again");
    pair.stop().await;
}

#[tokio::test]
async fn fail_closed_throttling_refuses_and_reports_not_ready_until_redis_is_back() {
    let prefix = prefix();
    let env = redis_env(&prefix, ROOMY.0, ROOMY.1);
    let (proxy, b_redis) = redis_proxy().await;
    let pair = Pair::start_with(
        false,
        &refs(&env),
        &[
            ("SVC_REDIS__URL", &b_redis),
            ("SVC_REDIS__THROTTLE_FAIL_MODE", "fail-closed"),
        ],
    )
    .await;
    let host_b = pair.acme_b.host.clone();
    let (id, secret) = pair.machine_app("Strict").await;
    assert_eq!(grant(&pair.b, &host_b, &id, &secret).await, 200);
    assert_eq!(pair.b.get("/health/ready").await.status(), 200);

    proxy.cut();
    let refused = pair
        .b
        .request(Method::POST, "/oauth/token")
        .header("host", &host_b)
        .basic_auth(&id, Some(&secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 429);
    assert_eq!(
        refused
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()),
        Some("1")
    );
    assert_eq!(pair.b.get("/health/ready").await.status(), 503);
    // A, with its own path to Redis, is unaffected.
    assert_eq!(grant(&pair.a, &pair.acme_a.host, &id, &secret).await, 200);

    proxy.restore();
    until(Duration::from_secs(10), 200, || async {
        pair.b.get("/health/ready").await.status().as_u16()
    })
    .await
    .expect("ready again without a restart");
    until(Duration::from_secs(5), 200, || {
        grant(&pair.b, &host_b, &id, &secret)
    })
    .await
    .expect("admitted again");
    pair.stop().await;
}
