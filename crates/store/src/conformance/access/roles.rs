//! Conformance of the access model's roles: custom roles (round trips, keys unique per tenant,
//! compare-and-set updates, deletion with their grants), grants replaced as a set and only of
//! defined permissions, the holders of a role, the tenant roles of applications, and everything
//! of the access model going with its tenant. Fixtures and helpers are the parent module's.

use super::{
    api_resource_fixture, assert_conflict, grant_set, held, insert_resources, insert_roles, keys,
    moment, read_grants, replace_grants, role_fixture, role_key,
};
use crate::conformance::grants::stored_tenant;
use crate::conformance::{
    application_fixture, membership_fixture, organization_fixture, tenant_fixture, user_fixture,
};
use crate::{Store, StoreError, UpdateOutcome};
use std::sync::Arc;
use svc_domain::{ClientId, Role, RoleKey, RoleKind, TenantId};
use time::Duration;

/// A custom role reads back as written, inside the writing transaction and after commit, and
/// the tenant's roles list in byte order of their keys. A key is unique in its tenant across
/// both kinds (the key's conflict), not across tenants; an unknown tenant is the foreign key's
/// conflict. An update replaces the description and `updated_at` (never the kind or the
/// creation time) only at the revision read: Stale otherwise, NotFound when absent or another
/// tenant's.
pub async fn roles_round_trip_and_update_at_the_revision_read(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let viewer = role_fixture(&acme, "billing.viewer", RoleKind::Tenant, at);
    let dash = role_fixture(&acme, "billing-viewer", RoleKind::Organization, at);
    let under = role_fixture(&acme, "billing_viewer", RoleKind::Tenant, at);
    let theirs = role_fixture(&other, "billing.viewer", RoleKind::Organization, at);

    let mut tx = store.write().await.expect("write");
    for role in [&under, &viewer, &dash] {
        tx.insert_role(role).await.expect("insert role");
    }
    assert_eq!(
        tx.role(&acme.id, &viewer.key).await.expect("own write"),
        Some(viewer.clone()),
        "visible inside the writing transaction"
    );
    tx.commit().await.expect("commit");
    insert_roles(&store, &[&theirs]).await;

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.list_roles(&acme.id).await.expect("list"),
        vec![dash.clone(), viewer.clone(), under.clone()],
        "every field, in byte order of the keys"
    );
    assert_eq!(
        read.role(&other.id, &viewer.key).await.expect("theirs"),
        Some(theirs.clone()),
        "the same key in another tenant is another role"
    );
    assert_eq!(
        read.role(&acme.id, &role_key("owner"))
            .await
            .expect("built-in"),
        None,
        "built-in roles are not stored"
    );
    read.finish().await.expect("finish");

    let ghost = tenant_fixture("ghost", 9);
    for (role, constraint) in [
        (
            role_fixture(&acme, "billing.viewer", RoleKind::Organization, at),
            "roles_pkey",
        ),
        (
            role_fixture(&ghost, "auditor", RoleKind::Tenant, at),
            "roles_tenant_id_fkey",
        ),
    ] {
        let mut tx = store.write().await.expect("write");
        assert_conflict(tx.insert_role(&role).await, constraint);
    }

    let r0 = viewer.updated_at;
    let changed = Role {
        description: "Reads invoices ü".into(),
        updated_at: r0 + Duration::microseconds(1),
        // Ignored: neither changes.
        kind: RoleKind::Organization,
        created_at: r0 + Duration::days(2),
        ..viewer.clone()
    };
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_role_if_unchanged(&changed, r0)
            .await
            .expect("update"),
        UpdateOutcome::Applied
    );
    let stale = Role {
        description: "Stale".into(),
        ..changed.clone()
    };
    for read_at in [r0, changed.updated_at - Duration::microseconds(1)] {
        assert_eq!(
            tx.update_role_if_unchanged(&stale, read_at)
                .await
                .expect("stale"),
            UpdateOutcome::Stale
        );
    }
    for absent in [
        role_fixture(&acme, "absent", RoleKind::Tenant, at),
        Role {
            tenant_id: ghost.id.clone(),
            ..changed.clone()
        },
    ] {
        assert!(matches!(
            tx.update_role_if_unchanged(&absent, absent.updated_at)
                .await,
            Err(StoreError::NotFound)
        ));
    }
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.role(&acme.id, &viewer.key).await.expect("updated"),
        Some(Role {
            kind: viewer.kind,
            created_at: viewer.created_at,
            ..changed
        }),
        "description and revision replaced; stale and misdirected updates changed nothing"
    );
    assert_eq!(
        read.role(&other.id, &theirs.key).await.expect("theirs"),
        Some(theirs)
    );
    read.finish().await.expect("finish");
}

