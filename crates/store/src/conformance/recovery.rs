//! Conformance: social recovery: guardians (per user and tenant, one per address, scoped
//! deletes), recovery requests (one open per person, expiry, lookups by secret, cancel token and
//! id, compare-and-set transitions, the factor owed after completion), guardians' approvals
//! (single use before expiry, one per guardian, races), the schema's rules, the purge of closed
//! requests and deletion with the tenant; with their fixtures.

use super::factors::whole_second;
use super::grants::stored_tenant;
use super::{assert_refused_by_check, tenant_fixture, user_fixture};
use crate::{Store, StoreError};
use futures_util::future::join_all;
use std::sync::Arc;
use svc_domain::{
    Email, Guardian, GuardianId, ManualClock, RecoveryApproval, RecoveryId, RecoveryRequest,
    RecoveryStatus, SecretHash, SeededRandom, User,
};
use time::{Duration, OffsetDateTime};

/// A guardian of `user` at `email`, named at `at`. Ids grow with `at`.
pub fn guardian_fixture(user: &User, seed: u64, email: &str, at: OffsetDateTime) -> Guardian {
    Guardian {
        id: GuardianId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: user.tenant_id.clone(),
        user_id: user.id.clone(),
        email: Email::parse(email).unwrap_or_else(|e| panic!("fixture email {email}: {e}")),
        created_at: at,
    }
}

/// A pending request of `user` started at `at`, needing two approvals within two days.
pub fn recovery_fixture(user: &User, seed: u64, at: OffsetDateTime) -> RecoveryRequest {
    RecoveryRequest {
        id: RecoveryId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: user.tenant_id.clone(),
        user_id: user.id.clone(),
        status: RecoveryStatus::Pending,
        approvals_needed: 2,
        created_at: at,
        expires_at: at + Duration::days(2),
        ready_at: None,
        closed_at: None,
        factor_due: false,
    }
}

/// `request` closed as `status` at `at` (a completed one after waiting, so with a `ready_at`).
fn closed(
    request: &RecoveryRequest,
    status: RecoveryStatus,
    at: OffsetDateTime,
) -> RecoveryRequest {
    RecoveryRequest {
        status,
        ready_at: (status == RecoveryStatus::Completed).then_some(at - Duration::hours(1)),
        closed_at: Some(at),
        ..request.clone()
    }
}

/// The unspent approval of `request` mailed to `guardian`, valid as long as the request
/// collects approvals.
pub fn approval_fixture(request: &RecoveryRequest, guardian: &Guardian) -> RecoveryApproval {
    RecoveryApproval {
        request_id: request.id.clone(),
        tenant_id: request.tenant_id.clone(),
        guardian_id: guardian.id.clone(),
        email: guardian.email.clone(),
        expires_at: request.expires_at,
        approved_at: None,
    }
}

/// The hashes a request is stored with: of the initiator's secret and of the cancel token.
fn secrets(name: &str) -> (SecretHash, SecretHash) {
    (
        SecretHash::of(&format!("rs_{name}")),
        SecretHash::of(&format!("rc_{name}")),
    )
}

/// Asserts a refused write is the conflict `constraint`.
fn assert_conflict<T: std::fmt::Debug>(result: Result<T, StoreError>, constraint: &str) {
    match result {
        Err(StoreError::Conflict { constraint: named }) => assert_eq!(named, constraint),
        other => panic!("{constraint}: expected a conflict, got {other:?}"),
    }
}

/// Every field of a guardian reads back as written, inside the writing transaction and after
/// commit; a user's guardians list oldest first (below one second too) and only theirs, and
/// only in their tenant. A user names an address once (the unique key's conflict, named the
/// same on every backend, storing nothing), while another user or another tenant may name the
/// same address; a repeated id is the key's conflict and an unknown tenant the foreign key's.
pub async fn recovery_guardians_round_trip_and_are_unique_per_user(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let eve = user_fixture(&other, 3, "eve@example.com");
    let t0 = whole_second(&acme);

    let late = guardian_fixture(
        &ada,
        1,
        "grace@example.com",
        t0 + Duration::milliseconds(750),
    );
    let early = guardian_fixture(
        &ada,
        2,
        "alan@example.com",
        t0 + Duration::milliseconds(250),
    );
    let whole = guardian_fixture(&ada, 3, "edsger@example.com", t0);
    let next = guardian_fixture(&ada, 4, "barbara@example.com", t0 + Duration::seconds(1));
    // Bob and Eve name an address Ada named too.
    let bobs = guardian_fixture(&bob, 5, "grace@example.com", t0);
    let eves = guardian_fixture(&eve, 6, "grace@example.com", t0);

    let mut tx = store.write().await.expect("write");
    for guardian in [&late, &early, &whole, &next, &bobs, &eves] {
        tx.insert_guardian(guardian).await.expect("guardian");
    }
    assert_eq!(
        tx.guardians(&acme.id, &bob.id)
            .await
            .expect("read own write"),
        vec![bobs.clone()],
        "visible inside the writing transaction"
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.guardians(&acme.id, &ada.id).await.expect("ada's"),
        vec![whole.clone(), early.clone(), late.clone(), next.clone()],
        "oldest first, below one second too, every field as written"
    );
    assert!(
        read.guardians(&other.id, &ada.id)
            .await
            .expect("cross-tenant")
            .is_empty(),
        "another tenant lists nothing of ada's"
    );
    assert_eq!(
        read.guardians(&other.id, &eve.id).await.expect("eve's"),
        vec![eves.clone()]
    );
    read.finish().await.expect("finish");

    // Each write in its own transaction: on PostgreSQL a failed statement aborts the transaction.
    let ghost = tenant_fixture("ghost", 9);
    let casper = user_fixture(&ghost, 1, "casper@example.com");
    for (guardian, constraint) in [
        (
            guardian_fixture(&ada, 7, "grace@example.com", t0 + Duration::seconds(2)),
            "recovery_guardians_user_email_key",
        ),
        (
            Guardian {
                id: late.id.clone(),
                ..guardian_fixture(&bob, 8, "ken@example.com", t0)
            },
            "recovery_guardians_pkey",
        ),
        (
            guardian_fixture(&casper, 9, "grace@example.com", t0),
            "recovery_guardians_tenant_id_fkey",
        ),
    ] {
        let mut tx = store.write().await.expect("write");
        assert_conflict(tx.insert_guardian(&guardian).await, constraint);
    }
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.guardians(&acme.id, &ada.id).await.expect("ada's"),
        vec![whole, early, late, next],
        "the refused inserts stored nothing"
    );
    assert_eq!(
        read.guardians(&acme.id, &bob.id).await.expect("bob's"),
        vec![bobs]
    );
    read.finish().await.expect("finish");
}

