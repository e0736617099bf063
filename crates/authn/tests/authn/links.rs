//! Mailed one-time links: email verification, password reset (which revokes sessions and
//! refresh-token families), and invitations.

use crate::support::{ISSUER, client, harness, harness_with, test_settings};
use svc_authn::AuthnError;
use svc_domain::{
    ClientId, Clock, RefreshFamily, RefreshFamilyId, RefreshToken, ScopeSet, SecretHash,
    SeededRandom, UserStatus, UserTokenPurpose,
};
use time::Duration;

const PW: &str = "correct horse battery";
const NEW_PW: &str = "a brand new passphrase";

#[tokio::test]
async fn a_verification_link_works_once_and_only_for_verification() {
    let h = harness_with(test_settings(), None, true).await;
    h.authn
        .sign_up(
            &h.tenant,
            ISSUER,
            "ada@example.com",
            PW,
            None,
            &client("198.51.100.1"),
        )
        .await
        .unwrap();
    let ada = h.by_email("ada@example.com").await.unwrap();
    let token = h.last_token("verify-email").await;
    // Presented as a reset link, it proves nothing.
    let err = h.authn.reset_password(&h.tenant, &token, NEW_PW).await;
    assert!(matches!(err, Err(AuthnError::InvalidLink)), "{err:?}");

    let user = h.authn.verify_email(&h.tenant, &token).await.unwrap();
    assert!(user.email_verified);
    assert!(h.stored(&ada.id).await.email_verified);
    let again = h.authn.verify_email(&h.tenant, &token).await;
    assert!(matches!(again, Err(AuthnError::InvalidLink)));
    let junk = h.authn.verify_email(&h.tenant, "vfy_nonsense").await;
    assert!(matches!(junk, Err(AuthnError::InvalidLink)));
}

#[tokio::test]
async fn a_new_verification_link_replaces_the_old_one_and_links_expire() {
    let h = harness_with(test_settings(), None, true).await;
    h.authn
        .sign_up(
            &h.tenant,
            ISSUER,
            "ada@example.com",
            PW,
            None,
            &client("198.51.100.1"),
        )
        .await
        .unwrap();
    let ada = h.by_email("ada@example.com").await.unwrap();
    let first = h.last_token("verify-email").await;
    h.authn
        .resend_verification(&h.tenant, ISSUER, &ada.id)
        .await
        .unwrap();
    let second = h.last_token("verify-email").await;
    assert_ne!(first, second);
    let err = h.authn.verify_email(&h.tenant, &first).await;
    assert!(matches!(err, Err(AuthnError::InvalidLink)));
    h.clock.advance(Duration::hours(24) + Duration::seconds(1));
    let err = h.authn.verify_email(&h.tenant, &second).await;
    assert!(matches!(err, Err(AuthnError::InvalidLink)), "expired");
}

#[tokio::test]
async fn a_reset_request_answers_alike_but_mails_only_usable_accounts() {
    let h = harness().await;
    h.user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    h.user("sue@example.com", Some(PW), UserStatus::Suspended)
        .await;
    let c = client("198.51.100.1");
    for email in ["nobody@example.com", "sue@example.com"] {
        h.authn
            .request_password_reset(&h.tenant, ISSUER, email, &c)
            .await
            .unwrap();
    }
    assert!(h.mails().await.is_empty());
    h.authn
        .request_password_reset(&h.tenant, ISSUER, "ADA@example.com", &c)
        .await
        .unwrap();
    assert_eq!(h.mails().await.len(), 1);
    assert_eq!(h.mails().await[0]["to"], "ada@example.com");
    assert!(h.last_token("reset-password").await.starts_with("rst_"));
}

