//! Conformance: invitations (round trips by id, link hash and target; one pending invitation
//! per address and target; acceptance once, at the link read and before the deadline, also
//! under a race; resends and revocations at the revision read; listings filtered by
//! organization and derived state, both ways), scoped to their tenant and deleted with their
//! organization and tenant; with their fixture.

use super::grants::stored_tenant;
use super::organizations::organization_fixture;
use super::{assert_refused_by_check, user_fixture};
use crate::{InvitationFilter, Order, Store, StoreError, UpdateOutcome};
use futures_util::future::join_all;
use std::collections::BTreeSet;
use std::sync::Arc;
use svc_domain::{
    Email, Invitation, InvitationId, InvitationState, InvitationStatus, ManualClock, Organization,
    RoleKey, SecretHash, SeededRandom, Tenant, TenantId,
};
use time::{Duration, OffsetDateTime};

/// A pending invitation of `email` to `org` (or the tenant) of `tenant` with `roles`, created at
/// `at` (ids grow with it), expiring a week later, whose link secret is `join_{seed}`.
pub fn invitation_fixture(
    tenant: &Tenant,
    seed: u64,
    email: &str,
    org: Option<&Organization>,
    roles: &[&str],
    at: OffsetDateTime,
) -> Invitation {
    Invitation {
        id: InvitationId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: tenant.id.clone(),
        email: Email::parse(email).unwrap_or_else(|e| panic!("fixture email {email}: {e}")),
        organization_id: org.map(|o| o.id.clone()),
        roles: roles
            .iter()
            .map(|r| RoleKey::parse(r).expect("fixture role"))
            .collect::<BTreeSet<_>>(),
        status: InvitationStatus::Pending,
        token_hash: SecretHash::of(&format!("join_{seed}")),
        expires_at: at + Duration::days(7),
        invited_by: "client:app_01jd0000000000000000000000".to_owned(),
        accepted_by: None,
        accepted_at: None,
        created_at: at,
        updated_at: at,
    }
}

/// An instant a day after the tenant's creation, on no whole millisecond.
fn moment(tenant: &Tenant) -> OffsetDateTime {
    tenant.created_at + Duration::days(1) + Duration::microseconds(654_321)
}

async fn stored_org(
    store: &Arc<dyn Store>,
    tenant: &Tenant,
    seed: u64,
    slug: &str,
) -> Organization {
    let org = organization_fixture(tenant, seed, slug, moment(tenant));
    let mut tx = store.write().await.expect("write");
    tx.insert_organization(&org).await.expect("organization");
    tx.commit().await.expect("commit");
    org
}

async fn insert(store: &Arc<dyn Store>, invitation: &Invitation) -> Result<(), StoreError> {
    let mut tx = store.write().await.expect("write");
    tx.insert_invitation(invitation).await?;
    tx.commit().await.expect("commit");
    Ok(())
}

async fn read(store: &Arc<dyn Store>, tenant: &TenantId, id: &InvitationId) -> Option<Invitation> {
    let mut tx = store.read().await.expect("read");
    let found = tx.invitation(tenant, id).await.expect("invitation");
    tx.finish().await.expect("finish");
    found
}

fn assert_conflict<T: std::fmt::Debug>(result: Result<T, StoreError>, constraint: &str) {
    match result {
        Err(StoreError::Conflict { constraint: named }) => assert_eq!(named, constraint),
        other => panic!("{constraint}: expected a conflict, got {other:?}"),
    }
}

