//! Conformance: what keeps the sign-in and grant records consistent across instances and over
//! time: the single-use rules under racing transactions, the purge of dead rows, and foreign keys
//! named the same on every backend.

use super::grants::{base, client, stored_tenant};
use super::{
    ceremony_fixture, code_fixture, consent_fixture, factor_challenge_fixture, family_fixture,
    interaction_fixture, refresh_token_fixture, session_fixture, tenant_fixture, user_fixture,
    user_token_fixture,
};
use crate::{CodeRedemption, RefreshRotation, Store, StoreError};
use futures_util::future::join_all;
use std::sync::Arc;
use svc_domain::{
    CeremonyPurpose, FactorChallenge, RefreshFamily, RefreshToken, Session, UserToken,
    UserTokenPurpose, WebauthnCeremony,
};
use time::Duration;

/// A bounded purge deletes at most its limit of each kind per call, dead rows only, so the
/// janitor works a backlog off in rounds.
pub async fn a_bounded_purge_works_a_backlog_off_in_rounds(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let now = base(&acme);
    let mut tx = store.write().await.expect("write");
    for n in 0..5 {
        tx.revoke_access_token(
            &acme.id,
            &format!("dead-{n}"),
            now - Duration::seconds(n + 1),
        )
        .await
        .expect("dead");
    }
    tx.revoke_access_token(&acme.id, "live", now + Duration::minutes(5))
        .await
        .expect("live");
    tx.commit().await.expect("commit");
    let mut rounds = Vec::new();
    loop {
        let mut tx = store.write().await.expect("write");
        let n = tx
            .purge_expired_grants_at_most(now, 2)
            .await
            .expect("purge");
        tx.commit().await.expect("commit");
        rounds.push(n);
        if n == 0 {
            break;
        }
    }
    assert_eq!(rounds, [2, 2, 1, 0]);
    let mut tx = store.read().await.expect("read");
    assert!(
        tx.access_token_revoked(&acme.id, "live")
            .await
            .expect("read")
    );
    assert!(
        !tx.access_token_revoked(&acme.id, "dead-0")
            .await
            .expect("read")
    );
    tx.finish().await.expect("finish");
}

