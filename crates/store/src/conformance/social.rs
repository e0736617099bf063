//! Conformance: social sign-in (a tenant's providers, replaced whole but for their creation
//! time, listed by slug, scoped to their tenant and taking their attempts, links and pending
//! links with them when deleted; attempts taken once by their tenant before they expire, and
//! purged once spent or expired; links unique per provider and subject and per person and
//! provider, referencing a provider and a person of their own tenant; pending links read while
//! unexpired, taken once, and purged once expired; everything going with the tenant), with their
//! fixtures.

use super::assert_refused_by_check;
use super::factors::whole_second;
use super::grants::stored_tenant;
use super::users::user_fixture;
use crate::{Store, StoreError};
use futures_util::future::join_all;
use std::sync::Arc;
use svc_domain::{
    InteractionId, ManualClock, PendingSocialLink, ProfileEndpoints, ProviderSlug, SecretHash,
    SeededRandom, SocialAttempt, SocialClientAuth, SocialLink, SocialPreset, SocialProtocol,
    SocialProvider, Tenant, UpstreamMetadata, User, UserId,
};
use time::{Duration, OffsetDateTime};

/// The provider slug `text`.
pub fn provider_slug(text: &str) -> ProviderSlug {
    ProviderSlug::parse(text).unwrap_or_else(|e| panic!("fixture slug {text}: {e}"))
}

/// The provider `slug` of `tenant` configured at `at` (whole microseconds), its kind chosen by
/// `seed`: seeds divisible by three are a GitHub-like OAuth 2.0 server (`client_secret_post`, an
/// addresses endpoint, no scopes), seeds one past a multiple of three an OpenID provider
/// (`client_secret_basic`, a UserInfo endpoint, `iss` in responses, scopes in a non-sorted
/// order), the others Sign in with Apple (its team and key, `form_post`, no UserInfo endpoint).
/// Sealed bytes have zero and high bytes; texts have quotes and non-ASCII characters.
pub fn social_provider_fixture(
    tenant: &Tenant,
    slug_text: &str,
    seed: u64,
    at: OffsetDateTime,
) -> SocialProvider {
    let base = format!("https://{slug_text}{seed}.example.com/ü");
    let sealed = vec![0, seed as u8, 0xff, 0x80, 0];
    let (preset, protocol, client_auth, scopes, form_post) = match seed % 3 {
        0 => (
            SocialPreset::Github,
            SocialProtocol::OAuth2(ProfileEndpoints {
                authorization_endpoint: format!("{base}/login/oauth/authorize?x=\"{seed}\""),
                token_endpoint: format!("{base}/login/oauth/access_token"),
                userinfo_endpoint: format!("{base}/api/user"),
                emails_endpoint: Some(format!("{base}/api/user/emails")),
            }),
            SocialClientAuth::SecretPost {
                sealed_secret: sealed,
            },
            Vec::new(),
            false,
        ),
        1 => (
            SocialPreset::Google,
            SocialProtocol::Oidc(UpstreamMetadata {
                issuer: base.clone(),
                authorization_endpoint: format!("{base}/authorize?x=\"{seed}\""),
                token_endpoint: format!("{base}/token"),
                jwks_uri: format!("{base}/jwks"),
                userinfo_endpoint: Some(format!("{base}/userinfo")),
                iss_parameter: true,
            }),
            SocialClientAuth::SecretBasic {
                sealed_secret: sealed,
            },
            vec!["openid".into(), "profile".into(), "email".into()],
            false,
        ),
        _ => (
            SocialPreset::Apple,
            SocialProtocol::Oidc(UpstreamMetadata {
                issuer: base.clone(),
                authorization_endpoint: format!("{base}/auth/authorize"),
                token_endpoint: format!("{base}/auth/token"),
                jwks_uri: format!("{base}/auth/keys"),
                userinfo_endpoint: None,
                iss_parameter: false,
            }),
            SocialClientAuth::AppleJwt {
                team_id: format!("TEAM{seed:06}"),
                key_id: format!("KEY{seed:07}"),
                sealed_key: sealed,
            },
            vec!["openid".into(), "name".into(), "email".into()],
            true,
        ),
    };
    SocialProvider {
        tenant_id: tenant.id.clone(),
        slug: provider_slug(slug_text),
        preset,
        display_name: format!("Continue with \"{slug_text}\" ü"),
        protocol,
        client_id: format!("svc client {seed}"),
        client_auth,
        scopes,
        form_post,
        enabled: seed % 2 == 1,
        created_at: at,
        updated_at: at + Duration::microseconds(3),
    }
}

