//! Conformance: delegations (round trips of every field, isolation per tenant, a person's list
//! newest first and filtered by agent, revocation by the person only and only once, deletion
//! with their tenant).

use super::grants::stored_tenant;
use super::user_fixture;
use crate::Store;
use std::sync::Arc;
use svc_domain::{
    AgentId, Delegation, DelegationId, ManualClock, ScopeSet, SeededRandom, Tenant, UserId,
};
use time::{Duration, OffsetDateTime};

/// A delegation of `user` to `agent` in `tenant`, granted at `at` (ids grow with `at`).
pub fn delegation_fixture(
    tenant: &Tenant,
    user: &UserId,
    agent: &AgentId,
    seed: u64,
    at: OffsetDateTime,
) -> Delegation {
    Delegation {
        id: DelegationId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: tenant.id.clone(),
        user_id: user.clone(),
        agent_id: agent.clone(),
        scopes: ScopeSet::parse("bookings:read bookings:write").expect("scopes"),
        resources: vec![
            "https://api.example.com/bookings".into(),
            "https://mcp.example.com".into(),
        ],
        expires_at: at + Duration::days(30) + Duration::microseconds(17),
        per_use_approval: seed.is_multiple_of(2),
        authorization_details: seed.is_multiple_of(2).then(super::grants::details_fixture),
        created_at: at,
        revoked_at: None,
    }
}

fn agent_id(seed: u64, at: OffsetDateTime) -> AgentId {
    AgentId::generate(&ManualClock::new(at), &SeededRandom::new(seed))
}

/// Every field reads back as written, inside the writing transaction and after; another
/// tenant reads nothing; a person's list is newest first and narrows to one agent.
pub async fn delegations_round_trip_and_list_per_person(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = acme.created_at + Duration::days(1) + Duration::microseconds(223_457);
    let ada = user_fixture(&acme, 1, "ada@example.com").id;
    let bob = user_fixture(&acme, 2, "bob@example.com").id;
    let (helper, booker) = (agent_id(1, at), agent_id(2, at));
    let first = delegation_fixture(&acme, &ada, &helper, 1, at);
    let second = Delegation {
        scopes: ScopeSet::default(),
        resources: Vec::new(),
        ..delegation_fixture(&acme, &ada, &booker, 2, at + Duration::seconds(1))
    };
    let bobs = delegation_fixture(&acme, &bob, &helper, 3, at + Duration::seconds(2));

    let mut tx = store.write().await.expect("write");
    for d in [&first, &second, &bobs] {
        tx.insert_delegation(d).await.expect("insert");
    }
    assert_eq!(
        tx.delegation(&acme.id, &first.id).await.expect("read"),
        Some(first.clone())
    );
    tx.commit().await.expect("commit");

    let mut tx = store.read().await.expect("read");
    assert_eq!(
        tx.delegation(&acme.id, &second.id).await.expect("read"),
        Some(second.clone())
    );
    assert_eq!(
        tx.delegation(&other.id, &first.id).await.expect("read"),
        None
    );
    assert_eq!(
        tx.delegations_of_user(&acme.id, &ada, None)
            .await
            .expect("list"),
        vec![second.clone(), first.clone()],
        "newest first"
    );
    assert_eq!(
        tx.delegations_of_user(&acme.id, &ada, Some(&helper))
            .await
            .expect("list"),
        vec![first.clone()]
    );
    assert_eq!(
        tx.delegations_of_agent(&acme.id, &helper)
            .await
            .expect("of agent"),
        vec![bobs.clone(), first.clone()],
        "everyone's, newest first"
    );
    assert!(
        tx.delegations_of_agent(&other.id, &helper)
            .await
            .expect("of agent")
            .is_empty()
    );
    assert!(
        tx.delegations_of_user(&other.id, &ada, None)
            .await
            .expect("list")
            .is_empty()
    );
    tx.finish().await.expect("finish");
}

/// Only the person who granted a delegation revokes it, once; the time is kept.
pub async fn delegations_are_revoked_by_their_person_once(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = acme.created_at + Duration::days(1);
    let ada = user_fixture(&acme, 1, "ada@example.com").id;
    let bob = user_fixture(&acme, 2, "bob@example.com").id;
    let d = delegation_fixture(&acme, &ada, &agent_id(1, at), 1, at);
    let mut tx = store.write().await.expect("write");
    tx.insert_delegation(&d).await.expect("insert");
    let when = at + Duration::hours(1) + Duration::microseconds(5);
    assert!(
        !tx.revoke_delegation(&acme.id, &bob, &d.id, when)
            .await
            .expect("bob")
    );
    assert!(
        !tx.revoke_delegation(&other.id, &ada, &d.id, when)
            .await
            .expect("other")
    );
    assert!(
        tx.revoke_delegation(&acme.id, &ada, &d.id, when)
            .await
            .expect("ada")
    );
    assert!(
        !tx.revoke_delegation(&acme.id, &ada, &d.id, when + Duration::hours(1))
            .await
            .expect("again")
    );
    tx.commit().await.expect("commit");
    let mut tx = store.read().await.expect("read");
    let read = tx
        .delegation(&acme.id, &d.id)
        .await
        .expect("read")
        .expect("kept");
    assert_eq!(read.revoked_at, Some(when));
    assert!(!read.is_live(when));
    tx.finish().await.expect("finish");
}

/// A delegation of a tenant that does not exist names the foreign key; deleting the tenant
/// deletes its delegations.
pub async fn delegations_go_with_their_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let at = acme.created_at + Duration::days(1);
    let ada = user_fixture(&acme, 1, "ada@example.com").id;
    let d = delegation_fixture(&acme, &ada, &agent_id(1, at), 1, at);
    let ghost = Tenant {
        id: svc_domain::TenantId::generate(&ManualClock::new(at), &SeededRandom::new(77)),
        ..acme.clone()
    };
    let orphan = delegation_fixture(&ghost, &ada, &agent_id(2, at), 2, at);
    let mut tx = store.write().await.expect("write");
    tx.insert_delegation(&d).await.expect("insert");
    tx.commit().await.expect("commit");
    // A refused statement ends a PostgreSQL transaction: the orphan gets one of its own.
    let mut tx = store.write().await.expect("write");
    let refused = tx.insert_delegation(&orphan).await;
    assert!(
        matches!(&refused, Err(crate::StoreError::Conflict { constraint }) if constraint == "delegations_tenant_id_fkey"),
        "{refused:?}"
    );
    drop(tx);
    let mut tx = store.write().await.expect("write");
    tx.delete_tenant(&acme.id).await.expect("delete");
    tx.insert_tenant(&acme).await.expect("same tenant again");
    assert_eq!(tx.delegation(&acme.id, &d.id).await.expect("read"), None);
    tx.commit().await.expect("commit");
}
