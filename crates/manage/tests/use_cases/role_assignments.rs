//! Custom roles held, on SQLite and PostgreSQL: people hold custom tenant roles beside
//! `tenant_admin`, organization members custom organization roles beside the built-in ones, and
//! applications custom tenant roles only; a role of the other kind, an unknown one or another
//! tenant's is refused naming it. A role is not deleted while anyone holds it (a person, a
//! member, an application): the refusal says how many do and nothing is deleted; once taken
//! away, it is.

use crate::roles::{
    BILLING, create, delete, events, get, invalid, new_role, on_both, perm, resource, stored_grants,
};
use crate::support::{Harness, client_actor, meta, web_app};
use serde_json::json;
use std::collections::BTreeSet;
use svc_domain::{ClientId, OrganizationId, RoleKey, TENANT_ADMIN, UserId};
use svc_manage::applications;
use svc_manage::audit::action;
use svc_manage::control_plane::CreatedTenant;
use svc_manage::organizations::{self as orgs, MemberPatch, NewMember, NewOrganization};
use svc_manage::roles::{self, ApplicationRolesInput};
use svc_manage::users::{self, NewUser, RolesInput};
use svc_manage::{ManageError, Precondition};

const ISSUER: &str = "https://acme.example.com";

fn keys(roles: &BTreeSet<RoleKey>) -> Vec<&str> {
    roles.iter().map(RoleKey::as_str).collect()
}

fn strings(roles: &[&str]) -> Vec<String> {
    roles.iter().map(|s| (*s).to_owned()).collect()
}

async fn person(h: &Harness, t: &CreatedTenant, email: &str) -> UserId {
    let input = NewUser {
        email: email.to_owned(),
        ..NewUser::default()
    };
    users::create(&h.ctx, &t.tenant, ISSUER, &client_actor(t), &meta(), input)
        .await
        .unwrap()
        .id
}

async fn organization(h: &Harness, t: &CreatedTenant, slug: &str) -> OrganizationId {
    let input = NewOrganization {
        name: slug.to_owned(),
        slug: slug.to_owned(),
        metadata: None,
    };
    orgs::create(&h.ctx, &t.tenant.id, &client_actor(t), &meta(), input)
        .await
        .unwrap()
        .id
}

async fn application(h: &Harness, t: &CreatedTenant) -> ClientId {
    applications::create(&h.ctx, &t.tenant.id, &client_actor(t), &meta(), web_app())
        .await
        .unwrap()
        .0
        .id
}

async fn set_user(
    h: &Harness,
    t: &CreatedTenant,
    user: &UserId,
    roles: &[&str],
) -> Result<BTreeSet<RoleKey>, ManageError> {
    let input = RolesInput {
        roles: strings(roles),
    };
    users::set_roles(&h.ctx, &t.tenant.id, &client_actor(t), &meta(), user, input).await
}

async fn add_member(
    h: &Harness,
    t: &CreatedTenant,
    org: &OrganizationId,
    user: &UserId,
    roles: &[&str],
) -> Result<BTreeSet<RoleKey>, ManageError> {
    let input = NewMember {
        user_id: user.to_string(),
        roles: Some(strings(roles)),
    };
    orgs::add_member(
        &h.ctx,
        &t.tenant.id,
        (&client_actor(t), &meta()),
        &svc_manage::Reach::Tenant,
        org,
        input,
    )
    .await
    .map(|m| m.roles)
}

async fn re_role(
    h: &Harness,
    t: &CreatedTenant,
    org: &OrganizationId,
    user: &UserId,
    roles: &[&str],
) -> Result<BTreeSet<RoleKey>, ManageError> {
    let patch = MemberPatch {
        roles: strings(roles),
    };
    let actor = client_actor(t);
    orgs::change_member_roles(
        &h.ctx,
        &t.tenant.id,
        (&actor, &meta()),
        &svc_manage::Reach::Tenant,
        org,
        user,
        patch,
    )
    .await
    .map(|m| m.roles)
}

async fn set_app(
    h: &Harness,
    t: &CreatedTenant,
    app: &ClientId,
    roles: &[&str],
) -> Result<BTreeSet<RoleKey>, ManageError> {
    let input = ApplicationRolesInput {
        roles: strings(roles),
    };
    roles::set_application_roles(&h.ctx, &t.tenant.id, &client_actor(t), &meta(), app, input).await
}

