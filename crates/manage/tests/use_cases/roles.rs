//! Role use cases, on SQLite and PostgreSQL: list and read the built-in and custom roles;
//! create, change and delete custom roles; change the permissions of built-in organization
//! roles; permissions resolved against the tenant's API resources; a role is not deleted while
//! anyone holds it. Each write leaves its audit entry and its `admin.role.*` event; every
//! refusal writes nothing; another tenant's roles read as absent. Assignment of custom roles is
//! in `role_assignments`.

use crate::support::{Harness, client_actor, harness, meta, pg_harness};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::future::Future;
use svc_domain::{
    ApiResource, ApiResourceId, MANAGEMENT_API_SCOPES, Permission, PermissionName, RoleKey,
    RoleKind, TenantId,
};
use svc_manage::audit::action;
use svc_manage::control_plane::CreatedTenant;
use svc_manage::roles::{
    self, MAX_CUSTOM_ROLES, NewRole, RolePatch, RolePermissionInput, RoleView,
};
use svc_manage::{ManageError, Precondition, Revision};

pub(crate) const ISSUER: &str = "https://acme.example.com";
pub(crate) const BILLING: &str = "https://api.acme.example/billing";
pub(crate) const REPORTS: &str = "https://api.acme.example/reports";
/// No `If-Match`.
pub(crate) const NONE: Precondition = Precondition::None;

/// Runs `scenario` on a fresh SQLite database, then on a fresh PostgreSQL one.
pub(crate) async fn on_both<Fut: Future<Output = ()>>(scenario: impl Fn(Harness) -> Fut) {
    scenario(harness().await).await;
    scenario(pg_harness().await).await;
}

/// Registers an API resource of `tenant` defining `permissions`, through the store.
pub(crate) async fn resource(
    h: &Harness,
    tenant: &TenantId,
    identifier: &str,
    permissions: &[&str],
) -> ApiResource {
    let now = svc_domain::Clock::now(h.clock.as_ref());
    let resource = ApiResource {
        id: ApiResourceId::generate(h.clock.as_ref(), h.ctx.rng.as_ref()),
        tenant_id: tenant.clone(),
        identifier: identifier.to_owned(),
        name: identifier.to_owned(),
        permissions: permissions
            .iter()
            .map(|p| Permission {
                name: PermissionName::parse(p).unwrap(),
                description: String::new(),
            })
            .collect(),
        created_at: now,
        updated_at: now,
    };
    let mut tx = h.ctx.store.write().await.unwrap();
    tx.insert_api_resource(&resource).await.unwrap();
    tx.commit().await.unwrap();
    resource
}

pub(crate) fn perm(resource: &str, name: &str) -> RolePermissionInput {
    RolePermissionInput {
        resource: resource.to_owned(),
        name: name.to_owned(),
    }
}

pub(crate) fn new_role(key: &str, kind: &str, permissions: Vec<RolePermissionInput>) -> NewRole {
    NewRole {
        key: key.to_owned(),
        kind: kind.to_owned(),
        description: None,
        permissions: Some(permissions),
    }
}

pub(crate) async fn create(
    h: &Harness,
    t: &CreatedTenant,
    input: NewRole,
) -> Result<RoleView, ManageError> {
    roles::create(&h.ctx, &t.tenant.id, &client_actor(t), &meta(), input).await
}

async fn update(
    h: &Harness,
    t: &CreatedTenant,
    key: &str,
    patch: RolePatch,
    precondition: &Precondition,
) -> Result<RoleView, ManageError> {
    let actor = client_actor(t);
    roles::update(
        &h.ctx,
        &t.tenant.id,
        ISSUER,
        &actor,
        &meta(),
        key,
        patch,
        precondition,
    )
    .await
}

pub(crate) async fn delete(
    h: &Harness,
    t: &CreatedTenant,
    key: &str,
) -> Result<RoleView, ManageError> {
    let actor = client_actor(t);
    roles::delete(&h.ctx, &t.tenant.id, ISSUER, &actor, &meta(), key, &NONE).await
}

pub(crate) async fn get(
    h: &Harness,
    t: &CreatedTenant,
    key: &str,
) -> Result<RoleView, ManageError> {
    roles::get(&h.ctx, &t.tenant.id, ISSUER, key).await
}

fn permissions_patch(permissions: Vec<RolePermissionInput>) -> RolePatch {
    RolePatch {
        permissions: Some(Some(permissions)),
        ..RolePatch::default()
    }
}