/// A guardian is deleted only by their person in their tenant: another user's, another tenant's
/// or an unknown id changes nothing and returns false; a second delete returns false. Approvals
/// mailed to a deleted guardian stay, so the request in progress keeps them and they still
/// spend.
pub async fn recovery_guardian_deletes_are_scoped_and_keep_approvals(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let t0 = whole_second(&acme);
    let grace = guardian_fixture(&ada, 1, "grace@example.com", t0);
    let alan = guardian_fixture(&ada, 2, "alan@example.com", t0 + Duration::seconds(1));
    let bobs = guardian_fixture(&bob, 3, "grace@example.com", t0);
    let unknown = guardian_fixture(&ada, 4, "nobody@example.com", t0).id;
    let request = recovery_fixture(&ada, 1, t0 + Duration::seconds(2));
    let (secret, cancel) = secrets("ada");
    let approval = approval_fixture(&request, &grace);
    let token = SecretHash::of("ra_grace");

    let mut tx = store.write().await.expect("write");
    for guardian in [&grace, &alan, &bobs] {
        tx.insert_guardian(guardian).await.expect("guardian");
    }
    tx.insert_recovery(&request, &secret, &cancel)
        .await
        .expect("request");
    tx.insert_recovery_approval(&approval, &token)
        .await
        .expect("approval");
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.delete_guardian(&acme.id, &bob.id, &grace.id)
            .await
            .expect("by bob"),
        "bob cannot delete ada's guardian"
    );
    assert!(
        !tx.delete_guardian(&other.id, &ada.id, &grace.id)
            .await
            .expect("other tenant"),
        "not from another tenant"
    );
    assert!(
        !tx.delete_guardian(&acme.id, &ada.id, &unknown)
            .await
            .expect("unknown")
    );
    assert_eq!(
        tx.guardians(&acme.id, &ada.id).await.expect("ada's"),
        vec![grace.clone(), alan.clone()],
        "the refused deletes changed nothing"
    );
    assert!(
        tx.delete_guardian(&acme.id, &ada.id, &grace.id)
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_guardian(&acme.id, &ada.id, &grace.id)
            .await
            .expect("again"),
        "already gone"
    );
    tx.commit().await.expect("commit");

    let now = request.created_at + Duration::hours(1);
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.guardians(&acme.id, &ada.id).await.expect("ada's"),
        vec![alan]
    );
    assert_eq!(
        tx.guardians(&acme.id, &bob.id).await.expect("bob's"),
        vec![bobs],
        "bob's guardian with the same address is untouched"
    );
    assert_eq!(
        tx.recovery_approvals(&acme.id, &request.id)
            .await
            .expect("approvals"),
        vec![approval.clone()],
        "the request keeps the approval mailed to the deleted guardian"
    );
    assert_eq!(
        tx.spend_recovery_approval(&acme.id, &token, now)
            .await
            .expect("spend"),
        Some(RecoveryApproval {
            approved_at: Some(now),
            ..approval
        }),
        "and it still approves"
    );
    tx.commit().await.expect("commit");
}

