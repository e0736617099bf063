//! Invitations end to end at the use-case level: created and mailed by the management use
//! cases, accepted through the sign-in engine's join use cases (as the hosted page calls them),
//! on SQLite and (where marked) PostgreSQL. Validation, conflicts, resend and revoke, expiry,
//! the address check, tenant isolation, and atomicity under an injected store failure.

use crate::support::{Harness, client_actor, harness, meta, pg_harness};
use crate::users::Engine;
use serde_json::Value;
use svc_authn::{ClientInfo, JoinError, Joiner};
use svc_domain::{InvitationId, InvitationState, OrganizationId, RoleKey, SecretHash, UserStatus};
use svc_manage::control_plane::CreatedTenant;
use svc_manage::invitations::{self, InvitationView, NewInvitation};
use svc_manage::organizations::{self, NewOrganization};
use svc_manage::roles::{self, NewRole};
use svc_manage::users::{self, NewUser};
use svc_manage::{ManageError, Precondition};
use svc_store::Store;
use time::Duration;

const ISSUER: &str = "https://acme.example.com";
const PW: &str = "correct horse battery";

fn browser() -> ClientInfo {
    ClientInfo {
        ip: Some("203.0.113.9".parse().unwrap()),
        user_agent: Some("test".into()),
        device: None,
    }
}

fn invite(email: &str, org: Option<&OrganizationId>, roles: Option<&[&str]>) -> NewInvitation {
    NewInvitation {
        email: email.to_owned(),
        organization_id: org.map(ToString::to_string),
        roles: roles.map(|r| r.iter().map(|s| (*s).to_owned()).collect()),
        expires_in_secs: None,
    }
}

async fn create(
    e: &Engine,
    t: &CreatedTenant,
    input: NewInvitation,
) -> Result<InvitationView, ManageError> {
    invitations::create(
        &e.ctx,
        &t.tenant,
        ISSUER,
        (&client_actor(t), &meta()),
        &svc_manage::Reach::Tenant,
        input,
    )
    .await
}

async fn org(e: &Engine, t: &CreatedTenant, slug: &str) -> OrganizationId {
    organizations::create(
        &e.ctx,
        &t.tenant.id,
        &client_actor(t),
        &meta(),
        NewOrganization {
            name: format!("Org {slug}"),
            slug: slug.to_owned(),
            metadata: None,
        },
    )
    .await
    .unwrap()
    .id
}

/// The token of the newest mail to `to`, and the mail.
async fn link_to(e: &Engine, to: &str) -> (String, Value) {
    let mails = e.mails().await;
    let mail = mails
        .iter()
        .rev()
        .find(|m| m["to"] == to)
        .unwrap_or_else(|| panic!("no mail to {to}: {mails:?}"))
        .clone();
    let link = mail["link"].as_str().unwrap();
    let token = link
        .strip_prefix(&format!("{ISSUER}/auth/join?token="))
        .unwrap_or_else(|| panic!("not a join link: {link}"));
    assert!(token.starts_with("join_"), "{token}");
    (token.to_owned(), mail)
}

fn field(err: ManageError) -> String {
    match err {
        ManageError::Invalid { field, .. } => field,
        other => panic!("expected Invalid, got {other:?}"),
    }
}

fn id(view: &InvitationView) -> InvitationId {
    InvitationId::parse(&view.id).unwrap()
}

#[tokio::test]
async fn an_organization_invitation_is_mailed_and_accepted_with_a_new_account() {
    accepted_with_a_new_account(harness().await).await;
}

#[tokio::test]
async fn an_organization_invitation_is_accepted_with_a_new_account_on_postgres() {
    accepted_with_a_new_account(pg_harness().await).await;
}

