//! Organization use cases: create, list, read, change, suspend, reactivate and delete an
//! organization; add, list, re-role and remove its members; a person's memberships. Each write
//! leaves its audit entry and its `org.*` event; every refusal writes nothing; another tenant's
//! ids read as absent.

use crate::support::{Harness, client_actor, harness, meta};
use serde_json::{Map, Value, json};
use svc_domain::{Membership, OrgStatus, Organization, OrganizationId, TenantId, User, UserId};
use svc_manage::audit::action;
use svc_manage::control_plane::CreatedTenant;
use svc_manage::organizations::{
    self as orgs, MAX_MEMBERSHIPS_PER_USER, MemberPatch, NewMember, NewOrganization,
    OrganizationPatch,
};
use svc_manage::users::{self, NewUser};
use svc_manage::{ManageError, Precondition, Revision};

const ISSUER: &str = "https://acme.example.com";
/// No `If-Match`.
const NONE: Precondition = Precondition::None;

fn new_org(name: &str, slug: &str) -> NewOrganization {
    NewOrganization {
        name: name.to_owned(),
        slug: slug.to_owned(),
        metadata: None,
    }
}

async fn create(h: &Harness, t: &CreatedTenant, input: NewOrganization) -> Organization {
    orgs::create(&h.ctx, &t.tenant.id, &client_actor(t), &meta(), input)
        .await
        .unwrap()
}

/// A pre-provisioned user of `t`.
async fn person(h: &Harness, t: &CreatedTenant, email: &str) -> User {
    let input = NewUser {
        email: email.to_owned(),
        ..NewUser::default()
    };
    users::create(&h.ctx, &t.tenant, ISSUER, &client_actor(t), &meta(), input)
        .await
        .unwrap()
}

fn member(user: &UserId, roles: Option<&[&str]>) -> NewMember {
    NewMember {
        user_id: user.to_string(),
        roles: roles.map(|r| r.iter().map(|s| (*s).to_owned()).collect()),
    }
}

async fn add(
    h: &Harness,
    t: &CreatedTenant,
    org: &OrganizationId,
    input: NewMember,
) -> Result<Membership, ManageError> {
    orgs::add_member(
        &h.ctx,
        &t.tenant.id,
        (&client_actor(t), &meta()),
        &svc_manage::Reach::Tenant,
        org,
        input,
    )
    .await
}

fn roles_of(m: &Membership) -> Vec<&str> {
    m.roles.iter().map(|r| r.as_str()).collect()
}

/// `(type, data)` of every event recorded for `tenant` whose type starts with `org.`, oldest
/// first.
async fn org_events(h: &Harness, tenant: &TenantId) -> Vec<(String, Value)> {
    let mut tx = h.ctx.store.read().await.unwrap();
    let events = tx.events(tenant, None, 1000).await.unwrap();
    tx.finish().await.unwrap();
    events
        .into_iter()
        .filter(|e| e.event_type.as_str().starts_with("org."))
        .map(|e| {
            let body: Value = serde_json::from_str(&e.body).unwrap();
            assert_eq!(body["type"], e.event_type.as_str());
            (e.event_type.as_str().to_owned(), body["data"].clone())
        })
        .collect()
}

/// `r` without its value.
fn unit<T>(r: Result<T, ManageError>) -> Result<(), ManageError> {
    r.map(|_| ())
}

