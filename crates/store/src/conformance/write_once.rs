//! Conformance: `Store::write_once`, a one-statement write outside any transaction.

use super::tenant_fixture;
use crate::{Store, StoreError};
use std::sync::Arc;
use time::{Duration, OffsetDateTime};

/// Racing one-statement writes of the same proof id admit exactly one; the statement is durable
/// without a commit (a dropped handle loses nothing), and dropping it gives back what the
/// backend held, so the next write of the process starts at once.
pub async fn write_once_admits_one_racer_and_needs_no_commit(store: Arc<dyn Store>) {
    let t0 = OffsetDateTime::UNIX_EPOCH + Duration::days(20_000);
    let exp = t0 + Duration::seconds(61);
    let acme = tenant_fixture("acme", 1).id;
    let racers = (0..8).map(|_| {
        let (store, acme) = (store.clone(), acme.clone());
        async move {
            let mut tx = store.write_once().await?;
            let used = tx.use_proof_id(&acme, "key-a", "jti-1", exp, t0).await;
            tx.commit().await?;
            Ok::<_, StoreError>(used)
        }
    });
    let mut first = 0;
    for result in futures_util::future::join_all(racers).await {
        match result.expect("the write itself") {
            Ok(()) => first += 1,
            Err(StoreError::Conflict { constraint }) => {
                assert_eq!(constraint, "assertion_ids_pkey")
            }
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(first, 1, "exactly one racer records the proof id");

    let mut dropped = store.write_once().await.expect("write once");
    dropped
        .use_proof_id(&acme, "key-b", "jti-1", exp, t0)
        .await
        .expect("first use");
    drop(dropped);
    // A turn never given back would make this wait out the write timeout and fail.
    let mut tx = store
        .write()
        .await
        .expect("the dropped handle gave back the process's turn to write");
    let again = tx.use_proof_id(&acme, "key-b", "jti-1", exp, t0).await;
    assert!(
        matches!(&again, Err(StoreError::Conflict { constraint }) if constraint == "assertion_ids_pkey"),
        "the uncommitted one-statement write is durable: {again:?}"
    );
}