/// The refusal of deleting `key` while held: a conflict saying how many hold it.
async fn refused_while_held(h: &Harness, t: &CreatedTenant, key: &str, holders: &str) {
    let before = get(h, t, key).await.unwrap();
    let err = delete(h, t, key).await.unwrap_err();
    match &err {
        ManageError::Conflict(message) => {
            assert!(message.contains(holders), "{key}: {message}");
            assert!(message.contains("take it away"), "{message}");
        }
        other => panic!("{key}: expected Conflict, got {other:?}"),
    }
    assert_eq!(get(h, t, key).await.unwrap(), before, "nothing deleted");
    assert_eq!(
        stored_grants(h, &t.tenant.id, key).await,
        before.permissions.len(),
        "its grants stay"
    );
}

#[tokio::test]
async fn custom_roles_are_held_by_their_kind_only() {
    on_both(held_by_kind).await;
}

async fn held_by_kind(h: Harness) {
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    resource(&h, tenant, BILLING, &["invoices:read"]).await;
    let grant = || vec![perm(BILLING, "invoices:read")];
    create(&h, &acme, new_role("billing", "tenant", grant()))
        .await
        .unwrap();
    create(&h, &acme, new_role("auditor", "organization", grant()))
        .await
        .unwrap();
    let ada = person(&h, &acme, "ada@example.com").await;
    let bob = person(&h, &acme, "bob@example.com").await;
    let org = organization(&h, &acme, "acme-eu").await;
    let app = application(&h, &acme).await;

    // People: tenant roles, built-in and custom.
    let held = set_user(&h, &acme, &ada, &["billing", TENANT_ADMIN, "billing"])
        .await
        .unwrap();
    assert_eq!(keys(&held), ["billing", TENANT_ADMIN]);
    assert_eq!(
        keys(&users::roles(&h.ctx, tenant, &ada).await.unwrap()),
        keys(&held)
    );
    for (roles, needle) in [
        (&["auditor"][..], "\"auditor\" is an organization role"),
        (&["nobody"], "unknown role \"nobody\""),
        (
            &["owner"],
            "unknown role \"owner\"; tenant roles are tenant_admin",
        ),
    ] {
        let err = set_user(&h, &acme, &bob, roles).await.unwrap_err();
        let (field, message) = invalid(&err);
        assert_eq!(field, "roles");
        assert!(message.contains(needle), "{roles:?}: {message}");
        assert!(
            message.contains("tenant roles are tenant_admin"),
            "{message}"
        );
    }
    assert!(users::roles(&h.ctx, tenant, &bob).await.unwrap().is_empty());

    // Members: organization roles, built-in and custom.
    let roles = add_member(&h, &acme, &org, &bob, &["auditor", "member"])
        .await
        .unwrap();
    assert_eq!(keys(&roles), ["auditor", "member"]);
    for roles in [&["billing"][..], &["nobody", "member"], &[TENANT_ADMIN]] {
        let err = re_role(&h, &acme, &org, &bob, roles).await.unwrap_err();
        let (field, message) = invalid(&err);
        assert_eq!(field, "roles");
        assert!(message.contains("owner, admin, member"), "{message}");
        assert!(message.contains(roles[0]), "names it: {message}");
    }
    let err = add_member(&h, &acme, &org, &ada, &["billing"])
        .await
        .unwrap_err();
    assert!(
        invalid(&err).1.contains("\"billing\" is a tenant role"),
        "{err}"
    );
    let (members, _) = orgs::list_members(&h.ctx, tenant, &org, None, None)
        .await
        .unwrap();
    assert_eq!(members.len(), 1, "the refused member was not added");
    assert_eq!(
        keys(&re_role(&h, &acme, &org, &bob, &["auditor"]).await.unwrap()),
        ["auditor"]
    );

    // Applications: custom tenant roles only.
    assert!(
        roles::application_roles(&h.ctx, tenant, &app)
            .await
            .unwrap()
            .is_empty()
    );
    let roles = set_app(&h, &acme, &app, &["billing", "billing"])
        .await
        .unwrap();
    assert_eq!(keys(&roles), ["billing"]);
    assert_eq!(
        keys(
            &roles::application_roles(&h.ctx, tenant, &app)
                .await
                .unwrap()
        ),
        ["billing"]
    );
    let audit = h.audit(tenant).await;
    assert_eq!(audit[0].action, action::APPLICATION_ROLES_CHANGED);
    assert_eq!(audit[0].target.as_deref(), Some(app.as_str()));
    let (kind, data) = events(&h, tenant, "admin.application.roles_changed")
        .await
        .pop()
        .unwrap();
    assert_eq!(kind, "admin.application.roles_changed");
    assert_eq!(
        data,
        json!({
            "client_id": app.as_str(),
            "roles": ["billing"],
            "previous_roles": [],
            "actor": actor.as_audit_string(),
        })
    );
    // The same set again writes nothing.
    let audit_before = h.audit(tenant).await.len();
    set_app(&h, &acme, &app, &["billing"]).await.unwrap();
    assert_eq!(h.audit(tenant).await.len(), audit_before);
    for (roles, needle) in [
        (&[TENANT_ADMIN][..], "management application"),
        (&["owner"], "organization role"),
        (&["auditor"], "organization role"),
        (&["nobody"], "unknown role"),
        (&["Bad Key"], "unknown role"),
    ] {
        let err = set_app(&h, &acme, &app, roles).await.unwrap_err();
        let (field, message) = invalid(&err);
        assert_eq!(field, "roles");
        assert!(message.contains(needle), "{roles:?}: {message}");
    }
    let sixteen = vec!["billing"; 17];
    assert_eq!(
        invalid(&set_app(&h, &acme, &app, &sixteen).await.unwrap_err()).0,
        "roles"
    );
    assert_eq!(h.audit(tenant).await.len(), audit_before);
    let (_, data) = events(&h, tenant, "admin.application.")
        .await
        .pop()
        .unwrap();
    assert_eq!(data["roles"], json!(["billing"]));
    let cleared = set_app(&h, &acme, &app, &[]).await.unwrap();
    assert!(cleared.is_empty());
    let (_, data) = events(&h, tenant, "admin.application.")
        .await
        .pop()
        .unwrap();
    assert_eq!(
        (data["roles"].clone(), data["previous_roles"].clone()),
        (json!([]), json!(["billing"]))
    );
}

