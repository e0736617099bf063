//! Conformance: sessions remember the applications they signed into; ending a session, one or
//! all of a person's, writes one back-channel logout notice per such application that
//! registered a URI, in the same transaction; notices are claimed with a lease, retried,
//! finished, scoped to their tenant and purged a day after they were written. Sessions that
//! expire unrevoked get their notices once, from the expiry mark.

use super::grants::{base, stored_tenant};
use super::{application_fixture, session_fixture, user_fixture};
use crate::{Store, StoreError};
use std::sync::Arc;
use svc_domain::{
    Application, LogoutAttempt, LogoutChannels, LogoutOutcome, Session, SessionClient, Tenant,
};
use time::{Duration, OffsetDateTime};

fn listening(tenant: &Tenant, seed: u64) -> Application {
    Application {
        logout: LogoutChannels {
            backchannel_uri: Some(format!("https://rp{seed}.example/logout")),
            backchannel_session_required: true,
            ..LogoutChannels::default()
        },
        ..application_fixture(tenant, seed)
    }
}

fn joined(session: &Session, app: &Application, at: OffsetDateTime) -> SessionClient {
    SessionClient {
        tenant_id: session.tenant_id.clone(),
        session_id: session.id.clone(),
        client_id: app.id.clone(),
        subject: format!("sub-{}-{}", session.user_id.as_str(), app.id.as_str()),
        issuer: "https://acme.example".to_owned(),
        joined_at: at,
    }
}