/// The invalid field of `err`.
fn invalid_field(err: &ManageError) -> &str {
    match err {
        ManageError::Invalid { field, .. } => field,
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[tokio::test]
async fn organizations_are_created_read_listed_and_audited() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    let input = NewOrganization {
        name: "  Acme Europe ".to_owned(),
        slug: "acme-eu".to_owned(),
        metadata: Some(
            json!({"plan": "enterprise", "seats": 40})
                .as_object()
                .unwrap()
                .clone(),
        ),
    };
    let eu = create(&h, &acme, input).await;
    assert!(eu.id.as_str().starts_with("org_"));
    assert_eq!(eu.name, "Acme Europe", "trimmed");
    assert_eq!(eu.slug.as_str(), "acme-eu");
    assert_eq!(eu.status, OrgStatus::Active);
    assert_eq!(eu.metadata["seats"], 40);
    assert_eq!(eu.created_at, eu.updated_at);
    assert_eq!(orgs::get(&h.ctx, tenant, &eu.id).await.unwrap(), eu);

    let audit = h.audit(tenant).await;
    assert_eq!(audit[0].action, action::ORGANIZATION_CREATED);
    assert_eq!(audit[0].target.as_deref(), Some(eu.id.as_str()));
    assert_eq!(audit[0].actor, actor.as_audit_string());
    assert_eq!(audit[0].request_id.as_deref(), Some("req-7f3a"));
    let events = org_events(&h, tenant).await;
    assert_eq!(
        events,
        vec![(
            "org.created".to_owned(),
            json!({
                "organization_id": eu.id.as_str(),
                "slug": "acme-eu",
                "name": "Acme Europe",
                "status": "active",
                "actor": actor.as_audit_string(),
            })
        )]
    );

    // Without metadata: an empty object.
    let us = create(&h, &acme, new_org("Acme US", "acme-us")).await;
    assert!(us.metadata.is_empty());
    let apac = create(&h, &acme, new_org("Acme APAC", "acme-apac")).await;

    // Pages, oldest first by default, newest first on request.
    let (page, next) = orgs::list(&h.ctx, tenant, None, None, Some(2))
        .await
        .unwrap();
    assert_eq!(page, vec![eu.clone(), us.clone()]);
    assert_eq!(next.as_ref(), Some(&us.id));
    let (rest, next) = orgs::list(&h.ctx, tenant, next.as_ref(), None, Some(2))
        .await
        .unwrap();
    assert_eq!(rest, vec![apac.clone()]);
    assert_eq!(next, None);
    let (newest, _) = orgs::list(
        &h.ctx,
        tenant,
        None,
        Some(svc_store::Order::Descending),
        None,
    )
    .await
    .unwrap();
    let ids: Vec<&OrganizationId> = newest.iter().map(|o| &o.id).collect();
    assert_eq!(ids, [&apac.id, &us.id, &eu.id]);
}

#[tokio::test]
async fn refused_organizations_name_the_field_and_write_nothing() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    create(&h, &acme, new_org("Acme", "acme")).await;
    let audit_before = h.audit(tenant).await.len();
    let events_before = org_events(&h, tenant).await.len();

    let meta_of = |v: Value| Some(v.as_object().unwrap().clone());
    let big = json!({"blob": "x".repeat(4100)});
    let deep = json!({"a": {"b": {"c": {"d": {"e": {"f": 1}}}}}});
    for (input, field) in [
        (new_org("", "a"), "name"),
        (new_org("   ", "a"), "name"),
        (new_org(&"n".repeat(201), "a"), "name"),
        (new_org("bell\u{7}", "a"), "name"),
        (new_org("Line\nbreak", "a"), "name"),
        (new_org("Acme", "Acme"), "slug"),
        (new_org("Acme", "-acme"), "slug"),
        (new_org("Acme", "ac_me"), "slug"),
        (new_org("Acme", &"a".repeat(64)), "slug"),
        (
            NewOrganization {
                metadata: meta_of(big),
                ..new_org("Acme", "b")
            },
            "metadata",
        ),
        (
            NewOrganization {
                metadata: meta_of(deep),
                ..new_org("Acme", "b")
            },
            "metadata",
        ),
    ] {
        let err = orgs::create(&h.ctx, tenant, &client_actor(&acme), &meta(), input.clone())
            .await
            .unwrap_err();
        assert_eq!(invalid_field(&err), field, "{input:?}");
    }
    // Five levels is the most, and 4096 bytes.
    let five = json!({"a": {"b": {"c": {"d": [1, 2]}}}});
    let ok = NewOrganization {
        metadata: meta_of(five.clone()),
        ..new_org("Deep", "deep")
    };
    let deep_ok = create(&h, &acme, ok).await;
    assert_eq!(Value::Object(deep_ok.metadata.clone()), five);

    let err = orgs::create(
        &h.ctx,
        tenant,
        &client_actor(&acme),
        &meta(),
        new_org("Other", "acme"),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, ManageError::Conflict(m) if m.contains("slug")),
        "{err:?}"
    );

    let (all, _) = orgs::list(&h.ctx, tenant, None, None, None).await.unwrap();
    assert_eq!(all.len(), 2, "only acme and deep");
    assert_eq!(h.audit(tenant).await.len(), audit_before + 1);
    assert_eq!(org_events(&h, tenant).await.len(), events_before + 1);

    // A slug is unique per tenant only.
    let globex = h.tenant("globex").await;
    create(&h, &globex, new_org("Acme at Globex", "acme")).await;
}

