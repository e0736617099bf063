//! Second factors in the engine, on a manual clock: the events every step records (in the
//! transaction of its change), TOTP steps spent once and accepted ±1 step, challenges and
//! enrolments that expire, the second-step lock that ends with its lockout, step-up that
//! replaces the session, and removal from an aal1 session refused.

use crate::support::{Harness, client, harness_with_two_factor, test_settings};
use std::time::Duration as StdDuration;
use svc_authn::{AuthnError, CaptchaAnswer, SignInStep, SignedIn};
use svc_crypto::TotpSecret;
use svc_domain::{User, UserStatus};
use time::Duration;

const PW: &str = "correct horse battery";

impl Harness {
    pub(crate) fn code(&self, secret: &TotpSecret, offset: i64) -> String {
        let now = svc_domain::Clock::now(self.clock.as_ref()).unix_timestamp();
        secret.code_at(now + offset)
    }

    /// Signs `user` in with the password alone (no factor yet).
    pub(crate) async fn aal1(&self, user: &User) -> SignedIn {
        self.authn
            .sign_in(
                &self.tenant,
                user.email.as_str(),
                PW,
                &client("203.0.113.9"),
            )
            .await
            .unwrap()
    }

    /// Enrols and confirms an authenticator for `user` from a new password-only session: its
    /// secret and the backup codes.
    pub(crate) async fn enrol(&self, user: &User) -> (TotpSecret, Vec<String>) {
        let session = self.aal1(user).await;
        // Later events get later (time-ordered) ids.
        self.tick();
        let enrolment = self
            .authn
            .start_totp(&self.tenant, user, "Phone")
            .await
            .unwrap();
        let secret = TotpSecret::from_base32(&enrolment.secret_base32).unwrap();
        let confirmed = self
            .authn
            .confirm_totp(
                &self.tenant,
                &session.session,
                user,
                &enrolment.factor_id,
                &self.code(&secret, 0),
                &client("203.0.113.9"),
            )
            .await
            .unwrap();
        // The code proved the authenticator: the enrolling session is replaced at aal2.
        assert_eq!(
            confirmed.signed_in.session.acr.as_deref(),
            Some("urn:svc:aal2")
        );
        assert_ne!(confirmed.signed_in.session.id, session.session.id);
        let codes = confirmed
            .backup_codes
            .expect("the first factor comes with backup codes");
        (secret, codes)
    }

    /// The password step: the challenge cookie.
    async fn password(&self, email: &str) -> String {
        let step = self
            .authn
            .sign_in_with_captcha(
                &self.tenant,
                email,
                PW,
                &client("203.0.113.9"),
                CaptchaAnswer::default(),
            )
            .await
            .unwrap();
        match step {
            SignInStep::SecondFactor(pending) => pending.cookie_value,
            SignInStep::Done(_) => panic!("a person with a factor got a session from a password"),
        }
    }

    async fn second(&self, challenge: &str, code: &str) -> Result<SignedIn, AuthnError> {
        self.authn
            .complete_second_factor(&self.tenant, challenge, code, &client("203.0.113.9"), false)
            .await
    }
}

