//! Conformance: enterprise single sign-on (an organization's connection, replaced whole but for
//! its creation time, scoped to its tenant and organization and going with the organization;
//! attempts taken once by their tenant before they expire, and purged once spent or expired;
//! links unique per organization and subject, referencing a person and an organization of their
//! own tenant, going with the connection, the organization and the tenant), with their fixtures.

use super::assert_refused_by_check;
use super::factors::whole_second;
use super::grants::stored_tenant;
use super::organizations::organization_fixture;
use super::users::user_fixture;
use crate::{Store, StoreError};
use futures_util::future::join_all;
use std::sync::Arc;
use svc_domain::{
    InteractionId, ManualClock, Organization, SecretHash, SeededRandom, SsoAttempt, SsoClientAuth,
    SsoConnection, SsoLink, Tenant, UpstreamMetadata, User,
};
use time::{Duration, OffsetDateTime};

/// The connection of `org` configured at `at` (whole microseconds): endpoints under an issuer
/// derived from `seed`, scopes in a non-sorted order, a sealed secret with zero and high bytes.
/// Odd seeds are enforced and have the provider send `iss`; seeds divisible by three use
/// `private_key_jwt` (no secret).
pub fn sso_connection_fixture(org: &Organization, seed: u64, at: OffsetDateTime) -> SsoConnection {
    let issuer = format!("https://idp{seed}.example.com/tenants/ü");
    SsoConnection {
        tenant_id: org.tenant_id.clone(),
        organization_id: org.id.clone(),
        provider: UpstreamMetadata {
            authorization_endpoint: format!("{issuer}/authorize?x=\"{seed}\""),
            token_endpoint: format!("{issuer}/token"),
            jwks_uri: format!("{issuer}/jwks"),
            userinfo_endpoint: seed.is_multiple_of(2).then(|| format!("{issuer}/userinfo")),
            iss_parameter: seed % 2 == 1,
            issuer,
        },
        client_id: format!("svc client {seed}"),
        client_auth: if seed.is_multiple_of(3) {
            SsoClientAuth::PrivateKeyJwt
        } else {
            SsoClientAuth::SecretBasic {
                sealed_secret: vec![0, seed as u8, 0xff, 0x80, 0],
            }
        },
        scopes: vec![
            "openid".into(),
            "profile".into(),
            "email".into(),
            "groups".into(),
        ],
        enforced: seed % 2 == 1,
        created_at: at,
        updated_at: at + Duration::microseconds(3),
    }
}

/// An unused attempt of `org` for the browser holding `secret`, started at `at`, valid for ten
/// minutes, continuing an interaction when `seed` is odd.
pub fn sso_attempt_fixture(
    org: &Organization,
    secret: &str,
    seed: u64,
    at: OffsetDateTime,
) -> SsoAttempt {
    SsoAttempt {
        hash: SecretHash::of(secret),
        tenant_id: org.tenant_id.clone(),
        organization_id: org.id.clone(),
        interaction_id: (seed % 2 == 1)
            .then(|| InteractionId::generate(&ManualClock::new(at), &SeededRandom::new(seed))),
        created_at: at,
        expires_at: at + Duration::minutes(10),
        used_at: None,
    }
}

/// The link of `subject` at `org`'s provider to `user`, made at `at`.
pub fn sso_link_fixture(
    org: &Organization,
    subject: &str,
    user: &User,
    at: OffsetDateTime,
) -> SsoLink {
    SsoLink {
        tenant_id: org.tenant_id.clone(),
        organization_id: org.id.clone(),
        subject: subject.to_owned(),
        user_id: user.id.clone(),
        created_at: at,
    }
}

fn moment(tenant: &Tenant) -> OffsetDateTime {
    tenant.created_at + Duration::days(3) + Duration::microseconds(123_457)
}

