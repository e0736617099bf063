//! Conformance: registered agents (round trips of every field, isolation per tenant, keyset
//! pages both ways, the count, compare-and-set updates, the checks of the schema, and deletion
//! with their tenant); with their fixture.

use super::grants::stored_tenant;
use super::{assert_refused_by_check, user_fixture};
use crate::{Order, Store, StoreError, UpdateOutcome};
use std::sync::Arc;
use svc_domain::{
    Agent, AgentId, AgentOwner, AgentStatus, ClientId, ManualClock, ScopeSet, SeededRandom, Tenant,
};
use time::{Duration, OffsetDateTime};

/// A key set as an agent registers it: one Ed25519 key with a `kid`.
const JWKS: &str = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k1","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;

/// An active agent of `tenant`, registered at `at` (whole microseconds) and changed a second
/// and some microseconds later, owned by a person of the tenant, with nested metadata, quotes
/// and non-ASCII text. Ids grow with `at`.
pub fn agent_fixture(tenant: &Tenant, seed: u64, at: OffsetDateTime) -> Agent {
    let owner = user_fixture(tenant, seed, &format!("owner{seed}@example.com"));
    Agent {
        id: AgentId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: tenant.id.clone(),
        name: format!("Réservations \"{seed}\" 🤖"),
        owner: AgentOwner::User(owner.id),
        jwks: JWKS.to_owned(),
        allowed_scopes: ScopeSet::parse("orders:read tools:search").expect("scopes"),
        allowed_resources: vec![
            "https://mcp.example.com".into(),
            "https://orders.example.com/api".into(),
        ],
        metadata: serde_json::from_str(
            r#"{"model":"m-1","limits":{"daily":[10,2.5,null]},"note":"Zürich \"HQ\" 東京"}"#,
        )
        .expect("metadata"),
        authorization_details_types: vec![
            svc_domain::DetailType::parse(
                "trip_booking",
                "Book trips \"up to\" a price — ü",
                serde_json::json!({"properties": {"max_price": {"type": "number", "title": "Up to"}}}),
            )
            .expect("detail type"),
        ],
        status: AgentStatus::Active,
        created_at: at,
        updated_at: at + Duration::microseconds(1_000_017),
        revoked_at: None,
    }
}

/// An instant a day after the tenant's creation, on no whole millisecond.
fn moment(tenant: &Tenant) -> OffsetDateTime {
    tenant.created_at + Duration::days(1) + Duration::microseconds(223_457)
}

async fn insert_agents(store: &Arc<dyn Store>, agents: &[&Agent]) {
    let mut tx = store.write().await.expect("write");
    for agent in agents {
        tx.insert_agent(agent).await.expect("insert agent");
    }
    tx.commit().await.expect("commit");
}