#[tokio::test]
async fn a_write_that_fails_midway_leaves_nothing_behind() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    h.store.fail_on(Some("insert_audit"));
    let err = orgs::create(
        &h.ctx,
        tenant,
        &client_actor(&acme),
        &meta(),
        new_org("Acme", "acme"),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ManageError::Unavailable(_)), "{err:?}");
    h.store.fail_on(None);
    assert!(
        orgs::list(&h.ctx, tenant, None, None, None)
            .await
            .unwrap()
            .0
            .is_empty()
    );
    assert!(org_events(&h, tenant).await.is_empty());

    let org = create(&h, &acme, new_org("Acme", "acme")).await;
    let ada = person(&h, &acme, "ada@example.com").await;
    h.store.fail_on(Some("insert_event"));
    let err = add(&h, &acme, &org.id, member(&ada.id, None))
        .await
        .unwrap_err();
    assert!(matches!(err, ManageError::Unavailable(_)), "{err:?}");
    h.store.fail_on(None);
    let (members, _) = orgs::list_members(&h.ctx, tenant, &org.id, None, None)
        .await
        .unwrap();
    assert!(members.is_empty());
}

#[tokio::test]
async fn updates_change_only_what_is_sent_and_honour_the_revision() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    let org = create(
        &h,
        &acme,
        NewOrganization {
            metadata: Some(json!({"plan": "team"}).as_object().unwrap().clone()),
            ..new_org("Acme", "acme")
        },
    )
    .await;
    create(&h, &acme, new_org("Taken", "taken")).await;
    let update = |patch: OrganizationPatch, pre: Precondition| {
        let (ctx, actor, id) = (h.ctx.clone(), actor.clone(), org.id.clone());
        async move { orgs::update(&ctx, tenant, &actor, &meta(), &id, patch, &pre).await }
    };

    // Name only: the slug and metadata stay.
    let renamed = update(
        OrganizationPatch {
            name: Some(Some(" Acme Corp ".to_owned())),
            ..OrganizationPatch::default()
        },
        Precondition::OneOf(vec![Some(Revision::of(org.updated_at))]),
    )
    .await
    .unwrap();
    assert_eq!(renamed.name, "Acme Corp");
    assert_eq!(renamed.slug, org.slug);
    assert_eq!(renamed.metadata, org.metadata);
    assert!(renamed.updated_at > org.updated_at);
    assert_eq!(orgs::get(&h.ctx, tenant, &org.id).await.unwrap(), renamed);

    // The old revision is stale now: nothing is written.
    let err = update(
        OrganizationPatch {
            name: Some(Some("Mallory".to_owned())),
            ..OrganizationPatch::default()
        },
        Precondition::OneOf(vec![Some(Revision::of(org.updated_at))]),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ManageError::PreconditionFailed), "{err:?}");

    // Slug and metadata: metadata replaces the whole object; `null` empties it.
    let moved = update(
        OrganizationPatch {
            slug: Some(Some("acme-corp".to_owned())),
            metadata: Some(Some(json!({"tier": 2}).as_object().unwrap().clone())),
            ..OrganizationPatch::default()
        },
        NONE,
    )
    .await
    .unwrap();
    assert_eq!(moved.slug.as_str(), "acme-corp");
    assert_eq!(Value::Object(moved.metadata.clone()), json!({"tier": 2}));
    let emptied = update(
        OrganizationPatch {
            metadata: Some(None),
            ..OrganizationPatch::default()
        },
        Precondition::Exists,
    )
    .await
    .unwrap();
    assert!(emptied.metadata.is_empty());

    // Nothing new: nothing written, no event.
    let events_before = org_events(&h, tenant).await.len();
    let same = update(
        OrganizationPatch {
            name: Some(Some("Acme Corp".to_owned())),
            ..OrganizationPatch::default()
        },
        NONE,
    )
    .await
    .unwrap();
    assert_eq!(same, emptied);
    assert_eq!(org_events(&h, tenant).await.len(), events_before);

    // Refusals.
    for (patch, field) in [
        (
            OrganizationPatch {
                name: Some(None),
                ..OrganizationPatch::default()
            },
            "name",
        ),
        (
            OrganizationPatch {
                slug: Some(None),
                ..OrganizationPatch::default()
            },
            "slug",
        ),
        (
            OrganizationPatch {
                slug: Some(Some("UPPER".to_owned())),
                ..OrganizationPatch::default()
            },
            "slug",
        ),
        (
            OrganizationPatch {
                name: Some(Some("x".repeat(300))),
                ..OrganizationPatch::default()
            },
            "name",
        ),
        (
            OrganizationPatch {
                metadata: Some(Some(json!({"a": [[[[[1]]]]]}).as_object().unwrap().clone())),
                ..OrganizationPatch::default()
            },
            "metadata",
        ),
    ] {
        let err = update(patch.clone(), NONE).await.unwrap_err();
        assert_eq!(invalid_field(&err), field, "{patch:?}");
    }
    let err = update(
        OrganizationPatch {
            slug: Some(Some("taken".to_owned())),
            ..OrganizationPatch::default()
        },
        NONE,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, ManageError::Conflict(m) if m.contains("slug")),
        "{err:?}"
    );
    assert_eq!(orgs::get(&h.ctx, tenant, &org.id).await.unwrap(), emptied);

    // Three updates, three `org.updated` events carrying the state after each.
    let updated: Vec<Value> = org_events(&h, tenant)
        .await
        .into_iter()
        .filter(|(t, _)| t == "org.updated")
        .map(|(_, data)| data)
        .collect();
    assert_eq!(updated.len(), 3);
    assert_eq!(updated[0]["name"], "Acme Corp");
    assert_eq!(updated[1]["slug"], "acme-corp");
    assert_eq!(updated[2]["actor"], actor.as_audit_string());
    let audit: Vec<String> = h
        .audit(tenant)
        .await
        .into_iter()
        .map(|e| e.action)
        .filter(|a| a == action::ORGANIZATION_UPDATED)
        .collect();
    assert_eq!(audit.len(), 3);
}

