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

/// The management-scope migration (`20261123000001_management_scopes`), given a store migrated
/// only up to the version before it: a management application stored with the contract's
/// organizations, policies, agents and billing scopes keeps only the served ones, in order; an
/// ordinary application registered with one of those names as its own API scope keeps it.
pub async fn management_scopes_shrink_to_the_served_ones(store: Arc<dyn Store>) {
    use svc_domain::{MANAGEMENT_API_SCOPES, ScopeSet};
    let legacy = "applications:read applications:write users:read users:write \
                  organizations:read organizations:write policies:read policies:write \
                  agents:read agents:write audit:read webhooks:read webhooks:write \
                  billing:read billing:write";
    let tenant = super::tenant_fixture("scopes", 71);
    let mut management = super::application_fixture(&tenant, 72);
    management.is_management = true;
    management.allowed_scopes = ScopeSet::parse(legacy).expect("legacy scopes");
    let mut ordinary = super::application_fixture(&tenant, 73);
    ordinary.allowed_scopes = ScopeSet::parse("organizations:read reports:read").expect("scopes");

    let mut tx = store.write().await.expect("write");
    tx.insert_tenant(&tenant).await.expect("tenant");
    tx.insert_application(&management)
        .await
        .expect("management app");
    tx.insert_application(&ordinary)
        .await
        .expect("ordinary app");
    tx.commit().await.expect("commit");

    store.migrate().await.expect("the remaining migrations");

    let mut read = store.read().await.expect("read");
    let migrated = read
        .application(&tenant.id, &management.id)
        .await
        .expect("read management app")
        .expect("management app");
    let kept = read
        .application(&tenant.id, &ordinary.id)
        .await
        .expect("read ordinary app")
        .expect("ordinary app");
    read.finish().await.expect("finish");
    let served = ScopeSet::parse(&MANAGEMENT_API_SCOPES.join(" ")).expect("served scopes");
    assert_eq!(migrated.allowed_scopes, served);
    assert_eq!(kept.allowed_scopes, ordinary.allowed_scopes);
    assert_eq!(
        migrated.updated_at, management.updated_at,
        "a data fix, not an edit"
    );
}
