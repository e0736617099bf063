//! Conformance: the event outbox, webhook subscriptions, deliveries, their leases and history.

use super::grants::{base, stored_tenant};
use crate::{AttemptNext, DeliveryFilter, Store, StoreError};
use futures_util::future::join_all;
use std::collections::HashSet;
use std::sync::Arc;
use svc_domain::{
    Delivery, DeliveryAttempt, DeliveryId, DeliveryStatus, Event, EventData, EventType,
    ManualClock, SeededRandom, Subscription, Tenant, UserId, WebhookId, WebhookSecret, WebhookUrl,
};
use time::{Duration, OffsetDateTime};

/// A subscription of `tenant` to `types`, created at `at`, active, with a previous secret.
pub fn subscription_fixture(
    tenant: &Tenant,
    seed: u64,
    types: &[EventType],
    at: OffsetDateTime,
) -> Subscription {
    let rng = SeededRandom::new(seed);
    let clock = ManualClock::new(at);
    Subscription {
        id: WebhookId::generate(&clock, &rng),
        tenant_id: tenant.id.clone(),
        url: WebhookUrl::parse(&format!("https://hooks.example.com/{seed}?q=\"ü\"")).expect("url"),
        event_types: types.to_vec(),
        description: Some(format!("owner team {seed} 'quoted'")),
        active: true,
        secret: WebhookSecret::generate(&rng),
        previous_secret: Some((WebhookSecret::generate(&rng), at + Duration::hours(1))),
        disabled_reason: None,
        created_at: at,
        updated_at: at,
    }
}

/// An event of `tenant` at `at` (a user suspension, whose payload has quotes and non-ASCII).
pub fn event_fixture(tenant: &Tenant, seed: u64, at: OffsetDateTime) -> Event {
    let rng = SeededRandom::new(seed);
    let clock = ManualClock::new(at);
    Event::new(
        &clock,
        &rng,
        &tenant.id,
        EventType::TenantUserSuspended,
        EventData::TenantUser {
            user_id: UserId::generate(&clock, &rng),
            email: format!("\"zoë\"+{seed}@example.com"),
            status: "suspended".into(),
            actor: "system".into(),
        },
    )
}

/// A new pending delivery of `event` to `webhook`, due at `at`.
pub fn delivery_fixture(
    webhook: &Subscription,
    event: &Event,
    seed: u64,
    at: OffsetDateTime,
) -> Delivery {
    Delivery {
        id: DeliveryId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: webhook.tenant_id.clone(),
        webhook_id: webhook.id.clone(),
        event_id: event.id.clone(),
        event_type: event.event_type,
        status: DeliveryStatus::Pending,
        attempts: 0,
        next_attempt_at: Some(at),
        last_status_code: None,
        last_error: None,
        redelivery_of: None,
        created_at: at,
        updated_at: at,
    }
}

fn attempt(
    number: u32,
    at: OffsetDateTime,
    status: Option<u16>,
    error: Option<&str>,
) -> DeliveryAttempt {
    DeliveryAttempt {
        number,
        started_at: at,
        duration_ms: 12,
        status_code: status,
        error: error.map(str::to_owned),
    }
}

/// Stores `webhook`, `event` (relayed) and a pending delivery of it, committed.
async fn stored_delivery(
    store: &Arc<dyn Store>,
    webhook: &Subscription,
    event: &Event,
    seed: u64,
    at: OffsetDateTime,
) -> Delivery {
    let delivery = delivery_fixture(webhook, event, seed, at);
    let mut tx = store.write().await.expect("write");
    if tx
        .webhook(&webhook.tenant_id, &webhook.id)
        .await
        .expect("read")
        .is_none()
    {
        tx.insert_webhook(webhook).await.expect("webhook");
    }
    tx.insert_relayed_event(event, at).await.expect("event");
    tx.insert_delivery(&delivery).await.expect("delivery");
    tx.commit().await.expect("commit");
    delivery
}