async fn accepted_with_a_new_account(h: Harness) {
    let e = Engine::new(&h).await;
    let t = h.tenant("acme").await;
    let globex = org(&e, &t, "globex").await;
    let view = create(
        &e,
        &t,
        invite(" Ada@Example.com ", Some(&globex), Some(&["admin"])),
    )
    .await
    .unwrap();
    assert_eq!(view.email, "ada@example.com");
    assert_eq!(view.roles, ["admin"]);
    assert_eq!(view.status, "pending");
    assert_eq!(view.organization_id.as_deref(), Some(globex.as_str()));
    assert_eq!(view.invited_by, client_actor(&t).as_audit_string());
    assert_eq!(view.expires_at - view.created_at, Duration::days(7));
    let (token, mail) = link_to(&e, "ada@example.com").await;
    assert!(
        mail["subject"].as_str().unwrap().contains("Org globex"),
        "{mail}"
    );
    assert!(mail["text"].as_str().unwrap().contains("7 days"), "{mail}");
    let audit = h.audit(&t.tenant.id).await;
    assert_eq!(audit[0].action, "invitation.created");
    assert_eq!(audit[0].target.as_deref(), Some(view.id.as_str()));

    let offer = e.authn.join_offer(&t.tenant, &token, None).await.unwrap();
    assert_eq!(offer.joiner, Joiner::Newcomer);
    assert_eq!(offer.organization.unwrap().id, globex);
    // A weak password leaves the link usable.
    assert!(matches!(
        e.authn
            .join_with_new_account(&t.tenant, &token, "short", None, &browser())
            .await,
        Err(JoinError::Authn(svc_authn::AuthnError::WeakPassword(_)))
    ));
    let signed_in = e
        .authn
        .join_with_new_account(&t.tenant, &token, PW, Some(" Ada "), &browser())
        .await
        .unwrap();
    let ada = signed_in.user;
    assert_eq!(ada.status, UserStatus::Active);
    assert!(ada.email_verified, "the mailed link proves the address");
    assert_eq!(ada.name.as_deref(), Some("Ada"));
    let members = organizations::list_members(&e.ctx, &t.tenant.id, &globex, None, None)
        .await
        .unwrap()
        .0;
    assert_eq!(members.len(), 1);
    assert_eq!(members[0].user_id, ada.id);
    assert_eq!(members[0].roles, [RoleKey::parse("admin").unwrap()].into());
    let read = invitations::get(&e.ctx, &t.tenant.id, &id(&view))
        .await
        .unwrap();
    assert_eq!(read.status, "accepted");
    assert_eq!(read.accepted_by.as_deref(), Some(ada.id.as_str()));
    assert!(read.accepted_at.is_some());
    let actions: Vec<String> = h
        .audit(&t.tenant.id)
        .await
        .iter()
        .map(|a| a.action.clone())
        .collect();
    assert!(
        actions.contains(&"invitation.accepted".to_owned()),
        "{actions:?}"
    );
    assert!(
        actions.contains(&"organization.member_added".to_owned()),
        "{actions:?}"
    );

    // The link works once.
    assert!(matches!(
        e.authn.join_offer(&t.tenant, &token, None).await,
        Err(JoinError::Gone(InvitationState::Accepted))
    ));
    assert!(matches!(
        e.authn
            .join_with_new_account(&t.tenant, &token, PW, None, &browser())
            .await,
        Err(JoinError::Gone(InvitationState::Accepted))
    ));
    // Accepted is final.
    assert!(matches!(
        invitations::revoke(
            &e.ctx,
            &t.tenant.id,
            (&client_actor(&t), &meta()),
            &svc_manage::Reach::Tenant,
            &id(&view),
            &Precondition::None
        )
        .await,
        Err(ManageError::Conflict(_))
    ));
    // Now a member: inviting again is a conflict.
    assert!(matches!(
        create(&e, &t, invite("ada@example.com", Some(&globex), None)).await,
        Err(ManageError::Conflict(_))
    ));
}