/// `"<identifier> <name>"` of every permission of `view`.
pub(crate) fn held(view: &RoleView) -> Vec<String> {
    view.permissions
        .iter()
        .map(|p| format!("{} {}", p.resource, p.name))
        .collect()
}

/// `(type, data)` of every event recorded for `tenant` whose type starts with `prefix`, oldest
/// first.
pub(crate) async fn events(h: &Harness, tenant: &TenantId, prefix: &str) -> Vec<(String, Value)> {
    let mut tx = h.ctx.store.read().await.unwrap();
    let events = tx.events(tenant, None, 1000).await.unwrap();
    tx.finish().await.unwrap();
    events
        .into_iter()
        .filter(|e| e.event_type.as_str().starts_with(prefix))
        .map(|e| {
            let body: Value = serde_json::from_str(&e.body).unwrap();
            (e.event_type.as_str().to_owned(), body["data"].clone())
        })
        .collect()
}

/// The grants the store keeps for `key` in `tenant`.
pub(crate) async fn stored_grants(h: &Harness, tenant: &TenantId, key: &str) -> usize {
    let mut tx = h.ctx.store.read().await.unwrap();
    let keys = BTreeSet::from([RoleKey::parse(key).unwrap()]);
    let grants = tx.role_grants(tenant, &keys).await.unwrap();
    tx.finish().await.unwrap();
    grants.len()
}

pub(crate) fn invalid(err: &ManageError) -> (&str, &str) {
    match err {
        ManageError::Invalid { field, message } => (field, message),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[tokio::test]
async fn roles_are_created_listed_read_and_audited() {
    on_both(created_listed_read).await;
}

async fn created_listed_read(h: Harness) {
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    let billing = resource(&h, tenant, BILLING, &["invoices:read", "invoices:export"]).await;
    let reports = resource(&h, tenant, REPORTS, &["reports:read"]).await;

    let input = NewRole {
        description: Some("  Reads invoices and reports. ".to_owned()),
        ..new_role(
            "billing_viewer",
            "tenant",
            vec![
                perm(REPORTS, "reports:read"),
                perm(BILLING, "invoices:read"),
                perm(BILLING, "invoices:export"),
                perm(BILLING, "invoices:read"),
            ],
        )
    };
    let viewer = create(&h, &acme, input).await.unwrap();
    assert_eq!(viewer.key, "billing_viewer");
    assert_eq!(viewer.kind, RoleKind::Tenant);
    assert!(!viewer.built_in);
    assert_eq!(viewer.description, "Reads invoices and reports.", "trimmed");
    assert_eq!(
        held(&viewer),
        [
            format!("{BILLING} invoices:export"),
            format!("{BILLING} invoices:read"),
            format!("{REPORTS} reports:read"),
        ],
        "sorted by resource, then name; repeats collapse"
    );
    assert_eq!(
        viewer.permissions[0].resource_id.as_deref(),
        Some(billing.id.as_str())
    );
    assert_eq!(
        viewer.permissions[2].resource_id.as_deref(),
        Some(reports.id.as_str())
    );
    assert!(viewer.created_at.is_some());
    assert_eq!(viewer.created_at, viewer.updated_at);
    assert_eq!(get(&h, &acme, "billing_viewer").await.unwrap(), viewer);

    let auditors = create(&h, &acme, new_role("auditors", "organization", vec![]))
        .await
        .unwrap();
    assert_eq!(auditors.kind, RoleKind::Organization);
    assert!(auditors.permissions.is_empty());
    assert_eq!(auditors.description, "");

    // Built-ins first, then custom ones in key order.
    let all = roles::list(&h.ctx, tenant, ISSUER).await.unwrap();
    let keys: Vec<&str> = all.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "tenant_admin",
            "owner",
            "admin",
            "member",
            "auditors",
            "billing_viewer"
        ]
    );
    assert_eq!(all[4], auditors);
    assert_eq!(all[5], viewer);
    for built_in in &all[..4] {
        assert!(built_in.built_in, "{}", built_in.key);
        assert!(!built_in.description.is_empty(), "{}", built_in.key);
        assert_eq!((built_in.created_at, built_in.updated_at), (None, None));
    }
    assert_eq!(all[0].kind, RoleKind::Tenant);
    assert_eq!(all[1].kind, RoleKind::Organization);
    // tenant_admin holds the management API's scopes, on no stored resource.
    let admin = &all[0];
    assert_eq!(admin.permissions.len(), MANAGEMENT_API_SCOPES.len());
    for p in &admin.permissions {
        assert_eq!(p.resource, format!("{ISSUER}/api/v1"));
        assert_eq!(p.resource_id, None);
    }
    assert_eq!(get(&h, &acme, "tenant_admin").await.unwrap(), *admin);
    assert!(all[1].permissions.is_empty(), "owner holds nothing yet");

    // Audited and announced, with the permissions held.
    let audit = h.audit(tenant).await;
    assert_eq!(audit[1].action, action::ROLE_CREATED);
    assert_eq!(audit[1].target.as_deref(), Some("billing_viewer"));
    assert_eq!(audit[1].actor, actor.as_audit_string());
    assert_eq!(audit[1].request_id.as_deref(), Some("req-7f3a"));
    assert_eq!(
        events(&h, tenant, "admin.role.").await,
        vec![
            (
                "admin.role.created".to_owned(),
                json!({
                    "role": "billing_viewer",
                    "kind": "tenant",
                    "permissions": held(&viewer),
                    "actor": actor.as_audit_string(),
                })
            ),
            (
                "admin.role.created".to_owned(),
                json!({
                    "role": "auditors",
                    "kind": "organization",
                    "permissions": [],
                    "actor": actor.as_audit_string(),
                })
            ),
        ]
    );

    for absent in ["nobody", "Not A Key", "", &"x".repeat(300)] {
        assert!(matches!(
            get(&h, &acme, absent).await,
            Err(ManageError::NotFound)
        ));
    }
}