/// Subscriptions round-trip every field, list in id order with a cursor, update and delete
/// within their tenant only, and are counted.
pub async fn webhooks_round_trip_and_are_isolated_per_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let t0 = base(&acme);
    let a = subscription_fixture(&acme, 1, &[EventType::LoginSuccess, EventType::Logout], t0);
    let b = subscription_fixture(
        &acme,
        2,
        &[EventType::WebhookTest],
        t0 + Duration::seconds(1),
    );
    let mut tx = store.write().await.expect("write");
    tx.insert_webhook(&a).await.expect("a");
    tx.insert_webhook(&b).await.expect("b");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.webhook(&acme.id, &a.id).await.expect("a"),
        Some(a.clone())
    );
    assert_eq!(read.webhook(&other.id, &a.id).await.expect("foreign"), None);
    assert_eq!(read.count_webhooks(&acme.id).await.expect("count"), 2);
    assert_eq!(read.count_webhooks(&other.id).await.expect("count"), 0);
    let first = read
        .list_webhooks(&acme.id, None, crate::Order::Ascending, 1)
        .await
        .expect("page");
    assert_eq!(first, vec![a.clone()]);
    let second = read
        .list_webhooks(&acme.id, Some(&a.id), crate::Order::Ascending, 10)
        .await
        .expect("page");
    assert_eq!(second, vec![b.clone()]);
    let newest = read
        .list_webhooks(&acme.id, None, crate::Order::Descending, 1)
        .await
        .expect("newest page");
    assert_eq!(newest, vec![b.clone()]);
    let older = read
        .list_webhooks(&acme.id, Some(&b.id), crate::Order::Descending, 10)
        .await
        .expect("older page");
    assert_eq!(older, vec![a.clone()]);
    assert!(
        read.list_webhooks(&other.id, None, crate::Order::Ascending, 10)
            .await
            .expect("none")
            .is_empty()
    );
    read.finish().await.expect("finish");

    let mut changed = a.clone();
    changed.url = WebhookUrl::parse("https://elsewhere.example.org/h").expect("url");
    changed.event_types = vec![EventType::TokenIssued];
    changed.description = None;
    changed.active = false;
    changed.previous_secret = None;
    changed.disabled_reason = Some("receiver answered 410 Gone".into());
    changed.updated_at = t0 + Duration::minutes(5);
    let mut foreign = changed.clone();
    foreign.tenant_id = other.id.clone();
    let mut tx = store.write().await.expect("write");
    assert!(
        tx.update_webhook(&changed, a.updated_at)
            .await
            .expect("update")
    );
    assert!(matches!(
        tx.update_webhook(&foreign, a.updated_at).await,
        Err(StoreError::NotFound)
    ));
    assert!(
        !tx.delete_webhook(&other.id, &b.id, b.updated_at)
            .await
            .expect("foreign delete")
    );
    assert!(
        tx.delete_webhook(&acme.id, &b.id, b.updated_at)
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_webhook(&acme.id, &b.id, b.updated_at)
            .await
            .expect("again")
    );
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.webhook(&acme.id, &a.id).await.expect("a"),
        Some(changed)
    );
    assert_eq!(read.webhook(&acme.id, &b.id).await.expect("b"), None);
    read.finish().await.expect("finish");
}

/// Events wait for the relay in id order, are kept byte for byte, vanish from the work list once
/// relayed, and are rolled back with their transaction.
pub async fn outbox_events_wait_for_the_relay_and_roll_back_with_their_change(
    store: Arc<dyn Store>,
) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let t0 = base(&acme);
    let first = event_fixture(&acme, 1, t0);
    let second = event_fixture(&acme, 2, t0 + Duration::milliseconds(5));
    let mut tx = store.write().await.expect("write");
    tx.insert_event(&second).await.expect("second");
    tx.insert_event(&first).await.expect("first");
    tx.commit().await.expect("commit");
    let rolled_back = event_fixture(&acme, 3, t0 + Duration::seconds(1));
    let mut tx = store.write().await.expect("write");
    tx.insert_event(&rolled_back).await.expect("third");
    drop(tx);

    let mut tx = store.write().await.expect("write");
    let pending = tx.unrelayed_events(10).await.expect("unrelayed");
    let ids: Vec<_> = pending.iter().map(|e| e.id.clone()).collect();
    assert_eq!(
        ids,
        vec![first.id.clone(), second.id.clone()],
        "oldest first, rollback gone"
    );
    assert_eq!(pending[0].tenant_id, acme.id);
    assert_eq!(pending[0].event_type, EventType::TenantUserSuspended);
    assert_eq!(pending[0].occurred_at, first.occurred_at);
    assert_eq!(tx.unrelayed_events(1).await.expect("limit").len(), 1);
    let all = tx.events(&acme.id, None, 10).await.expect("events");
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].id, first.id);
    assert_eq!(all[0].body, first.envelope(), "the envelope byte for byte");
    assert_eq!(all[1].occurred_at, second.occurred_at);
    let page = tx
        .events(&acme.id, Some(&first.id), 10)
        .await
        .expect("page");
    assert_eq!(
        page.iter().map(|e| e.id.clone()).collect::<Vec<_>>(),
        vec![second.id.clone()]
    );
    tx.mark_events_relayed(std::slice::from_ref(&first.id), t0)
        .await
        .expect("mark");
    tx.mark_events_relayed(&[], t0)
        .await
        .expect("nothing to mark");
    let left: Vec<_> = tx
        .unrelayed_events(10)
        .await
        .expect("unrelayed")
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(left, vec![second.id.clone()]);
    tx.commit().await.expect("commit");

    // The body a worker receives is the envelope exactly as serialised when recorded.
    let webhook = subscription_fixture(&acme, 1, &[EventType::TenantUserSuspended], t0);
    stored_delivery(&store, &webhook, &event_fixture(&acme, 9, t0), 9, t0).await;
    let mut tx = store.write().await.expect("write");
    let claimed = tx
        .claim_deliveries("w1", t0, t0 + Duration::minutes(1), 10)
        .await
        .expect("claim");
    tx.commit().await.expect("commit");
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].body, event_fixture(&acme, 9, t0).envelope());
    assert!(claimed[0].body.contains("zoë"));
    assert_eq!(claimed[0].subscription, webhook);
}