#[tokio::test]
async fn a_reset_sets_the_password_and_revokes_sessions_and_refresh_families() {
    let h = harness().await;
    let ada = h
        .user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    let c = client("198.51.100.1");
    let signed = h.authn.sign_in(&h.tenant, "ada@example.com", PW, &c);
    let signed = signed.await.unwrap();
    let refresh = SecretHash::of("rt_test-refresh-token");
    let now = h.clock.now();
    let family = RefreshFamily {
        id: RefreshFamilyId::generate(h.clock.as_ref(), &SeededRandom::new(99)),
        tenant_id: h.tenant.id.clone(),
        client_id: ClientId::parse("app_01jd0000000000000000000000").unwrap(),
        user_id: ada.id.clone(),
        session_id: Some(signed.session.id.clone()),
        scope: ScopeSet::parse("openid offline_access").unwrap(),
        subject: ada.id.to_string(),
        auth_time: now,
        acr: None,
        amr: vec!["pwd".to_owned()],
        organization_id: None,
        resource_id: None,
        created_at: now,
        expires_at: now + Duration::days(7),
        revoked_at: None,
        revoke_reason: None,
        dpop_jkt: None,
        authorization_details: None,
    };
    let mut tx = h.store.write().await.unwrap();
    tx.insert_refresh_family(&family).await.unwrap();
    tx.insert_refresh_token(&RefreshToken {
        hash: refresh.clone(),
        family_id: family.id.clone(),
        tenant_id: h.tenant.id.clone(),
        scope: family.scope.clone(),
        created_at: now,
        expires_at: now + Duration::days(1),
        rotated_at: None,
    })
    .await
    .unwrap();
    tx.commit().await.unwrap();

    h.authn
        .request_password_reset(&h.tenant, ISSUER, "ada@example.com", &c)
        .await
        .unwrap();
    let older = h.last_token("reset-password").await;
    h.authn
        .request_password_reset(&h.tenant, ISSUER, "ada@example.com", &c)
        .await
        .unwrap();
    let token = h.last_token("reset-password").await;
    let err = h.authn.reset_password(&h.tenant, &older, NEW_PW).await;
    assert!(matches!(err, Err(AuthnError::InvalidLink)), "replaced");

    // A weak password is refused without using up the link.
    let weak = h.authn.reset_password(&h.tenant, &token, "short").await;
    assert!(matches!(weak, Err(AuthnError::WeakPassword(_))));
    let user = h
        .authn
        .reset_password(&h.tenant, &token, NEW_PW)
        .await
        .unwrap();
    assert!(user.email_verified);
    assert!(
        h.authn
            .session(&h.tenant, &signed.cookie_value)
            .await
            .unwrap()
            .is_none()
    );
    let mut read = h.store.read().await.unwrap();
    let (_, family) = read
        .refresh_token(&h.tenant.id, &refresh)
        .await
        .unwrap()
        .unwrap();
    read.finish().await.unwrap();
    assert!(family.revoked_at.is_some());
    assert_eq!(family.revoke_reason.as_deref(), Some("password_reset"));

    let old = h.authn.sign_in(&h.tenant, "ada@example.com", PW, &c).await;
    assert!(matches!(old, Err(AuthnError::InvalidCredentials)));
    h.authn
        .sign_in(&h.tenant, "ada@example.com", NEW_PW, &c)
        .await
        .unwrap();
    let reused = h.authn.reset_password(&h.tenant, &token, NEW_PW).await;
    assert!(matches!(reused, Err(AuthnError::InvalidLink)));
}

#[tokio::test]
async fn a_reset_claims_a_pre_provisioned_account() {
    let h = harness().await;
    let pat = h
        .user("pat@example.com", None, UserStatus::PreProvisioned)
        .await;
    let c = client("198.51.100.1");
    h.authn
        .request_password_reset(&h.tenant, ISSUER, "pat@example.com", &c)
        .await
        .unwrap();
    let token = h.last_token("reset-password").await;
    h.clock.advance(Duration::minutes(59));
    let user = h
        .authn
        .reset_password(&h.tenant, &token, NEW_PW)
        .await
        .unwrap();
    assert_eq!(user.status, UserStatus::Active);
    assert_eq!(h.stored(&pat.id).await, user);
    h.authn
        .sign_in(&h.tenant, "pat@example.com", NEW_PW, &c)
        .await
        .unwrap();
}

#[tokio::test]
async fn an_invitation_activates_the_account_once() {
    let h = harness().await;
    let ivy = h.user("ivy@example.com", None, UserStatus::Invited).await;
    let mut tx = h.store.write().await.unwrap();
    let mail = h
        .authn
        .prepare_link(
            tx.as_mut(),
            ISSUER,
            &ivy,
            UserTokenPurpose::Invitation,
            "Acme",
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    h.authn.deliver(mail);
    assert_eq!(h.mails().await[0]["subject"], "You are invited to Acme");
    let token = h.last_token("accept-invitation").await;
    let c = client("198.51.100.1");
    let signed = h
        .authn
        .accept_invitation(&h.tenant, &token, NEW_PW, Some("Ivy"), &c)
        .await
        .unwrap();
    assert_eq!(signed.user.status, UserStatus::Active);
    assert!(signed.user.email_verified);
    assert_eq!(signed.user.name.as_deref(), Some("Ivy"));
    assert!(
        h.authn
            .session(&h.tenant, &signed.cookie_value)
            .await
            .unwrap()
            .is_some()
    );
    let again = h
        .authn
        .accept_invitation(&h.tenant, &token, NEW_PW, None, &c)
        .await;
    assert!(matches!(again, Err(AuthnError::InvalidLink)));
    h.authn
        .sign_in(&h.tenant, "ivy@example.com", NEW_PW, &c)
        .await
        .unwrap();
}