async fn stored_orgs(store: &Arc<dyn Store>, tenant: &Tenant, slugs: &[&str]) -> Vec<Organization> {
    let at = moment(tenant);
    let orgs: Vec<Organization> = slugs
        .iter()
        .enumerate()
        .map(|(i, slug)| {
            organization_fixture(tenant, i as u64 + 1, slug, at + Duration::seconds(i as i64))
        })
        .collect();
    let mut tx = store.write().await.expect("write");
    for org in &orgs {
        tx.insert_organization(org).await.expect("organization");
    }
    tx.commit().await.expect("commit");
    orgs
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

/// Every field of a connection reads back as written (the scopes in their order, the sealed
/// bytes exactly), inside the writing transaction and after commit. Storing it again replaces
/// every field but `created_at`. Another organization of the tenant and another tenant read
/// nothing, and another tenant's delete deletes nothing. An organization that is not the
/// tenant's is the foreign key; no scopes and an empty sealed secret are refused by the schema.
/// Deleting the organization deletes its connection.
pub async fn sso_connections_round_trip_and_are_replaced_keeping_their_creation(
    store: Arc<dyn Store>,
) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let orgs = stored_orgs(&store, &acme, &["globex", "hooli"]).await;
    let (globex, hooli) = (&orgs[0], &orgs[1]);
    let foreign = stored_orgs(&store, &other, &["initech"]).await;
    let at = moment(&acme) + Duration::minutes(1);
    let first = sso_connection_fixture(globex, 1, at);
    let second = sso_connection_fixture(hooli, 2, at + Duration::seconds(1));

    let mut tx = store.write().await.expect("write");
    tx.put_sso_connection(&first).await.expect("first");
    tx.put_sso_connection(&second).await.expect("second");
    assert_eq!(
        tx.sso_connection(&acme.id, &globex.id).await.expect("read"),
        Some(first.clone())
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    let stored = read
        .sso_connection(&acme.id, &globex.id)
        .await
        .expect("read")
        .expect("stored");
    assert_eq!(stored, first);
    assert_eq!(stored.scopes, ["openid", "profile", "email", "groups"]);
    assert_eq!(
        stored.client_auth,
        SsoClientAuth::SecretBasic {
            sealed_secret: vec![0, 1, 0xff, 0x80, 0]
        }
    );
    assert!(stored.enforced && stored.provider.iss_parameter);
    assert_eq!(
        read.sso_connection(&acme.id, &hooli.id)
            .await
            .expect("read"),
        Some(second.clone())
    );
    assert_eq!(
        read.sso_connection(&other.id, &globex.id)
            .await
            .expect("read"),
        None,
        "another tenant"
    );
    assert_eq!(
        read.sso_connection(&acme.id, &foreign[0].id)
            .await
            .expect("read"),
        None,
        "an organization of another tenant"
    );
    read.finish().await.expect("finish");

    // Replaced: every field but the creation time.
    let later = at + Duration::hours(1) + Duration::microseconds(11);
    let replacement = SsoConnection {
        provider: UpstreamMetadata {
            issuer: "https://login.example.org".into(),
            authorization_endpoint: "https://login.example.org/oauth2/authorize".into(),
            token_endpoint: "https://login.example.org/oauth2/token".into(),
            jwks_uri: "https://login.example.org/keys".into(),
            userinfo_endpoint: None,
            iss_parameter: false,
        },
        client_id: "another client".into(),
        client_auth: SsoClientAuth::PrivateKeyJwt,
        scopes: vec!["profile".into(), "openid".into()],
        enforced: false,
        created_at: later,
        updated_at: later,
        ..first.clone()
    };
    let mut tx = store.write().await.expect("write");
    tx.put_sso_connection(&replacement).await.expect("replace");
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.sso_connection(&acme.id, &globex.id)
            .await
            .expect("read"),
        Some(SsoConnection {
            created_at: first.created_at,
            ..replacement.clone()
        }),
        "the first creation time stays"
    );
    read.finish().await.expect("finish");

    // Another tenant deletes nothing; nor does an organization without a connection.
    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.delete_sso_connection(&other.id, &globex.id)
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_sso_connection(&other.id, &foreign[0].id)
            .await
            .expect("delete")
    );
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert!(
        read.sso_connection(&acme.id, &globex.id)
            .await
            .expect("read")
            .is_some()
    );
    read.finish().await.expect("finish");

    // An organization of another tenant, named with this tenant: no such organization here.
    let planted = SsoConnection {
        organization_id: foreign[0].id.clone(),
        ..sso_connection_fixture(globex, 3, at)
    };
    let mut tx = store.write().await.expect("write");
    assert_conflict(
        tx.put_sso_connection(&planted).await,
        "sso_connections_organization_fkey",
    );
    drop(tx);
    let mut tx = store.write().await.expect("write");
    let unscoped = SsoConnection {
        scopes: Vec::new(),
        ..sso_connection_fixture(hooli, 4, at)
    };
    assert_refused_by_check(
        tx.put_sso_connection(&unscoped).await,
        "sso_connections_scopes_check",
    );
    drop(tx);
    let mut tx = store.write().await.expect("write");
    let unsealed = SsoConnection {
        client_auth: SsoClientAuth::SecretBasic {
            sealed_secret: Vec::new(),
        },
        ..sso_connection_fixture(hooli, 5, at)
    };
    assert_refused_by_check(
        tx.put_sso_connection(&unsealed).await,
        "sso_connections_sealed_secret_check",
    );
    drop(tx);

    // Deleting the connection reports it once.
    let mut tx = store.write().await.expect("write");
    assert!(
        tx.delete_sso_connection(&acme.id, &hooli.id)
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_sso_connection(&acme.id, &hooli.id)
            .await
            .expect("again")
    );
    tx.commit().await.expect("commit");

    // The connection goes with its organization.
    let mut tx = store.write().await.expect("write");
    assert!(
        tx.delete_organization(&acme.id, &globex.id)
            .await
            .expect("delete organization")
    );
    assert_eq!(
        tx.sso_connection(&acme.id, &globex.id).await.expect("read"),
        None
    );
    tx.commit().await.expect("commit");
}

