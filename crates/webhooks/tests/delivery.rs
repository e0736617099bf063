//! The relay and the delivery worker against a real SQLite store and a real HTTP receiver on
//! loopback, with a manual clock so retries are due when the test says so.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use svc_domain::{
    Clock, DeliveryStatus, Event, EventData, EventType, ManualClock, OsRandom, Rng, Subscription,
    TargetPolicy, Tenant, UserId, WebhookId, WebhookSecret, WebhookUrl,
};
use svc_store::conformance::tenant_fixture;
use svc_store::{DeliveryFilter, Store};
use svc_webhooks::{
    DeliveryWorker, Relay, RetryPolicy, Sender, SystemLookup, WebhookMetrics, WorkerSettings,
    guarded_client,
};
use tokio::sync::Notify;

/// What the receiver answers next: status, extra headers, delay before answering.
type Reply = (u16, Vec<(&'static str, String)>, Duration);

#[derive(Clone, Default)]
struct Receiver {
    script: Arc<Mutex<VecDeque<Reply>>>,
    seen: Arc<Mutex<Vec<(HeaderMap, Bytes)>>>,
}

impl Receiver {
    async fn start(&self) -> String {
        let this = self.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                let this = this.clone();
                async move {
                    this.seen.lock().unwrap().push((headers, body));
                    let (status, extra, delay) = this
                        .script
                        .lock()
                        .unwrap()
                        .pop_front()
                        .unwrap_or((200, vec![], Duration::ZERO));
                    tokio::time::sleep(delay).await;
                    let mut response = StatusCode::from_u16(status).unwrap().into_response();
                    for (name, value) in extra {
                        response.headers_mut().insert(name, value.parse().unwrap());
                    }
                    response
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{addr}/hook")
    }

    fn answer(&self, reply: Reply) {
        self.script.lock().unwrap().push_back(reply);
    }

    fn seen(&self) -> Vec<(HeaderMap, Bytes)> {
        self.seen.lock().unwrap().clone()
    }
}

struct Harness {
    store: Arc<dyn Store>,
    clock: Arc<ManualClock>,
    tenant: Tenant,
    relay: Arc<Relay>,
    worker: Arc<DeliveryWorker>,
}

const OPEN: TargetPolicy = TargetPolicy {
    https_only: false,
    standard_port_only: false,
    public_only: false,
};

async fn harness(schedule: &[u64], timeout: Duration) -> Harness {
    let store: Arc<dyn Store> = Arc::new(svc_store_sqlite::testing::temp_store().await.unwrap());
    let tenant = tenant_fixture("acme", 1);
    let mut tx = store.write().await.unwrap();
    tx.insert_tenant(&tenant).await.unwrap();
    tx.commit().await.unwrap();
    let clock = Arc::new(ManualClock::new(
        tenant.created_at + time::Duration::days(1),
    ));
    let rng: Arc<dyn Rng> = Arc::new(OsRandom);
    let wake = Arc::new(Notify::new());
    let relay = Arc::new(Relay::new(
        store.clone(),
        clock.clone(),
        rng.clone(),
        100,
        Duration::from_millis(50),
        wake.clone(),
    ));
    let client = guarded_client(OPEN, timeout, Arc::new(SystemLookup)).unwrap();
    let sender = Sender::new(client, OPEN, timeout, Duration::from_secs(300));
    let worker = Arc::new(DeliveryWorker::new(
        store.clone(),
        clock.clone(),
        rng,
        sender,
        WorkerSettings {
            lease: Duration::from_secs(60),
            concurrency: 4,
            poll_interval: Duration::from_millis(50),
            retry: RetryPolicy::new(schedule.iter().copied().map(Duration::from_secs).collect()),
        },
        WebhookMetrics::default(),
        wake,
    ));
    Harness {
        store,
        clock,
        tenant,
        relay,
        worker,
    }
}

impl Harness {
    async fn subscribe(&self, url: &str, types: &[EventType], active: bool) -> Subscription {
        let now = self.clock.now();
        let subscription = Subscription {
            id: WebhookId::generate(self.clock.as_ref(), &OsRandom),
            tenant_id: self.tenant.id.clone(),
            url: WebhookUrl::parse(url).unwrap(),
            event_types: types.to_vec(),
            description: None,
            active,
            secret: WebhookSecret::generate(&OsRandom),
            previous_secret: None,
            disabled_reason: None,
            created_at: now,
            updated_at: now,
        };
        let mut tx = self.store.write().await.unwrap();
        tx.insert_webhook(&subscription).await.unwrap();
        tx.commit().await.unwrap();
        subscription
    }

    async fn record(&self, event_type: EventType) -> Event {
        let event = Event::new(
            self.clock.as_ref(),
            &OsRandom,
            &self.tenant.id,
            event_type,
            EventData::TenantUser {
                user_id: UserId::generate(self.clock.as_ref(), &OsRandom),
                email: "ada@example.com".into(),
                status: "suspended".into(),
                actor: "system".into(),
            },
        );
        let mut tx = self.store.write().await.unwrap();
        tx.insert_event(&event).await.unwrap();
        tx.commit().await.unwrap();
        event
    }

    async fn deliveries(&self, webhook: &WebhookId) -> Vec<svc_domain::Delivery> {
        let mut tx = self.store.read().await.unwrap();
        let list = tx
            .list_deliveries(
                &self.tenant.id,
                webhook,
                &DeliveryFilter::default(),
                None,
                svc_store::Order::Descending,
                100,
            )
            .await
            .unwrap();
        tx.finish().await.unwrap();
        list
    }

    async fn attempts(
        &self,
        delivery: &svc_domain::DeliveryId,
    ) -> Vec<svc_domain::DeliveryAttempt> {
        let mut tx = self.store.read().await.unwrap();
        let list = tx
            .delivery_attempts(&self.tenant.id, delivery)
            .await
            .unwrap();
        tx.finish().await.unwrap();
        list
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers.get(name).unwrap().to_str().unwrap()
}

#[tokio::test]
async fn the_relay_fans_out_to_active_subscriptions_that_want_the_type_and_the_worker_signs_it() {
    let h = harness(&[5, 300], Duration::from_secs(5)).await;
    let receiver = Receiver::default();
    let url = receiver.start().await;
    let wanted = h
        .subscribe(
            &url,
            &[EventType::TenantUserSuspended, EventType::LoginSuccess],
            true,
        )
        .await;
    let other_type = h.subscribe(&url, &[EventType::LoginSuccess], true).await;
    let inactive = h
        .subscribe(&url, &[EventType::TenantUserSuspended], false)
        .await;
    let event = h.record(EventType::TenantUserSuspended).await;

    assert_eq!(h.relay.relay_once().await.unwrap(), (1, 1));
    assert_eq!(h.relay.relay_once().await.unwrap(), (0, 0), "relayed once");
    assert!(h.deliveries(&other_type.id).await.is_empty());
    assert!(h.deliveries(&inactive.id).await.is_empty());

    assert_eq!(h.worker.run_once().await.unwrap(), 1);
    let seen = receiver.seen();
    assert_eq!(seen.len(), 1);
    let (headers, body) = &seen[0];
    assert_eq!(
        body.as_ref(),
        event.envelope().as_bytes(),
        "the recorded body, byte for byte"
    );
    let delivery = &h.deliveries(&wanted.id).await[0];
    assert_eq!(header(headers, "content-type"), "application/json");
    assert_eq!(header(headers, "x-svc-signature-suite"), "svc-webhook-v1");
    assert_eq!(header(headers, "x-svc-event"), "tenant_user.suspended");
    assert_eq!(header(headers, "x-svc-delivery"), delivery.id.as_str());
    assert_eq!(header(headers, "x-svc-signature-max-age"), "300");
    let timestamp: i64 = header(headers, "x-svc-timestamp").parse().unwrap();
    assert_eq!(timestamp, h.clock.now().unix_timestamp());
    let expected = svc_crypto::webhook_signature(
        wanted.secret.expose(),
        delivery.id.as_str(),
        timestamp,
        body,
    );
    assert_eq!(header(headers, "x-svc-signature-256"), expected);

    assert_eq!(delivery.status, DeliveryStatus::Succeeded);
    assert_eq!(delivery.attempts, 1);
    assert_eq!(delivery.last_status_code, Some(200));
    let attempts = h.attempts(&delivery.id).await;
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].status_code, Some(200));
    assert_eq!(attempts[0].error, None);
    assert_eq!(
        h.worker.run_once().await.unwrap(),
        0,
        "nothing left to send"
    );
}

#[tokio::test]
async fn a_500_is_retried_on_schedule_with_the_same_delivery_id_then_succeeds() {
    let h = harness(&[5, 300], Duration::from_secs(5)).await;
    let receiver = Receiver::default();
    let url = receiver.start().await;
    let webhook = h
        .subscribe(&url, &[EventType::TenantUserSuspended], true)
        .await;
    h.record(EventType::TenantUserSuspended).await;
    h.relay.relay_once().await.unwrap();
    receiver.answer((500, vec![], Duration::ZERO));

    h.worker.run_once().await.unwrap();
    let failed = &h.deliveries(&webhook.id).await[0];
    assert_eq!(failed.status, DeliveryStatus::Failed);
    assert_eq!(failed.last_status_code, Some(500));
    assert_eq!(failed.last_error.as_deref(), Some("receiver answered 500"));
    let due = failed.next_attempt_at.unwrap() - h.clock.now();
    assert!(
        due >= time::Duration::milliseconds(4_500) && due <= time::Duration::milliseconds(5_500),
        "{due}"
    );
    assert_eq!(h.worker.run_once().await.unwrap(), 0, "not due yet");

    h.clock.advance(time::Duration::seconds(6));
    assert_eq!(h.worker.run_once().await.unwrap(), 1);
    let done = &h.deliveries(&webhook.id).await[0];
    assert_eq!(done.status, DeliveryStatus::Succeeded);
    assert_eq!(done.attempts, 2);
    let seen = receiver.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        header(&seen[0].0, "x-svc-delivery"),
        header(&seen[1].0, "x-svc-delivery")
    );
    assert_eq!(seen[0].1, seen[1].1, "the same body on every attempt");
    let attempts = h.attempts(&done.id).await;
    assert_eq!(
        attempts.iter().map(|a| a.status_code).collect::<Vec<_>>(),
        vec![Some(500), Some(200)]
    );
    assert_eq!(
        attempts.iter().map(|a| a.number).collect::<Vec<_>>(),
        vec![1, 2]
    );
}

#[tokio::test]
async fn retry_after_redirects_timeouts_and_exhaustion() {
    let h = harness(&[1, 1], Duration::from_millis(400)).await;
    let receiver = Receiver::default();
    let url = receiver.start().await;
    let webhook = h
        .subscribe(&url, &[EventType::TenantUserSuspended], true)
        .await;
    h.record(EventType::TenantUserSuspended).await;
    h.relay.relay_once().await.unwrap();

    receiver.answer((429, vec![("retry-after", "120".into())], Duration::ZERO));
    h.worker.run_once().await.unwrap();
    let delivery = &h.deliveries(&webhook.id).await[0];
    assert_eq!(
        delivery.next_attempt_at,
        Some(h.clock.now() + time::Duration::seconds(120)),
        "Retry-After is later than the schedule, so it wins"
    );

    h.clock.advance(time::Duration::seconds(121));
    receiver.answer((
        302,
        vec![("location", "http://127.0.0.1:1/elsewhere".into())],
        Duration::ZERO,
    ));
    h.worker.run_once().await.unwrap();
    let delivery = &h.deliveries(&webhook.id).await[0];
    assert_eq!(delivery.status, DeliveryStatus::Failed);
    assert_eq!(
        delivery.last_error.as_deref(),
        Some("receiver answered 302; redirects are not followed")
    );

    h.clock.advance(time::Duration::seconds(2));
    receiver.answer((200, vec![], Duration::from_secs(3)));
    h.worker.run_once().await.unwrap();
    let delivery = &h.deliveries(&webhook.id).await[0];
    assert_eq!(
        delivery.status,
        DeliveryStatus::Exhausted,
        "three attempts with a two-delay schedule"
    );
    assert_eq!(delivery.attempts, 3);
    assert_eq!(delivery.next_attempt_at, None);
    assert_eq!(delivery.last_status_code, None);
    assert_eq!(
        delivery.last_error.as_deref(),
        Some("no answer within 400 ms")
    );
    assert_eq!(receiver.seen().len(), 3);
    h.clock.advance(time::Duration::days(1));
    assert_eq!(
        h.worker.run_once().await.unwrap(),
        0,
        "exhausted deliveries stay for inspection only"
    );
}

#[tokio::test]
async fn a_410_exhausts_the_delivery_and_switches_the_subscription_off_with_an_event() {
    let h = harness(&[5], Duration::from_secs(5)).await;
    let receiver = Receiver::default();
    let url = receiver.start().await;
    let webhook = h
        .subscribe(
            &url,
            &[
                EventType::TenantUserSuspended,
                EventType::AdminWebhookDisabled,
            ],
            true,
        )
        .await;
    h.record(EventType::TenantUserSuspended).await;
    h.record(EventType::TenantUserSuspended).await;
    h.relay.relay_once().await.unwrap();
    receiver.answer((410, vec![], Duration::ZERO));
    receiver.answer((410, vec![], Duration::ZERO));
    assert_eq!(h.worker.run_once().await.unwrap(), 2);

    let mut tx = h.store.write().await.unwrap();
    let stored = tx
        .webhook(&h.tenant.id, &webhook.id)
        .await
        .unwrap()
        .unwrap();
    assert!(!stored.active);
    assert!(
        stored
            .disabled_reason
            .as_deref()
            .unwrap()
            .contains("410 Gone")
    );
    let outbox = tx.unrelayed_events(10).await.unwrap();
    assert_eq!(outbox.len(), 1, "one admin.webhook.disabled event");
    assert_eq!(outbox[0].event_type, EventType::AdminWebhookDisabled);
    tx.commit().await.unwrap();
    let statuses: Vec<_> = h
        .deliveries(&webhook.id)
        .await
        .iter()
        .map(|d| d.status)
        .collect();
    assert_eq!(statuses, vec![DeliveryStatus::Exhausted; 2]);
    // The disabled event is fanned out, but not to the switched-off subscription itself.
    h.relay.relay_once().await.unwrap();
    h.clock.advance(time::Duration::hours(1));
    assert_eq!(h.worker.run_once().await.unwrap(), 0);
    assert_eq!(receiver.seen().len(), 2);
}

#[tokio::test]
async fn during_a_secret_rotation_both_signatures_are_sent() {
    let h = harness(&[5], Duration::from_secs(5)).await;
    let receiver = Receiver::default();
    let url = receiver.start().await;
    let mut webhook = h
        .subscribe(&url, &[EventType::TenantUserSuspended], true)
        .await;
    let old = webhook.secret.clone();
    webhook.previous_secret = Some((old.clone(), h.clock.now() + time::Duration::hours(1)));
    webhook.secret = WebhookSecret::generate(&OsRandom);
    let mut tx = h.store.write().await.unwrap();
    let read_at = webhook.updated_at;
    assert!(tx.update_webhook(&webhook, read_at).await.unwrap());
    tx.commit().await.unwrap();
    h.record(EventType::TenantUserSuspended).await;
    h.relay.relay_once().await.unwrap();
    h.worker.run_once().await.unwrap();
    let (headers, body) = &receiver.seen()[0];
    let id = header(headers, "x-svc-delivery");
    let ts: i64 = header(headers, "x-svc-timestamp").parse().unwrap();
    let values: Vec<&str> = header(headers, "x-svc-signature-256").split(' ').collect();
    assert_eq!(
        values,
        vec![
            svc_crypto::webhook_signature(webhook.secret.expose(), id, ts, body).as_str(),
            svc_crypto::webhook_signature(old.expose(), id, ts, body).as_str(),
        ]
    );
}

#[tokio::test]
async fn a_lease_left_by_a_stopped_worker_is_reaped_recorded_and_retried() {
    let h = harness(&[5], Duration::from_secs(5)).await;
    let receiver = Receiver::default();
    let url = receiver.start().await;
    let webhook = h
        .subscribe(&url, &[EventType::TenantUserSuspended], true)
        .await;
    h.record(EventType::TenantUserSuspended).await;
    h.relay.relay_once().await.unwrap();
    // Another worker claims it and dies without reporting.
    let now = h.clock.now();
    let mut tx = h.store.write().await.unwrap();
    let claimed = tx
        .claim_deliveries("dead-worker", now, now + time::Duration::seconds(60), 10)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(
        h.worker.run_once().await.unwrap(),
        0,
        "leased by someone else"
    );

    h.clock.advance(time::Duration::seconds(61));
    assert_eq!(
        h.worker.run_once().await.unwrap(),
        0,
        "reaped now, retried after the schedule's delay"
    );
    let delivery = &h.deliveries(&webhook.id).await[0];
    assert_eq!(delivery.status, DeliveryStatus::Failed);
    let attempts = h.attempts(&delivery.id).await;
    assert_eq!(attempts.len(), 1);
    assert!(
        attempts[0]
            .error
            .as_deref()
            .unwrap()
            .contains("worker stopped")
    );
    assert_eq!(attempts[0].duration_ms, 61_000);

    h.clock.advance(time::Duration::seconds(6));
    assert_eq!(h.worker.run_once().await.unwrap(), 1);
    let delivery = &h.deliveries(&webhook.id).await[0];
    assert_eq!(delivery.status, DeliveryStatus::Succeeded);
    assert_eq!(delivery.attempts, 2);
    assert_eq!(receiver.seen().len(), 1);

    // The dead worker coming back cannot overwrite what happened since.
    let mut tx = h.store.write().await.unwrap();
    let late = svc_domain::DeliveryAttempt {
        number: 1,
        started_at: now,
        duration_ms: 1,
        status_code: Some(500),
        error: None,
    };
    assert!(
        !tx.finish_attempt(
            &h.tenant.id,
            &delivery.id,
            "dead-worker",
            &late,
            svc_store::AttemptNext::Exhausted,
            h.clock.now()
        )
        .await
        .unwrap()
    );
    tx.commit().await.unwrap();
}

#[tokio::test]
async fn the_running_worker_delivers_what_the_running_relay_fans_out() {
    let h = harness(&[5], Duration::from_secs(5)).await;
    let receiver = Receiver::default();
    let url = receiver.start().await;
    h.subscribe(&url, &[EventType::TenantUserSuspended], true)
        .await;
    let cancel = tokio_util::sync::CancellationToken::new();
    let relay_task = tokio::spawn(h.relay.clone().run(cancel.clone()));
    let worker_task = tokio::spawn(h.worker.clone().run(cancel.clone()));
    for _ in 0..25 {
        h.record(EventType::TenantUserSuspended).await;
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while receiver.seen().len() < 25 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cancel.cancel();
    relay_task.await.unwrap();
    worker_task.await.unwrap();
    let seen = receiver.seen();
    assert_eq!(seen.len(), 25);
    let ids: std::collections::HashSet<_> = seen
        .iter()
        .map(|(h, _)| header(h, "x-svc-delivery").to_owned())
        .collect();
    assert_eq!(ids.len(), 25, "each delivery sent once");
}
