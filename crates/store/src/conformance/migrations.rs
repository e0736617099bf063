//! Conformance: migrations and liveness.

use crate::Store;
use std::sync::Arc;

/// A fresh store answers a ping.
pub async fn ping_answers(store: Arc<dyn Store>) {
    store.ping().await.expect("ping on a fresh store");
}

/// After `migrate`, nothing is pending and nothing unknown is applied.
pub async fn migrations_are_current_after_migrate(store: Arc<dyn Store>) {
    let status = store.migration_status().await.expect("migration status");
    assert!(
        status.is_current(),
        "pending after migrate: {:?}",
        status.pending
    );
    assert!(
        status.unknown_applied.is_empty(),
        "unknown applied: {:?}",
        status.unknown_applied
    );
}

/// Running migrations again changes nothing and does not fail.
pub async fn migrate_is_idempotent(store: Arc<dyn Store>) {
    store.migrate().await.expect("second migrate");
    store.migrate().await.expect("third migrate");
    assert!(store.migration_status().await.expect("status").is_current());
}

/// The pool reports the maximum it was configured with and never more open connections.
pub async fn pool_status_reports_configured_maximum(store: Arc<dyn Store>) {
    store.ping().await.expect("ping");
    let status = store.pool_status();
    assert!(status.max >= 1, "max must be at least one: {status:?}");
    assert!(status.size <= status.max, "{status:?}");
    assert!(status.idle <= status.size, "{status:?}");
}
