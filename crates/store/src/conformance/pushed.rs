//! Conformance: pushed authorization requests (RFC 9126) are taken once, only by their client in
//! their tenant, only before they expire, and purged once expired.

use super::grants::{base, client, stored_tenant};
use super::tenant_fixture;
use crate::{Store, StoreError};
use futures_util::future::join_all;
use std::sync::Arc;
use svc_domain::{ClientId, PushedRequest, SecretHash, Tenant};
use time::{Duration, OffsetDateTime};

/// A request of `client` pushed at `at` with the reference `reference`, valid for 60 s.
pub fn pushed_request_fixture(
    tenant: &Tenant,
    client: &ClientId,
    reference: &str,
    at: OffsetDateTime,
) -> PushedRequest {
    PushedRequest {
        hash: SecretHash::of(reference),
        tenant_id: tenant.id.clone(),
        client_id: client.clone(),
        request: format!(r#"[["state","s\"{reference}"],["nonce","ü"]]"#),
        created_at: at,
        expires_at: at + Duration::seconds(60),
    }
}

/// A pushed request comes back whole exactly once; another tenant, another client or an expired
/// instant gets nothing and leaves it for its own client.
pub async fn pushed_requests_are_taken_once_by_their_client_before_expiry(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let t0 = base(&acme);
    let pushed = pushed_request_fixture(&acme, &client(1), "pr_one", t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_pushed_request(&pushed).await.expect("insert");
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    let hash = &pushed.hash;
    assert_eq!(
        tx.take_pushed_request(&other.id, &client(1), hash, t0)
            .await
            .expect("other tenant"),
        None
    );
    assert_eq!(
        tx.take_pushed_request(&acme.id, &client(2), hash, t0)
            .await
            .expect("other client"),
        None
    );
    assert_eq!(
        tx.take_pushed_request(&acme.id, &client(1), hash, pushed.expires_at)
            .await
            .expect("expired"),
        None
    );
    let before_end = pushed.expires_at - Duration::microseconds(1);
    assert_eq!(
        tx.take_pushed_request(&acme.id, &client(1), hash, before_end)
            .await
            .expect("take"),
        Some(pushed.clone())
    );
    assert_eq!(
        tx.take_pushed_request(&acme.id, &client(1), hash, t0)
            .await
            .expect("again"),
        None,
        "single use"
    );
    tx.commit().await.expect("commit");
}

/// Twenty transactions race to take one pushed request: exactly one gets it.
pub async fn racing_pushed_request_takes_admit_exactly_one(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let t0 = base(&acme);
    let pushed = pushed_request_fixture(&acme, &client(1), "pr_race", t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_pushed_request(&pushed).await.expect("insert");
    tx.commit().await.expect("commit");
    let attempts = (0..20i64).map(|i| {
        let store = store.clone();
        let (tenant, hash) = (acme.id.clone(), pushed.hash.clone());
        async move {
            let mut tx = store.write().await?;
            let taken = tx
                .take_pushed_request(&tenant, &client(1), &hash, t0 + Duration::milliseconds(i))
                .await?;
            tx.commit().await?;
            Ok::<_, StoreError>(taken.is_some())
        }
    });
    let wins = join_all(attempts)
        .await
        .into_iter()
        .map(|won| won.expect("transaction"))
        .filter(|won| *won)
        .count();
    assert_eq!(wins, 1);
}

/// The sweeper deletes expired pushed requests and keeps live ones; a pushed request of a tenant
/// that does not exist is refused naming the foreign key.
pub async fn expired_pushed_requests_are_purged(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let t0 = base(&acme);
    let dead = pushed_request_fixture(&acme, &client(1), "pr_dead", t0);
    let live = pushed_request_fixture(&acme, &client(1), "pr_live", t0 + Duration::seconds(30));
    let mut tx = store.write().await.expect("write");
    tx.insert_pushed_request(&dead).await.expect("dead");
    tx.insert_pushed_request(&live).await.expect("live");
    tx.commit().await.expect("commit");

    let now = dead.expires_at;
    let mut tx = store.write().await.expect("write");
    assert_eq!(tx.purge_expired_grants(now).await.expect("purge"), 1);
    assert_eq!(tx.purge_expired_grants(now).await.expect("again"), 0);
    assert!(
        tx.take_pushed_request(&acme.id, &client(1), &live.hash, now)
            .await
            .expect("live")
            .is_some()
    );
    tx.commit().await.expect("commit");

    let ghost = tenant_fixture("ghost", 9);
    let mut tx = store.write().await.expect("write");
    match tx
        .insert_pushed_request(&pushed_request_fixture(&ghost, &client(1), "pr_x", t0))
        .await
    {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "pushed_authorization_requests_tenant_id_fkey");
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
}
