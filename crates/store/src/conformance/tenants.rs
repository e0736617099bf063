//! Conformance: the tenant repository and transaction semantics.

use super::tenant_fixture;
use crate::{Store, StoreError};
use futures_util::future::join_all;
use std::sync::Arc;
use svc_domain::{MfaPolicy, TenantSlug, TenantStatus};
use time::Duration;

async fn insert(store: &Arc<dyn Store>, tenant: &svc_domain::Tenant) -> Result<(), StoreError> {
    let mut tx = store.write().await?;
    tx.insert_tenant(tenant).await?;
    tx.commit().await
}

/// What is inserted reads back identically, by id and by slug.
pub async fn tenant_round_trips(store: Arc<dyn Store>) {
    let tenant = tenant_fixture("acme", 1);
    insert(&store, &tenant).await.expect("insert");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.tenant_by_id(&tenant.id).await.expect("by id"),
        Some(tenant.clone())
    );
    assert_eq!(
        read.tenant_by_slug(&tenant.slug).await.expect("by slug"),
        Some(tenant.clone())
    );
    let other = TenantSlug::parse("nobody").expect("slug");
    assert_eq!(read.tenant_by_slug(&other).await.expect("missing"), None);
    read.finish().await.expect("finish");
}

/// A second tenant with a taken slug is a conflict, and the first is untouched.
pub async fn tenant_slug_is_unique(store: Arc<dyn Store>) {
    let first = tenant_fixture("acme", 1);
    insert(&store, &first).await.expect("first insert");
    let mut dup = tenant_fixture("acme", 2);
    dup.display_name = "Impostor".into();
    match insert(&store, &dup).await {
        Err(StoreError::Conflict { .. }) => {}
        other => panic!("expected a conflict, got {other:?}"),
    }
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.tenant_by_slug(&first.slug).await.expect("read"),
        Some(first)
    );
    assert_eq!(
        read.tenant_by_id(&dup.id).await.expect("read"),
        None,
        "no partial write"
    );
}

/// Reusing an id is a conflict too.
pub async fn tenant_id_is_unique(store: Arc<dyn Store>) {
    let first = tenant_fixture("acme", 1);
    insert(&store, &first).await.expect("first insert");
    let mut same_id = tenant_fixture("other", 1);
    same_id.id = first.id.clone();
    assert!(matches!(
        insert(&store, &same_id).await,
        Err(StoreError::Conflict { .. })
    ));
}

/// A write transaction dropped without commit leaves nothing behind.
pub async fn uncommitted_write_is_rolled_back(store: Arc<dyn Store>) {
    let tenant = tenant_fixture("ghost", 3);
    {
        let mut tx = store.write().await.expect("write");
        tx.insert_tenant(&tenant).await.expect("insert");
        assert_eq!(
            tx.tenant_by_id(&tenant.id).await.expect("own write"),
            Some(tenant.clone()),
            "a transaction sees its own writes"
        );
        // dropped here without commit
    }
    let mut read = store.read().await.expect("read");
    assert_eq!(read.tenant_by_id(&tenant.id).await.expect("read"), None);
    // The slug is free again: the rollback released it.
    insert(&store, &tenant)
        .await
        .expect("insert after rollback");
}

/// A committed write is visible to a reader opened afterwards.
pub async fn committed_write_is_visible_to_new_readers(store: Arc<dyn Store>) {
    let tenant = tenant_fixture("visible", 4);
    insert(&store, &tenant).await.expect("insert");
    let mut read = store.read().await.expect("read");
    assert!(read.tenant_by_id(&tenant.id).await.expect("read").is_some());
}

/// A one-statement read sees what is committed (each statement anew: it holds no snapshot),
/// never what is not, and can be finished like a transaction.
pub async fn read_once_sees_each_committed_state(store: Arc<dyn Store>) {
    let tenant = tenant_fixture("once", 7);
    let mut read = store.read_once().await.expect("read once");
    assert!(read.tenant_by_id(&tenant.id).await.expect("read").is_none());
    insert(&store, &tenant).await.expect("insert");
    assert_eq!(
        read.tenant_by_id(&tenant.id).await.expect("read"),
        Some(tenant.clone()),
        "no snapshot: the next statement sees the commit"
    );
    let mut pending = store.write().await.expect("write");
    let other = tenant_fixture("uncommitted", 8);
    pending.insert_tenant(&other).await.expect("insert");
    assert!(read.tenant_by_id(&other.id).await.expect("read").is_none());
    drop(pending);
    read.finish().await.expect("finish");
}

