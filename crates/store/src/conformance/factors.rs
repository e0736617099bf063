//! Conformance: second factors (TOTP factors, backup codes, second-factor challenges, the
//! deployment's wrapped data key, known and trusted devices), with their fixtures.

use super::grants::stored_tenant;
use super::{assert_refused_by_check, tenant_fixture, user_fixture};
use crate::{Store, StoreError};
use futures_util::future::join_all;
use std::sync::Arc;
use svc_domain::{
    BackupCode, FactorChallenge, FactorId, FactorKind, KnownDevice, LoginMethod, LoginRecord,
    LoginRecordId, LoginResult, ManualClock, SecondFactor, SecretHash, SeededRandom, Tenant, User,
};
use time::{Duration, OffsetDateTime};

/// A whole second (no fraction), a day after the tenant fixtures' creation: SQLite's stored
/// text of it (`…:00Z`) sorts after that of any instant within the same second (`…:00.5Z`), so
/// checks around it prove instants are compared, not text.
pub(super) fn whole_second(tenant: &Tenant) -> OffsetDateTime {
    let day = tenant.created_at + Duration::days(1);
    day.replace_nanosecond(0).expect("whole second")
}

/// An unconfirmed TOTP factor of `user` enrolled at `at`: a label with quotes and non-ASCII
/// text, a sealed secret with zero and high bytes. Ids grow with `at`.
pub fn factor_fixture(user: &User, seed: u64, at: OffsetDateTime) -> SecondFactor {
    SecondFactor {
        id: FactorId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: user.tenant_id.clone(),
        user_id: user.id.clone(),
        kind: FactorKind::Totp,
        label: format!("Phone \"{seed}\" ü"),
        sealed_secret: (0..60u8)
            .map(|i| i.wrapping_mul(17) ^ seed as u8)
            .chain([0, 0xff])
            .collect(),
        confirmed_at: None,
        last_used_step: None,
        created_at: at,
    }
}

/// An unused backup code of `user`, generated at `at`.
pub fn backup_code_fixture(user: &User, code: &str, at: OffsetDateTime) -> BackupCode {
    BackupCode {
        tenant_id: user.tenant_id.clone(),
        user_id: user.id.clone(),
        hash: SecretHash::of(code),
        created_at: at,
        used_at: None,
    }
}

/// A set of `n` unused backup codes of `user` named `{prefix}{i}`, generated at `at`.
fn backup_codes(user: &User, prefix: &str, n: usize, at: OffsetDateTime) -> Vec<BackupCode> {
    (0..n)
        .map(|i| backup_code_fixture(user, &format!("{prefix}{i}"), at))
        .collect()
}

/// An unused second-factor challenge of `user`, issued at `at` after a password, valid for five
/// minutes.
pub fn factor_challenge_fixture(user: &User, secret: &str, at: OffsetDateTime) -> FactorChallenge {
    FactorChallenge {
        hash: SecretHash::of(secret),
        tenant_id: user.tenant_id.clone(),
        user_id: user.id.clone(),
        amr: vec!["pwd".into()],
        created_at: at,
        expires_at: at + Duration::minutes(5),
        used_at: None,
    }
}

/// Every field reads back identically (set or `None`; a 64-character label of non-ASCII text;
/// a large step), inside the writing transaction and after commit; a user's factors list oldest
/// first and only theirs; no factor is ever visible to another tenant.
pub async fn second_factors_round_trip_per_user_and_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let eve = user_fixture(&other, 3, "eve@example.com");
    let t0 = whole_second(&acme);

    let bare = factor_fixture(&ada, 1, t0 + Duration::milliseconds(750));
    let full = SecondFactor {
        label: "ü".repeat(64),
        confirmed_at: Some(t0 + Duration::microseconds(1_500_001)),
        last_used_step: Some(58_000_000_123),
        ..factor_fixture(&ada, 2, t0 + Duration::milliseconds(250))
    };
    let later = factor_fixture(&ada, 3, t0 + Duration::milliseconds(1_100));
    let whole = factor_fixture(&ada, 4, t0);
    let bobs = factor_fixture(&bob, 5, t0);
    let eves = factor_fixture(&eve, 6, t0);

    let mut tx = store.write().await.expect("write");
    for user in [&ada, &bob, &eve] {
        tx.insert_user(user).await.expect("user");
    }
    for factor in [&bare, &full, &later, &whole, &bobs, &eves] {
        tx.insert_second_factor(factor).await.expect("factor");
    }
    assert_eq!(
        tx.second_factor(&acme.id, &full.id)
            .await
            .expect("read own write"),
        Some(full.clone()),
        "visible inside the writing transaction"
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    for factor in [&bare, &full, &later, &whole, &bobs] {
        assert_eq!(
            read.second_factor(&acme.id, &factor.id)
                .await
                .expect("by id")
                .as_ref(),
            Some(factor)
        );
    }
    assert_eq!(
        read.second_factors(&acme.id, &ada.id).await.expect("ada's"),
        vec![whole.clone(), full.clone(), bare.clone(), later.clone()],
        "oldest first, below one second too"
    );
    assert_eq!(
        read.second_factors(&acme.id, &bob.id).await.expect("bob's"),
        vec![bobs.clone()]
    );
    assert!(
        read.second_factors(&other.id, &ada.id)
            .await
            .expect("cross-tenant list")
            .is_empty(),
        "another tenant lists nothing of ada's"
    );
    assert_eq!(
        read.second_factor(&other.id, &full.id)
            .await
            .expect("cross-tenant read"),
        None,
        "another tenant never sees ada's factor"
    );
    assert_eq!(
        read.second_factor(&acme.id, &eves.id)
            .await
            .expect("other tenant's factor"),
        None
    );
    let unknown = factor_fixture(&ada, 99, t0);
    assert_eq!(
        read.second_factor(&acme.id, &unknown.id)
            .await
            .expect("unknown"),
        None
    );
    assert_eq!(
        read.second_factors(&other.id, &eve.id)
            .await
            .expect("eve's"),
        vec![eves]
    );
    read.finish().await.expect("finish");
}

