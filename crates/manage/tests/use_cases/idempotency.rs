//! Idempotency keys: claim, replay, conflict, release and expiry.

use crate::support::harness;
use svc_manage::ManageError;
use svc_manage::idempotency::{Begin, KEY_LIFETIME, begin, complete, fingerprint, release};

const SCOPE: &str = "ten_01jd0000000000000000000000:client:app_01jd0000000000000000000000";

fn conflict_containing(result: Result<Begin, ManageError>, needle: &str) {
    match result {
        Err(ManageError::Conflict(message)) => assert!(message.contains(needle), "{message}"),
        other => panic!("expected a conflict about {needle:?}, got {other:?}"),
    }
}

#[tokio::test]
async fn a_finished_request_is_replayed_to_its_retries() {
    let h = harness().await;
    let fp = fingerprint("POST", "/api/v1/applications", br#"{"name":"Shop"}"#);
    assert_eq!(
        begin(&h.ctx, SCOPE, "key-1", &fp).await.unwrap(),
        Begin::Fresh
    );
    conflict_containing(
        begin(&h.ctx, SCOPE, "key-1", &fp).await,
        "still in progress",
    );
    complete(&h.ctx, SCOPE, "key-1", 201, r#"{"client_id":"app_x"}"#)
        .await
        .unwrap();
    for _ in 0..2 {
        assert_eq!(
            begin(&h.ctx, SCOPE, "key-1", &fp).await.unwrap(),
            Begin::Replay {
                status: 201,
                body: r#"{"client_id":"app_x"}"#.to_owned()
            }
        );
    }
}

#[tokio::test]
async fn a_key_reused_with_another_request_is_a_conflict() {
    let h = harness().await;
    let fp = fingerprint("POST", "/api/v1/applications", b"{}");
    let other = fingerprint("POST", "/api/v1/applications", br#"{"x":1}"#);
    assert_eq!(
        begin(&h.ctx, SCOPE, "key-1", &fp).await.unwrap(),
        Begin::Fresh
    );
    complete(&h.ctx, SCOPE, "key-1", 201, "{}").await.unwrap();
    conflict_containing(
        begin(&h.ctx, SCOPE, "key-1", &other).await,
        "idempotency key reused with a different request",
    );
    // Other callers' keys never collide.
    assert_eq!(
        begin(&h.ctx, "operator:opt_x", "key-1", &other)
            .await
            .unwrap(),
        Begin::Fresh
    );
}

#[tokio::test]
async fn a_released_key_runs_afresh() {
    let h = harness().await;
    let fp = fingerprint("DELETE", "/api/v1/applications/app_x", b"");
    assert_eq!(begin(&h.ctx, SCOPE, "k", &fp).await.unwrap(), Begin::Fresh);
    release(&h.ctx, SCOPE, "k").await.unwrap();
    assert_eq!(begin(&h.ctx, SCOPE, "k", &fp).await.unwrap(), Begin::Fresh);
}

#[tokio::test]
async fn keys_expire_after_24_hours() {
    let h = harness().await;
    let fp = fingerprint("POST", "/p", b"1");
    let other = fingerprint("POST", "/p", b"2");
    assert_eq!(begin(&h.ctx, SCOPE, "k", &fp).await.unwrap(), Begin::Fresh);
    complete(&h.ctx, SCOPE, "k", 200, "one").await.unwrap();

    h.clock.advance(KEY_LIFETIME - time::Duration::seconds(1));
    assert!(matches!(
        begin(&h.ctx, SCOPE, "k", &fp).await.unwrap(),
        Begin::Replay { .. }
    ));
    conflict_containing(begin(&h.ctx, SCOPE, "k", &other).await, "different request");

    h.clock.advance(time::Duration::seconds(2));
    assert_eq!(
        begin(&h.ctx, SCOPE, "k", &other).await.unwrap(),
        Begin::Fresh,
        "an expired key is forgotten and can be claimed by any request"
    );
    // An in-progress claim also expires, so a crashed request does not block the key forever.
    h.clock.advance(KEY_LIFETIME + time::Duration::seconds(1));
    assert_eq!(begin(&h.ctx, SCOPE, "k", &fp).await.unwrap(), Begin::Fresh);
}

#[tokio::test]
async fn malformed_keys_are_refused_before_the_store() {
    let h = harness().await;
    let before = h.store.transactions();
    for key in ["", "line\nbreak", &"k".repeat(256)] {
        let err = begin(&h.ctx, SCOPE, key, "fp").await.unwrap_err();
        assert!(
            matches!(&err, ManageError::Invalid { field, .. } if field == "idempotency-key"),
            "{err:?}"
        );
    }
    assert_eq!(h.store.transactions(), before);
}
