//! Known and trusted browsers and risk-based step-up, on a manual clock: a new browser is
//! mailed about (not on the very first sign-in), a trusted browser skips the code at aal2 until
//! its trust ends or is withdrawn, and a risky sign-in on a trusted browser (a new address, a
//! burst of failures) is asked for the code anyway and recorded.

use crate::support::{Harness, client, harness_with_two_factor, test_settings};
use svc_authn::{CaptchaAnswer, ClientInfo, SignInStep};
use svc_crypto::TotpSecret;
use svc_domain::{User, UserStatus};
use time::Duration;

const PW: &str = "correct horse battery";

fn on(device: &str, ip: &str) -> ClientInfo {
    ClientInfo {
        device: Some(format!("dvc_{device}")),
        ..client(ip)
    }
}

impl Harness {
    async fn attempt(&self, email: &str, password: &str, from: &ClientInfo) -> Option<SignInStep> {
        self.authn
            .sign_in_with_captcha(
                &self.tenant,
                email,
                password,
                from,
                CaptchaAnswer::default(),
            )
            .await
            .ok()
    }

    fn now_code(&self, secret: &TotpSecret, offset: i64) -> String {
        let now = svc_domain::Clock::now(self.clock.as_ref()).unix_timestamp();
        secret.code_at(now + offset)
    }

    /// A person with an authenticator: their secret.
    async fn with_factor(&self, user: &User) -> TotpSecret {
        let session = self
            .authn
            .sign_in(
                &self.tenant,
                user.email.as_str(),
                PW,
                &on("enrol", "198.51.100.1"),
            )
            .await
            .unwrap();
        let enrolment = self.authn.start_totp(&self.tenant, user, "").await.unwrap();
        let secret = TotpSecret::from_base32(&enrolment.secret_base32).unwrap();
        self.authn
            .confirm_totp(
                &self.tenant,
                &session.session,
                user,
                &enrolment.factor_id,
                &self.now_code(&secret, 0),
                &on("enrol", "198.51.100.1"),
            )
            .await
            .unwrap();
        secret
    }