/// Confirmation marks an unconfirmed factor of its owner once, recording the time and the step;
/// never another user's, another tenant's or an unknown factor, and never twice.
pub async fn second_factor_confirmation_happens_once_for_its_owner(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let t0 = whole_second(&acme);
    let factor = factor_fixture(&ada, 1, t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_second_factor(&factor).await.expect("factor");
    tx.commit().await.expect("commit");

    let now = t0 + Duration::microseconds(30_000_007);
    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.confirm_second_factor(&acme.id, &bob.id, &factor.id, 7, now)
            .await
            .expect("bob"),
        "not bob's"
    );
    assert!(
        !tx.confirm_second_factor(&other.id, &ada.id, &factor.id, 7, now)
            .await
            .expect("other tenant"),
        "not in another tenant"
    );
    let unknown = factor_fixture(&ada, 2, t0);
    assert!(
        !tx.confirm_second_factor(&acme.id, &ada.id, &unknown.id, 7, now)
            .await
            .expect("unknown")
    );
    assert_eq!(
        tx.second_factor(&acme.id, &factor.id).await.expect("read"),
        Some(factor.clone()),
        "the refused attempts changed nothing"
    );
    assert!(
        tx.confirm_second_factor(&acme.id, &ada.id, &factor.id, 57_000_001, now)
            .await
            .expect("ada")
    );
    tx.commit().await.expect("commit");

    let confirmed = SecondFactor {
        confirmed_at: Some(now),
        last_used_step: Some(57_000_001),
        ..factor.clone()
    };
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.second_factor(&acme.id, &factor.id).await.expect("read"),
        Some(confirmed.clone())
    );
    assert!(confirmed.is_confirmed());
    assert!(
        !tx.confirm_second_factor(
            &acme.id,
            &ada.id,
            &factor.id,
            57_000_009,
            now + Duration::minutes(1)
        )
        .await
        .expect("again"),
        "once only"
    );
    assert_eq!(
        tx.second_factor(&acme.id, &factor.id).await.expect("read"),
        Some(confirmed),
        "the first confirmation stands"
    );
    tx.commit().await.expect("commit");
}

/// A TOTP step is accepted only if it is later than every step accepted before: the same step
/// twice or an older one is refused and changes nothing, a newer one is accepted; nothing is
/// accepted for another tenant's or an unknown factor.
pub async fn totp_steps_only_move_forward(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let t0 = whole_second(&acme);
    let fresh = factor_fixture(&ada, 1, t0);
    let confirmed = factor_fixture(&ada, 2, t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_second_factor(&fresh).await.expect("fresh");
    tx.insert_second_factor(&confirmed)
        .await
        .expect("confirmed");
    assert!(
        tx.confirm_second_factor(&acme.id, &ada.id, &confirmed.id, 50, t0)
            .await
            .expect("confirm")
    );
    tx.commit().await.expect("commit");

    let step_of = |factor: Option<SecondFactor>| factor.expect("factor").last_used_step;
    let mut tx = store.write().await.expect("write");
    assert!(
        tx.advance_totp_step(&acme.id, &fresh.id, 100)
            .await
            .expect("first step"),
        "no step accepted yet"
    );
    assert!(
        !tx.advance_totp_step(&acme.id, &fresh.id, 100)
            .await
            .expect("same step"),
        "the same step twice is a replay"
    );
    assert!(
        !tx.advance_totp_step(&acme.id, &fresh.id, 99)
            .await
            .expect("older step"),
        "an older step is a replay"
    );
    assert_eq!(
        step_of(tx.second_factor(&acme.id, &fresh.id).await.expect("read")),
        Some(100)
    );
    assert!(
        tx.advance_totp_step(&acme.id, &fresh.id, 101)
            .await
            .expect("newer step")
    );
    assert!(
        !tx.advance_totp_step(&other.id, &fresh.id, 200)
            .await
            .expect("other tenant"),
        "not in another tenant"
    );
    let unknown = factor_fixture(&ada, 3, t0);
    assert!(
        !tx.advance_totp_step(&acme.id, &unknown.id, 200)
            .await
            .expect("unknown")
    );
    assert!(
        !tx.advance_totp_step(&acme.id, &confirmed.id, 50)
            .await
            .expect("the confirming step"),
        "the step that confirmed the factor counts as used"
    );
    assert!(
        tx.advance_totp_step(&acme.id, &confirmed.id, 51)
            .await
            .expect("after confirming")
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        step_of(read.second_factor(&acme.id, &fresh.id).await.expect("read")),
        Some(101)
    );
    assert_eq!(
        step_of(
            read.second_factor(&acme.id, &confirmed.id)
                .await
                .expect("read")
        ),
        Some(51)
    );
    read.finish().await.expect("finish");
}

/// Deleting a factor is scoped to its owner and tenant; abandoned enrolments go (unconfirmed
/// and created strictly before the cut, compared as instants below one second) while confirmed
/// and newer factors stay; an administrator's reset removes the user's factors and backup codes
/// and nobody else's.
pub async fn second_factor_deletes_are_scoped(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let t0 = whole_second(&acme);
    let cut = t0 + Duration::milliseconds(500);

    let doomed = factor_fixture(&ada, 1, t0);
    let abandoned = factor_fixture(&ada, 2, t0 + Duration::milliseconds(400));
    let at_cut = factor_fixture(&ada, 3, cut);
    let newer = factor_fixture(&ada, 4, t0 + Duration::milliseconds(600));
    let confirmed = SecondFactor {
        confirmed_at: Some(t0),
        last_used_step: Some(10),
        ..factor_fixture(&ada, 5, t0 - Duration::hours(1))
    };
    let removable = factor_fixture(&ada, 6, t0 + Duration::seconds(5));
    let bobs_old = factor_fixture(&bob, 7, t0 - Duration::hours(1));
    let mut tx = store.write().await.expect("write");
    for factor in [
        &doomed, &abandoned, &at_cut, &newer, &confirmed, &removable, &bobs_old,
    ] {
        tx.insert_second_factor(factor).await.expect("factor");
    }
    tx.replace_backup_codes(&acme.id, &ada.id, &backup_codes(&ada, "ada-", 10, t0))
        .await
        .expect("ada's codes");
    tx.replace_backup_codes(&acme.id, &bob.id, &backup_codes(&bob, "bob-", 4, t0))
        .await
        .expect("bob's codes");
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.delete_second_factor(&acme.id, &bob.id, &removable.id)
            .await
            .expect("by bob"),
        "bob cannot delete ada's factor"
    );
    assert!(
        !tx.delete_second_factor(&other.id, &ada.id, &removable.id)
            .await
            .expect("other tenant"),
        "not from another tenant"
    );
    assert!(
        tx.delete_second_factor(&acme.id, &ada.id, &removable.id)
            .await
            .expect("by ada")
    );
    assert!(
        !tx.delete_second_factor(&acme.id, &ada.id, &removable.id)
            .await
            .expect("again"),
        "already gone"
    );
    assert_eq!(
        tx.second_factor(&acme.id, &removable.id)
            .await
            .expect("read"),
        None
    );

    assert_eq!(
        tx.delete_unconfirmed_factors(&other.id, &ada.id, cut)
            .await
            .expect("other tenant"),
        0
    );
    assert_eq!(
        tx.delete_unconfirmed_factors(&acme.id, &ada.id, cut)
            .await
            .expect("abandoned"),
        2,
        "the whole-second one and the one 400 ms in"
    );
    assert_eq!(
        tx.second_factors(&acme.id, &ada.id).await.expect("ada's"),
        vec![confirmed.clone(), at_cut.clone(), newer.clone()],
        "confirmed, at-the-cut and newer factors stay"
    );
    assert_eq!(
        tx.second_factors(&acme.id, &bob.id).await.expect("bob's"),
        vec![bobs_old.clone()],
        "only ada's enrolments"
    );
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.delete_user_factors(&other.id, &ada.id)
            .await
            .expect("other tenant"),
        0
    );
    assert_eq!(
        tx.unused_backup_codes(&acme.id, &ada.id)
            .await
            .expect("ada's codes"),
        10,
        "another tenant's reset touches nothing"
    );
    assert_eq!(
        tx.delete_user_factors(&acme.id, &ada.id)
            .await
            .expect("reset"),
        3
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert!(
        read.second_factors(&acme.id, &ada.id)
            .await
            .expect("ada's")
            .is_empty()
    );
    assert_eq!(
        read.unused_backup_codes(&acme.id, &ada.id)
            .await
            .expect("ada's codes"),
        0,
        "the reset takes the backup codes too"
    );
    assert_eq!(
        read.second_factors(&acme.id, &bob.id).await.expect("bob's"),
        vec![bobs_old]
    );
    assert_eq!(
        read.unused_backup_codes(&acme.id, &bob.id)
            .await
            .expect("bob's codes"),
        4
    );
    read.finish().await.expect("finish");
}

