//! Control-plane tenant use cases.

use crate::support::{harness, meta, operator};
use svc_domain::{AuditOutcome, GrantType, TenantStatus, TokenEndpointAuthMethod};
use svc_manage::applications::{self as apps, MANAGEMENT_APPLICATION_NAME, MANAGEMENT_SCOPES};
use svc_manage::audit::action;
use svc_manage::control_plane::{
    CreatedTenantView, NewTenant, TenantPatch, create_tenant, delete_tenant, get_tenant,
    list_tenants, reactivate_tenant, suspend_tenant, update_tenant,
};
use svc_manage::{ManageError, Precondition, RequestMeta, Revision};

fn new_tenant(slug: &str) -> NewTenant {
    NewTenant {
        slug: slug.to_owned(),
        display_name: "  Acme Corp ".to_owned(),
        signup_enabled: false,
        mfa_policy: svc_domain::MfaPolicy::Default,
    }
}

#[tokio::test]
async fn creating_a_tenant_creates_its_management_application_with_one_audit_entry() {
    let h = harness().await;
    let created = create_tenant(&h.ctx, &operator(), &meta(), new_tenant("acme"))
        .await
        .unwrap();

    let tenant = &created.tenant;
    assert_eq!(tenant.slug.as_str(), "acme");
    assert_eq!(tenant.display_name, "Acme Corp", "trimmed");
    assert_eq!(tenant.status, TenantStatus::Active);
    assert_eq!(get_tenant(&h.ctx, &tenant.id).await.unwrap(), *tenant);

    let app = &created.management_application;
    assert_eq!(app.tenant_id, tenant.id);
    assert_eq!(app.name, MANAGEMENT_APPLICATION_NAME);
    assert!(app.is_management);
    assert_eq!(app.grant_types, vec![GrantType::ClientCredentials]);
    assert_eq!(
        app.token_endpoint_auth_method,
        TokenEndpointAuthMethod::ClientSecretBasic
    );
    assert_eq!(app.allowed_scopes.iter().count(), MANAGEMENT_SCOPES.len());
    for scope in MANAGEMENT_SCOPES {
        assert!(app.allowed_scopes.contains(scope), "{scope}");
    }
    assert_eq!(app.api_audience, None, "the management API");
    assert!(created.client_secret.starts_with("cs_"));
    let stored = apps::get(&h.ctx, &tenant.id, &app.id).await.unwrap();
    assert_eq!(stored, *app);
    assert!(stored.secret_hash.unwrap().verify(&created.client_secret));
    assert_eq!(h.applications(&tenant.id).await.len(), 1);

    let audit = h.audit(&tenant.id).await;
    assert_eq!(audit.len(), 1, "{audit:?}");
    let entry = &audit[0];
    assert_eq!(entry.action, action::TENANT_CREATED);
    assert_eq!(entry.tenant_id.as_ref(), Some(&tenant.id));
    assert_eq!(entry.target.as_deref(), Some(tenant.id.as_str()));
    assert_eq!(entry.actor, operator().as_audit_string());
    assert_eq!(entry.request_id.as_deref(), Some("req-7f3a"));
    assert_eq!(entry.client_ip.as_deref(), Some("203.0.113.7"));
    assert_eq!(entry.outcome, AuditOutcome::Success);
    assert!(entry.occurred_at >= tenant.created_at);

    let view = serde_json::to_value(CreatedTenantView::from(&created)).unwrap();
    assert_eq!(view["tenant"]["slug"], "acme");
    assert_eq!(
        view["management_application"]["application"]["is_management"],
        true
    );
    assert_eq!(view["management_application"]["client_id"], app.id.as_str());
    assert_eq!(
        view["management_application"]["client_secret"],
        created.client_secret.as_str()
    );
    assert!(!format!("{:?}", CreatedTenantView::from(&created)).contains(&created.client_secret));
    assert!(!format!("{created:?}").contains(&created.client_secret));
}