/// Updates change display name, status, the sign-up switch and updated_at, never id, slug,
/// created_at or the pairwise secret (fixed at creation: changing it would change every pairwise
/// subject).
pub async fn update_tenant_changes_mutable_fields_only(store: Arc<dyn Store>) {
    let tenant = tenant_fixture("acme", 5);
    insert(&store, &tenant).await.expect("insert");
    let mut changed = tenant.clone();
    changed.display_name = "Acme Corp".into();
    changed.status = TenantStatus::Suspended;
    changed.updated_at += Duration::seconds(10);
    changed.created_at += Duration::days(1); // must be ignored
    changed.slug = TenantSlug::parse("renamed").expect("slug"); // must be ignored
    changed.signup_enabled = !tenant.signup_enabled;
    changed.mfa_policy = MfaPolicy::Required;
    changed.pairwise_secret = tenant_fixture("other", 6).pairwise_secret; // must be ignored
    let mut tx = store.write().await.expect("write");
    assert!(
        tx.update_tenant(&changed, tenant.updated_at)
            .await
            .expect("update")
    );
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    let got = read
        .tenant_by_id(&tenant.id)
        .await
        .expect("read")
        .expect("present");
    assert_eq!(got.display_name, "Acme Corp");
    assert_eq!(got.status, TenantStatus::Suspended);
    assert_eq!(got.updated_at, changed.updated_at);
    assert_eq!(got.created_at, tenant.created_at);
    assert_eq!(got.slug, tenant.slug);
    assert_eq!(got.signup_enabled, changed.signup_enabled);
    assert_eq!(got.mfa_policy, MfaPolicy::Required);
    assert_eq!(got.pairwise_secret, tenant.pairwise_secret);
}

/// Updating a tenant that does not exist is NotFound, not a silent no-op.
pub async fn update_of_missing_tenant_is_not_found(store: Arc<dyn Store>) {
    let tenant = tenant_fixture("nowhere", 6);
    let mut tx = store.write().await.expect("write");
    assert!(matches!(
        tx.update_tenant(&tenant, tenant.updated_at).await,
        Err(StoreError::NotFound)
    ));
}

