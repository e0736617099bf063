//! Tenant roles of people: read and replace them (`users::roles`, `users::set_roles`), each
//! change audited and announced with the actor, the same roles again writing nothing, every
//! refusal writing nothing; removal takes them away; `caller::standing` answers only for
//! people who can sign in.

use crate::support::{Harness, client_actor, harness, meta};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use svc_domain::{PasswordHash, RoleKey, TENANT_ADMIN, TenantId, User, UserId, UserStatus};
use svc_manage::audit::action;
use svc_manage::caller::Standing;
use svc_manage::control_plane::CreatedTenant;
use svc_manage::users::{self, MAX_TENANT_ROLES, NewUser, RolesInput};
use svc_manage::{Actor, ManageError, Precondition, Reach, caller};
use svc_store::UpdateOutcome;
use time::Duration;

const ISSUER: &str = "https://acme.example.com";
/// No `If-Match`.
const NONE: Precondition = Precondition::None;
/// The type of the events and audit entries of a change.
const CHANGED: &str = "tenant_user.roles_changed";

/// A pre-provisioned user of `t` (cannot sign in until they claim the account).
async fn person(h: &Harness, t: &CreatedTenant, email: &str) -> User {
    let input = NewUser {
        email: email.to_owned(),
        ..NewUser::default()
    };
    users::create(&h.ctx, &t.tenant, ISSUER, &client_actor(t), &meta(), input)
        .await
        .unwrap()
}

/// An active user of `t` (one who may sign in): pre-provisioned, then given a password and
/// activated in the store as claiming the account would.
async fn active_person(h: &Harness, t: &CreatedTenant, email: &str) -> User {
    let user = person(h, t, email).await;
    let active = User {
        status: UserStatus::Active,
        password_hash: Some(PasswordHash::new(
            "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".to_owned(),
        )),
        updated_at: user.updated_at + Duration::milliseconds(1),
        ..user.clone()
    };
    let mut tx = h.ctx.store.write().await.unwrap();
    assert_eq!(
        tx.update_user_if_unchanged(&active, user.updated_at)
            .await
            .unwrap(),
        UpdateOutcome::Applied
    );
    tx.commit().await.unwrap();
    active
}

fn input(roles: &[&str]) -> RolesInput {
    RolesInput {
        roles: roles.iter().map(|r| (*r).to_owned()).collect(),
    }
}

fn set_of(roles: &[&str]) -> BTreeSet<RoleKey> {
    roles.iter().map(|r| RoleKey::parse(r).unwrap()).collect()
}

async fn set(
    h: &Harness,
    t: &CreatedTenant,
    actor: &Actor,
    user: &UserId,
    roles: &[&str],
) -> Result<BTreeSet<RoleKey>, ManageError> {
    users::set_roles(&h.ctx, &t.tenant.id, actor, &meta(), user, input(roles)).await
}

async fn roles_of(h: &Harness, t: &CreatedTenant, user: &UserId) -> BTreeSet<RoleKey> {
    users::roles(&h.ctx, &t.tenant.id, user).await.unwrap()
}

/// The data of every `tenant_user.roles_changed` event of `tenant`, oldest first.
async fn role_events(h: &Harness, tenant: &TenantId) -> Vec<Value> {
    let mut tx = h.ctx.store.read().await.unwrap();
    let events = tx.events(tenant, None, 1000).await.unwrap();
    tx.finish().await.unwrap();
    events
        .into_iter()
        .filter(|e| e.event_type.as_str() == CHANGED)
        .map(|e| {
            let body: Value = serde_json::from_str(&e.body).unwrap();
            assert_eq!(body["type"], CHANGED);
            body["data"].clone()
        })
        .collect()
}

/// The `tenant_user.roles_changed` audit entries of `tenant`, newest first.
async fn role_audit(h: &Harness, tenant: &TenantId) -> Vec<svc_domain::AuditEntry> {
    h.audit(tenant)
        .await
        .into_iter()
        .filter(|e| e.action == action::TENANT_USER_ROLES_CHANGED)
        .collect()
}

fn invalid_roles(err: ManageError) -> String {
    match err {
        ManageError::Invalid { field, message } => {
            assert_eq!(field, "roles");
            message
        }
        other => panic!("expected Invalid naming roles, got {other:?}"),
    }
}