/// A person has at most one open request: a second pending or waiting one is the partial
/// index's conflict (named the same on every backend), also while the pending one is past its
/// expiry but not yet marked; other people, other tenants and closed requests do not count.
/// `open_recovery` finds the pending one until its expiry (below one second too) and a waiting
/// one whatever its expiry. `expire_recoveries` marks exactly the user's pending requests with
/// `expires_at <= now` expired at `now`, counting them, and never a waiting one; then a new
/// request may start. A request for an unknown tenant names the foreign key.
pub async fn one_recovery_request_per_user_is_open(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let eve = user_fixture(&other, 3, "eve@example.com");
    let t0 = whole_second(&acme);
    // Ada's request expires at a whole second; `now`s within that second have text that sorts
    // after it, so the checks around it prove instants are compared.
    let first = recovery_fixture(&ada, 1, t0);
    let cancelled = closed(
        &recovery_fixture(&ada, 2, t0 - Duration::days(3)),
        RecoveryStatus::Cancelled,
        t0 - Duration::days(2),
    );
    let bobs = RecoveryRequest {
        status: RecoveryStatus::Waiting,
        ready_at: Some(t0 + Duration::days(3)),
        ..recovery_fixture(&bob, 3, t0)
    };
    // Eve's request in the other tenant has Ada's id: ids are per tenant.
    let eves = RecoveryRequest {
        id: first.id.clone(),
        ..recovery_fixture(&eve, 4, t0)
    };
    let mut tx = store.write().await.expect("write");
    for (request, name) in [
        (&cancelled, "cancelled"),
        (&first, "first"),
        (&bobs, "bob"),
        (&eves, "eve"),
    ] {
        let (secret, cancel) = secrets(name);
        tx.insert_recovery(request, &secret, &cancel)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    }
    tx.commit().await.expect("commit");

    let before_expiry = first.expires_at - Duration::milliseconds(500);
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.open_recovery(&acme.id, &ada.id, t0)
            .await
            .expect("open"),
        Some(first.clone()),
        "every field as written; the cancelled one is not open"
    );
    assert_eq!(
        read.open_recovery(&acme.id, &ada.id, before_expiry)
            .await
            .expect("just before expiry"),
        Some(first.clone()),
        "open until its expiry, below one second too"
    );
    assert_eq!(
        read.open_recovery(&acme.id, &ada.id, first.expires_at)
            .await
            .expect("at expiry"),
        None,
        "dead from its expiry on, marked or not"
    );
    assert_eq!(
        read.open_recovery(&acme.id, &bob.id, t0 + Duration::days(30))
            .await
            .expect("waiting"),
        Some(bobs.clone()),
        "a waiting request stays open past its expiry"
    );
    assert_eq!(
        read.open_recovery(&other.id, &ada.id, t0)
            .await
            .expect("cross-tenant"),
        None
    );
    assert_eq!(
        read.open_recovery(&other.id, &eve.id, t0)
            .await
            .expect("eve's"),
        Some(eves.clone())
    );
    read.finish().await.expect("finish");

    // A second open request, pending or waiting, before and after the first one's expiry.
    let late = first.expires_at + Duration::milliseconds(250);
    let ghost = tenant_fixture("ghost", 9);
    let casper = user_fixture(&ghost, 1, "casper@example.com");
    for (request, constraint) in [
        (
            recovery_fixture(&ada, 5, t0 + Duration::hours(1)),
            "recovery_requests_one_open_key",
        ),
        (
            RecoveryRequest {
                status: RecoveryStatus::Waiting,
                ready_at: Some(t0 + Duration::days(3)),
                ..recovery_fixture(&ada, 6, t0 + Duration::hours(2))
            },
            "recovery_requests_one_open_key",
        ),
        (
            recovery_fixture(&ada, 7, late),
            "recovery_requests_one_open_key",
        ),
        (
            recovery_fixture(&bob, 8, late),
            "recovery_requests_one_open_key",
        ),
        (
            RecoveryRequest {
                id: first.id.clone(),
                ..closed(&recovery_fixture(&ada, 9, t0), RecoveryStatus::Expired, t0)
            },
            "recovery_requests_pkey",
        ),
        (
            recovery_fixture(&casper, 10, t0),
            "recovery_requests_tenant_id_fkey",
        ),
    ] {
        let (secret, cancel) = secrets(&format!("refused {}", request.id));
        let mut tx = store.write().await.expect("write");
        assert_conflict(
            tx.insert_recovery(&request, &secret, &cancel).await,
            constraint,
        );
    }
    // Another closed request is no obstacle.
    let mut tx = store.write().await.expect("write");
    let (secret, cancel) = secrets("expired");
    let expired_before = closed(
        &recovery_fixture(&ada, 11, t0 - Duration::days(9)),
        RecoveryStatus::Expired,
        t0 - Duration::days(7),
    );
    tx.insert_recovery(&expired_before, &secret, &cancel)
        .await
        .expect("a closed request beside the open one");
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.expire_recoveries(&acme.id, &ada.id, before_expiry)
            .await
            .expect("before expiry"),
        0,
        "not yet expired"
    );
    assert_eq!(
        tx.expire_recoveries(&other.id, &ada.id, late)
            .await
            .expect("other tenant"),
        0
    );
    assert_eq!(
        tx.expire_recoveries(&acme.id, &bob.id, t0 + Duration::days(30))
            .await
            .expect("waiting"),
        0,
        "a waiting request never expires"
    );
    assert_eq!(
        tx.expire_recoveries(&acme.id, &ada.id, first.expires_at)
            .await
            .expect("at expiry"),
        1
    );
    assert_eq!(
        tx.expire_recoveries(&acme.id, &ada.id, late)
            .await
            .expect("again"),
        0,
        "marked once"
    );
    assert_eq!(
        tx.recovery(&acme.id, &first.id).await.expect("read"),
        Some(closed(&first, RecoveryStatus::Expired, first.expires_at)),
        "expired, closed at the instant given"
    );
    let second = recovery_fixture(&ada, 12, late);
    let (secret, cancel) = secrets("second");
    tx.insert_recovery(&second, &secret, &cancel)
        .await
        .expect("a new request once the first expired");
    assert_eq!(
        tx.open_recovery(&acme.id, &ada.id, late)
            .await
            .expect("open"),
        Some(second)
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.recovery(&acme.id, &bobs.id).await.expect("bob's"),
        Some(bobs),
        "bob's waiting request is untouched"
    );
    assert_eq!(
        read.recovery(&other.id, &eves.id).await.expect("eve's"),
        Some(eves),
        "eve's request with the same id is untouched"
    );
    read.finish().await.expect("finish");
}