/// An unused attempt at the provider `provider` of `tenant` for the browser holding `secret`,
/// started at `at`, valid for ten minutes, continuing an interaction when `seed` is odd.
pub fn social_attempt_fixture(
    tenant: &Tenant,
    provider: &str,
    secret: &str,
    seed: u64,
    at: OffsetDateTime,
) -> SocialAttempt {
    SocialAttempt {
        hash: SecretHash::of(secret),
        tenant_id: tenant.id.clone(),
        provider: provider_slug(provider),
        interaction_id: (seed % 2 == 1)
            .then(|| InteractionId::generate(&ManualClock::new(at), &SeededRandom::new(seed))),
        link_for: None,
        created_at: at,
        expires_at: at + Duration::minutes(10),
        used_at: None,
    }
}

/// The link of `subject` at the provider `provider` to `user`, made at `at`, with an address.
pub fn social_link_fixture(
    provider: &str,
    subject: &str,
    user: &User,
    at: OffsetDateTime,
) -> SocialLink {
    SocialLink {
        tenant_id: user.tenant_id.clone(),
        provider: provider_slug(provider),
        subject: subject.to_owned(),
        user_id: user.id.clone(),
        email: Some(format!("{subject}@{provider}.example.com")),
        created_at: at,
    }
}

/// A link of `subject` at `provider` to `user` waiting in the browser holding `secret`, made at
/// `at`, valid for ten minutes, continuing an interaction when `seed` is odd.
pub fn pending_social_link_fixture(
    provider: &str,
    subject: &str,
    user: &User,
    secret: &str,
    seed: u64,
    at: OffsetDateTime,
) -> PendingSocialLink {
    PendingSocialLink {
        hash: SecretHash::of(secret),
        tenant_id: user.tenant_id.clone(),
        provider: provider_slug(provider),
        subject: subject.to_owned(),
        user_id: user.id.clone(),
        email: user.email.as_str().to_owned(),
        interaction_id: (seed % 2 == 1)
            .then(|| InteractionId::generate(&ManualClock::new(at), &SeededRandom::new(seed))),
        created_at: at,
        expires_at: at + Duration::minutes(10),
    }
}

fn moment(tenant: &Tenant) -> OffsetDateTime {
    tenant.created_at + Duration::days(3) + Duration::microseconds(123_457)
}

/// Stores the providers `(slug, seed)` of `tenant`, configured at [`moment`].
async fn stored_providers(
    store: &Arc<dyn Store>,
    tenant: &Tenant,
    providers: &[(&str, u64)],
) -> Vec<SocialProvider> {
    let at = moment(tenant);
    let providers: Vec<SocialProvider> = providers
        .iter()
        .map(|(slug, seed)| social_provider_fixture(tenant, slug, *seed, at))
        .collect();
    let mut tx = store.write().await.expect("write");
    for provider in &providers {
        tx.put_social_provider(provider).await.expect("provider");
    }
    tx.commit().await.expect("commit");
    providers
}

async fn stored_user(store: &Arc<dyn Store>, tenant: &Tenant, seed: u64, email: &str) -> User {
    let user = user_fixture(tenant, seed, email);
    let mut tx = store.write().await.expect("write");
    tx.insert_user(&user).await.expect("user");
    tx.commit().await.expect("commit");
    user
}

fn assert_conflict<T: std::fmt::Debug>(result: Result<T, StoreError>, constraint: &str) {
    match result {
        Err(StoreError::Conflict { constraint: named }) => assert_eq!(named, constraint),
        other => panic!("{constraint}: expected a conflict, got {other:?}"),
    }
}