#[tokio::test]
async fn roles_are_set_read_audited_and_announced_with_the_actor() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let client = client_actor(&acme);
    let ada = person(&h, &acme, "ada@example.com").await;
    assert!(roles_of(&h, &acme, &ada.id).await.is_empty());

    // Repeats collapse.
    let held = set(&h, &acme, &client, &ada.id, &[TENANT_ADMIN, TENANT_ADMIN])
        .await
        .unwrap();
    assert_eq!(held, set_of(&[TENANT_ADMIN]));
    assert_eq!(roles_of(&h, &acme, &ada.id).await, held);
    assert_eq!(
        assert_single_audit(&h, tenant).await.actor,
        client.as_audit_string()
    );
    let entry = &role_audit(&h, tenant).await[0];
    assert_eq!(entry.action, "tenant_user.roles_changed");
    assert_eq!(entry.target.as_deref(), Some(ada.id.as_str()));
    assert_eq!(entry.request_id.as_deref(), Some("req-7f3a"));
    assert_eq!(entry.client_ip.as_deref(), Some("203.0.113.7"));
    assert_eq!(
        role_events(&h, tenant).await,
        vec![json!({
            "user_id": ada.id.as_str(),
            "roles": ["tenant_admin"],
            "previous_roles": [],
            "actor": client.as_audit_string(),
        })]
    );

    // A human administrator takes the role away again.
    let admin = Actor::User(active_person(&h, &acme, "root@example.com").await.id);
    let held = set(&h, &acme, &admin, &ada.id, &[]).await.unwrap();
    assert!(held.is_empty());
    assert!(roles_of(&h, &acme, &ada.id).await.is_empty());
    let audit = role_audit(&h, tenant).await;
    assert_eq!(audit.len(), 2);
    assert_eq!(audit[0].actor, admin.as_audit_string());
    assert!(
        audit[0].actor.starts_with("user:usr_"),
        "{}",
        audit[0].actor
    );
    assert_eq!(audit[0].target.as_deref(), Some(ada.id.as_str()));
    assert_eq!(
        role_events(&h, tenant).await[1],
        json!({
            "user_id": ada.id.as_str(),
            "roles": [],
            "previous_roles": ["tenant_admin"],
            "actor": admin.as_audit_string(),
        })
    );

    // A suspended person's roles can be changed too (they act again once reactivated).
    let bob = active_person(&h, &acme, "bob@example.com").await;
    users::suspend(&h.ctx, tenant, &client, &meta(), &bob.id, &NONE)
        .await
        .unwrap();
    set(&h, &acme, &client, &bob.id, &[TENANT_ADMIN])
        .await
        .unwrap();
    assert_eq!(roles_of(&h, &acme, &bob.id).await, set_of(&[TENANT_ADMIN]));
}

/// The one `tenant_user.roles_changed` audit entry of `tenant`.
async fn assert_single_audit(h: &Harness, tenant: &TenantId) -> svc_domain::AuditEntry {
    let mut audit = role_audit(h, tenant).await;
    assert_eq!(audit.len(), 1, "{audit:?}");
    audit.remove(0)
}

#[tokio::test]
async fn the_roles_held_already_write_nothing() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let client = client_actor(&acme);
    let ada = person(&h, &acme, "ada@example.com").await;

    // No role, and none asked for: nothing to write.
    assert!(
        set(&h, &acme, &client, &ada.id, &[])
            .await
            .unwrap()
            .is_empty()
    );
    assert!(role_audit(&h, tenant).await.is_empty());

    set(&h, &acme, &client, &ada.id, &[TENANT_ADMIN])
        .await
        .unwrap();
    for again in [&[TENANT_ADMIN][..], &[TENANT_ADMIN, TENANT_ADMIN][..]] {
        assert_eq!(
            set(&h, &acme, &client, &ada.id, again).await.unwrap(),
            set_of(&[TENANT_ADMIN])
        );
    }
    assert_eq!(
        role_audit(&h, tenant).await.len(),
        1,
        "no second audit entry"
    );
    assert_eq!(role_events(&h, tenant).await.len(), 1, "no second event");
}