/// A role's grants (built-in or custom, stored role or not) are replaced as a set: added,
/// removed and kept ones, the same set again, the empty set clearing them. Grants read for a
/// set of roles come sorted by role, resource and permission, and an empty set reads nothing.
/// A permission its resource does not define (an unknown name, another resource's permission,
/// another tenant's resource) is the foreign key's conflict and leaves the grants as they were.
pub async fn role_grants_are_replaced_as_a_set_of_defined_permissions(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let billing = api_resource_fixture(&acme, 1, "urn:billing", &["billing:read", "b:w"], at);
    let reports = api_resource_fixture(&acme, 2, "urn:reports", &["reports:read"], at);
    let theirs = api_resource_fixture(&other, 3, "urn:theirs", &["theirs:read"], at);
    insert_resources(&store, &[&billing, &reports, &theirs]).await;
    insert_roles(
        &store,
        &[&role_fixture(&acme, "auditor", RoleKind::Tenant, at)],
    )
    .await;

    let mut tx = store.write().await.expect("write");
    let first = [(&billing, "billing:read"), (&reports, "reports:read")];
    tx.replace_role_grants(&acme.id, &role_key("auditor"), &grant_set(&first))
        .await
        .expect("grants");
    assert_eq!(
        tx.role_grants(&acme.id, &keys(&["auditor"]))
            .await
            .expect("own write")
            .len(),
        2,
        "visible inside the writing transaction"
    );
    tx.commit().await.expect("commit");
    replace_grants(&store, &acme.id, "member", &[(&reports, "reports:read")]).await;
    replace_grants(&store, &other.id, "auditor", &[(&theirs, "theirs:read")]).await;

    // Replace: one removed, one added, one kept; then the same set again.
    let second = [(&billing, "b:w"), (&billing, "billing:read")];
    for _ in 0..2 {
        replace_grants(&store, &acme.id, "auditor", &second).await;
        assert_eq!(
            read_grants(&store, &acme.id, &["auditor"]).await,
            held("auditor", &second)
        );
    }
    assert_eq!(
        read_grants(&store, &acme.id, &["member", "auditor", "nobody"]).await,
        [
            held("auditor", &second),
            held("member", &[(&reports, "reports:read")]),
        ]
        .concat(),
        "sorted by role, resource and permission"
    );
    assert!(read_grants(&store, &acme.id, &[]).await.is_empty());
    assert_eq!(
        read_grants(&store, &other.id, &["auditor", "member"]).await,
        held("auditor", &[(&theirs, "theirs:read")]),
        "another tenant's grants are its own"
    );

    // Refused, each in its own transaction; the grants stay as they were.
    let unknown = api_resource_fixture(&acme, 4, "urn:unknown", &["billing:read"], at);
    for refused in [
        [(&billing, "billing:read"), (&billing, "billing:delete")],
        [(&billing, "billing:read"), (&reports, "billing:read")],
        [(&billing, "billing:read"), (&theirs, "theirs:read")],
        [(&billing, "billing:read"), (&unknown, "billing:read")],
    ] {
        let mut tx = store.write().await.expect("write");
        assert_conflict(
            tx.replace_role_grants(&acme.id, &role_key("auditor"), &grant_set(&refused))
                .await,
            "role_permissions_permission_fkey",
        );
    }
    assert_eq!(
        read_grants(&store, &acme.id, &["auditor"]).await,
        held("auditor", &second),
        "the refused replacements wrote nothing"
    );

    // The empty set clears them, and clearing again is harmless.
    for _ in 0..2 {
        replace_grants(&store, &acme.id, "auditor", &[]).await;
        assert!(read_grants(&store, &acme.id, &["auditor"]).await.is_empty());
    }
    assert_eq!(
        read_grants(&store, &acme.id, &["member"]).await,
        held("member", &[(&reports, "reports:read")]),
        "clearing one role's grants leaves another's"
    );
}