#[tokio::test]
async fn a_failure_after_the_tenant_insert_leaves_nothing_behind() {
    let h = harness().await;
    for failing in ["insert_application", "insert_audit"] {
        h.store.fail_on(Some(failing));
        let err = create_tenant(&h.ctx, &operator(), &meta(), new_tenant("acme"))
            .await
            .unwrap_err();
        assert!(
            matches!(err, ManageError::Unavailable(_)),
            "{failing}: {err:?}"
        );
        h.store.fail_on(None);
        assert!(
            h.tenants().await.is_empty(),
            "{failing}: tenant rolled back"
        );
    }
    // And the slug is still free.
    create_tenant(&h.ctx, &operator(), &meta(), new_tenant("acme"))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_duplicate_slug_is_a_conflict_and_writes_nothing() {
    let h = harness().await;
    let first = h.tenant("acme").await;
    let err = create_tenant(&h.ctx, &operator(), &meta(), new_tenant("acme"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ManageError::Conflict(m) if m == "a tenant with slug acme exists"),
        "{err:?}"
    );
    assert_eq!(h.tenants().await, vec![first.tenant.clone()]);
    assert_eq!(h.applications(&first.tenant.id).await.len(), 1);
    assert_eq!(h.audit(&first.tenant.id).await.len(), 1);
}

#[tokio::test]
async fn invalid_tenant_input_is_refused_before_the_store() {
    let h = harness().await;
    let before = h.store.transactions();
    for (input, field) in [
        (
            NewTenant {
                slug: "Acme".to_owned(),
                display_name: "Acme".to_owned(),
                signup_enabled: false,
                mfa_policy: svc_domain::MfaPolicy::Default,
            },
            "slug",
        ),
        (
            NewTenant {
                slug: "acme".to_owned(),
                display_name: " ".to_owned(),
                signup_enabled: false,
                mfa_policy: svc_domain::MfaPolicy::Default,
            },
            "display_name",
        ),
    ] {
        let err = create_tenant(&h.ctx, &operator(), &meta(), input)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ManageError::Invalid { field: f, .. } if f == field),
            "{err:?}"
        );
    }
    assert_eq!(h.store.transactions(), before);
    assert!(h.tenants().await.is_empty());
}

#[tokio::test]
async fn tenants_are_listed_a_page_at_a_time() {
    let h = harness().await;
    let mut ids = Vec::new();
    for slug in ["a", "b", "c"] {
        ids.push(h.tenant(slug).await.tenant.id);
    }
    ids.sort();
    let first = list_tenants(&h.ctx, None, None, Some(2)).await.unwrap();
    assert_eq!(
        first.0.iter().map(|t| t.id.clone()).collect::<Vec<_>>(),
        ids[..2]
    );
    assert_eq!(first.1.as_ref(), Some(&ids[1]));
    let second = list_tenants(&h.ctx, first.1.as_ref(), None, Some(2))
        .await
        .unwrap();
    assert_eq!(
        second.0.iter().map(|t| t.id.clone()).collect::<Vec<_>>(),
        ids[2..]
    );
    assert_eq!(second.1, None);
    assert_eq!(
        list_tenants(&h.ctx, None, None, Some(0))
            .await
            .unwrap()
            .0
            .len(),
        1,
        "clamped to 1"
    );
    assert_eq!(
        list_tenants(&h.ctx, None, None, None)
            .await
            .unwrap()
            .0
            .len(),
        3
    );
}

#[tokio::test]
async fn updating_a_tenant_changes_its_display_name_and_is_audited() {
    let h = harness().await;
    let created = h.tenant("acme").await;
    let id = created.tenant.id.clone();
    h.clock.advance(time::Duration::seconds(5));

    let updated = update_tenant(
        &h.ctx,
        &operator(),
        &meta(),
        &id,
        TenantPatch {
            display_name: Some("Acme Inc".to_owned()),
            ..TenantPatch::default()
        },
        &Precondition::None,
    )
    .await
    .unwrap();
    assert_eq!(updated.display_name, "Acme Inc");
    assert!(updated.updated_at > created.tenant.updated_at);
    assert_eq!(updated.slug, created.tenant.slug);
    assert_eq!(get_tenant(&h.ctx, &id).await.unwrap(), updated);
    let audit = h.audit(&id).await;
    assert_eq!(audit.len(), 2);
    assert_eq!(audit[0].action, action::TENANT_UPDATED);
    assert_eq!(audit[0].target.as_deref(), Some(id.as_str()));

    // A patch that changes nothing writes nothing.
    let same = update_tenant(
        &h.ctx,
        &operator(),
        &meta(),
        &id,
        TenantPatch::default(),
        &Precondition::None,
    )
    .await
    .unwrap();
    assert_eq!(same, updated);
    assert_eq!(h.audit(&id).await.len(), 2);

    let err = update_tenant(
        &h.ctx,
        &operator(),
        &meta(),
        &id,
        TenantPatch {
            display_name: Some(String::new()),
            ..TenantPatch::default()
        },
        &Precondition::None,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ManageError::Invalid { field, .. } if field == "display_name"));
    assert_eq!(get_tenant(&h.ctx, &id).await.unwrap(), updated);
}

#[tokio::test]
async fn suspending_and_reactivating_are_audited_transitions() {
    let h = harness().await;
    let id = h.tenant("acme").await.tenant.id;

    let suspended = suspend_tenant(&h.ctx, &operator(), &meta(), &id)
        .await
        .unwrap();
    assert_eq!(suspended.status, TenantStatus::Suspended);
    assert_eq!(
        get_tenant(&h.ctx, &id).await.unwrap().status,
        TenantStatus::Suspended
    );
    // Suspending again is a no-op.
    suspend_tenant(&h.ctx, &operator(), &meta(), &id)
        .await
        .unwrap();

    let active = reactivate_tenant(&h.ctx, &operator(), &meta(), &id)
        .await
        .unwrap();
    assert_eq!(active.status, TenantStatus::Active);
    reactivate_tenant(&h.ctx, &operator(), &meta(), &id)
        .await
        .unwrap();

    let actions: Vec<String> = h.audit(&id).await.into_iter().map(|e| e.action).collect();
    assert_eq!(
        actions,
        [
            action::TENANT_REACTIVATED,
            action::TENANT_SUSPENDED,
            action::TENANT_CREATED
        ]
    );
}