/// The whole life of notices on one tenant, with another tenant looking on.
pub async fn ending_sessions_writes_logout_notices_claimed_with_a_lease(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let t0 = base(&acme);
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let shop = listening(&acme, 11);
    let quiet = application_fixture(&acme, 12);
    let first = session_fixture(&ada, 1, t0);
    let second = session_fixture(&ada, 2, t0);
    let bobs = session_fixture(&bob, 3, t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_user(&ada).await.expect("ada");
    tx.insert_user(&bob).await.expect("bob");
    tx.insert_application(&shop).await.expect("shop");
    tx.insert_application(&quiet).await.expect("quiet");
    for s in [&first, &second, &bobs] {
        tx.insert_session(s).await.expect("session");
    }
    tx.join_session(&joined(&first, &quiet, t0 + Duration::seconds(2)))
        .await
        .expect("quiet");
    tx.join_session(&joined(&first, &shop, t0 + Duration::seconds(1)))
        .await
        .expect("shop");
    // A second sign-in into the same application keeps the first record.
    let again = SessionClient {
        subject: "changed".to_owned(),
        ..joined(&first, &shop, t0 + Duration::seconds(9))
    };
    tx.join_session(&again).await.expect("idempotent");
    tx.join_session(&joined(&second, &shop, t0))
        .await
        .expect("second");
    tx.join_session(&joined(&bobs, &shop, t0))
        .await
        .expect("bob's");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    let clients = read
        .session_clients(&acme.id, &first.id)
        .await
        .expect("clients");
    assert_eq!(
        clients,
        vec![
            joined(&first, &shop, t0 + Duration::seconds(1)),
            joined(&first, &quiet, t0 + Duration::seconds(2))
        ],
        "oldest first, the first record kept"
    );
    assert!(
        read.session_clients(&other.id, &first.id)
            .await
            .expect("other")
            .is_empty(),
        "another tenant sees nothing"
    );
    assert!(
        read.logout_notices(&acme.id, &first.id)
            .await
            .expect("none yet")
            .is_empty(),
        "a live session has no notice"
    );
    read.finish().await.expect("finish");

    // Ending one session: a notice for the application with a URI, none for the other.
    let t1 = t0 + Duration::minutes(1);
    let mut tx = store.write().await.expect("write");
    assert!(
        tx.revoke_session(&acme.id, &first.id, t1)
            .await
            .expect("revoke")
    );
    assert!(
        !tx.revoke_session(&acme.id, &first.id, t1)
            .await
            .expect("again")
    );
    // Another tenant cannot end it or notify for it.
    assert!(
        !tx.revoke_session(&other.id, &second.id, t1)
            .await
            .expect("cross")
    );
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    let notices = read
        .logout_notices(&acme.id, &first.id)
        .await
        .expect("notices");
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0].client_id, shop.id);
    assert_eq!(notices[0].outcome, LogoutOutcome::Pending);
    assert_eq!(notices[0].attempts, 0);
    assert!(
        read.logout_notices(&other.id, &first.id)
            .await
            .expect("other")
            .is_empty()
    );
    assert!(
        read.logout_notices(&acme.id, &second.id)
            .await
            .expect("2nd")
            .is_empty()
    );
    read.finish().await.expect("finish");

    // Ending all of Ada's sessions notifies for the one still live, not again for the first;
    // Bob's session is untouched.
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.revoke_user_sessions(&acme.id, &ada.id, t1)
            .await
            .expect("all"),
        1
    );
    tx.commit().await.expect("commit");

    // Claiming: both notices, each attempt counted; a second claim inside the lease gets none.
    let lease = t1 + Duration::seconds(30);
    let mut tx = store.write().await.expect("write");
    let mut claimed = tx.claim_logout_notices(t1, lease, 10).await.expect("claim");
    claimed.sort_by(|a, b| a.session_id.cmp(&b.session_id));
    assert_eq!(claimed.len(), 2, "{claimed:?}");
    let mut sessions = vec![first.id.clone(), second.id.clone()];
    sessions.sort();
    assert_eq!(
        claimed
            .iter()
            .map(|n| n.session_id.clone())
            .collect::<Vec<_>>(),
        sessions
    );
    for notice in &claimed {
        assert_eq!(notice.tenant_id, acme.id);
        assert_eq!(notice.client_id, shop.id);
        assert_eq!(notice.attempts, 1);
        assert_eq!(notice.issuer, "https://acme.example");
        assert!(notice.subject.starts_with("sub-"), "{}", notice.subject);
    }
    assert!(
        tx.claim_logout_notices(t1, lease, 10)
            .await
            .expect("leased")
            .is_empty()
    );
    tx.commit().await.expect("commit");

    // A lease that ran out makes a notice due again (a worker that stopped mid-attempt).
    let mut tx = store.write().await.expect("write");
    let back = tx
        .claim_logout_notices(lease, lease + Duration::seconds(30), 1)
        .await;
    let back = back.expect("reclaim");
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].attempts, 2);
    tx.commit().await.expect("commit");

    // One delivered, one to retry later; the other tenant cannot record on them.
    let later = t1 + Duration::minutes(5);
    let mut tx = store.write().await.expect("write");
    let delivered = LogoutAttempt {
        at: t1,
        status_code: Some(200),
        error: None,
        retry_at: None,
        outcome: LogoutOutcome::Delivered,
    };
    let retry = LogoutAttempt {
        at: t1,
        status_code: Some(503),
        error: Some("503 Service Unavailable".to_owned()),
        retry_at: Some(later),
        outcome: LogoutOutcome::Pending,
    };
    assert!(matches!(
        tx.record_logout_attempt(&other.id, &first.id, &shop.id, &delivered)
            .await,
        Err(StoreError::NotFound)
    ));
    tx.record_logout_attempt(&acme.id, &first.id, &shop.id, &delivered)
        .await
        .expect("delivered");
    tx.record_logout_attempt(&acme.id, &second.id, &shop.id, &retry)
        .await
        .expect("retry");
    assert!(
        tx.claim_logout_notices(
            later - Duration::seconds(1),
            later + Duration::minutes(1),
            10
        )
        .await
        .expect("not yet")
        .is_empty()
    );
    let due = tx
        .claim_logout_notices(later, later + Duration::minutes(1), 10)
        .await
        .expect("due");
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].session_id, second.id);
    let failed = LogoutAttempt {
        at: later,
        status_code: Some(400),
        error: Some("400 Bad Request".to_owned()),
        retry_at: None,
        outcome: LogoutOutcome::Failed,
    };
    tx.record_logout_attempt(&acme.id, &second.id, &shop.id, &failed)
        .await
        .expect("failed");
    assert!(
        tx.claim_logout_notices(later + Duration::days(1), later + Duration::days(2), 10)
            .await
            .expect("finished")
            .is_empty(),
        "finished notices are never claimed again"
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    let first_state = read
        .logout_notices(&acme.id, &first.id)
        .await
        .expect("first");
    assert_eq!(first_state[0].outcome, LogoutOutcome::Delivered);
    assert_eq!(first_state[0].last_status_code, Some(200));
    assert_eq!(first_state[0].last_error, None);
    let second_state = read
        .logout_notices(&acme.id, &second.id)
        .await
        .expect("second");
    assert_eq!(second_state[0].outcome, LogoutOutcome::Failed);
    assert_eq!(second_state[0].attempts, 2);
    assert_eq!(second_state[0].last_status_code, Some(400));
    assert_eq!(
        second_state[0].last_error.as_deref(),
        Some("400 Bad Request")
    );
    read.finish().await.expect("finish");

    // Purged a day after they were written, like the sessions they were about.
    let mut tx = store.write().await.expect("write");
    tx.purge_expired_grants(t1 + Duration::hours(23))
        .await
        .expect("purge");
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.logout_notices(&acme.id, &first.id)
            .await
            .expect("kept")
            .len(),
        1
    );
    read.finish().await.expect("finish");
    let mut tx = store.write().await.expect("write");
    tx.purge_expired_grants(t1 + Duration::days(1) + Duration::seconds(1))
        .await
        .expect("purge");
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert!(
        read.logout_notices(&acme.id, &first.id)
            .await
            .expect("gone")
            .is_empty()
    );
    assert!(
        read.logout_notices(&acme.id, &second.id)
            .await
            .expect("gone")
            .is_empty()
    );
    read.finish().await.expect("finish");
}