#[tokio::test]
async fn refused_roles_name_the_field_and_write_nothing() {
    on_both(refused_roles).await;
}

async fn refused_roles(h: Harness) {
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    resource(&h, tenant, BILLING, &["invoices:read"]).await;
    create(&h, &acme, new_role("taken", "tenant", vec![]))
        .await
        .unwrap();
    let audit_before = h.audit(tenant).await.len();
    let events_before = events(&h, tenant, "").await.len();

    let long_identifier = format!("https://{}", "x".repeat(5000));
    let cases: Vec<(NewRole, &str, &str)> = vec![
        (new_role("", "tenant", vec![]), "key", "role key"),
        (new_role("Billing", "tenant", vec![]), "key", "role key"),
        (new_role("a b", "tenant", vec![]), "key", "role key"),
        (
            new_role(&"k".repeat(65), "tenant", vec![]),
            "key",
            "role key",
        ),
        (
            new_role("ok", "Tenant", vec![]),
            "kind",
            "tenant or organization",
        ),
        (new_role("ok", "", vec![]), "kind", "tenant or organization"),
        (
            NewRole {
                description: Some("d".repeat(257)),
                ..new_role("ok", "tenant", vec![])
            },
            "description",
            "256",
        ),
        (
            NewRole {
                description: Some("line\nbreak".to_owned()),
                ..new_role("ok", "tenant", vec![])
            },
            "description",
            "control",
        ),
        (
            new_role("ok", "tenant", vec![perm(BILLING, "openid")]),
            "permissions",
            "openid",
        ),
        (
            new_role("ok", "tenant", vec![perm(BILLING, "invoices")]),
            "permissions",
            "invoices",
        ),
        (
            new_role("ok", "tenant", vec![perm(REPORTS, "reports:read")]),
            "permissions",
            REPORTS,
        ),
        (
            new_role("ok", "tenant", vec![perm(&long_identifier, "a:b")]),
            "permissions",
            "no API resource",
        ),
        (
            new_role("ok", "tenant", vec![perm(BILLING, "invoices:delete")]),
            "permissions",
            "invoices:delete",
        ),
        (
            new_role("ok", "tenant", vec![perm(BILLING, "invoices:read"); 101]),
            "permissions",
            "100",
        ),
    ];
    for (input, field, needle) in cases {
        let err = create(&h, &acme, input.clone()).await.unwrap_err();
        let (got, message) = invalid(&err);
        assert_eq!(got, field, "{input:?}");
        assert!(message.contains(needle), "{input:?}: {message}");
        assert!(message.len() < 300, "the echo is cut: {message}");
    }
    // A built-in role's key, and a custom role's, are taken.
    for key in ["tenant_admin", "owner", "admin", "member", "taken"] {
        for kind in ["tenant", "organization"] {
            let err = create(&h, &acme, new_role(key, kind, vec![]))
                .await
                .unwrap_err();
            assert!(matches!(&err, ManageError::Conflict(_)), "{key}: {err:?}");
        }
    }
    assert_eq!(h.audit(tenant).await.len(), audit_before);
    assert_eq!(events(&h, tenant, "").await.len(), events_before);
    assert_eq!(
        get(&h, &acme, "ok").await.unwrap_err().to_string(),
        "not found"
    );

    // 100 permission entries pass (repeats collapse).
    let hundred = new_role(
        "hundred",
        "tenant",
        vec![perm(BILLING, "invoices:read"); 100],
    );
    assert_eq!(
        create(&h, &acme, hundred).await.unwrap().permissions.len(),
        1
    );

    // At most 100 custom roles.
    for i in 2..MAX_CUSTOM_ROLES {
        create(&h, &acme, new_role(&format!("r{i}"), "tenant", vec![]))
            .await
            .unwrap();
    }
    let err = create(&h, &acme, new_role("one-more", "tenant", vec![]))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ManageError::Conflict(m) if m.contains("100")),
        "{err:?}"
    );
    let all = roles::list(&h.ctx, tenant, ISSUER).await.unwrap();
    assert_eq!(all.len(), 4 + MAX_CUSTOM_ROLES);
}