/// Every field of a provider of each protocol and client authentication reads back as written
/// (the scopes in their order, none for the OAuth 2.0 one, the sealed bytes exactly), inside the
/// writing transaction and after commit; a tenant's providers are listed by slug. Storing one
/// again replaces every field but `created_at`, even its protocol and client authentication.
/// Another tenant reads and lists nothing and deletes nothing. A tenant that does not exist is
/// the foreign key; an empty sealed secret is refused by the schema. Deleting a provider reports
/// it once.
pub async fn social_providers_round_trip_and_are_replaced_keeping_their_creation(
    store: Arc<dyn Store>,
) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    // Written out of slug order, one of each kind.
    let google = social_provider_fixture(&acme, "google", 1, at);
    let github = social_provider_fixture(&acme, "github", 3, at + Duration::seconds(1));
    let apple = social_provider_fixture(&acme, "apple", 2, at + Duration::seconds(2));

    let mut tx = store.write().await.expect("write");
    for provider in [&google, &github, &apple] {
        tx.put_social_provider(provider).await.expect("provider");
    }
    assert_eq!(
        tx.social_provider(&acme.id, &google.slug)
            .await
            .expect("read"),
        Some(google.clone())
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.social_providers(&acme.id).await.expect("list"),
        [apple.clone(), github.clone(), google.clone()],
        "by slug"
    );
    let stored = read
        .social_provider(&acme.id, &google.slug)
        .await
        .expect("read")
        .expect("stored");
    assert_eq!(stored.scopes, ["openid", "profile", "email"]);
    assert_eq!(
        stored.client_auth,
        SocialClientAuth::SecretBasic {
            sealed_secret: vec![0, 1, 0xff, 0x80, 0]
        }
    );
    match &stored.protocol {
        SocialProtocol::Oidc(m) => {
            assert!(m.iss_parameter && m.userinfo_endpoint.is_some());
            assert_eq!(m.issuer, "https://google1.example.com/ü");
        }
        SocialProtocol::OAuth2(_) => panic!("an OpenID provider"),
    }
    let stored = read
        .social_provider(&acme.id, &github.slug)
        .await
        .expect("read")
        .expect("stored");
    assert!(stored.scopes.is_empty(), "no scopes");
    assert!(matches!(
        stored.protocol,
        SocialProtocol::OAuth2(ProfileEndpoints {
            emails_endpoint: Some(_),
            ..
        })
    ));
    assert_eq!(stored.client_auth.method(), SocialClientAuth::SECRET_POST);
    let stored = read
        .social_provider(&acme.id, &apple.slug)
        .await
        .expect("read")
        .expect("stored");
    assert_eq!(
        stored.client_auth,
        SocialClientAuth::AppleJwt {
            team_id: "TEAM000002".into(),
            key_id: "KEY0000002".into(),
            sealed_key: vec![0, 2, 0xff, 0x80, 0]
        }
    );
    assert!(stored.form_post && !stored.enabled);
    assert_eq!(
        read.social_provider(&other.id, &google.slug)
            .await
            .expect("read"),
        None,
        "another tenant"
    );
    assert_eq!(
        read.social_provider(&acme.id, &provider_slug("gitlab"))
            .await
            .expect("read"),
        None,
        "another slug"
    );
    assert!(
        read.social_providers(&other.id)
            .await
            .expect("list")
            .is_empty(),
        "another tenant lists none"
    );
    read.finish().await.expect("finish");

    // Replaced: every field but the creation time, the protocol and client authentication too.
    let later = at + Duration::hours(1) + Duration::microseconds(11);
    let replacement = SocialProvider {
        created_at: later,
        updated_at: later,
        ..social_provider_fixture(&acme, "google", 6, later)
    };
    let mut tx = store.write().await.expect("write");
    tx.put_social_provider(&replacement).await.expect("replace");
    tx.commit().await.expect("commit");
    let expected = SocialProvider {
        created_at: google.created_at,
        ..replacement.clone()
    };
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.social_provider(&acme.id, &google.slug)
            .await
            .expect("read"),
        Some(expected.clone()),
        "the first creation time stays"
    );
    assert_eq!(
        read.social_providers(&acme.id).await.expect("list"),
        [apple.clone(), github.clone(), expected.clone()]
    );
    read.finish().await.expect("finish");
    // And back to an OpenID provider with Apple's key.
    let mut tx = store.write().await.expect("write");
    let again = social_provider_fixture(&acme, "google", 5, later);
    tx.put_social_provider(&again).await.expect("replace");
    assert_eq!(
        tx.social_provider(&acme.id, &google.slug)
            .await
            .expect("read"),
        Some(SocialProvider {
            created_at: google.created_at,
            ..again
        })
    );
    tx.commit().await.expect("commit");

    // Another tenant deletes nothing.
    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.delete_social_provider(&other.id, &google.slug)
            .await
            .expect("delete")
    );
    tx.commit().await.expect("commit");

    // A tenant that does not exist; an empty sealed secret.
    let mut tx = store.write().await.expect("write");
    let ghost = super::tenant_fixture("ghost", 9);
    assert_conflict(
        tx.put_social_provider(&social_provider_fixture(&ghost, "google", 1, at))
            .await,
        "social_providers_tenant_id_fkey",
    );
    drop(tx);
    let mut tx = store.write().await.expect("write");
    let unsealed = SocialProvider {
        client_auth: SocialClientAuth::SecretBasic {
            sealed_secret: Vec::new(),
        },
        ..social_provider_fixture(&acme, "gitlab", 4, at)
    };
    assert_refused_by_check(
        tx.put_social_provider(&unsealed).await,
        "social_providers_sealed_secret_check",
    );
    drop(tx);

    // Deleting a provider reports it once.
    let mut tx = store.write().await.expect("write");
    assert!(
        tx.delete_social_provider(&acme.id, &github.slug)
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_social_provider(&acme.id, &github.slug)
            .await
            .expect("again")
    );
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.social_providers(&acme.id)
            .await
            .expect("list")
            .into_iter()
            .map(|p| p.slug)
            .collect::<Vec<_>>(),
        [provider_slug("apple"), provider_slug("google")]
    );
    read.finish().await.expect("finish");
}

