//! The Memcached coordination backend (issue 21 item 1) with a real Memcached (127.0.0.1:11211,
//! started by `scripts/services.sh`), two instances on one PostgreSQL database, each test under a
//! key prefix of its own: the token-endpoint throttle counts across instances, a DPoP proof spent
//! at one instance is refused at the other and recorded in Memcached, and caches are still kept
//! current across instances (through PostgreSQL: Memcached has no publish/subscribe); and with
//! B's path to Memcached cut, the failure modes hold — proofs are refused (fail closed), the
//! throttle counts locally (fail open) or refuses and reports the instance not ready (fail
//! closed) — and everything recovers without a restart.

use crate::coordination_redis::{ROOMY, prefix, refs, sample};
use crate::dpop::{Claims, Prover};
use crate::shared_caches::{BOUND, Pair, SCRAPE, grant, until};
use reqwest::Method;
use std::time::Duration;
use svc_domain::{Clock as _, SigningAlg, SystemClock};
use svc_testkit::FaultyProxy;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

const MEMCACHED: &str = "127.0.0.1:11211";

/// Keys under `prefix` in Memcached (`lru_crawler metadump`, which lists every live key).
async fn keys(prefix: &str) -> Vec<String> {
    let mut stream = tokio::net::TcpStream::connect(MEMCACHED).await.unwrap();
    stream
        .write_all(b"lru_crawler metadump all\r\n")
        .await
        .unwrap();
    let mut lines = BufReader::new(stream).lines();
    let mut found = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        if line == "END" || line.starts_with("ERROR") || line.starts_with("BUSY") {
            assert!(!line.starts_with("ERROR"), "{line}");
            break;
        }
        if let Some(key) = line
            .strip_prefix("key=")
            .and_then(|rest| rest.split(' ').next())
            .map(percent_decoded)
            .filter(|key| key.starts_with(prefix))
        {
            found.push(key);
        }
    }
    found
}

/// `metadump` writes keys URL-encoded (`svc%3Athrottle%3A…`).
fn percent_decoded(key: &str) -> String {
    let mut bytes = Vec::with_capacity(key.len());
    let mut rest = key.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        match (b, tail.get(..2)) {
            (b'%', Some(hex)) => {
                let hex = std::str::from_utf8(hex).unwrap();
                bytes.push(u8::from_str_radix(hex, 16).unwrap());
                rest = &tail[2..];
            }
            _ => {
                bytes.push(b);
                rest = tail;
            }
        }
    }
    String::from_utf8(bytes).unwrap()
}

/// The environment of an instance coordinating through Memcached under `prefix`, throttling the
/// token endpoint at `per_second` with `burst`.
fn memcached_env(prefix: &str, per_second: u32, burst: u32) -> Vec<(&'static str, String)> {
    vec![
        ("SVC_DEPLOYMENT__COORDINATION_BACKEND", "memcached".into()),
        ("SVC_MEMCACHED__URL", format!("memcache://{MEMCACHED}")),
        ("SVC_MEMCACHED__KEY_PREFIX", prefix.into()),
        ("SVC_DPOP__ENABLED", "true".into()),
        ("SVC_SERVER__ENDPOINT_THROTTLE__ENABLED", "true".into()),
        (
            "SVC_SERVER__ENDPOINT_THROTTLE__REQUESTS_PER_SECOND",
            per_second.to_string(),
        ),
        ("SVC_SERVER__ENDPOINT_THROTTLE__BURST", burst.to_string()),
    ]
}

/// A proxy in front of Memcached, for B, and the URL that reaches it.
async fn memcached_proxy() -> (FaultyProxy, String) {
    let upstream = tokio::net::lookup_host(MEMCACHED)
        .await
        .unwrap()
        .next()
        .unwrap();
    let proxy = FaultyProxy::start(upstream).await;
    let url = format!("memcache://{}", proxy.addr());
    (proxy, url)
}

/// Milliseconds since the epoch, on the clock the instances use.
fn now_ms() -> u64 {
    u64::try_from(SystemClock.now().unix_timestamp_nanos() / 1_000_000).unwrap()
}