#[tokio::test]
async fn refused_roles_name_the_field_and_write_nothing() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let client = client_actor(&acme);
    let ada = person(&h, &acme, "ada@example.com").await;
    set(&h, &acme, &client, &ada.id, &[TENANT_ADMIN])
        .await
        .unwrap();
    let audit_before = h.audit(tenant).await.len();
    let transactions_before = h.store.transactions();

    let seventeen = vec![TENANT_ADMIN; MAX_TENANT_ROLES + 1];
    let long = "r".repeat(5000);
    for roles in [
        vec!["owner"],
        vec!["admin"],
        vec!["member"],
        vec!["Tenant_Admin"],
        vec![" tenant_admin"],
        vec![""],
        vec![TENANT_ADMIN, "owner"],
        vec![long.as_str()],
        seventeen,
    ] {
        let message = invalid_roles(set(&h, &acme, &client, &ada.id, &roles).await.unwrap_err());
        assert!(
            message.contains("tenant roles are tenant_admin"),
            "{roles:?}: {message}"
        );
        assert!(message.len() < 200, "the echo is cut: {message}");
    }
    let message = invalid_roles(
        set(&h, &acme, &client, &ada.id, &["owner"])
            .await
            .unwrap_err(),
    );
    assert_eq!(
        message,
        "unknown role \"owner\"; tenant roles are tenant_admin"
    );
    assert_eq!(
        h.store.transactions(),
        transactions_before,
        "refused before any transaction"
    );
    // A well-formed key that is not built in could be a custom tenant role: the write
    // transaction tells it is none.
    let message = invalid_roles(
        set(&h, &acme, &client, &ada.id, &["tenant-admin"])
            .await
            .unwrap_err(),
    );
    assert!(
        message.starts_with("unknown role \"tenant-admin\"; tenant roles are tenant_admin"),
        "{message}"
    );
    assert_eq!(h.audit(tenant).await.len(), audit_before);
    assert_eq!(role_events(&h, tenant).await.len(), 1);
    assert_eq!(roles_of(&h, &acme, &ada.id).await, set_of(&[TENANT_ADMIN]));

    // 16 entries, all the one role, pass.
    let sixteen = vec![TENANT_ADMIN; MAX_TENANT_ROLES];
    assert_eq!(
        set(&h, &acme, &client, &ada.id, &sixteen).await.unwrap(),
        set_of(&[TENANT_ADMIN])
    );
}

#[tokio::test]
async fn removed_unknown_and_other_tenants_people_are_refused() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let globex = h.tenant("globex").await;
    let tenant = &acme.tenant.id;
    let client = client_actor(&acme);
    let ada = person(&h, &acme, "ada@example.com").await;
    let gus = person(&h, &globex, "gus@example.com").await;
    set(&h, &acme, &client, &ada.id, &[TENANT_ADMIN])
        .await
        .unwrap();
    users::remove(&h.ctx, tenant, &client, &meta(), &ada.id, &NONE)
        .await
        .unwrap();
    let audit_before = h.audit(tenant).await.len();
    let events_before = role_events(&h, tenant).await.len();

    // A removed person: Conflict, whatever the roles asked for.
    for roles in [&[TENANT_ADMIN][..], &[][..]] {
        let err = set(&h, &acme, &client, &ada.id, roles).await.unwrap_err();
        assert!(
            matches!(&err, ManageError::Conflict(m) if m.contains("removed")),
            "{err:?}"
        );
    }
    assert!(
        roles_of(&h, &acme, &ada.id).await.is_empty(),
        "a removed person's roles still read, as none"
    );

    // Another tenant's person, and an unknown id: NotFound, read or written.
    let unknown = UserId::parse("usr_01jd0000000000000000000000").unwrap();
    for id in [&gus.id, &unknown] {
        assert!(matches!(
            users::roles(&h.ctx, tenant, id).await,
            Err(ManageError::NotFound)
        ));
        assert!(matches!(
            set(&h, &acme, &client, id, &[TENANT_ADMIN]).await,
            Err(ManageError::NotFound)
        ));
    }
    assert_eq!(h.audit(tenant).await.len(), audit_before);
    assert_eq!(role_events(&h, tenant).await.len(), events_before);
    assert!(
        roles_of(&h, &globex, &gus.id).await.is_empty(),
        "gus was given nothing in his own tenant"
    );
    assert!(role_events(&h, &globex.tenant.id).await.is_empty());
}

#[tokio::test]
async fn removing_a_person_takes_their_roles_away() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let client = client_actor(&acme);
    let ada = active_person(&h, &acme, "ada@example.com").await;
    let bob = active_person(&h, &acme, "bob@example.com").await;
    let cy = person(&h, &acme, "cy@example.com").await;
    for id in [&ada.id, &bob.id] {
        set(&h, &acme, &client, id, &[TENANT_ADMIN]).await.unwrap();
    }

    // A failure clearing the roles rolls the whole removal back.
    h.store.fail_on(Some("set_user_roles"));
    let err = users::remove(&h.ctx, tenant, &client, &meta(), &ada.id, &NONE)
        .await
        .unwrap_err();
    assert!(matches!(err, ManageError::Unavailable(_)), "{err:?}");
    h.store.fail_on(None);
    assert_eq!(
        users::get(&h.ctx, tenant, &ada.id).await.unwrap().status,
        UserStatus::Active
    );
    assert_eq!(roles_of(&h, &acme, &ada.id).await, set_of(&[TENANT_ADMIN]));

    let admin = Actor::User(bob.id.clone());
    users::remove(&h.ctx, tenant, &admin, &meta(), &ada.id, &NONE)
        .await
        .unwrap();
    assert!(roles_of(&h, &acme, &ada.id).await.is_empty());
    assert_eq!(
        roles_of(&h, &acme, &bob.id).await,
        set_of(&[TENANT_ADMIN]),
        "only Ada's roles went"
    );
    assert_eq!(
        role_events(&h, tenant).await.last().unwrap(),
        &json!({
            "user_id": ada.id.as_str(),
            "roles": [],
            "previous_roles": ["tenant_admin"],
            "actor": admin.as_audit_string(),
        })
    );
    assert_eq!(
        caller::standing(&h.ctx, tenant, &ada.id, None)
            .await
            .unwrap(),
        Standing::Gone
    );

    // Removing a person without roles announces no role change.
    let before = role_events(&h, tenant).await.len();
    users::remove(&h.ctx, tenant, &client, &meta(), &cy.id, &NONE)
        .await
        .unwrap();
    assert_eq!(role_events(&h, tenant).await.len(), before);
}

