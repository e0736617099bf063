//! Conformance: API keys are found by hash within their tenant whatever their state, listed by
//! id in both directions, revoked once, brought forward to expire, marked used; only live keys
//! count; an unknown tenant names the foreign key. A subject's keys list newest first and count
//! while live; a tenant's policy for its people's own keys reads as the default until set.

use super::access::api_resource_fixture;
use super::grants::stored_tenant;
use super::tenant_fixture;
use crate::{Order, Store, StoreError};
use std::sync::Arc;
use svc_domain::{
    AgentId, ApiKey, ApiKeyId, ApiKeyPolicy, KeyReach, KeySubject, ManualClock, ScopeSet,
    SecretHash, SeededRandom, Tenant, UserId,
};
use time::{Duration, OffsetDateTime};

fn key_fixture(tenant: &Tenant, seed: u64, at: OffsetDateTime) -> ApiKey {
    ApiKey {
        id: ApiKeyId::generate(
            &ManualClock::new(at + Duration::milliseconds(i64::try_from(seed).unwrap_or(0))),
            &SeededRandom::new(seed),
        ),
        tenant_id: tenant.id.clone(),
        name: format!("key {seed} ✓"),
        reach: KeyReach::Management,
        scopes: ScopeSet::parse("applications:read users:write").expect("scopes"),
        hash: SecretHash::of(&format!("svck_{seed}")),
        created_by: "client:app_x".into(),
        created_at: at,
        expires_at: None,
        last_used_at: None,
        revoked_at: None,
        rotated_from: None,
    }
}

/// A key reads back by hash and id in its own tenant only, revoked and expired ones included;
/// lists page by id both ways; revoking twice reports nothing left; an expiry brought forward
/// and a use are stored; only live keys count.
pub async fn api_keys_are_found_by_hash_in_their_tenant_and_counted_while_live(
    store: Arc<dyn Store>,
) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = acme.created_at + Duration::seconds(5);
    let first = key_fixture(&acme, 10, at);
    let mut second = key_fixture(&acme, 11, at);
    second.expires_at = Some(at + Duration::hours(1));
    second.rotated_from = Some(first.id.clone());
    let third = key_fixture(&acme, 12, at);
    let mut tx = store.write().await.expect("write");
    for key in [&first, &second, &third] {
        tx.insert_api_key(key).await.expect("insert");
    }
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.api_key_by_hash(&acme.id, &second.hash)
            .await
            .expect("by hash"),
        Some(second.clone())
    );
    assert_eq!(
        read.api_key_by_hash(&other.id, &second.hash)
            .await
            .expect("other tenant"),
        None
    );
    assert_eq!(
        read.api_key(&acme.id, &first.id).await.expect("by id"),
        Some(first.clone())
    );
    assert_eq!(
        read.api_key(&other.id, &first.id).await.expect("other"),
        None
    );
    let page = read
        .api_keys(&acme.id, None, Order::Ascending, 2)
        .await
        .expect("page");
    assert_eq!(page, vec![first.clone(), second.clone()]);
    let rest = read
        .api_keys(&acme.id, Some(&second.id), Order::Ascending, 2)
        .await
        .expect("rest");
    assert_eq!(rest, vec![third.clone()]);
    let newest = read
        .api_keys(&acme.id, None, Order::Descending, 1)
        .await
        .expect("desc");
    assert_eq!(newest, vec![third.clone()]);
    assert!(
        read.api_keys(&other.id, None, Order::Ascending, 10)
            .await
            .expect("other")
            .is_empty()
    );
    assert_eq!(read.count_live_api_keys(&acme.id, at).await.expect("n"), 3);
    // Sub-second precision: an expiry half a second away is live, just past it is not.
    assert_eq!(
        read.count_live_api_keys(
            &acme.id,
            at + Duration::hours(1) - Duration::milliseconds(500)
        )
        .await
        .expect("n"),
        3
    );
    assert_eq!(
        read.count_live_api_keys(&acme.id, at + Duration::hours(1))
            .await
            .expect("n"),
        2
    );
    read.finish().await.expect("finish");

    let later = at + Duration::minutes(3);
    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.revoke_api_key(&other.id, &first.id, later)
            .await
            .expect("other tenant's revoke")
    );
    assert!(
        tx.revoke_api_key(&acme.id, &first.id, later)
            .await
            .expect("revoke")
    );
    assert!(
        !tx.revoke_api_key(&acme.id, &first.id, later)
            .await
            .expect("again")
    );
    assert!(
        !tx.expire_api_key(&acme.id, &first.id, later)
            .await
            .expect("a revoked key keeps its expiry")
    );
    let overlap = later + Duration::milliseconds(250);
    assert!(
        tx.expire_api_key(&acme.id, &third.id, overlap)
            .await
            .expect("expire")
    );
    tx.touch_api_key(&acme.id, &third.id, later)
        .await
        .expect("touch");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    let revoked = read
        .api_key_by_hash(&acme.id, &first.hash)
        .await
        .expect("revoked")
        .expect("still found");
    assert_eq!(revoked.revoked_at, Some(later));
    let expiring = read
        .api_key(&acme.id, &third.id)
        .await
        .expect("read")
        .expect("found");
    assert_eq!(expiring.expires_at, Some(overlap));
    assert_eq!(expiring.last_used_at, Some(later));
    assert_eq!(
        read.count_live_api_keys(&acme.id, later).await.expect("n"),
        2,
        "the revoked key no longer counts"
    );
    assert_eq!(
        read.count_live_api_keys(&acme.id, overlap)
            .await
            .expect("n"),
        1,
        "nor the one past its overlap"
    );
    read.finish().await.expect("finish");

    let ghost = tenant_fixture("ghost", 9);
    let mut tx = store.write().await.expect("write");
    match tx.insert_api_key(&key_fixture(&ghost, 20, at)).await {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "api_keys_tenant_id_fkey");
        }
        other => panic!("expected the foreign key, got {other:?}"),
    }
}