/// A request is found by the hash of its initiator's secret, by that of its cancel token and by
/// its id, in any status, in its own tenant only: another tenant, the other hash or an unknown
/// one finds nothing. A repeated secret or cancel hash is refused.
pub async fn recovery_requests_are_found_by_secret_cancel_token_and_id(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let t0 = whole_second(&acme);
    let open = recovery_fixture(&ada, 1, t0);
    let done = RecoveryRequest {
        factor_due: true,
        approvals_needed: 1,
        ..closed(
            &recovery_fixture(&ada, 2, t0 - Duration::days(5)),
            RecoveryStatus::Completed,
            t0 - Duration::days(1),
        )
    };
    let (open_secret, open_cancel) = secrets("open");
    let (done_secret, done_cancel) = secrets("done");
    let mut tx = store.write().await.expect("write");
    tx.insert_recovery(&open, &open_secret, &open_cancel)
        .await
        .expect("open");
    tx.insert_recovery(&done, &done_secret, &done_cancel)
        .await
        .expect("done");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    for (request, secret, cancel) in [
        (&open, &open_secret, &open_cancel),
        (&done, &done_secret, &done_cancel),
    ] {
        assert_eq!(
            read.recovery_by_secret(&acme.id, secret)
                .await
                .expect("by secret")
                .as_ref(),
            Some(request)
        );
        assert_eq!(
            read.recovery_by_cancel_token(&acme.id, cancel)
                .await
                .expect("by cancel token")
                .as_ref(),
            Some(request)
        );
        assert_eq!(
            read.recovery(&acme.id, &request.id)
                .await
                .expect("by id")
                .as_ref(),
            Some(request)
        );
        assert_eq!(
            read.recovery_by_secret(&other.id, secret)
                .await
                .expect("cross-tenant secret"),
            None,
            "another tenant never finds it"
        );
        assert_eq!(
            read.recovery_by_cancel_token(&other.id, cancel)
                .await
                .expect("cross-tenant cancel"),
            None
        );
        assert_eq!(
            read.recovery(&other.id, &request.id)
                .await
                .expect("cross-tenant id"),
            None
        );
        assert_eq!(
            read.recovery_by_secret(&acme.id, cancel)
                .await
                .expect("cancel token as secret"),
            None,
            "the cancel token is not the secret"
        );
        assert_eq!(
            read.recovery_by_cancel_token(&acme.id, secret)
                .await
                .expect("secret as cancel token"),
            None,
            "nor the other way round"
        );
    }
    assert_eq!(
        read.recovery_by_secret(&acme.id, &SecretHash::of("rs_unknown"))
            .await
            .expect("unknown"),
        None
    );
    assert_eq!(
        read.recovery(&acme.id, &recovery_fixture(&ada, 3, t0).id)
            .await
            .expect("unknown id"),
        None
    );
    read.finish().await.expect("finish");

    let later = t0 + Duration::days(9);
    for ((secret, cancel), constraint) in [
        (
            (open_secret.clone(), SecretHash::of("rc_fresh")),
            "recovery_requests_secret_hash_key",
        ),
        (
            (SecretHash::of("rs_fresh"), done_cancel.clone()),
            "recovery_requests_cancel_hash_key",
        ),
    ] {
        let mut tx = store.write().await.expect("write");
        assert_conflict(
            tx.insert_recovery(&recovery_fixture(&bob, 4, later), &secret, &cancel)
                .await,
            constraint,
        );
    }
}

/// An approval reads back as written, by its token's hash in its tenant only, and a request's
/// approvals list in guardian order. It is spent once, by its token, in its tenant, while
/// unspent and unexpired (below one second too): the spend returns it with `approved_at = now`;
/// a second spend, in the same transaction or later, a spend from another tenant, an unknown
/// token and a spend at or after its expiry get nothing and change nothing. One approval per
/// guardian and request; an approval for a request not in its tenant names the foreign key.
pub async fn recovery_approvals_are_spent_once_before_expiry(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let eve = user_fixture(&other, 2, "eve@example.com");
    let t0 = whole_second(&acme);
    let grace = guardian_fixture(&ada, 1, "grace@example.com", t0);
    let alan = guardian_fixture(&ada, 2, "alan@example.com", t0 + Duration::seconds(1));
    let edsger = guardian_fixture(&ada, 3, "edsger@example.com", t0 + Duration::seconds(2));
    let request = recovery_fixture(&ada, 1, t0 + Duration::seconds(3));
    let eves_request = recovery_fixture(&eve, 2, t0);
    // Grace's link expires at a whole second, sooner than the others.
    let graces = RecoveryApproval {
        expires_at: t0 + Duration::days(1),
        ..approval_fixture(&request, &grace)
    };
    let alans = approval_fixture(&request, &alan);
    let edsgers = approval_fixture(&request, &edsger);
    let tokens = [
        SecretHash::of("ra_grace"),
        SecretHash::of("ra_alan"),
        SecretHash::of("ra_edsger"),
    ];
    let (secret, cancel) = secrets("ada");
    let (eve_secret, eve_cancel) = secrets("eve");

    let mut tx = store.write().await.expect("write");
    for guardian in [&grace, &alan, &edsger] {
        tx.insert_guardian(guardian).await.expect("guardian");
    }
    tx.insert_recovery(&request, &secret, &cancel)
        .await
        .expect("request");
    tx.insert_recovery(&eves_request, &eve_secret, &eve_cancel)
        .await
        .expect("eve's request");
    // Inserted out of guardian order.
    for (approval, token) in [
        (&edsgers, &tokens[2]),
        (&graces, &tokens[0]),
        (&alans, &tokens[1]),
    ] {
        tx.insert_recovery_approval(approval, token)
            .await
            .expect("approval");
    }
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.recovery_approvals(&acme.id, &request.id)
            .await
            .expect("approvals"),
        vec![graces.clone(), alans.clone(), edsgers.clone()],
        "in guardian order, every field as written"
    );
    assert_eq!(
        read.recovery_approval(&acme.id, &tokens[1])
            .await
            .expect("by token"),
        Some(alans.clone())
    );
    assert_eq!(
        read.recovery_approval(&other.id, &tokens[1])
            .await
            .expect("cross-tenant"),
        None
    );
    assert!(
        read.recovery_approvals(&other.id, &request.id)
            .await
            .expect("cross-tenant list")
            .is_empty()
    );
    assert!(
        read.recovery_approvals(&other.id, &eves_request.id)
            .await
            .expect("eve's")
            .is_empty()
    );
    read.finish().await.expect("finish");

    let ghost_request = recovery_fixture(&ada, 3, t0);
    for (approval, constraint) in [
        (
            approval_fixture(&request, &grace),
            "recovery_approvals_tenant_id_request_id_guardian_id_key",
        ),
        (
            approval_fixture(&ghost_request, &grace),
            "recovery_approvals_request_id_fkey",
        ),
        (
            // Eve's request is in the other tenant: not a request of acme's.
            RecoveryApproval {
                request_id: eves_request.id.clone(),
                ..approval_fixture(&request, &grace)
            },
            "recovery_approvals_request_id_fkey",
        ),
    ] {
        let mut tx = store.write().await.expect("write");
        assert_conflict(
            tx.insert_recovery_approval(&approval, &SecretHash::of("ra_refused"))
                .await,
            constraint,
        );
    }
    let mut tx = store.write().await.expect("write");
    assert_conflict(
        tx.insert_recovery_approval(&approval_fixture(&eves_request, &grace), &tokens[0])
            .await,
        "recovery_approvals_pkey",
    );
    drop(tx);

    let now = t0 + Duration::hours(5) + Duration::microseconds(7);
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.spend_recovery_approval(&other.id, &tokens[1], now)
            .await
            .expect("other tenant"),
        None,
        "not from another tenant"
    );
    assert_eq!(
        tx.spend_recovery_approval(&acme.id, &SecretHash::of("ra_unknown"), now)
            .await
            .expect("unknown"),
        None
    );
    let alan_approved = RecoveryApproval {
        approved_at: Some(now),
        ..alans.clone()
    };
    assert_eq!(
        tx.spend_recovery_approval(&acme.id, &tokens[1], now)
            .await
            .expect("spend"),
        Some(alan_approved.clone()),
        "the refused spends spent nothing"
    );
    assert_eq!(
        tx.spend_recovery_approval(&acme.id, &tokens[1], now)
            .await
            .expect("spend again"),
        None,
        "single use, even in the same transaction"
    );
    tx.commit().await.expect("commit");

    let at_expiry = graces.expires_at;
    let just_before = at_expiry - Duration::milliseconds(500);
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.spend_recovery_approval(&acme.id, &tokens[1], at_expiry)
            .await
            .expect("after commit"),
        None,
        "spent for good"
    );
    assert_eq!(
        tx.spend_recovery_approval(&acme.id, &tokens[0], at_expiry)
            .await
            .expect("at expiry"),
        None,
        "dead from its expiry on"
    );
    assert_eq!(
        tx.spend_recovery_approval(
            &acme.id,
            &tokens[0],
            at_expiry + Duration::milliseconds(250)
        )
        .await
        .expect("after expiry"),
        None,
        "dead after its expiry, below one second too"
    );
    assert_eq!(
        tx.recovery_approval(&acme.id, &tokens[0])
            .await
            .expect("expired"),
        Some(graces.clone()),
        "an expired approval still reads back, unspent"
    );
    assert_eq!(
        tx.spend_recovery_approval(&acme.id, &tokens[0], just_before)
            .await
            .expect("just before expiry"),
        Some(RecoveryApproval {
            approved_at: Some(just_before),
            ..graces.clone()
        }),
        "alive until its expiry, below one second too; the expired spends spent nothing"
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.recovery_approvals(&acme.id, &request.id)
            .await
            .expect("approvals"),
        vec![
            RecoveryApproval {
                approved_at: Some(just_before),
                ..graces
            },
            alan_approved.clone(),
            edsgers
        ]
    );
    assert_eq!(
        read.recovery_approval(&acme.id, &tokens[1])
            .await
            .expect("spent"),
        Some(alan_approved),
        "a spent approval still reads back"
    );
    read.finish().await.expect("finish");
}

