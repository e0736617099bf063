//! Conformance: the access model, with its fixtures. Here API resources: round trips by id and
//! by identifier with their permissions, identifiers unique per tenant, keyset pages both ways,
//! compare-and-set updates that take removed permissions out of every role, deletion with every
//! grant of them, all scoped to their tenant. Roles, grants, holders and application roles are
//! in [`roles`].

mod roles;

pub use roles::*;

use super::grants::stored_tenant;
use super::tenant_fixture;
use crate::{Order, Store, StoreError, UpdateOutcome};
use std::collections::BTreeSet;
use std::sync::Arc;
use svc_domain::{
    ApiResource, ApiResourceId, ManualClock, Permission, PermissionName, Role, RoleGrant, RoleKey,
    RoleKind, SeededRandom, Tenant, TenantId,
};
use time::{Duration, OffsetDateTime};

/// An API resource of `tenant` at `identifier`, created at `at` (whole microseconds) and changed
/// a second and some microseconds later, defining `permissions` (sorted here, as the domain
/// keeps them) with descriptions holding quotes and non-ASCII text. Ids grow with `at`.
pub fn api_resource_fixture(
    tenant: &Tenant,
    seed: u64,
    identifier: &str,
    permissions: &[&str],
    at: OffsetDateTime,
) -> ApiResource {
    let names: BTreeSet<PermissionName> = permissions.iter().map(|p| permission(p)).collect();
    ApiResource {
        id: ApiResourceId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: tenant.id.clone(),
        identifier: identifier.to_owned(),
        name: format!("API \"{seed}\" ü"),
        permissions: names
            .into_iter()
            .map(|name| Permission {
                description: format!("Allows \"{name}\" — ü"),
                name,
            })
            .collect(),
        created_at: at,
        updated_at: at + Duration::microseconds(1_000_019),
    }
}

/// A custom role of `tenant`, created at `at` and changed three microseconds later.
pub fn role_fixture(tenant: &Tenant, key: &str, kind: RoleKind, at: OffsetDateTime) -> Role {
    Role {
        tenant_id: tenant.id.clone(),
        key: role_key(key),
        kind,
        description: format!("Role \"{key}\" ü"),
        created_at: at,
        updated_at: at + Duration::microseconds(3),
    }
}

fn permission(name: &str) -> PermissionName {
    PermissionName::parse(name).unwrap_or_else(|e| panic!("fixture permission {name}: {e}"))
}

fn role_key(key: &str) -> RoleKey {
    RoleKey::parse(key).unwrap_or_else(|e| panic!("fixture role {key}: {e}"))
}

fn keys(keys: &[&str]) -> BTreeSet<RoleKey> {
    keys.iter().map(|k| role_key(k)).collect()
}

/// The grants `(resource, permission)`, as `replace_role_grants` takes them.
fn grant_set(grants: &[(&ApiResource, &str)]) -> BTreeSet<(ApiResourceId, PermissionName)> {
    grants
        .iter()
        .map(|(resource, name)| (resource.id.clone(), permission(name)))
        .collect()
}

/// The grants `role` holds, as `role_grants` reads them: sorted by resource id (which the
/// fixtures' seeds, not their order, decide) and permission.
fn held(role: &str, grants: &[(&ApiResource, &str)]) -> Vec<RoleGrant> {
    let mut held: Vec<RoleGrant> = grants
        .iter()
        .map(|(resource, name)| RoleGrant {
            role: role_key(role),
            resource_id: resource.id.clone(),
            permission: permission(name),
        })
        .collect();
    held.sort();
    held
}

/// An instant a day after the tenant's creation, on no whole millisecond.
fn moment(tenant: &Tenant) -> OffsetDateTime {
    tenant.created_at + Duration::days(1) + Duration::microseconds(246_813)
}

async fn insert_resources(store: &Arc<dyn Store>, resources: &[&ApiResource]) {
    let mut tx = store.write().await.expect("write");
    for resource in resources {
        tx.insert_api_resource(resource)
            .await
            .unwrap_or_else(|e| panic!("insert {}: {e:?}", resource.identifier));
    }
    tx.commit().await.expect("commit");
}

async fn insert_roles(store: &Arc<dyn Store>, roles: &[&Role]) {
    let mut tx = store.write().await.expect("write");
    for role in roles {
        tx.insert_role(role)
            .await
            .unwrap_or_else(|e| panic!("insert role {}: {e:?}", role.key));
    }
    tx.commit().await.expect("commit");
}