/// A new set of backup codes voids the old one, used or not; a code works once, only for its
/// owner and tenant; the count is of unused codes only.
pub async fn backup_codes_are_replaced_and_work_once(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let t0 = whole_second(&acme);
    let now = t0 + Duration::microseconds(60_000_003);
    let first = backup_codes(&ada, "first-", 10, t0);
    let mut second = backup_codes(&ada, "second-", 9, t0 + Duration::minutes(1));
    second.push(BackupCode {
        used_at: Some(t0 + Duration::minutes(1)),
        ..backup_code_fixture(&ada, "second-used", t0 + Duration::minutes(1))
    });
    let bobs = backup_codes(&bob, "bob-", 3, t0);

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.unused_backup_codes(&acme.id, &ada.id)
            .await
            .expect("none yet"),
        0
    );
    tx.replace_backup_codes(&acme.id, &ada.id, &first)
        .await
        .expect("first set");
    tx.replace_backup_codes(&acme.id, &bob.id, &bobs)
        .await
        .expect("bob's set");
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.unused_backup_codes(&acme.id, &ada.id)
            .await
            .expect("count"),
        10
    );
    assert_eq!(
        tx.unused_backup_codes(&other.id, &ada.id)
            .await
            .expect("other tenant"),
        0
    );
    assert!(
        !tx.consume_backup_code(&acme.id, &bob.id, &first[0].hash, now)
            .await
            .expect("by bob"),
        "not bob's code"
    );
    assert!(
        !tx.consume_backup_code(&other.id, &ada.id, &first[0].hash, now)
            .await
            .expect("other tenant"),
        "not in another tenant"
    );
    assert!(
        !tx.consume_backup_code(&acme.id, &ada.id, &SecretHash::of("never-issued"), now)
            .await
            .expect("unknown")
    );
    assert!(
        tx.consume_backup_code(&acme.id, &ada.id, &first[0].hash, now)
            .await
            .expect("ada")
    );
    assert!(
        !tx.consume_backup_code(&acme.id, &ada.id, &first[0].hash, now)
            .await
            .expect("again"),
        "single use"
    );
    assert_eq!(
        tx.unused_backup_codes(&acme.id, &ada.id)
            .await
            .expect("count"),
        9
    );
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    tx.replace_backup_codes(&acme.id, &ada.id, &second)
        .await
        .expect("second set");
    assert_eq!(
        tx.unused_backup_codes(&acme.id, &ada.id)
            .await
            .expect("count"),
        9,
        "the new set's unused codes only"
    );
    for old in &first {
        assert!(
            !tx.consume_backup_code(&acme.id, &ada.id, &old.hash, now)
                .await
                .expect("old code"),
            "the old set stops working"
        );
    }
    assert!(
        !tx.consume_backup_code(&acme.id, &ada.id, &second[9].hash, now)
            .await
            .expect("stored used"),
        "a code stored used stays used"
    );
    assert!(
        tx.consume_backup_code(&acme.id, &ada.id, &second[0].hash, now)
            .await
            .expect("new code")
    );
    assert_eq!(
        tx.unused_backup_codes(&acme.id, &ada.id)
            .await
            .expect("count"),
        8
    );
    assert_eq!(
        tx.unused_backup_codes(&acme.id, &bob.id)
            .await
            .expect("bob's"),
        3,
        "bob's set is his own"
    );
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    tx.replace_backup_codes(&acme.id, &ada.id, &[])
        .await
        .expect("empty set");
    assert_eq!(
        tx.unused_backup_codes(&acme.id, &ada.id)
            .await
            .expect("count"),
        0
    );
    assert!(
        !tx.consume_backup_code(&acme.id, &ada.id, &second[1].hash, now)
            .await
            .expect("voided")
    );
    tx.commit().await.expect("commit");
}