#[tokio::test]
async fn suspension_and_reactivation_follow_the_status() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    let org = create(&h, &acme, new_org("Acme", "acme")).await;

    let err = orgs::reactivate(&h.ctx, tenant, &actor, &meta(), &org.id, &NONE)
        .await
        .unwrap_err();
    assert!(matches!(err, ManageError::Conflict(_)), "{err:?}");

    let stale = Precondition::OneOf(vec![None]);
    let err = orgs::suspend(&h.ctx, tenant, &actor, &meta(), &org.id, &stale)
        .await
        .unwrap_err();
    assert!(matches!(err, ManageError::PreconditionFailed), "{err:?}");

    let current = Precondition::OneOf(vec![Some(Revision::of(org.updated_at))]);
    let suspended = orgs::suspend(&h.ctx, tenant, &actor, &meta(), &org.id, &current)
        .await
        .unwrap();
    assert_eq!(suspended.status, OrgStatus::Suspended);
    assert!(suspended.updated_at > org.updated_at);
    let err = orgs::suspend(&h.ctx, tenant, &actor, &meta(), &org.id, &NONE)
        .await
        .unwrap_err();
    assert!(matches!(err, ManageError::Conflict(_)), "{err:?}");

    let back = orgs::reactivate(&h.ctx, tenant, &actor, &meta(), &org.id, &NONE)
        .await
        .unwrap();
    assert_eq!(back.status, OrgStatus::Active);

    let events = org_events(&h, tenant).await;
    let kinds: Vec<(&str, &str)> = events
        .iter()
        .map(|(t, d)| (t.as_str(), d["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("org.created", "active"),
            ("org.suspended", "suspended"),
            ("org.reactivated", "active")
        ]
    );
    let audit: Vec<String> = h
        .audit(tenant)
        .await
        .into_iter()
        .take(2)
        .map(|e| e.action)
        .collect();
    assert_eq!(
        audit,
        [
            action::ORGANIZATION_REACTIVATED,
            action::ORGANIZATION_SUSPENDED
        ]
    );
}

