//! API resource use cases, on SQLite and PostgreSQL: register, list, read, change and delete
//! the APIs a tenant protects. Each write leaves its audit entry and its `admin.api_resource.*`
//! event; every refusal writes nothing; a permission removed from its resource (or deleted with
//! it) leaves every role; another tenant's ids read as absent.

mod changes;

use crate::support::{Harness, client_actor, harness, meta, pg_harness};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::future::Future;
use svc_domain::{ApiResource, ApiResourceId, PermissionName, RoleKey, TenantId};
use svc_manage::api_resources::{
    self as resources, ApiResourcePatch, MAX_API_RESOURCES_PER_TENANT, NewApiResource,
    NewPermission,
};
use svc_manage::audit::action;
use svc_manage::control_plane::CreatedTenant;
use svc_manage::{ManageError, Precondition, Revision};
use svc_store::Order;

/// No `If-Match`.
const NONE: Precondition = Precondition::None;

/// Runs `scenario` on a fresh SQLite database, then on a fresh PostgreSQL one.
async fn on_both<Fut: Future<Output = ()>>(scenario: impl Fn(Harness) -> Fut) {
    scenario(harness().await).await;
    scenario(pg_harness().await).await;
}

fn permission(name: &str, description: Option<&str>) -> NewPermission {
    NewPermission {
        name: name.to_owned(),
        description: description.map(str::to_owned),
    }
}

fn new_resource(identifier: &str, name: &str, permissions: &[&str]) -> NewApiResource {
    NewApiResource {
        identifier: identifier.to_owned(),
        name: name.to_owned(),
        permissions: Some(permissions.iter().map(|p| permission(p, None)).collect()),
    }
}

async fn create(h: &Harness, t: &CreatedTenant, input: NewApiResource) -> ApiResource {
    resources::create(&h.ctx, &t.tenant.id, &client_actor(t), &meta(), input)
        .await
        .unwrap()
}

async fn update(
    h: &Harness,
    t: &CreatedTenant,
    id: &ApiResourceId,
    patch: ApiResourcePatch,
    precondition: &Precondition,
) -> Result<ApiResource, ManageError> {
    let actor = client_actor(t);
    resources::update(
        &h.ctx,
        &t.tenant.id,
        &actor,
        &meta(),
        id,
        patch,
        precondition,
    )
    .await
}

fn names(resource: &ApiResource) -> Vec<&str> {
    resource
        .permissions
        .iter()
        .map(|p| p.name.as_str())
        .collect()
}

fn at(resource: &ApiResource) -> Precondition {
    Precondition::OneOf(vec![Some(Revision::of(resource.updated_at))])
}

/// `(type, data)` of every `admin.api_resource.*` event recorded for `tenant`, oldest first.
async fn resource_events(h: &Harness, tenant: &TenantId) -> Vec<(String, Value)> {
    let mut tx = h.ctx.store.read().await.unwrap();
    let events = tx.events(tenant, None, 1000).await.unwrap();
    tx.finish().await.unwrap();
    events
        .into_iter()
        .filter(|e| e.event_type.as_str().starts_with("admin.api_resource."))
        .map(|e| {
            let body: Value = serde_json::from_str(&e.body).unwrap();
            assert_eq!(body["type"], e.event_type.as_str());
            (e.event_type.as_str().to_owned(), body["data"].clone())
        })
        .collect()
}

/// The audit actions of `tenant` about API resources, newest first.
async fn resource_audit(h: &Harness, tenant: &TenantId) -> Vec<(String, Option<String>)> {
    h.audit(tenant)
        .await
        .into_iter()
        .filter(|e| e.action.starts_with("api_resource."))
        .map(|e| (e.action, e.target))
        .collect()
}