#[tokio::test]
async fn every_step_records_its_event_and_the_session_reaches_aal2() {
    let h = harness_with_two_factor(test_settings()).await;
    let ada = h
        .user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    let (secret, codes) = h.enrol(&ada).await;
    assert_eq!(codes.len(), 10);
    h.tick();
    let enrolled = h.events().await;
    let challenge = h.password("ada@example.com").await;
    h.tick();
    assert!(matches!(
        h.second(&challenge, "000000").await,
        Err(AuthnError::InvalidCode)
    ));
    h.tick();
    let signed_in = h.second(&challenge, &h.code(&secret, 30)).await.unwrap();
    assert_eq!(signed_in.session.acr.as_deref(), Some("urn:svc:aal2"));
    assert_eq!(signed_in.session.amr, ["pwd", "otp", "mfa"]);
    h.tick();
    // Enrolment: the password sign-in, then the confirmation (codes, factor, verification).
    // Events of one transaction share an instant, so their order within it is free.
    let before: Vec<&str> = enrolled.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(before[0], "auth.login.success");
    let mut confirmation = before[1..].to_vec();
    confirmation.sort_unstable();
    assert_eq!(
        confirmation,
        [
            "auth.mfa.backup_codes.generated",
            "auth.mfa.enrolled",
            "auth.mfa.verify"
        ]
    );
    let events = h.events().await[enrolled.len()..].to_vec();
    let types: Vec<&str> = events.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(types[0], "auth.mfa.challenge");
    assert_eq!(events[0].1["reason"], "sign_in");
    assert_eq!(types[1], "auth.login.failure");
    assert_eq!(events[1].1["reason"], "invalid_second_factor");
    let mut success = types[2..].to_vec();
    success.sort_unstable();
    assert_eq!(success, ["auth.login.success", "auth.mfa.verify"]);
    let verify = &events
        .iter()
        .find(|(t, _)| t == "auth.mfa.verify")
        .unwrap()
        .1;
    assert_eq!(verify["method"], "totp");
    assert_eq!(verify["session_id"], signed_in.session.id.as_str());
    let text = serde_json::to_string(&events.iter().map(|(_, d)| d).collect::<Vec<_>>()).unwrap();
    assert!(!text.contains(&h.code(&secret, 30)) && !text.contains(&codes[0]));
}

#[tokio::test]
async fn a_step_is_spent_once_and_only_neighbouring_steps_count() {
    let h = harness_with_two_factor(test_settings()).await;
    let ada = h
        .user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    let (secret, _) = h.enrol(&ada).await;
    // The confirmation spent the current step: it does not sign in.
    let challenge = h.password("ada@example.com").await;
    assert!(matches!(
        h.second(&challenge, &h.code(&secret, 0)).await,
        Err(AuthnError::InvalidCode)
    ));
    // Two steps ahead or behind is no current code.
    assert!(h.second(&challenge, &h.code(&secret, 60)).await.is_err());
    let next = h.code(&secret, 30);
    h.second(&challenge, &next).await.unwrap();
    // The challenge completed one sign-in; the code its step.
    assert!(matches!(
        h.second(&challenge, &next).await,
        Err(AuthnError::ChallengeExpired)
    ));
    let again = h.password("ada@example.com").await;
    assert!(matches!(
        h.second(&again, &next).await,
        Err(AuthnError::InvalidCode)
    ));
    h.clock.advance(Duration::seconds(60));
    h.second(&again, &h.code(&secret, 0)).await.unwrap();
}

#[tokio::test]
async fn challenges_and_enrolments_expire() {
    let h = harness_with_two_factor(test_settings()).await;
    let ada = h
        .user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    let (_, codes) = h.enrol(&ada).await;
    let challenge = h.password("ada@example.com").await;
    h.clock.advance(Duration::seconds(301));
    assert!(matches!(
        h.second(&challenge, &codes[0]).await,
        Err(AuthnError::ChallengeExpired)
    ));
    assert!(
        !h.authn
            .challenge_pending(&h.tenant, &challenge)
            .await
            .unwrap()
    );
    // The backup code was not spent by the refused attempt.
    let fresh = h.password("ada@example.com").await;
    h.second(&fresh, &codes[0]).await.unwrap();

    let bob = h
        .user("bob@example.com", Some(PW), UserStatus::Active)
        .await;
    let bobs = h.aal1(&bob).await;
    let pending = h.authn.start_totp(&h.tenant, &bob, "").await.unwrap();
    h.clock.advance(Duration::minutes(16));
    let late = TotpSecret::from_base32(&pending.secret_base32).unwrap();
    assert!(matches!(
        h.authn
            .confirm_totp(
                &h.tenant,
                &bobs.session,
                &bob,
                &pending.factor_id,
                &h.code(&late, 0),
                &client("203.0.113.9")
            )
            .await,
        Err(AuthnError::UnknownFactor)
    ));
    // Another person's pending enrolment is nobody else's to confirm.
    let mine = h.authn.start_totp(&h.tenant, &bob, "").await.unwrap();
    assert!(matches!(
        h.authn
            .totp_enrolment(&h.tenant, &ada, &mine.factor_id)
            .await,
        Err(AuthnError::UnknownFactor)
    ));
}