/// A claim leases due deliveries once, counts the attempt, and only the lease holder of that
/// very attempt can report it; a retry is due again at its time; the history keeps every
/// attempt in order.
pub async fn deliveries_are_leased_fenced_retried_and_recorded(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let t0 = base(&acme);
    let webhook = subscription_fixture(&acme, 1, &[EventType::TenantUserSuspended], t0);
    let event = event_fixture(&acme, 1, t0);
    let delivery = stored_delivery(&store, &webhook, &event, 1, t0).await;
    let later = stored_delivery(
        &store,
        &webhook,
        &event_fixture(&acme, 2, t0),
        2,
        t0 + Duration::hours(1),
    )
    .await;

    let lease = t0 + Duration::minutes(1);
    let mut tx = store.write().await.expect("write");
    let claimed = tx
        .claim_deliveries("w1", t0, lease, 10)
        .await
        .expect("claim");
    tx.commit().await.expect("commit");
    assert_eq!(claimed.len(), 1, "only the due delivery");
    assert_eq!(claimed[0].delivery.id, delivery.id);
    assert_eq!(claimed[0].delivery.attempts, 1);

    let mut tx = store.write().await.expect("write");
    assert!(
        tx.claim_deliveries("w2", t0, lease, 10)
            .await
            .expect("claim")
            .is_empty(),
        "leased"
    );
    let first = attempt(1, t0, Some(500), Some("receiver answered 500"));
    assert!(
        !tx.finish_attempt(
            &acme.id,
            &delivery.id,
            "w2",
            &first,
            AttemptNext::Succeeded,
            t0
        )
        .await
        .expect("foreign owner")
    );
    assert!(
        !tx.finish_attempt(
            &acme.id,
            &delivery.id,
            "w1",
            &attempt(2, t0, None, None),
            AttemptNext::Succeeded,
            t0
        )
        .await
        .expect("wrong attempt")
    );
    let retry_at = t0 + Duration::seconds(5);
    assert!(
        tx.finish_attempt(
            &acme.id,
            &delivery.id,
            "w1",
            &first,
            AttemptNext::RetryAt(retry_at),
            t0
        )
        .await
        .expect("owner")
    );
    assert!(
        !tx.finish_attempt(
            &acme.id,
            &delivery.id,
            "w1",
            &first,
            AttemptNext::Succeeded,
            t0
        )
        .await
        .expect("reported twice")
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    let stored = read
        .delivery(&acme.id, &webhook.id, &delivery.id)
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(stored.status, DeliveryStatus::Failed);
    assert_eq!(stored.attempts, 1);
    assert_eq!(stored.next_attempt_at, Some(retry_at));
    assert_eq!(stored.last_status_code, Some(500));
    assert_eq!(stored.last_error.as_deref(), Some("receiver answered 500"));
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    assert!(
        tx.claim_deliveries("w1", t0 + Duration::seconds(4), lease, 10)
            .await
            .expect("early")
            .is_empty()
    );
    let again = tx
        .claim_deliveries("w3", retry_at, retry_at + Duration::minutes(1), 10)
        .await
        .expect("due");
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].delivery.attempts, 2);
    let second = attempt(2, retry_at, Some(204), None);
    assert!(
        tx.finish_attempt(
            &acme.id,
            &delivery.id,
            "w3",
            &second,
            AttemptNext::Succeeded,
            retry_at
        )
        .await
        .expect("succeeded")
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    let done = read
        .delivery(&acme.id, &webhook.id, &delivery.id)
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(done.status, DeliveryStatus::Succeeded);
    assert_eq!(done.next_attempt_at, None);
    assert_eq!(done.last_status_code, Some(204));
    assert_eq!(done.last_error, None);
    assert_eq!(
        read.delivery_attempts(&acme.id, &delivery.id)
            .await
            .expect("history"),
        vec![first, second]
    );
    let foreign = stored_tenant(&store, "other", 2).await;
    assert!(
        read.delivery_attempts(&foreign.id, &delivery.id)
            .await
            .expect("foreign")
            .is_empty()
    );
    assert_eq!(
        read.delivery(&foreign.id, &webhook.id, &delivery.id)
            .await
            .expect("foreign"),
        None
    );
    // History: newest first, filtered, paged.
    let all = read
        .list_deliveries(
            &acme.id,
            &webhook.id,
            &DeliveryFilter::default(),
            None,
            crate::Order::Descending,
            10,
        )
        .await
        .expect("list");
    assert_eq!(
        all.iter().map(|d| d.id.clone()).collect::<Vec<_>>(),
        vec![later.id.clone(), delivery.id.clone()]
    );
    let oldest = read
        .list_deliveries(
            &acme.id,
            &webhook.id,
            &DeliveryFilter::default(),
            None,
            crate::Order::Ascending,
            1,
        )
        .await
        .expect("oldest first");
    assert_eq!(
        oldest.iter().map(|d| d.id.clone()).collect::<Vec<_>>(),
        vec![delivery.id.clone()]
    );
    let newer = read
        .list_deliveries(
            &acme.id,
            &webhook.id,
            &DeliveryFilter::default(),
            Some(&delivery.id),
            crate::Order::Ascending,
            10,
        )
        .await
        .expect("newer than the cursor");
    assert_eq!(
        newer.iter().map(|d| d.id.clone()).collect::<Vec<_>>(),
        vec![later.id.clone()]
    );
    let pending = read
        .list_deliveries(
            &acme.id,
            &webhook.id,
            &DeliveryFilter {
                status: Some(DeliveryStatus::Pending),
            },
            None,
            crate::Order::Descending,
            10,
        )
        .await
        .expect("filtered");
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id, later.id);
    let page = read
        .list_deliveries(
            &acme.id,
            &webhook.id,
            &DeliveryFilter::default(),
            Some(&later.id),
            crate::Order::Descending,
            10,
        )
        .await
        .expect("cursor");
    assert_eq!(page.len(), 1);
    assert_eq!(page[0].id, delivery.id);
    read.finish().await.expect("finish");
}