async fn read_resource(
    store: &Arc<dyn Store>,
    tenant: &TenantId,
    id: &ApiResourceId,
) -> Option<ApiResource> {
    let mut read = store.read().await.expect("read");
    let resource = read.api_resource(tenant, id).await.expect("api resource");
    read.finish().await.expect("finish");
    resource
}

async fn replace_grants(
    store: &Arc<dyn Store>,
    tenant: &TenantId,
    role: &str,
    grants: &[(&ApiResource, &str)],
) {
    let mut tx = store.write().await.expect("write");
    tx.replace_role_grants(tenant, &role_key(role), &grant_set(grants))
        .await
        .unwrap_or_else(|e| panic!("grants of {role}: {e:?}"));
    tx.commit().await.expect("commit");
}

async fn read_grants(store: &Arc<dyn Store>, tenant: &TenantId, roles: &[&str]) -> Vec<RoleGrant> {
    let mut read = store.read().await.expect("read");
    let grants = read
        .role_grants(tenant, &keys(roles))
        .await
        .expect("role grants");
    read.finish().await.expect("finish");
    grants
}

/// Asserts a refused write is the conflict `constraint`.
fn assert_conflict<T: std::fmt::Debug>(result: Result<T, StoreError>, constraint: &str) {
    match result {
        Err(StoreError::Conflict { constraint: named }) => assert_eq!(named, constraint),
        other => panic!("{constraint}: expected a conflict, got {other:?}"),
    }
}

/// Every field of an API resource reads back as written, by id and by exact identifier, inside
/// the writing transaction and after commit: permissions in byte order (names that sort
/// differently by byte and by locale), a resource defining none. Another tenant, an unknown id,
/// an identifier differing only in case reads nothing. The identifier is unique in its tenant
/// (the unique key's conflict, named the same on every backend), not across tenants; a repeated
/// id is the key's conflict, a repeated permission name the permission key's, an unknown tenant
/// the foreign key's; a refused insert stores nothing.
pub async fn api_resources_round_trip_and_identifiers_are_unique_per_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let billing = api_resource_fixture(
        &acme,
        1,
        "https://api.example.com/billing",
        &["billing:a_b", "billing:Z", "billing:a.b", "billing:a-b"],
        at,
    );
    assert_eq!(
        billing
            .permissions
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>(),
        ["billing:Z", "billing:a-b", "billing:a.b", "billing:a_b"],
        "byte order"
    );
    let bare = api_resource_fixture(&acme, 2, "urn:example:bare", &[], at);
    let theirs = api_resource_fixture(&other, 3, "https://api.example.com/billing", &[], at);

    let mut tx = store.write().await.expect("write");
    tx.insert_api_resource(&billing).await.expect("billing");
    tx.insert_api_resource(&bare).await.expect("bare");
    assert_eq!(
        tx.api_resource(&acme.id, &billing.id)
            .await
            .expect("own write"),
        Some(billing.clone()),
        "visible inside the writing transaction"
    );
    tx.commit().await.expect("commit");
    insert_resources(&store, &[&theirs]).await;

    let mut read = store.read().await.expect("read");
    for resource in [&billing, &bare] {
        assert_eq!(
            read.api_resource(&acme.id, &resource.id)
                .await
                .expect("by id"),
            Some(resource.clone()),
            "every field as written, by id"
        );
        assert_eq!(
            read.api_resource_by_identifier(&acme.id, &resource.identifier)
                .await
                .expect("by identifier"),
            Some(resource.clone()),
            "every field as written, by identifier"
        );
        assert_eq!(
            read.api_resource(&other.id, &resource.id)
                .await
                .expect("cross-tenant id"),
            None,
            "another tenant reads nothing"
        );
    }
    assert_eq!(
        read.api_resource_by_identifier(&other.id, &billing.identifier)
            .await
            .expect("theirs"),
        Some(theirs.clone()),
        "the same identifier in another tenant is another resource"
    );
    assert_eq!(
        read.api_resource_by_identifier(&acme.id, "HTTPS://api.example.com/billing")
            .await
            .expect("case"),
        None,
        "identifiers match exactly"
    );
    let unknown = api_resource_fixture(&acme, 4, "urn:unknown", &[], at);
    assert_eq!(
        read.api_resource(&acme.id, &unknown.id)
            .await
            .expect("unknown"),
        None
    );
    read.finish().await.expect("finish");

    // Each write in its own transaction: on PostgreSQL a failed statement aborts it.
    let ghost = tenant_fixture("ghost", 9);
    let mut repeated = api_resource_fixture(&acme, 7, "urn:repeated", &["x:read"], at);
    repeated.permissions.push(repeated.permissions[0].clone());
    for (resource, constraint) in [
        (
            api_resource_fixture(&acme, 5, &billing.identifier, &["x:read"], at),
            "api_resources_tenant_identifier_key",
        ),
        (
            ApiResource {
                id: bare.id.clone(),
                ..api_resource_fixture(&acme, 6, "urn:other", &[], at)
            },
            "api_resources_pkey",
        ),
        (repeated, "api_resource_permissions_pkey"),
        (
            api_resource_fixture(&ghost, 8, "urn:ghost", &["x:read"], at),
            "api_resources_tenant_id_fkey",
        ),
    ] {
        let mut tx = store.write().await.expect("write");
        assert_conflict(tx.insert_api_resource(&resource).await, constraint);
    }
    let mut read = store.read().await.expect("read");
    let mut both = vec![billing, bare];
    both.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(
        read.list_api_resources(&acme.id, None, Order::Ascending, 10)
            .await
            .expect("acme's"),
        both,
        "the refused inserts stored nothing"
    );
    read.finish().await.expect("finish");
}