/// `update_recovery` writes status, `ready_at`, `closed_at` and `factor_due` (nothing else) only
/// while the stored status is the expected one, in the request's tenant: a wrong expectation,
/// another tenant or an unknown id returns false and changes nothing, so of two transitions from
/// one status only the first applies. Reopening a closed request beside an open one is the
/// partial index's conflict.
pub async fn recovery_transitions_apply_only_from_the_expected_status(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let t0 = whole_second(&acme);
    let request = recovery_fixture(&ada, 1, t0);
    let (secret, cancel) = secrets("ada");
    let mut tx = store.write().await.expect("write");
    tx.insert_recovery(&request, &secret, &cancel)
        .await
        .expect("request");
    tx.commit().await.expect("commit");

    let ready_at = t0 + Duration::days(3) + Duration::microseconds(1);
    let waiting = RecoveryRequest {
        status: RecoveryStatus::Waiting,
        ready_at: Some(ready_at),
        // Fields the update does not write: they stay as stored.
        approvals_needed: 9,
        expires_at: t0 + Duration::days(40),
        ..request.clone()
    };
    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.update_recovery(&waiting, RecoveryStatus::Waiting)
            .await
            .expect("wrong expectation"),
        "the stored status is pending"
    );
    assert!(
        !tx.update_recovery(
            &RecoveryRequest {
                tenant_id: other.id.clone(),
                ..waiting.clone()
            },
            RecoveryStatus::Pending
        )
        .await
        .expect("other tenant"),
        "not in another tenant"
    );
    assert!(
        !tx.update_recovery(
            &RecoveryRequest {
                id: recovery_fixture(&ada, 2, t0).id,
                ..waiting.clone()
            },
            RecoveryStatus::Pending
        )
        .await
        .expect("unknown")
    );
    assert_eq!(
        tx.recovery(&acme.id, &request.id).await.expect("read"),
        Some(request.clone()),
        "the refused updates changed nothing"
    );
    assert!(
        tx.update_recovery(&waiting, RecoveryStatus::Pending)
            .await
            .expect("pending to waiting")
    );
    assert!(
        !tx.update_recovery(&waiting, RecoveryStatus::Pending)
            .await
            .expect("again"),
        "the second transition from pending loses"
    );
    tx.commit().await.expect("commit");

    let stored_waiting = RecoveryRequest {
        status: RecoveryStatus::Waiting,
        ready_at: Some(ready_at),
        ..request.clone()
    };
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.recovery(&acme.id, &request.id).await.expect("read"),
        Some(stored_waiting.clone()),
        "status and ready_at written; approvals_needed and expires_at kept"
    );
    read.finish().await.expect("finish");

    let done_at = ready_at + Duration::milliseconds(1);
    let completed = RecoveryRequest {
        status: RecoveryStatus::Completed,
        closed_at: Some(done_at),
        factor_due: true,
        ..stored_waiting.clone()
    };
    let cancelled = RecoveryRequest {
        status: RecoveryStatus::Cancelled,
        closed_at: Some(done_at),
        ..stored_waiting.clone()
    };
    let mut tx = store.write().await.expect("write");
    assert!(
        tx.update_recovery(&completed, RecoveryStatus::Waiting)
            .await
            .expect("complete")
    );
    assert!(
        !tx.update_recovery(&cancelled, RecoveryStatus::Waiting)
            .await
            .expect("cancel after completion"),
        "a cancellation racing the completion loses"
    );
    assert_eq!(
        tx.recovery(&acme.id, &request.id).await.expect("read"),
        Some(completed.clone())
    );
    assert_eq!(
        tx.open_recovery(&acme.id, &ada.id, done_at)
            .await
            .expect("open"),
        None,
        "a completed request is closed"
    );
    let next = recovery_fixture(&ada, 3, done_at);
    let (next_secret, next_cancel) = secrets("next");
    tx.insert_recovery(&next, &next_secret, &next_cancel)
        .await
        .expect("a new request once the last one closed");
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_conflict(
        tx.update_recovery(
            &RecoveryRequest {
                status: RecoveryStatus::Waiting,
                closed_at: None,
                factor_due: false,
                ..completed.clone()
            },
            RecoveryStatus::Completed,
        )
        .await,
        "recovery_requests_one_open_key",
    );
}