#[tokio::test]
async fn standing_answers_only_for_people_who_can_sign_in() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let globex = h.tenant("globex").await;
    let tenant = &acme.tenant.id;
    let client = client_actor(&acme);
    let ada = active_person(&h, &acme, "ada@example.com").await;
    let bob = active_person(&h, &acme, "bob@example.com").await;
    let cy = person(&h, &acme, "cy@example.com").await;
    let gus = active_person(&h, &globex, "gus@example.com").await;
    for id in [&ada.id, &cy.id] {
        set(&h, &acme, &client, id, &[TENANT_ADMIN]).await.unwrap();
    }
    users::set_roles(
        &h.ctx,
        &globex.tenant.id,
        &client_actor(&globex),
        &meta(),
        &gus.id,
        input(&[TENANT_ADMIN]),
    )
    .await
    .unwrap();

    let ctx = &h.ctx;
    let human = |id: UserId| async move { caller::standing(ctx, tenant, &id, None).await.unwrap() };
    let transactions = h.store.transactions();
    assert_eq!(
        human(ada.id.clone()).await,
        Standing::Reaches(Reach::Tenant)
    );
    assert_eq!(
        h.store.transactions(),
        transactions + 1,
        "one read transaction"
    );
    assert_eq!(
        human(bob.id.clone()).await,
        Standing::Powerless,
        "may sign in, holds no tenant role"
    );
    assert_eq!(
        human(cy.id.clone()).await,
        Standing::Gone,
        "pre-provisioned: cannot sign in, whatever the roles"
    );
    assert_eq!(
        human(gus.id.clone()).await,
        Standing::Gone,
        "another tenant's person"
    );
    assert_eq!(
        human(UserId::parse("usr_01jd0000000000000000000000").unwrap()).await,
        Standing::Gone,
        "nobody"
    );

    // Suspended: None while suspended, the roles back once reactivated.
    users::suspend(&h.ctx, tenant, &client, &meta(), &ada.id, &NONE)
        .await
        .unwrap();
    assert_eq!(human(ada.id.clone()).await, Standing::Gone);
    users::reactivate(&h.ctx, tenant, &client, &meta(), &ada.id, &NONE)
        .await
        .unwrap();
    assert_eq!(
        human(ada.id.clone()).await,
        Standing::Reaches(Reach::Tenant)
    );

    // Roles taken away: the very next answer has none.
    set(&h, &acme, &client, &ada.id, &[]).await.unwrap();
    assert_eq!(human(ada.id.clone()).await, Standing::Powerless);

    // Removed: None.
    set(&h, &acme, &client, &ada.id, &[TENANT_ADMIN])
        .await
        .unwrap();
    users::remove(&h.ctx, tenant, &client, &meta(), &ada.id, &NONE)
        .await
        .unwrap();
    assert_eq!(human(ada.id.clone()).await, Standing::Gone);
}

#[tokio::test]
async fn a_change_that_fails_midway_leaves_the_roles_as_they_were() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let client = client_actor(&acme);
    let ada = person(&h, &acme, "ada@example.com").await;
    for failing in ["set_user_roles", "insert_audit", "insert_event"] {
        h.store.fail_on(Some(failing));
        let err = set(&h, &acme, &client, &ada.id, &[TENANT_ADMIN])
            .await
            .unwrap_err();
        assert!(
            matches!(err, ManageError::Unavailable(_)),
            "{failing}: {err:?}"
        );
        h.store.fail_on(None);
        assert!(roles_of(&h, &acme, &ada.id).await.is_empty(), "{failing}");
        assert!(role_audit(&h, tenant).await.is_empty(), "{failing}");
        assert!(role_events(&h, tenant).await.is_empty(), "{failing}");
    }
}