#[tokio::test]
async fn deleting_an_organization_takes_its_memberships_with_it() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    let org = create(&h, &acme, new_org("Acme", "acme")).await;
    let other = create(&h, &acme, new_org("Other", "other")).await;
    let ada = person(&h, &acme, "ada@example.com").await;
    add(&h, &acme, &org.id, member(&ada.id, Some(&["owner"])))
        .await
        .unwrap();
    add(&h, &acme, &other.id, member(&ada.id, None))
        .await
        .unwrap();

    let stale = Precondition::OneOf(vec![Some(Revision::of(
        org.updated_at - time::Duration::seconds(1),
    ))]);
    let err = orgs::delete(&h.ctx, tenant, &actor, &meta(), &org.id, &stale)
        .await
        .unwrap_err();
    assert!(matches!(err, ManageError::PreconditionFailed), "{err:?}");
    assert!(orgs::get(&h.ctx, tenant, &org.id).await.is_ok());

    let current = Precondition::OneOf(vec![Some(Revision::of(org.updated_at))]);
    orgs::delete(&h.ctx, tenant, &actor, &meta(), &org.id, &current)
        .await
        .unwrap();
    assert!(matches!(
        orgs::get(&h.ctx, tenant, &org.id).await,
        Err(ManageError::NotFound)
    ));
    assert!(matches!(
        orgs::list_members(&h.ctx, tenant, &org.id, None, None).await,
        Err(ManageError::NotFound)
    ));
    let left = orgs::memberships_of_user(&h.ctx, tenant, &ada.id)
        .await
        .unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].1.id, other.id);
    assert!(matches!(
        orgs::delete(&h.ctx, tenant, &actor, &meta(), &org.id, &NONE).await,
        Err(ManageError::NotFound)
    ));

    let audit = h.audit(tenant).await;
    assert_eq!(audit[0].action, action::ORGANIZATION_DELETED);
    assert_eq!(audit[0].target.as_deref(), Some(org.id.as_str()));
    let (kind, data) = org_events(&h, tenant).await.pop().unwrap();
    assert_eq!(kind, "org.deleted");
    assert_eq!(data["organization_id"], org.id.as_str());
    assert_eq!(data["slug"], "acme");
}