/// Twenty transactions race, each on its own connection: to spend one approval (exactly one
/// gets it), to move one request from pending (exactly one moves it), and to start a request
/// for one person (exactly one starts).
pub async fn racing_recovery_writes_admit_exactly_one(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let t0 = whole_second(&acme);
    let grace = guardian_fixture(&ada, 1, "grace@example.com", t0);
    let request = recovery_fixture(&ada, 1, t0);
    let token = SecretHash::of("ra_race");
    let (secret, cancel) = secrets("ada");
    let mut tx = store.write().await.expect("write");
    tx.insert_guardian(&grace).await.expect("guardian");
    tx.insert_recovery(&request, &secret, &cancel)
        .await
        .expect("request");
    tx.insert_recovery_approval(&approval_fixture(&request, &grace), &token)
        .await
        .expect("approval");
    tx.commit().await.expect("commit");

    let spends = (0..20i64).map(|i| {
        let store = store.clone();
        let (tenant, token) = (acme.id.clone(), token.clone());
        async move {
            let now = t0 + Duration::milliseconds(i);
            let mut tx = store.write().await?;
            let spent = tx.spend_recovery_approval(&tenant, &token, now).await?;
            tx.commit().await?;
            Ok::<_, StoreError>(spent.is_some())
        }
    });
    let mut wins = 0;
    for outcome in join_all(spends).await {
        wins += usize::from(outcome.expect("transaction"));
    }
    assert_eq!(wins, 1, "one token approves once");

    let transitions = (0..20i64).map(|i| {
        let store = store.clone();
        let moved = RecoveryRequest {
            status: RecoveryStatus::Waiting,
            ready_at: Some(t0 + Duration::days(3) + Duration::milliseconds(i)),
            ..request.clone()
        };
        async move {
            let mut tx = store.write().await?;
            let moved = tx.update_recovery(&moved, RecoveryStatus::Pending).await?;
            tx.commit().await?;
            Ok::<_, StoreError>(moved)
        }
    });
    let mut wins = 0;
    for outcome in join_all(transitions).await {
        wins += usize::from(outcome.expect("transaction"));
    }
    assert_eq!(wins, 1, "one transition from pending");

    let starts = (0..20u64).map(|i| {
        let store = store.clone();
        let started = recovery_fixture(&bob, 100 + i, t0 + Duration::milliseconds(i as i64));
        async move {
            let (secret, cancel) = secrets(&format!("bob {i}"));
            let mut tx = store.write().await?;
            match tx.insert_recovery(&started, &secret, &cancel).await {
                Ok(()) => {}
                Err(StoreError::Conflict { constraint })
                    if constraint == "recovery_requests_one_open_key" =>
                {
                    return Ok(false);
                }
                Err(other) => return Err(other),
            }
            tx.commit().await?;
            Ok::<_, StoreError>(true)
        }
    });
    let mut wins = 0;
    for outcome in join_all(starts).await {
        wins += usize::from(outcome.expect("transaction"));
    }
    assert_eq!(wins, 1, "one open request per person");
}

/// Whether a factor is due reads the user's completed requests only, in their tenant; clearing
/// it clears every one of the user's requests owing one (counting them) and nobody else's.
pub async fn recovery_factor_due_is_read_and_cleared_per_user(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let t0 = whole_second(&acme);
    let owing = |user: &User, seed: u64, at: OffsetDateTime| RecoveryRequest {
        factor_due: true,
        ..closed(
            &recovery_fixture(user, seed, at - Duration::days(4)),
            RecoveryStatus::Completed,
            at,
        )
    };
    let ada_first = owing(&ada, 1, t0 - Duration::days(20));
    let ada_second = owing(&ada, 2, t0 - Duration::days(10));
    let bobs = owing(&bob, 3, t0 - Duration::days(10));
    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.recovery_factor_due(&acme.id, &ada.id)
            .await
            .expect("nothing yet")
    );
    for (request, name) in [(&ada_first, "a1"), (&ada_second, "a2"), (&bobs, "b")] {
        let (secret, cancel) = secrets(name);
        tx.insert_recovery(request, &secret, &cancel)
            .await
            .expect("request");
    }
    // Ada's open request owes nothing (the schema admits `factor_due` on completed ones only).
    let (secret, cancel) = secrets("a3");
    tx.insert_recovery(&recovery_fixture(&ada, 4, t0), &secret, &cancel)
        .await
        .expect("open request");
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert!(
        tx.recovery_factor_due(&acme.id, &ada.id)
            .await
            .expect("ada")
    );
    assert!(
        tx.recovery_factor_due(&acme.id, &bob.id)
            .await
            .expect("bob")
    );
    assert!(
        !tx.recovery_factor_due(&other.id, &ada.id)
            .await
            .expect("cross-tenant"),
        "not in another tenant"
    );
    assert_eq!(
        tx.clear_recovery_factor_due(&other.id, &ada.id)
            .await
            .expect("other tenant"),
        0
    );
    assert_eq!(
        tx.clear_recovery_factor_due(&acme.id, &ada.id)
            .await
            .expect("clear"),
        2
    );
    assert_eq!(
        tx.clear_recovery_factor_due(&acme.id, &ada.id)
            .await
            .expect("again"),
        0
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert!(
        !read
            .recovery_factor_due(&acme.id, &ada.id)
            .await
            .expect("ada")
    );
    assert!(
        read.recovery_factor_due(&acme.id, &bob.id)
            .await
            .expect("bob"),
        "bob still owes one"
    );
    assert_eq!(
        read.recovery(&acme.id, &ada_second.id).await.expect("read"),
        Some(RecoveryRequest {
            factor_due: false,
            ..ada_second
        }),
        "only factor_due changed"
    );
    read.finish().await.expect("finish");
}