/// Every field reads back as written, inside the writing transaction and after; another
/// tenant reads nothing; an application may own an agent; a revoked one keeps its time.
pub async fn agents_round_trip_per_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let rich = agent_fixture(&acme, 1, at);
    let bare = Agent {
        name: "B".into(),
        owner: AgentOwner::Application(ClientId::generate(
            &ManualClock::new(at),
            &SeededRandom::new(9),
        )),
        allowed_scopes: ScopeSet::default(),
        allowed_resources: Vec::new(),
        metadata: Default::default(),
        authorization_details_types: Vec::new(),
        status: AgentStatus::Revoked,
        revoked_at: Some(at + Duration::microseconds(77)),
        ..agent_fixture(&acme, 2, at + Duration::microseconds(9))
    };

    let mut tx = store.write().await.expect("write");
    tx.insert_agent(&rich).await.expect("rich");
    tx.insert_agent(&bare).await.expect("bare");
    assert_eq!(
        tx.agent(&acme.id, &rich.id).await.expect("own write"),
        Some(rich.clone()),
        "visible inside the writing transaction"
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    for agent in [&rich, &bare] {
        assert_eq!(
            read.agent(&acme.id, &agent.id).await.expect("by id"),
            Some(agent.clone()),
            "every field as written"
        );
        assert_eq!(
            read.agent(&other.id, &agent.id)
                .await
                .expect("cross-tenant"),
            None,
            "another tenant reads nothing"
        );
    }
    assert_eq!(read.count_agents(&acme.id).await.expect("count"), 2);
    assert_eq!(read.count_agents(&other.id).await.expect("count"), 0);
    let unknown = agent_fixture(&acme, 3, at);
    assert_eq!(
        read.agent(&acme.id, &unknown.id).await.expect("unknown"),
        None
    );
    read.finish().await.expect("finish");

    // A repeated id is the key's conflict; an unknown tenant the foreign key's.
    let mut tx = store.write().await.expect("write");
    match tx.insert_agent(&rich).await {
        Err(StoreError::Conflict { constraint }) => assert_eq!(constraint, "agents_pkey"),
        other => panic!("repeated id: {other:?}"),
    }
    drop(tx);
    let mut tx = store.write().await.expect("write");
    let orphan = Agent {
        tenant_id: svc_domain::TenantId::generate(&ManualClock::new(at), &SeededRandom::new(77)),
        ..agent_fixture(&acme, 4, at)
    };
    match tx.insert_agent(&orphan).await {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "agents_tenant_id_fkey");
        }
        other => panic!("unknown tenant: {other:?}"),
    }
}

/// The schema refuses what no use case writes: an empty name, a key set or metadata that is
/// not a JSON object, a revoked agent without a revocation time, or a time without revocation.
pub async fn agents_are_checked_by_the_schema(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let at = moment(&acme);
    let cases = [
        (
            Agent {
                name: String::new(),
                ..agent_fixture(&acme, 1, at)
            },
            "agents_name_check",
        ),
        (
            Agent {
                jwks: "[]".into(),
                ..agent_fixture(&acme, 2, at)
            },
            "agents_jwks_check",
        ),
        (
            Agent {
                status: AgentStatus::Revoked,
                ..agent_fixture(&acme, 3, at)
            },
            "agents_revoked_at_check",
        ),
        (
            Agent {
                revoked_at: Some(at),
                ..agent_fixture(&acme, 4, at)
            },
            "agents_revoked_at_check",
        ),
    ];
    for (agent, constraint) in cases {
        let mut tx = store.write().await.expect("write");
        assert_refused_by_check(tx.insert_agent(&agent).await, constraint);
    }
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.count_agents(&acme.id).await.expect("count"),
        0,
        "nothing stored"
    );
    read.finish().await.expect("finish");
}

/// Keyset pages in both directions cover every agent of the tenant once, in id order, and
/// never one of another tenant.
pub async fn list_agents_paginates_both_ways(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let mut all = Vec::new();
    for i in 0..7u64 {
        // Inserted out of id order: the listing orders, not the insertion.
        let agent = agent_fixture(
            &acme,
            10 + i,
            at + Duration::milliseconds(((i * 5) % 7) as i64),
        );
        let theirs = agent_fixture(&other, 20 + i, at);
        insert_agents(&store, &[&agent, &theirs]).await;
        all.push(agent);
    }
    all.sort_by(|a, b| a.id.cmp(&b.id));
    for order in [Order::Ascending, Order::Descending] {
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let mut read = store.read().await.expect("read");
            let page = read
                .list_agents(&acme.id, cursor.as_ref(), order, 3)
                .await
                .expect("list");
            read.finish().await.expect("finish");
            assert!(page.len() <= 3);
            if page.is_empty() {
                break;
            }
            cursor = page.last().map(|a| a.id.clone());
            seen.extend(page);
        }
        if order == Order::Descending {
            seen.reverse();
        }
        assert_eq!(seen, all, "{order:?}: every field, each once, in id order");
    }
}