#[tokio::test]
async fn members_are_added_listed_re_roled_and_removed() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    let org = create(&h, &acme, new_org("Acme", "acme")).await;
    let ada = person(&h, &acme, "ada@example.com").await;
    let bob = person(&h, &acme, "bob@example.com").await;
    let cy = person(&h, &acme, "cy@example.com").await;

    // Default role `member`; given roles are sorted and repeats collapse.
    let m_ada = add(&h, &acme, &org.id, member(&ada.id, None))
        .await
        .unwrap();
    assert_eq!(roles_of(&m_ada), ["member"]);
    assert_eq!(m_ada.organization_id, org.id);
    assert_eq!(m_ada.tenant_id, *tenant);
    let m_bob = add(
        &h,
        &acme,
        &org.id,
        member(&bob.id, Some(&["owner", "admin", "owner"])),
    )
    .await
    .unwrap();
    assert_eq!(roles_of(&m_bob), ["admin", "owner"]);
    let m_cy = add(&h, &acme, &org.id, member(&cy.id, Some(&["admin"])))
        .await
        .unwrap();
    assert_eq!(
        orgs::get_member(&h.ctx, tenant, &org.id, &bob.id)
            .await
            .unwrap(),
        m_bob
    );

    // Paged by user id.
    let mut by_id = [m_ada.clone(), m_bob.clone(), m_cy.clone()];
    by_id.sort_by(|a, b| a.user_id.as_str().cmp(b.user_id.as_str()));
    let (page, next) = orgs::list_members(&h.ctx, tenant, &org.id, None, Some(2))
        .await
        .unwrap();
    assert_eq!(page, by_id[..2]);
    assert_eq!(next.as_ref(), Some(&by_id[1].user_id));
    let (rest, next) = orgs::list_members(&h.ctx, tenant, &org.id, next.as_ref(), Some(2))
        .await
        .unwrap();
    assert_eq!(rest, by_id[2..]);
    assert_eq!(next, None);

    // Roles change: an event with the previous roles; the same roles again change nothing.
    let change = |user: UserId, roles: &[&str]| {
        let (ctx, actor, org) = (h.ctx.clone(), actor.clone(), org.id.clone());
        let patch = MemberPatch {
            roles: roles.iter().map(|s| (*s).to_owned()).collect(),
        };
        async move {
            orgs::change_member_roles(
                &ctx,
                tenant,
                (&actor, &meta()),
                &svc_manage::Reach::Tenant,
                &org,
                &user,
                patch,
            )
            .await
        }
    };
    let promoted = change(ada.id.clone(), &["admin", "member"]).await.unwrap();
    assert_eq!(roles_of(&promoted), ["admin", "member"]);
    assert!(promoted.updated_at > m_ada.updated_at);
    assert_eq!(promoted.created_at, m_ada.created_at);
    assert_eq!(
        orgs::get_member(&h.ctx, tenant, &org.id, &ada.id)
            .await
            .unwrap(),
        promoted
    );
    let events_before = org_events(&h, tenant).await.len();
    let audit_before = h.audit(tenant).await.len();
    let same = change(ada.id.clone(), &["member", "admin"]).await.unwrap();
    assert_eq!(same, promoted);
    assert_eq!(org_events(&h, tenant).await.len(), events_before);
    assert_eq!(h.audit(tenant).await.len(), audit_before);
    for bad in [&[][..], &["tenant_admin"], &["Owner"], &["member"; 17]] {
        let err = change(ada.id.clone(), bad).await.unwrap_err();
        assert_eq!(invalid_field(&err), "roles", "{bad:?}");
    }
    let err = change(
        UserId::parse("usr_01jd2m8q3v7x9k4n6p0r5t2w8y").unwrap(),
        &["member"],
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ManageError::NotFound), "{err:?}");

    // Removal.
    orgs::remove_member(
        &h.ctx,
        tenant,
        (&actor, &meta()),
        &svc_manage::Reach::Tenant,
        &org.id,
        &cy.id,
    )
    .await
    .unwrap();
    assert!(matches!(
        orgs::get_member(&h.ctx, tenant, &org.id, &cy.id).await,
        Err(ManageError::NotFound)
    ));
    assert!(matches!(
        orgs::remove_member(
            &h.ctx,
            tenant,
            (&actor, &meta()),
            &svc_manage::Reach::Tenant,
            &org.id,
            &cy.id
        )
        .await,
        Err(ManageError::NotFound)
    ));

    // A person's memberships, with their organizations.
    let second = create(&h, &acme, new_org("Second", "second")).await;
    add(&h, &acme, &second.id, member(&ada.id, Some(&["owner"])))
        .await
        .unwrap();
    let of_ada = orgs::memberships_of_user(&h.ctx, tenant, &ada.id)
        .await
        .unwrap();
    let seen: Vec<(&OrganizationId, Vec<&str>)> =
        of_ada.iter().map(|(m, o)| (&o.id, roles_of(m))).collect();
    assert_eq!(
        seen,
        [
            (&org.id, vec!["admin", "member"]),
            (&second.id, vec!["owner"])
        ]
    );
    assert!(
        orgs::memberships_of_user(&h.ctx, tenant, &cy.id)
            .await
            .unwrap()
            .is_empty()
    );

    // The events, each with its payload.
    let member_events: Vec<(String, Value)> = org_events(&h, tenant)
        .await
        .into_iter()
        .filter(|(t, _)| t.starts_with("org.member."))
        .collect();
    let kinds: Vec<&str> = member_events.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "org.member.added",
            "org.member.added",
            "org.member.added",
            "org.member.role_changed",
            "org.member.removed",
            "org.member.added",
        ]
    );
    assert_eq!(
        member_events[1].1,
        json!({
            "organization_id": org.id.as_str(),
            "user_id": bob.id.as_str(),
            "roles": ["admin", "owner"],
            "actor": actor.as_audit_string(),
        }),
        "no previous roles on an addition"
    );
    assert_eq!(
        member_events[3].1,
        json!({
            "organization_id": org.id.as_str(),
            "user_id": ada.id.as_str(),
            "roles": ["admin", "member"],
            "previous_roles": ["member"],
            "actor": actor.as_audit_string(),
        })
    );
    assert_eq!(
        member_events[4].1,
        json!({
            "organization_id": org.id.as_str(),
            "user_id": cy.id.as_str(),
            "roles": [],
            "previous_roles": ["admin"],
            "actor": actor.as_audit_string(),
        })
    );

    // The audit entries name the organization.
    let audit: Vec<(String, Option<String>)> = h
        .audit(tenant)
        .await
        .into_iter()
        .filter(|e| e.action.starts_with("organization.member_"))
        .map(|e| (e.action, e.target))
        .collect();
    let expected_org = |id: &OrganizationId| Some(id.to_string());
    assert_eq!(
        audit,
        [
            (
                action::ORGANIZATION_MEMBER_ADDED.to_owned(),
                expected_org(&second.id)
            ),
            (
                action::ORGANIZATION_MEMBER_REMOVED.to_owned(),
                expected_org(&org.id)
            ),
            (
                action::ORGANIZATION_MEMBER_ROLES_CHANGED.to_owned(),
                expected_org(&org.id)
            ),
            (
                action::ORGANIZATION_MEMBER_ADDED.to_owned(),
                expected_org(&org.id)
            ),
            (
                action::ORGANIZATION_MEMBER_ADDED.to_owned(),
                expected_org(&org.id)
            ),
            (
                action::ORGANIZATION_MEMBER_ADDED.to_owned(),
                expected_org(&org.id)
            ),
        ]
    );
}

