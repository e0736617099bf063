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

/// The management-scope migrations, given a store migrated only up to the version before the
/// first of them: `20261123000001_management_scopes` takes away the contract's scopes no route
/// served (organizations, policies, agents, billing), `20261124000001_organizations` gives back
/// the organizations scopes, `20261124000004_access_model` the policies scopes and
/// `20261125000034_agents` the agents scopes, now served.
/// So a management application stored with every contract scope, and one of a tenant created
/// between the first two versions (holding the seven scopes then served), both end with exactly
/// the served ones; an ordinary application registered with one of those names as its own API
/// scope keeps what it had, and gains nothing.
///
/// `insert_legacy` stores applications with the columns of that version, in the backend's own
/// SQL: the repository writes the current schema, whose later columns (`minimum_acr`,
/// `organization_usage`, `require_pushed_authorization_requests`) that version does not have. The applications it gets have no value
/// for those columns.
pub async fn management_scopes_shrink_to_the_served_ones(
    store: Arc<dyn Store>,
    insert_legacy: impl AsyncFnOnce(&[svc_domain::Application]),
) {
    use svc_domain::{Application, MANAGEMENT_API_SCOPES, ScopeSet};
    let legacy = "applications:read applications:write users:read users:write \
                  organizations:read organizations:write policies:read policies:write \
                  agents:read agents:write audit:read webhooks:read webhooks:write \
                  billing:read billing:write";
    let tenant = super::tenant_fixture("scopes", 71);
    let management = Application {
        is_management: true,
        allowed_scopes: ScopeSet::parse(legacy).expect("legacy scopes"),
        minimum_acr: None,
        organization_usage: svc_domain::OrganizationUsage::Allow,
        require_pushed_authorization_requests: false,
        dpop_bound_access_tokens: false,
        ..super::application_fixture(&tenant, 72)
    };
    let ordinary = Application {
        allowed_scopes: ScopeSet::parse("organizations:read reports:read").expect("scopes"),
        minimum_acr: None,
        organization_usage: svc_domain::OrganizationUsage::Allow,
        require_pushed_authorization_requests: false,
        dpop_bound_access_tokens: false,
        ..super::application_fixture(&tenant, 73)
    };
    // A tenant whose management application was created while organizations were not served.
    let later = super::tenant_fixture("later", 74);
    let between = Application {
        is_management: true,
        allowed_scopes: ScopeSet::parse(
            "applications:read applications:write users:read users:write audit:read \
             webhooks:read webhooks:write",
        )
        .expect("scopes served before organizations"),
        minimum_acr: None,
        organization_usage: svc_domain::OrganizationUsage::Allow,
        require_pushed_authorization_requests: false,
        dpop_bound_access_tokens: false,
        ..super::application_fixture(&later, 75)
    };

    let mut tx = store.write().await.expect("write");
    tx.insert_tenant(&tenant).await.expect("tenant");
    tx.insert_tenant(&later).await.expect("later tenant");
    tx.commit().await.expect("commit");
    insert_legacy(&[management.clone(), ordinary.clone(), between.clone()]).await;

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
    let granted = read
        .application(&later.id, &between.id)
        .await
        .expect("read later management app")
        .expect("later management app");
    read.finish().await.expect("finish");
    let served = ScopeSet::parse(&MANAGEMENT_API_SCOPES.join(" ")).expect("served scopes");
    assert_eq!(
        migrated,
        Application {
            allowed_scopes: served.clone(),
            ..management
        },
        "only the scopes change: a data fix, not an edit"
    );
    assert_eq!(
        granted,
        Application {
            allowed_scopes: served,
            ..between
        },
        "the organizations, policies and agents scopes are granted, and nothing else changes"
    );
    assert_eq!(kept, ordinary, "an ordinary application is untouched");
}
