//! Social recovery in the engine, on a manual clock: guardians named and refused, the decoy
//! answer for accounts that cannot be recovered, approvals spent once and never by the owner,
//! the waiting period and its cancellation, completion that removes the lost factors and ends
//! every session, the factor owed afterwards, expiry, and the events of every step.

use crate::support::{Harness, ISSUER, client, harness_with_recovery};
use std::time::Duration as StdDuration;
use svc_authn::{AuthnError, CaptchaAnswer, RecoveryProgress, RecoverySettings};
use svc_domain::{User, UserStatus};
use time::Duration;

const PW: &str = "correct horse battery";
const NEW_PW: &str = "a brand new passphrase";

fn settings() -> RecoverySettings {
    RecoverySettings {
        approvals_required: 2,
        max_guardians: 3,
        waiting_period: StdDuration::from_secs(86_400),
        request_lifetime: StdDuration::from_secs(7 * 86_400),
    }
}

impl Harness {
    /// Ada with an authenticator and the guardians named, from an aal2 session.
    async fn ada_with_guardians(&self, guardians: &[&str]) -> User {
        let ada = self
            .user("ada@example.com", Some(PW), UserStatus::Active)
            .await;
        self.enrol(&ada).await;
        let session = self.aal2_session(&ada).await;
        for g in guardians {
            self.tick();
            self.authn
                .add_guardian(&self.tenant, (&session, &ada), g, &client("203.0.113.9"))
                .await
                .unwrap();
        }
        ada
    }

    /// A session of `user` at aal2, the enrolment's.
    async fn aal2_session(&self, user: &User) -> svc_domain::Session {
        let sessions = self.live(user).await;
        sessions
            .into_iter()
            .find(|s| s.acr.as_deref() == Some("urn:svc:aal2"))
            .expect("an aal2 session")
    }

    async fn live(&self, user: &User) -> Vec<svc_domain::Session> {
        let now = svc_domain::Clock::now(self.clock.as_ref());
        let mut tx = self.store.read().await.unwrap();
        let sessions = tx
            .live_sessions(&self.tenant.id, &user.id, now)
            .await
            .unwrap();
        tx.finish().await.unwrap();
        sessions
    }

    /// The aal2 session of `user` as if it had been made with the password alone.
    async fn aal1_of(&self, user: &User) -> svc_domain::Session {
        let mut session = self.aal2_session(user).await;
        session.acr = Some("urn:svc:aal1".into());
        session
    }