#[tokio::test]
async fn a_signed_in_person_accepts_tenant_roles_and_another_address_is_refused() {
    let h = harness().await;
    let e = Engine::new(&h).await;
    let t = h.tenant("acme").await;
    let actor = client_actor(&t);
    let new_user = |email: &str| NewUser {
        email: email.to_owned(),
        password: Some(PW.to_owned()),
        ..NewUser::default()
    };
    let bob = users::create(
        &e.ctx,
        &t.tenant,
        ISSUER,
        &actor,
        &meta(),
        new_user("bob@example.com"),
    )
    .await
    .unwrap();
    let eve = users::create(
        &e.ctx,
        &t.tenant,
        ISSUER,
        &actor,
        &meta(),
        new_user("eve@example.com"),
    )
    .await
    .unwrap();
    create(
        &e,
        &t,
        invite("BOB@example.com", None, Some(&["tenant_admin"])),
    )
    .await
    .unwrap();
    let (token, _) = link_to(&e, "bob@example.com").await;

    // Eve holds the link but is not Bob: refused, nothing changes.
    assert!(matches!(
        e.authn.join_offer(&t.tenant, &token, Some(&eve)).await,
        Err(JoinError::OtherAddress)
    ));
    assert!(matches!(
        e.authn.join_signed_in(&t.tenant, &token, &eve.id).await,
        Err(JoinError::OtherAddress)
    ));
    assert!(
        users::roles(&e.ctx, &t.tenant.id, &eve.id)
            .await
            .unwrap()
            .is_empty()
    );
    // Not signed in, Bob's account exists: sign in first.
    assert!(matches!(
        e.authn.join_offer(&t.tenant, &token, None).await,
        Err(JoinError::SignInFirst)
    ));
    assert!(matches!(
        e.authn
            .join_with_new_account(&t.tenant, &token, PW, None, &browser())
            .await,
        Err(JoinError::SignInFirst)
    ));
    let offer = e
        .authn
        .join_offer(&t.tenant, &token, Some(&bob))
        .await
        .unwrap();
    assert_eq!(offer.joiner, Joiner::Invitee);
    let accepted = e
        .authn
        .join_signed_in(&t.tenant, &token, &bob.id)
        .await
        .unwrap();
    assert_eq!(accepted.accepted_by, Some(bob.id.clone()));
    let roles = users::roles(&e.ctx, &t.tenant.id, &bob.id).await.unwrap();
    assert_eq!(roles, [RoleKey::parse("tenant_admin").unwrap()].into());
    assert!(matches!(
        e.authn.join_signed_in(&t.tenant, &token, &bob.id).await,
        Err(JoinError::Gone(InvitationState::Accepted))
    ));
    // A suspended person's invitation cannot be accepted, nor an account made for the address.
    let sam = users::create(
        &e.ctx,
        &t.tenant,
        ISSUER,
        &actor,
        &meta(),
        new_user("sam@example.com"),
    )
    .await
    .unwrap();
    create(
        &e,
        &t,
        invite("sam@example.com", None, Some(&["tenant_admin"])),
    )
    .await
    .unwrap();
    let (sam_token, _) = link_to(&e, "sam@example.com").await;
    users::suspend(
        &e.ctx,
        &t.tenant.id,
        &actor,
        &meta(),
        &sam.id,
        &Precondition::None,
    )
    .await
    .unwrap();
    assert!(matches!(
        e.authn.join_offer(&t.tenant, &sam_token, None).await,
        Err(JoinError::Refused)
    ));
    assert!(matches!(
        e.authn
            .join_with_new_account(&t.tenant, &sam_token, PW, None, &browser())
            .await,
        Err(JoinError::Refused)
    ));
    assert!(matches!(
        e.authn.join_signed_in(&t.tenant, &sam_token, &sam.id).await,
        Err(JoinError::Refused)
    ));
    // Holding every role offered already: a conflict.
    assert!(matches!(
        create(
            &e,
            &t,
            invite("bob@example.com", None, Some(&["tenant_admin"]))
        )
        .await,
        Err(ManageError::Conflict(_))
    ));
}