/// Listing pages through one tenant's resources once each, in id order both ways, past the
/// cursor, each with all its permissions (the limit counts resources, not permissions), and
/// nothing of another tenant.
pub async fn list_api_resources_paginates_both_ways(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let empty = stored_tenant(&store, "empty", 3).await;
    let at = moment(&acme);
    let mut all = Vec::new();
    for i in 0..7u64 {
        // Inserted out of id order, with 0 to 3 permissions: the listing orders and groups.
        let names: Vec<String> = (0..i % 4).map(|p| format!("api{i}:perm{p}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let resource = api_resource_fixture(
            &acme,
            10 + i,
            &format!("urn:api:{i}"),
            &names,
            at + Duration::milliseconds(((i * 5) % 7) as i64),
        );
        let theirs = api_resource_fixture(&other, 20 + i, &format!("urn:api:{i}"), &names, at);
        insert_resources(&store, &[&resource, &theirs]).await;
        all.push(resource);
    }
    all.sort_by(|a, b| a.id.cmp(&b.id));

    for order in [Order::Ascending, Order::Descending] {
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let mut read = store.read().await.expect("read");
            let page = read
                .list_api_resources(&acme.id, cursor.as_ref(), order, 3)
                .await
                .expect("list");
            read.finish().await.expect("finish");
            assert!(page.len() <= 3);
            if page.is_empty() {
                break;
            }
            cursor = page.last().map(|r| r.id.clone());
            seen.extend(page);
        }
        if order == Order::Descending {
            seen.reverse();
        }
        assert_eq!(seen, all, "{order:?}: every field, each once, in id order");
    }
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.list_api_resources(&acme.id, Some(&all[4].id), Order::Descending, 2)
            .await
            .expect("older"),
        vec![all[3].clone(), all[2].clone()],
        "descending past a cursor"
    );
    assert!(
        read.list_api_resources(&empty.id, None, Order::Ascending, 10)
            .await
            .expect("empty")
            .is_empty()
    );
    read.finish().await.expect("finish");
}