/// What the domain rules out is refused by the schema on every backend, naming the rule: no
/// approval needed, a closed status without `closed_at` or an open one with it, a waiting one
/// without `ready_at`, a factor owed by a request that did not complete. Nothing is stored.
pub async fn recovery_requests_refuse_what_the_schema_forbids(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let t0 = whole_second(&acme);
    let base = recovery_fixture(&ada, 1, t0);
    let refusals = [
        (
            RecoveryRequest {
                approvals_needed: 0,
                ..base.clone()
            },
            "recovery_requests_approvals_needed_check",
        ),
        (
            RecoveryRequest {
                status: RecoveryStatus::Cancelled,
                ..base.clone()
            },
            "recovery_requests_closed_at_check",
        ),
        (
            RecoveryRequest {
                closed_at: Some(t0),
                ..base.clone()
            },
            "recovery_requests_closed_at_check",
        ),
        (
            RecoveryRequest {
                status: RecoveryStatus::Waiting,
                ..base.clone()
            },
            "recovery_requests_ready_at_check",
        ),
        (
            RecoveryRequest {
                factor_due: true,
                ..closed(&base, RecoveryStatus::Cancelled, t0)
            },
            "recovery_requests_factor_due_check",
        ),
    ];
    // Each write in its own transaction: on PostgreSQL a failed statement aborts the transaction.
    for (request, constraint) in refusals {
        let (secret, cancel) = secrets(constraint);
        let mut tx = store.write().await.expect("write");
        assert_refused_by_check(
            tx.insert_recovery(&request, &secret, &cancel).await,
            constraint,
        );
    }
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.recovery(&acme.id, &base.id).await.expect("read"),
        None,
        "nothing stored"
    );
    read.finish().await.expect("finish");
}