/// A challenge reads back whole while unused and unexpired (instants compared below one second),
/// only in its tenant; it is consumed once, never after its expiry or in another tenant, and a
/// used one is no longer found.
pub async fn factor_challenges_are_single_use_and_expire(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let t0 = whole_second(&acme);
    let challenge = FactorChallenge {
        amr: vec!["pwd".into(), "hwk \"x\" ü".into()],
        ..factor_challenge_fixture(&ada, "fc_live", t0 + Duration::microseconds(250_001))
    };
    let expiring = FactorChallenge {
        // Expires at a whole second: its text sorts after that of the instants just before it.
        expires_at: t0 + Duration::minutes(5),
        ..factor_challenge_fixture(&ada, "fc_expiring", t0)
    };
    let used = FactorChallenge {
        used_at: Some(t0 + Duration::seconds(1)),
        ..factor_challenge_fixture(&ada, "fc_used", t0)
    };
    let mut tx = store.write().await.expect("write");
    for c in [&challenge, &expiring, &used] {
        tx.insert_factor_challenge(c).await.expect("challenge");
    }
    tx.commit().await.expect("commit");

    let now = t0 + Duration::minutes(1);
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.factor_challenge(&acme.id, &challenge.hash, now)
            .await
            .expect("live"),
        Some(challenge.clone())
    );
    assert_eq!(
        read.factor_challenge(&other.id, &challenge.hash, now)
            .await
            .expect("other tenant"),
        None,
        "never in another tenant"
    );
    assert_eq!(
        read.factor_challenge(&acme.id, &used.hash, now)
            .await
            .expect("used"),
        None,
        "a used challenge is not found"
    );
    let just_before = expiring.expires_at - Duration::milliseconds(500);
    assert_eq!(
        read.factor_challenge(&acme.id, &expiring.hash, just_before)
            .await
            .expect("just before expiry"),
        Some(expiring.clone()),
        "alive until its expiry, below one second too"
    );
    assert_eq!(
        read.factor_challenge(&acme.id, &expiring.hash, expiring.expires_at)
            .await
            .expect("at expiry"),
        None,
        "dead from expires_at on"
    );
    assert_eq!(
        read.factor_challenge(&acme.id, &SecretHash::of("fc_unknown"), now)
            .await
            .expect("unknown"),
        None
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.consume_factor_challenge(&acme.id, &expiring.hash, expiring.expires_at)
            .await
            .expect("expired"),
        "not once expired"
    );
    assert!(
        !tx.consume_factor_challenge(&other.id, &challenge.hash, now)
            .await
            .expect("other tenant"),
        "not in another tenant"
    );
    assert!(
        !tx.consume_factor_challenge(&acme.id, &used.hash, now)
            .await
            .expect("already used")
    );
    assert!(
        tx.consume_factor_challenge(&acme.id, &challenge.hash, now)
            .await
            .expect("consume")
    );
    assert!(
        !tx.consume_factor_challenge(&acme.id, &challenge.hash, now)
            .await
            .expect("again"),
        "single use"
    );
    assert_eq!(
        tx.factor_challenge(&acme.id, &challenge.hash, now)
            .await
            .expect("after use"),
        None
    );
    assert!(
        tx.consume_factor_challenge(&acme.id, &expiring.hash, just_before)
            .await
            .expect("just before expiry")
    );
    tx.commit().await.expect("commit");
}

