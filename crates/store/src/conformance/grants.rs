//! Conformance: interactions, consents, authorization codes, refresh-token families and revoked
//! access tokens, with the fixtures of all of them.

use super::{session_fixture, tenant_fixture, user_fixture};
use crate::{CodeRedemption, RefreshRotation, RevocationCheck, Store, StoreError};
use std::sync::Arc;
use svc_domain::{
    ApiResourceId, AuthorizationCode, ClientId, CodeBinding, Consent, Interaction, InteractionId,
    ManualClock, OrganizationId, RedirectUri, RefreshFamily, RefreshFamilyId, RefreshToken,
    ScopeSet, SecretHash, SeededRandom, SessionId, Tenant, User,
};
use time::{Duration, OffsetDateTime};

pub(super) async fn stored_tenant(store: &Arc<dyn Store>, slug: &str, seed: u64) -> Tenant {
    let tenant = tenant_fixture(slug, seed);
    let mut tx = store.write().await.expect("write");
    tx.insert_tenant(&tenant).await.expect("insert tenant");
    tx.commit().await.expect("commit");
    tenant
}

/// An instant a day after the tenant fixtures' creation, at whole microseconds.
pub(super) fn base(tenant: &Tenant) -> OffsetDateTime {
    tenant.created_at + Duration::days(1)
}

pub(super) fn client(seed: u64) -> ClientId {
    let at = OffsetDateTime::UNIX_EPOCH + Duration::days(20_000);
    ClientId::generate(&ManualClock::new(at), &SeededRandom::new(seed))
}

fn scopes(s: &str) -> ScopeSet {
    ScopeSet::parse(s).unwrap_or_else(|e| panic!("fixture scopes {s}: {e}"))
}

