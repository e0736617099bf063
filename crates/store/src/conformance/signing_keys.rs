//! Conformance: the signing-key repository.

use super::tenant_fixture;
use crate::{KeyTransition, Store, StoreError};
use std::sync::Arc;
use svc_domain::{KeyState, SealedPrivateKey, SigningAlg, SigningKeyRecord, Tenant};
use time::Duration;

async fn stored_tenant(store: &Arc<dyn Store>, slug: &str, seed: u64) -> Tenant {
    let tenant = tenant_fixture(slug, seed);
    let mut tx = store.write().await.expect("write");
    tx.insert_tenant(&tenant).await.expect("insert tenant");
    tx.commit().await.expect("commit");
    tenant
}

fn key(tenant: &Tenant, kid: &str, alg: SigningAlg, state: KeyState) -> SigningKeyRecord {
    SigningKeyRecord {
        tenant_id: tenant.id.clone(),
        kid: kid.to_owned(),
        alg,
        state,
        public_jwk: format!(r#"{{"kid":"{kid}","alg":"{}"}}"#, alg.as_str()),
        sealed: SealedPrivateKey {
            wrapped_dek: vec![1, 2, 3, 0, 255],
            ciphertext: vec![9; 200],
        },
        created_at: tenant.created_at,
        activates_at: tenant.created_at + Duration::hours(1),
        retired_at: None,
        remove_after: None,
    }
}

async fn insert(store: &Arc<dyn Store>, record: &SigningKeyRecord) -> Result<(), StoreError> {
    let mut tx = store.write().await?;
    tx.lock_signing_keys(&record.tenant_id).await?;
    tx.insert_signing_key(record).await?;
    tx.commit().await
}

/// Keys read back byte for byte, per tenant only.
pub async fn signing_keys_round_trip_per_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let es = key(&acme, "kid-es", SigningAlg::Es256, KeyState::Active);
    let rs = key(&acme, "kid-rs", SigningAlg::Rs256, KeyState::Active);
    insert(&store, &es).await.expect("insert es");
    insert(&store, &rs).await.expect("insert rs");
    let mut read = store.read().await.expect("read");
    let got = read.signing_keys(&acme.id).await.expect("keys");
    assert_eq!(got.len(), 2);
    assert!(got.contains(&es) && got.contains(&rs), "{got:?}");
    assert!(
        read.signing_keys(&other.id).await.expect("keys").is_empty(),
        "keys never cross tenants"
    );
}

/// Only one active and one next key per tenant and algorithm; kids are unique per tenant.
pub async fn one_active_and_one_next_key_per_algorithm(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    insert(
        &store,
        &key(&acme, "a1", SigningAlg::Es256, KeyState::Active),
    )
    .await
    .expect("first active");
    assert!(matches!(
        insert(
            &store,
            &key(&acme, "a2", SigningAlg::Es256, KeyState::Active)
        )
        .await,
        Err(StoreError::Conflict { .. })
    ));
    insert(&store, &key(&acme, "n1", SigningAlg::Es256, KeyState::Next))
        .await
        .expect("first next");
    assert!(matches!(
        insert(&store, &key(&acme, "n2", SigningAlg::Es256, KeyState::Next)).await,
        Err(StoreError::Conflict { .. })
    ));
    // Another algorithm has its own slots; retired keys are unlimited.
    insert(
        &store,
        &key(&acme, "e1", SigningAlg::EdDsa, KeyState::Active),
    )
    .await
    .expect("eddsa active");
    insert(
        &store,
        &key(&acme, "r1", SigningAlg::Es256, KeyState::Retired),
    )
    .await
    .expect("retired");
    insert(
        &store,
        &key(&acme, "r2", SigningAlg::Es256, KeyState::Retired),
    )
    .await
    .expect("retired");
    assert!(
        matches!(
            insert(
                &store,
                &key(&acme, "a1", SigningAlg::Rs256, KeyState::Active)
            )
            .await,
            Err(StoreError::Conflict { .. })
        ),
        "kid reused within a tenant"
    );
    let other = stored_tenant(&store, "other", 2).await;
    insert(
        &store,
        &key(&other, "a1", SigningAlg::Es256, KeyState::Active),
    )
    .await
    .expect("same kid, other tenant");
}

