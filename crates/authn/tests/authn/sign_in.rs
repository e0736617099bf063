//! Sign-in: the right answer for the right password, one answer for every refusal, the
//! per-account lock and the per-IP limit, and Unicode normalisation.

use crate::support::{client, harness, harness_with, test_settings};
use std::time::Duration as StdDuration;
use svc_authn::{AuthnError, ClientInfo, SESSION_COOKIE_PREFIX};
use svc_domain::UserStatus;
use time::Duration;

const PW: &str = "correct horse battery";

#[tokio::test]
async fn the_right_password_signs_in_and_creates_a_session() {
    let h = harness().await;
    let ada = h
        .user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    let long_agent = ClientInfo {
        user_agent: Some("x".repeat(400)),
        ..client("203.0.113.7")
    };
    let signed = h
        .authn
        .sign_in(&h.tenant, " Ada@Example.COM ", PW, &long_agent)
        .await
        .unwrap();
    assert_eq!(signed.user.id, ada.id);
    assert!(signed.cookie_value.starts_with(SESSION_COOKIE_PREFIX));
    assert!(!format!("{signed:?}").contains(&signed.cookie_value));
    let s = &signed.session;
    assert_eq!(s.amr, vec!["pwd".to_owned()]);
    assert_eq!(
        s.acr.as_deref(),
        Some(svc_domain::ACR_PASSWORD),
        "password sign-in is AAL1"
    );
    assert_eq!(s.auth_time, s.created_at);
    assert_eq!(s.expires_at - s.created_at, Duration::days(14));
    assert_eq!(s.user_agent.as_ref().unwrap().chars().count(), 256);
    assert_eq!(s.ip.as_deref(), Some("203.0.113.7"));
    assert!(s.secret_hash.verify(&signed.cookie_value));

    let stored = h.stored(&ada.id).await;
    assert_eq!(stored.last_sign_in_at, Some(s.created_at));
    let (found, user) = h
        .authn
        .session(&h.tenant, &signed.cookie_value)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((found.id, user.id), (s.id.clone(), ada.id));
    assert!(
        h.authn
            .session(&h.tenant, "ses_s_not-a-session")
            .await
            .unwrap()
            .is_none()
    );
    assert!(h.authn.session(&h.tenant, "junk").await.unwrap().is_none());
}

#[tokio::test]
async fn wrong_passwords_unknown_and_inactive_accounts_get_one_answer() {
    let h = harness().await;
    h.user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    h.user("ivy@example.com", None, UserStatus::Invited).await;
    h.user("pat@example.com", Some(PW), UserStatus::PreProvisioned)
        .await;
    h.user("sue@example.com", Some(PW), UserStatus::Suspended)
        .await;
    let c = client("198.51.100.1");
    let cases = [
        ("ada@example.com", "wrong horse battery"),
        ("nobody@example.com", PW),
        ("ivy@example.com", PW),
        ("pat@example.com", PW),
        ("sue@example.com", PW),
        ("ada@example.com", "short"),
        ("not an address", PW),
    ];
    for (email, password) in cases {
        let err = h
            .authn
            .sign_in(&h.tenant, email, password, &c)
            .await
            .unwrap_err();
        assert!(
            matches!(err, AuthnError::InvalidCredentials),
            "{email}: {err:?}"
        );
        assert_eq!(
            err.to_string(),
            "the email address or password is not correct"
        );
    }
}

#[tokio::test]
async fn an_account_locks_after_repeated_failures_and_unlocks_after_the_lockout() {
    let mut settings = test_settings();
    settings.brute_force_max_attempts = 3;
    settings.brute_force_lockout = StdDuration::from_secs(60);
    let h = harness_with(settings, None, false).await;
    h.user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    let c = client("198.51.100.1");

    // A success clears earlier failures.
    for _ in 0..2 {
        let err = h
            .authn
            .sign_in(&h.tenant, "ada@example.com", "nope-nope", &c);
        assert!(matches!(err.await, Err(AuthnError::InvalidCredentials)));
    }
    h.authn
        .sign_in(&h.tenant, "ada@example.com", PW, &c)
        .await
        .unwrap();

    for email in ["ada@example.com", "ghost@example.com"] {
        for _ in 0..3 {
            let err = h.authn.sign_in(&h.tenant, email, "nope-nope", &c).await;
            assert!(matches!(err, Err(AuthnError::InvalidCredentials)));
        }
        // Locked now, even with the right password, and unknown addresses alike.
        h.clock.advance(Duration::seconds(10));
        let err = h.authn.sign_in(&h.tenant, email, PW, &c).await.unwrap_err();
        match err {
            AuthnError::Locked { retry_after } => {
                assert_eq!(retry_after, StdDuration::from_secs(50), "{email}")
            }
            other => panic!("{email}: {other:?}"),
        }
    }
    h.clock.advance(Duration::seconds(51));
    h.authn
        .sign_in(&h.tenant, "ada@example.com", PW, &c)
        .await
        .expect("the lock ended");
}