/// A lease that ran out is reported with its owner; the reaper can settle it, after which the
/// late original owner cannot. Inactive subscriptions' deliveries are never claimed.
pub async fn expired_leases_are_reported_and_inactive_subscriptions_wait(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let t0 = base(&acme);
    let webhook = subscription_fixture(&acme, 1, &[EventType::TenantUserSuspended], t0);
    let delivery = stored_delivery(&store, &webhook, &event_fixture(&acme, 1, t0), 1, t0).await;
    let mut tx = store.write().await.expect("write");
    let claimed = tx
        .claim_deliveries("crashed", t0, t0 + Duration::seconds(30), 10)
        .await
        .expect("claim");
    assert_eq!(claimed.len(), 1);
    assert!(
        tx.expired_leases(t0 + Duration::seconds(29), 10)
            .await
            .expect("live")
            .is_empty()
    );
    let expired = tx
        .expired_leases(t0 + Duration::seconds(31), 10)
        .await
        .expect("expired");
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].owner, "crashed");
    assert_eq!(expired[0].leased_at, t0);
    assert_eq!(expired[0].delivery.id, delivery.id);
    assert_eq!(expired[0].delivery.attempts, 1);
    let interrupted = attempt(1, t0, None, Some("no outcome recorded: the lease ran out"));
    let retry = t0 + Duration::seconds(40);
    assert!(
        tx.finish_attempt(
            &acme.id,
            &delivery.id,
            "crashed",
            &interrupted,
            AttemptNext::RetryAt(retry),
            t0 + Duration::seconds(31)
        )
        .await
        .expect("reaped")
    );
    assert!(
        tx.expired_leases(t0 + Duration::seconds(31), 10)
            .await
            .expect("gone")
            .is_empty()
    );
    tx.commit().await.expect("commit");

    let mut paused = webhook.clone();
    paused.active = false;
    let mut tx = store.write().await.expect("write");
    assert!(
        tx.update_webhook(&paused, webhook.updated_at)
            .await
            .expect("pause")
    );
    assert!(
        tx.claim_deliveries("w", retry, retry + Duration::minutes(1), 10)
            .await
            .expect("claim")
            .is_empty()
    );
    let stats = tx.webhook_queue_stats().await.expect("stats");
    assert_eq!(
        stats.open_deliveries, 0,
        "a paused subscription's deliveries are not waiting work"
    );
    assert!(
        tx.update_webhook(&webhook, paused.updated_at)
            .await
            .expect("resume")
    );
    let stats = tx.webhook_queue_stats().await.expect("stats");
    assert_eq!(stats.open_deliveries, 1);
    assert_eq!(stats.oldest_pending_at, Some(t0));
    assert_eq!(
        tx.claim_deliveries("w", retry, retry + Duration::minutes(1), 10)
            .await
            .expect("claim")
            .len(),
        1
    );
    tx.commit().await.expect("commit");
}