#[tokio::test]
async fn every_refused_field_is_named() {
    let h = harness().await;
    let e = Engine::new(&h).await;
    let t = h.tenant("acme").await;
    let other = h.tenant("other").await;
    let globex = org(&e, &t, "globex").await;
    let foreign = org(&e, &other, "foreign").await;
    let suspended = org(&e, &t, "sleepy").await;
    organizations::suspend(
        &e.ctx,
        &t.tenant.id,
        &client_actor(&t),
        &meta(),
        &suspended,
        &Precondition::None,
    )
    .await
    .unwrap();
    roles::create(
        &e.ctx,
        &t.tenant.id,
        &client_actor(&t),
        &meta(),
        NewRole {
            key: "auditor".into(),
            kind: "tenant".into(),
            description: None,
            permissions: None,
        },
    )
    .await
    .unwrap();
    let unknown_org = OrganizationId::parse("org_01jd2n4k6m8p0r2t4v6x8z0b2d").unwrap();
    let cases: Vec<(NewInvitation, &str)> = vec![
        (invite("not-an-address", None, None), "email"),
        (
            invite("ada@example.com", Some(&foreign), None),
            "organization_id",
        ),
        (
            invite("ada@example.com", Some(&suspended), None),
            "organization_id",
        ),
        (
            invite("ada@example.com", Some(&unknown_org), None),
            "organization_id",
        ),
        (
            NewInvitation {
                organization_id: Some("nope".into()),
                ..invite("ada@example.com", None, None)
            },
            "organization_id",
        ),
        (
            invite("ada@example.com", Some(&globex), Some(&["tenant_admin"])),
            "roles",
        ),
        (
            invite("ada@example.com", Some(&globex), Some(&["auditor"])),
            "roles",
        ),
        (
            invite("ada@example.com", Some(&globex), Some(&["ghost"])),
            "roles",
        ),
        (invite("ada@example.com", Some(&globex), Some(&[])), "roles"),
        (invite("ada@example.com", None, Some(&["owner"])), "roles"),
        (invite("ada@example.com", None, Some(&["ghost"])), "roles"),
        (
            NewInvitation {
                expires_in_secs: Some(299),
                ..invite("ada@example.com", None, None)
            },
            "expires_in_secs",
        ),
        (
            NewInvitation {
                expires_in_secs: Some(30 * 86_400 + 1),
                ..invite("ada@example.com", None, None)
            },
            "expires_in_secs",
        ),
    ];
    let audit_before = h.audit(&t.tenant.id).await.len();
    for (input, expected) in cases {
        let what = format!("{input:?}");
        assert_eq!(
            field(create(&e, &t, input).await.unwrap_err()),
            expected,
            "{what}"
        );
    }
    assert_eq!(
        h.audit(&t.tenant.id).await.len(),
        audit_before,
        "nothing written"
    );
    // A custom tenant role passes for the tenant.
    create(
        &e,
        &t,
        invite("ada@example.com", None, Some(&["auditor", "tenant_admin"])),
    )
    .await
    .unwrap();
    // One pending invitation per address and target, whatever the case.
    assert!(matches!(
        create(&e, &t, invite("ADA@example.com", None, None)).await,
        Err(ManageError::Conflict(_))
    ));
    create(&e, &t, invite("ada@example.com", Some(&globex), None))
        .await
        .unwrap();
}