#[tokio::test]
async fn one_address_may_check_only_so_many_passwords_per_window() {
    let mut settings = test_settings();
    settings.password_verify_ip_max_attempts = 3;
    settings.password_verify_ip_window = StdDuration::from_secs(300);
    let h = harness_with(settings, None, false).await;
    h.user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    let spray = client("198.51.100.9");
    for n in 0..3 {
        let email = format!("user{n}@example.com");
        let err = h.authn.sign_in(&h.tenant, &email, PW, &spray).await;
        assert!(matches!(err, Err(AuthnError::InvalidCredentials)));
    }
    let err = h
        .authn
        .sign_in(&h.tenant, "ada@example.com", PW, &spray)
        .await
        .unwrap_err();
    assert!(
        matches!(err, AuthnError::RateLimited { retry_after } if retry_after <= StdDuration::from_secs(300)),
        "{err:?}"
    );
    // Another address is not affected; the limited one recovers after the window.
    h.authn
        .sign_in(&h.tenant, "ada@example.com", PW, &client("198.51.100.10"))
        .await
        .unwrap();
    h.clock.advance(Duration::seconds(301));
    h.authn
        .sign_in(&h.tenant, "ada@example.com", PW, &spray)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_suspended_user_cannot_sign_in_and_their_session_stops_working() {
    let h = harness().await;
    let ada = h
        .user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    let c = client("198.51.100.1");
    let signed = h
        .authn
        .sign_in(&h.tenant, "ada@example.com", PW, &c)
        .await
        .unwrap();
    h.set_status(&ada.id, UserStatus::Suspended).await;
    assert!(
        h.authn
            .session(&h.tenant, &signed.cookie_value)
            .await
            .unwrap()
            .is_none()
    );
    let err = h.authn.sign_in(&h.tenant, "ada@example.com", PW, &c).await;
    assert!(matches!(err, Err(AuthnError::InvalidCredentials)));
    h.set_status(&ada.id, UserStatus::Active).await;
    assert!(
        h.authn
            .session(&h.tenant, &signed.cookie_value)
            .await
            .unwrap()
            .is_some(),
        "the session was never revoked, only refused while suspended"
    );
}

#[tokio::test]
async fn composed_and_decomposed_accents_are_the_same_password() {
    let h = harness().await;
    h.user(
        "ada@example.com",
        Some("caf\u{e9} cr\u{e8}me"),
        UserStatus::Active,
    )
    .await;
    let c = client("198.51.100.1");
    for typed in ["caf\u{e9} cr\u{e8}me", "cafe\u{301} cre\u{300}me"] {
        h.authn
            .sign_in(&h.tenant, "ada@example.com", typed, &c)
            .await
            .unwrap_or_else(|e| panic!("{typed:?}: {e:?}"));
    }
}

#[tokio::test]
async fn sessions_end_on_sign_out_and_only_their_owner_revokes_them() {
    let h = harness().await;
    let ada = h
        .user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    let bob = h
        .user("bob@example.com", Some(PW), UserStatus::Active)
        .await;
    let c = client("198.51.100.1");
    let first = h.authn.sign_in(&h.tenant, "ada@example.com", PW, &c);
    let first = first.await.unwrap();
    h.clock.advance(Duration::seconds(1));
    let second = h.authn.sign_in(&h.tenant, "ada@example.com", PW, &c);
    let second = second.await.unwrap();

    let live = h.authn.live_sessions(&h.tenant, &ada.id).await.unwrap();
    let ids: Vec<_> = live.iter().map(|s| s.id.clone()).collect();
    assert_eq!(
        ids,
        vec![second.session.id.clone(), first.session.id.clone()]
    );

    assert!(
        !h.authn
            .revoke_session(&h.tenant, &bob.id, &first.session.id)
            .await
            .unwrap(),
        "bob cannot revoke ada's session"
    );
    assert!(
        h.authn
            .revoke_session(&h.tenant, &ada.id, &first.session.id)
            .await
            .unwrap()
    );
    assert!(
        !h.authn
            .revoke_session(&h.tenant, &ada.id, &first.session.id)
            .await
            .unwrap(),
        "already revoked"
    );
    h.authn
        .sign_out(
            &h.tenant,
            &second.session,
            svc_domain::LogoutReason::SignOut,
        )
        .await
        .unwrap();
    for cookie in [&first.cookie_value, &second.cookie_value] {
        assert!(h.authn.session(&h.tenant, cookie).await.unwrap().is_none());
    }
    assert!(
        h.authn
            .live_sessions(&h.tenant, &ada.id)
            .await
            .unwrap()
            .is_empty()
    );

    // Sessions expire after their lifetime.
    let third = h.authn.sign_in(&h.tenant, "ada@example.com", PW, &c);
    let third = third.await.unwrap();
    h.clock.advance(Duration::days(14));
    assert!(
        h.authn
            .session(&h.tenant, &third.cookie_value)
            .await
            .unwrap()
            .is_none()
    );
}
