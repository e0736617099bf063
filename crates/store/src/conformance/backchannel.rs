//! Conformance: backchannel requests (OpenID CIBA) are listed only for their person while
//! pending and live, decided once and only by that person (never a decoy), polled only by their
//! client with the interval enforced, and purged a day after they expire. An agent's request
//! (the use of a delegation its person approves each time) round-trips with what it names, is
//! polled by that agent only and is taken once, only once approved.

use super::grants::{base, client, stored_tenant};
use super::{tenant_fixture, user_fixture};
use crate::{Store, StoreError};
use std::sync::Arc;
use svc_domain::{
    AgentId, BackchannelRequest, BackchannelRequestId, BackchannelRequester, ClientId,
    DelegatedUse, DelegationId, DeviceStatus, ManualClock, ScopeSet, SecretHash, SeededRandom,
    Tenant, User, UserId,
};
use time::{Duration, OffsetDateTime};

/// A pending request of `client` for `user` (a decoy without one), started at `at` with
/// `auth_req_id` `reference`, polled every 5 s, valid for five minutes.
pub fn backchannel_fixture(
    tenant: &Tenant,
    client: &ClientId,
    user: Option<&UserId>,
    reference: &str,
    at: OffsetDateTime,
) -> BackchannelRequest {
    let seed = reference.bytes().map(u64::from).sum();
    BackchannelRequest {
        id: BackchannelRequestId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        hash: SecretHash::of(reference),
        tenant_id: tenant.id.clone(),
        requester: BackchannelRequester::Application(client.clone()),
        user_id: user.cloned(),
        scope: ScopeSet::parse("openid").expect("scopes"),
        binding_message: Some("W4-\"SCT\" ü".into()),
        authorization_details: user.is_some().then(super::grants::details_fixture),
        status: DeviceStatus::Pending,
        interval_secs: 5,
        last_polled_at: None,
        created_at: at,
        expires_at: at + Duration::minutes(5),
    }
}

async fn people(store: &Arc<dyn Store>, tenant: &Tenant) -> (User, User) {
    let ada = user_fixture(tenant, 1, "ada@example.com");
    let bob = user_fixture(tenant, 2, "bob@example.com");
    let mut tx = store.write().await.expect("write");
    tx.insert_user(&ada).await.expect("ada");
    tx.insert_user(&bob).await.expect("bob");
    tx.commit().await.expect("commit");
    (ada, bob)
}

async fn insert(store: &Arc<dyn Store>, r: &BackchannelRequest) {
    let mut tx = store.write().await.expect("write");
    tx.insert_backchannel_request(r).await.expect("insert");
    tx.commit().await.expect("commit");
}

/// Listed for their person only, while pending and live; decided once, by that person only;
/// a decoy is never listed and cannot be decided.
pub async fn backchannel_requests_are_listed_and_decided_by_their_person_only(
    store: Arc<dyn Store>,
) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let (ada, bob) = people(&store, &acme).await;
    let t0 = base(&acme);
    let mine = backchannel_fixture(&acme, &client(1), Some(&ada.id), "ar_one", t0);
    let decoy = backchannel_fixture(&acme, &client(1), None, "ar_decoy", t0);
    insert(&store, &mine).await;
    insert(&store, &decoy).await;

    let mut tx = store.read().await.expect("read");
    assert_eq!(
        tx.pending_backchannel_requests(&acme.id, &ada.id, t0)
            .await
            .expect("ada"),
        vec![mine.clone()]
    );
    assert!(
        tx.pending_backchannel_requests(&acme.id, &bob.id, t0)
            .await
            .expect("bob")
            .is_empty()
    );
    assert!(
        tx.pending_backchannel_requests(&acme.id, &ada.id, mine.expires_at)
            .await
            .expect("expired")
            .is_empty()
    );
    tx.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    let decide = |id, user, status, at| (id, user, status, at);
    for (id, user, status, at) in [
        decide(&mine.id, &bob.id, DeviceStatus::Approved, t0),
        decide(&mine.id, &ada.id, DeviceStatus::Approved, mine.expires_at),
        decide(&decoy.id, &ada.id, DeviceStatus::Approved, t0),
        decide(&decoy.id, &bob.id, DeviceStatus::Denied, t0),
    ] {
        assert_eq!(
            tx.decide_backchannel_request(&acme.id, id, user, status, at)
                .await
                .expect("decide"),
            None,
            "{id} by {user} at {at}"
        );
    }
    let approved = tx
        .decide_backchannel_request(&acme.id, &mine.id, &ada.id, DeviceStatus::Approved, t0)
        .await
        .expect("approve")
        .expect("pending");
    assert_eq!(approved.status, DeviceStatus::Approved);
    assert_eq!(
        tx.decide_backchannel_request(&acme.id, &mine.id, &ada.id, DeviceStatus::Denied, t0)
            .await
            .expect("again"),
        None,
        "decided once"
    );
    assert!(
        tx.pending_backchannel_requests(&acme.id, &ada.id, t0)
            .await
            .expect("after")
            .is_empty()
    );
    tx.commit().await.expect("commit");
}