/// A key acting as a person or an agent at an API reads back with its reach; deleting the API
/// deletes its keys and leaves management keys alone.
pub async fn api_keys_for_an_api_keep_their_subject_and_go_with_the_api(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let at = acme.created_at + Duration::seconds(5);
    let api = api_resource_fixture(
        &acme,
        3,
        "https://api.example.com/trips",
        &["trips:read"],
        at,
    );
    let rng = SeededRandom::new(4);
    let clock = ManualClock::new(at);
    let mut person = key_fixture(&acme, 30, at);
    person.reach = KeyReach::Api {
        resource: api.id.clone(),
        subject: KeySubject::User(UserId::generate(&clock, &rng)),
    };
    person.scopes = ScopeSet::parse("trips:read").expect("scopes");
    let mut agent = key_fixture(&acme, 31, at);
    agent.reach = KeyReach::Api {
        resource: api.id.clone(),
        subject: KeySubject::Agent(AgentId::generate(&clock, &rng)),
    };
    let management = key_fixture(&acme, 32, at);
    let mut tx = store.write().await.expect("write");
    tx.insert_api_resource(&api).await.expect("api");
    for key in [&person, &agent, &management] {
        tx.insert_api_key(key).await.expect("insert");
    }
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    for key in [&person, &agent, &management] {
        assert_eq!(
            read.api_key_by_hash(&acme.id, &key.hash)
                .await
                .expect("read"),
            Some(key.clone())
        );
    }
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    assert!(
        tx.delete_api_resource(&acme.id, &api.id)
            .await
            .expect("delete")
    );
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.api_key(&acme.id, &person.id).await.expect("read"),
        None
    );
    assert_eq!(read.api_key(&acme.id, &agent.id).await.expect("read"), None);
    assert_eq!(
        read.api_key(&acme.id, &management.id).await.expect("read"),
        Some(management.clone())
    );
    read.finish().await.expect("finish");

    // An API of another tenant cannot be named.
    let other = stored_tenant(&store, "other", 2).await;
    let theirs = api_resource_fixture(&other, 5, "https://api.example.com/theirs", &[], at);
    let mut tx = store.write().await.expect("write");
    tx.insert_api_resource(&theirs).await.expect("theirs");
    tx.commit().await.expect("commit");
    let mut foreign = key_fixture(&acme, 33, at);
    foreign.reach = KeyReach::Api {
        resource: theirs.id.clone(),
        subject: KeySubject::User(UserId::generate(&clock, &rng)),
    };
    let mut tx = store.write().await.expect("write");
    assert!(
        tx.insert_api_key(&foreign).await.is_err(),
        "another tenant's API"
    );
}