/// An update replaces everything but id, tenant, owner and creation time, only at the revision
/// read: an older revision is Stale and changes nothing; an absent agent (or another tenant's)
/// is NotFound.
pub async fn agent_updates_apply_only_at_the_revision_read(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let agent = agent_fixture(&acme, 1, at);
    insert_agents(&store, &[&agent]).await;
    let revoked = Agent {
        name: "Retired".into(),
        jwks: r#"{"keys":[]}"#.into(),
        allowed_scopes: ScopeSet::parse("orders:read").expect("scopes"),
        allowed_resources: vec!["https://orders.example.com/api".into()],
        metadata: serde_json::from_str(r#"{"reason":"key leaked"}"#).expect("metadata"),
        status: AgentStatus::Revoked,
        updated_at: agent.updated_at + Duration::seconds(1),
        revoked_at: Some(agent.updated_at + Duration::seconds(1)),
        // Never changed by an update, whatever the record says.
        owner: AgentOwner::Application(ClientId::generate(
            &ManualClock::new(at),
            &SeededRandom::new(5),
        )),
        created_at: at + Duration::days(3),
        ..agent.clone()
    };

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_agent_if_unchanged(&revoked, agent.updated_at - Duration::microseconds(1))
            .await
            .expect("stale"),
        UpdateOutcome::Stale
    );
    assert_eq!(
        tx.update_agent_if_unchanged(&revoked, agent.updated_at)
            .await
            .expect("applied"),
        UpdateOutcome::Applied
    );
    let moved = Agent {
        tenant_id: other.id.clone(),
        ..revoked.clone()
    };
    assert!(matches!(
        tx.update_agent_if_unchanged(&moved, revoked.updated_at)
            .await,
        Err(StoreError::NotFound)
    ));
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.agent(&acme.id, &agent.id).await.expect("read"),
        Some(Agent {
            owner: agent.owner.clone(),
            created_at: agent.created_at,
            ..revoked
        }),
        "every mutable field replaced; owner and creation time kept"
    );
    read.finish().await.expect("finish");
}

/// Agents go with their tenant and with nothing else.
pub async fn agents_go_with_their_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let ours = agent_fixture(&acme, 1, at);
    let theirs = agent_fixture(&other, 2, at);
    insert_agents(&store, &[&ours, &theirs]).await;
    let mut tx = store.write().await.expect("write");
    tx.delete_tenant(&acme.id).await.expect("delete tenant");
    tx.insert_tenant(&acme).await.expect("same tenant again");
    assert_eq!(tx.agent(&acme.id, &ours.id).await.expect("ours"), None);
    // The id is free again in the recreated tenant.
    tx.insert_agent(&ours).await.expect("insert again");
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.agent(&other.id, &theirs.id).await.expect("theirs"),
        Some(theirs),
        "another tenant's agent stays"
    );
    read.finish().await.expect("finish");
}

/// An owner's agents list in id order, in any status, bounded by the limit; another owner's and
/// another tenant's are apart.
pub async fn agents_are_found_by_their_owner(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let at = moment(&acme);
    let first = agent_fixture(&acme, 2, at);
    let mut second = agent_fixture(&acme, 3, at + time::Duration::milliseconds(5));
    second.owner = first.owner.clone();
    second.status = AgentStatus::Revoked;
    second.revoked_at = Some(at);
    let other_owner = agent_fixture(&acme, 4, at);
    let mut tx = store.write().await.expect("write");
    for agent in [&first, &second, &other_owner] {
        tx.insert_agent(agent).await.expect("insert");
    }
    tx.commit().await.expect("commit");
    let other = stored_tenant(&store, "other", 5).await;
    let mut read = store.read().await.expect("read");
    let owned = read
        .agents_owned_by(&acme.id, &first.owner, 10)
        .await
        .expect("owned");
    assert_eq!(owned, vec![first.clone(), second.clone()]);
    let one = read
        .agents_owned_by(&acme.id, &first.owner, 1)
        .await
        .expect("owned");
    assert_eq!(one, vec![first.clone()]);
    assert!(
        read.agents_owned_by(&other.id, &first.owner, 10)
            .await
            .expect("other tenant")
            .is_empty()
    );
    read.finish().await.expect("finish");
}