/// A pending authorization request of `client`, received at `at`, valid for ten minutes.
pub fn interaction_fixture(
    tenant: &Tenant,
    client: &ClientId,
    seed: u64,
    at: OffsetDateTime,
) -> Interaction {
    Interaction {
        id: InteractionId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: tenant.id.clone(),
        client_id: client.clone(),
        request: format!(r#"{{"state":"s\"{seed}","nonce":"ü"}}"#),
        created_at: at,
        expires_at: at + Duration::minutes(10),
    }
}

/// `user`'s consent to `client` for `scope`, given at `at`.
pub fn consent_fixture(user: &User, client: &ClientId, scope: &str, at: OffsetDateTime) -> Consent {
    Consent {
        tenant_id: user.tenant_id.clone(),
        user_id: user.id.clone(),
        client_id: client.clone(),
        scope: scopes(scope),
        subject: format!("pairwise-{}-{}", user.id.as_str(), client.as_str()),
        granted_at: at,
    }
}

/// An unredeemed code for `user` and `client`, issued at `at`, valid for a minute, with every
/// optional field set.
pub fn code_fixture(
    user: &User,
    client: &ClientId,
    session: &SessionId,
    secret: &str,
    at: OffsetDateTime,
) -> AuthorizationCode {
    AuthorizationCode {
        hash: SecretHash::of(secret),
        tenant_id: user.tenant_id.clone(),
        client_id: client.clone(),
        user_id: user.id.clone(),
        session_id: session.clone(),
        binding: CodeBinding::Redirect(
            RedirectUri::parse("https://app.example.com/cb?x=\"caf\u{e9}\"").expect("fixture uri"),
        ),
        scope: scopes("openid profile offline_access"),
        code_challenge: Some("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into()),
        nonce: Some("n-\"0S6_WzA2Mj".into()),
        auth_time: at - Duration::seconds(30),
        acr: Some("urn:example:acr:1".into()),
        amr: vec!["pwd".into()],
        claims: Some(r#"{"userinfo":{"email":{"essential":true}}}"#.into()),
        subject: user.id.as_str().to_owned(),
        organization_id: Some(OrganizationId::from_u128(0x0123_4567_89ab_cdef)),
        resource_id: Some(ApiResourceId::from_u128(0x0fed_cba9_8765_4321)),
        created_at: at,
        expires_at: at + Duration::minutes(1),
        redeemed_at: None,
        issued_family: None,
        issued_access_jti: None,
        issued_access_expires_at: None,
        dpop_jkt: None,
        authorization_details: Some(details_fixture()),
    }
}

/// RAR details as a code or family stores them, with text that needs escaping.
pub fn details_fixture() -> svc_domain::AuthorizationDetails {
    svc_domain::AuthorizationDetails::from_stored(
        r#"[{"type":"payment_initiation","actions":["initiate"],"creditorName":"Café \"A\" <b>&","instructedAmount":{"amount":"1.50","currency":"EUR"}}]"#,
    )
    .expect("fixture details")
}

/// A live refresh family of `user` and `client`, created at `at` for thirty days.
pub fn family_fixture(
    user: &User,
    client: &ClientId,
    seed: u64,
    at: OffsetDateTime,
) -> RefreshFamily {
    RefreshFamily {
        id: RefreshFamilyId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: user.tenant_id.clone(),
        client_id: client.clone(),
        user_id: user.id.clone(),
        session_id: Some(SessionId::generate(
            &ManualClock::new(at),
            &SeededRandom::new(seed + 1_000),
        )),
        scope: scopes("openid offline_access api:read"),
        subject: format!("sub-{seed}"),
        auth_time: at - Duration::seconds(5),
        acr: None,
        amr: vec!["pwd".into(), "otp".into()],
        // Alternating, so both a family with an organization context and one without round-trip.
        organization_id: seed
            .is_multiple_of(2)
            .then(|| OrganizationId::from_u128(u128::from(seed))),
        // Alternating the other way, so every combination of the two round-trips.
        resource_id: (!seed.is_multiple_of(2) || seed.is_multiple_of(4))
            .then(|| ApiResourceId::from_u128(u128::from(seed) + 7)),
        created_at: at,
        expires_at: at + Duration::days(30),
        revoked_at: None,
        revoke_reason: None,
        dpop_jkt: None,
        authorization_details: seed.is_multiple_of(2).then(details_fixture),
    }
}

/// An unrotated token of `family`, issued at `at`, idle for at most a day.
pub fn refresh_token_fixture(
    family: &RefreshFamily,
    secret: &str,
    at: OffsetDateTime,
) -> RefreshToken {
    RefreshToken {
        hash: SecretHash::of(secret),
        family_id: family.id.clone(),
        tenant_id: family.tenant_id.clone(),
        scope: scopes("openid offline_access"),
        created_at: at,
        expires_at: at + Duration::days(1),
        rotated_at: None,
    }
}

/// An interaction is readable until it expires, only in its tenant, and deleted once.
pub async fn interactions_expire_and_are_scoped(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let t0 = base(&acme) + Duration::milliseconds(400);
    let interaction = interaction_fixture(&acme, &client(1), 1, t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_interaction(&interaction).await.expect("insert");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    let id = &interaction.id;
    let before_end = interaction.expires_at - Duration::microseconds(1);
    assert_eq!(
        read.interaction(&acme.id, id, before_end)
            .await
            .expect("live"),
        Some(interaction.clone())
    );
    assert_eq!(
        read.interaction(&acme.id, id, interaction.expires_at)
            .await
            .expect("expired"),
        None,
        "dead from expires_at on"
    );
    assert_eq!(
        read.interaction(&other.id, id, t0).await.expect("other"),
        None
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    assert!(!tx.delete_interaction(&other.id, id).await.expect("other"));
    assert!(tx.delete_interaction(&acme.id, id).await.expect("delete"));
    assert!(!tx.delete_interaction(&acme.id, id).await.expect("again"));
    assert_eq!(tx.interaction(&acme.id, id, t0).await.expect("gone"), None);
    tx.commit().await.expect("commit");
}

/// A consent is created then replaced per (tenant, user, client), found again by the subject the
/// application sees, never from another tenant or application, and withdrawn once.
pub async fn consents_upsert_and_map_subjects_back(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let (app, app2) = (client(1), client(2));
    let t0 = base(&acme);
    let first = consent_fixture(&ada, &app, "openid profile", t0);
    let bobs = consent_fixture(&bob, &app, "openid", t0);
    let mut tx = store.write().await.expect("write");
    tx.upsert_consent(&first).await.expect("insert");
    tx.upsert_consent(&bobs).await.expect("bob");
    tx.commit().await.expect("commit");

    let widened = Consent {
        scope: scopes("openid profile email"),
        subject: "rotated-subject".into(),
        granted_at: t0 + Duration::minutes(5),
        ..first.clone()
    };
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.consent(&acme.id, &ada.id, &app).await.expect("read"),
        Some(first.clone())
    );
    tx.upsert_consent(&widened).await.expect("replace");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.consent(&acme.id, &ada.id, &app).await.expect("read"),
        Some(widened.clone())
    );
    assert_eq!(
        read.consent_by_subject(&acme.id, &app, "rotated-subject")
            .await
            .expect("by subject"),
        Some(widened.clone())
    );
    assert_eq!(
        read.consent_by_subject(&acme.id, &app, &bobs.subject)
            .await
            .expect("bob by subject"),
        Some(bobs.clone())
    );
    assert_eq!(
        read.consent_by_subject(&acme.id, &app, &first.subject)
            .await
            .expect("old subject"),
        None
    );
    assert_eq!(
        read.consent_by_subject(&acme.id, &app2, "rotated-subject")
            .await
            .expect("other application"),
        None
    );
    assert_eq!(
        read.consent_by_subject(&other.id, &app, "rotated-subject")
            .await
            .expect("other tenant"),
        None
    );
    assert_eq!(
        read.consent(&other.id, &ada.id, &app).await.expect("other"),
        None
    );
    assert_eq!(
        read.consent(&acme.id, &ada.id, &app2).await.expect("app2"),
        None
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.delete_consent(&other.id, &ada.id, &app)
            .await
            .expect("other tenant")
    );
    assert!(
        tx.delete_consent(&acme.id, &ada.id, &app)
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_consent(&acme.id, &ada.id, &app)
            .await
            .expect("again")
    );
    assert_eq!(
        tx.consent(&acme.id, &bob.id, &app).await.expect("bob"),
        Some(bobs)
    );
    tx.commit().await.expect("commit");
}

/// The first redemption gets the code (now marked redeemed); later ones see it redeemed, with
/// what the first one issued; another tenant or an unknown hash finds nothing.
pub async fn codes_redeem_once_and_remember_what_they_issued(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let t0 = base(&acme);
    let session = session_fixture(&ada, 1, t0);
    let code = code_fixture(&ada, &client(1), &session.id, "ac_1", t0);
    // Bare, and approved on a device: no redirect URI either.
    let bare = AuthorizationCode {
        binding: CodeBinding::Device,
        code_challenge: None,
        nonce: None,
        acr: None,
        amr: Vec::new(),
        claims: None,
        scope: ScopeSet::default(),
        organization_id: None,
        resource_id: None,
        authorization_details: None,
        ..code_fixture(&ada, &client(1), &session.id, "ac_2", t0)
    };
    let mut tx = store.write().await.expect("write");
    tx.insert_code(&code).await.expect("insert");
    tx.insert_code(&bare).await.expect("insert bare");
    tx.commit().await.expect("commit");

    let now = t0 + Duration::seconds(3);
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.redeem_code(&other.id, &code.hash, now)
            .await
            .expect("other tenant"),
        CodeRedemption::Unknown
    );
    assert_eq!(
        tx.redeem_code(&acme.id, &SecretHash::of("ac_nope"), now)
            .await
            .expect("unknown"),
        CodeRedemption::Unknown
    );
    let redeemed = AuthorizationCode {
        redeemed_at: Some(now),
        ..code.clone()
    };
    assert_eq!(
        tx.redeem_code(&acme.id, &code.hash, now)
            .await
            .expect("first"),
        CodeRedemption::First(redeemed.clone())
    );
    assert_eq!(
        tx.redeem_code(&acme.id, &bare.hash, now)
            .await
            .expect("bare"),
        CodeRedemption::First(AuthorizationCode {
            redeemed_at: Some(now),
            ..bare
        })
    );
    let family = RefreshFamilyId::generate(&ManualClock::new(now), &SeededRandom::new(9));
    let access_expires = now + Duration::minutes(10);
    tx.record_code_issuance(&acme.id, &code.hash, Some(&family), "jti-1", access_expires)
        .await
        .expect("record");
    assert!(matches!(
        tx.record_code_issuance(&other.id, &code.hash, None, "jti-x", access_expires)
            .await,
        Err(StoreError::NotFound)
    ));
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    let again = tx
        .redeem_code(&acme.id, &code.hash, now + Duration::seconds(5))
        .await
        .expect("again");
    assert_eq!(
        again,
        CodeRedemption::Again(AuthorizationCode {
            issued_family: Some(family),
            issued_access_jti: Some("jti-1".into()),
            issued_access_expires_at: Some(access_expires),
            dpop_jkt: None,
            ..redeemed
        }),
        "the first redemption's time stays, and what it issued is known"
    );
    assert_eq!(
        tx.redeem_code(&other.id, &code.hash, now)
            .await
            .expect("other tenant"),
        CodeRedemption::Unknown
    );
    tx.commit().await.expect("commit");
}

/// A refresh token reads back with its family in its tenant only; the first rotation marks it
/// rotated, a second one is reuse; unknown hashes and other tenants find nothing.
pub async fn refresh_tokens_rotate_once_then_report_reuse(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let t0 = base(&acme);
    let family = family_fixture(&ada, &client(1), 1, t0);
    let bare_family = RefreshFamily {
        session_id: None,
        acr: Some("urn:example:acr:2".into()),
        amr: Vec::new(),
        ..family_fixture(&ada, &client(1), 2, t0)
    };
    let token = refresh_token_fixture(&family, "rt_1", t0);
    let successor = refresh_token_fixture(&family, "rt_2", t0 + Duration::hours(1));
    let bare_token = refresh_token_fixture(&bare_family, "rt_3", t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_refresh_family(&family).await.expect("family");
    tx.insert_refresh_family(&bare_family).await.expect("bare");
    tx.insert_refresh_token(&token).await.expect("token");
    tx.insert_refresh_token(&bare_token)
        .await
        .expect("bare token");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.refresh_token(&acme.id, &token.hash)
            .await
            .expect("read"),
        Some((token.clone(), family.clone()))
    );
    assert_eq!(
        read.refresh_token(&acme.id, &bare_token.hash)
            .await
            .expect("bare"),
        Some((bare_token.clone(), bare_family.clone()))
    );
    assert_eq!(
        read.refresh_token(&other.id, &token.hash)
            .await
            .expect("other tenant"),
        None
    );
    read.finish().await.expect("finish");

    let now = t0 + Duration::hours(1);
    let rotated = RefreshToken {
        rotated_at: Some(now),
        ..token.clone()
    };
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.rotate_refresh_token(&other.id, &token.hash, now)
            .await
            .expect("other tenant"),
        RefreshRotation::Unknown
    );
    assert_eq!(
        tx.rotate_refresh_token(&acme.id, &SecretHash::of("rt_nope"), now)
            .await
            .expect("unknown"),
        RefreshRotation::Unknown
    );
    assert_eq!(
        tx.rotate_refresh_token(&acme.id, &token.hash, now)
            .await
            .expect("rotate"),
        RefreshRotation::Rotated(rotated.clone(), family.clone())
    );
    tx.insert_refresh_token(&successor)
        .await
        .expect("successor");
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.rotate_refresh_token(&acme.id, &token.hash, now + Duration::minutes(1))
            .await
            .expect("reuse"),
        RefreshRotation::Reused(rotated, family.clone()),
        "the first rotation's time stays"
    );
    assert!(matches!(
        tx.rotate_refresh_token(&acme.id, &successor.hash, now)
            .await
            .expect("successor"),
        RefreshRotation::Rotated(..)
    ));
    tx.commit().await.expect("commit");

    // A token cannot join another tenant's family.
    let mut tx = store.write().await.expect("write");
    let stray = RefreshToken {
        tenant_id: other.id.clone(),
        ..refresh_token_fixture(&family, "rt_stray", now)
    };
    assert!(matches!(
        tx.insert_refresh_token(&stray).await,
        Err(StoreError::Conflict { .. })
    ));
}

