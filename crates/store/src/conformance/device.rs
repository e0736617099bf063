//! Conformance: device authorizations (RFC 8628) are found by their user code only while pending
//! and live, decided once, polled only by their client with the interval enforced (and grown by
//! 5 s per poll that came too soon, even when polls race), and purged a day after they expire.

use super::grants::{base, client, stored_tenant};
use super::{tenant_fixture, user_fixture};
use crate::{Store, StoreError};
use futures_util::future::join_all;
use std::sync::Arc;
use svc_domain::{
    ClientId, DeviceAuthorization, DeviceStatus, ScopeSet, SecretHash, Tenant, UserCode,
};
use time::{Duration, OffsetDateTime};

/// A pending authorization of `client` started at `at` with device code `device` and user code
/// `user_code`, polled every 5 s, valid for ten minutes.
pub fn device_fixture(
    tenant: &Tenant,
    client: &ClientId,
    device: &str,
    user_code: &str,
    at: OffsetDateTime,
) -> DeviceAuthorization {
    DeviceAuthorization {
        hash: SecretHash::of(device),
        tenant_id: tenant.id.clone(),
        client_id: client.clone(),
        user_code: UserCode::parse(user_code).expect("fixture code").hash(),
        scope: ScopeSet::parse("openid offline_access").expect("scopes"),
        authorization_details: Some(super::grants::details_fixture()),
        status: DeviceStatus::Pending,
        user_id: None,
        interval_secs: 5,
        last_polled_at: None,
        created_at: at,
        expires_at: at + Duration::minutes(10),
    }
}

async fn insert(store: &Arc<dyn Store>, a: &DeviceAuthorization) {
    let mut tx = store.write().await.expect("write");
    tx.insert_device_authorization(a).await.expect("insert");
    tx.commit().await.expect("commit");
}

/// Found by user code in its tenant while pending and live; decided once (approve or deny);
/// a second authorization with a live user code of the tenant is a named conflict, one in
/// another tenant is not.
pub async fn device_authorizations_are_found_while_pending_and_decided_once(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let mut tx = store.write().await.expect("write");
    tx.insert_user(&ada).await.expect("user");
    tx.commit().await.expect("commit");
    let t0 = base(&acme);
    let device = device_fixture(&acme, &client(1), "dc_one", "BCDF-GHJK", t0);
    insert(&store, &device).await;
    // The same user code in another tenant is another code.
    insert(
        &store,
        &device_fixture(&other, &client(1), "dc_one", "BCDF-GHJK", t0),
    )
    .await;
    let mut tx = store.write().await.expect("write");
    match tx
        .insert_device_authorization(&device_fixture(&acme, &client(2), "dc_two", "bcdfghjk", t0))
        .await
    {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "device_authorizations_user_code_key");
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    drop(tx);

    let code = &device.user_code;
    let mut tx = store.read().await.expect("read");
    assert_eq!(
        tx.pending_device_authorization(&acme.id, code, t0)
            .await
            .expect("found"),
        Some(device.clone())
    );
    assert_eq!(
        tx.pending_device_authorization(&acme.id, code, device.expires_at)
            .await
            .expect("expired"),
        None
    );
    assert_eq!(
        tx.pending_device_authorization(&acme.id, &SecretHash::of("XXXX"), t0)
            .await
            .expect("unknown"),
        None
    );
    tx.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.decide_device_authorization(
            &acme.id,
            &device.hash,
            DeviceStatus::Approved,
            &ada.id,
            device.expires_at
        )
        .await
        .expect("too late"),
        None
    );
    let approved = tx
        .decide_device_authorization(&acme.id, &device.hash, DeviceStatus::Approved, &ada.id, t0)
        .await
        .expect("approve")
        .expect("pending");
    assert_eq!(approved.status, DeviceStatus::Approved);
    assert_eq!(approved.user_id.as_ref(), Some(&ada.id));
    assert_eq!(
        tx.decide_device_authorization(&acme.id, &device.hash, DeviceStatus::Denied, &ada.id, t0)
            .await
            .expect("again"),
        None,
        "decided once"
    );
    assert!(
        tx.decide_device_authorization(&acme.id, &device.hash, DeviceStatus::Pending, &ada.id, t0)
            .await
            .is_err(),
        "pending is not a decision"
    );
    assert_eq!(
        tx.pending_device_authorization(&acme.id, code, t0)
            .await
            .expect("decided"),
        None,
        "a decided authorization is no longer offered"
    );
    tx.commit().await.expect("commit");
}

