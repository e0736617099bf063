//! Conformance: a person's tenant roles (round trips inside and after the writing transaction,
//! replacement as a set — added, removed, kept — an empty set clearing them, concurrent grants of
//! the same role), scoped to their tenant and person, deleted with their tenant, and refused for
//! a tenant that does not exist.
//!
//! The store checks no role key against a list (which roles exist is the use cases' rule), and
//! nothing references `users`: the fixtures' people are never stored as users.

use super::grants::stored_tenant;
use super::{tenant_fixture, user_fixture};
use crate::{Store, StoreError};
use futures_util::future::join_all;
use std::collections::BTreeSet;
use std::sync::Arc;
use svc_domain::{RoleKey, Tenant, TenantId, UserId};
use time::{Duration, OffsetDateTime};

fn roles(keys: &[&str]) -> BTreeSet<RoleKey> {
    keys.iter()
        .map(|k| RoleKey::parse(k).unwrap_or_else(|e| panic!("fixture role {k}: {e}")))
        .collect()
}

/// An instant a day after the tenant's creation, on no whole millisecond.
fn moment(tenant: &Tenant) -> OffsetDateTime {
    tenant.created_at + Duration::days(1) + Duration::microseconds(654_321)
}

async fn set(
    store: &Arc<dyn Store>,
    tenant: &TenantId,
    user: &UserId,
    keys: &[&str],
    at: OffsetDateTime,
) {
    let mut tx = store.write().await.expect("write");
    tx.set_user_roles(tenant, user, &roles(keys), at)
        .await
        .unwrap_or_else(|e| panic!("set {keys:?}: {e:?}"));
    tx.commit().await.expect("commit");
}

async fn read_roles(store: &Arc<dyn Store>, tenant: &TenantId, user: &UserId) -> BTreeSet<RoleKey> {
    let mut read = store.read().await.expect("read");
    let held = read.user_roles(tenant, user).await.expect("user roles");
    read.finish().await.expect("finish");
    held
}

/// The roles set read back as written, inside the writing transaction and after commit, as a
/// sorted set (keys that sort differently by byte and by locale included). Setting a new set
/// replaces the old one: roles no longer named go, new ones come, kept ones stay; the same set
/// again changes nothing; the empty set clears them all, and a person never given a role has
/// none. A rolled-back replacement leaves the roles as they were.
pub async fn user_roles_round_trip_and_are_replaced_as_a_set(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let at = moment(&acme);
    assert!(read_roles(&store, &acme.id, &ada.id).await.is_empty());

    let first = roles(&["tenant_admin", "billing.viewer", "a-b", "a.b", "a_b", "z9"]);
    let mut tx = store.write().await.expect("write");
    tx.set_user_roles(&acme.id, &ada.id, &first, at)
        .await
        .expect("set");
    assert_eq!(
        tx.user_roles(&acme.id, &ada.id).await.expect("own write"),
        first,
        "visible inside the writing transaction"
    );
    tx.commit().await.expect("commit");
    let held = read_roles(&store, &acme.id, &ada.id).await;
    assert_eq!(held, first);
    assert_eq!(
        held.iter().map(RoleKey::as_str).collect::<Vec<_>>(),
        ["a-b", "a.b", "a_b", "billing.viewer", "tenant_admin", "z9"],
        "byte order"
    );
    assert!(
        read_roles(&store, &acme.id, &bob.id).await.is_empty(),
        "another person of the tenant holds nothing"
    );

    // Replace: two removed, one added, the rest kept.
    let second = roles(&["tenant_admin", "billing.viewer", "a.b", "support"]);
    set(
        &store,
        &acme.id,
        &ada.id,
        &["tenant_admin", "billing.viewer", "a.b", "support"],
        at + Duration::seconds(1),
    )
    .await;
    assert_eq!(read_roles(&store, &acme.id, &ada.id).await, second);
    // The same set again: nothing changes.
    set(
        &store,
        &acme.id,
        &ada.id,
        &["support", "a.b", "tenant_admin", "billing.viewer"],
        at + Duration::seconds(2),
    )
    .await;
    assert_eq!(read_roles(&store, &acme.id, &ada.id).await, second);
    // Disjoint: all replaced.
    set(
        &store,
        &acme.id,
        &ada.id,
        &["auditor"],
        at + Duration::seconds(3),
    )
    .await;
    assert_eq!(
        read_roles(&store, &acme.id, &ada.id).await,
        roles(&["auditor"])
    );

    // A replacement rolled back changes nothing.
    let mut tx = store.write().await.expect("write");
    tx.set_user_roles(&acme.id, &ada.id, &roles(&["tenant_admin"]), at)
        .await
        .expect("set");
    drop(tx);
    assert_eq!(
        read_roles(&store, &acme.id, &ada.id).await,
        roles(&["auditor"]),
        "an uncommitted replacement is rolled back"
    );

    // The empty set clears them, and clearing again is harmless.
    set(&store, &acme.id, &bob.id, &["tenant_admin"], at).await;
    for _ in 0..2 {
        set(&store, &acme.id, &ada.id, &[], at + Duration::seconds(4)).await;
        assert!(read_roles(&store, &acme.id, &ada.id).await.is_empty());
    }
    assert_eq!(
        read_roles(&store, &acme.id, &bob.id).await,
        roles(&["tenant_admin"]),
        "clearing one person's roles leaves another's"
    );
    // And a cleared person can be given roles again.
    set(
        &store,
        &acme.id,
        &ada.id,
        &["tenant_admin"],
        at + Duration::seconds(5),
    )
    .await;
    assert_eq!(
        read_roles(&store, &acme.id, &ada.id).await,
        roles(&["tenant_admin"])
    );
}