/// An attempt is taken once, by its own tenant, while unused and unexpired at `now` (compared as
/// instants, below one second too), and comes back as stored with `used_at` set to `now`;
/// anything else takes nothing and changes nothing. Racing takes admit exactly one.
pub async fn sso_attempts_are_taken_once_by_their_tenant_before_expiry(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let orgs = stored_orgs(&store, &acme, &["globex"]).await;
    let globex = &orgs[0];
    let t0 = whole_second(&acme);
    // `now` is a quarter second past a whole second.
    let now = t0 + Duration::minutes(10) + Duration::milliseconds(250);
    let live = sso_attempt_fixture(globex, "sso_live", 1, t0 + Duration::seconds(1));
    let plain = sso_attempt_fixture(globex, "sso_plain", 2, t0 + Duration::seconds(2));
    // Expires at a whole second: its text sorts after that of `now`.
    let expired = sso_attempt_fixture(globex, "sso_expired", 3, t0);
    let at_now = SsoAttempt {
        expires_at: now,
        ..sso_attempt_fixture(globex, "sso_at_now", 4, t0)
    };
    let just_alive = SsoAttempt {
        expires_at: now + Duration::microseconds(1),
        ..sso_attempt_fixture(globex, "sso_just_alive", 5, t0)
    };
    let used = SsoAttempt {
        used_at: Some(t0 + Duration::seconds(3)),
        ..sso_attempt_fixture(globex, "sso_used", 6, t0)
    };
    let mut tx = store.write().await.expect("write");
    for a in [&live, &plain, &expired, &at_now, &just_alive, &used] {
        tx.insert_sso_attempt(a).await.expect("attempt");
    }
    tx.commit().await.expect("commit");
    assert!(live.interaction_id.is_some() && plain.interaction_id.is_none());

    let mut tx = store.write().await.expect("write");
    for (tenant, attempt, why) in [
        (&other, &live, "another tenant"),
        (&acme, &expired, "expired"),
        (&acme, &at_now, "expiring at now"),
        (&acme, &used, "stored used"),
    ] {
        assert_eq!(
            tx.take_sso_attempt(&tenant.id, &attempt.hash, now)
                .await
                .expect("take"),
            None,
            "{why}"
        );
    }
    assert_eq!(
        tx.take_sso_attempt(&acme.id, &SecretHash::of("sso_unknown"), now)
            .await
            .expect("take"),
        None,
        "unknown"
    );
    for attempt in [&live, &plain, &just_alive] {
        assert_eq!(
            tx.take_sso_attempt(&acme.id, &attempt.hash, now)
                .await
                .expect("take"),
            Some(SsoAttempt {
                used_at: Some(now),
                ..attempt.clone()
            })
        );
        assert_eq!(
            tx.take_sso_attempt(&acme.id, &attempt.hash, now)
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
        tx.take_sso_attempt(&acme.id, &live.hash, now)
            .await
            .expect("take"),
        None
    );
    tx.commit().await.expect("commit");

    // Racing takes of one attempt admit exactly one.
    let racing = sso_attempt_fixture(globex, "sso_racing", 7, t0 + Duration::minutes(5));
    let mut tx = store.write().await.expect("write");
    tx.insert_sso_attempt(&racing).await.expect("attempt");
    tx.commit().await.expect("commit");
    let takes = (0..4).map(|_| {
        let store = store.clone();
        let (tenant, hash) = (acme.id.clone(), racing.hash.clone());
        async move {
            let mut tx = store.write().await?;
            let taken = tx.take_sso_attempt(&tenant, &hash, now).await?;
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

    // An attempt for an unknown tenant is the foreign key.
    let ghost = SsoAttempt {
        tenant_id: super::tenant_fixture("ghost", 9).id,
        ..sso_attempt_fixture(globex, "sso_ghost", 8, t0)
    };
    let mut tx = store.write().await.expect("write");
    assert_conflict(
        tx.insert_sso_attempt(&ghost).await,
        "sso_attempts_tenant_id_fkey",
    );
}

/// The purge deletes spent attempts and those expired at `now` (below one second too), counting
/// them, and keeps live ones, which can still be taken.
pub async fn spent_and_expired_sso_attempts_are_purged(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let orgs = stored_orgs(&store, &acme, &["globex"]).await;
    let globex = &orgs[0];
    let t0 = whole_second(&acme);
    let now = t0 + Duration::minutes(10) + Duration::milliseconds(250);
    let expired = sso_attempt_fixture(globex, "sso_expired", 1, t0);
    let at_now = SsoAttempt {
        expires_at: now,
        ..sso_attempt_fixture(globex, "sso_at_now", 2, t0)
    };
    let spent = SsoAttempt {
        used_at: Some(now - Duration::seconds(1)),
        ..sso_attempt_fixture(globex, "sso_spent", 3, now - Duration::seconds(2))
    };
    let live = sso_attempt_fixture(globex, "sso_live", 4, t0 + Duration::seconds(1));
    let mut tx = store.write().await.expect("write");
    for a in [&expired, &at_now, &spent, &live] {
        tx.insert_sso_attempt(a).await.expect("attempt");
    }
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_eq!(tx.purge_expired_grants(now).await.expect("purge"), 3);
    assert_eq!(tx.purge_expired_grants(now).await.expect("again"), 0);
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.take_sso_attempt(&acme.id, &live.hash, now)
            .await
            .expect("live"),
        Some(SsoAttempt {
            used_at: Some(now),
            ..live
        }),
        "the live attempt stays"
    );
    tx.commit().await.expect("commit");
}

/// A link reads back as written, in its tenant and organization only; a subject is linked once
/// per organization (another organization may link the same subject). A person or organization
/// that is not the tenant's is the matching foreign key. Deleting the connection deletes its
/// organization's links and no other; deleting the organization deletes its links and
/// connection; deleting the tenant deletes everything.
pub async fn sso_links_are_unique_per_subject_and_go_with_their_connection(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let orgs = stored_orgs(&store, &acme, &["globex", "hooli"]).await;
    let (globex, hooli) = (&orgs[0], &orgs[1]);
    let foreign = stored_orgs(&store, &other, &["initech"]).await;
    let ada = stored_user(&store, &acme, 1, "ada@example.com").await;
    let bob = stored_user(&store, &acme, 2, "bob@example.com").await;
    let eve = stored_user(&store, &other, 3, "eve@example.com").await;
    let at = moment(&acme) + Duration::minutes(1);
    let mut tx = store.write().await.expect("write");
    tx.put_sso_connection(&sso_connection_fixture(globex, 1, at))
        .await
        .expect("globex connection");
    tx.put_sso_connection(&sso_connection_fixture(hooli, 2, at))
        .await
        .expect("hooli connection");
    tx.commit().await.expect("commit");

    // A subject of 255 characters with quotes and non-ASCII text reads back exactly.
    let long_subject = format!("ü\"{}", "s".repeat(252));
    let ada_at_globex = sso_link_fixture(globex, "248289761001", &ada, at);
    let bob_at_globex = sso_link_fixture(globex, &long_subject, &bob, at + Duration::seconds(1));
    let ada_at_hooli = sso_link_fixture(hooli, "248289761001", &ada, at + Duration::seconds(2));
    let mut tx = store.write().await.expect("write");
    for link in [&ada_at_globex, &bob_at_globex, &ada_at_hooli] {
        tx.insert_sso_link(link).await.expect("link");
    }
    assert_eq!(
        tx.sso_link(&acme.id, &globex.id, "248289761001")
            .await
            .expect("read"),
        Some(ada_at_globex.clone())
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.sso_link(&acme.id, &globex.id, &long_subject)
            .await
            .expect("read"),
        Some(bob_at_globex.clone())
    );
    assert_eq!(
        read.sso_link(&acme.id, &hooli.id, "248289761001")
            .await
            .expect("read"),
        Some(ada_at_hooli.clone())
    );
    for (tenant, org, subject, why) in [
        (&other, globex, "248289761001", "another tenant"),
        (
            &acme,
            &foreign[0],
            "248289761001",
            "another tenant's organization",
        ),
        (&acme, hooli, long_subject.as_str(), "another organization"),
        (&acme, globex, "248289761002", "another subject"),
        (&acme, globex, "248289761001 ", "compared exactly"),
    ] {
        assert_eq!(
            read.sso_link(&tenant.id, &org.id, subject)
                .await
                .expect("read"),
            None,
            "{why}"
        );
    }
    read.finish().await.expect("finish");

    // The subject already linked, even to another person.
    let mut tx = store.write().await.expect("write");
    assert_conflict(
        tx.insert_sso_link(&sso_link_fixture(
            globex,
            "248289761001",
            &bob,
            at + Duration::seconds(5),
        ))
        .await,
        "sso_links_pkey",
    );
    drop(tx);
    // A person of another tenant.
    let mut tx = store.write().await.expect("write");
    assert_conflict(
        tx.insert_sso_link(&sso_link_fixture(globex, "eve", &eve, at))
            .await,
        "sso_links_user_fkey",
    );
    drop(tx);
    // An organization of another tenant, named with this tenant.
    let mut tx = store.write().await.expect("write");
    assert_conflict(
        tx.insert_sso_link(&SsoLink {
            organization_id: foreign[0].id.clone(),
            ..sso_link_fixture(globex, "planted", &ada, at)
        })
        .await,
        "sso_links_organization_fkey",
    );
    drop(tx);
    let mut tx = store.write().await.expect("write");
    assert_refused_by_check(
        tx.insert_sso_link(&sso_link_fixture(globex, "", &ada, at))
            .await,
        "sso_links_subject_check",
    );
    drop(tx);

    // Deleting globex's connection deletes its links, not hooli's.
    let mut tx = store.write().await.expect("write");
    assert!(
        tx.delete_sso_connection(&acme.id, &globex.id)
            .await
            .expect("delete")
    );
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    for subject in ["248289761001", long_subject.as_str()] {
        assert_eq!(
            read.sso_link(&acme.id, &globex.id, subject)
                .await
                .expect("read"),
            None
        );
    }
    assert_eq!(
        read.sso_link(&acme.id, &hooli.id, "248289761001")
            .await
            .expect("read"),
        Some(ada_at_hooli.clone())
    );
    read.finish().await.expect("finish");

    // Deleting hooli deletes its connection and links.
    let mut tx = store.write().await.expect("write");
    assert!(
        tx.delete_organization(&acme.id, &hooli.id)
            .await
            .expect("delete organization")
    );
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.sso_connection(&acme.id, &hooli.id)
            .await
            .expect("read"),
        None
    );
    assert_eq!(
        read.sso_link(&acme.id, &hooli.id, "248289761001")
            .await
            .expect("read"),
        None
    );
    read.finish().await.expect("finish");

    // Everything goes with the tenant.
    let theirs = sso_connection_fixture(&foreign[0], 3, at);
    let mut tx = store.write().await.expect("write");
    tx.put_sso_connection(&theirs).await.expect("connection");
    tx.insert_sso_link(&sso_link_fixture(&foreign[0], "eve", &eve, at))
        .await
        .expect("link");
    tx.insert_sso_attempt(&sso_attempt_fixture(&foreign[0], "sso_theirs", 1, at))
        .await
        .expect("attempt");
    tx.commit().await.expect("commit");
    let mut tx = store.write().await.expect("write");
    tx.delete_tenant(&other.id).await.expect("delete tenant");
    assert_eq!(
        tx.sso_connection(&other.id, &foreign[0].id)
            .await
            .expect("read"),
        None
    );
    assert_eq!(
        tx.sso_link(&other.id, &foreign[0].id, "eve")
            .await
            .expect("read"),
        None
    );
    assert_eq!(
        tx.take_sso_attempt(&other.id, &SecretHash::of("sso_theirs"), at)
            .await
            .expect("take"),
        None
    );
    tx.commit().await.expect("commit");
}