#[tokio::test]
async fn deleting_a_tenant_removes_what_it_owns_but_keeps_its_audit_log() {
    let h = harness().await;
    let created = h.tenant("acme").await;
    let other = h.tenant("other").await;
    let id = created.tenant.id.clone();

    delete_tenant(&h.ctx, &operator(), &meta(), &id)
        .await
        .unwrap();
    assert!(matches!(
        get_tenant(&h.ctx, &id).await,
        Err(ManageError::NotFound)
    ));
    assert!(matches!(
        apps::get(&h.ctx, &id, &created.management_application.id).await,
        Err(ManageError::NotFound)
    ));
    assert!(h.applications(&id).await.is_empty());
    assert_eq!(h.tenants().await, vec![other.tenant.clone()]);

    let audit = h.audit(&id).await;
    assert_eq!(audit.len(), 2);
    assert_eq!(audit[0].action, action::TENANT_DELETED);
    assert_eq!(audit[0].tenant_id.as_ref(), Some(&id));
    assert_eq!(audit[0].target.as_deref(), Some(id.as_str()));

    let again = delete_tenant(&h.ctx, &operator(), &RequestMeta::default(), &id).await;
    assert!(matches!(again, Err(ManageError::NotFound)));
    assert_eq!(
        h.audit(&id).await.len(),
        2,
        "a refused delete writes nothing"
    );
}

#[tokio::test]
async fn unknown_tenants_are_not_found() {
    let h = harness().await;
    let ghost = h.tenant("ghost").await.tenant.id;
    delete_tenant(&h.ctx, &operator(), &meta(), &ghost)
        .await
        .unwrap();
    let check = |r: Result<_, ManageError>| assert!(matches!(r, Err(ManageError::NotFound)));
    check(get_tenant(&h.ctx, &ghost).await.map(drop));
    check(
        suspend_tenant(&h.ctx, &operator(), &meta(), &ghost)
            .await
            .map(drop),
    );
    check(
        reactivate_tenant(&h.ctx, &operator(), &meta(), &ghost)
            .await
            .map(drop),
    );
    check(
        update_tenant(
            &h.ctx,
            &operator(),
            &meta(),
            &ghost,
            TenantPatch::default(),
            &Precondition::None,
        )
        .await
        .map(drop),
    );
}

#[tokio::test]
async fn a_tenant_update_honours_if_match_and_a_stale_revision_changes_nothing() {
    let h = harness().await;
    let created = h.tenant("acme").await;
    let id = created.tenant.id.clone();
    let first = Revision::of(created.tenant.updated_at);
    let at = |rev: Revision| Precondition::OneOf(vec![Some(rev)]);
    let rename = |name: &str| TenantPatch {
        display_name: Some(name.to_owned()),
        ..TenantPatch::default()
    };

    let updated = update_tenant(&h.ctx, &operator(), &meta(), &id, rename("One"), &at(first))
        .await
        .unwrap();
    assert_eq!(updated.display_name, "One");
    let second = Revision::of(updated.updated_at);
    assert_ne!(first, second);
    for refused in [at(first), Precondition::OneOf(vec![None])] {
        let err = update_tenant(&h.ctx, &operator(), &meta(), &id, rename("Two"), &refused)
            .await
            .unwrap_err();
        assert!(matches!(err, ManageError::PreconditionFailed), "{err:?}");
    }
    // A stale revision is refused even when the patch would change nothing.
    let err = update_tenant(
        &h.ctx,
        &operator(),
        &meta(),
        &id,
        TenantPatch::default(),
        &at(first),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ManageError::PreconditionFailed));
    assert_eq!(get_tenant(&h.ctx, &id).await.unwrap(), updated);
    assert_eq!(
        h.audit(&id).await.len(),
        2,
        "only the creation and one update"
    );

    // A suspension is a change too: it moves the revision, even with the clock set back.
    h.clock.advance(time::Duration::hours(-1));
    let suspended = suspend_tenant(&h.ctx, &operator(), &meta(), &id)
        .await
        .unwrap();
    assert!(suspended.updated_at > updated.updated_at);
    let err = update_tenant(
        &h.ctx,
        &operator(),
        &meta(),
        &id,
        rename("Two"),
        &at(second),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ManageError::PreconditionFailed));
    let renamed = update_tenant(
        &h.ctx,
        &operator(),
        &meta(),
        &id,
        rename("Two"),
        &Precondition::Exists,
    )
    .await
    .unwrap();
    assert_eq!(renamed.display_name, "Two");
    assert_eq!(
        renamed.status,
        TenantStatus::Suspended,
        "the suspension is kept"
    );
}
