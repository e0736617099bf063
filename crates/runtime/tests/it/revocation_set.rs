//! The in-memory revocation set across instances (issue 21 item 3): two instances on one
//! PostgreSQL database answer introspection from memory, yet a token revoked through one is
//! refused by the other within the bound, even when the notification that carries it is lost:
//! - the instance's path to the database cut while the revocation commits (its notification can
//!   never arrive): the instance notices, stops trusting its set, reads the database, and
//!   starts its set over once it listens again;
//! - the path to the database stalled without any error (a partition): its heartbeats stop
//!   coming back, so within a second it stops answering from memory.
//!
//! The first two also run with the caches' changes carried by Redis, where the set listens to
//! PostgreSQL on a loop of its own.
//!
//! Embedded SQLite has no feed and no set: every check reads the database (the revocation tests
//! of each feature run on both backends).

use crate::coordination_redis::{prefix, sample};
use crate::shared_caches::{BOUND, Pair, SCRAPE};
use reqwest::Method;
use serde_json::Value;
use std::time::{Duration, Instant};
use svc_testkit::TestApp;

/// What one instance holds: the service, the tenant's host as it names it, and a machine
/// application's credentials.
struct At<'a> {
    app: &'a TestApp,
    host: &'a str,
    id: &'a str,
    secret: &'a str,
}

