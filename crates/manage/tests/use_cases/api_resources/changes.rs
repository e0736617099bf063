//! API resource changes: a PATCH changes only what it sends under the revision it names, the
//! identifier never changes, and a permission removed from its resource (or deleted with it)
//! leaves every role holding it.

use super::{
    NONE, admin_role, at, create, granted, invalid, names, new_resource, on_both, permission,
    resource_audit, resource_events, update,
};
use crate::support::{Harness, client_actor, meta};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use svc_domain::PermissionName;
use svc_manage::api_resources::{self as resources, ApiResourcePatch};
use svc_manage::audit::action;
use svc_manage::{ManageError, Precondition};

#[tokio::test]
async fn updates_change_only_what_is_sent_and_honour_the_revision() {
    on_both(updates_change_only_what_is_sent_and_honour_the_revision_on).await;
}

async fn updates_change_only_what_is_sent_and_honour_the_revision_on(h: Harness) {
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
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

    // Name only: the identifier and permissions stay; the same identifier may be repeated.
    let renamed = update(
        &h,
        &acme,
        &invoices.id,
        ApiResourcePatch {
            name: Some(Some(" Invoices v2 ".to_owned())),
            identifier: Some(Some("https://api.example.com".to_owned())),
            ..ApiResourcePatch::default()
        },
        &at(&invoices),
    )
    .await
    .unwrap();
    assert_eq!(renamed.name, "Invoices v2");
    assert_eq!(renamed.identifier, invoices.identifier);
    assert_eq!(renamed.permissions, invoices.permissions);
    assert!(renamed.updated_at > invoices.updated_at);
    assert_eq!(
        resources::get(&h.ctx, tenant, &invoices.id).await.unwrap(),
        renamed
    );

    // The old revision is stale now: nothing is written.
    let stale = ApiResourcePatch {
        name: Some(Some("Mallory".to_owned())),
        ..ApiResourcePatch::default()
    };
    let err = update(&h, &acme, &invoices.id, stale, &at(&invoices))
        .await
        .unwrap_err();
    assert!(matches!(err, ManageError::PreconditionFailed), "{err:?}");

    // Permissions replace the whole list: descriptions change, one goes, one comes.
    let replaced = update(
        &h,
        &acme,
        &invoices.id,
        ApiResourcePatch {
            permissions: Some(Some(vec![
                permission("invoices:export", None),
                permission("invoices:read", Some("Read invoices")),
            ])),
            ..ApiResourcePatch::default()
        },
        &Precondition::Exists,
    )
    .await
    .unwrap();
    assert_eq!(names(&replaced), ["invoices:export", "invoices:read"]);
    assert_eq!(replaced.permissions[1].description, "Read invoices");
    assert_eq!(
        resources::get(&h.ctx, tenant, &invoices.id).await.unwrap(),
        replaced
    );

    // Nothing new: nothing written, no event.
    let events_before = resource_events(&h, tenant).await.len();
    let same = update(
        &h,
        &acme,
        &invoices.id,
        ApiResourcePatch {
            name: Some(Some("Invoices v2".to_owned())),
            ..ApiResourcePatch::default()
        },
        &NONE,
    )
    .await
    .unwrap();
    assert_eq!(same, replaced);
    assert_eq!(resource_events(&h, tenant).await.len(), events_before);

    // Refusals.
    let cases = [
        (
            ApiResourcePatch {
                identifier: Some(Some("https://elsewhere.example".to_owned())),
                ..ApiResourcePatch::default()
            },
            "identifier",
            "cannot be changed",
        ),
        (
            ApiResourcePatch {
                identifier: Some(None),
                ..ApiResourcePatch::default()
            },
            "identifier",
            "cannot be changed",
        ),
        (
            ApiResourcePatch {
                name: Some(None),
                ..ApiResourcePatch::default()
            },
            "name",
            "always has a name",
        ),
        (
            ApiResourcePatch {
                permissions: Some(None),
                ..ApiResourcePatch::default()
            },
            "permissions",
            "`[]` for none",
        ),
        (
            ApiResourcePatch {
                name: Some(Some("x".repeat(129))),
                ..ApiResourcePatch::default()
            },
            "name",
            "1 to 128",
        ),
        (
            ApiResourcePatch {
                permissions: Some(Some(vec![permission("a:b", None), permission("a:b", None)])),
                ..ApiResourcePatch::default()
            },
            "permissions",
            "listed twice",
        ),
    ];
    for (patch, field, needle) in cases {
        let err = update(&h, &acme, &invoices.id, patch.clone(), &NONE)
            .await
            .unwrap_err();
        let (got, text) = invalid(&err);
        assert_eq!(got, field, "{patch:?}");
        assert!(text.contains(needle), "{patch:?}: {text}");
    }
    assert_eq!(
        resources::get(&h.ctx, tenant, &invoices.id).await.unwrap(),
        replaced
    );

    // Two updates, two events carrying the state after each, two audit entries.
    let updated: Vec<Value> = resource_events(&h, tenant)
        .await
        .into_iter()
        .filter(|(t, _)| t == "admin.api_resource.updated")
        .map(|(_, data)| data)
        .collect();
    assert_eq!(updated.len(), 2);
    assert_eq!(
        updated[0]["permissions"],
        json!(["invoices:read", "invoices:write"])
    );
    assert_eq!(
        updated[1]["permissions"],
        json!(["invoices:export", "invoices:read"])
    );
    assert_eq!(updated[1]["identifier"], "https://api.example.com");
    assert_eq!(updated[1]["actor"], actor.as_audit_string());
    let audit = resource_audit(&h, tenant).await;
    let updates = audit
        .iter()
        .filter(|(a, _)| a == action::API_RESOURCE_UPDATED)
        .count();
    assert_eq!(updates, 2);
}