/// Updates are conditional on the revision the caller read: one carrying a stale revision is
/// refused with `false` and changes nothing, and of eight writers racing from the same revision
/// exactly one wins, so no update is lost, on every backend and isolation level.
pub async fn tenant_updates_carrying_a_stale_revision_change_nothing(store: Arc<dyn Store>) {
    let tenant = tenant_fixture("acme", 5);
    insert(&store, &tenant).await.expect("insert");
    let read_at = tenant.updated_at;
    let mut first = tenant.clone();
    first.display_name = "First".into();
    first.updated_at = read_at + Duration::seconds(1);
    let mut late = tenant.clone();
    late.status = TenantStatus::Suspended;
    late.updated_at = read_at + Duration::seconds(2);
    let mut tx = store.write().await.expect("write");
    assert!(tx.update_tenant(&first, read_at).await.expect("first"));
    assert!(
        !tx.update_tenant(&late, read_at).await.expect("stale"),
        "read at a revision that is no longer current"
    );
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.tenant_by_id(&tenant.id).await.expect("read"),
        Some(first.clone()),
        "the stale update changed nothing"
    );
    read.finish().await.expect("finish");

    let writers = (1..=8i64).map(|n| {
        let store = store.clone();
        let mut mine = first.clone();
        mine.display_name = format!("Writer {n}");
        mine.updated_at = first.updated_at + Duration::microseconds(n);
        async move {
            let mut tx = store.write().await?;
            let applied = tx.update_tenant(&mine, first.updated_at).await?;
            tx.commit().await?;
            Ok::<_, StoreError>(applied.then_some(mine))
        }
    });
    let winners: Vec<svc_domain::Tenant> = join_all(writers)
        .await
        .into_iter()
        .filter_map(|r| r.expect("writer"))
        .collect();
    assert_eq!(winners.len(), 1, "exactly one writer applies its update");
    let mut read = store.read().await.expect("read");
    let won = read.tenant_by_id(&tenant.id).await.expect("read");
    assert_eq!(won, winners.into_iter().next());
    read.finish().await.expect("finish");

    // Writers that read with `tenant_for_update` take turns: each sees the previous commit, so
    // every conditional update applies and no change is lost.
    let writers = (1..=8i64).map(|n| {
        let store = store.clone();
        let id = tenant.id.clone();
        async move {
            let mut tx = store.write().await?;
            let mut mine = tx.tenant_for_update(&id).await?.expect("present");
            let read_at = mine.updated_at;
            mine.display_name.push('+');
            mine.updated_at = read_at + Duration::microseconds(n);
            let applied = tx.update_tenant(&mine, read_at).await?;
            tx.commit().await?;
            Ok::<_, StoreError>(applied)
        }
    });
    for applied in join_all(writers).await {
        assert!(applied.expect("writer"), "a locked read is never stale");
    }
    let mut read = store.read().await.expect("read");
    let last = read
        .tenant_by_id(&tenant.id)
        .await
        .expect("read")
        .expect("present");
    read.finish().await.expect("finish");
    let before = won.map(|t| t.display_name).unwrap_or_default();
    assert_eq!(last.display_name, format!("{before}++++++++"));
    let mut tx = store.write().await.expect("write");
    let ghost = tenant_fixture("ghost", 9);
    assert_eq!(tx.tenant_for_update(&ghost.id).await.expect("ghost"), None);
    tx.commit().await.expect("commit");
}

/// Listing pages through every tenant once, in id order, with no overlap.
pub async fn list_tenants_paginates_in_id_order(store: Arc<dyn Store>) {
    let mut all = Vec::new();
    for i in 0..7u64 {
        let tenant = tenant_fixture(&format!("t{i}"), 100 + i);
        insert(&store, &tenant).await.expect("insert");
        all.push(tenant.id);
    }
    all.sort();
    for order in [crate::Order::Ascending, crate::Order::Descending] {
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let mut read = store.read().await.expect("read");
            let page = read
                .list_tenants(cursor.as_ref(), order, 3)
                .await
                .expect("list");
            assert!(page.len() <= 3);
            if page.is_empty() {
                break;
            }
            cursor = page.last().map(|t| t.id.clone());
            seen.extend(page.into_iter().map(|t| t.id));
        }
        if order == crate::Order::Descending {
            seen.reverse();
        }
        assert_eq!(seen, all, "{order:?}");
    }
}

/// Many writers at once all succeed (SQLite must wait for its single writer, not fail busy).
pub async fn concurrent_distinct_inserts_all_succeed(store: Arc<dyn Store>) {
    let mut tasks = Vec::new();
    for i in 0..16u64 {
        let store = store.clone();
        tasks.push(async move { insert(&store, &tenant_fixture(&format!("c{i}"), 200 + i)).await });
    }
    // join_all polls every insert at once, so each holds its own connection and transaction.
    for result in join_all(tasks).await {
        result.expect("concurrent insert");
    }
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.list_tenants(None, crate::Order::Ascending, 100)
            .await
            .expect("list")
            .len(),
        16
    );
}

/// Racing inserts of one slug: exactly one wins, the rest see Conflict.
pub async fn concurrent_same_slug_inserts_admit_exactly_one(store: Arc<dyn Store>) {
    let mut tasks = Vec::new();
    for i in 0..8u64 {
        let store = store.clone();
        tasks.push(async move { insert(&store, &tenant_fixture("race", 300 + i)).await });
    }
    let mut wins = 0;
    for result in join_all(tasks).await {
        match result {
            Ok(()) => wins += 1,
            Err(StoreError::Conflict { .. }) => {}
            Err(other) => panic!("expected success or conflict, got {other:?}"),
        }
    }
    assert_eq!(wins, 1);
}