/// The purge deletes exactly the rows past any use (counting them) and keeps live ones and the
/// dead ones still needed for replay detection; a second purge finds nothing.
pub async fn purge_expired_grants_removes_dead_rows_and_keeps_live_ones(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let now = base(&acme) + Duration::days(40);
    let long_ago = now - Duration::days(3);
    let recently = now - Duration::hours(2);
    let app = client(1);

    // Interactions: one expired, one live.
    let dead_interaction = interaction_fixture(&acme, &app, 1, now - Duration::hours(1));
    let live_interaction = interaction_fixture(&acme, &app, 2, now - Duration::minutes(1));
    // Codes: expired more than a day ago (dead), expired an hour ago (kept for replays).
    let session = session_fixture(&ada, 1, long_ago);
    let dead_code = code_fixture(&ada, &app, &session.id, "ac_dead", long_ago);
    let kept_code = code_fixture(&ada, &app, &session.id, "ac_kept", now - Duration::hours(1));
    // Families: expired long ago (2 tokens), revoked long ago (1 token), revoked recently, live.
    let expired_family = RefreshFamily {
        expires_at: long_ago,
        ..family_fixture(&ada, &app, 1, now - Duration::days(50))
    };
    let revoked_family = RefreshFamily {
        revoked_at: Some(long_ago),
        revoke_reason: Some("reuse".into()),
        dpop_jkt: None,
        ..family_fixture(&ada, &app, 2, now - Duration::days(10))
    };
    let recently_revoked = RefreshFamily {
        revoked_at: Some(recently),
        revoke_reason: Some("revoked".into()),
        dpop_jkt: None,
        ..family_fixture(&ada, &app, 3, now - Duration::days(10))
    };
    let live_family = family_fixture(&ada, &app, 4, now - Duration::days(10));
    let dead_tokens = [
        refresh_token_fixture(&expired_family, "rt_e1", now - Duration::days(50)),
        refresh_token_fixture(&expired_family, "rt_e2", now - Duration::days(49)),
        refresh_token_fixture(&revoked_family, "rt_r1", now - Duration::days(10)),
    ];
    let kept_tokens = [
        refresh_token_fixture(&recently_revoked, "rt_k1", now - Duration::days(10)),
        refresh_token_fixture(&live_family, "rt_l1", now - Duration::hours(3)),
    ];
    // Sessions: expired long ago, revoked long ago, expired recently (kept), live.
    let dead_sessions = [
        Session {
            expires_at: long_ago,
            ..session_fixture(&ada, 11, now - Duration::days(4))
        },
        Session {
            revoked_at: Some(long_ago),
            ..session_fixture(&ada, 12, long_ago - Duration::hours(1))
        },
    ];
    let kept_sessions = [
        Session {
            expires_at: recently,
            ..session_fixture(&ada, 13, recently - Duration::hours(8))
        },
        session_fixture(&ada, 14, now - Duration::hours(1)),
    ];
    // Link tokens: used, expired, live.
    let used_token = UserToken {
        used_at: Some(now - Duration::minutes(5)),
        ..user_token_fixture(&ada, "ut_used", UserTokenPurpose::VerifyEmail, now)
    };
    let expired_token = user_token_fixture(
        &ada,
        "ut_expired",
        UserTokenPurpose::ResetPassword,
        now - Duration::hours(1),
    );
    let live_token = user_token_fixture(&ada, "ut_live", UserTokenPurpose::ResetPassword, now);
    // Second-factor challenges: used, expired, live.
    let used_challenge = FactorChallenge {
        used_at: Some(now - Duration::minutes(1)),
        ..factor_challenge_fixture(&ada, "fc_used", now - Duration::minutes(2))
    };
    let expired_challenge = factor_challenge_fixture(&ada, "fc_expired", now - Duration::hours(1));
    let live_challenge = factor_challenge_fixture(&ada, "fc_live", now - Duration::minutes(1));
    // WebAuthn ceremonies: spent, expired, live.
    let spent_ceremony = WebauthnCeremony {
        used_at: Some(now - Duration::minutes(1)),
        ..ceremony_fixture(
            &acme,
            Some(&ada),
            "wc_spent",
            CeremonyPurpose::SecurityKeyVerification,
            now - Duration::minutes(2),
        )
    };
    let expired_ceremony = ceremony_fixture(
        &acme,
        None,
        "wc_expired",
        CeremonyPurpose::PasskeySignIn,
        now - Duration::hours(1),
    );
    let live_ceremony = ceremony_fixture(
        &acme,
        None,
        "wc_live",
        CeremonyPurpose::PasskeySignIn,
        now - Duration::minutes(1),
    );

    let mut tx = store.write().await.expect("write");
    tx.insert_user(&ada).await.expect("user");
    for interaction in [&dead_interaction, &live_interaction] {
        tx.insert_interaction(interaction)
            .await
            .expect("interaction");
    }
    for code in [&dead_code, &kept_code] {
        tx.insert_code(code).await.expect("code");
    }
    for family in [
        &expired_family,
        &revoked_family,
        &recently_revoked,
        &live_family,
    ] {
        tx.insert_refresh_family(family).await.expect("family");
    }
    for token in dead_tokens.iter().chain(&kept_tokens) {
        tx.insert_refresh_token(token).await.expect("refresh token");
    }
    for s in dead_sessions.iter().chain(&kept_sessions) {
        tx.insert_session(s).await.expect("session");
    }
    for token in [&used_token, &expired_token, &live_token] {
        tx.insert_user_token(token).await.expect("user token");
    }
    for challenge in [&used_challenge, &expired_challenge, &live_challenge] {
        tx.insert_factor_challenge(challenge)
            .await
            .expect("challenge");
    }
    for ceremony in [&spent_ceremony, &expired_ceremony, &live_ceremony] {
        tx.insert_webauthn_ceremony(ceremony)
            .await
            .expect("ceremony");
    }
    tx.revoke_access_token(&acme.id, "jti-dead", now - Duration::seconds(1))
        .await
        .expect("dead revocation");
    tx.revoke_access_token(&acme.id, "jti-live", now + Duration::minutes(5))
        .await
        .expect("live revocation");
    tx.hit_counter("dead", now - Duration::hours(1), Duration::minutes(15))
        .await
        .expect("dead counter");
    tx.hit_counter("live", now - Duration::minutes(1), Duration::minutes(15))
        .await
        .expect("live counter");
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    // 1 interaction + 1 code + 2 families + 3 refresh tokens + 2 sessions + 2 link tokens
    // + 1 revocation + 1 counter + 2 second-factor challenges + 2 WebAuthn ceremonies.
    assert_eq!(tx.purge_expired_grants(now).await.expect("purge"), 17);
    assert_eq!(tx.purge_expired_grants(now).await.expect("again"), 0);
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.interaction(&acme.id, &live_interaction.id, now)
            .await
            .expect("live interaction"),
        Some(live_interaction)
    );
    assert_eq!(
        tx.redeem_code(&acme.id, &dead_code.hash, now)
            .await
            .expect("dead code"),
        CodeRedemption::Unknown
    );
    assert!(matches!(
        tx.redeem_code(&acme.id, &kept_code.hash, now)
            .await
            .expect("kept code"),
        CodeRedemption::First(_)
    ));
    for token in &dead_tokens {
        assert_eq!(
            tx.refresh_token(&acme.id, &token.hash)
                .await
                .expect("dead token"),
            None
        );
    }
    for token in &kept_tokens {
        assert!(
            tx.refresh_token(&acme.id, &token.hash)
                .await
                .expect("kept token")
                .is_some()
        );
    }
    for s in &dead_sessions {
        assert_eq!(tx.session(&acme.id, &s.id).await.expect("dead"), None);
    }
    for s in &kept_sessions {
        assert!(tx.session(&acme.id, &s.id).await.expect("kept").is_some());
    }
    assert!(
        !tx.access_token_revoked(&acme.id, "jti-dead")
            .await
            .expect("dead revocation")
    );
    assert!(
        tx.access_token_revoked(&acme.id, "jti-live")
            .await
            .expect("live revocation")
    );
    assert!(
        tx.factor_challenge(&acme.id, &live_challenge.hash, now)
            .await
            .expect("live challenge")
            .is_some()
    );
    assert!(
        tx.take_webauthn_ceremony(&acme.id, &live_ceremony.hash, live_ceremony.purpose, now)
            .await
            .expect("live ceremony")
            .is_some()
    );
    assert!(
        tx.consume_user_token(
            &acme.id,
            &live_token.hash,
            UserTokenPurpose::ResetPassword,
            now
        )
        .await
        .expect("live link")
        .is_some()
    );
    assert!(
        tx.counter("live", now)
            .await
            .expect("live counter")
            .is_some()
    );
    tx.commit().await.expect("commit");
}