#[tokio::test]
async fn resend_replaces_the_link_and_revoke_ends_it() {
    let h = harness().await;
    let e = Engine::new(&h).await;
    let t = h.tenant("acme").await;
    let who = (&client_actor(&t), &meta());
    let view = create(&e, &t, invite("ada@example.com", None, None))
        .await
        .unwrap();
    let (first, _) = link_to(&e, "ada@example.com").await;
    let resent = invitations::resend(
        &e.ctx,
        &t.tenant,
        ISSUER,
        who,
        &svc_manage::Reach::Tenant,
        &id(&view),
        &Precondition::None,
    )
    .await
    .unwrap();
    assert!(resent.updated_at > view.updated_at);
    let (second, _) = link_to(&e, "ada@example.com").await;
    assert_ne!(first, second);
    assert!(matches!(
        e.authn.join_offer(&t.tenant, &first, None).await,
        Err(JoinError::Unknown)
    ));
    e.authn.join_offer(&t.tenant, &second, None).await.unwrap();
    // A stale If-Match is refused.
    let stale = Precondition::OneOf(vec![Some(svc_manage::Revision::of(view.updated_at))]);
    assert!(matches!(
        invitations::revoke(
            &e.ctx,
            &t.tenant.id,
            who,
            &svc_manage::Reach::Tenant,
            &id(&view),
            &stale
        )
        .await,
        Err(ManageError::PreconditionFailed)
    ));
    invitations::revoke(
        &e.ctx,
        &t.tenant.id,
        who,
        &svc_manage::Reach::Tenant,
        &id(&view),
        &Precondition::None,
    )
    .await
    .unwrap();
    assert!(matches!(
        e.authn.join_offer(&t.tenant, &second, None).await,
        Err(JoinError::Gone(InvitationState::Revoked))
    ));
    assert_eq!(
        invitations::get(&e.ctx, &t.tenant.id, &id(&view))
            .await
            .unwrap()
            .status,
        "revoked"
    );
    for result in [
        invitations::revoke(
            &e.ctx,
            &t.tenant.id,
            who,
            &svc_manage::Reach::Tenant,
            &id(&view),
            &Precondition::None,
        )
        .await,
        invitations::resend(
            &e.ctx,
            &t.tenant,
            ISSUER,
            who,
            &svc_manage::Reach::Tenant,
            &id(&view),
            &Precondition::None,
        )
        .await
        .map(|_| ()),
    ] {
        assert!(
            matches!(result, Err(ManageError::Conflict(_))),
            "{result:?}"
        );
    }
    let actions: Vec<String> = h
        .audit(&t.tenant.id)
        .await
        .iter()
        .map(|a| a.action.clone())
        .collect();
    assert_eq!(
        actions[..3],
        [
            "invitation.revoked",
            "invitation.resent",
            "invitation.created"
        ]
    );
    // Another tenant's invitation is not found.
    let other = h.tenant("other").await;
    assert!(matches!(
        invitations::get(&e.ctx, &other.tenant.id, &id(&view)).await,
        Err(ManageError::NotFound)
    ));
    assert!(matches!(
        invitations::revoke(
            &e.ctx,
            &other.tenant.id,
            who,
            &svc_manage::Reach::Tenant,
            &id(&view),
            &Precondition::None
        )
        .await,
        Err(ManageError::NotFound)
    ));
    assert!(matches!(
        e.authn.join_offer(&other.tenant, &second, None).await,
        Err(JoinError::Unknown)
    ));
}