    /// The token of the last link to `path` mailed to `to`.
    async fn last_token_to(&self, to: &str, path: &str) -> String {
        self.authn.mail_settled().await;
        let prefix = format!("{ISSUER}{path}?token=");
        self.mails()
            .await
            .into_iter()
            .filter(|m| m["to"] == to)
            .filter_map(|m| m["link"].as_str().map(str::to_owned))
            .rfind(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no {path} link to {to}"))
            .strip_prefix(&prefix)
            .unwrap()
            .to_owned()
    }

    async fn start(&self, email: &str) -> String {
        self.tick();
        self.authn
            .start_recovery(
                &self.tenant,
                ISSUER,
                email,
                &client("198.51.100.7"),
                CaptchaAnswer::default(),
            )
            .await
            .unwrap()
    }

    async fn approve(
        &self,
        token: &str,
        signed_in: Option<&svc_domain::UserId>,
    ) -> Result<(), AuthnError> {
        self.tick();
        self.authn
            .approve_recovery(
                (&self.tenant, ISSUER),
                token,
                signed_in,
                &client("192.0.2.1"),
            )
            .await
    }

    async fn progress(&self, asker: &str) -> RecoveryProgress {
        self.authn
            .recovery_progress(&self.tenant, asker)
            .await
            .unwrap()
    }
}

#[tokio::test]
async fn guardians_approve_then_after_the_wait_a_new_password_replaces_the_lost_factors() {
    let h = harness_with_recovery(settings()).await;
    let ada = h
        .ada_with_guardians(&["grace@example.com", "alan@example.com"])
        .await;
    let asker = h.start("ada@example.com").await;
    assert_eq!(
        h.progress(&asker).await,
        RecoveryProgress::Collecting {
            approvals: 0,
            needed: 2
        }
    );
    let grace = h
        .last_token_to("grace@example.com", "/auth/recovery/approve")
        .await;
    let alan = h
        .last_token_to("alan@example.com", "/auth/recovery/approve")
        .await;
    let cancel = h
        .last_token_to("ada@example.com", "/auth/recovery/cancel")
        .await;
    assert!(grace.starts_with("gda_") && cancel.starts_with("rcc_"));
    // The guardian sees whose account it is.
    let about = h.authn.recovery_approval(&h.tenant, &grace).await.unwrap();
    assert_eq!(about.owner.as_str(), "ada@example.com");
    // The owner's own session cannot approve, and the refusal spends nothing.
    assert!(matches!(
        h.approve(&grace, Some(&ada.id)).await,
        Err(AuthnError::OwnRecovery)
    ));
    h.approve(&grace, None).await.unwrap();
    // A link works once.
    assert!(matches!(
        h.approve(&grace, None).await,
        Err(AuthnError::InvalidLink)
    ));
    assert!(matches!(
        h.approve("gda_forged", None).await,
        Err(AuthnError::InvalidLink)
    ));
    assert_eq!(
        h.progress(&asker).await,
        RecoveryProgress::Collecting {
            approvals: 1,
            needed: 2
        }
    );
    // Not before enough approvals and the wait.
    assert!(matches!(
        h.authn
            .complete_recovery(&h.tenant, &asker, NEW_PW, &client("198.51.100.7"))
            .await,
        Err(AuthnError::RecoveryNotReady)
    ));
    h.approve(&alan, None).await.unwrap();
    let ready_at = match h.progress(&asker).await {
        RecoveryProgress::Waiting { ready_at } => ready_at,
        other => panic!("{other:?}"),
    };
    let now = svc_domain::Clock::now(h.clock.as_ref());
    assert!(
        (ready_at - now - Duration::days(1)).abs() < Duration::milliseconds(1),
        "{ready_at} is a day after {now}"
    );
    h.authn.mail_settled().await;
    let waiting = h
        .mails()
        .await
        .into_iter()
        .rfind(|m| m["to"] == "ada@example.com")
        .unwrap();
    assert!(
        waiting["subject"]
            .as_str()
            .unwrap()
            .contains("will be recovered")
    );
    assert!(
        waiting["link"].is_null(),
        "the notice names the page, no link"
    );
    assert!(matches!(
        h.authn
            .complete_recovery(&h.tenant, &asker, NEW_PW, &client("198.51.100.7"))
            .await,
        Err(AuthnError::RecoveryNotReady)
    ));
    h.clock.advance(Duration::days(1));
    assert_eq!(h.progress(&asker).await, RecoveryProgress::Ready);
    // A refused password spends nothing.
    assert!(matches!(
        h.authn
            .complete_recovery(&h.tenant, &asker, "short", &client("198.51.100.7"))
            .await,
        Err(AuthnError::WeakPassword(_))
    ));
    h.tick();
    let done = h
        .authn
        .complete_recovery(&h.tenant, &asker, NEW_PW, &client("198.51.100.7"))
        .await
        .unwrap();
    assert_eq!(done.id, ada.id);
    assert_eq!(h.progress(&asker).await, RecoveryProgress::Closed);
    // The old password is gone, the new one works, and no second factor is asked: it was lost.
    assert!(
        h.authn
            .sign_in(&h.tenant, "ada@example.com", PW, &client("198.51.100.7"))
            .await
            .is_err()
    );
    let signed_in = h
        .authn
        .sign_in(
            &h.tenant,
            "ada@example.com",
            NEW_PW,
            &client("198.51.100.7"),
        )
        .await
        .unwrap();
    assert_eq!(signed_in.session.acr.as_deref(), Some("urn:svc:aal1"));
    let mut tx = h.store.read().await.unwrap();
    assert!(
        tx.second_factors(&h.tenant.id, &ada.id)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(tx.recovery_factor_due(&h.tenant.id, &ada.id).await.unwrap());
    tx.finish().await.unwrap();
    let live = h.live(&ada).await;
    assert_eq!(
        live.len(),
        1,
        "only the new sign-in: every older session ended"
    );
    assert_eq!(live[0].id, signed_in.session.id);
    // A new factor settles what the recovery left owing.
    h.tick();
    let enrolment = h.authn.start_totp(&h.tenant, &done, "Phone").await.unwrap();
    let secret = svc_crypto::TotpSecret::from_base32(&enrolment.secret_base32).unwrap();
    h.authn
        .confirm_totp(
            &h.tenant,
            &signed_in.session,
            &done,
            &enrolment.factor_id,
            &h.code(&secret, 0),
            &client("198.51.100.7"),
        )
        .await
        .unwrap();
    let mut tx = h.store.read().await.unwrap();
    assert!(!tx.recovery_factor_due(&h.tenant.id, &ada.id).await.unwrap());
    tx.finish().await.unwrap();
    let types = h.types().await;
    for expected in [
        "auth.recovery.guardian_added",
        "auth.recovery.requested",
        "auth.recovery.approved",
        "auth.recovery.waiting",
        "auth.mfa.removed",
        "auth.recovery.completed",
    ] {
        assert!(types.iter().any(|t| t == expected), "{expected}: {types:?}");
    }
    let approvals: Vec<_> = h
        .events()
        .await
        .into_iter()
        .filter(|(t, _)| t == "auth.recovery.approved")
        .map(|(_, d)| d["approvals"].as_u64().unwrap())
        .collect();
    assert_eq!(approvals, [1, 2]);
}

#[tokio::test]
async fn the_owner_cancels_by_link_or_from_the_account_and_nothing_changes() {
    let h = harness_with_recovery(settings()).await;
    let ada = h
        .ada_with_guardians(&["grace@example.com", "alan@example.com"])
        .await;
    let asker = h.start("ada@example.com").await;
    let grace = h
        .last_token_to("grace@example.com", "/auth/recovery/approve")
        .await;
    let alan = h
        .last_token_to("alan@example.com", "/auth/recovery/approve")
        .await;
    let cancel = h
        .last_token_to("ada@example.com", "/auth/recovery/cancel")
        .await;
    h.approve(&grace, None).await.unwrap();
    h.approve(&alan, None).await.unwrap();
    h.tick();
    h.authn
        .cancel_recovery(&h.tenant, &cancel, &client("203.0.113.9"))
        .await
        .unwrap();
    assert!(matches!(
        h.authn
            .cancel_recovery(&h.tenant, &cancel, &client("203.0.113.9"))
            .await,
        Err(AuthnError::InvalidLink)
    ));
    h.clock.advance(Duration::days(2));
    assert_eq!(h.progress(&asker).await, RecoveryProgress::Closed);
    assert!(matches!(
        h.authn
            .complete_recovery(&h.tenant, &asker, NEW_PW, &client("198.51.100.7"))
            .await,
        Err(AuthnError::InvalidLink)
    ));
    // A new request may start; the owner cancels it from an aal2 session.
    let again = h.start("ada@example.com").await;
    assert_ne!(again, asker);
    let session = h.aal2_session(&ada).await;
    let aal1 = h.aal1_of(&ada).await;
    assert!(matches!(
        h.authn
            .cancel_own_recovery(&h.tenant, (&aal1, &ada), &client("203.0.113.9"))
            .await,
        Err(AuthnError::StepUpRequired)
    ));
    h.tick();
    h.authn
        .cancel_own_recovery(&h.tenant, (&session, &ada), &client("203.0.113.9"))
        .await
        .unwrap();
    assert_eq!(h.progress(&again).await, RecoveryProgress::Closed);
    let cancelled = h
        .types()
        .await
        .into_iter()
        .filter(|t| t == "auth.recovery.cancelled")
        .count();
    assert_eq!(cancelled, 2);
    // Ada's factor and password are as they were.
    let mut tx = h.store.read().await.unwrap();
    assert_eq!(
        tx.second_factors(&h.tenant.id, &ada.id)
            .await
            .unwrap()
            .len(),
        1
    );
    tx.finish().await.unwrap();
}

#[tokio::test]
async fn accounts_that_cannot_be_recovered_get_the_same_answer_and_nobody_is_mailed() {
    let h = harness_with_recovery(settings()).await;
    // One guardian where two approvals are needed.
    h.ada_with_guardians(&["grace@example.com"]).await;
    h.authn.mail_settled().await;
    let before = h.mails().await.len();
    for email in ["ada@example.com", "nobody@example.com"] {
        let asker = h.start(email).await;
        assert!(asker.starts_with("rca_"));
        assert_eq!(
            h.progress(&asker).await,
            RecoveryProgress::Collecting {
                approvals: 0,
                needed: 2
            },
            "{email}"
        );
        h.clock.advance(Duration::days(30));
        assert_eq!(
            h.progress(&asker).await,
            RecoveryProgress::Collecting {
                approvals: 0,
                needed: 2
            },
            "a decoy never moves"
        );
    }
    h.authn.mail_settled().await;
    assert_eq!(h.mails().await.len(), before, "nobody was mailed");
    assert!(
        !h.types()
            .await
            .iter()
            .any(|t| t == "auth.recovery.requested")
    );
    assert!(matches!(
        h.authn
            .start_recovery(
                &h.tenant,
                ISSUER,
                "not an address",
                &client("198.51.100.7"),
                CaptchaAnswer::default()
            )
            .await,
        Err(AuthnError::InvalidEmail)
    ));
}

#[tokio::test]
async fn guardians_are_someone_else_at_most_max_and_need_an_aal2_session_once_factored() {
    let h = harness_with_recovery(settings()).await;
    let ada = h
        .ada_with_guardians(&["grace@example.com", "alan@example.com", "kurt@example.com"])
        .await;
    let session = h.aal2_session(&ada).await;
    let add = |email: &'static str| {
        let session = session.clone();
        let ada = ada.clone();
        let h = &h;
        async move {
            h.authn
                .add_guardian(&h.tenant, (&session, &ada), email, &client("203.0.113.9"))
                .await
        }
    };
    assert!(matches!(
        add("emmy@example.com").await,
        Err(AuthnError::GuardianRefused(_))
    ));
    let overview = h.authn.recovery_overview(&h.tenant, &ada).await.unwrap();
    assert_eq!(overview.guardians.len(), 3);
    h.authn
        .remove_guardian(
            &h.tenant,
            (&session, &ada),
            &overview.guardians[2].id,
            &client("203.0.113.9"),
        )
        .await
        .unwrap();
    assert!(matches!(
        add("ADA@example.com").await,
        Err(AuthnError::GuardianRefused(_))
    ));
    assert!(matches!(
        add("grace@example.com").await,
        Err(AuthnError::GuardianRefused(_))
    ));
    assert!(matches!(
        add("not an address").await,
        Err(AuthnError::InvalidEmail)
    ));
    add("emmy@example.com").await.unwrap();
    // Another person's guardian cannot be removed through this account.
    let bob = h
        .user("bob@example.com", Some(PW), UserStatus::Active)
        .await;
    let bob_session = h.aal1(&bob).await.session;
    assert!(matches!(
        h.authn
            .remove_guardian(
                &h.tenant,
                (&bob_session, &bob),
                &overview.guardians[0].id,
                &client("203.0.113.9"),
            )
            .await,
        Err(AuthnError::UnknownGuardian)
    ));
    // An aal1 session of a person with a factor cannot change guardians.
    let aal1 = h.aal1_of(&ada).await;
    assert!(matches!(
        h.authn
            .add_guardian(
                &h.tenant,
                (&aal1, &ada),
                "zoe@example.com",
                &client("203.0.113.9")
            )
            .await,
        Err(AuthnError::StepUpRequired)
    ));
    h.authn.mail_settled().await;
    let named = h
        .mails()
        .await
        .into_iter()
        .filter(|m| m["to"] == "emmy@example.com")
        .count();
    assert_eq!(named, 1, "the new guardian is told");
}

#[tokio::test]
async fn approvals_stop_when_the_recovery_expires() {
    let h = harness_with_recovery(settings()).await;
    h.ada_with_guardians(&["grace@example.com", "alan@example.com"])
        .await;
    let asker = h.start("ada@example.com").await;
    let grace = h
        .last_token_to("grace@example.com", "/auth/recovery/approve")
        .await;
    h.clock.advance(Duration::days(8));
    assert!(matches!(
        h.approve(&grace, None).await,
        Err(AuthnError::InvalidLink)
    ));
    assert!(matches!(
        h.authn.recovery_approval(&h.tenant, &grace).await,
        Err(AuthnError::InvalidLink)
    ));
    assert_eq!(h.progress(&asker).await, RecoveryProgress::Closed);
    // An expired request makes room for a new one.
    let again = h.start("ada@example.com").await;
    let fresh = h
        .last_token_to("grace@example.com", "/auth/recovery/approve")
        .await;
    assert_ne!(fresh, grace);
    h.approve(&fresh, None).await.unwrap();
    assert_eq!(
        h.progress(&again).await,
        RecoveryProgress::Collecting {
            approvals: 1,
            needed: 2
        }
    );
}