    /// Password then code on `from`, trusting the browser when asked to.
    async fn with_code(&self, secret: &TotpSecret, offset: i64, from: &ClientInfo, trust: bool) {
        let Some(SignInStep::SecondFactor(pending)) =
            self.attempt("ada@example.com", PW, from).await
        else {
            panic!("the code was not asked for");
        };
        self.authn
            .complete_second_factor(
                &self.tenant,
                &pending.cookie_value,
                &self.now_code(secret, offset),
                from,
                trust,
            )
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn a_new_browser_is_mailed_about_except_at_the_first_sign_in() {
    let h = harness_with_two_factor(test_settings()).await;
    h.user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    let first = h
        .attempt("ada@example.com", PW, &on("laptop", "198.51.100.1"))
        .await;
    assert!(matches!(first, Some(SignInStep::Done(_))));
    h.tick();
    let again = h
        .attempt("ada@example.com", PW, &on("laptop", "198.51.100.1"))
        .await;
    assert!(matches!(again, Some(SignInStep::Done(_))));
    h.tick();
    let phone = h
        .attempt("ada@example.com", PW, &on("phone", "203.0.113.5"))
        .await;
    assert!(matches!(phone, Some(SignInStep::Done(_))));
    h.authn.mail_settled().await;
    let mails = h.mails().await;
    let notices: Vec<_> = mails
        .iter()
        .filter(|m| m["subject"] == "New sign-in to Acme")
        .collect();
    assert_eq!(notices.len(), 1, "{mails:?}");
    let text = notices[0]["text"].as_str().unwrap();
    assert!(
        text.contains("203.0.113.5") && text.contains("Mozilla/5.0 (test)"),
        "{text}"
    );
    assert!(notices[0]["link"].is_null(), "no link to click");
    let events = h.events().await;
    let new_devices: Vec<_> = events
        .iter()
        .filter(|(t, _)| t == "auth.device.new")
        .collect();
    assert_eq!(new_devices.len(), 1);
    assert_eq!(new_devices[0].1["client_ip"], "203.0.113.5");
    // Without a device cookie there is nothing to recognise: no notice, no record.
    h.attempt("ada@example.com", PW, &client("203.0.113.6"))
        .await;
    assert_eq!(
        h.events()
            .await
            .iter()
            .filter(|(t, _)| t == "auth.device.new")
            .count(),
        1
    );
}

#[tokio::test]
async fn a_trusted_browser_skips_the_code_until_its_trust_ends_or_is_withdrawn() {
    let h = harness_with_two_factor(test_settings()).await;
    let ada = h
        .user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    let secret = h.with_factor(&ada).await;
    let home = on("home", "198.51.100.1");
    // Not trusted yet: asked; then trusted at the second step.
    h.with_code(&secret, 30, &home, true).await;
    let Some(SignInStep::Done(skipped)) = h.attempt("ada@example.com", PW, &home).await else {
        panic!("a trusted browser skips the code");
    };
    assert_eq!(skipped.session.acr.as_deref(), Some("urn:svc:aal2"));
    assert_eq!(skipped.session.amr, ["pwd", "mfa"]);
    // Another browser is not trusted.
    let other = h
        .attempt("ada@example.com", PW, &on("cafe", "198.51.100.1"))
        .await;
    assert!(matches!(other, Some(SignInStep::SecondFactor(_))));
    // Trust ends after 30 days.
    h.clock.advance(Duration::days(31));
    let later = h.attempt("ada@example.com", PW, &home).await;
    assert!(matches!(later, Some(SignInStep::SecondFactor(_))));
    h.with_code(&secret, 0, &home, true).await;
    assert!(matches!(
        h.attempt("ada@example.com", PW, &home).await,
        Some(SignInStep::Done(_))
    ));
    // Withdrawn by the person.
    assert_eq!(
        h.authn
            .forget_trusted_devices(&h.tenant, &ada)
            .await
            .unwrap(),
        1
    );
    assert!(matches!(
        h.attempt("ada@example.com", PW, &home).await,
        Some(SignInStep::SecondFactor(_))
    ));
}

#[tokio::test]
async fn a_risky_sign_in_on_a_trusted_browser_is_asked_for_the_code_and_recorded() {
    let h = harness_with_two_factor(test_settings()).await;
    let ada = h
        .user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    let secret = h.with_factor(&ada).await;
    let home = on("home", "198.51.100.1");
    h.with_code(&secret, 30, &home, true).await;
    // The same trusted browser from an address never signed in from: asked.
    let travelling = on("home", "192.0.2.77");
    let risky = h.attempt("ada@example.com", PW, &travelling).await;
    assert!(
        matches!(risky, Some(SignInStep::SecondFactor(_))),
        "new address"
    );
    let events = h.events().await;
    let triggered = &events
        .iter()
        .rfind(|(t, _)| t == "auth.adaptive_mfa.triggered")
        .expect("recorded")
        .1;
    assert_eq!(triggered["signals"], serde_json::json!(["new_ip"]));
    assert_eq!(triggered["score"], 50);
    // A burst of failures on the account, then the right password from home: asked.
    for _ in 0..2 {
        assert!(
            h.attempt("ada@example.com", "wrong password!", &home)
                .await
                .is_none()
        );
    }
    let after_burst = h.attempt("ada@example.com", PW, &home).await;
    assert!(
        matches!(after_burst, Some(SignInStep::SecondFactor(_))),
        "failure burst"
    );
    let signals: Vec<_> = h
        .events()
        .await
        .into_iter()
        .filter(|(t, _)| t == "auth.adaptive_mfa.triggered")
        .map(|(_, data)| data["signals"].clone())
        .collect();
    assert_eq!(signals.len(), 2, "{signals:?}");
    assert!(
        signals.contains(&serde_json::json!(["failure_burst"])),
        "{signals:?}"
    );
    // Calm again: home, no failures, skips.
    assert!(matches!(
        h.attempt("ada@example.com", PW, &home).await,
        Some(SignInStep::Done(_))
    ));
}