/// Deleting a provider deletes its links, attempts and pending links, and no other provider's.
pub async fn deleting_a_social_provider_deletes_its_links_attempts_and_pending_links(
    store: Arc<dyn Store>,
) {
    let acme = stored_tenant(&store, "acme", 1).await;
    stored_providers(&store, &acme, &[("google", 1), ("github", 3)]).await;
    let ada = stored_user(&store, &acme, 1, "ada@example.com").await;
    let at = moment(&acme) + Duration::minutes(1);
    let mut tx = store.write().await.expect("write");
    for provider in ["google", "github"] {
        tx.insert_social_link(&social_link_fixture(provider, "ada", &ada, at))
            .await
            .expect("link");
        tx.insert_social_attempt(&social_attempt_fixture(
            &acme,
            provider,
            &format!("attempt {provider}"),
            1,
            at,
        ))
        .await
        .expect("attempt");
        tx.insert_pending_social_link(&pending_social_link_fixture(
            provider,
            "ada",
            &ada,
            &format!("pending {provider}"),
            1,
            at,
        ))
        .await
        .expect("pending");
    }
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert!(
        tx.delete_social_provider(&acme.id, &provider_slug("google"))
            .await
            .expect("delete")
    );
    tx.commit().await.expect("commit");

    let now = at + Duration::seconds(1);
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.social_link(&acme.id, &provider_slug("google"), "ada")
            .await
            .expect("read"),
        None
    );
    assert_eq!(
        tx.social_links_of_user(&acme.id, &ada.id)
            .await
            .expect("list"),
        [social_link_fixture("github", "ada", &ada, at)]
    );
    for (provider, left) in [("google", false), ("github", true)] {
        assert_eq!(
            tx.take_social_attempt(
                &acme.id,
                &SecretHash::of(&format!("attempt {provider}")),
                now
            )
            .await
            .expect("take")
            .is_some(),
            left,
            "{provider}'s attempt"
        );
        assert_eq!(
            tx.pending_social_link(
                &acme.id,
                &SecretHash::of(&format!("pending {provider}")),
                now
            )
            .await
            .expect("read")
            .is_some(),
            left,
            "{provider}'s pending link"
        );
    }
    tx.commit().await.expect("commit");
}