#[tokio::test]
async fn custom_roles_change_at_the_revision_read() {
    on_both(custom_roles_change).await;
}

async fn custom_roles_change(h: Harness) {
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    resource(&h, tenant, BILLING, &["invoices:read", "invoices:export"]).await;
    let first = create(
        &h,
        &acme,
        new_role("billing", "tenant", vec![perm(BILLING, "invoices:read")]),
    )
    .await
    .unwrap();
    let read_at = first.updated_at.unwrap();

    // The description alone.
    let patch = RolePatch {
        description: Some(Some(" Billing staff ".to_owned())),
        ..RolePatch::default()
    };
    let at = Precondition::OneOf(vec![Some(Revision::of(read_at))]);
    let second = update(&h, &acme, "billing", patch.clone(), &at)
        .await
        .unwrap();
    assert_eq!(second.description, "Billing staff");
    assert_eq!(held(&second), held(&first));
    assert!(second.updated_at.unwrap() > read_at, "a new revision");
    assert_eq!(get(&h, &acme, "billing").await.unwrap(), second);

    // The same again writes nothing; a stale revision is refused.
    let events_before = events(&h, tenant, "admin.role.").await.len();
    assert_eq!(
        update(&h, &acme, "billing", patch, &NONE).await.unwrap(),
        second
    );
    assert_eq!(events(&h, tenant, "admin.role.").await.len(), events_before);
    let stale = permissions_patch(vec![]);
    assert!(matches!(
        update(&h, &acme, "billing", stale, &at).await,
        Err(ManageError::PreconditionFailed)
    ));

    // The permissions replace the set, and move the revision too.
    let now = Precondition::OneOf(vec![Some(Revision::of(second.updated_at.unwrap()))]);
    let patch = permissions_patch(vec![
        perm(BILLING, "invoices:export"),
        perm(BILLING, "invoices:export"),
    ]);
    let third = update(&h, &acme, "billing", patch, &now).await.unwrap();
    assert_eq!(held(&third), [format!("{BILLING} invoices:export")]);
    assert_eq!(third.description, "Billing staff");
    assert!(third.updated_at > second.updated_at);
    assert_eq!(get(&h, &acme, "billing").await.unwrap(), third);
    let (kind, data) = events(&h, tenant, "admin.role.").await.pop().unwrap();
    assert_eq!(kind, "admin.role.updated");
    assert_eq!(
        data,
        json!({
            "role": "billing",
            "kind": "tenant",
            "permissions": [format!("{BILLING} invoices:export")],
            "actor": actor.as_audit_string(),
        })
    );
    let audit = h.audit(tenant).await;
    assert_eq!(audit[0].action, action::ROLE_UPDATED);
    assert_eq!(audit[0].target.as_deref(), Some("billing"));

    // Every permission away, and the description emptied.
    let patch = RolePatch {
        description: Some(Some(String::new())),
        permissions: Some(Some(vec![])),
    };
    let fourth = update(&h, &acme, "billing", patch, &Precondition::Exists)
        .await
        .unwrap();
    assert_eq!(
        (fourth.description.as_str(), fourth.permissions.len()),
        ("", 0)
    );
    assert_eq!(stored_grants(&h, tenant, "billing").await, 0);

    // Refusals write nothing.
    let audit_before = h.audit(tenant).await.len();
    for (patch, field) in [
        (
            RolePatch {
                description: Some(None),
                ..RolePatch::default()
            },
            "description",
        ),
        (
            RolePatch {
                permissions: Some(None),
                ..RolePatch::default()
            },
            "permissions",
        ),
        (
            permissions_patch(vec![perm(REPORTS, "reports:read")]),
            "permissions",
        ),
        (
            permissions_patch(vec![perm(BILLING, "invoices:void")]),
            "permissions",
        ),
        (
            RolePatch {
                description: Some(Some("tab\there".to_owned())),
                ..RolePatch::default()
            },
            "description",
        ),
    ] {
        let err = update(&h, &acme, "billing", patch, &NONE)
            .await
            .unwrap_err();
        assert_eq!(invalid(&err).0, field);
    }
    assert!(matches!(
        update(&h, &acme, "nobody", RolePatch::default(), &NONE).await,
        Err(ManageError::NotFound)
    ));
    assert_eq!(h.audit(tenant).await.len(), audit_before);
    assert_eq!(get(&h, &acme, "billing").await.unwrap(), fourth);
}

