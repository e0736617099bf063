//! The logout token's claims and signature, the answers that finish, retry or give up a notice,
//! and the worker end to end over SQLite with a recording transport.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::keys::{Custody, KeyService, KeyServiceSettings};
use std::collections::VecDeque;
use std::sync::Mutex;
use svc_crypto::rotation::RotationPolicy;
use svc_crypto::verify_jwt_signature;
use svc_domain::{
    Application, Clock, LogoutChannels, LogoutNoticeState, ManualClock, OsRandom, Session,
    SessionClient, SigningAlg, Tenant,
};
use svc_store::Store;
use svc_store::conformance::{application_fixture, session_fixture, tenant_fixture, user_fixture};

/// Answers queued in order (then 200), and every request seen.
#[derive(Default)]
struct Rp {
    answers: Mutex<VecDeque<Result<u16, String>>>,
    seen: Mutex<Vec<(String, String)>>,
}

#[async_trait]
impl LogoutTransport for Rp {
    async fn post(&self, uri: &str, logout_token: &str) -> Result<u16, String> {
        self.seen
            .lock()
            .unwrap()
            .push((uri.to_owned(), logout_token.to_owned()));
        self.answers.lock().unwrap().pop_front().unwrap_or(Ok(200))
    }
}

struct World {
    worker: Arc<BackchannelLogout>,
    rp: Arc<Rp>,
    store: Arc<dyn Store>,
    keys: Arc<KeyService>,
    clock: Arc<ManualClock>,
    tenant: Tenant,
    app: Application,
    session: Session,
}

impl World {
    /// A tenant, an application listening on the back channel, and a session that signed into
    /// it and then ended.
    async fn new(answers: Vec<Result<u16, String>>) -> Self {
        Self::build(answers, true).await
    }

    /// The same, the session still live (it will expire after eight hours).
    async fn live() -> Self {
        Self::build(Vec::new(), false).await
    }

    async fn build(answers: Vec<Result<u16, String>>, revoke: bool) -> Self {
        let store: Arc<dyn Store> =
            Arc::new(svc_store_sqlite::testing::temp_store().await.unwrap());
        let tenant = tenant_fixture("acme", 1);
        let start = tenant.created_at + time::Duration::days(1);
        let clock = Arc::new(ManualClock::new(start));
        let keys = Arc::new(KeyService::new(
            store.clone(),
            Custody::Ephemeral,
            clock.clone(),
            KeyServiceSettings {
                access_token_alg: SigningAlg::Es256,
                policy: RotationPolicy::default(),
                refresh_after: Duration::from_secs(60),
            },
        ));
        let user = user_fixture(&tenant, 1, "ada@example.com");
        let app = Application {
            logout: LogoutChannels {
                backchannel_uri: Some("https://rp.example/logout?x=1".into()),
                backchannel_session_required: true,
                ..LogoutChannels::default()
            },
            ..application_fixture(&tenant, 11)
        };
        let session = session_fixture(&user, 1, start);
        let mut tx = store.write().await.unwrap();
        tx.insert_tenant(&tenant).await.unwrap();
        tx.insert_user(&user).await.unwrap();
        tx.insert_application(&app).await.unwrap();
        tx.insert_session(&session).await.unwrap();
        tx.join_session(&SessionClient {
            tenant_id: tenant.id.clone(),
            session_id: session.id.clone(),
            client_id: app.id.clone(),
            subject: "pairwise-subject".into(),
            issuer: "https://acme.example".into(),
            joined_at: start,
        })
        .await
        .unwrap();
        if revoke {
            assert!(
                tx.revoke_session(&tenant.id, &session.id, start)
                    .await
                    .unwrap()
            );
        }
        tx.commit().await.unwrap();
        let rp = Arc::new(Rp {
            answers: Mutex::new(answers.into()),
            ..Rp::default()
        });
        let ctx = ProtocolContext::new(
            store.clone(),
            keys.clone(),
            clock.clone(),
            Arc::new(OsRandom),
        );
        let worker = Arc::new(BackchannelLogout::new(
            ctx,
            rp.clone(),
            LogoutSettings::default(),
        ));
        Self {
            worker,
            rp,
            store,
            keys,
            clock,
            tenant,
            app,
            session,
        }
    }