/// Twenty transactions race, each on its own connection, to accept one TOTP step, to use one
/// backup code and to complete one challenge: exactly one of each succeeds.
pub async fn racing_second_factor_uses_admit_exactly_one(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let t0 = whole_second(&acme);
    let factor = factor_fixture(&ada, 1, t0);
    let code = backup_code_fixture(&ada, "race-code", t0);
    let challenge = factor_challenge_fixture(&ada, "fc_race", t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_second_factor(&factor).await.expect("factor");
    tx.replace_backup_codes(&acme.id, &ada.id, std::slice::from_ref(&code))
        .await
        .expect("code");
    tx.insert_factor_challenge(&challenge)
        .await
        .expect("challenge");
    tx.commit().await.expect("commit");

    let attempts = (0..20i64).map(|i| {
        let store = store.clone();
        let (tenant, user) = (acme.id.clone(), ada.id.clone());
        let (id, hash, cookie) = (factor.id.clone(), code.hash.clone(), challenge.hash.clone());
        async move {
            let now = t0 + Duration::milliseconds(i);
            let mut tx = store.write().await?;
            let step = tx.advance_totp_step(&tenant, &id, 1_000).await?;
            let code = tx.consume_backup_code(&tenant, &user, &hash, now).await?;
            let challenge = tx.consume_factor_challenge(&tenant, &cookie, now).await?;
            tx.commit().await?;
            Ok::<_, StoreError>([step, code, challenge])
        }
    });
    let mut wins = [0; 3];
    for outcome in join_all(attempts).await {
        for (won, count) in outcome.expect("transaction").iter().zip(&mut wins) {
            *count += usize::from(*won);
        }
    }
    assert_eq!(wins, [1, 1, 1], "step, backup code, challenge");
}

/// Second-factor writes for a tenant that does not exist are refused naming the foreign key, the
/// same name on every backend; deleting a tenant deletes its factors, codes, challenges and known
/// devices.
pub async fn factor_writes_for_an_unknown_tenant_name_the_foreign_key(store: Arc<dyn Store>) {
    let ghost = tenant_fixture("ghost", 9);
    let casper = user_fixture(&ghost, 1, "casper@example.com");
    let t0 = whole_second(&ghost);

    // Each write in its own transaction: on PostgreSQL a failed statement aborts the transaction.
    macro_rules! refused {
        ($constraint:literal, |$tx:ident| $write:expr) => {{
            let mut $tx = store.write().await.expect("write");
            match $write.await {
                Err(StoreError::Conflict { constraint }) => assert_eq!(constraint, $constraint),
                other => panic!("{}: expected a conflict, got {other:?}", $constraint),
            }
        }};
    }
    refused!("second_factors_tenant_id_fkey", |tx| tx
        .insert_second_factor(&factor_fixture(&casper, 1, t0)));
    refused!("backup_codes_tenant_id_fkey", |tx| tx.replace_backup_codes(
        &ghost.id,
        &casper.id,
        &backup_codes(&casper, "ghost-", 2, t0)
    ));
    refused!("factor_challenges_tenant_id_fkey", |tx| tx
        .insert_factor_challenge(&factor_challenge_fixture(
            &casper, "fc_ghost", t0
        )));
    refused!("known_devices_tenant_id_fkey", |tx| tx.insert_known_device(
        &known_device_fixture(&casper, "dev_ghost", t0)
    ));

    let acme = stored_tenant(&store, "acme", 1).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let factor = factor_fixture(&ada, 1, t0);
    let challenge = factor_challenge_fixture(&ada, "fc_acme", t0);
    let device = known_device_fixture(&ada, "dev_acme", t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_second_factor(&factor).await.expect("factor");
    assert!(tx.insert_known_device(&device).await.expect("device"));
    tx.replace_backup_codes(&acme.id, &ada.id, &backup_codes(&ada, "acme-", 3, t0))
        .await
        .expect("codes");
    tx.insert_factor_challenge(&challenge)
        .await
        .expect("challenge");
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    tx.delete_tenant(&acme.id).await.expect("delete tenant");
    tx.commit().await.expect("commit");
    // The same tenant again (same id): nothing of the old one comes back.
    let mut tx = store.write().await.expect("write");
    tx.insert_tenant(&acme).await.expect("tenant again");
    assert_eq!(
        tx.second_factor(&acme.id, &factor.id)
            .await
            .expect("factor"),
        None
    );
    assert_eq!(
        tx.unused_backup_codes(&acme.id, &ada.id)
            .await
            .expect("codes"),
        0
    );
    assert_eq!(
        tx.factor_challenge(&acme.id, &challenge.hash, t0)
            .await
            .expect("challenge"),
        None
    );
    assert_eq!(
        tx.known_device(&acme.id, &ada.id, &device.secret_hash)
            .await
            .expect("device"),
        None
    );
    tx.commit().await.expect("commit");
}

/// The purpose of the deployment's TOTP sealing key, the only one the schema allows.
const TOTP_SEAL: &str = "totp_seal";

/// A wrapped data key of `len` bytes, different for each `seed`, starting with a zero byte and
/// ending with 0xff.
pub fn wrapped_key_fixture(seed: u8, len: usize) -> Vec<u8> {
    let mut bytes: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect();
    if let [first, .., last] = bytes.as_mut_slice() {
        (*first, *last) = (0, 0xff);
    }
    bytes
}

/// When the data key was stored (never read back).
fn data_key_time() -> OffsetDateTime {
    OffsetDateTime::UNIX_EPOCH + Duration::days(20_000) + Duration::microseconds(123_457)
}

/// The deployment's data key is absent at first and after a rolled-back insert; the first insert
/// stores it (true, visible inside the transaction and to later readers, bytes intact); a second
/// insert with other bytes returns false and changes nothing, inside one transaction and across
/// two.
pub async fn factor_data_key_is_stored_once_and_kept(store: Arc<dyn Store>) {
    let now = data_key_time();
    let first = wrapped_key_fixture(1, 60);
    let second = wrapped_key_fixture(2, 60);

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.factor_data_key(TOTP_SEAL).await.expect("fresh store"),
        None,
        "absent at first"
    );
    read.finish().await.expect("finish");

    {
        let mut tx = store.write().await.expect("write");
        assert!(
            tx.insert_factor_data_key(TOTP_SEAL, &second, now)
                .await
                .expect("insert to roll back")
        );
        // dropped here without commit
    }
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.factor_data_key(TOTP_SEAL).await.expect("rolled back"),
        None,
        "a rolled-back insert leaves no key"
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    assert!(
        tx.insert_factor_data_key(TOTP_SEAL, &first, now)
            .await
            .expect("first insert"),
        "the first insert stores the key"
    );
    assert_eq!(
        tx.factor_data_key(TOTP_SEAL).await.expect("own write"),
        Some(first.clone()),
        "visible inside the writing transaction"
    );
    assert!(
        !tx.insert_factor_data_key(TOTP_SEAL, &second, now + Duration::seconds(1))
            .await
            .expect("second insert, same transaction"),
        "a key is stored once"
    );
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.insert_factor_data_key(TOTP_SEAL, &second, now + Duration::seconds(2))
            .await
            .expect("second insert"),
        "the stored key is never replaced"
    );
    assert_eq!(
        tx.factor_data_key(TOTP_SEAL).await.expect("after refusal"),
        Some(first.clone())
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.factor_data_key(TOTP_SEAL).await.expect("read"),
        Some(first.clone()),
        "the first bytes stay, exactly"
    );
    assert_eq!(
        read.factor_data_key("webauthn_seal")
            .await
            .expect("unknown purpose"),
        None
    );
    read.finish().await.expect("finish");
    let mut once = store.read_once().await.expect("read once");
    assert_eq!(
        once.factor_data_key(TOTP_SEAL).await.expect("read once"),
        Some(first)
    );
    once.finish().await.expect("finish");
}