#[tokio::test]
async fn built_in_roles_change_only_their_permissions() {
    on_both(built_in_roles).await;
}

async fn built_in_roles(h: Harness) {
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    resource(&h, tenant, BILLING, &["invoices:read", "invoices:export"]).await;
    let before = get(&h, &acme, "owner").await.unwrap();

    let owner = update(
        &h,
        &acme,
        "owner",
        permissions_patch(vec![perm(BILLING, "invoices:read")]),
        &NONE,
    )
    .await
    .unwrap();
    assert_eq!(held(&owner), [format!("{BILLING} invoices:read")]);
    assert_eq!(owner.description, before.description, "fixed");
    assert_eq!((owner.created_at, owner.updated_at), (None, None));
    assert_eq!(get(&h, &acme, "owner").await.unwrap(), owner);
    let (kind, data) = events(&h, tenant, "admin.role.").await.pop().unwrap();
    assert_eq!(kind, "admin.role.updated");
    assert_eq!(data["role"], "owner");
    assert_eq!(data["kind"], "organization");
    assert_eq!(h.audit(tenant).await[0].action, action::ROLE_UPDATED);
    // `If-Match: *` holds for a built-in role.
    let member = update(
        &h,
        &acme,
        "member",
        permissions_patch(vec![perm(BILLING, "invoices:export")]),
        &Precondition::Exists,
    )
    .await
    .unwrap();
    assert_eq!(member.permissions.len(), 1);

    let audit_before = h.audit(tenant).await.len();
    let described = RolePatch {
        description: Some(Some("Owners".to_owned())),
        ..RolePatch::default()
    };
    let err = update(&h, &acme, "admin", described, &NONE)
        .await
        .unwrap_err();
    assert_eq!(invalid(&err).0, "description");
    let err = update(&h, &acme, "tenant_admin", permissions_patch(vec![]), &NONE)
        .await
        .unwrap_err();
    assert_eq!(invalid(&err).0, "key");
    let tag = Precondition::OneOf(vec![Some(Revision::of(svc_domain::Clock::now(
        h.clock.as_ref(),
    )))]);
    assert!(matches!(
        update(&h, &acme, "owner", permissions_patch(vec![]), &tag).await,
        Err(ManageError::PreconditionFailed)
    ));
    for key in ["tenant_admin", "owner", "admin", "member"] {
        let err = delete(&h, &acme, key).await.unwrap_err();
        assert_eq!(invalid(&err).0, "key", "{key}");
    }
    assert_eq!(h.audit(tenant).await.len(), audit_before);
    assert_eq!(get(&h, &acme, "owner").await.unwrap(), owner);
}

#[tokio::test]
async fn a_role_is_deleted_with_its_grants_and_a_new_one_starts_empty() {
    on_both(deleted_with_grants).await;
}