/// An attempt is taken once, by its own tenant, while unused and unexpired at `now` (compared as
/// instants, below one second too), and comes back as stored with `used_at` set to `now`;
/// anything else takes nothing and changes nothing. Racing takes admit exactly one. A provider
/// or a linking person that is not the tenant's is the matching foreign key.
pub async fn social_attempts_are_taken_once_by_their_tenant_before_expiry(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    stored_providers(&store, &acme, &[("google", 1)]).await;
    stored_providers(&store, &other, &[("google", 1)]).await;
    let ada = stored_user(&store, &acme, 1, "ada@example.com").await;
    let eve = stored_user(&store, &other, 2, "eve@example.com").await;
    let t0 = whole_second(&acme);
    // `now` is a quarter second past a whole second.
    let now = t0 + Duration::minutes(10) + Duration::milliseconds(250);
    let live = social_attempt_fixture(&acme, "google", "social_live", 1, t0 + Duration::seconds(1));
    let linking = SocialAttempt {
        link_for: Some(ada.id.clone()),
        ..social_attempt_fixture(
            &acme,
            "google",
            "social_linking",
            2,
            t0 + Duration::seconds(2),
        )
    };
    // Expires at a whole second: its text sorts after that of `now`.
    let expired = social_attempt_fixture(&acme, "google", "social_expired", 3, t0);
    let at_now = SocialAttempt {
        expires_at: now,
        ..social_attempt_fixture(&acme, "google", "social_at_now", 4, t0)
    };
    let just_alive = SocialAttempt {
        expires_at: now + Duration::microseconds(1),
        ..social_attempt_fixture(&acme, "google", "social_just_alive", 5, t0)
    };
    let used = SocialAttempt {
        used_at: Some(t0 + Duration::seconds(3)),
        ..social_attempt_fixture(&acme, "google", "social_used", 6, t0)
    };
    let mut tx = store.write().await.expect("write");
    for a in [&live, &linking, &expired, &at_now, &just_alive, &used] {
        tx.insert_social_attempt(a).await.expect("attempt");
    }
    tx.commit().await.expect("commit");
    assert!(live.interaction_id.is_some() && linking.interaction_id.is_none());

    let mut tx = store.write().await.expect("write");
    for (tenant, attempt, why) in [
        (&other, &live, "another tenant"),
        (&acme, &expired, "expired"),
        (&acme, &at_now, "expiring at now"),
        (&acme, &used, "stored used"),
    ] {
        assert_eq!(
            tx.take_social_attempt(&tenant.id, &attempt.hash, now)
                .await
                .expect("take"),
            None,
            "{why}"
        );
    }
    assert_eq!(
        tx.take_social_attempt(&acme.id, &SecretHash::of("social_unknown"), now)
            .await
            .expect("take"),
        None,
        "unknown"
    );
    for attempt in [&live, &linking, &just_alive] {
        assert_eq!(
            tx.take_social_attempt(&acme.id, &attempt.hash, now)
                .await
                .expect("take"),
            Some(SocialAttempt {
                used_at: Some(now),
                ..attempt.clone()
            })
        );
        assert_eq!(
            tx.take_social_attempt(&acme.id, &attempt.hash, now)
                .await
                .expect("again"),
            None,
            "taken once"
        );
    }
    tx.commit().await.expect("commit");

    // Taken stays taken once committed.
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.take_social_attempt(&acme.id, &live.hash, now)
            .await
            .expect("take"),
        None
    );
    tx.commit().await.expect("commit");

    // Racing takes of one attempt admit exactly one.
    let racing = social_attempt_fixture(
        &acme,
        "google",
        "social_racing",
        7,
        t0 + Duration::minutes(5),
    );
    let mut tx = store.write().await.expect("write");
    tx.insert_social_attempt(&racing).await.expect("attempt");
    tx.commit().await.expect("commit");
    let takes = (0..4).map(|_| {
        let store = store.clone();
        let (tenant, hash) = (acme.id.clone(), racing.hash.clone());
        async move {
            let mut tx = store.write().await?;
            let taken = tx.take_social_attempt(&tenant, &hash, now).await?;
            tx.commit().await?;
            Ok::<_, StoreError>(taken.is_some())
        }
    });
    let won = join_all(takes)
        .await
        .into_iter()
        .map(|r| r.expect("take"))
        .filter(|taken| *taken)
        .count();
    assert_eq!(won, 1, "exactly one take succeeds");

    // A provider the tenant does not have, a tenant that does not exist, a person of another
    // tenant.
    for (attempt, constraint) in [
        (
            social_attempt_fixture(&acme, "github", "social_no_provider", 8, t0),
            "social_attempts_provider_fkey",
        ),
        (
            SocialAttempt {
                tenant_id: super::tenant_fixture("ghost", 9).id,
                ..social_attempt_fixture(&acme, "google", "social_ghost", 8, t0)
            },
            "social_attempts_provider_fkey",
        ),
        (
            SocialAttempt {
                link_for: Some(eve.id.clone()),
                ..social_attempt_fixture(&acme, "google", "social_eve", 8, t0)
            },
            "social_attempts_link_for_fkey",
        ),
    ] {
        let mut tx = store.write().await.expect("write");
        assert_conflict(tx.insert_social_attempt(&attempt).await, constraint);
    }
}

/// The purge deletes spent attempts and attempts and pending links expired at `now` (below one
/// second too), counting them, and keeps live ones, which can still be taken.
pub async fn spent_and_expired_social_attempts_and_pending_links_are_purged(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    stored_providers(&store, &acme, &[("google", 1)]).await;
    let ada = stored_user(&store, &acme, 1, "ada@example.com").await;
    let t0 = whole_second(&acme);
    let now = t0 + Duration::minutes(10) + Duration::milliseconds(250);
    let expired = social_attempt_fixture(&acme, "google", "social_expired", 1, t0);
    let at_now = SocialAttempt {
        expires_at: now,
        ..social_attempt_fixture(&acme, "google", "social_at_now", 2, t0)
    };
    let spent = SocialAttempt {
        used_at: Some(now - Duration::seconds(1)),
        ..social_attempt_fixture(
            &acme,
            "google",
            "social_spent",
            3,
            now - Duration::seconds(2),
        )
    };
    let live = social_attempt_fixture(&acme, "google", "social_live", 4, t0 + Duration::seconds(1));
    let pending_expired =
        pending_social_link_fixture("google", "1", &ada, "pending_expired", 1, t0);
    let pending_at_now = PendingSocialLink {
        expires_at: now,
        ..pending_social_link_fixture("google", "2", &ada, "pending_at_now", 2, t0)
    };
    let pending_live = PendingSocialLink {
        expires_at: now + Duration::microseconds(1),
        ..pending_social_link_fixture("google", "3", &ada, "pending_live", 3, t0)
    };
    let mut tx = store.write().await.expect("write");
    for a in [&expired, &at_now, &spent, &live] {
        tx.insert_social_attempt(a).await.expect("attempt");
    }
    for p in [&pending_expired, &pending_at_now, &pending_live] {
        tx.insert_pending_social_link(p).await.expect("pending");
    }
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_eq!(tx.purge_expired_grants(now).await.expect("purge"), 5);
    assert_eq!(tx.purge_expired_grants(now).await.expect("again"), 0);
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.take_social_attempt(&acme.id, &live.hash, now)
            .await
            .expect("live"),
        Some(SocialAttempt {
            used_at: Some(now),
            ..live
        }),
        "the live attempt stays"
    );
    assert_eq!(
        tx.take_pending_social_link(&acme.id, &pending_live.hash, now)
            .await
            .expect("live"),
        Some(pending_live),
        "the live pending link stays"
    );
    tx.commit().await.expect("commit");
}