#[tokio::test]
async fn refused_members_write_nothing_and_leak_nothing_across_tenants() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let globex = h.tenant("globex").await;
    let tenant = &acme.tenant.id;
    let org = create(&h, &acme, new_org("Acme", "acme")).await;
    let ada = person(&h, &acme, "ada@example.com").await;
    add(&h, &acme, &org.id, member(&ada.id, None))
        .await
        .unwrap();
    let gone = person(&h, &acme, "gone@example.com").await;
    users::remove(
        &h.ctx,
        tenant,
        &client_actor(&acme),
        &meta(),
        &gone.id,
        &NONE,
    )
    .await
    .unwrap();
    let outsider = person(&h, &globex, "eve@globex.example").await;
    let events_before = org_events(&h, tenant).await.len();

    // Unknown, malformed, removed and another tenant's user: one and the same answer.
    let mut answers = Vec::new();
    for user_id in [
        "usr_01jd2m8q3v7x9k4n6p0r5t2w8y".to_owned(),
        "not-a-user".to_owned(),
        gone.id.to_string(),
        outsider.id.to_string(),
    ] {
        let input = NewMember {
            user_id: user_id.clone(),
            roles: None,
        };
        let err = add(&h, &acme, &org.id, input).await.unwrap_err();
        assert_eq!(invalid_field(&err), "user_id", "{user_id}");
        answers.push(err.to_string());
    }
    answers.dedup();
    assert_eq!(answers.len(), 1, "{answers:?}");

    let bob = person(&h, &acme, "bob@example.com").await;
    for roles in [
        &[][..],
        &["tenant_admin"],
        &["billing.viewer"],
        &["Admin"],
        &["member"; 17],
    ] {
        let err = add(&h, &acme, &org.id, member(&bob.id, Some(roles)))
            .await
            .unwrap_err();
        assert_eq!(invalid_field(&err), "roles", "{roles:?}");
        assert!(err.to_string().contains("owner, admin, member"), "{err}");
    }
    let err = add(&h, &acme, &org.id, member(&ada.id, Some(&["owner"])))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ManageError::Conflict(m) if m.contains("already a member")),
        "{err:?}"
    );
    let (members, _) = orgs::list_members(&h.ctx, tenant, &org.id, None, None)
        .await
        .unwrap();
    assert_eq!(members.len(), 1);
    assert_eq!(
        roles_of(&members[0]),
        ["member"],
        "the conflict changed nothing"
    );
    assert_eq!(org_events(&h, tenant).await.len(), events_before);

    // Another tenant sees none of it: every id of acme is absent for globex.
    let g = &globex.tenant.id;
    let g_actor = client_actor(&globex);
    let not_found = |r: Result<(), ManageError>| {
        assert!(matches!(r, Err(ManageError::NotFound)), "{r:?}");
    };
    not_found(unit(orgs::get(&h.ctx, g, &org.id).await));
    not_found(unit(
        orgs::update(
            &h.ctx,
            g,
            &g_actor,
            &meta(),
            &org.id,
            OrganizationPatch {
                name: Some(Some("Mallory".to_owned())),
                ..OrganizationPatch::default()
            },
            &NONE,
        )
        .await,
    ));
    not_found(unit(
        orgs::suspend(&h.ctx, g, &g_actor, &meta(), &org.id, &NONE).await,
    ));
    not_found(unit(
        orgs::reactivate(&h.ctx, g, &g_actor, &meta(), &org.id, &NONE).await,
    ));
    not_found(unit(
        orgs::delete(&h.ctx, g, &g_actor, &meta(), &org.id, &NONE).await,
    ));
    not_found(unit(
        orgs::list_members(&h.ctx, g, &org.id, None, None).await,
    ));
    not_found(unit(orgs::get_member(&h.ctx, g, &org.id, &ada.id).await));
    not_found(unit(
        orgs::change_member_roles(
            &h.ctx,
            g,
            (&g_actor, &meta()),
            &svc_manage::Reach::Tenant,
            &org.id,
            &ada.id,
            MemberPatch {
                roles: vec!["owner".to_owned()],
            },
        )
        .await,
    ));
    not_found(unit(
        orgs::remove_member(
            &h.ctx,
            g,
            (&g_actor, &meta()),
            &svc_manage::Reach::Tenant,
            &org.id,
            &ada.id,
        )
        .await,
    ));
    not_found(unit(
        orgs::add_member(
            &h.ctx,
            g,
            (&g_actor, &meta()),
            &svc_manage::Reach::Tenant,
            &org.id,
            member(&outsider.id, None),
        )
        .await,
    ));
    not_found(unit(orgs::memberships_of_user(&h.ctx, g, &ada.id).await));
    assert!(
        orgs::list(&h.ctx, g, None, None, None)
            .await
            .unwrap()
            .0
            .is_empty()
    );

    // And globex cannot pull acme's person into its own organization.
    let mine = create(&h, &globex, new_org("Globex", "globex")).await;
    let err = add(&h, &globex, &mine.id, member(&ada.id, None))
        .await
        .unwrap_err();
    assert_eq!(invalid_field(&err), "user_id");
    assert_eq!(err.to_string(), answers[0]);

    // Acme's organization is untouched.
    assert_eq!(orgs::get(&h.ctx, tenant, &org.id).await.unwrap(), org);
    assert!(
        org_events(&h, g)
            .await
            .iter()
            .all(|(t, _)| t == "org.created"),
        "globex recorded nothing but its own creation"
    );
}

