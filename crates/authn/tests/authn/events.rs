//! The events the sign-in engine records with its changes: successful and failed sign-ins, the
//! lock after repeated failures, the per-IP limit crossed (once), sign-outs and revocations,
//! sign-ups, verified addresses, resets and accepted invitations.

use crate::support::{Harness, ISSUER, client, harness, harness_with, test_settings};
use serde_json::Value;
use std::time::Duration as StdDuration;
use svc_authn::{AuthnError, AuthnSettings};
use svc_domain::{LogoutReason, UserStatus};

const PW: &str = "correct horse battery";

impl Harness {
    /// Every recorded event of the tenant, oldest first: (type, data).
    pub(crate) async fn events(&self) -> Vec<(String, Value)> {
        let mut tx = self.store.read().await.unwrap();
        let events = tx.events(&self.tenant.id, None, 1000).await.unwrap();
        tx.finish().await.unwrap();
        events
            .into_iter()
            .map(|e| {
                let body: Value = serde_json::from_str(&e.body).unwrap();
                assert_eq!(body["tenant_id"], self.tenant.id.as_str());
                (e.event_type.as_str().to_owned(), body["data"].clone())
            })
            .collect()
    }

    /// Moves the clock a millisecond, so what follows gets later (time-ordered) event ids.
    pub(crate) fn tick(&self) {
        self.clock.advance(time::Duration::milliseconds(1));
    }

    pub(crate) async fn types(&self) -> Vec<String> {
        self.events().await.into_iter().map(|(t, _)| t).collect()
    }
}

#[tokio::test]
async fn sign_ins_record_success_and_failure_and_a_lock_records_brute_force() {
    let settings = AuthnSettings {
        brute_force_max_attempts: 3,
        brute_force_lockout: StdDuration::from_secs(600),
        ..test_settings()
    };
    let h = harness_with(settings, None, false).await;
    let ada = h
        .user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    let c = client("203.0.113.9");

    let signed_in = h
        .authn
        .sign_in(&h.tenant, "ada@example.com", PW, &c)
        .await
        .unwrap();
    h.tick();
    let events = h.events().await;
    h.tick();
    assert_eq!(events.len(), 1);
    let (kind, data) = &events[0];
    assert_eq!(kind, "auth.login.success");
    assert_eq!(data["user_id"], ada.id.as_str());
    assert_eq!(data["session_id"], signed_in.session.id.as_str());
    assert_eq!(data["method"], "password");
    assert_eq!(data["client_ip"], "203.0.113.9");

    // A wrong password for a known account and an unknown address: failures, the first naming
    // the account, neither carrying the attempted password or address.
    for (email, known) in [("ada@example.com", true), ("nobody@example.com", false)] {
        let err = h
            .authn
            .sign_in(&h.tenant, email, "wrong password!", &c)
            .await;
        h.tick();
        assert!(matches!(err, Err(AuthnError::InvalidCredentials)));
        let (kind, data) = h.events().await.pop().unwrap();
        assert_eq!(kind, "auth.login.failure");
        assert_eq!(data["reason"], "invalid_credentials");
        if known {
            assert_eq!(data["user_id"], ada.id.as_str());
        } else {
            assert_eq!(data["user_id"], Value::Null);
        }
        let text = data.to_string();
        assert!(
            !text.contains("wrong password") && !text.contains("nobody@"),
            "{text}"
        );
    }
    // Two more failures on ada: the third locks the account.
    for _ in 0..2 {
        let _ = h
            .authn
            .sign_in(&h.tenant, "ada@example.com", "wrong password!", &c)
            .await;
        h.tick();
    }
    let types = h.types().await;
    h.tick();
    assert_eq!(
        types.iter().filter(|t| *t == "auth.login.failure").count(),
        4
    );
    // The third failure and the lock it causes share one instant (one transaction), so their
    // time-ordered ids may come in either order: they are the last two, one of each.
    let events = h.events().await;
    let last_two = &events[events.len() - 2..];
    let mut kinds: Vec<&str> = last_two.iter().map(|(k, _)| k.as_str()).collect();
    kinds.sort_unstable();
    assert_eq!(
        kinds,
        ["auth.login.failure", "security.brute_force.detected"]
    );
    let (kind, data) = last_two
        .iter()
        .find(|(k, _)| k == "security.brute_force.detected")
        .cloned()
        .unwrap();
    assert_eq!(kind, "security.brute_force.detected");
    assert_eq!(data["user_id"], ada.id.as_str());
    assert_eq!(data["scope"], "account");
    assert_eq!(data["locked_for_secs"], 600);
    // Attempts refused while locked are not recorded one by one.
    let before = h.types().await.len();
    let err = h.authn.sign_in(&h.tenant, "ada@example.com", PW, &c).await;
    h.tick();
    assert!(matches!(err, Err(AuthnError::Locked { .. })));
    assert_eq!(h.types().await.len(), before);
}