/// Queue figures count unrelayed events and open deliveries; purging history keeps open work
/// and what it needs.
pub async fn queue_stats_and_history_purge(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let t0 = base(&acme);
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.webhook_queue_stats().await.expect("empty"),
        crate::QueueStats::default()
    );
    let unrelayed = event_fixture(&acme, 1, t0 - Duration::minutes(1));
    tx.insert_event(&unrelayed).await.expect("event");
    let stats = tx.webhook_queue_stats().await.expect("stats");
    assert_eq!(stats.unrelayed_events, 1);
    assert_eq!(stats.oldest_pending_at, Some(unrelayed.occurred_at));
    tx.commit().await.expect("commit");

    let webhook = subscription_fixture(&acme, 1, &[EventType::TenantUserSuspended], t0);
    let done = stored_delivery(&store, &webhook, &event_fixture(&acme, 2, t0), 2, t0).await;
    let open_event = event_fixture(&acme, 3, t0);
    let open = stored_delivery(&store, &webhook, &open_event, 3, t0 + Duration::days(10)).await;
    let mut tx = store.write().await.expect("write");
    let claimed = tx
        .claim_deliveries("w", t0, t0 + Duration::minutes(1), 1)
        .await
        .expect("claim");
    assert_eq!(claimed[0].delivery.id, done.id);
    assert!(
        tx.finish_attempt(
            &acme.id,
            &done.id,
            "w",
            &attempt(1, t0, Some(200), None),
            AttemptNext::Succeeded,
            t0
        )
        .await
        .expect("done")
    );
    let purged = tx
        .purge_webhook_history(t0 + Duration::days(1), 1)
        .await
        .expect("purge");
    assert_eq!(
        purged, 2,
        "the finished delivery and its event (a limit of one of each kind)"
    );
    assert_eq!(
        tx.delivery(&acme.id, &webhook.id, &done.id)
            .await
            .expect("read"),
        None
    );
    assert!(
        tx.delivery(&acme.id, &webhook.id, &open.id)
            .await
            .expect("read")
            .is_some()
    );
    assert_eq!(
        tx.unrelayed_events(10).await.expect("unrelayed").len(),
        1,
        "unrelayed events stay"
    );
    tx.commit().await.expect("commit");
}

/// Eight workers race to claim twenty deliveries: every delivery is leased exactly once.
pub async fn racing_delivery_claims_lease_each_delivery_once(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let t0 = base(&acme);
    let webhook = subscription_fixture(&acme, 1, &[EventType::TenantUserSuspended], t0);
    let mut expected = HashSet::new();
    for seed in 0..20 {
        let event = event_fixture(&acme, 100 + seed, t0);
        expected.insert(
            stored_delivery(&store, &webhook, &event, 100 + seed, t0)
                .await
                .id,
        );
    }
    let workers = (0..8).map(|w| {
        let store = store.clone();
        async move {
            let mut mine = Vec::new();
            loop {
                let mut tx = store.write().await?;
                let claimed = tx
                    .claim_deliveries(&format!("w{w}"), t0, t0 + Duration::minutes(1), 3)
                    .await?;
                tx.commit().await?;
                if claimed.is_empty() {
                    return Ok::<_, StoreError>(mine);
                }
                mine.extend(claimed.into_iter().map(|c| c.delivery.id));
            }
        }
    });
    let mut seen = Vec::new();
    for claimed in join_all(workers).await {
        seen.extend(claimed.expect("worker"));
    }
    assert_eq!(seen.len(), 20, "no delivery leased twice");
    assert_eq!(seen.into_iter().collect::<HashSet<_>>(), expected);
}