/// A DPoP-bound client_credentials grant of acme's client at `app`, with `proof` for `host`.
async fn dpop_grant(pair: &Pair, app: &svc_testkit::TestApp, host: &str, proof: &str) -> u16 {
    app.request(Method::POST, "/oauth/token")
        .header("host", host)
        .header("dpop", proof)
        .basic_auth(&pair.acme_a.client_id, Some(&pair.acme_a.client_secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn the_token_endpoint_throttle_counts_across_instances() {
    let prefix = prefix();
    // 1 per second, a burst of 5: windows of 5 s admitting 5 (per client and per address; every
    // request here comes from 127.0.0.1). One count for both instances admits exactly 5 of 12
    // quick requests within a window; a count per instance (or a local fallback) would admit
    // 5 at each, 10 in all.
    let env = memcached_env(&prefix, 1, 5);
    let pair = Pair::start_with(false, &refs(&env), &[]).await;
    let (host_a, host_b) = (pair.acme_a.host.clone(), pair.acme_b.host.clone());
    let (id, secret) = pair.machine_app("Throttled").await;
    // Start just after a window begins, so all 12 fall in one window (checked below).
    let into_window = now_ms() % 5000;
    tokio::time::sleep(Duration::from_millis(5000 - into_window + 50)).await;
    let window = now_ms() / 5000;
    let mut statuses = Vec::new();
    for i in 0..12 {
        let (app, host) = if i % 2 == 0 {
            (&pair.a, &host_a)
        } else {
            (&pair.b, &host_b)
        };
        statuses.push(grant(app, host, &id, &secret).await);
    }
    assert_eq!(
        now_ms() / 5000,
        window,
        "the requests took too long to fall in one window; the test cannot conclude"
    );
    let admitted = statuses.iter().filter(|s| **s == 200).count();
    assert_eq!(admitted, 5, "one count for both instances: {statuses:?}");
    assert!(
        statuses[..5].iter().all(|s| *s == 200) && statuses[5..].iter().all(|s| *s == 429),
        "{statuses:?}"
    );
    let counters = keys(&prefix).await;
    assert!(
        counters.iter().any(|k| k.contains("throttle:")),
        "the counters are in Memcached: {counters:?}"
    );
    pair.stop().await;
}

#[tokio::test]
async fn proof_records_are_shared_through_memcached_and_caches_through_postgres() {
    let prefix = prefix();
    let env = memcached_env(&prefix, ROOMY.0, ROOMY.1);
    let pair = Pair::start_with(false, &refs(&env), &[]).await;
    let (host_a, host_b) = (pair.acme_a.host.clone(), pair.acme_b.host.clone());

    // A DPoP proof spent at A is a replay at B (same htu: B is asked with A's host name).
    let prover = Prover::new(SigningAlg::Es256);
    let proof = prover.proof(&Claims::post(format!("http://{host_a}/oauth/token")));
    assert_eq!(dpop_grant(&pair, &pair.a, &host_a, &proof).await, 200);
    let replay = pair
        .b
        .request(Method::POST, "/oauth/token")
        .header("host", &host_a)
        .header("dpop", &proof)
        .basic_auth(&pair.acme_a.client_id, Some(&pair.acme_a.client_secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    assert_eq!(replay.status(), 400);
    let body: serde_json::Value = replay.json().await.unwrap();
    assert_eq!(body["error"], "invalid_dpop_proof", "{body}");
    let recorded = keys(&prefix).await;
    assert!(
        recorded.iter().any(|k| k.contains("dpop:")),
        "the proof's jti is recorded in Memcached: {recorded:?}"
    );

    // Cache announcements still cross instances, through PostgreSQL: a deletion through A is
    // refused by B at once (its cache would serve the application for 300 s otherwise).
    let (id, secret) = pair.machine_app("Announced").await;
    assert_eq!(grant(&pair.b, &host_b, &id, &secret).await, 200);
    pair.delete_app(&id).await;
    let seen = until(BOUND, 401, || grant(&pair.b, &host_b, &id, &secret))
        .await
        .unwrap_or_else(|got| panic!("B still answers {got} for a deleted application"));
    eprintln!("deleted application refused by the other instance after {seen:?} (PostgreSQL)");
    let metrics = pair.b.metrics(SCRAPE).await;
    assert_eq!(sample(&metrics, "svc_change_feed_listening"), Some(1.0));
    assert_eq!(sample(&metrics, "svc_coordination_up"), Some(1.0));
    let received = sample(&metrics, "svc_change_feed_received_total").unwrap_or(0.0);
    assert!(received >= 1.0, "B heard A through PostgreSQL: {metrics}");
    pair.stop().await;
}

#[tokio::test]
async fn without_memcached_proofs_fail_closed_the_throttle_fails_open_and_all_recovers() {
    let prefix = prefix();
    let env = memcached_env(&prefix, ROOMY.0, ROOMY.1);
    let (proxy, b_memcached) = memcached_proxy().await;
    let pair = Pair::start_with(false, &refs(&env), &[("SVC_MEMCACHED__URL", &b_memcached)]).await;
    let host_b = pair.acme_b.host.clone();
    let (id, secret) = pair.machine_app("Resilient").await;
    assert_eq!(grant(&pair.b, &host_b, &id, &secret).await, 200);
    let prover = Prover::new(SigningAlg::Es256);
    let before = prover.proof(&Claims::post(format!("http://{host_b}/oauth/token")));
    assert_eq!(dpop_grant(&pair, &pair.b, &host_b, &before).await, 200);

    proxy.cut();
    // The throttle counts in B alone meanwhile: the grant still works.
    assert_eq!(grant(&pair.b, &host_b, &id, &secret).await, 200);
    // A proof cannot be recorded: refused, not accepted unrecorded.
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
    // Fail-open throttling keeps B ready; the gauge says what is missing.
    assert_eq!(pair.b.get("/health/ready").await.status(), 200);
    let metrics = pair.b.metrics(SCRAPE).await;
    assert_eq!(
        sample(&metrics, "svc_coordination_up"),
        Some(0.0),
        "{metrics}"
    );
    // Cache announcements do not go through Memcached: B still hears A's deletion at once.
    pair.delete_app(&id).await;
    until(BOUND, 401, || grant(&pair.b, &host_b, &id, &secret))
        .await
        .unwrap_or_else(|got| panic!("B answers {got} for a deleted application"));

    proxy.restore();
    // Proofs are recorded again without a restart (a fresh proof each try: a refused one may
    // have been recorded by the attempt that timed out).
    until(Duration::from_secs(10), 200, || async {
        let fresh = prover.proof(&Claims::post(format!("http://{host_b}/oauth/token")));
        dpop_grant(&pair, &pair.b, &host_b, &fresh).await
    })
    .await
    .expect("proofs are recorded again");
    // And the first proof, recorded before the cut, is still a replay.
    assert_eq!(dpop_grant(&pair, &pair.b, &host_b, &before).await, 400);
    let metrics = pair.b.metrics(SCRAPE).await;
    assert_eq!(sample(&metrics, "svc_coordination_up"), Some(1.0));
    pair.stop().await;
}

#[tokio::test]
async fn fail_closed_throttling_refuses_and_reports_not_ready_until_memcached_is_back() {
    let prefix = prefix();
    let env = memcached_env(&prefix, ROOMY.0, ROOMY.1);
    let (proxy, b_memcached) = memcached_proxy().await;
    let pair = Pair::start_with(
        false,
        &refs(&env),
        &[
            ("SVC_MEMCACHED__URL", &b_memcached),
            ("SVC_MEMCACHED__THROTTLE_FAIL_MODE", "fail-closed"),
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
    let metrics = pair.b.metrics(SCRAPE).await;
    assert_eq!(
        sample(&metrics, "svc_coordination_up"),
        Some(0.0),
        "{metrics}"
    );
    // A, with its own path to Memcached, is unaffected.
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