/// Every field reads back as written, by id, by link hash and by target (address and
/// organization, or the tenant), inside the writing transaction and after commit; another
/// tenant, an unknown id or hash reads nothing. An organization of another tenant, or none, is
/// the organization's foreign key; roles that are not an array are refused by the schema.
pub async fn invitations_round_trip_by_id_token_and_target(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let org = stored_org(&store, &acme, 3, "globex").await;
    let foreign = stored_org(&store, &other, 4, "foreign").await;
    let at = moment(&acme);
    let to_org = invitation_fixture(
        &acme,
        10,
        "Ada@Example.com",
        Some(&org),
        &["admin", "member"],
        at,
    );
    let mut to_tenant = invitation_fixture(&acme, 11, "ada@example.com", None, &[], at);
    to_tenant.invited_by = "user:usr_01jd0000000000000000000000 \"ü\"".to_owned();

    let mut tx = store.write().await.expect("write");
    tx.insert_invitation(&to_org).await.expect("org invitation");
    tx.insert_invitation(&to_tenant)
        .await
        .expect("tenant invitation");
    assert_eq!(
        tx.invitation(&acme.id, &to_org.id).await.expect("read"),
        Some(to_org.clone()),
        "visible in its transaction"
    );
    tx.commit().await.expect("commit");

    assert_eq!(
        read(&store, &acme.id, &to_org.id).await,
        Some(to_org.clone())
    );
    assert_eq!(
        read(&store, &acme.id, &to_tenant.id).await,
        Some(to_tenant.clone())
    );
    assert_eq!(read(&store, &other.id, &to_org.id).await, None);
    let mut tx = store.read().await.expect("read");
    assert_eq!(
        tx.invitation_by_token(&acme.id, &SecretHash::of("join_10"))
            .await
            .expect("by hash"),
        Some(to_org.clone())
    );
    assert_eq!(
        tx.invitation_by_token(&other.id, &SecretHash::of("join_10"))
            .await
            .expect("by hash"),
        None
    );
    assert_eq!(
        tx.invitation_by_token(&acme.id, &SecretHash::of("join_99"))
            .await
            .expect("by hash"),
        None
    );
    let email = Email::parse("ADA@example.com").expect("email");
    assert_eq!(
        tx.pending_invitation(&acme.id, &email, Some(&org.id))
            .await
            .expect("pending"),
        Some(to_org.clone())
    );
    assert_eq!(
        tx.pending_invitation(&acme.id, &email, None)
            .await
            .expect("pending"),
        Some(to_tenant.clone())
    );
    assert_eq!(
        tx.pending_invitation(&acme.id, &email, Some(&foreign.id))
            .await
            .expect("pending"),
        None
    );
    tx.finish().await.expect("finish");

    let planted = invitation_fixture(
        &acme,
        12,
        "eve@example.com",
        Some(&foreign),
        &["member"],
        at,
    );
    assert_conflict(
        insert(&store, &planted).await,
        "invitations_organization_fkey",
    );
    let nowhere = invitation_fixture(
        &super::tenant_fixture("ghost", 5),
        13,
        "x@example.com",
        None,
        &[],
        at,
    );
    assert_conflict(insert(&store, &nowhere).await, "invitations_tenant_id_fkey");
}

/// At most one pending invitation per address and target: a second one for the same address
/// (whatever its case) and organization, or for the tenant, is refused naming
/// `invitations_pending_key`; other targets and addresses pass, and once the first is revoked a
/// new one may be pending. A link hash is never stored twice.
pub async fn one_pending_invitation_per_address_and_target(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let org = stored_org(&store, &acme, 3, "globex").await;
    let second_org = stored_org(&store, &acme, 4, "initech").await;
    let at = moment(&acme);
    let first = invitation_fixture(&acme, 10, "ada@example.com", Some(&org), &["member"], at);
    insert(&store, &first).await.expect("first");
    let again = invitation_fixture(&acme, 11, "ADA@example.com", Some(&org), &["admin"], at);
    assert_conflict(insert(&store, &again).await, "invitations_pending_key");
    insert(
        &store,
        &invitation_fixture(
            &acme,
            12,
            "ada@example.com",
            Some(&second_org),
            &["member"],
            at,
        ),
    )
    .await
    .expect("another organization");
    insert(
        &store,
        &invitation_fixture(&acme, 13, "ada@example.com", None, &[], at),
    )
    .await
    .expect("the tenant");
    assert_conflict(
        insert(
            &store,
            &invitation_fixture(&acme, 14, "ada@example.com", None, &["tenant_admin"], at),
        )
        .await,
        "invitations_pending_key",
    );
    insert(
        &store,
        &invitation_fixture(&acme, 15, "bob@example.com", Some(&org), &["member"], at),
    )
    .await
    .expect("another address");
    let mut same_link = invitation_fixture(&acme, 16, "carol@example.com", None, &[], at);
    same_link.token_hash = first.token_hash.clone();
    assert_conflict(
        insert(&store, &same_link).await,
        "invitations_token_hash_key",
    );

    let mut revoked = first.clone();
    revoked.status = InvitationStatus::Revoked;
    revoked.updated_at = at + Duration::seconds(1);
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_invitation_if_unchanged(&revoked, first.updated_at)
            .await
            .expect("revoke"),
        UpdateOutcome::Applied
    );
    tx.commit().await.expect("commit");
    insert(&store, &again)
        .await
        .expect("pending again once the first is revoked");

    let mut bad = invitation_fixture(&acme, 17, "dan@example.com", None, &[], at);
    bad.status = InvitationStatus::Accepted;
    let result = insert(&store, &bad).await;
    assert_refused_by_check(result, "invitations_accepted_check");
}