#[tokio::test]
async fn the_per_ip_limit_is_recorded_once_when_crossed() {
    let settings = AuthnSettings {
        password_verify_ip_max_attempts: 2,
        ..test_settings()
    };
    let h = harness_with(settings, None, false).await;
    let c = client("198.51.100.20");
    for _ in 0..2 {
        let _ = h
            .authn
            .sign_in(&h.tenant, "x@example.com", "wrong password!", &c)
            .await;
        h.tick();
    }
    for _ in 0..4 {
        let err = h
            .authn
            .sign_in(&h.tenant, "x@example.com", "wrong password!", &c)
            .await;
        h.tick();
        assert!(
            matches!(err, Err(AuthnError::RateLimited { .. })),
            "{err:?}"
        );
    }
    let limited: Vec<_> = h
        .events()
        .await
        .into_iter()
        .filter(|(_, d)| d["reason"] == "rate_limited")
        .collect();
    assert_eq!(
        limited.len(),
        1,
        "one event for the crossing, not one per refusal"
    );
    assert_eq!(limited[0].1["client_ip"], "198.51.100.20");
}

#[tokio::test]
async fn sign_outs_and_revocations_record_one_logout_each() {
    let h = harness().await;
    let ada = h
        .user("ada@example.com", Some(PW), UserStatus::Active)
        .await;
    let c = client("203.0.113.9");
    let first = h
        .authn
        .sign_in(&h.tenant, "ada@example.com", PW, &c)
        .await
        .unwrap();
    h.tick();
    let second = h
        .authn
        .sign_in(&h.tenant, "ada@example.com", PW, &c)
        .await
        .unwrap();
    h.tick();
    h.authn
        .sign_out(&h.tenant, &first.session, LogoutReason::EndSession)
        .await
        .unwrap();
    h.tick();
    h.authn
        .sign_out(&h.tenant, &first.session, LogoutReason::SignOut)
        .await
        .unwrap();
    h.tick();
    assert!(
        h.authn
            .revoke_session(&h.tenant, &ada.id, &second.session.id)
            .await
            .unwrap()
    );
    let logouts: Vec<Value> = h
        .events()
        .await
        .into_iter()
        .filter(|(t, _)| t == "auth.logout")
        .map(|(_, d)| d)
        .collect();
    assert_eq!(logouts.len(), 2, "ending an ended session records nothing");
    assert_eq!(logouts[0]["session_id"], first.session.id.as_str());
    assert_eq!(logouts[0]["reason"], "end_session");
    assert_eq!(logouts[1]["session_id"], second.session.id.as_str());
    assert_eq!(logouts[1]["reason"], "revoked_by_user");
    assert_eq!(logouts[1]["user_id"], ada.id.as_str());
}

#[tokio::test]
async fn account_lifecycle_through_links_records_tenant_user_events() {
    let h = harness_with(test_settings(), None, true).await;
    let c = client("203.0.113.9");
    h.authn
        .sign_up(&h.tenant, ISSUER, "ada@example.com", PW, Some("Ada"), &c)
        .await
        .unwrap();
    h.tick();
    let token = h.last_token("verify-email").await;
    // A taken address records nothing: the answer and the record look like nothing happened.
    h.authn
        .sign_up(&h.tenant, ISSUER, "ada@example.com", PW, None, &c)
        .await
        .unwrap();
    h.tick();
    let ada = h.by_email("ada@example.com").await.unwrap();
    h.authn.verify_email(&h.tenant, &token).await.unwrap();
    h.tick();

    let grace = h
        .user("grace@example.com", None, UserStatus::PreProvisioned)
        .await;
    h.tick();
    h.authn
        .request_password_reset(&h.tenant, ISSUER, "grace@example.com", &c)
        .await
        .unwrap();
    let reset = h.last_token("reset-password").await;
    h.tick();
    h.authn
        .reset_password(&h.tenant, &reset, "a brand new passphrase")
        .await
        .unwrap();
    h.tick();

    let events = h.events().await;
    h.tick();
    let summary: Vec<(String, String, String)> = events
        .iter()
        .map(|(t, d)| {
            (
                t.clone(),
                d["user_id"].as_str().unwrap_or("").to_owned(),
                d["status"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let ada_id = ada.id.to_string();
    let grace_id = grace.id.to_string();
    assert_eq!(
        summary,
        vec![
            (
                "tenant_user.activated".to_owned(),
                ada_id.clone(),
                "active".to_owned()
            ),
            (
                "tenant_user.updated".to_owned(),
                ada_id.clone(),
                "active".to_owned()
            ),
            (
                "tenant_user.updated".to_owned(),
                grace_id.clone(),
                "active".to_owned()
            ),
            (
                "tenant_user.activated".to_owned(),
                grace_id.clone(),
                "active".to_owned()
            ),
        ]
    );
    assert_eq!(events[0].1["actor"], format!("user:{ada_id}"));
}