/// A link reads back as written, in its tenant only, and a person's links are listed by
/// provider. An upstream account is linked once (even to another person), a person has one
/// account of each provider, and a provider or person that is not the tenant's is the matching
/// foreign key; an empty subject is refused by the schema. A person's link to a provider is
/// deleted once. Everything goes with the tenant.
pub async fn social_links_are_unique_per_subject_and_one_per_provider_per_person(
    store: Arc<dyn Store>,
) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    stored_providers(&store, &acme, &[("google", 1), ("github", 3)]).await;
    stored_providers(&store, &other, &[("google", 1)]).await;
    let ada = stored_user(&store, &acme, 1, "ada@example.com").await;
    let bob = stored_user(&store, &acme, 2, "bob@example.com").await;
    let cy = stored_user(&store, &acme, 3, "cy@example.com").await;
    let eve = stored_user(&store, &other, 4, "eve@example.com").await;
    let at = moment(&acme) + Duration::minutes(1);

    // A subject of 255 characters with quotes and non-ASCII text reads back exactly.
    let long_subject = format!("ü\"{}", "s".repeat(252));
    // Written out of provider order.
    let ada_at_google = social_link_fixture("google", "1001", &ada, at);
    let ada_at_github = social_link_fixture("github", "583231", &ada, at + Duration::seconds(1));
    let bob_at_google = SocialLink {
        email: None,
        ..social_link_fixture("google", &long_subject, &bob, at + Duration::seconds(2))
    };
    let mut tx = store.write().await.expect("write");
    for link in [&ada_at_google, &ada_at_github, &bob_at_google] {
        tx.insert_social_link(link).await.expect("link");
    }
    assert_eq!(
        tx.social_link(&acme.id, &provider_slug("google"), "1001")
            .await
            .expect("read"),
        Some(ada_at_google.clone())
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.social_link(&acme.id, &provider_slug("google"), &long_subject)
            .await
            .expect("read"),
        Some(bob_at_google.clone())
    );
    assert_eq!(
        read.social_links_of_user(&acme.id, &ada.id)
            .await
            .expect("list"),
        [ada_at_github.clone(), ada_at_google.clone()],
        "by provider"
    );
    assert_eq!(
        read.social_links_of_user(&acme.id, &bob.id)
            .await
            .expect("list"),
        std::slice::from_ref(&bob_at_google)
    );
    assert!(
        read.social_links_of_user(&acme.id, &cy.id)
            .await
            .expect("list")
            .is_empty()
    );
    assert!(
        read.social_links_of_user(&other.id, &ada.id)
            .await
            .expect("list")
            .is_empty(),
        "another tenant"
    );
    for (tenant, provider, subject, why) in [
        (&other, "google", "1001", "another tenant"),
        (&acme, "github", "1001", "another provider"),
        (&acme, "google", "1002", "another subject"),
        (&acme, "google", "1001 ", "compared exactly"),
    ] {
        assert_eq!(
            read.social_link(&tenant.id, &provider_slug(provider), subject)
                .await
                .expect("read"),
            None,
            "{why}"
        );
    }
    read.finish().await.expect("finish");

    for (link, constraint) in [
        // The upstream account already linked, to another person.
        (
            social_link_fixture("google", "1001", &cy, at),
            "social_links_pkey",
        ),
        // A second account of the same provider.
        (
            social_link_fixture("google", "1002", &ada, at),
            "social_links_user_provider_key",
        ),
        // A person of another tenant, named with this tenant.
        (
            SocialLink {
                tenant_id: acme.id.clone(),
                ..social_link_fixture("google", "eve", &eve, at)
            },
            "social_links_user_fkey",
        ),
        // A person who does not exist.
        (
            SocialLink {
                user_id: UserId::generate(&ManualClock::new(at), &SeededRandom::new(99)),
                ..social_link_fixture("google", "nobody", &cy, at)
            },
            "social_links_user_fkey",
        ),
        // A provider the tenant does not have.
        (
            social_link_fixture("gitlab", "cy", &cy, at),
            "social_links_provider_fkey",
        ),
    ] {
        let mut tx = store.write().await.expect("write");
        assert_conflict(tx.insert_social_link(&link).await, constraint);
    }
    let mut tx = store.write().await.expect("write");
    assert_refused_by_check(
        tx.insert_social_link(&social_link_fixture("github", "", &cy, at))
            .await,
        "social_links_subject_check",
    );
    drop(tx);

    // A person's link to a provider is deleted once, by their tenant only.
    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.delete_social_link(&other.id, &ada.id, &provider_slug("google"))
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_social_link(&acme.id, &cy.id, &provider_slug("google"))
            .await
            .expect("delete")
    );
    assert!(
        tx.delete_social_link(&acme.id, &ada.id, &provider_slug("google"))
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_social_link(&acme.id, &ada.id, &provider_slug("google"))
            .await
            .expect("again")
    );
    assert_eq!(
        tx.social_links_of_user(&acme.id, &ada.id)
            .await
            .expect("list"),
        std::slice::from_ref(&ada_at_github)
    );
    // The account is free again, for another person too.
    tx.insert_social_link(&social_link_fixture("google", "1001", &cy, at))
        .await
        .expect("relink");
    tx.commit().await.expect("commit");

    // Everything goes with the tenant.
    let mut tx = store.write().await.expect("write");
    tx.insert_social_link(&social_link_fixture("google", "eve", &eve, at))
        .await
        .expect("link");
    tx.insert_social_attempt(&SocialAttempt {
        link_for: Some(eve.id.clone()),
        ..social_attempt_fixture(&other, "google", "social_theirs", 1, at)
    })
    .await
    .expect("attempt");
    tx.insert_pending_social_link(&pending_social_link_fixture(
        "google",
        "eve2",
        &eve,
        "pending_theirs",
        1,
        at,
    ))
    .await
    .expect("pending");
    tx.commit().await.expect("commit");
    let mut tx = store.write().await.expect("write");
    tx.delete_tenant(&other.id).await.expect("delete tenant");
    assert!(
        tx.social_providers(&other.id)
            .await
            .expect("list")
            .is_empty()
    );
    assert_eq!(
        tx.social_link(&other.id, &provider_slug("google"), "eve")
            .await
            .expect("read"),
        None
    );
    assert!(
        tx.social_links_of_user(&other.id, &eve.id)
            .await
            .expect("list")
            .is_empty()
    );
    assert_eq!(
        tx.take_social_attempt(&other.id, &SecretHash::of("social_theirs"), at)
            .await
            .expect("take"),
        None
    );
    assert_eq!(
        tx.take_pending_social_link(&other.id, &SecretHash::of("pending_theirs"), at)
            .await
            .expect("take"),
        None
    );
    // Not acme's.
    assert_eq!(
        tx.social_links_of_user(&acme.id, &ada.id)
            .await
            .expect("list"),
        [ada_at_github]
    );
    tx.commit().await.expect("commit");
}