#[tokio::test]
async fn the_second_step_lock_ends_with_its_lockout() {
    let settings = svc_authn::AuthnSettings {
        brute_force_max_attempts: 3,
        brute_force_lockout: StdDuration::from_secs(600),
        ..test_settings()
    };
    let h = harness_with_two_factor(settings).await;
    let ada = h
        .user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    let (secret, _) = h.enrol(&ada).await;
    let challenge = h.password("ada@example.com").await;
    for _ in 0..3 {
        assert!(matches!(
            h.second(&challenge, "111111").await,
            Err(AuthnError::InvalidCode)
        ));
    }
    assert!(matches!(
        h.second(&challenge, &h.code(&secret, 30)).await,
        Err(AuthnError::Locked { .. })
    ));
    let events = h.events().await;
    let brute = events
        .iter()
        .find(|(t, _)| t == "security.brute_force.detected")
        .expect("the lock is an event");
    assert_eq!(brute.1["scope"], "second_factor");
    h.clock.advance(Duration::seconds(601));
    let fresh = h.password("ada@example.com").await;
    h.second(&fresh, &h.code(&secret, 0)).await.unwrap();
}

#[tokio::test]
async fn step_up_replaces_the_session_and_factor_changes_need_aal2() {
    let h = harness_with_two_factor(test_settings()).await;
    let ada = h
        .user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    // Signed in before enrolling (elsewhere): an aal1 session.
    let before = h.aal1(&ada).await;
    assert_eq!(before.session.acr.as_deref(), Some("urn:svc:aal1"));
    let (secret, _) = h.enrol(&ada).await;
    let status = h.authn.factor_status(&h.tenant, &ada.id).await.unwrap();
    let factor = status.totp.expect("confirmed").id;
    assert!(matches!(
        h.authn
            .remove_factor(&h.tenant, &before.session, &ada, &factor)
            .await,
        Err(AuthnError::StepUpRequired)
    ));
    assert!(matches!(
        h.authn
            .regenerate_backup_codes(&h.tenant, &before.session, &ada)
            .await,
        Err(AuthnError::StepUpRequired)
    ));
    let raised = h
        .authn
        .step_up(
            &h.tenant,
            &before.session,
            &h.code(&secret, 30),
            &client("203.0.113.9"),
        )
        .await
        .unwrap();
    assert_ne!(raised.session.id, before.session.id);
    assert_eq!(raised.session.amr, ["pwd", "otp", "mfa"]);
    assert!(
        h.authn
            .session(&h.tenant, &before.cookie_value)
            .await
            .unwrap()
            .is_none(),
        "the aal1 cookie is dead"
    );
    // The old session cannot step up again either.
    assert!(matches!(
        h.authn
            .step_up(
                &h.tenant,
                &before.session,
                &h.code(&secret, 0),
                &client("203.0.113.9")
            )
            .await,
        Err(AuthnError::ChallengeExpired)
    ));
    let codes = h
        .authn
        .regenerate_backup_codes(&h.tenant, &raised.session, &ada)
        .await
        .unwrap();
    assert_eq!(codes.len(), 10);
    h.authn
        .remove_factor(&h.tenant, &raised.session, &ada, &factor)
        .await
        .unwrap();
    let status = h.authn.factor_status(&h.tenant, &ada.id).await.unwrap();
    assert!(status.totp.is_none());
    assert_eq!(status.backup_codes_left, 0, "codes go with the last factor");
    // The password alone signs in again.
    h.authn
        .sign_in(&h.tenant, "ada@example.com", PW, &client("203.0.113.9"))
        .await
        .unwrap();
}