/// Updates and deletes are conditional on the revision the caller read: one carrying a stale
/// revision is refused with `false` and changes nothing (a missing subscription is still
/// `NotFound`), and of eight writers racing from the same revision exactly one wins, so no update
/// is lost, on every backend and isolation level.
pub async fn webhook_writes_carrying_a_stale_revision_change_nothing(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let t0 = base(&acme);
    let webhook = subscription_fixture(&acme, 1, &[EventType::Logout], t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_webhook(&webhook).await.expect("insert");
    tx.commit().await.expect("commit");

    let mut first = webhook.clone();
    first.description = Some("first".into());
    first.updated_at = t0 + Duration::seconds(1);
    let mut late = webhook.clone();
    late.description = Some("late".into());
    late.updated_at = t0 + Duration::seconds(2);
    let mut tx = store.write().await.expect("write");
    assert!(tx.update_webhook(&first, t0).await.expect("first"));
    assert!(
        !tx.update_webhook(&late, t0).await.expect("stale update"),
        "read at a revision that is no longer current"
    );
    assert!(
        !tx.delete_webhook(&acme.id, &webhook.id, t0)
            .await
            .expect("stale delete")
    );
    let ghost = subscription_fixture(&acme, 2, &[EventType::Logout], t0);
    assert!(matches!(
        tx.update_webhook(&ghost, t0).await,
        Err(StoreError::NotFound)
    ));
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.webhook(&acme.id, &webhook.id).await.expect("read"),
        Some(first.clone()),
        "the stale writes changed nothing"
    );
    read.finish().await.expect("finish");

    // Eight writers that all read `first` race; each commits only if its update applied.
    let writers = (1..=8i64).map(|n| {
        let store = store.clone();
        let mut mine = first.clone();
        mine.description = Some(format!("writer {n}"));
        mine.updated_at = first.updated_at + Duration::microseconds(n);
        async move {
            let mut tx = store.write().await?;
            let applied = tx.update_webhook(&mine, first.updated_at).await?;
            tx.commit().await?;
            Ok::<_, StoreError>(applied.then_some(mine))
        }
    });
    let winners: Vec<Subscription> = join_all(writers)
        .await
        .into_iter()
        .filter_map(|r| r.expect("writer"))
        .collect();
    assert_eq!(winners.len(), 1, "exactly one writer applies its update");
    let mut read = store.read().await.expect("read");
    let won = read.webhook(&acme.id, &webhook.id).await.expect("read");
    assert_eq!(won, winners.into_iter().next());
    read.finish().await.expect("finish");

    // Writers that read with `webhook_for_update` take turns: each sees the previous commit, so
    // every conditional update applies and no change is lost.
    let writers = (1..=8i64).map(|n| {
        let store = store.clone();
        let (tenant, id) = (acme.id.clone(), webhook.id.clone());
        async move {
            let mut tx = store.write().await?;
            let mut mine = tx.webhook_for_update(&tenant, &id).await?.expect("present");
            let read_at = mine.updated_at;
            mine.description = Some(format!("{}+", mine.description.unwrap_or_default()));
            mine.updated_at = read_at + Duration::microseconds(n);
            let applied = tx.update_webhook(&mine, read_at).await?;
            tx.commit().await?;
            Ok::<_, StoreError>(applied)
        }
    });
    for applied in join_all(writers).await {
        assert!(applied.expect("writer"), "a locked read is never stale");
    }
    let mut read = store.read().await.expect("read");
    let last = read
        .webhook(&acme.id, &webhook.id)
        .await
        .expect("read")
        .expect("present");
    read.finish().await.expect("finish");
    let before = won.and_then(|w| w.description).unwrap_or_default();
    assert_eq!(last.description, Some(format!("{before}++++++++")));
    let other = stored_tenant(&store, "other", 2).await;
    let mut tx = store.write().await.expect("write");
    for (tenant, id) in [(&acme.id, &ghost.id), (&other.id, &webhook.id)] {
        assert_eq!(
            tx.webhook_for_update(tenant, id).await.expect("missing"),
            None,
            "absent, or another tenant's"
        );
    }
    tx.commit().await.expect("commit");
}