/// Polls: another client or tenant finds nothing (and changes nothing); the first poll is on
/// time; one within the interval is too soon and grows the interval by 5 s for the polls after
/// it; one after the grown interval is on time again.
pub async fn device_polls_enforce_and_grow_the_interval(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let t0 = base(&acme);
    let device = device_fixture(&acme, &client(1), "dc_poll", "BCDF-GHJL", t0);
    insert(&store, &device).await;
    let poll = |tenant: &Tenant, client_seed: u64, at: OffsetDateTime| {
        let store = store.clone();
        let (tenant, hash) = (tenant.id.clone(), device.hash.clone());
        async move {
            let mut tx = store.write().await.expect("write");
            let polled = tx
                .poll_device_authorization(&tenant, &hash, &client(client_seed), at)
                .await
                .expect("poll");
            tx.commit().await.expect("commit");
            polled
        }
    };
    assert_eq!(poll(&other, 1, t0).await, None);
    assert_eq!(poll(&acme, 2, t0).await, None);

    let first = poll(&acme, 1, t0 + Duration::seconds(1))
        .await
        .expect("first");
    assert!(!first.too_fast);
    assert_eq!(first.authorization.interval_secs, 5);
    assert_eq!(
        first.authorization.last_polled_at,
        Some(t0 + Duration::seconds(1))
    );

    let soon = poll(&acme, 1, t0 + Duration::seconds(3))
        .await
        .expect("soon");
    assert!(soon.too_fast);
    assert_eq!(soon.authorization.interval_secs, 10);

    // 9 s after the last poll: on time for 5 s, not for the grown 10 s.
    let still = poll(&acme, 1, t0 + Duration::seconds(12))
        .await
        .expect("still");
    assert!(still.too_fast);
    assert_eq!(still.authorization.interval_secs, 15);

    let later = poll(&acme, 1, t0 + Duration::seconds(27))
        .await
        .expect("later");
    assert!(!later.too_fast, "exactly the interval later is on time");
    assert_eq!(later.authorization.interval_secs, 15);
}

/// Ten polls at the same instant race: exactly one is on time.
pub async fn racing_device_polls_admit_one_on_time(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let t0 = base(&acme);
    let device = device_fixture(&acme, &client(1), "dc_race", "BCDF-GHJM", t0);
    insert(&store, &device).await;
    let polls = (0..10).map(|_| {
        let store = store.clone();
        let (tenant, hash) = (acme.id.clone(), device.hash.clone());
        async move {
            let mut tx = store.write().await?;
            let polled = tx
                .poll_device_authorization(&tenant, &hash, &client(1), t0)
                .await?;
            tx.commit().await?;
            Ok::<_, StoreError>(polled.expect("found").too_fast)
        }
    });
    let on_time = join_all(polls)
        .await
        .into_iter()
        .map(|r| r.expect("transaction"))
        .filter(|too_fast| !too_fast)
        .count();
    assert_eq!(on_time, 1);
}

/// The sweeper deletes authorizations a day after they expired and keeps younger ones; one of
/// a tenant that does not exist is refused naming the foreign key.
pub async fn expired_device_authorizations_are_purged(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let t0 = base(&acme);
    let dead = device_fixture(&acme, &client(1), "dc_dead", "BCDF-GHJN", t0);
    let live = device_fixture(
        &acme,
        &client(1),
        "dc_live",
        "BCDF-GHJP",
        t0 + Duration::hours(2),
    );
    insert(&store, &dead).await;
    insert(&store, &live).await;

    let now = dead.expires_at + Duration::days(1) + Duration::seconds(1);
    let mut tx = store.write().await.expect("write");
    let purged = tx.purge_expired_grants(now).await.expect("purge");
    assert!(purged >= 1, "{purged}");
    assert!(
        tx.poll_device_authorization(&acme.id, &dead.hash, &client(1), now)
            .await
            .expect("dead")
            .is_none()
    );
    assert!(
        tx.poll_device_authorization(&acme.id, &live.hash, &client(1), now)
            .await
            .expect("live")
            .is_some()
    );
    tx.commit().await.expect("commit");

    let ghost = tenant_fixture("ghost", 9);
    let mut tx = store.write().await.expect("write");
    match tx
        .insert_device_authorization(&device_fixture(&ghost, &client(1), "dc_x", "BCDF-GHJQ", t0))
        .await
    {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "device_authorizations_tenant_id_fkey");
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
}