/// Polls: another client or tenant finds nothing; the first is on time; one within the interval
/// is too soon and grows it by 5 s; a decoy polls like any request.
pub async fn backchannel_polls_enforce_and_grow_the_interval(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let t0 = base(&acme);
    let decoy = backchannel_fixture(&acme, &client(1), None, "ar_poll", t0);
    insert(&store, &decoy).await;
    let mut tx = store.write().await.expect("write");
    let hash = &decoy.hash;
    assert!(
        tx.poll_backchannel_request(&other.id, hash, client(1).as_str(), t0)
            .await
            .expect("tenant")
            .is_none()
    );
    assert!(
        tx.poll_backchannel_request(&acme.id, hash, client(2).as_str(), t0)
            .await
            .expect("client")
            .is_none()
    );
    let first = tx
        .poll_backchannel_request(&acme.id, hash, client(1).as_str(), t0)
        .await
        .expect("first")
        .expect("found");
    assert!(!first.too_fast);
    let soon = tx
        .poll_backchannel_request(
            &acme.id,
            hash,
            client(1).as_str(),
            t0 + Duration::seconds(2),
        )
        .await
        .expect("soon")
        .expect("found");
    assert!(soon.too_fast);
    assert_eq!(soon.request.interval_secs, 10);
    let later = tx
        .poll_backchannel_request(
            &acme.id,
            hash,
            client(1).as_str(),
            t0 + Duration::seconds(12),
        )
        .await
        .expect("later")
        .expect("found");
    assert!(!later.too_fast);
    assert_eq!(later.request.status, DeviceStatus::Pending);
    tx.commit().await.expect("commit");
}

/// Purged a day after they expired; one of a tenant that does not exist names the foreign key.
pub async fn expired_backchannel_requests_are_purged(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let t0 = base(&acme);
    let dead = backchannel_fixture(&acme, &client(1), None, "ar_dead", t0);
    let live = backchannel_fixture(&acme, &client(1), None, "ar_live", t0 + Duration::hours(2));
    insert(&store, &dead).await;
    insert(&store, &live).await;
    let now = dead.expires_at + Duration::days(1) + Duration::seconds(1);
    let mut tx = store.write().await.expect("write");
    assert!(tx.purge_expired_grants(now).await.expect("purge") >= 1);
    assert!(
        tx.poll_backchannel_request(&acme.id, &dead.hash, client(1).as_str(), now)
            .await
            .expect("dead")
            .is_none()
    );
    assert!(
        tx.poll_backchannel_request(&acme.id, &live.hash, client(1).as_str(), now)
            .await
            .expect("live")
            .is_some()
    );
    tx.commit().await.expect("commit");

    let ghost = tenant_fixture("ghost", 9);
    let mut tx = store.write().await.expect("write");
    match tx
        .insert_backchannel_request(&backchannel_fixture(&ghost, &client(1), None, "ar_x", t0))
        .await
    {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "backchannel_requests_tenant_id_fkey");
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
}

/// An agent's request for a use of a delegation reads back with the agent, the delegation and
/// the API; an application polling its hash finds nothing; it
/// cannot be taken before it is approved, is taken once after, and never by another agent.
pub async fn agent_backchannel_requests_are_taken_once_approved(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let (ada, _) = people(&store, &acme).await;
    let t0 = base(&acme);
    let id = |seed| AgentId::generate(&ManualClock::new(t0), &SeededRandom::new(seed));
    let (agent, other) = (id(1), id(2));
    let using = DelegatedUse {
        agent_id: agent.clone(),
        delegation_id: DelegationId::generate(&ManualClock::new(t0), &SeededRandom::new(3)),
        resource: "https://api.example.com/bookings".into(),
    };
    let request = BackchannelRequest {
        requester: BackchannelRequester::Agent(using),
        scope: ScopeSet::parse("bookings:read").expect("scope"),
        authorization_details: None,
        ..backchannel_fixture(&acme, &client(1), Some(&ada.id), "ar_agent", t0)
    };
    insert(&store, &request).await;
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.pending_backchannel_requests(&acme.id, &ada.id, t0)
            .await
            .expect("listed"),
        vec![request.clone()]
    );
    assert!(
        tx.poll_backchannel_request(&acme.id, &request.hash, client(1).as_str(), t0)
            .await
            .expect("an application")
            .is_none()
    );
    let polled = tx
        .poll_backchannel_request(&acme.id, &request.hash, agent.as_str(), t0)
        .await
        .expect("the agent")
        .expect("found");
    assert_eq!(polled.request.requester, request.requester);
    assert_eq!(
        tx.take_approved_agent_request(&acme.id, &request.hash, &agent)
            .await
            .expect("pending"),
        None,
        "not before it is approved"
    );
    tx.decide_backchannel_request(&acme.id, &request.id, &ada.id, DeviceStatus::Approved, t0)
        .await
        .expect("approve")
        .expect("pending");
    assert_eq!(
        tx.take_approved_agent_request(&acme.id, &request.hash, &other)
            .await
            .expect("other"),
        None,
        "another agent's take"
    );
    let taken = tx
        .take_approved_agent_request(&acme.id, &request.hash, &agent)
        .await
        .expect("take")
        .expect("approved");
    assert_eq!(taken.status, DeviceStatus::Approved);
    assert_eq!(taken.scope, request.scope);
    assert_eq!(
        tx.take_approved_agent_request(&acme.id, &request.hash, &agent)
            .await
            .expect("again"),
        None,
        "taken once"
    );
    tx.commit().await.expect("commit");
}