/// Revoking a family reports true once and keeps the first time and reason; revoking a user's
/// families touches only that user's unrevoked ones, in that tenant.
pub async fn refresh_family_revocation_keeps_the_first_reason(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let t0 = base(&acme);
    let families = [
        family_fixture(&ada, &client(1), 1, t0),
        family_fixture(&ada, &client(2), 2, t0),
        family_fixture(&ada, &client(3), 3, t0),
        family_fixture(&bob, &client(1), 4, t0),
    ];
    let token = refresh_token_fixture(&families[0], "rt_1", t0);
    let mut tx = store.write().await.expect("write");
    for family in &families {
        tx.insert_refresh_family(family).await.expect("family");
    }
    tx.insert_refresh_token(&token).await.expect("token");
    tx.commit().await.expect("commit");

    let now = t0 + Duration::hours(2);
    let mut tx = store.write().await.expect("write");
    let first = &families[0].id;
    assert!(
        !tx.revoke_refresh_family(&other.id, first, now, "revoked")
            .await
            .expect("other tenant")
    );
    assert!(
        tx.revoke_refresh_family(&acme.id, first, now, "reuse")
            .await
            .expect("revoke")
    );
    assert!(
        !tx.revoke_refresh_family(&acme.id, first, now + Duration::hours(1), "revoked")
            .await
            .expect("again")
    );
    let (_, family) = tx
        .refresh_token(&acme.id, &token.hash)
        .await
        .expect("read")
        .expect("present");
    assert_eq!(family.revoked_at, Some(now));
    assert_eq!(family.revoke_reason.as_deref(), Some("reuse"));
    tx.commit().await.expect("commit");

    let later = now + Duration::hours(3);
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.revoke_user_refresh_families(&other.id, &ada.id, later, "user_suspended")
            .await
            .expect("other tenant"),
        0
    );
    assert_eq!(
        tx.revoke_user_refresh_families(&acme.id, &ada.id, later, "user_suspended")
            .await
            .expect("ada's"),
        2,
        "the two unrevoked families of ada, not the revoked one, not bob's"
    );
    let (_, family) = tx
        .refresh_token(&acme.id, &token.hash)
        .await
        .expect("read")
        .expect("present");
    assert_eq!(family.revoke_reason.as_deref(), Some("reuse"));
    assert_eq!(
        tx.revoke_user_refresh_families(&acme.id, &ada.id, later, "again")
            .await
            .expect("again"),
        0
    );
    assert!(
        tx.revoke_refresh_family(&acme.id, &families[3].id, later, "revoked")
            .await
            .expect("bob's is still live")
    );
    tx.commit().await.expect("commit");
}