async fn deleted_with_grants(h: Harness) {
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    resource(&h, tenant, BILLING, &["invoices:read"]).await;
    let role = create(
        &h,
        &acme,
        new_role(
            "doomed",
            "organization",
            vec![perm(BILLING, "invoices:read")],
        ),
    )
    .await
    .unwrap();
    assert_eq!(stored_grants(&h, tenant, "doomed").await, 1);

    let stale = Precondition::OneOf(vec![None]);
    let actor_ref = &actor;
    let err = roles::delete(&h.ctx, tenant, ISSUER, actor_ref, &meta(), "doomed", &stale)
        .await
        .unwrap_err();
    assert!(matches!(err, ManageError::PreconditionFailed));
    let at = Precondition::OneOf(vec![Some(Revision::of(role.updated_at.unwrap()))]);
    roles::delete(&h.ctx, tenant, ISSUER, actor_ref, &meta(), "doomed", &at)
        .await
        .unwrap();
    assert!(matches!(
        get(&h, &acme, "doomed").await,
        Err(ManageError::NotFound)
    ));
    assert_eq!(
        stored_grants(&h, tenant, "doomed").await,
        0,
        "its grants went"
    );
    assert!(matches!(
        delete(&h, &acme, "doomed").await,
        Err(ManageError::NotFound)
    ));
    let audit = h.audit(tenant).await;
    assert_eq!(audit[0].action, action::ROLE_DELETED);
    assert_eq!(audit[0].target.as_deref(), Some("doomed"));
    let (kind, data) = events(&h, tenant, "admin.role.").await.pop().unwrap();
    assert_eq!(kind, "admin.role.deleted");
    assert_eq!(
        data,
        json!({
            "role": "doomed",
            "kind": "organization",
            "permissions": [],
            "actor": actor.as_audit_string(),
        })
    );

    // The key is free again, and the new role holds nothing of the old one.
    let again = create(&h, &acme, new_role("doomed", "tenant", vec![]))
        .await
        .unwrap();
    assert!(again.permissions.is_empty());
    assert_eq!(again.kind, RoleKind::Tenant);
}

#[tokio::test]
async fn a_write_that_fails_midway_leaves_nothing_behind() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    resource(&h, tenant, BILLING, &["invoices:read"]).await;
    let input = || new_role("billing", "tenant", vec![perm(BILLING, "invoices:read")]);
    for failing in [
        "insert_role",
        "replace_role_grants",
        "insert_audit",
        "insert_event",
    ] {
        h.store.fail_on(Some(failing));
        let err = create(&h, &acme, input()).await.unwrap_err();
        assert!(
            matches!(err, ManageError::Unavailable(_)),
            "{failing}: {err:?}"
        );
        h.store.fail_on(None);
        assert!(matches!(
            get(&h, &acme, "billing").await,
            Err(ManageError::NotFound)
        ));
        assert_eq!(stored_grants(&h, tenant, "billing").await, 0, "{failing}");
    }
    assert!(events(&h, tenant, "admin.role.").await.is_empty());
    let created = create(&h, &acme, input()).await.unwrap();
    for failing in ["update_role_if_unchanged", "delete_role", "insert_event"] {
        h.store.fail_on(Some(failing));
        assert!(delete(&h, &acme, "billing").await.is_err(), "{failing}");
        h.store.fail_on(None);
        assert_eq!(
            get(&h, &acme, "billing").await.unwrap(),
            created,
            "{failing}"
        );
    }
}

#[tokio::test]
async fn another_tenants_roles_and_resources_are_absent() {
    on_both(across_tenants).await;
}

async fn across_tenants(h: Harness) {
    let acme = h.tenant("acme").await;
    let globex = h.tenant("globex").await;
    resource(&h, &globex.tenant.id, BILLING, &["invoices:read"]).await;
    create(
        &h,
        &globex,
        new_role(
            "globex-only",
            "tenant",
            vec![perm(BILLING, "invoices:read")],
        ),
    )
    .await
    .unwrap();

    assert!(matches!(
        get(&h, &acme, "globex-only").await,
        Err(ManageError::NotFound)
    ));
    assert!(matches!(
        update(&h, &acme, "globex-only", RolePatch::default(), &NONE).await,
        Err(ManageError::NotFound)
    ));
    assert!(matches!(
        delete(&h, &acme, "globex-only").await,
        Err(ManageError::NotFound)
    ));
    let acme_roles = roles::list(&h.ctx, &acme.tenant.id, ISSUER).await.unwrap();
    assert_eq!(acme_roles.len(), 4, "the built-in ones only");
    // Another tenant's API resource is no resource of this one.
    let err = create(
        &h,
        &acme,
        new_role("billing", "tenant", vec![perm(BILLING, "invoices:read")]),
    )
    .await
    .unwrap_err();
    assert!(invalid(&err).1.contains("no API resource"), "{err}");
    // The same key in two tenants is two roles; globex's is untouched.
    create(&h, &acme, new_role("globex-only", "organization", vec![]))
        .await
        .unwrap();
    delete(&h, &acme, "globex-only").await.unwrap();
    let theirs = get(&h, &globex, "globex-only").await.unwrap();
    assert_eq!(theirs.permissions.len(), 1);
    assert_eq!(stored_grants(&h, &globex.tenant.id, "globex-only").await, 1);
}