/// An update replaces the name, the permissions and `updated_at` (never the identifier, the
/// tenant or the creation time), only at the revision read: a kept permission keeps its grants
/// (with its new description), a removed one leaves every role that held it, a new one is
/// defined. One carrying an older revision is Stale and changes nothing (permissions and grants
/// included); an absent resource, or one of another tenant, is NotFound.
pub async fn api_resource_updates_apply_only_at_the_revision_read(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let billing = api_resource_fixture(
        &acme,
        1,
        "https://api.example.com/billing",
        &["billing:read", "billing:write", "billing:export"],
        at,
    );
    let reports = api_resource_fixture(&acme, 2, "urn:reports", &["reports:read"], at);
    insert_resources(&store, &[&billing, &reports]).await;
    let all = [
        (&billing, "billing:export"),
        (&billing, "billing:read"),
        (&billing, "billing:write"),
        (&reports, "reports:read"),
    ];
    replace_grants(&store, &acme.id, "auditor", &all).await;
    replace_grants(&store, &acme.id, "owner", &all[1..3]).await;
    let r0 = billing.updated_at;

    // Kept: read (new description), write (same); removed: export; new: refund.
    let mut permissions = vec![
        Permission {
            name: permission("billing:read"),
            description: "Reads invoices, now \"all\" ü".into(),
        },
        Permission {
            name: permission("billing:refund"),
            description: "Refunds".into(),
        },
        billing.permissions[2].clone(),
    ];
    assert_eq!(billing.permissions[2].name.as_str(), "billing:write");
    permissions.sort_by(|a, b| a.name.cmp(&b.name));
    let changed = ApiResource {
        name: "Billing v2".into(),
        permissions,
        updated_at: r0 + Duration::microseconds(1),
        // Ignored: the identifier and the creation time never change.
        identifier: "https://api.example.com/elsewhere".into(),
        created_at: r0 + Duration::days(3),
        ..billing.clone()
    };
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_api_resource_if_unchanged(&changed, r0)
            .await
            .expect("update"),
        UpdateOutcome::Applied
    );
    tx.commit().await.expect("commit");
    let after = ApiResource {
        identifier: billing.identifier.clone(),
        created_at: billing.created_at,
        ..changed.clone()
    };
    assert_eq!(
        read_resource(&store, &acme.id, &billing.id).await,
        Some(after.clone())
    );
    assert_eq!(
        read_grants(&store, &acme.id, &["auditor", "owner"]).await,
        [
            held("auditor", &[all[1], all[2], all[3]]),
            held("owner", &all[1..3]),
        ]
        .concat(),
        "the removed permission left every role; kept ones stay; the new one is held by none"
    );

    // A second writer that also read r0 is refused, and nothing it carried is written.
    let stale = ApiResource {
        name: "Stale".into(),
        permissions: Vec::new(),
        updated_at: r0 + Duration::seconds(5),
        ..billing.clone()
    };
    let mut tx = store.write().await.expect("write");
    for read_at in [r0, after.updated_at - Duration::microseconds(1)] {
        assert_eq!(
            tx.update_api_resource_if_unchanged(&stale, read_at)
                .await
                .expect("stale"),
            UpdateOutcome::Stale
        );
    }
    let absent = api_resource_fixture(&acme, 3, "urn:absent", &[], at);
    assert!(matches!(
        tx.update_api_resource_if_unchanged(&absent, absent.updated_at)
            .await,
        Err(StoreError::NotFound)
    ));
    let moved = ApiResource {
        tenant_id: other.id.clone(),
        permissions: Vec::new(),
        ..after.clone()
    };
    assert!(
        matches!(
            tx.update_api_resource_if_unchanged(&moved, after.updated_at)
                .await,
            Err(StoreError::NotFound)
        ),
        "another tenant's id finds nothing"
    );
    tx.commit().await.expect("commit");
    assert_eq!(
        read_resource(&store, &acme.id, &billing.id).await,
        Some(after),
        "stale and misdirected updates change nothing"
    );
    assert_eq!(
        read_grants(&store, &acme.id, &["owner"]).await,
        held("owner", &all[1..3])
    );
}

/// Deleting a resource deletes its permissions and every grant of them, and only those; it
/// happens once (false after), and with another tenant's id it deletes nothing.
pub async fn deleting_an_api_resource_deletes_its_grants(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let billing = api_resource_fixture(&acme, 1, "urn:billing", &["billing:read"], at);
    let reports = api_resource_fixture(&acme, 2, "urn:reports", &["reports:read"], at);
    insert_resources(&store, &[&billing, &reports]).await;
    let grants = [(&billing, "billing:read"), (&reports, "reports:read")];
    replace_grants(&store, &acme.id, "auditor", &grants).await;
    replace_grants(&store, &acme.id, "member", &grants[..1]).await;

    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.delete_api_resource(&other.id, &billing.id)
            .await
            .expect("another tenant's"),
        "another tenant deletes nothing"
    );
    tx.commit().await.expect("commit");
    assert_eq!(
        read_grants(&store, &acme.id, &["auditor", "member"]).await,
        [held("auditor", &grants), held("member", &grants[..1])].concat()
    );

    let mut tx = store.write().await.expect("write");
    assert!(
        tx.delete_api_resource(&acme.id, &billing.id)
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_api_resource(&acme.id, &billing.id)
            .await
            .expect("again"),
        "already gone"
    );
    tx.commit().await.expect("commit");
    assert_eq!(read_resource(&store, &acme.id, &billing.id).await, None);
    assert_eq!(
        read_grants(&store, &acme.id, &["auditor", "member"]).await,
        held("auditor", &grants[1..]),
        "its grants went with it, the other resource's stay"
    );
    // Its identifier, id and permissions are free again: nothing of it is left.
    insert_resources(&store, &[&billing]).await;
    assert_eq!(
        read_resource(&store, &acme.id, &billing.id).await,
        Some(billing)
    );
}