/// The invalid field of `err`, and its text.
fn invalid(err: &ManageError) -> (&str, String) {
    match err {
        ManageError::Invalid { field, .. } => (field, err.to_string()),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

/// Gives the built-in role `tenant_admin` of `tenant` the permissions `grants` of `resource`.
async fn grant(h: &Harness, tenant: &TenantId, resource: &ApiResource, grants: &[&str]) {
    let grants: BTreeSet<(ApiResourceId, PermissionName)> = grants
        .iter()
        .map(|p| (resource.id.clone(), PermissionName::parse(p).unwrap()))
        .collect();
    let mut tx = h.ctx.store.write().await.unwrap();
    tx.replace_role_grants(tenant, &admin_role(), &grants)
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

fn admin_role() -> RoleKey {
    RoleKey::parse("tenant_admin").unwrap()
}

/// The permissions `tenant_admin` of `tenant` holds, as `(resource id, permission)`.
async fn granted(h: &Harness, tenant: &TenantId) -> Vec<(String, String)> {
    let mut tx = h.ctx.store.read().await.unwrap();
    let grants = tx
        .role_grants(tenant, &BTreeSet::from([admin_role()]))
        .await
        .unwrap();
    tx.finish().await.unwrap();
    grants
        .into_iter()
        .map(|g| (g.resource_id.to_string(), g.permission.to_string()))
        .collect()
}

#[tokio::test]
async fn api_resources_are_created_read_listed_and_audited() {
    on_both(api_resources_are_created_read_listed_and_audited_on).await;
}

async fn api_resources_are_created_read_listed_and_audited_on(h: Harness) {
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    let input = NewApiResource {
        identifier: "https://api.example.com".to_owned(),
        name: "  Invoices API ".to_owned(),
        permissions: Some(vec![
            permission("invoices:write", Some(" Create and change invoices ")),
            permission("invoices:read", Some("Read invoices")),
        ]),
    };
    let invoices = create(&h, &acme, input).await;
    assert!(
        invoices.id.as_str().starts_with("res_"),
        "{:?}",
        invoices.id
    );
    assert_eq!(invoices.identifier, "https://api.example.com");
    assert_eq!(invoices.name, "Invoices API", "trimmed");
    assert_eq!(
        names(&invoices),
        ["invoices:read", "invoices:write"],
        "sorted"
    );
    assert_eq!(
        invoices.permissions[1].description,
        "Create and change invoices"
    );
    assert_eq!(invoices.created_at, invoices.updated_at);
    assert_eq!(
        resources::get(&h.ctx, tenant, &invoices.id).await.unwrap(),
        invoices,
        "what create returns is what a read returns"
    );

    assert_eq!(
        resource_audit(&h, tenant).await,
        [(
            action::API_RESOURCE_CREATED.to_owned(),
            Some(invoices.id.to_string())
        )]
    );
    let entry = &h.audit(tenant).await[0];
    assert_eq!(entry.action, "api_resource.created");
    assert_eq!(entry.actor, actor.as_audit_string());
    assert_eq!(entry.request_id.as_deref(), Some("req-7f3a"));
    assert_eq!(
        resource_events(&h, tenant).await,
        [(
            "admin.api_resource.created".to_owned(),
            json!({
                "resource_id": invoices.id.as_str(),
                "identifier": "https://api.example.com",
                "permissions": ["invoices:read", "invoices:write"],
                "actor": actor.as_audit_string(),
            })
        )]
    );

    // Without permissions or descriptions: none, and empty descriptions.
    let bare = NewApiResource {
        identifier: "urn:acme:billing".to_owned(),
        name: "Billing".to_owned(),
        permissions: None,
    };
    let billing = create(&h, &acme, bare).await;
    assert!(billing.permissions.is_empty());
    let ledger = create(
        &h,
        &acme,
        new_resource("https://ledger.example", "Ledger", &["l:r"]),
    )
    .await;
    assert_eq!(ledger.permissions[0].description, "");

    // Pages, oldest first by default, newest first on request.
    let (page, next) = resources::list(&h.ctx, tenant, None, None, Some(2))
        .await
        .unwrap();
    assert_eq!(page, [invoices.clone(), billing.clone()]);
    assert_eq!(next.as_ref(), Some(&billing.id));
    let (rest, next) = resources::list(&h.ctx, tenant, next.as_ref(), None, Some(2))
        .await
        .unwrap();
    assert_eq!(rest, std::slice::from_ref(&ledger));
    assert_eq!(next, None);
    let (newest, _) = resources::list(&h.ctx, tenant, None, Some(Order::Descending), None)
        .await
        .unwrap();
    let ids: Vec<&ApiResourceId> = newest.iter().map(|r| &r.id).collect();
    assert_eq!(ids, [&ledger.id, &billing.id, &invoices.id]);

    // An identifier is unique per tenant only.
    let globex = h.tenant("globex").await;
    create(
        &h,
        &globex,
        new_resource("https://api.example.com", "Theirs", &[]),
    )
    .await;
}

#[tokio::test]
async fn refused_api_resources_name_the_field_and_write_nothing() {
    on_both(refused_api_resources_name_the_field_and_write_nothing_on).await;
}

async fn refused_api_resources_name_the_field_and_write_nothing_on(h: Harness) {
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let taken = create(
        &h,
        &acme,
        new_resource("https://api.example.com", "Invoices", &[]),
    )
    .await;
    let audit_before = h.audit(tenant).await.len();
    let transactions_before = h.store.transactions();

    let ok = "https://other.example";
    let long_uri = format!("https://api.example.com/{}", "p".repeat(2030));
    let many: Vec<String> = (0..=100).map(|i| format!("invoices:p{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let described = |description: &str| NewApiResource {
        permissions: Some(vec![permission("a:b", Some(description))]),
        ..new_resource(ok, "A", &[])
    };
    let cases: Vec<(NewApiResource, &str, &str)> = vec![
        (
            new_resource("api.example.com", "A", &[]),
            "identifier",
            "absolute URI",
        ),
        (
            new_resource("/invoices", "A", &[]),
            "identifier",
            "absolute URI",
        ),
        (
            new_resource("https://api.example.com/#v1", "A", &[]),
            "identifier",
            "without fragment",
        ),
        (
            new_resource("https://api example.com", "A", &[]),
            "identifier",
            "absolute URI",
        ),
        (new_resource("", "A", &[]), "identifier", "absolute URI"),
        (new_resource(&long_uri, "A", &[]), "identifier", "2048"),
        (new_resource(ok, "", &[]), "name", "1 to 128"),
        (new_resource(ok, "   ", &[]), "name", "1 to 128"),
        (new_resource(ok, &"n".repeat(129), &[]), "name", "1 to 128"),
        (new_resource(ok, "bell\u{7}", &[]), "name", "control"),
        (
            new_resource(ok, "A", &["invoices"]),
            "permissions",
            "<resource>:<action>",
        ),
        (
            new_resource(ok, "A", &[":read"]),
            "permissions",
            "permissions[0].name",
        ),
        (
            new_resource(ok, "A", &["a:b", "in voices:read"]),
            "permissions",
            "permissions[1].name",
        ),
        (
            new_resource(ok, "A", &["openid"]),
            "permissions",
            "reserved",
        ),
        (
            new_resource(ok, "A", &["a:b", "a:b"]),
            "permissions",
            "listed twice",
        ),
        (new_resource(ok, "A", &many), "permissions", "at most 100"),
        (described(&"d".repeat(257)), "permissions", "at most 256"),
        (described("line\nbreak"), "permissions", "control"),
    ];
    for (input, field, needle) in cases {
        let err = resources::create(&h.ctx, tenant, &client_actor(&acme), &meta(), input.clone())
            .await
            .unwrap_err();
        let (got, text) = invalid(&err);
        assert_eq!(got, field, "{input:?}");
        assert!(text.contains(needle), "{input:?}: {text}");
    }
    assert_eq!(
        h.store.transactions(),
        transactions_before,
        "a refused input is refused before the database is touched"
    );

    // Exactly at the limits is fine.
    let fits = NewApiResource {
        permissions: Some(
            many[..100]
                .iter()
                .map(|p| permission(p, Some(&"é".repeat(256))))
                .collect(),
        ),
        ..new_resource("https://fits.example", &"n".repeat(128), &[])
    };
    let fitted = create(&h, &acme, fits).await;
    assert_eq!(fitted.permissions.len(), 100);

    // A taken identifier: 409, nothing written.
    let err = resources::create(
        &h.ctx,
        tenant,
        &client_actor(&acme),
        &meta(),
        new_resource(&taken.identifier, "Again", &["x:y"]),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, ManageError::Conflict(m) if m.contains("identifier")),
        "{err:?}"
    );
    let (all, _) = resources::list(&h.ctx, tenant, None, None, None)
        .await
        .unwrap();
    assert_eq!(all.len(), 2, "the taken one and the one that fits");
    assert_eq!(h.audit(tenant).await.len(), audit_before + 1);
    assert_eq!(resource_events(&h, tenant).await.len(), 2);
}

#[tokio::test]
async fn a_write_that_fails_midway_leaves_nothing_behind() {
    on_both(a_write_that_fails_midway_leaves_nothing_behind_on).await;
}

async fn a_write_that_fails_midway_leaves_nothing_behind_on(h: Harness) {
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    for method in ["insert_audit", "insert_event"] {
        h.store.fail_on(Some(method));
        let err = resources::create(
            &h.ctx,
            tenant,
            &actor,
            &meta(),
            new_resource("https://api.example.com", "Invoices", &["invoices:read"]),
        )
        .await
        .unwrap_err();
        assert!(
            matches!(err, ManageError::Unavailable(_)),
            "{method}: {err:?}"
        );
        h.store.fail_on(None);
        let (all, _) = resources::list(&h.ctx, tenant, None, None, None)
            .await
            .unwrap();
        assert!(all.is_empty(), "{method}");
    }

    let invoices = create(
        &h,
        &acme,
        new_resource(
            "https://api.example.com",
            "Invoices",
            &["invoices:read", "invoices:write"],
        ),
    )
    .await;
    grant(&h, tenant, &invoices, &["invoices:read", "invoices:write"]).await;
    h.store.fail_on(Some("insert_event"));
    let patch = ApiResourcePatch {
        name: Some(Some("Renamed".to_owned())),
        permissions: Some(Some(vec![])),
        ..ApiResourcePatch::default()
    };
    let err = update(&h, &acme, &invoices.id, patch, &NONE)
        .await
        .unwrap_err();
    assert!(matches!(err, ManageError::Unavailable(_)), "{err:?}");
    let err = resources::delete(&h.ctx, tenant, &actor, &meta(), &invoices.id, &NONE)
        .await
        .unwrap_err();
    assert!(matches!(err, ManageError::Unavailable(_)), "{err:?}");
    h.store.fail_on(None);
    assert_eq!(
        resources::get(&h.ctx, tenant, &invoices.id).await.unwrap(),
        invoices,
        "neither the update nor the deletion took effect"
    );
    assert_eq!(granted(&h, tenant).await.len(), 2, "the grants stayed");
    assert_eq!(
        resource_events(&h, tenant).await.len(),
        1,
        "the creation's only"
    );
    assert_eq!(resource_audit(&h, tenant).await.len(), 1);
}

#[tokio::test]
async fn another_tenants_resources_are_not_found() {
    on_both(another_tenants_resources_are_not_found_on).await;
}

async fn another_tenants_resources_are_not_found_on(h: Harness) {
    let acme = h.tenant("acme").await;
    let globex = h.tenant("globex").await;
    let theirs = create(
        &h,
        &acme,
        new_resource("https://api.example.com", "Invoices", &["a:b"]),
    )
    .await;
    let other = &globex.tenant.id;
    let actor = client_actor(&globex);

    assert!(matches!(
        resources::get(&h.ctx, other, &theirs.id).await,
        Err(ManageError::NotFound)
    ));
    let patch = ApiResourcePatch {
        name: Some(Some("Mallory".to_owned())),
        ..ApiResourcePatch::default()
    };
    for precondition in [NONE, Precondition::Exists, at(&theirs)] {
        let err = update(&h, &globex, &theirs.id, patch.clone(), &precondition)
            .await
            .unwrap_err();
        assert!(matches!(err, ManageError::NotFound), "{err:?}");
        let err = resources::delete(&h.ctx, other, &actor, &meta(), &theirs.id, &precondition)
            .await
            .unwrap_err();
        assert!(matches!(err, ManageError::NotFound), "{err:?}");
    }
    let (listed, _) = resources::list(&h.ctx, other, None, None, None)
        .await
        .unwrap();
    assert!(listed.is_empty());
    assert!(resource_events(&h, other).await.is_empty());
    assert_eq!(
        resources::get(&h.ctx, &acme.tenant.id, &theirs.id)
            .await
            .unwrap(),
        theirs,
        "untouched"
    );
}

#[tokio::test]
async fn a_tenant_registers_at_most_100_api_resources() {
    on_both(a_tenant_registers_at_most_100_api_resources_on).await;
}

async fn a_tenant_registers_at_most_100_api_resources_on(h: Harness) {
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let mut first = None;
    for i in 0..MAX_API_RESOURCES_PER_TENANT {
        let r = create(&h, &acme, new_resource(&format!("urn:api:{i}"), "API", &[])).await;
        first.get_or_insert(r);
    }
    let err = resources::create(
        &h.ctx,
        tenant,
        &client_actor(&acme),
        &meta(),
        new_resource("urn:api:one-more", "API", &[]),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, ManageError::Conflict(m) if m.contains("100")),
        "{err:?}"
    );
    let (page, _) = resources::list(&h.ctx, tenant, None, None, Some(200))
        .await
        .unwrap();
    assert_eq!(page.len(), MAX_API_RESOURCES_PER_TENANT);

    // One deleted makes room for one more; another tenant is not affected.
    let first = first.unwrap();
    resources::delete(
        &h.ctx,
        tenant,
        &client_actor(&acme),
        &meta(),
        &first.id,
        &NONE,
    )
    .await
    .unwrap();
    create(&h, &acme, new_resource("urn:api:one-more", "API", &[])).await;
    let globex = h.tenant("globex").await;
    create(&h, &globex, new_resource("urn:api:0", "API", &[])).await;
}

#[test]
fn bodies_deserialize_as_the_api_sends_them() {
    let input: NewApiResource = serde_json::from_value(json!({
        "identifier": "https://api.example.com",
        "name": "Invoices API",
        "permissions": [{"name": "invoices:read", "description": "Read invoices"}, {"name": "a:b"}]
    }))
    .unwrap();
    let permissions = input.permissions.unwrap();
    assert_eq!(permissions[0].description.as_deref(), Some("Read invoices"));
    assert_eq!(permissions[1].description, None);
    let bare: NewApiResource =
        serde_json::from_value(json!({"identifier": "urn:x", "name": "X"})).unwrap();
    assert_eq!(bare.permissions, None);
    for refused in [
        json!({"identifier": "urn:x", "name": "X", "scopes": []}),
        json!({"identifier": "urn:x", "name": "X", "permissions": [{"name": "a:b", "x": 1}]}),
        json!({"identifier": "urn:x"}),
    ] {
        assert!(
            serde_json::from_value::<NewApiResource>(refused.clone()).is_err(),
            "{refused}"
        );
    }
    let patch: ApiResourcePatch =
        serde_json::from_value(json!({"identifier": null, "permissions": []})).unwrap();
    assert_eq!(patch.identifier, Some(None));
    assert_eq!(patch.permissions, Some(Some(vec![])));
    assert_eq!(patch.name, None);
}