/// Twenty transactions race to redeem one code, each on its own connection: exactly one gets
/// `First`, every other one `Again` (what keeps several instances on one database correct).
pub async fn racing_code_redemptions_admit_exactly_one(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let t0 = base(&acme);
    let session = session_fixture(&ada, 1, t0);
    let code = code_fixture(&ada, &client(1), &session.id, "ac_race", t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_code(&code).await.expect("insert");
    tx.commit().await.expect("commit");

    let attempts = (0..20i64).map(|i| {
        let store = store.clone();
        let (tenant, hash) = (acme.id.clone(), code.hash.clone());
        async move {
            let mut tx = store.write().await?;
            let outcome = tx
                .redeem_code(&tenant, &hash, t0 + Duration::milliseconds(i))
                .await?;
            tx.commit().await?;
            Ok::<_, StoreError>(outcome)
        }
    });
    let mut firsts = 0;
    for outcome in join_all(attempts).await {
        match outcome.expect("transaction") {
            CodeRedemption::First(_) => firsts += 1,
            CodeRedemption::Again(again) => assert!(again.redeemed_at.is_some()),
            CodeRedemption::Unknown => panic!("the code exists"),
        }
    }
    assert_eq!(firsts, 1);
}

/// Twenty transactions race to rotate one refresh token: exactly one gets `Rotated`, every
/// other one `Reused`.
pub async fn racing_refresh_rotations_admit_exactly_one(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let t0 = base(&acme);
    let family = family_fixture(&ada, &client(1), 1, t0);
    let token = refresh_token_fixture(&family, "rt_race", t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_refresh_family(&family).await.expect("family");
    tx.insert_refresh_token(&token).await.expect("token");
    tx.commit().await.expect("commit");

    let attempts = (0..20i64).map(|i| {
        let store = store.clone();
        let (tenant, hash) = (acme.id.clone(), token.hash.clone());
        async move {
            let mut tx = store.write().await?;
            let outcome = tx
                .rotate_refresh_token(&tenant, &hash, t0 + Duration::milliseconds(i))
                .await?;
            tx.commit().await?;
            Ok::<_, StoreError>(outcome)
        }
    });
    let mut rotations = 0;
    for outcome in join_all(attempts).await {
        match outcome.expect("transaction") {
            RefreshRotation::Rotated(..) => rotations += 1,
            RefreshRotation::Reused(reused, _) => assert!(reused.rotated_at.is_some()),
            RefreshRotation::Unknown => panic!("the token exists"),
        }
    }
    assert_eq!(rotations, 1);
}

/// Writes for a tenant that does not exist are refused naming the foreign key, the same name on
/// every backend; so is a refresh token of an unknown family.
pub async fn writes_for_an_unknown_tenant_name_the_foreign_key(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let ghost = tenant_fixture("ghost", 9);
    let ada = user_fixture(&ghost, 1, "ada@example.com");
    let t0 = base(&ghost);
    let session = session_fixture(&ada, 1, t0);
    let family = family_fixture(&ada, &client(1), 1, t0);
    let orphan = RefreshToken {
        tenant_id: acme.id.clone(),
        ..refresh_token_fixture(&family, "rt", t0)
    };

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
    refused!("users_tenant_id_fkey", |tx| tx.insert_user(&ada));
    refused!("sessions_tenant_id_fkey", |tx| tx.insert_session(&session));
    refused!("user_tokens_tenant_id_fkey", |tx| tx.insert_user_token(
        &user_token_fixture(&ada, "ut", UserTokenPurpose::Invitation, t0)
    ));
    refused!("interactions_tenant_id_fkey", |tx| tx.insert_interaction(
        &interaction_fixture(&ghost, &client(1), 1, t0)
    ));
    refused!("consents_tenant_id_fkey", |tx| tx
        .upsert_consent(&consent_fixture(&ada, &client(1), "openid", t0)));
    refused!("authorization_codes_tenant_id_fkey", |tx| tx.insert_code(
        &code_fixture(&ada, &client(1), &session.id, "ac", t0)
    ));
    refused!("refresh_families_tenant_id_fkey", |tx| tx
        .insert_refresh_family(&family));
    refused!("revoked_access_tokens_tenant_id_fkey", |tx| tx
        .revoke_access_token(&ghost.id, "jti", t0));
    refused!("refresh_tokens_family_id_fkey", |tx| tx
        .insert_refresh_token(&orphan));
}