/// A data key of a purpose the schema does not list, or wrapped in fewer than 16 or more than
/// 4096 bytes, is refused by the CHECK constraints on every backend and stores nothing; 16 and
/// 4096 bytes are accepted.
pub async fn factor_data_keys_refuse_unknown_purposes_and_bad_lengths(store: Arc<dyn Store>) {
    let now = data_key_time();

    // Each write in its own transaction: on PostgreSQL a failed statement aborts the transaction.
    let mut tx = store.write().await.expect("write");
    assert_refused_by_check(
        tx.insert_factor_data_key("webauthn_seal", &wrapped_key_fixture(1, 60), now)
            .await,
        "factor_data_keys_purpose_check",
    );
    drop(tx);
    let mut tx = store.write().await.expect("write");
    assert_refused_by_check(
        tx.insert_factor_data_key("", &wrapped_key_fixture(1, 60), now)
            .await,
        "factor_data_keys_purpose_check",
    );
    drop(tx);
    for len in [0, 15, 4097] {
        let mut tx = store.write().await.expect("write");
        assert_refused_by_check(
            tx.insert_factor_data_key(TOTP_SEAL, &wrapped_key_fixture(2, len), now)
                .await,
            "factor_data_keys_wrapped_check",
        );
    }

    let mut read = store.read().await.expect("read");
    for purpose in [TOTP_SEAL, "webauthn_seal", ""] {
        assert_eq!(
            read.factor_data_key(purpose).await.expect("read"),
            None,
            "{purpose:?}: nothing was stored"
        );
    }
    read.finish().await.expect("finish");

    for len in [16, 4096] {
        // Rolled back, so the next length can be stored too.
        let mut tx = store.write().await.expect("write");
        let wrapped = wrapped_key_fixture(3, len);
        assert!(
            tx.insert_factor_data_key(TOTP_SEAL, &wrapped, now)
                .await
                .unwrap_or_else(|e| panic!("{len} bytes: {e:?}"))
        );
        assert_eq!(
            tx.factor_data_key(TOTP_SEAL).await.expect("read"),
            Some(wrapped)
        );
    }
}

/// Ten instances starting at once, each in its own write transaction on its own connection,
/// insert different keys and read the stored one back before committing: exactly one insert
/// wins, and every instance, and every reader afterwards, sees the winner's bytes.
pub async fn racing_factor_data_key_inserts_admit_exactly_one(store: Arc<dyn Store>) {
    let now = data_key_time();
    let racers = (0..10u8).map(|i| {
        let store = store.clone();
        async move {
            let mine = wrapped_key_fixture(10 + i, 60);
            let mut tx = store.write().await?;
            let won = tx
                .insert_factor_data_key(TOTP_SEAL, &mine, now + Duration::milliseconds(i.into()))
                .await?;
            let seen = tx.factor_data_key(TOTP_SEAL).await?;
            tx.commit().await?;
            Ok::<_, StoreError>((won, mine, seen))
        }
    });
    let outcomes: Vec<_> = join_all(racers)
        .await
        .into_iter()
        .map(|outcome| outcome.expect("transaction"))
        .collect();
    let winners: Vec<_> = outcomes.iter().filter(|(won, _, _)| *won).collect();
    assert_eq!(winners.len(), 1, "exactly one insert stores the key");
    let winner = winners[0].1.clone();
    for (won, mine, seen) in &outcomes {
        assert_eq!(
            seen.as_ref(),
            Some(&winner),
            "every instance reads the winner's key (won: {won})"
        );
        assert_eq!(*won, *mine == winner);
    }

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.factor_data_key(TOTP_SEAL).await.expect("read"),
        Some(winner),
        "readers see the one winner"
    );
    read.finish().await.expect("finish");
}

/// A browser `user` first (and last) signed in from at `at`, untrusted, with a user agent with
/// quotes and non-ASCII text; `cookie` is its device cookie value.
pub fn known_device_fixture(user: &User, cookie: &str, at: OffsetDateTime) -> KnownDevice {
    KnownDevice {
        tenant_id: user.tenant_id.clone(),
        user_id: user.id.clone(),
        secret_hash: SecretHash::of(cookie),
        user_agent: Some(format!("Mozilla/5.0 \"{cookie}\" ü")),
        first_seen_at: at,
        last_seen_at: at,
        trusted_until: None,
    }
}

/// The same browser (same cookie hash) as `device`, but of `user`.
fn same_browser_of(device: &KnownDevice, user: &User) -> KnownDevice {
    KnownDevice {
        tenant_id: user.tenant_id.clone(),
        user_id: user.id.clone(),
        ..device.clone()
    }
}

/// Every field of a known device reads back identically, with and without a user agent (one of
/// 256 non-ASCII characters, the most the schema allows) and a trust, inside the writing
/// transaction and after commit. The same browser of another user, or of the same user id in
/// another tenant, is a record of its own, never returned for the first; an unknown hash is
/// nothing. A longer user agent is refused by the schema.
pub async fn known_devices_round_trip_per_user_and_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    // Ada's id in another tenant: no foreign key ties a device to a user.
    let ada_elsewhere = User {
        tenant_id: other.id.clone(),
        ..ada.clone()
    };
    let t0 = whole_second(&acme);

    let bare = KnownDevice {
        user_agent: None,
        ..known_device_fixture(&ada, "dev_bare", t0 + Duration::microseconds(1))
    };
    let full = KnownDevice {
        user_agent: Some("ü".repeat(256)),
        last_seen_at: t0 + Duration::microseconds(86_400_000_001),
        trusted_until: Some(t0 + Duration::days(30) + Duration::microseconds(999_999)),
        ..known_device_fixture(&ada, "dev_full", t0 + Duration::milliseconds(250))
    };
    let bobs = KnownDevice {
        user_agent: Some("Bob's browser".into()),
        first_seen_at: t0 + Duration::seconds(5),
        last_seen_at: t0 + Duration::seconds(6),
        ..same_browser_of(&full, &bob)
    };
    let elsewhere = KnownDevice {
        trusted_until: None,
        first_seen_at: t0 + Duration::seconds(7),
        last_seen_at: t0 + Duration::seconds(7),
        ..same_browser_of(&full, &ada_elsewhere)
    };

    let mut tx = store.write().await.expect("write");
    for device in [&bare, &full, &bobs, &elsewhere] {
        assert!(
            tx.insert_known_device(device).await.expect("insert"),
            "a new browser is stored, even with another user's or tenant's hash"
        );
    }
    assert_eq!(
        tx.known_device(&acme.id, &ada.id, &full.secret_hash)
            .await
            .expect("read own write"),
        Some(full.clone()),
        "visible inside the writing transaction"
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    for device in [&bare, &full, &bobs, &elsewhere] {
        assert_eq!(
            read.known_device(&device.tenant_id, &device.user_id, &device.secret_hash)
                .await
                .expect("read")
                .as_ref(),
            Some(device),
            "every field as written"
        );
    }
    assert_eq!(
        read.known_device(&acme.id, &bob.id, &bare.secret_hash)
            .await
            .expect("another user's hash"),
        None,
        "ada's browser is not bob's"
    );
    assert_eq!(
        read.known_device(&other.id, &ada.id, &bare.secret_hash)
            .await
            .expect("another tenant"),
        None,
        "never in another tenant"
    );
    assert_eq!(
        read.known_device(&acme.id, &ada.id, &SecretHash::of("dev_unknown"))
            .await
            .expect("unknown"),
        None
    );
    read.finish().await.expect("finish");
    let mut once = store.read_once().await.expect("read once");
    assert_eq!(
        once.known_device(&acme.id, &ada.id, &bare.secret_hash)
            .await
            .expect("read once"),
        Some(bare)
    );
    once.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    let too_long = KnownDevice {
        user_agent: Some("ü".repeat(257)),
        ..known_device_fixture(&ada, "dev_too_long", t0)
    };
    assert_refused_by_check(
        tx.insert_known_device(&too_long).await,
        "known_devices_user_agent_check",
    );
}

