//! The CAPTCHA: sign-up and password-reset requests need a solved one, sign-in after repeated
//! failures of the account or the address; a missing, refused or replayed token writes
//! nothing; the fail mode is the verifier's. The verifier here is a lax fake that never
//! remembers tokens, so replay protection is shown to be the engine's own.

use crate::support::{Harness, ISSUER, client, harness_with_captcha, test_settings};
use async_trait::async_trait;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use svc_authn::{
    AuthnError, AuthnSettings, CaptchaAction, CaptchaAnswer, CaptchaCheck, CaptchaError,
    CaptchaProvider, CaptchaSettings, CaptchaVerdict, CaptchaVerifier, SignUpFields,
};
use svc_domain::UserStatus;

const PW: &str = "correct horse battery";
const HOST: &str = "acme.example.com";

/// What the fake verifier was asked.
#[derive(Debug, Clone, PartialEq)]
struct Asked {
    token: String,
    remote_ip: Option<IpAddr>,
    action: CaptchaAction,
    hostname: Option<String>,
}

/// Tokens starting `good` pass, `bad` are refused, `down` find the provider unreachable
/// (failing closed), `open` unreachable but failing open. It never remembers a token.
#[derive(Default)]
struct Lax {
    asked: Mutex<Vec<Asked>>,
}

impl Lax {
    fn asked(&self) -> Vec<Asked> {
        self.asked.lock().unwrap().clone()
    }
}

#[async_trait]
impl CaptchaVerifier for Lax {
    async fn verify(&self, check: &CaptchaCheck<'_>) -> Result<CaptchaVerdict, CaptchaError> {
        self.asked.lock().unwrap().push(Asked {
            token: check.token.to_owned(),
            remote_ip: check.remote_ip,
            action: check.action,
            hostname: check.hostname.map(str::to_owned),
        });
        let token = check.token;
        if token.starts_with("good") {
            Ok(CaptchaVerdict::Passed)
        } else if token.starts_with("open") {
            Ok(CaptchaVerdict::Unverified)
        } else if token.starts_with("down") {
            Err(CaptchaError::Unavailable("timeout".into()))
        } else {
            Ok(CaptchaVerdict::Refused {
                reason: "invalid-input-response".into(),
            })
        }
    }
}

async fn with_captcha(settings: AuthnSettings, after: u32) -> (Harness, Arc<Lax>) {
    let lax = Arc::new(Lax::default());
    let captcha = CaptchaSettings {
        provider: CaptchaProvider::Turnstile,
        site_key: "site-key".into(),
        after_failed_sign_ins: after,
    };
    let h = harness_with_captcha(settings, None, true, Some((captcha, lax.clone()))).await;
    (h, lax)
}

fn answer(token: &str) -> CaptchaAnswer<'_> {
    CaptchaAnswer {
        token: Some(token),
        hostname: Some(HOST),
    }
}

async fn sign_up(h: &Harness, email: &str, captcha: CaptchaAnswer<'_>) -> Result<(), AuthnError> {
    let fields = SignUpFields {
        email,
        password: PW,
        name: None,
    };
    h.authn
        .sign_up_with_captcha(&h.tenant, ISSUER, fields, &client("198.51.100.7"), captcha)
        .await
}

#[tokio::test]
async fn sign_up_needs_a_solved_captcha_and_a_missing_one_writes_nothing() {
    // One sign-up per address and window: refused attempts must not use it up.
    let settings = AuthnSettings {
        registration_max: 1,
        ..test_settings()
    };
    let (h, lax) = with_captcha(settings, 3).await;
    assert_eq!(
        h.authn.captcha().map(|c| c.provider),
        Some(CaptchaProvider::Turnstile)
    );
    for refused in [
        sign_up(&h, "ada@example.com", CaptchaAnswer::default()).await,
        sign_up(&h, "ada@example.com", answer("   ")).await,
        // The API without an answer is refused the same way.
        h.authn
            .sign_up(
                &h.tenant,
                ISSUER,
                "ada@example.com",
                PW,
                None,
                &client("198.51.100.7"),
            )
            .await,
    ] {
        assert!(
            matches!(refused, Err(AuthnError::CaptchaRequired)),
            "{refused:?}"
        );
    }
    assert!(lax.asked().is_empty(), "nothing to ask without a token");
    assert!(h.by_email("ada@example.com").await.is_none());
    assert!(h.mails().await.is_empty());

    sign_up(&h, "ada@example.com", answer("good-1"))
        .await
        .unwrap();
    assert!(h.by_email("ada@example.com").await.is_some());
    assert_eq!(
        lax.asked(),
        [Asked {
            token: "good-1".into(),
            remote_ip: Some("198.51.100.7".parse().unwrap()),
            action: CaptchaAction::SignUp,
            hostname: Some(HOST.into()),
        }]
    );
}