    async fn state(&self) -> LogoutNoticeState {
        let mut tx = self.store.read().await.unwrap();
        let mut states = tx
            .logout_notices(&self.tenant.id, &self.session.id)
            .await
            .unwrap();
        tx.finish().await.unwrap();
        assert_eq!(states.len(), 1);
        states.remove(0)
    }

    fn calls(&self) -> usize {
        self.rp.seen.lock().unwrap().len()
    }
}

#[test]
fn retries_wait_four_times_longer_each_time_then_stop() {
    let settings = LogoutSettings::default();
    let delays: Vec<_> = (1..=5).map(|n| settings.retry_delay(n)).collect();
    assert_eq!(
        delays,
        vec![
            Some(Duration::from_secs(5)),
            Some(Duration::from_secs(20)),
            Some(Duration::from_secs(80)),
            Some(Duration::from_secs(320)),
            None
        ]
    );
}

#[test]
fn answers_are_read_as_the_spec_says() {
    for ok in [200, 204, 299] {
        assert_eq!(answered(ok), Answer::Delivered, "{ok}");
    }
    for again in [408, 429, 500, 502, 503, 504] {
        assert_eq!(answered(again), Answer::Retry, "{again}");
    }
    for refused in [100, 301, 302, 400, 401, 403, 404, 410, 418] {
        assert_eq!(answered(refused), Answer::Refused, "{refused}");
    }
}

#[tokio::test]
async fn the_logout_token_names_the_session_as_the_application_saw_it() {
    let world = World::new(Vec::new()).await;
    assert_eq!(world.worker.deliver_once().await.unwrap(), 1);
    let seen = world.rp.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    let (uri, token) = &seen[0];
    assert_eq!(uri, "https://rp.example/logout?x=1");

    let jwks = world.keys.published_jwks(&world.tenant).await.unwrap();
    let alg = world.app.id_token_signed_response_alg;
    let verified = verify_jwt_signature(&jwks.keys, token, alg).unwrap();
    assert_eq!(verified.typ.as_deref(), Some(LOGOUT_TOKEN_TYP));
    let c = verified.claims;
    assert_eq!(c["iss"], "https://acme.example");
    assert_eq!(c["sub"], "pairwise-subject");
    assert_eq!(c["aud"], world.app.id.as_str());
    assert_eq!(c["sid"], world.session.id.as_str());
    assert_eq!(c["events"], json!({ LOGOUT_EVENT: {} }));
    assert_eq!(c["iat"], world.clock.now().unix_timestamp());
    assert_eq!(c["exp"], world.clock.now().unix_timestamp() + 120);
    let jti = c["jti"].as_str().unwrap();
    assert_eq!(jti.len(), 22, "128 random bits, base64url");
    assert!(
        c.get("nonce").is_none(),
        "§2.4: a logout token never carries a nonce"
    );
    assert_eq!(c.as_object().unwrap().len(), 8, "{c}");

    let state = world.state().await;
    assert_eq!(state.outcome, LogoutOutcome::Delivered);
    assert_eq!((state.attempts, state.last_status_code), (1, Some(200)));
    // Delivered once: nothing is due any more, however late.
    world
        .clock
        .advance(time::Duration::days(1) - time::Duration::seconds(1));
    assert_eq!(world.worker.deliver_once().await.unwrap(), 0);
    assert_eq!(world.calls(), 1);
}