/// A revoked access-token id is remembered per tenant; revoking again is harmless.
pub async fn access_token_revocations_are_per_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let expires = base(&acme) + Duration::minutes(10);
    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.access_token_revoked(&acme.id, "jti-1")
            .await
            .expect("no")
    );
    tx.revoke_access_token(&acme.id, "jti-1", expires)
        .await
        .expect("revoke");
    tx.revoke_access_token(&acme.id, "jti-1", expires - Duration::minutes(1))
        .await
        .expect("idempotent");
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert!(
        read.access_token_revoked(&acme.id, "jti-1")
            .await
            .expect("yes")
    );
    assert!(
        !read
            .access_token_revoked(&other.id, "jti-1")
            .await
            .expect("other tenant")
    );
    assert!(
        !read
            .access_token_revoked(&acme.id, "jti-2")
            .await
            .expect("other jti")
    );
    // What a revocation set loads: the tenant's revocations still in force, the later expiry.
    let at = base(&acme);
    assert_eq!(
        read.access_tokens_revoked(&acme.id, at, 10)
            .await
            .expect("list"),
        vec![("jti-1".to_owned(), expires.unix_timestamp())]
    );
    for (tenant, now) in [(&other.id, at), (&acme.id, expires)] {
        assert!(
            read.access_tokens_revoked(tenant, now, 10)
                .await
                .expect("list")
                .is_empty(),
            "another tenant's, or expired"
        );
    }
    read.finish().await.expect("finish");
    let mut tx = store.write().await.expect("write");
    tx.revoke_access_token(&acme.id, "jti-2", expires)
        .await
        .expect("revoke");
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.access_tokens_revoked(&acme.id, at, 1)
            .await
            .expect("list")
            .len(),
        1,
        "at most the limit"
    );
    read.finish().await.expect("finish");
}