/// Storing a known browser again returns false and changes nothing, in the same transaction and
/// in a later one; a touch moves `last_seen_at` only, of that user's browser in that tenant
/// only, and is no error for an unknown browser (which it does not create).
pub async fn known_devices_are_stored_once_and_touched(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let t0 = whole_second(&acme);
    let device = KnownDevice {
        trusted_until: Some(t0 + Duration::days(30)),
        ..known_device_fixture(&ada, "dev_once", t0 + Duration::microseconds(3))
    };
    let bobs = same_browser_of(&device, &bob);
    let again = KnownDevice {
        user_agent: None,
        first_seen_at: t0 + Duration::hours(1),
        last_seen_at: t0 + Duration::hours(2),
        trusted_until: None,
        ..device.clone()
    };

    let mut tx = store.write().await.expect("write");
    assert!(tx.insert_known_device(&device).await.expect("first"));
    assert!(tx.insert_known_device(&bobs).await.expect("bob's"));
    assert!(
        !tx.insert_known_device(&again)
            .await
            .expect("again, same transaction"),
        "stored once"
    );
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.insert_known_device(&again).await.expect("again"),
        "known already"
    );
    assert_eq!(
        tx.known_device(&acme.id, &ada.id, &device.secret_hash)
            .await
            .expect("read"),
        Some(device.clone()),
        "the second insert changed nothing"
    );

    let now = t0 + Duration::microseconds(3_600_000_007);
    tx.touch_known_device(&acme.id, &ada.id, &device.secret_hash, now)
        .await
        .expect("touch");
    tx.touch_known_device(
        &other.id,
        &ada.id,
        &device.secret_hash,
        now + Duration::hours(1),
    )
    .await
    .expect("touch in another tenant");
    let unknown = SecretHash::of("dev_unknown");
    tx.touch_known_device(&acme.id, &ada.id, &unknown, now)
        .await
        .expect("touching an unknown browser is no error");
    tx.commit().await.expect("commit");

    let touched = KnownDevice {
        last_seen_at: now,
        ..device.clone()
    };
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.known_device(&acme.id, &ada.id, &device.secret_hash)
            .await
            .expect("read"),
        Some(touched),
        "last_seen_at moved, nothing else"
    );
    assert_eq!(
        read.known_device(&acme.id, &bob.id, &device.secret_hash)
            .await
            .expect("bob's"),
        Some(bobs),
        "bob's record of the same browser is untouched"
    );
    assert_eq!(
        read.known_device(&other.id, &ada.id, &device.secret_hash)
            .await
            .expect("other tenant"),
        None,
        "a touch creates nothing"
    );
    assert_eq!(
        read.known_device(&acme.id, &ada.id, &unknown)
            .await
            .expect("unknown"),
        None,
        "a touch creates nothing"
    );
    read.finish().await.expect("finish");
}