/// Acceptance changes the row once: with the link's hash, while pending and before the
/// deadline; the wrong hash, another tenant, the deadline itself or a second acceptance change
/// nothing. The accepted invitation records who and when.
pub async fn invitation_acceptance_happens_once_before_the_deadline(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let invitation = invitation_fixture(&acme, 10, "ada@example.com", None, &["tenant_admin"], at);
    insert(&store, &invitation).await.expect("insert");
    let ada = user_fixture(&acme, 20, "ada@example.com");
    let accept = |tenant: TenantId, hash: SecretHash, now: OffsetDateTime| {
        let store = store.clone();
        let (id, user) = (invitation.id.clone(), ada.id.clone());
        async move {
            let mut tx = store.write().await.expect("write");
            let won = tx
                .accept_invitation(&tenant, &id, &hash, &user, now)
                .await
                .expect("accept");
            tx.commit().await.expect("commit");
            won
        }
    };
    let hash = invitation.token_hash.clone();
    let now = at + Duration::hours(1) + Duration::microseconds(7);
    assert!(
        !accept(acme.id.clone(), SecretHash::of("join_11"), now).await,
        "wrong link"
    );
    assert!(
        !accept(other.id.clone(), hash.clone(), now).await,
        "another tenant"
    );
    assert!(
        !accept(acme.id.clone(), hash.clone(), invitation.expires_at).await,
        "the deadline"
    );
    assert!(
        accept(acme.id.clone(), hash.clone(), now).await,
        "the first acceptance"
    );
    assert!(!accept(acme.id.clone(), hash, now).await, "only once");
    let accepted = read(&store, &acme.id, &invitation.id)
        .await
        .expect("stored");
    assert_eq!(
        accepted,
        Invitation {
            status: InvitationStatus::Accepted,
            accepted_by: Some(ada.id.clone()),
            accepted_at: Some(now),
            updated_at: now,
            ..invitation
        }
    );
    assert_eq!(accepted.state(now), InvitationState::Accepted);
}

/// Six acceptances of one invitation racing: exactly one changes it.
pub async fn racing_invitation_acceptances_admit_exactly_one(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let at = moment(&acme);
    let invitation = invitation_fixture(&acme, 10, "ada@example.com", None, &[], at);
    insert(&store, &invitation).await.expect("insert");
    let attempts = (0..6u64).map(|i| {
        let store = store.clone();
        let (tenant, id, hash) = (
            acme.id.clone(),
            invitation.id.clone(),
            invitation.token_hash.clone(),
        );
        let user = user_fixture(&acme, 30 + i, &format!("p{i}@example.com")).id;
        async move {
            let mut tx = store.write().await?;
            let won = tx
                .accept_invitation(&tenant, &id, &hash, &user, at + Duration::minutes(1))
                .await?;
            tx.commit().await?;
            Ok::<_, StoreError>(won)
        }
    });
    let wins = join_all(attempts)
        .await
        .into_iter()
        .map(|r| r.expect("transaction"))
        .filter(|won| *won)
        .count();
    assert_eq!(wins, 1);
    let stored = read(&store, &acme.id, &invitation.id)
        .await
        .expect("stored");
    assert_eq!(stored.status, InvitationStatus::Accepted);
}

/// A resend (new hash and deadline) or a revocation applies only at the revision read: the old
/// link then finds nothing and the new one finds the invitation; a stale revision changes
/// nothing; an absent invitation is not found.
pub async fn invitation_updates_apply_only_at_the_revision_read(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let at = moment(&acme);
    let invitation = invitation_fixture(&acme, 10, "ada@example.com", None, &[], at);
    insert(&store, &invitation).await.expect("insert");
    let resent = Invitation {
        token_hash: SecretHash::of("join_new"),
        expires_at: at + Duration::days(30),
        updated_at: at + Duration::seconds(5) + Duration::microseconds(3),
        ..invitation.clone()
    };
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_invitation_if_unchanged(&resent, at)
            .await
            .expect("resend"),
        UpdateOutcome::Applied
    );
    assert_eq!(
        tx.update_invitation_if_unchanged(&resent, at)
            .await
            .expect("again"),
        UpdateOutcome::Stale
    );
    let ghost = invitation_fixture(&acme, 99, "ghost@example.com", None, &[], at);
    assert!(matches!(
        tx.update_invitation_if_unchanged(&ghost, at).await,
        Err(StoreError::NotFound)
    ));
    tx.commit().await.expect("commit");
    let mut tx = store.read().await.expect("read");
    assert_eq!(
        tx.invitation_by_token(&acme.id, &invitation.token_hash)
            .await
            .expect("old"),
        None
    );
    assert_eq!(
        tx.invitation_by_token(&acme.id, &SecretHash::of("join_new"))
            .await
            .expect("new"),
        Some(resent.clone())
    );
    tx.finish().await.expect("finish");
    // An acceptance at the old link finds nothing to accept.
    let mut tx = store.write().await.expect("write");
    let user = user_fixture(&acme, 20, "ada@example.com").id;
    assert!(
        !tx.accept_invitation(&acme.id, &invitation.id, &invitation.token_hash, &user, at)
            .await
            .expect("accept")
    );
    tx.commit().await.expect("commit");
}