#[tokio::test]
async fn an_expired_invitation_is_refused_until_resent_and_listed_by_state() {
    let h = harness().await;
    let e = Engine::new(&h).await;
    let t = h.tenant("acme").await;
    let globex = org(&e, &t, "globex").await;
    let short = create(
        &e,
        &t,
        NewInvitation {
            expires_in_secs: Some(300),
            ..invite("ada@example.com", Some(&globex), None)
        },
    )
    .await
    .unwrap();
    let (token, mail) = link_to(&e, "ada@example.com").await;
    assert!(
        mail["text"].as_str().unwrap().contains("5 minutes"),
        "{mail}"
    );
    let long = create(&e, &t, invite("bob@example.com", None, None))
        .await
        .unwrap();
    h.clock.advance(Duration::minutes(6));
    assert_eq!(
        invitations::get(&e.ctx, &t.tenant.id, &id(&short))
            .await
            .unwrap()
            .status,
        "expired"
    );
    assert!(matches!(
        e.authn.join_offer(&t.tenant, &token, None).await,
        Err(JoinError::Gone(InvitationState::Expired))
    ));
    assert!(matches!(
        e.authn
            .join_with_new_account(&t.tenant, &token, PW, None, &browser())
            .await,
        Err(JoinError::Gone(InvitationState::Expired))
    ));
    let list = |org: Option<OrganizationId>, state: Option<InvitationState>| {
        let ctx = e.ctx.clone();
        let tenant = t.tenant.id.clone();
        async move {
            invitations::list(&ctx, &tenant, (org, state), None, None, None)
                .await
                .unwrap()
                .0
                .into_iter()
                .map(|v| v.id)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        list(None, None).await,
        [short.id.as_str(), long.id.as_str()]
    );
    assert_eq!(list(Some(globex.clone()), None).await, [short.id.as_str()]);
    assert_eq!(
        list(None, Some(InvitationState::Expired)).await,
        [short.id.as_str()]
    );
    assert_eq!(
        list(None, Some(InvitationState::Pending)).await,
        [long.id.as_str()]
    );
    let who = (&client_actor(&t), &meta());
    let revived = invitations::resend(
        &e.ctx,
        &t.tenant,
        ISSUER,
        who,
        &svc_manage::Reach::Tenant,
        &id(&short),
        &Precondition::None,
    )
    .await
    .unwrap();
    assert_eq!(revived.status, "pending");
    assert_eq!(
        revived.expires_at - revived.updated_at,
        Duration::minutes(5)
    );
    let (fresh, _) = link_to(&e, "ada@example.com").await;
    e.authn
        .join_with_new_account(&t.tenant, &fresh, PW, None, &browser())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_failed_write_leaves_nothing_behind() {
    let h = harness().await;
    let e = Engine::new(&h).await;
    let t = h.tenant("acme").await;
    let globex = org(&e, &t, "globex").await;
    h.store.fail_on(Some("insert_invitation"));
    assert!(matches!(
        create(&e, &t, invite("ada@example.com", Some(&globex), None)).await,
        Err(ManageError::Unavailable(_))
    ));
    h.store.fail_on(None);
    assert!(
        e.mails().await.is_empty(),
        "no mail for a rolled-back invitation"
    );
    assert!(
        invitations::list(&e.ctx, &t.tenant.id, (None, None), None, None, None)
            .await
            .unwrap()
            .0
            .is_empty()
    );
    create(&e, &t, invite("ada@example.com", Some(&globex), None))
        .await
        .unwrap();
    let (token, _) = link_to(&e, "ada@example.com").await;
    // The acceptance fails at its last write: no account, no membership, the link still works.
    h.store.fail_on(Some("accept_invitation"));
    assert!(
        e.authn
            .join_with_new_account(&t.tenant, &token, PW, None, &browser())
            .await
            .is_err()
    );
    h.store.fail_on(None);
    let found = users::list(
        &e.ctx,
        &t.tenant.id,
        &svc_store::UserFilter::default(),
        None,
        None,
        None,
    )
    .await
    .unwrap()
    .0;
    assert!(found.is_empty(), "{found:?}");
    assert!(
        organizations::list_members(&e.ctx, &t.tenant.id, &globex, None, None)
            .await
            .unwrap()
            .0
            .is_empty()
    );
    e.authn
        .join_with_new_account(&t.tenant, &token, PW, None, &browser())
        .await
        .unwrap();
    // The link's hash, never the secret, is what is stored.
    let mut tx = h.store.read().await.unwrap();
    assert!(
        tx.invitation_by_token(&t.tenant.id, &SecretHash::of(&token))
            .await
            .unwrap()
            .is_some()
    );
    tx.finish().await.unwrap();
}