#[tokio::test]
async fn a_held_role_is_not_deleted_until_taken_away() {
    on_both(held_not_deleted).await;
}

async fn held_not_deleted(h: Harness) {
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    resource(&h, tenant, BILLING, &["invoices:read"]).await;
    let grant = || vec![perm(BILLING, "invoices:read")];
    create(&h, &acme, new_role("billing", "tenant", grant()))
        .await
        .unwrap();
    create(&h, &acme, new_role("machines", "tenant", grant()))
        .await
        .unwrap();
    create(&h, &acme, new_role("auditor", "organization", grant()))
        .await
        .unwrap();
    let ada = person(&h, &acme, "ada@example.com").await;
    let bob = person(&h, &acme, "bob@example.com").await;
    let org = organization(&h, &acme, "acme-eu").await;
    let other_org = organization(&h, &acme, "acme-us").await;
    let app = application(&h, &acme).await;
    set_user(&h, &acme, &ada, &["billing"]).await.unwrap();
    set_user(&h, &acme, &bob, &["billing"]).await.unwrap();
    add_member(&h, &acme, &org, &ada, &["auditor"])
        .await
        .unwrap();
    set_app(&h, &acme, &app, &["machines"]).await.unwrap();
    let events_before = events(&h, tenant, "admin.role.").await.len();
    let audit_before = h.audit(tenant).await.len();

    refused_while_held(&h, &acme, "billing", "2 holders").await;
    refused_while_held(&h, &acme, "auditor", "1 holder").await;
    refused_while_held(&h, &acme, "machines", "1 holder").await;
    assert_eq!(events(&h, tenant, "admin.role.").await.len(), events_before);
    assert_eq!(h.audit(tenant).await.len(), audit_before);

    // A person still holding it elsewhere keeps it from going.
    set_user(&h, &acme, &ada, &[]).await.unwrap();
    refused_while_held(&h, &acme, "billing", "1 holder").await;
    set_user(&h, &acme, &bob, &[TENANT_ADMIN]).await.unwrap();
    delete(&h, &acme, "billing").await.unwrap();
    assert_eq!(stored_grants(&h, tenant, "billing").await, 0);
    assert_eq!(
        keys(&users::roles(&h.ctx, tenant, &bob).await.unwrap()),
        [TENANT_ADMIN]
    );

    // Members: in two organizations, then none.
    add_member(&h, &acme, &other_org, &bob, &["auditor", "admin"])
        .await
        .unwrap();
    refused_while_held(&h, &acme, "auditor", "2 holders").await;
    re_role(&h, &acme, &org, &ada, &["member"]).await.unwrap();
    orgs::remove_member(
        &h.ctx,
        tenant,
        (&client_actor(&acme), &meta()),
        &svc_manage::Reach::Tenant,
        &other_org,
        &bob,
    )
    .await
    .unwrap();
    delete(&h, &acme, "auditor").await.unwrap();
    assert_eq!(stored_grants(&h, tenant, "auditor").await, 0);

    // Applications: deleting the application takes its roles with it.
    applications::delete(
        &h.ctx,
        tenant,
        &client_actor(&acme),
        &meta(),
        &app,
        &Precondition::None,
    )
    .await
    .unwrap();
    delete(&h, &acme, "machines").await.unwrap();
    let left = roles::list(&h.ctx, tenant, ISSUER).await.unwrap();
    assert_eq!(left.len(), 4, "only the built-in roles are left");
}