/// A person's keys list newest first (revoked ones included, bounded by the limit) and only their
/// live ones count; another subject's and another tenant's are apart. The policy reads as the
/// default until set, round-trips, is per tenant, and names the foreign key for a tenant that
/// does not exist.
pub async fn subject_keys_list_and_count_and_the_policy_round_trips(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let at = acme.created_at + Duration::seconds(5);
    let api = api_resource_fixture(
        &acme,
        3,
        "https://api.example.com/trips",
        &["trips:read"],
        at,
    );
    let rng = SeededRandom::new(4);
    let clock = ManualClock::new(at);
    let ada = KeySubject::User(UserId::generate(&clock, &rng));
    let grace = KeySubject::User(UserId::generate(&clock, &rng));
    let keyed = |seed: u64, subject: &KeySubject| {
        let mut key = key_fixture(&acme, seed, at);
        key.reach = KeyReach::Api {
            resource: api.id.clone(),
            subject: subject.clone(),
        };
        key.scopes = ScopeSet::parse("trips:read").expect("scopes");
        key
    };
    let first = keyed(40, &ada);
    let mut revoked = keyed(41, &ada);
    revoked.revoked_at = Some(at);
    let mut expired = keyed(42, &ada);
    expired.expires_at = Some(at + Duration::seconds(1));
    let newest = keyed(43, &ada);
    let graces = keyed(44, &grace);
    let mut tx = store.write().await.expect("write");
    tx.insert_api_resource(&api).await.expect("api");
    for key in [&first, &revoked, &expired, &newest, &graces] {
        tx.insert_api_key(key).await.expect("insert");
    }
    tx.insert_api_key(&key_fixture(&acme, 45, at))
        .await
        .expect("management");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    let listed = read
        .subject_api_keys(&acme.id, &ada, 10)
        .await
        .expect("list");
    let ids: Vec<&ApiKeyId> = listed.iter().map(|k| &k.id).collect();
    assert_eq!(ids, [&newest.id, &expired.id, &revoked.id, &first.id]);
    assert_eq!(listed[0], newest);
    let two = read
        .subject_api_keys(&acme.id, &ada, 2)
        .await
        .expect("list");
    assert_eq!(two.len(), 2);
    let later = at + Duration::seconds(2);
    assert_eq!(
        read.count_live_subject_api_keys(&acme.id, &ada, later)
            .await
            .expect("count"),
        2,
        "the first and the newest: the revoked and the expired do not count"
    );
    assert_eq!(
        read.count_live_subject_api_keys(&acme.id, &grace, later)
            .await
            .expect("count"),
        1
    );
    let other = stored_tenant(&store, "other", 2).await;
    assert!(
        read.subject_api_keys(&other.id, &ada, 10)
            .await
            .expect("list")
            .is_empty()
    );

    assert_eq!(
        read.api_key_policy(&acme.id).await.expect("policy"),
        ApiKeyPolicy::default()
    );
    read.finish().await.expect("finish");

    let policy = ApiKeyPolicy {
        self_service: true,
        resources: vec![api.id.clone()],
        max_per_person: 3,
        max_lifetime_days: 30,
        agent_keys: true,
    };
    let mut tx = store.write().await.expect("write");
    tx.set_api_key_policy(&acme.id, &policy, at)
        .await
        .expect("set");
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(read.api_key_policy(&acme.id).await.expect("policy"), policy);
    assert_eq!(
        read.api_key_policy(&other.id).await.expect("policy"),
        ApiKeyPolicy::default()
    );
    read.finish().await.expect("finish");
    let off = ApiKeyPolicy {
        self_service: false,
        agent_keys: false,
        ..policy.clone()
    };
    let mut tx = store.write().await.expect("write");
    tx.set_api_key_policy(&acme.id, &off, at)
        .await
        .expect("again");
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(read.api_key_policy(&acme.id).await.expect("policy"), off);
    read.finish().await.expect("finish");

    let gone = tenant_fixture("gone", 9);
    let mut tx = store.write().await.expect("write");
    match tx.set_api_key_policy(&gone.id, &policy, at).await {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "api_key_policies_tenant_id_fkey");
        }
        other => panic!("a policy for a tenant that does not exist: {other:?}"),
    }
}