/// The purge deletes, in every tenant, the closed requests (cancelled, completed, expired)
/// closed before the cutoff (compared as instants, below one second too) that owe no factor,
/// with their approvals, counting both; it keeps open requests, those closed at or after the
/// cutoff and those owing a factor, with their approvals. A second purge finds nothing.
pub async fn closed_recoveries_are_purged_keeping_open_and_owing_ones(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let users = [
        user_fixture(&acme, 1, "ada@example.com"),
        user_fixture(&acme, 2, "bob@example.com"),
        user_fixture(&acme, 3, "cy@example.com"),
        user_fixture(&acme, 4, "di@example.com"),
        user_fixture(&other, 5, "eve@example.com"),
    ];
    let t0 = whole_second(&acme);
    // The cutoff is a quarter second past a whole second; a request closed at that whole second
    // (whose text sorts after the cutoff's) is closed before it.
    let before = t0 + Duration::days(30) + Duration::milliseconds(250);
    let start = t0;
    let long_ago = before - Duration::days(5);
    let dead = [
        closed(
            &recovery_fixture(&users[0], 1, start),
            RecoveryStatus::Cancelled,
            long_ago,
        ),
        closed(
            &recovery_fixture(&users[1], 2, start),
            RecoveryStatus::Completed,
            long_ago,
        ),
        closed(
            &recovery_fixture(&users[2], 3, start),
            RecoveryStatus::Expired,
            t0 + Duration::days(30),
        ),
        closed(
            &recovery_fixture(&users[4], 4, start),
            RecoveryStatus::Expired,
            long_ago,
        ),
    ];
    let kept = [
        RecoveryRequest {
            factor_due: true,
            ..closed(
                &recovery_fixture(&users[0], 5, start),
                RecoveryStatus::Completed,
                long_ago,
            )
        },
        closed(
            &recovery_fixture(&users[1], 6, start),
            RecoveryStatus::Cancelled,
            before,
        ),
        closed(
            &recovery_fixture(&users[2], 7, start),
            RecoveryStatus::Cancelled,
            before + Duration::days(1),
        ),
        // Open ones, one of them long expired but never marked.
        recovery_fixture(&users[0], 8, start),
        RecoveryRequest {
            status: RecoveryStatus::Waiting,
            ready_at: Some(long_ago),
            ..recovery_fixture(&users[3], 9, start)
        },
        recovery_fixture(&users[4], 10, start),
    ];
    let mut tx = store.write().await.expect("write");
    let mut guardians = Vec::new();
    for (n, user) in users.iter().enumerate() {
        let guardian = guardian_fixture(user, n as u64, "grace@example.com", start);
        tx.insert_guardian(&guardian).await.expect("guardian");
        guardians.push(guardian);
    }
    let guardian_of = |request: &RecoveryRequest| {
        guardians
            .iter()
            .find(|g| g.user_id == request.user_id)
            .cloned()
            .expect("a guardian")
    };
    // Two approvals for each dead request (the second from a guardian since deleted), one for
    // each kept one.
    let mut dead_tokens = Vec::new();
    for request in &dead {
        let (secret, cancel) = secrets(request.id.as_str());
        tx.insert_recovery(request, &secret, &cancel)
            .await
            .expect("dead request");
        let token = SecretHash::of(&format!("ra_{}", request.id));
        tx.insert_recovery_approval(&approval_fixture(request, &guardian_of(request)), &token)
            .await
            .expect("approval");
        let gone = guardian_fixture(&users[0], 99, "gone@example.com", start);
        let gone_token = SecretHash::of(&format!("ra_gone_{}", request.id));
        tx.insert_recovery_approval(&approval_fixture(request, &gone), &gone_token)
            .await
            .expect("approval of a deleted guardian");
        dead_tokens.extend([token, gone_token]);
    }
    let mut kept_tokens = Vec::new();
    for request in &kept {
        let (secret, cancel) = secrets(request.id.as_str());
        tx.insert_recovery(request, &secret, &cancel)
            .await
            .expect("kept request");
        let token = SecretHash::of(&format!("ra_{}", request.id));
        tx.insert_recovery_approval(&approval_fixture(request, &guardian_of(request)), &token)
            .await
            .expect("approval");
        kept_tokens.push((request.tenant_id.clone(), token));
    }
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    // In bounded rounds: three requests with their six approvals, then the last with its two.
    assert_eq!(
        tx.purge_closed_recoveries(before, 3).await.expect("purge"),
        3 + 6,
        "three requests and their six approvals"
    );
    assert_eq!(
        tx.purge_closed_recoveries(before, 3)
            .await
            .expect("the rest"),
        1 + 2,
        "the fourth request and its two approvals"
    );
    assert_eq!(
        tx.purge_closed_recoveries(before, 3).await.expect("again"),
        0
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    for request in &dead {
        assert_eq!(
            read.recovery(&request.tenant_id, &request.id)
                .await
                .expect("dead"),
            None,
            "{:?} closed at {:?} is purged",
            request.status,
            request.closed_at
        );
        assert!(
            read.recovery_approvals(&request.tenant_id, &request.id)
                .await
                .expect("dead approvals")
                .is_empty()
        );
    }
    for token in &dead_tokens {
        for tenant in [&acme.id, &other.id] {
            assert_eq!(
                read.recovery_approval(tenant, token)
                    .await
                    .expect("dead approval"),
                None
            );
        }
    }
    for request in &kept {
        assert_eq!(
            read.recovery(&request.tenant_id, &request.id)
                .await
                .expect("kept")
                .as_ref(),
            Some(request),
            "{:?} closed at {:?} stays",
            request.status,
            request.closed_at
        );
    }
    for (tenant, token) in &kept_tokens {
        assert!(
            read.recovery_approval(tenant, token)
                .await
                .expect("kept approval")
                .is_some()
        );
    }
    assert_eq!(
        read.guardians(&acme.id, &users[0].id)
            .await
            .expect("guardians")
            .len(),
        1,
        "guardians are not purged"
    );
    read.finish().await.expect("finish");
}

/// Deleting a tenant deletes its guardians, requests and approvals, and nobody else's; the same
/// tenant created again (same id) finds nothing of them and can store them again.
pub async fn recovery_records_go_with_their_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let eve = user_fixture(&other, 2, "eve@example.com");
    let t0 = whole_second(&acme);
    let grace = guardian_fixture(&ada, 1, "grace@example.com", t0);
    let eves_guardian = guardian_fixture(&eve, 2, "grace@example.com", t0);
    let request = RecoveryRequest {
        factor_due: true,
        ..closed(
            &recovery_fixture(&ada, 1, t0),
            RecoveryStatus::Completed,
            t0 + Duration::days(3),
        )
    };
    let open = recovery_fixture(&ada, 2, t0 + Duration::days(4));
    let eves_request = recovery_fixture(&eve, 3, t0);
    let approval = approval_fixture(&open, &grace);
    let eves_approval = approval_fixture(&eves_request, &eves_guardian);
    let token = SecretHash::of("ra_ada");
    let eve_token = SecretHash::of("ra_eve");
    let (secret, cancel) = secrets("ada");
    let (open_secret, open_cancel) = secrets("ada open");
    let (eve_secret, eve_cancel) = secrets("eve");

    let store_all = |store: Arc<dyn Store>| {
        let (grace, request, open, approval, token) = (
            grace.clone(),
            request.clone(),
            open.clone(),
            approval.clone(),
            token.clone(),
        );
        let (secret, cancel, open_secret, open_cancel) = (
            secret.clone(),
            cancel.clone(),
            open_secret.clone(),
            open_cancel.clone(),
        );
        async move {
            let mut tx = store.write().await.expect("write");
            tx.insert_guardian(&grace).await.expect("guardian");
            tx.insert_recovery(&request, &secret, &cancel)
                .await
                .expect("request");
            tx.insert_recovery(&open, &open_secret, &open_cancel)
                .await
                .expect("open request");
            tx.insert_recovery_approval(&approval, &token)
                .await
                .expect("approval");
            tx.commit().await.expect("commit");
        }
    };
    store_all(store.clone()).await;
    let mut tx = store.write().await.expect("write");
    tx.insert_guardian(&eves_guardian).await.expect("eve's");
    tx.insert_recovery(&eves_request, &eve_secret, &eve_cancel)
        .await
        .expect("eve's request");
    tx.insert_recovery_approval(&eves_approval, &eve_token)
        .await
        .expect("eve's approval");
    tx.delete_tenant(&acme.id).await.expect("delete tenant");
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    tx.insert_tenant(&acme).await.expect("tenant again");
    assert!(
        tx.guardians(&acme.id, &ada.id)
            .await
            .expect("guardians")
            .is_empty()
    );
    assert_eq!(
        tx.recovery_by_secret(&acme.id, &secret)
            .await
            .expect("request"),
        None
    );
    assert_eq!(
        tx.open_recovery(&acme.id, &ada.id, open.created_at)
            .await
            .expect("open"),
        None
    );
    assert_eq!(
        tx.recovery_approval(&acme.id, &token)
            .await
            .expect("approval"),
        None
    );
    assert!(
        !tx.recovery_factor_due(&acme.id, &ada.id)
            .await
            .expect("factor due")
    );
    tx.commit().await.expect("commit");
    store_all(store.clone()).await;

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.guardians(&other.id, &eve.id).await.expect("eve's"),
        vec![eves_guardian]
    );
    assert_eq!(
        read.recovery(&other.id, &eves_request.id)
            .await
            .expect("eve's request"),
        Some(eves_request)
    );
    assert_eq!(
        read.recovery_approval(&other.id, &eve_token)
            .await
            .expect("eve's approval"),
        Some(eves_approval),
        "the other tenant keeps everything"
    );
    read.finish().await.expect("finish");
}