#[tokio::test]
async fn a_forged_token_is_refused_and_writes_nothing() {
    let (h, lax) = with_captcha(test_settings(), 3).await;
    let err = sign_up(&h, "ada@example.com", answer("bad-forged"))
        .await
        .unwrap_err();
    assert!(matches!(err, AuthnError::CaptchaFailed), "{err:?}");
    assert_eq!(lax.asked().len(), 1);
    assert!(h.by_email("ada@example.com").await.is_none());
    assert!(h.mails().await.is_empty());
    let oversized = "good".to_owned() + &"x".repeat(svc_authn::MAX_CAPTCHA_TOKEN_BYTES);
    let err = sign_up(&h, "ada@example.com", answer(&oversized))
        .await
        .unwrap_err();
    assert!(matches!(err, AuthnError::CaptchaFailed), "{err:?}");
    assert_eq!(lax.asked().len(), 1, "an oversized token is not sent");
}

#[tokio::test]
async fn a_token_is_accepted_once_even_by_a_lax_verifier() {
    let (h, lax) = with_captcha(test_settings(), 3).await;
    sign_up(&h, "ada@example.com", answer("good-once"))
        .await
        .unwrap();
    let err = sign_up(&h, "grace@example.com", answer("good-once"))
        .await
        .unwrap_err();
    assert!(matches!(err, AuthnError::CaptchaFailed), "{err:?}");
    assert_eq!(lax.asked().len(), 1, "a replay is refused before asking");
    assert!(h.by_email("grace@example.com").await.is_none());
    // A replay into another form is refused too.
    let err = h
        .authn
        .request_password_reset_with_captcha(
            &h.tenant,
            ISSUER,
            "ada@example.com",
            &client("198.51.100.7"),
            answer("good-once"),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, AuthnError::CaptchaFailed), "{err:?}");
}

#[tokio::test]
async fn concurrent_submissions_of_one_token_pass_once() {
    let (h, _lax) = with_captcha(test_settings(), 3).await;
    let (a, b) = tokio::join!(
        sign_up(&h, "ada@example.com", answer("good-race")),
        sign_up(&h, "grace@example.com", answer("good-race")),
    );
    assert_eq!(
        [a.is_ok(), b.is_ok()].iter().filter(|ok| **ok).count(),
        1,
        "{a:?} {b:?}"
    );
}

#[tokio::test]
async fn an_unreachable_provider_refuses_failing_closed_and_passes_failing_open() {
    let (h, _lax) = with_captcha(test_settings(), 3).await;
    let err = sign_up(&h, "ada@example.com", answer("down-1"))
        .await
        .unwrap_err();
    assert!(matches!(err, AuthnError::CaptchaUnavailable(_)), "{err:?}");
    assert!(h.by_email("ada@example.com").await.is_none());
    sign_up(&h, "ada@example.com", answer("open-1"))
        .await
        .unwrap();
    assert!(h.by_email("ada@example.com").await.is_some());
}

#[tokio::test]
async fn password_reset_requests_need_a_captcha_and_mail_nothing_without_one() {
    let (h, lax) = with_captcha(test_settings(), 3).await;
    h.user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    for email in ["ada@example.com", "nobody@example.com"] {
        let err = h
            .authn
            .request_password_reset(&h.tenant, ISSUER, email, &client("198.51.100.7"))
            .await
            .unwrap_err();
        assert!(matches!(err, AuthnError::CaptchaRequired), "{err:?}");
    }
    assert!(h.mails().await.is_empty());
    h.authn
        .request_password_reset_with_captcha(
            &h.tenant,
            ISSUER,
            "ada@example.com",
            &client("198.51.100.7"),
            answer("good-reset"),
        )
        .await
        .unwrap();
    assert_eq!(h.mails().await.len(), 1);
    assert_eq!(lax.asked()[0].action, CaptchaAction::ForgotPassword);
}