/// A promotion moves next→active and active→retired atomically; a stale transition is NotFound.
pub async fn transitions_are_optimistic_and_atomic(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    insert(
        &store,
        &key(&acme, "old", SigningAlg::Es256, KeyState::Active),
    )
    .await
    .expect("active");
    insert(
        &store,
        &key(&acme, "new", SigningAlg::Es256, KeyState::Next),
    )
    .await
    .expect("next");
    let now = acme.created_at + Duration::days(30);
    let retire = KeyTransition {
        kid: "old".into(),
        from: KeyState::Active,
        to: KeyState::Retired,
        activates_at: None,
        retired_at: Some(now),
        remove_after: Some(now + Duration::days(2)),
    };
    let promote = KeyTransition {
        kid: "new".into(),
        from: KeyState::Next,
        to: KeyState::Active,
        activates_at: Some(now),
        retired_at: None,
        remove_after: None,
    };
    let mut tx = store.write().await.expect("write");
    tx.lock_signing_keys(&acme.id).await.expect("lock");
    tx.transition_signing_key(&acme.id, &retire)
        .await
        .expect("retire");
    tx.transition_signing_key(&acme.id, &promote)
        .await
        .expect("promote");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    let keys = read.signing_keys(&acme.id).await.expect("keys");
    let old = keys.iter().find(|k| k.kid == "old").expect("old");
    let new = keys.iter().find(|k| k.kid == "new").expect("new");
    assert_eq!(
        (old.state, old.retired_at, old.remove_after),
        (KeyState::Retired, Some(now), Some(now + Duration::days(2)))
    );
    assert_eq!((new.state, new.activates_at), (KeyState::Active, now));

    // Replaying the same promotion finds nothing in `next` any more.
    let mut tx = store.write().await.expect("write");
    assert!(matches!(
        tx.transition_signing_key(&acme.id, &promote).await,
        Err(StoreError::NotFound)
    ));
    drop(tx); // SQLite has one writer: release it before the next write transaction
    // And a tenant cannot move another tenant's key.
    let other = stored_tenant(&store, "other", 2).await;
    let mut tx = store.write().await.expect("write");
    let steal = KeyTransition {
        kid: "new".into(),
        from: KeyState::Active,
        to: KeyState::Retired,
        ..promote
    };
    assert!(matches!(
        tx.transition_signing_key(&other.id, &steal).await,
        Err(StoreError::NotFound)
    ));
}

/// Deleting removes exactly one key of one tenant.
pub async fn delete_signing_key_is_scoped(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    insert(
        &store,
        &key(&acme, "gone", SigningAlg::Es256, KeyState::Retired),
    )
    .await
    .expect("insert");
    insert(
        &store,
        &key(&other, "gone", SigningAlg::Es256, KeyState::Retired),
    )
    .await
    .expect("insert");
    let mut tx = store.write().await.expect("write");
    tx.delete_signing_key(&acme.id, "gone")
        .await
        .expect("delete");
    assert!(matches!(
        tx.delete_signing_key(&acme.id, "gone").await,
        Err(StoreError::NotFound)
    ));
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert!(read.signing_keys(&acme.id).await.expect("keys").is_empty());
    assert_eq!(read.signing_keys(&other.id).await.expect("keys").len(), 1);
}

/// Racing creators of the active key: exactly one wins (what makes rotation exactly-once).
pub async fn racing_key_creators_admit_exactly_one(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let attempts = (0..6).map(|i| {
        let store = store.clone();
        let record = key(&acme, &format!("k{i}"), SigningAlg::Es256, KeyState::Active);
        async move {
            let mut tx = store.write().await?;
            tx.lock_signing_keys(&record.tenant_id).await?;
            // Check-then-insert under the lock, as the rotation worker does.
            if tx
                .signing_keys(&record.tenant_id)
                .await?
                .iter()
                .any(|k| k.state == KeyState::Active)
            {
                return Ok(false);
            }
            tx.insert_signing_key(&record).await?;
            tx.commit().await.map(|()| true)
        }
    });
    let results = futures_util::future::join_all(attempts).await;
    let created = results.iter().filter(|r| matches!(r, Ok(true))).count();
    assert_eq!(created, 1, "{results:?}");
    for result in results {
        match result {
            Ok(_) | Err(StoreError::Conflict { .. }) => {}
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
}