#[tokio::test]
async fn a_person_belongs_to_at_most_500_organizations() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let ada = person(&h, &acme, "ada@example.com").await;
    let mut last = None;
    for i in 0..=MAX_MEMBERSHIPS_PER_USER {
        let org = create(&h, &acme, new_org(&format!("Org {i}"), &format!("org-{i}"))).await;
        if i < MAX_MEMBERSHIPS_PER_USER {
            add(&h, &acme, &org.id, member(&ada.id, None))
                .await
                .unwrap();
        }
        last = Some(org);
    }
    let last = last.unwrap();
    let err = add(&h, &acme, &last.id, member(&ada.id, None))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ManageError::Conflict(m) if m.contains("500")),
        "{err:?}"
    );
    let held = orgs::memberships_of_user(&h.ctx, &acme.tenant.id, &ada.id)
        .await
        .unwrap();
    assert_eq!(held.len(), MAX_MEMBERSHIPS_PER_USER);
    // Someone else still joins it.
    let bob = person(&h, &acme, "bob@example.com").await;
    add(&h, &acme, &last.id, member(&bob.id, None))
        .await
        .unwrap();
}

#[test]
fn bodies_deserialize_as_the_api_sends_them() {
    let input: NewOrganization =
        serde_json::from_value(json!({"name": "A", "slug": "a", "metadata": {"k": [1]}})).unwrap();
    assert_eq!(
        input.metadata,
        Some(Map::from_iter([("k".to_owned(), json!([1]))]))
    );
    let member: NewMember = serde_json::from_value(json!({"user_id": "usr_x"})).unwrap();
    assert_eq!(member.roles, None);
}

#[tokio::test]
async fn removing_a_person_ends_their_memberships() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let actor = client_actor(&acme);
    let one = create(&h, &acme, new_org("One", "one")).await;
    let two = create(&h, &acme, new_org("Two", "two")).await;
    let ada = person(&h, &acme, "ada@example.com").await;
    let bob = person(&h, &acme, "bob@example.com").await;
    for org in [&one.id, &two.id] {
        add(&h, &acme, org, member(&ada.id, Some(&["admin"])))
            .await
            .unwrap();
    }
    add(&h, &acme, &one.id, member(&bob.id, None))
        .await
        .unwrap();

    users::remove(&h.ctx, tenant, &actor, &meta(), &ada.id, &NONE)
        .await
        .unwrap();

    assert!(
        orgs::memberships_of_user(&h.ctx, tenant, &ada.id)
            .await
            .unwrap()
            .is_empty()
    );
    let members = orgs::list_members(&h.ctx, tenant, &one.id, None, None)
        .await
        .unwrap();
    let ids: Vec<_> = members.0.iter().map(|m| m.user_id.clone()).collect();
    assert_eq!(ids, vec![bob.id.clone()], "only Ada's membership ended");
    let removed: Vec<_> = org_events(&h, tenant)
        .await
        .into_iter()
        .filter(|(kind, _)| kind == "org.member.removed")
        .collect();
    assert_eq!(removed.len(), 2, "{removed:?}");
    for (_, data) in &removed {
        assert_eq!(data["user_id"], ada.id.as_str());
        assert_eq!(data["roles"], json!([]));
        assert_eq!(data["previous_roles"], json!(["admin"]));
    }
}
