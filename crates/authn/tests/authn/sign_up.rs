//! Self-service sign-up: closed by default, open per tenant, one account per address, limited
//! per client address, and the password policy.

use crate::support::{ISSUER, client, harness, harness_with, test_settings};
use std::time::Duration as StdDuration;
use svc_authn::AuthnError;
use svc_domain::UserStatus;

const PW: &str = "correct horse battery";

#[tokio::test]
async fn sign_up_is_refused_unless_the_tenant_opens_it() {
    let h = harness().await;
    let err = h
        .authn
        .sign_up(
            &h.tenant,
            ISSUER,
            "ada@example.com",
            PW,
            None,
            &client("198.51.100.1"),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, AuthnError::SignupClosed), "{err:?}");
    assert!(h.mails().await.is_empty());
}

#[tokio::test]
async fn an_open_tenant_creates_an_active_unverified_account_and_mails_a_link() {
    let h = harness_with(test_settings(), None, true).await;
    h.authn
        .sign_up(
            &h.tenant,
            ISSUER,
            "Ada@Example.com",
            PW,
            Some("  Ada Lovelace "),
            &client("198.51.100.1"),
        )
        .await
        .unwrap();
    let user = h.by_email("ada@example.com").await.expect("created");
    assert_eq!(user.status, UserStatus::Active);
    assert!(!user.email_verified);
    assert_eq!(user.name.as_deref(), Some("Ada Lovelace"));
    assert!(user.password_hash.is_some());
    assert!(user.last_sign_in_at.is_none(), "sign-up signs nobody in");
    let mails = h.mails().await;
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0]["to"], "ada@example.com");
    let token = h.last_token("verify-email").await;
    assert!(token.starts_with("vfy_"));
    // The person signs in with the password they chose.
    h.authn
        .sign_in(&h.tenant, "ada@example.com", PW, &client("198.51.100.1"))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_taken_address_gets_the_same_answer_and_cost_and_its_owner_a_notice() {
    let h = harness_with(test_settings(), None, true).await;
    let c = client("198.51.100.1");
    h.authn
        .sign_up(&h.tenant, ISSUER, "ada@example.com", PW, None, &c)
        .await
        .unwrap();
    let original = h.by_email("ada@example.com").await.unwrap();
    let before = h.hasher.hashes();
    // The same address, in any case, with another password: the same Ok.
    h.authn
        .sign_up(
            &h.tenant,
            ISSUER,
            "ADA@example.com",
            "another passphrase",
            Some("Mallory"),
            &client("198.51.100.2"),
        )
        .await
        .unwrap();
    assert_eq!(
        h.hasher.hashes(),
        before + 1,
        "the password is hashed as for a new account"
    );
    assert_eq!(
        h.stored(&original.id).await,
        original,
        "the account is untouched"
    );
    let mails = h.mails().await;
    assert_eq!(mails.len(), 2, "{mails:?}");
    let notice = &mails[1];
    assert_eq!(notice["to"], "ada@example.com");
    assert!(notice["link"].is_null(), "no one-time link in a notice");
    let text = notice["text"].as_str().unwrap();
    assert!(
        text.contains("Someone tried to create an account"),
        "{text}"
    );
    assert!(
        text.contains(&format!("{ISSUER}/auth/forgot-password")),
        "{text}"
    );
    // Policy failures still come first, whether or not the address is taken.
    let weak = h
        .authn
        .sign_up(&h.tenant, ISSUER, "ada@example.com", "short", None, &c)
        .await
        .unwrap_err();
    assert!(matches!(weak, AuthnError::WeakPassword(_)), "{weak:?}");
}

#[tokio::test]
async fn bad_addresses_and_weak_passwords_are_refused_with_the_rule() {
    let h = harness_with(test_settings(), None, true).await;
    let c = client("198.51.100.1");
    let err = h
        .authn
        .sign_up(&h.tenant, ISSUER, "ada", PW, None, &c)
        .await;
    assert!(matches!(err, Err(AuthnError::InvalidEmail)));
    let short = h
        .authn
        .sign_up(&h.tenant, ISSUER, "ada@example.com", "1234567", None, &c)
        .await
        .unwrap_err();
    assert!(
        matches!(&short, AuthnError::WeakPassword(m) if m.contains("at least 8")),
        "{short:?}"
    );
    let long = "x".repeat(257);
    let long = h
        .authn
        .sign_up(&h.tenant, ISSUER, "ada@example.com", &long, None, &c)
        .await
        .unwrap_err();
    assert!(
        matches!(&long, AuthnError::WeakPassword(m) if m.contains("at most 256")),
        "{long:?}"
    );
    // 256 characters, and eight characters of two bytes each, are fine.
    let max = "y".repeat(256);
    h.authn
        .sign_up(&h.tenant, ISSUER, "max@example.com", &max, None, &c)
        .await
        .unwrap();
    h.authn
        .sign_up(&h.tenant, ISSUER, "e@example.com", &"é".repeat(8), None, &c)
        .await
        .unwrap();
}

#[tokio::test]
async fn one_address_may_register_only_so_many_accounts_per_window() {
    let mut settings = test_settings();
    settings.registration_max = 2;
    settings.registration_window = StdDuration::from_secs(3600);
    let h = harness_with(settings, None, true).await;
    let c = client("198.51.100.1");
    for n in 0..2 {
        let email = format!("user{n}@example.com");
        h.authn
            .sign_up(&h.tenant, ISSUER, &email, PW, None, &c)
            .await
            .unwrap();
    }
    let err = h
        .authn
        .sign_up(&h.tenant, ISSUER, "user2@example.com", PW, None, &c)
        .await
        .unwrap_err();
    assert!(matches!(err, AuthnError::RateLimited { .. }), "{err:?}");
    h.authn
        .sign_up(
            &h.tenant,
            ISSUER,
            "user2@example.com",
            PW,
            None,
            &client("198.51.100.2"),
        )
        .await
        .unwrap();
}