/// Roles are the tenant's: with another tenant's id, the same person id holds nothing, and
/// setting or clearing roles there leaves this tenant's alone (and the reverse). Concurrent
/// transactions granting the same role to the same person all succeed, leaving it held once.
pub async fn user_roles_are_scoped_to_their_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let at = moment(&acme);
    set(&store, &acme.id, &ada.id, &["tenant_admin", "support"], at).await;

    assert!(
        read_roles(&store, &other.id, &ada.id).await.is_empty(),
        "another tenant sees nothing"
    );
    // Writes naming the other tenant: a grant, a replacement, a clearing.
    set(&store, &other.id, &ada.id, &["tenant_admin"], at).await;
    set(&store, &other.id, &ada.id, &["auditor"], at).await;
    assert_eq!(
        read_roles(&store, &acme.id, &ada.id).await,
        roles(&["tenant_admin", "support"]),
        "the other tenant's writes changed nothing here"
    );
    assert_eq!(
        read_roles(&store, &other.id, &ada.id).await,
        roles(&["auditor"])
    );
    set(&store, &other.id, &ada.id, &[], at).await;
    assert_eq!(
        read_roles(&store, &acme.id, &ada.id).await,
        roles(&["tenant_admin", "support"]),
        "clearing there clears nothing here"
    );
    set(&store, &acme.id, &ada.id, &["support"], at).await;
    set(&store, &other.id, &ada.id, &["auditor"], at).await;
    set(&store, &acme.id, &ada.id, &[], at).await;
    assert_eq!(
        read_roles(&store, &other.id, &ada.id).await,
        roles(&["auditor"]),
        "and the reverse"
    );

    // Racing grants of the same role: none conflicts, the role is held once.
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let grants = (0..4i64).map(|i| {
        let store = store.clone();
        let (tenant, user) = (acme.id.clone(), bob.id.clone());
        async move {
            let mut tx = store.write().await?;
            tx.set_user_roles(
                &tenant,
                &user,
                &roles(&["tenant_admin"]),
                at + Duration::milliseconds(i),
            )
            .await?;
            tx.commit().await
        }
    });
    for result in join_all(grants).await {
        result.expect("a concurrent grant of a held role is no conflict");
    }
    assert_eq!(
        read_roles(&store, &acme.id, &bob.id).await,
        roles(&["tenant_admin"])
    );
}

/// Deleting a tenant deletes its people's roles (a tenant recreated with the same id starts with
/// none) and leaves another tenant's alone. Roles for a tenant that does not exist are the
/// foreign key's conflict, named the same on every backend, and store nothing.
pub async fn user_roles_go_with_their_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let eve = user_fixture(&other, 2, "eve@example.com");
    let at = moment(&acme);
    set(&store, &acme.id, &ada.id, &["tenant_admin", "support"], at).await;
    set(&store, &other.id, &eve.id, &["tenant_admin"], at).await;

    let mut tx = store.write().await.expect("write");
    tx.delete_tenant(&acme.id).await.expect("delete tenant");
    tx.insert_tenant(&acme).await.expect("same tenant again");
    assert!(
        tx.user_roles(&acme.id, &ada.id)
            .await
            .expect("roles")
            .is_empty(),
        "roles go with their tenant"
    );
    // Nothing of the old rows is left to conflict with.
    tx.set_user_roles(&acme.id, &ada.id, &roles(&["tenant_admin"]), at)
        .await
        .expect("set again");
    tx.commit().await.expect("commit");
    assert_eq!(
        read_roles(&store, &acme.id, &ada.id).await,
        roles(&["tenant_admin"])
    );
    assert_eq!(
        read_roles(&store, &other.id, &eve.id).await,
        roles(&["tenant_admin"]),
        "another tenant's roles stay"
    );

    // A tenant that does not exist (each write in its own transaction: on PostgreSQL a failed
    // statement aborts the transaction).
    let ghost = tenant_fixture("ghost", 9);
    for keys in [&["tenant_admin"][..], &["auditor", "tenant_admin"][..]] {
        let mut tx = store.write().await.expect("write");
        match tx
            .set_user_roles(&ghost.id, &ada.id, &roles(keys), at)
            .await
        {
            Err(StoreError::Conflict { constraint }) => {
                assert_eq!(constraint, "user_roles_tenant_id_fkey");
            }
            other => panic!("{keys:?}: expected the foreign key's conflict, got {other:?}"),
        }
    }
    assert!(
        read_roles(&store, &ghost.id, &ada.id).await.is_empty(),
        "the refused writes stored nothing"
    );
}