/// A pending link reads back as written while unexpired at `now` (compared as instants, below
/// one second too), without being spent; it is taken once, by its own tenant, before it expires,
/// and reads as absent afterwards. Racing takes admit exactly one. A provider or person that is
/// not the tenant's is the matching foreign key.
pub async fn pending_social_links_are_read_while_live_and_taken_once(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    stored_providers(&store, &acme, &[("github", 3)]).await;
    let ada = stored_user(&store, &acme, 1, "ada@example.com").await;
    let eve = stored_user(&store, &other, 2, "eve@example.com").await;
    let t0 = whole_second(&acme);
    let now = t0 + Duration::minutes(10) + Duration::milliseconds(250);
    let live = pending_social_link_fixture(
        "github",
        "583231",
        &ada,
        "pending_live",
        1,
        t0 + Duration::seconds(1),
    );
    let plain = pending_social_link_fixture(
        "github",
        "583232",
        &ada,
        "pending_plain",
        2,
        t0 + Duration::seconds(2),
    );
    // Expires at a whole second: its text sorts after that of `now`.
    let expired = pending_social_link_fixture("github", "583233", &ada, "pending_expired", 3, t0);
    let at_now = PendingSocialLink {
        expires_at: now,
        ..pending_social_link_fixture("github", "583234", &ada, "pending_at_now", 4, t0)
    };
    let just_alive = PendingSocialLink {
        expires_at: now + Duration::microseconds(1),
        ..pending_social_link_fixture("github", "583235", &ada, "pending_just_alive", 5, t0)
    };
    let mut tx = store.write().await.expect("write");
    for p in [&live, &plain, &expired, &at_now, &just_alive] {
        tx.insert_pending_social_link(p).await.expect("pending");
    }
    tx.commit().await.expect("commit");
    assert!(live.interaction_id.is_some() && plain.interaction_id.is_none());

    // Read, not spent, while unexpired, by its tenant only.
    let mut read = store.read().await.expect("read");
    for _ in 0..2 {
        for p in [&live, &plain, &just_alive] {
            assert_eq!(
                read.pending_social_link(&acme.id, &p.hash, now)
                    .await
                    .expect("read"),
                Some(p.clone())
            );
        }
    }
    for (tenant, hash, why) in [
        (&other, &live.hash, "another tenant"),
        (&acme, &expired.hash, "expired"),
        (&acme, &at_now.hash, "expiring at now"),
        (&acme, &SecretHash::of("pending_unknown"), "unknown"),
    ] {
        assert_eq!(
            read.pending_social_link(&tenant.id, hash, now)
                .await
                .expect("read"),
            None,
            "{why}"
        );
    }
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    for (tenant, hash, why) in [
        (&other, &live.hash, "another tenant"),
        (&acme, &expired.hash, "expired"),
        (&acme, &at_now.hash, "expiring at now"),
        (&acme, &SecretHash::of("pending_unknown"), "unknown"),
    ] {
        assert_eq!(
            tx.take_pending_social_link(&tenant.id, hash, now)
                .await
                .expect("take"),
            None,
            "{why}"
        );
    }
    for p in [&live, &plain, &just_alive] {
        assert_eq!(
            tx.take_pending_social_link(&acme.id, &p.hash, now)
                .await
                .expect("take"),
            Some(p.clone())
        );
        assert_eq!(
            tx.take_pending_social_link(&acme.id, &p.hash, now)
                .await
                .expect("again"),
            None,
            "taken once"
        );
        assert_eq!(
            tx.pending_social_link(&acme.id, &p.hash, now)
                .await
                .expect("read"),
            None,
            "gone once taken"
        );
    }
    tx.commit().await.expect("commit");

    // Taken stays taken once committed; the expired ones were not taken by trying.
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.pending_social_link(&acme.id, &live.hash, now)
            .await
            .expect("read"),
        None
    );
    assert_eq!(
        read.pending_social_link(&acme.id, &expired.hash, t0)
            .await
            .expect("read"),
        Some(expired.clone()),
        "still there before its expiry"
    );
    read.finish().await.expect("finish");

    // Racing takes of one pending link admit exactly one.
    let racing = pending_social_link_fixture(
        "github",
        "583236",
        &ada,
        "pending_racing",
        7,
        t0 + Duration::minutes(5),
    );
    let mut tx = store.write().await.expect("write");
    tx.insert_pending_social_link(&racing)
        .await
        .expect("pending");
    tx.commit().await.expect("commit");
    let takes = (0..4).map(|_| {
        let store = store.clone();
        let (tenant, hash) = (acme.id.clone(), racing.hash.clone());
        async move {
            let mut tx = store.write().await?;
            let taken = tx.take_pending_social_link(&tenant, &hash, now).await?;
            tx.commit().await?;
            Ok::<_, StoreError>(taken.is_some())
        }
    });
    let won = join_all(takes)
        .await
        .into_iter()
        .map(|r| r.expect("take"))
        .filter(|taken| *taken)
        .count();
    assert_eq!(won, 1, "exactly one take succeeds");

    for (pending, constraint) in [
        (
            pending_social_link_fixture("google", "1", &ada, "pending_no_provider", 8, t0),
            "pending_social_links_provider_fkey",
        ),
        (
            PendingSocialLink {
                tenant_id: acme.id.clone(),
                ..pending_social_link_fixture("github", "2", &eve, "pending_eve", 8, t0)
            },
            "pending_social_links_user_fkey",
        ),
    ] {
        let mut tx = store.write().await.expect("write");
        assert_conflict(tx.insert_pending_social_link(&pending).await, constraint);
    }
    let mut tx = store.write().await.expect("write");
    assert_refused_by_check(
        tx.insert_pending_social_link(&pending_social_link_fixture(
            "github",
            "",
            &ada,
            "pending_empty",
            8,
            t0,
        ))
        .await,
        "pending_social_links_subject_check",
    );
}