/// Trust is set and cleared on the user's own known browser, and refused (false, nothing
/// written) for an unknown browser, another user's or another tenant's. Forgetting a user's
/// trusted browsers clears only theirs, keeps the browsers known, and counts only those that
/// were trusted.
pub async fn device_trust_is_set_cleared_and_forgotten_per_user(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let ada_elsewhere = User {
        tenant_id: other.id.clone(),
        ..ada.clone()
    };
    let t0 = whole_second(&acme);
    let until = t0 + Duration::days(30) + Duration::microseconds(500_001);
    let laptop = known_device_fixture(&ada, "dev_laptop", t0);
    let phone = known_device_fixture(&ada, "dev_phone", t0 + Duration::seconds(1));
    let kiosk = known_device_fixture(&ada, "dev_kiosk", t0 + Duration::seconds(2));
    let bobs = KnownDevice {
        trusted_until: Some(until),
        ..same_browser_of(&laptop, &bob)
    };
    let elsewhere = KnownDevice {
        trusted_until: Some(until),
        ..same_browser_of(&laptop, &ada_elsewhere)
    };

    let mut tx = store.write().await.expect("write");
    for device in [&laptop, &phone, &kiosk, &bobs, &elsewhere] {
        assert!(tx.insert_known_device(device).await.expect("insert"));
    }
    assert!(
        tx.set_device_trust(&acme.id, &ada.id, &laptop.secret_hash, Some(until))
            .await
            .expect("trust laptop")
    );
    assert!(
        tx.set_device_trust(&acme.id, &ada.id, &phone.secret_hash, Some(until))
            .await
            .expect("trust phone")
    );
    assert!(
        !tx.set_device_trust(
            &acme.id,
            &ada.id,
            &SecretHash::of("dev_unknown"),
            Some(until)
        )
        .await
        .expect("unknown"),
        "not a known browser"
    );
    assert!(
        !tx.set_device_trust(&acme.id, &bob.id, &kiosk.secret_hash, Some(until))
            .await
            .expect("another user's"),
        "ada's kiosk is not bob's"
    );
    assert!(
        !tx.set_device_trust(&other.id, &ada.id, &kiosk.secret_hash, Some(until))
            .await
            .expect("another tenant"),
        "not in another tenant"
    );
    tx.commit().await.expect("commit");

    let trusted = |device: &KnownDevice| KnownDevice {
        trusted_until: Some(until),
        ..device.clone()
    };
    let mut read = store.read().await.expect("read");
    for expected in [
        trusted(&laptop),
        trusted(&phone),
        kiosk.clone(),
        bobs.clone(),
    ] {
        assert_eq!(
            read.known_device(&acme.id, &expected.user_id, &expected.secret_hash)
                .await
                .expect("read"),
            Some(expected),
            "only the user's own browsers gained trust"
        );
    }
    assert_eq!(
        read.known_device(&other.id, &ada.id, &kiosk.secret_hash)
            .await
            .expect("other tenant"),
        None,
        "a refused trust creates nothing"
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    assert!(
        tx.set_device_trust(&acme.id, &ada.id, &phone.secret_hash, None)
            .await
            .expect("clear phone")
    );
    assert!(
        tx.set_device_trust(&acme.id, &ada.id, &kiosk.secret_hash, None)
            .await
            .expect("clear an untrusted browser"),
        "a known browser, even untrusted"
    );
    assert_eq!(
        tx.known_device(&acme.id, &ada.id, &phone.secret_hash)
            .await
            .expect("phone"),
        Some(phone.clone()),
        "cleared"
    );
    assert!(
        tx.set_device_trust(&acme.id, &ada.id, &phone.secret_hash, Some(until))
            .await
            .expect("trust phone again")
    );
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.forget_trusted_devices(&acme.id, &ada.id)
            .await
            .expect("forget"),
        2,
        "laptop and phone were trusted; the kiosk was not"
    );
    for device in [&laptop, &phone, &kiosk] {
        assert_eq!(
            tx.known_device(&acme.id, &ada.id, &device.secret_hash)
                .await
                .expect("read"),
            Some(device.clone()),
            "still known, no longer trusted"
        );
    }
    assert_eq!(
        tx.forget_trusted_devices(&acme.id, &ada.id)
            .await
            .expect("forget again"),
        0,
        "nothing left to forget"
    );
    assert_eq!(
        tx.known_device(&acme.id, &bob.id, &bobs.secret_hash)
            .await
            .expect("bob's"),
        Some(bobs.clone()),
        "another user's trust stays"
    );
    assert_eq!(
        tx.known_device(&other.id, &ada.id, &elsewhere.secret_hash)
            .await
            .expect("other tenant"),
        Some(elsewhere.clone()),
        "another tenant's trust stays"
    );
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.forget_trusted_devices(&other.id, &ada.id)
            .await
            .expect("forget in the other tenant"),
        1
    );
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.known_device(&acme.id, &bob.id, &bobs.secret_hash)
            .await
            .expect("bob's"),
        Some(bobs),
        "the other tenant's forgetting leaves acme alone"
    );
    read.finish().await.expect("finish");
}

/// A login record of `user` for `signed_in_from`: `n` milliseconds after `at`, from `ip`.
fn login_fixture(
    user: &User,
    n: u64,
    at: OffsetDateTime,
    result: LoginResult,
    ip: Option<&str>,
) -> LoginRecord {
    let at = at + Duration::milliseconds(n as i64);
    LoginRecord {
        id: LoginRecordId::generate(&ManualClock::new(at), &SeededRandom::new(n)),
        tenant_id: user.tenant_id.clone(),
        user_id: user.id.clone(),
        occurred_at: at,
        method: LoginMethod::Password,
        result,
        client_ip: ip.map(str::to_owned),
        user_agent: None,
    }
}

/// A user signed in from an address only with a successful sign-in of theirs, in that tenant,
/// from exactly that address: a failed or locked attempt, another user's or another tenant's
/// success, a success without an address or from another address count for nothing. Visible
/// inside the writing transaction.
pub async fn signed_in_from_needs_a_successful_sign_in_from_that_address(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let ada_elsewhere = User {
        tenant_id: other.id.clone(),
        ..ada.clone()
    };
    let t0 = whole_second(&acme);
    let (home, failed, locked, bobs, elsewhere) = (
        "203.0.113.7",
        "198.51.100.1",
        "2001:db8::1",
        "192.0.2.9",
        "192.0.2.50",
    );
    let records = [
        login_fixture(&ada, 1, t0, LoginResult::InvalidCredentials, Some(failed)),
        login_fixture(&ada, 2, t0, LoginResult::Locked, Some(locked)),
        login_fixture(&ada, 3, t0, LoginResult::Success, None),
        login_fixture(&bob, 4, t0, LoginResult::Success, Some(bobs)),
        login_fixture(&ada_elsewhere, 5, t0, LoginResult::Success, Some(elsewhere)),
        login_fixture(&ada, 6, t0, LoginResult::InvalidCredentials, Some(home)),
    ];

    let mut tx = store.write().await.expect("write");
    for record in &records {
        tx.insert_login_record(record).await.expect("record");
    }
    assert!(
        !tx.signed_in_from(&acme.id, &ada.id, home)
            .await
            .expect("only a failure from home"),
        "a failed attempt is no sign-in"
    );
    let success = login_fixture(&ada, 7, t0, LoginResult::Success, Some(home));
    tx.insert_login_record(&success).await.expect("success");
    assert!(
        tx.signed_in_from(&acme.id, &ada.id, home)
            .await
            .expect("own write"),
        "visible inside the writing transaction"
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    for (tenant, user, ip, expected, why) in [
        (&acme, &ada, home, true, "a success from home"),
        (&acme, &ada, failed, false, "a failed attempt"),
        (&acme, &ada, locked, false, "a locked attempt"),
        (&acme, &ada, bobs, false, "bob's address"),
        (&acme, &ada, elsewhere, false, "the other tenant's address"),
        (&acme, &ada, "203.0.113.70", false, "another address"),
        (&acme, &ada, "203.0.113", false, "a prefix of the address"),
        (&acme, &ada, "", false, "no address"),
        (&acme, &bob, home, false, "ada's address for bob"),
        (&acme, &bob, bobs, true, "bob's success"),
        (&other, &ada, home, false, "ada's address in another tenant"),
        (&other, &ada, elsewhere, true, "its success there"),
    ] {
        assert_eq!(
            read.signed_in_from(&tenant.id, &user.id, ip)
                .await
                .expect("signed in from"),
            expected,
            "{why}"
        );
    }
    read.finish().await.expect("finish");
}