#[tokio::test]
async fn unanswered_or_failing_notices_are_retried_then_given_up() {
    let world = World::new(vec![
        Err("timed out after 5s".into()),
        Ok(503),
        Ok(429),
        Ok(500),
        Ok(502),
    ])
    .await;
    let mut jtis = Vec::new();
    for (attempt, wait) in [(1u32, 5i64), (2, 20), (3, 80), (4, 320)] {
        assert_eq!(world.worker.deliver_once().await.unwrap(), 1, "{attempt}");
        let state = world.state().await;
        assert_eq!(state.outcome, LogoutOutcome::Pending);
        assert_eq!(state.attempts, attempt);
        // Not due before its delay.
        world.clock.advance(time::Duration::seconds(wait - 1));
        assert_eq!(world.worker.deliver_once().await.unwrap(), 0);
        world.clock.advance(time::Duration::seconds(1));
        jtis.push(world.rp.seen.lock().unwrap().last().unwrap().1.clone());
    }
    let first = world.state().await;
    assert_eq!(
        first.last_error.as_deref(),
        Some("the application answered 500")
    );
    assert_eq!(world.worker.deliver_once().await.unwrap(), 1);
    let state = world.state().await;
    assert_eq!(state.outcome, LogoutOutcome::Failed);
    assert_eq!((state.attempts, state.last_status_code), (5, Some(502)));
    world.clock.advance(time::Duration::hours(1));
    assert_eq!(world.worker.deliver_once().await.unwrap(), 0);
    assert_eq!(world.calls(), 5);
    jtis.dedup();
    assert_eq!(jtis.len(), 4, "every attempt sends a fresh token");
}

#[tokio::test]
async fn a_refusal_ends_the_notice_at_once() {
    let world = World::new(vec![Ok(400)]).await;
    assert_eq!(world.worker.deliver_once().await.unwrap(), 1);
    let state = world.state().await;
    assert_eq!(state.outcome, LogoutOutcome::Failed);
    assert_eq!((state.attempts, state.last_status_code), (1, Some(400)));
    assert_eq!(
        state.last_error.as_deref(),
        Some("the application answered 400")
    );
    world.clock.advance(time::Duration::hours(1));
    assert_eq!(world.worker.deliver_once().await.unwrap(), 0);
    assert_eq!(world.calls(), 1);
}

#[tokio::test]
async fn an_application_that_dropped_its_uri_is_not_called() {
    let world = World::new(Vec::new()).await;
    let mut app = world.app.clone();
    app.logout = LogoutChannels::default();
    app.updated_at = world.clock.now();
    let mut tx = world.store.write().await.unwrap();
    let outcome = tx
        .update_application(&app, world.app.updated_at)
        .await
        .unwrap();
    assert_eq!(outcome, svc_store::UpdateOutcome::Applied);
    tx.commit().await.unwrap();
    assert_eq!(world.worker.deliver_once().await.unwrap(), 1);
    assert_eq!(world.calls(), 0);
    let state = world.state().await;
    assert_eq!(state.outcome, LogoutOutcome::Failed);
    assert_eq!(state.last_status_code, None);
    assert!(state.last_error.unwrap().contains("no longer registers"));
}

#[tokio::test]
async fn a_session_that_expires_is_announced_once_within_the_interval() {
    let world = World::live().await;
    let expires = world.session.expires_at;
    // The first pass sets the mark; the session is live, nothing is sent.
    assert_eq!(world.worker.deliver_once().await.unwrap(), 0);
    world.clock.set(expires - time::Duration::seconds(1));
    assert_eq!(world.worker.deliver_once().await.unwrap(), 0);
    assert_eq!(world.calls(), 0);
    // Expired, but this worker looked less than the interval ago.
    world.clock.set(expires + time::Duration::seconds(5));
    assert_eq!(world.worker.deliver_once().await.unwrap(), 0);
    world.clock.set(expires + time::Duration::seconds(10));
    assert_eq!(world.worker.deliver_once().await.unwrap(), 1);
    let seen = world.rp.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    let jwks = world.keys.published_jwks(&world.tenant).await.unwrap();
    let alg = world.app.id_token_signed_response_alg;
    let claims = verify_jwt_signature(&jwks.keys, &seen[0].1, alg)
        .unwrap()
        .claims;
    assert_eq!(claims["sid"], world.session.id.as_str());
    assert_eq!(claims["sub"], "pairwise-subject");
    assert_eq!(claims["iat"], world.clock.now().unix_timestamp());
    assert_eq!(world.state().await.outcome, LogoutOutcome::Delivered);
    // Later passes announce it no more.
    world.clock.set(expires + time::Duration::minutes(5));
    assert_eq!(world.worker.deliver_once().await.unwrap(), 0);
    assert_eq!(world.calls(), 1);
}