/// Deleting a custom role deletes its row and its grants, and only those; a role that is not
/// there is false; another tenant's role of the same key is left alone.
pub async fn deleting_a_role_deletes_its_grants(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let billing = api_resource_fixture(&acme, 1, "urn:billing", &["billing:read"], at);
    let theirs = api_resource_fixture(&other, 2, "urn:billing", &["billing:read"], at);
    insert_resources(&store, &[&billing, &theirs]).await;
    let auditor = role_fixture(&acme, "auditor", RoleKind::Tenant, at);
    let support = role_fixture(&acme, "support", RoleKind::Tenant, at);
    let their_auditor = role_fixture(&other, "auditor", RoleKind::Tenant, at);
    insert_roles(&store, &[&auditor, &support, &their_auditor]).await;
    let grant = [(&billing, "billing:read")];
    replace_grants(&store, &acme.id, "auditor", &grant).await;
    replace_grants(&store, &acme.id, "support", &grant).await;
    replace_grants(&store, &other.id, "auditor", &[(&theirs, "billing:read")]).await;

    let mut tx = store.write().await.expect("write");
    assert!(
        tx.delete_role(&acme.id, &auditor.key)
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_role(&acme.id, &auditor.key).await.expect("again"),
        "already gone"
    );
    assert!(
        !tx.delete_role(&acme.id, &role_key("absent"))
            .await
            .expect("absent")
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(read.role(&acme.id, &auditor.key).await.expect("role"), None);
    assert_eq!(
        read.list_roles(&acme.id).await.expect("list"),
        vec![support]
    );
    assert_eq!(
        read.role_grants(&acme.id, &keys(&["auditor", "support"]))
            .await
            .expect("grants"),
        held("support", &grant),
        "its grants went with it; another role's stay"
    );
    assert_eq!(
        read.role(&other.id, &their_auditor.key)
            .await
            .expect("theirs"),
        Some(their_auditor)
    );
    assert_eq!(
        read.role_grants(&other.id, &keys(&["auditor"]))
            .await
            .expect("their grants"),
        held("auditor", &[(&theirs, "billing:read")]),
        "another tenant's role of the same key keeps its grants"
    );
    read.finish().await.expect("finish");
}

/// The holders of a role are the people holding it as a tenant role, the memberships listing it
/// (exactly: not a key it is a prefix of) and the applications holding it, in the tenant only.
pub async fn role_holders_count_people_memberships_and_applications(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let eve = user_fixture(&other, 3, "eve@example.com");
    let globex = organization_fixture(&acme, 1, "globex", at);
    let hooli = organization_fixture(&acme, 2, "hooli", at);
    let theirs = organization_fixture(&other, 3, "theirs", at);
    let app = application_fixture(&acme, 4);
    let their_app = application_fixture(&other, 5);

    let mut tx = store.write().await.expect("write");
    tx.set_user_roles(&acme.id, &ada.id, &keys(&["auditor", "tenant_admin"]), at)
        .await
        .expect("ada's roles");
    tx.set_user_roles(&acme.id, &bob.id, &keys(&["auditor"]), at)
        .await
        .expect("bob's roles");
    tx.set_user_roles(&other.id, &eve.id, &keys(&["auditor"]), at)
        .await
        .expect("eve's roles");
    for org in [&globex, &hooli, &theirs] {
        tx.insert_organization(org).await.expect("organization");
    }
    for membership in [
        membership_fixture(&globex, &ada, &["auditor", "member"], at),
        membership_fixture(&hooli, &ada, &["auditor"], at),
        membership_fixture(&hooli, &bob, &["auditor.lead", "member"], at),
        membership_fixture(&theirs, &eve, &["auditor"], at),
    ] {
        tx.insert_membership(&membership).await.expect("membership");
    }
    for application in [&app, &their_app] {
        tx.insert_application(application)
            .await
            .expect("application");
    }
    tx.replace_application_roles(&acme.id, &app.id, &keys(&["auditor", "support"]), at)
        .await
        .expect("app roles");
    tx.replace_application_roles(&other.id, &their_app.id, &keys(&["auditor"]), at)
        .await
        .expect("their app roles");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    for (key, count) in [
        ("auditor", 2 + 2 + 1),
        ("member", 2),
        ("support", 1),
        ("tenant_admin", 1),
        ("auditor.lead", 1),
        ("audit", 0),
        ("nobody", 0),
    ] {
        assert_eq!(
            read.role_holders(&acme.id, &role_key(key))
                .await
                .expect("holders"),
            count,
            "{key}"
        );
    }
    assert_eq!(
        read.role_holders(&other.id, &role_key("auditor"))
            .await
            .expect("theirs"),
        3
    );
    read.finish().await.expect("finish");
}

/// An application's tenant roles are replaced as a set (added, removed, kept, the empty set
/// clearing them) and read in key order; with another tenant's id they read as none and are
/// not written; an unknown application is the foreign key's conflict; they go with their
/// application.
pub async fn application_roles_are_replaced_as_a_set(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let app = application_fixture(&acme, 3);
    let second = application_fixture(&acme, 4);
    let mut tx = store.write().await.expect("write");
    tx.insert_application(&app).await.expect("app");
    tx.insert_application(&second).await.expect("second app");
    tx.commit().await.expect("commit");
    let read_roles = async |tenant: &TenantId, app: &ClientId| {
        let mut read = store.read().await.expect("read");
        let roles = read.application_roles(tenant, app).await.expect("roles");
        read.finish().await.expect("finish");
        roles
    };
    let replace = async |tenant: &TenantId, app: &ClientId, roles: &[&str]| {
        let mut tx = store.write().await.expect("write");
        tx.replace_application_roles(tenant, app, &keys(roles), at)
            .await
            .unwrap_or_else(|e| panic!("{roles:?}: {e:?}"));
        tx.commit().await.expect("commit");
    };
    assert!(read_roles(&acme.id, &app.id).await.is_empty());

    replace(&acme.id, &app.id, &["support", "auditor", "a-b", "a_b"]).await;
    replace(&acme.id, &second.id, &["auditor"]).await;
    let held = read_roles(&acme.id, &app.id).await;
    assert_eq!(
        held.iter().map(RoleKey::as_str).collect::<Vec<_>>(),
        ["a-b", "a_b", "auditor", "support"]
    );
    replace(&acme.id, &app.id, &["auditor", "billing"]).await;
    assert_eq!(
        read_roles(&acme.id, &app.id).await,
        keys(&["auditor", "billing"])
    );
    // Another tenant's id: nothing read, nothing removed.
    assert!(read_roles(&other.id, &app.id).await.is_empty());
    replace(&other.id, &app.id, &[]).await;
    assert_eq!(
        read_roles(&acme.id, &app.id).await,
        keys(&["auditor", "billing"])
    );
    for _ in 0..2 {
        replace(&acme.id, &app.id, &[]).await;
        assert!(read_roles(&acme.id, &app.id).await.is_empty());
    }
    assert_eq!(
        read_roles(&acme.id, &second.id).await,
        keys(&["auditor"]),
        "clearing one application's roles leaves another's"
    );

    let ghost = application_fixture(&acme, 5);
    let mut tx = store.write().await.expect("write");
    assert_conflict(
        tx.replace_application_roles(&acme.id, &ghost.id, &keys(&["auditor"]), at)
            .await,
        "application_roles_client_id_fkey",
    );
    drop(tx);

    let mut tx = store.write().await.expect("write");
    tx.delete_application(&acme.id, &second.id)
        .await
        .expect("delete app");
    tx.insert_application(&second)
        .await
        .expect("same app again");
    assert!(
        tx.application_roles(&acme.id, &second.id)
            .await
            .expect("roles")
            .is_empty(),
        "roles go with their application"
    );
    tx.commit().await.expect("commit");
}

/// Deleting a tenant deletes its resources, permissions, roles, grants (of built-in roles too)
/// and application roles: a tenant recreated with the same id starts with none, and nothing of
/// the old rows is left to conflict with. Another tenant's stay.
pub async fn access_model_goes_with_its_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let billing = api_resource_fixture(&acme, 1, "urn:billing", &["billing:read"], at);
    let theirs = api_resource_fixture(&other, 2, "urn:billing", &["billing:read"], at);
    let auditor = role_fixture(&acme, "auditor", RoleKind::Tenant, at);
    let their_auditor = role_fixture(&other, "auditor", RoleKind::Tenant, at);
    let app = application_fixture(&acme, 3);
    let their_app = application_fixture(&other, 4);
    let mut tx = store.write().await.expect("write");
    tx.insert_application(&app).await.expect("app");
    tx.insert_application(&their_app).await.expect("their app");
    tx.commit().await.expect("commit");
    insert_resources(&store, &[&billing, &theirs]).await;
    insert_roles(&store, &[&auditor, &their_auditor]).await;
    for (tenant, resource) in [(&acme, &billing), (&other, &theirs)] {
        for role in ["auditor", "owner"] {
            replace_grants(&store, &tenant.id, role, &[(resource, "billing:read")]).await;
        }
    }
    let mut tx = store.write().await.expect("write");
    for (tenant, app) in [(&acme, &app), (&other, &their_app)] {
        tx.replace_application_roles(&tenant.id, &app.id, &keys(&["auditor"]), at)
            .await
            .expect("app roles");
    }
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    tx.delete_tenant(&acme.id).await.expect("delete tenant");
    tx.insert_tenant(&acme).await.expect("same tenant again");
    assert_eq!(
        tx.api_resource(&acme.id, &billing.id).await.expect("by id"),
        None
    );
    assert!(tx.list_roles(&acme.id).await.expect("roles").is_empty());
    assert!(
        tx.role_grants(&acme.id, &keys(&["auditor", "owner"]))
            .await
            .expect("grants")
            .is_empty()
    );
    assert!(
        tx.application_roles(&acme.id, &app.id)
            .await
            .expect("app roles")
            .is_empty()
    );
    assert_eq!(
        tx.role_holders(&acme.id, &auditor.key)
            .await
            .expect("holders"),
        0
    );
    tx.insert_api_resource(&billing).await.expect("again");
    tx.insert_role(&auditor).await.expect("role again");
    tx.replace_role_grants(
        &acme.id,
        &auditor.key,
        &grant_set(&[(&billing, "billing:read")]),
    )
    .await
    .expect("grants again");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.api_resource(&other.id, &theirs.id)
            .await
            .expect("theirs"),
        Some(theirs.clone())
    );
    assert_eq!(
        read.list_roles(&other.id).await.expect("their roles"),
        vec![their_auditor]
    );
    assert_eq!(
        read.role_grants(&other.id, &keys(&["auditor", "owner"]))
            .await
            .expect("their grants"),
        [
            held("auditor", &[(&theirs, "billing:read")]),
            held("owner", &[(&theirs, "billing:read")]),
        ]
        .concat()
    );
    assert_eq!(
        read.application_roles(&other.id, &their_app.id)
            .await
            .expect("their app roles"),
        keys(&["auditor"]),
        "another tenant's access model stays"
    );
    read.finish().await.expect("finish");
}