/// Listings page both ways in id order and filter by organization and by derived state at the
/// given time (pending and expired told apart by the deadline).
pub async fn list_invitations_filters_by_organization_and_state(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let org = stored_org(&store, &acme, 3, "globex").await;
    let at = moment(&acme);
    let mut all = Vec::new();
    for i in 0..5u64 {
        let target = (i % 2 == 0).then_some(&org);
        let roles: &[&str] = if target.is_some() { &["member"] } else { &[] };
        let mut invitation = invitation_fixture(
            &acme,
            10 + i,
            &format!("p{i}@example.com"),
            target,
            roles,
            at + Duration::milliseconds(i as i64 * 10),
        );
        if i == 1 {
            invitation.expires_at = at + Duration::minutes(1);
        }
        if i == 3 {
            invitation.status = InvitationStatus::Revoked;
        }
        insert(&store, &invitation).await.expect("insert");
        all.push(invitation);
    }
    insert(
        &store,
        &invitation_fixture(&other, 20, "p0@example.com", None, &[], at),
    )
    .await
    .expect("another tenant's");
    let now = at + Duration::hours(1);
    let list = |filter: InvitationFilter, after: Option<InvitationId>, order: Order, limit: u32| {
        let store = store.clone();
        let tenant = acme.id.clone();
        async move {
            let mut tx = store.read().await.expect("read");
            let page = tx
                .list_invitations(&tenant, &filter, after.as_ref(), order, limit)
                .await
                .expect("list");
            tx.finish().await.expect("finish");
            page.into_iter().map(|i| i.id).collect::<Vec<_>>()
        }
    };
    let ids = |picks: &[usize]| picks.iter().map(|&i| all[i].id.clone()).collect::<Vec<_>>();
    let none = InvitationFilter::default();
    assert_eq!(
        list(none.clone(), None, Order::Ascending, 10).await,
        ids(&[0, 1, 2, 3, 4])
    );
    assert_eq!(
        list(none.clone(), None, Order::Ascending, 2).await,
        ids(&[0, 1])
    );
    assert_eq!(
        list(none.clone(), Some(all[1].id.clone()), Order::Ascending, 2).await,
        ids(&[2, 3])
    );
    assert_eq!(
        list(none.clone(), None, Order::Descending, 2).await,
        ids(&[4, 3])
    );
    assert_eq!(
        list(none, Some(all[3].id.clone()), Order::Descending, 5).await,
        ids(&[2, 1, 0])
    );
    let of_org = InvitationFilter {
        organization_id: Some(org.id.clone()),
        ..InvitationFilter::default()
    };
    assert_eq!(
        list(of_org, None, Order::Ascending, 10).await,
        ids(&[0, 2, 4])
    );
    let state = |state| InvitationFilter {
        state: Some(state),
        now: Some(now),
        ..InvitationFilter::default()
    };
    assert_eq!(
        list(state(InvitationState::Pending), None, Order::Ascending, 10).await,
        ids(&[0, 2, 4])
    );
    assert_eq!(
        list(state(InvitationState::Expired), None, Order::Ascending, 10).await,
        ids(&[1])
    );
    assert_eq!(
        list(state(InvitationState::Revoked), None, Order::Ascending, 10).await,
        ids(&[3])
    );
    assert!(
        list(state(InvitationState::Accepted), None, Order::Ascending, 10)
            .await
            .is_empty()
    );
}

/// Deleting an organization deletes its invitations; deleting the tenant deletes the rest.
pub async fn invitations_go_with_their_organization_and_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let org = stored_org(&store, &acme, 3, "globex").await;
    let at = moment(&acme);
    let to_org = invitation_fixture(&acme, 10, "ada@example.com", Some(&org), &["member"], at);
    let to_tenant = invitation_fixture(&acme, 11, "ada@example.com", None, &[], at);
    let kept = invitation_fixture(&other, 12, "ada@example.com", None, &[], at);
    for invitation in [&to_org, &to_tenant, &kept] {
        insert(&store, invitation).await.expect("insert");
    }
    let mut tx = store.write().await.expect("write");
    assert!(
        tx.delete_organization(&acme.id, &org.id)
            .await
            .expect("delete org")
    );
    tx.commit().await.expect("commit");
    assert_eq!(read(&store, &acme.id, &to_org.id).await, None);
    assert!(read(&store, &acme.id, &to_tenant.id).await.is_some());
    let mut tx = store.write().await.expect("write");
    tx.delete_tenant(&acme.id).await.expect("delete tenant");
    tx.commit().await.expect("commit");
    assert_eq!(read(&store, &acme.id, &to_tenant.id).await, None);
    assert_eq!(read(&store, &other.id, &kept.id).await, Some(kept));
}