impl At<'_> {
    async fn token(&self) -> String {
        let body: Value = self
            .app
            .request(Method::POST, "/oauth/token")
            .header("host", self.host)
            .basic_auth(self.id, Some(self.secret))
            .form(&[("grant_type", "client_credentials")])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        body["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token: {body}"))
            .to_owned()
    }

    /// `Ok(active)`, or `Err` with what came instead (a status, or no answer within `wait`).
    async fn introspect(&self, token: &str, wait: Duration) -> Result<bool, String> {
        let sent = self
            .app
            .request(Method::POST, "/oauth/introspect")
            .header("host", self.host)
            .basic_auth(self.id, Some(self.secret))
            .form(&[("token", token)])
            .timeout(wait)
            .send()
            .await
            .map_err(|e| format!("no answer: {e}"))?;
        let status = sent.status().as_u16();
        if status != 200 {
            return Err(format!("status {status}"));
        }
        let body: Value = sent.json().await.map_err(|e| e.to_string())?;
        body["active"]
            .as_bool()
            .ok_or_else(|| format!("no active member: {body}"))
    }

    async fn active(&self, token: &str) -> bool {
        self.introspect(token, Duration::from_secs(10))
            .await
            .unwrap_or_else(|e| panic!("introspection failed: {e}"))
    }

    async fn revoke(&self, token: &str) {
        let status = self
            .app
            .request(Method::POST, "/oauth/revoke")
            .header("host", self.host)
            .basic_auth(self.id, Some(self.secret))
            .form(&[("token", token)])
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, 200, "revocation");
    }

    /// Polls until `token` is inactive here: how long it took, or panics after `within`.
    async fn inactive_within(&self, token: &str, within: Duration) -> Duration {
        let started = Instant::now();
        loop {
            if !self.active(token).await {
                return started.elapsed();
            }
            assert!(
                started.elapsed() <= within,
                "still active after {:?}",
                started.elapsed()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// A and B as one client of acme sees them. One issuer for both, as behind a load balancer (in
/// development the issuer follows the request's host, port included).
fn both<'a>(pair: &'a Pair, id: &'a str, secret: &'a str) -> (At<'a>, At<'a>) {
    let at = |app| At {
        app,
        host: &pair.acme_a.host,
        id,
        secret,
    };
    (at(&pair.a), at(&pair.b))
}

/// The value of the unlabelled gauge `name` in `metrics`.
fn gauge(metrics: &str, name: &str) -> f64 {
    sample(metrics, name).unwrap_or_else(|| panic!("no {name} in {metrics}"))
}

/// Both instances' view of one machine application of acme.
async fn apps(pair: &Pair) -> (String, String) {
    pair.machine_app("Resource server").await
}

/// Waits until `app` trusts its revocation set (it listens and hears its heartbeats).
async fn until_trusted(app: &TestApp) {
    let started = Instant::now();
    while gauge(&app.metrics(SCRAPE).await, "svc_revocation_set_trusted") != 1.0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the set was never trusted again"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The environment that carries the caches' changes on Redis (under a prefix of its own).
fn over_redis(prefix: &str) -> [(&'static str, &str); 3] {
    [
        ("SVC_DEPLOYMENT__COORDINATION_BACKEND", "redis"),
        ("SVC_REDIS__URL", "redis://127.0.0.1:6379/0"),
        ("SVC_REDIS__KEY_PREFIX", prefix),
    ]
}

#[tokio::test]
async fn a_revocation_through_one_instance_is_refused_by_the_other_from_memory() {
    revoked_through_one_refused_by_the_other(Pair::start_with(false, &[], &[]).await).await;
}

#[tokio::test]
async fn with_redis_carrying_the_caches_the_set_still_hears_postgresql() {
    let prefix = prefix();
    let pair = Pair::start_with(false, &over_redis(&prefix), &[]).await;
    revoked_through_one_refused_by_the_other(pair).await;
}

async fn revoked_through_one_refused_by_the_other(pair: Pair) {
    let (id, secret) = apps(&pair).await;
    let (a, b) = both(&pair, &id, &secret);
    until_trusted(&pair.b).await;
    let (t1, t2) = (a.token().await, a.token().await);
    assert!(b.active(&t1).await && b.active(&t2).await);
    // B now holds acme's revocations (none) in memory.
    let metrics = pair.b.metrics(SCRAPE).await;
    assert_eq!(
        gauge(&metrics, "svc_revocation_set_tenants"),
        1.0,
        "{metrics}"
    );

    a.revoke(&t1).await;
    let took = b.inactive_within(&t1, BOUND).await;
    eprintln!("revoked through A, refused by B after {took:?}");
    assert!(b.active(&t2).await, "only the revoked token");
    // The other way round: the instance that revokes refuses at once.
    b.revoke(&t2).await;
    assert!(!b.active(&t2).await, "B refuses its own revocation at once");
    a.inactive_within(&t2, BOUND).await;

    let metrics = pair.b.metrics(SCRAPE).await;
    assert_eq!(
        gauge(&metrics, "svc_revocation_set_revocations"),
        2.0,
        "{metrics}"
    );
    // Revoking again (idempotent) changes nothing.
    a.revoke(&t1).await;
    assert!(!b.active(&t1).await);
    pair.stop().await;
}

#[tokio::test]
async fn a_revocation_whose_notification_is_lost_is_never_answered_active() {
    lost_notification(Pair::start_with(true, &[], &[]).await).await;
}

#[tokio::test]
async fn a_lost_notification_with_redis_carrying_the_caches() {
    let prefix = prefix();
    lost_notification(Pair::start_with(true, &over_redis(&prefix), &[]).await).await;
}

/// Rounds of: B's path to PostgreSQL cut (its listener and its pool), a revocation through A
/// meanwhile (its notification can never reach B), the path restored.
async fn lost_notification(pair: Pair) {
    let proxy = pair.proxy.as_ref().unwrap();
    let (id, secret) = apps(&pair).await;
    let (a, b) = both(&pair, &id, &secret);
    for round in 0..3 {
        until_trusted(&pair.b).await;
        let (token, kept) = (a.token().await, a.token().await);
        assert!(b.active(&token).await, "round {round}: loaded in memory");
        proxy.cut();
        a.revoke(&token).await;
        // Cut off, B may fail to answer, but never says active.
        let cut_off = b.introspect(&token, Duration::from_secs(5)).await;
        assert_ne!(cut_off, Ok(true), "round {round}: active while cut off");
        proxy.restore();
        // Back: B missed the notification, yet refuses the token (its set started over when
        // it listened again), and keeps the other one.
        let took = b.inactive_within(&token, Duration::from_secs(10)).await;
        until_trusted(&pair.b).await;
        for _ in 0..10 {
            assert!(!b.active(&token).await, "round {round}: active again");
        }
        assert!(b.active(&kept).await, "round {round}: the other token");
        eprintln!("round {round}: cut off B answered {cut_off:?}; back, refused after {took:?}");
    }
    pair.stop().await;
}

#[tokio::test]
async fn a_silent_partition_stops_the_set_answering_within_a_second() {
    let pair = Pair::start_with(true, &[], &[]).await;
    let proxy = pair.proxy.as_ref().unwrap();
    let (id, secret) = apps(&pair).await;
    let (a, b) = both(&pair, &id, &secret);
    until_trusted(&pair.b).await;
    let (t1, t2) = (a.token().await, a.token().await);
    assert!(b.active(&t1).await && b.active(&t2).await);

    // B's path to the database holds every byte and reports nothing.
    proxy.stall();
    // Within the freshness bound B still answers from memory, without its database: this is
    // the set at work (a database read could not be answered now).
    let from_memory = b.introspect(&t2, Duration::from_millis(300)).await;
    // Past it, B must not answer from memory any more; A revokes t1 meanwhile.
    tokio::time::sleep(BOUND + Duration::from_millis(100)).await;
    a.revoke(&t1).await;
    let stale = b.introspect(&t1, Duration::from_millis(1500)).await;
    assert_ne!(
        stale,
        Ok(true),
        "a revoked token answered active during a partition"
    );
    let metrics = pair.b.metrics(SCRAPE).await;
    assert_eq!(
        gauge(&metrics, "svc_revocation_set_trusted"),
        0.0,
        "{metrics}"
    );

    proxy.resume();
    b.inactive_within(&t1, Duration::from_secs(20)).await;
    until_trusted(&pair.b).await;
    assert!(!b.active(&t1).await);
    assert!(b.active(&t2).await);
    eprintln!("during the stall, within the bound B answered {from_memory:?}; after it {stale:?}");
    assert_eq!(
        from_memory,
        Ok(true),
        "the set answered while the database was away"
    );
    pair.stop().await;
}