#[tokio::test]
async fn sign_in_asks_after_repeated_failures_of_the_account_known_or_not() {
    let (h, lax) = with_captcha(test_settings(), 3).await;
    h.user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    for email in ["ada@example.com", "ghost@example.com"] {
        // A different address each failure, so only the account counts.
        for i in 0..3 {
            let ip = client(&format!("203.0.113.{}", 10 + i));
            assert!(
                !h.authn
                    .sign_in_needs_captcha(&h.tenant, Some(email), &ip)
                    .await
                    .unwrap(),
                "{email} after {i} failures"
            );
            let err = h
                .authn
                .sign_in(&h.tenant, email, "wrong password!", &ip)
                .await
                .unwrap_err();
            assert!(matches!(err, AuthnError::InvalidCredentials), "{err:?}");
        }
        let fresh = client("192.0.2.50");
        assert!(
            h.authn
                .sign_in_needs_captcha(&h.tenant, Some(email), &fresh)
                .await
                .unwrap(),
            "{email}: an unknown address is asked exactly like a known one"
        );
        assert!(
            !h.authn
                .sign_in_needs_captcha(&h.tenant, Some("other@example.com"), &fresh)
                .await
                .unwrap()
        );
    }
    let fresh = client("192.0.2.50");
    let err = h
        .authn
        .sign_in(&h.tenant, "ada@example.com", PW, &fresh)
        .await
        .unwrap_err();
    assert!(matches!(err, AuthnError::CaptchaRequired), "{err:?}");
    assert!(lax.asked().is_empty());
    let signed = h
        .authn
        .sign_in_with_captcha(
            &h.tenant,
            "ada@example.com",
            PW,
            &fresh,
            answer("good-sign-in"),
        )
        .await
        .unwrap();
    let svc_authn::SignInStep::Done(signed) = signed else {
        panic!("no second factor is set up: the password signs in");
    };
    assert_eq!(signed.user.email.as_str(), "ada@example.com");
    assert_eq!(lax.asked()[0].action, CaptchaAction::SignIn);
    // Success clears the account's failures: the next sign-in is not asked.
    assert!(
        !h.authn
            .sign_in_needs_captcha(&h.tenant, Some("ada@example.com"), &fresh)
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn sign_in_asks_after_repeated_failures_from_the_address() {
    let (h, _lax) = with_captcha(test_settings(), 3).await;
    let spraying = client("203.0.113.66");
    for i in 0..3 {
        let email = format!("user{i}@example.com");
        let err = h
            .authn
            .sign_in(&h.tenant, &email, "wrong password!", &spraying)
            .await
            .unwrap_err();
        assert!(matches!(err, AuthnError::InvalidCredentials), "{err:?}");
    }
    for email in [None, Some("new@example.com")] {
        assert!(
            h.authn
                .sign_in_needs_captcha(&h.tenant, email, &spraying)
                .await
                .unwrap(),
            "{email:?}"
        );
        assert!(
            !h.authn
                .sign_in_needs_captcha(&h.tenant, email, &client("203.0.113.67"))
                .await
                .unwrap()
        );
    }
}

#[tokio::test]
async fn sign_ins_refused_for_want_of_a_captcha_count_nothing() {
    let (h, _lax) = with_captcha(test_settings(), 1).await;
    h.user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    let ip = client("203.0.113.5");
    let first = h
        .authn
        .sign_in(&h.tenant, "ada@example.com", "wrong password!", &ip)
        .await
        .unwrap_err();
    assert!(matches!(first, AuthnError::InvalidCredentials), "{first:?}");
    // Far more attempts than the lock allows (5): none reaches the password, none counts.
    for _ in 0..10 {
        let err = h
            .authn
            .sign_in(&h.tenant, "ada@example.com", "wrong password!", &ip)
            .await
            .unwrap_err();
        assert!(matches!(err, AuthnError::CaptchaRequired), "{err:?}");
    }
    h.authn
        .sign_in_with_captcha(&h.tenant, "ada@example.com", PW, &ip, answer("good-late"))
        .await
        .expect("not locked: the refused attempts were not counted");
}

#[tokio::test]
async fn zero_failures_means_sign_in_always_asks() {
    let (h, _lax) = with_captcha(test_settings(), 0).await;
    assert!(
        h.authn
            .sign_in_needs_captcha(&h.tenant, None, &client("203.0.113.5"))
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn without_a_captcha_nothing_asks_for_one() {
    let h = crate::support::harness().await;
    assert!(h.authn.captcha().is_none());
    assert!(
        !h.authn
            .sign_in_needs_captcha(&h.tenant, Some("ada@example.com"), &client("203.0.113.5"))
            .await
            .unwrap()
    );
}