/// A backend's revocation set hears the revocations committed through it, and only those.
pub async fn committed_revocations_reach_the_revocation_set(store: Arc<dyn Store>) {
    let Some(set) = store.revocation_set() else {
        // Only a backend one process owns may read the database on every check instead.
        assert_eq!(store.backend(), crate::Backend::Sqlite);
        return;
    };
    let acme = stored_tenant(&store, "acme", 1).await;
    let at = base(&acme);
    let expires = at + Duration::minutes(10);
    set.listening(std::time::Instant::now() + std::time::Duration::from_secs(60));
    let RevocationCheck::Load(loading) = set.check(&acme.id, "jti-1", at.unix_timestamp()) else {
        panic!("a trusted set loads the tenant first");
    };
    set.loaded(loading, &acme.id, Vec::new());
    // Rolled back: never revoked.
    let mut tx = store.write().await.expect("write");
    tx.revoke_access_token(&acme.id, "jti-1", expires)
        .await
        .expect("revoke");
    drop(tx);
    assert_eq!(
        set.check(&acme.id, "jti-1", at.unix_timestamp()),
        RevocationCheck::Known(false)
    );
    // Committed: known at once, without waiting for the change feed.
    let mut tx = store.write().await.expect("write");
    tx.revoke_access_token(&acme.id, "jti-2", expires)
        .await
        .expect("revoke");
    assert_eq!(
        set.check(&acme.id, "jti-2", at.unix_timestamp()),
        RevocationCheck::Known(false),
        "not before it commits"
    );
    tx.commit().await.expect("commit");
    assert_eq!(
        set.check(&acme.id, "jti-2", at.unix_timestamp()),
        RevocationCheck::Known(true)
    );
    // And the helper every resource server uses answers from it.
    assert!(
        crate::access_token_revoked(store.as_ref(), &acme.id, "jti-2", at)
            .await
            .expect("check")
    );
    set.unheard();
}