#[tokio::test]
async fn another_tenants_roles_and_applications_are_not_assignable() {
    on_both(across_tenants).await;
}

async fn across_tenants(h: Harness) {
    let acme = h.tenant("acme").await;
    let globex = h.tenant("globex").await;
    create(&h, &globex, new_role("theirs", "tenant", vec![]))
        .await
        .unwrap();
    create(&h, &globex, new_role("their-org", "organization", vec![]))
        .await
        .unwrap();
    let ada = person(&h, &acme, "ada@example.com").await;
    let org = organization(&h, &acme, "acme-eu").await;
    let app = application(&h, &acme).await;
    let their_app = application(&h, &globex).await;

    let err = set_user(&h, &acme, &ada, &["theirs"]).await.unwrap_err();
    assert!(invalid(&err).1.contains("unknown role \"theirs\""), "{err}");
    let err = add_member(&h, &acme, &org, &ada, &["their-org"])
        .await
        .unwrap_err();
    assert_eq!(invalid(&err).0, "roles");
    let err = set_app(&h, &acme, &app, &["theirs"]).await.unwrap_err();
    assert_eq!(invalid(&err).0, "roles");
    assert!(matches!(
        roles::application_roles(&h.ctx, &acme.tenant.id, &their_app).await,
        Err(ManageError::NotFound)
    ));
    assert!(matches!(
        set_app(&h, &acme, &their_app, &[]).await,
        Err(ManageError::NotFound)
    ));
    let unknown = ClientId::parse("app_01jd0000000000000000000000").unwrap();
    assert!(matches!(
        set_app(&h, &acme, &unknown, &[]).await,
        Err(ManageError::NotFound)
    ));
    assert!(
        h.audit(&acme.tenant.id)
            .await
            .iter()
            .all(|e| e.action != action::APPLICATION_ROLES_CHANGED)
    );
}

/// A deletion of `billing` left open (deleted, no holders counted), on PostgreSQL, where a
/// plain read does not wait for it.
async fn deletion_in_progress(h: &Harness, t: &CreatedTenant) -> Box<dyn svc_store::WriteTx> {
    let key = RoleKey::parse("billing").unwrap();
    let mut tx = h.ctx.store.write().await.unwrap();
    assert!(tx.delete_role(&t.tenant.id, &key).await.unwrap());
    assert_eq!(tx.role_holders(&t.tenant.id, &key).await.unwrap(), 0);
    tx
}

/// Gives `user` the role `billing` in a task of its own.
fn assign_concurrently(
    h: &Harness,
    t: &CreatedTenant,
    user: &UserId,
) -> tokio::task::JoinHandle<Result<BTreeSet<RoleKey>, ManageError>> {
    let (ctx, tenant, actor, user) = (
        h.ctx.clone(),
        t.tenant.id.clone(),
        client_actor(t),
        user.clone(),
    );
    tokio::spawn(async move {
        let input = RolesInput {
            roles: strings(&["billing"]),
        };
        users::set_roles(&ctx, &tenant, &actor, &meta(), &user, input).await
    })
}

#[tokio::test]
async fn an_assignment_racing_a_deletion_waits_for_its_outcome_on_postgres() {
    let h = crate::support::pg_harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    create(&h, &acme, new_role("billing", "tenant", vec![]))
        .await
        .unwrap();
    let ada = person(&h, &acme, "ada@example.com").await;
    let pause = std::time::Duration::from_millis(300);

    // The deletion commits: the waiting assignment then finds no such role.
    let deletion = deletion_in_progress(&h, &acme).await;
    let assignment = assign_concurrently(&h, &acme, &ada);
    tokio::time::sleep(pause).await;
    assert!(
        !assignment.is_finished(),
        "the assignment waits for the deletion"
    );
    deletion.commit().await.unwrap();
    let err = assignment.await.unwrap().unwrap_err();
    assert!(
        invalid(&err).1.contains("unknown role \"billing\""),
        "{err}"
    );
    assert!(users::roles(&h.ctx, tenant, &ada).await.unwrap().is_empty());

    // The deletion rolls back: the assignment lands, and the next deletion counts it.
    create(&h, &acme, new_role("billing", "tenant", vec![]))
        .await
        .unwrap();
    let deletion = deletion_in_progress(&h, &acme).await;
    let assignment = assign_concurrently(&h, &acme, &ada);
    tokio::time::sleep(pause).await;
    assert!(
        !assignment.is_finished(),
        "the assignment waits for the deletion"
    );
    drop(deletion);
    let held = assignment.await.unwrap().unwrap();
    assert_eq!(keys(&held), ["billing"]);
    assert!(matches!(
        delete(&h, &acme, "billing").await,
        Err(ManageError::Conflict(_))
    ));
}