#[tokio::test]
async fn removed_permissions_leave_every_role_and_deletion_takes_the_rest() {
    on_both(removed_permissions_leave_every_role_and_deletion_takes_the_rest_on).await;
}

async fn removed_permissions_leave_every_role_and_deletion_takes_the_rest_on(h: Harness) {
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
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
    let ledger = create(
        &h,
        &acme,
        new_resource("https://ledger.example", "Ledger", &["l:r"]),
    )
    .await;
    let mut tx = h.ctx.store.write().await.unwrap();
    let grants = BTreeSet::from([
        (
            invoices.id.clone(),
            PermissionName::parse("invoices:read").unwrap(),
        ),
        (
            invoices.id.clone(),
            PermissionName::parse("invoices:write").unwrap(),
        ),
        (ledger.id.clone(), PermissionName::parse("l:r").unwrap()),
    ]);
    tx.replace_role_grants(tenant, &admin_role(), &grants)
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let kept = update(
        &h,
        &acme,
        &invoices.id,
        ApiResourcePatch {
            permissions: Some(Some(vec![permission("invoices:read", None)])),
            ..ApiResourcePatch::default()
        },
        &at(&invoices),
    )
    .await
    .unwrap();
    assert_eq!(
        granted(&h, tenant).await,
        [
            (invoices.id.to_string(), "invoices:read".to_owned()),
            (ledger.id.to_string(), "l:r".to_owned()),
        ],
        "invoices:write left the role with its definition"
    );

    // A stale deletion deletes nothing.
    let err = resources::delete(
        &h.ctx,
        tenant,
        &actor,
        &meta(),
        &invoices.id,
        &at(&invoices),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ManageError::PreconditionFailed), "{err:?}");
    assert!(resources::get(&h.ctx, tenant, &invoices.id).await.is_ok());

    resources::delete(&h.ctx, tenant, &actor, &meta(), &invoices.id, &at(&kept))
        .await
        .unwrap();
    assert!(matches!(
        resources::get(&h.ctx, tenant, &invoices.id).await,
        Err(ManageError::NotFound)
    ));
    assert_eq!(
        granted(&h, tenant).await,
        [(ledger.id.to_string(), "l:r".to_owned())],
        "its grants went with it, the other resource's stayed"
    );
    assert!(matches!(
        resources::delete(&h.ctx, tenant, &actor, &meta(), &invoices.id, &NONE).await,
        Err(ManageError::NotFound)
    ));

    // Its identifier is free again.
    create(
        &h,
        &acme,
        new_resource("https://api.example.com", "Invoices again", &[]),
    )
    .await;

    let audit = resource_audit(&h, tenant).await;
    assert_eq!(
        audit[1],
        (
            action::API_RESOURCE_DELETED.to_owned(),
            Some(invoices.id.to_string())
        )
    );
    let deleted: Vec<Value> = resource_events(&h, tenant)
        .await
        .into_iter()
        .filter(|(t, _)| t == "admin.api_resource.deleted")
        .map(|(_, data)| data)
        .collect();
    assert_eq!(
        deleted,
        [json!({
            "resource_id": invoices.id.as_str(),
            "identifier": "https://api.example.com",
            "permissions": [],
            "actor": actor.as_audit_string(),
        })]
    );
}