/// A session's application record goes with its application, and so does a notice; a session
/// the store does not hold cannot be joined.
pub async fn logout_records_follow_their_application_not_their_session(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let t0 = base(&acme);
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let shop = listening(&acme, 11);
    let gone = listening(&acme, 12);
    let session = session_fixture(&ada, 1, t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_user(&ada).await.expect("ada");
    tx.insert_application(&shop).await.expect("shop");
    tx.insert_application(&gone).await.expect("gone");
    tx.insert_session(&session).await.expect("session");
    tx.join_session(&joined(&session, &shop, t0))
        .await
        .expect("shop");
    tx.join_session(&joined(&session, &gone, t0))
        .await
        .expect("gone");
    assert!(
        tx.revoke_session(&acme.id, &session.id, t0)
            .await
            .expect("revoke")
    );
    tx.delete_application(&acme.id, &gone.id)
        .await
        .expect("delete");
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    let clients = read
        .session_clients(&acme.id, &session.id)
        .await
        .expect("clients");
    assert_eq!(
        clients.len(),
        1,
        "the deleted application's record went with it"
    );
    let notices = read
        .logout_notices(&acme.id, &session.id)
        .await
        .expect("notices");
    assert_eq!(notices.len(), 1);
    assert_eq!(notices[0].client_id, shop.id);
    read.finish().await.expect("finish");
    // A session unknown to the store cannot be joined.
    let stray = session_fixture(&ada, 9, t0);
    let mut tx = store.write().await.expect("write");
    assert!(tx.join_session(&joined(&stray, &shop, t0)).await.is_err());
}

/// Sessions that run out unrevoked get one notice per listening application, each expiry
/// announced once: the first pass only sets the mark, a window never looks more than a day
/// back, a clock behind the mark writes nothing, and every tenant's expiries are announced
/// under their own tenant.
pub async fn expired_sessions_get_their_notices_once(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let t0 = base(&acme);
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let eve = user_fixture(&other, 3, "eve@example.com");
    let carl = user_fixture(&acme, 4, "carl@example.com");
    let shop = listening(&acme, 21);
    let quiet = application_fixture(&acme, 22);
    let theirs = listening(&other, 23);
    // Every fixture session lives eight hours.
    let before = session_fixture(&ada, 1, t0 - Duration::days(2));
    let first = session_fixture(&ada, 2, t0);
    let later = session_fixture(&ada, 3, t0 + Duration::hours(1));
    let revoked = session_fixture(&bob, 4, t0);
    let elsewhere = session_fixture(&eve, 5, t0);
    let much_later = session_fixture(&ada, 6, t0 + Duration::days(2));
    let carls = session_fixture(&carl, 7, t0);
    let mut tx = store.write().await.expect("write");
    for user in [&ada, &bob, &eve, &carl] {
        tx.insert_user(user).await.expect("user");
    }
    for app in [&shop, &quiet, &theirs] {
        tx.insert_application(app).await.expect("application");
    }
    for s in [
        &before,
        &first,
        &later,
        &revoked,
        &elsewhere,
        &much_later,
        &carls,
    ] {
        tx.insert_session(s).await.expect("session");
    }
    for (s, app) in [
        (&before, &shop),
        (&first, &shop),
        (&first, &quiet),
        (&later, &shop),
        (&revoked, &shop),
        (&elsewhere, &theirs),
        (&much_later, &shop),
        (&carls, &shop),
    ] {
        tx.join_session(&joined(s, app, s.created_at))
            .await
            .expect("join");
    }
    assert!(
        tx.revoke_session(&acme.id, &revoked.id, t0 + Duration::minutes(1))
            .await
            .expect("revoke")
    );
    tx.commit().await.expect("commit");

    let pass = |at: OffsetDateTime| {
        let store = store.clone();
        async move {
            let mut tx = store.write().await.expect("write");
            let written = tx.notify_expired_sessions(at).await.expect("notify");
            tx.commit().await.expect("commit");
            written
        }
    };
    let notices = |tenant: &Tenant, session: &Session| {
        let (store, tenant, session) = (store.clone(), tenant.id.clone(), session.id.clone());
        async move {
            let mut read = store.read().await.expect("read");
            let found = read
                .logout_notices(&tenant, &session)
                .await
                .expect("notices");
            read.finish().await.expect("finish");
            found.into_iter().map(|n| n.client_id).collect::<Vec<_>>()
        }
    };

    assert_eq!(pass(t0).await, 0, "the first pass only sets the mark");
    assert_eq!(
        pass(t0 + Duration::hours(7)).await,
        0,
        "nothing expired since the mark (the session that ended before it stays quiet)"
    );
    assert!(notices(&acme, &before).await.is_empty());
    assert_eq!(
        pass(t0 + Duration::hours(8)).await,
        3,
        "Ada's first session, Carl's, and the other tenant's"
    );
    assert_eq!(notices(&acme, &first).await, vec![shop.id.clone()]);
    assert_eq!(notices(&other, &elsewhere).await, vec![theirs.id.clone()]);
    assert!(
        notices(&acme, &elsewhere).await.is_empty(),
        "a notice is read in its own tenant only"
    );
    assert_eq!(
        notices(&acme, &revoked).await,
        vec![shop.id.clone()],
        "the revoked session keeps the one notice its revocation wrote"
    );
    assert_eq!(pass(t0 + Duration::hours(8)).await, 0, "announced once");
    // Ending a person's sessions after their expiry was announced announces nothing again.
    let mut tx = store.write().await.expect("write");
    tx.revoke_user_sessions(&acme.id, &carl.id, t0 + Duration::hours(8))
        .await
        .expect("revoke Carl's");
    tx.commit().await.expect("commit");
    assert_eq!(notices(&acme, &carls).await, vec![shop.id.clone()]);
    assert_eq!(
        pass(t0 + Duration::hours(7)).await,
        0,
        "a clock behind the mark writes nothing"
    );

    // Two days on: the session that expired at nine hours is more than a day old and stays
    // quiet; the one that expired within the day is announced.
    assert_eq!(pass(t0 + Duration::days(2) + Duration::hours(9)).await, 1);
    assert!(notices(&acme, &later).await.is_empty());
    assert_eq!(notices(&acme, &much_later).await, vec![shop.id.clone()]);

    // The notices are claimed like any other, with what the application saw.
    let now = t0 + Duration::days(2) + Duration::hours(9);
    let mut tx = store.write().await.expect("write");
    let mut claimed = tx
        .claim_logout_notices(now, now + Duration::minutes(1), 10)
        .await
        .expect("claim");
    tx.commit().await.expect("commit");
    claimed.sort_by(|a, b| a.session_id.cmp(&b.session_id));
    let mut expected = vec![
        (acme.id.clone(), revoked.id.clone()),
        (acme.id.clone(), first.id.clone()),
        (other.id.clone(), elsewhere.id.clone()),
        (acme.id.clone(), much_later.id.clone()),
        (acme.id.clone(), carls.id.clone()),
    ];
    expected.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(
        claimed
            .iter()
            .map(|n| (n.tenant_id.clone(), n.session_id.clone()))
            .collect::<Vec<_>>(),
        expected
    );
    let elsewhere_notice = claimed
        .iter()
        .find(|n| n.session_id == elsewhere.id)
        .expect("the other tenant's notice");
    assert_eq!(
        elsewhere_notice.subject,
        joined(&elsewhere, &theirs, t0).subject
    );
}
