//! Conformance: tenant users, browser sessions, one-time link tokens and fixed-window counters.

use super::tenant_fixture;
use crate::{Store, StoreError, UpdateOutcome, UserFilter};
use std::sync::Arc;
use svc_domain::{
    Email, ManualClock, PasswordHash, SecretHash, SeededRandom, Session, SessionId, Tenant, User,
    UserId, UserStatus, UserToken, UserTokenPurpose,
};
use time::{Duration, OffsetDateTime};

async fn stored_tenant(store: &Arc<dyn Store>, slug: &str, seed: u64) -> Tenant {
    let tenant = tenant_fixture(slug, seed);
    let mut tx = store.write().await.expect("write");
    tx.insert_tenant(&tenant).await.expect("insert tenant");
    tx.commit().await.expect("commit");
    tenant
}

/// An active user of `tenant` with every optional field set (names with quotes and non-ASCII
/// text), timestamps at whole microseconds. Ids grow with `seed`.
pub fn user_fixture(tenant: &Tenant, seed: u64, email: &str) -> User {
    let at = tenant.created_at + Duration::microseconds(seed as i64 * 1_007);
    let clock = ManualClock::new(at);
    User {
        id: UserId::generate(&clock, &SeededRandom::new(seed)),
        tenant_id: tenant.id.clone(),
        email: Email::parse(email).unwrap_or_else(|e| panic!("fixture email {email}: {e}")),
        email_verified: true,
        name: Some(format!("Ada \"{seed}\" Lovelace-Byron ü")),
        given_name: Some("Ada".into()),
        family_name: Some("Lovelace".into()),
        status: UserStatus::Active,
        password_hash: Some(PasswordHash::new(format!(
            "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA${seed}"
        ))),
        created_at: at,
        updated_at: at + Duration::seconds(1),
        last_sign_in_at: Some(at + Duration::seconds(2)),
    }
}

/// A live session of `user`, created at `at` for eight hours, with every optional field set.
pub fn session_fixture(user: &User, seed: u64, at: OffsetDateTime) -> Session {
    Session {
        id: SessionId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: user.tenant_id.clone(),
        user_id: user.id.clone(),
        secret_hash: SecretHash::of(&format!("ses_cookie_{seed}")),
        created_at: at,
        auth_time: at,
        amr: vec!["pwd".into(), "mfa".into()],
        acr: Some("urn:example:acr:\"1\"".into()),
        expires_at: at + Duration::hours(8),
        last_seen_at: at,
        revoked_at: None,
        user_agent: Some("Mozilla/5.0 (X11; Linux) \"quoted\" ü".into()),
        ip: Some("2001:db8::1".into()),
    }
}

/// A one-time link token of `user` for `purpose`, issued at `at`, valid for an hour.
pub fn user_token_fixture(
    user: &User,
    secret: &str,
    purpose: UserTokenPurpose,
    at: OffsetDateTime,
) -> UserToken {
    UserToken {
        hash: SecretHash::of(secret),
        tenant_id: user.tenant_id.clone(),
        user_id: user.id.clone(),
        purpose,
        created_at: at,
        expires_at: at + Duration::hours(1),
        used_at: None,
    }
}

async fn insert_user(store: &Arc<dyn Store>, user: &User) -> Result<(), StoreError> {
    let mut tx = store.write().await?;
    tx.insert_user(user).await?;
    tx.commit().await
}

/// Writes `user` at the revision stored now (read in the same transaction), expecting it to
/// apply.
async fn update_user(store: &Arc<dyn Store>, user: &User) -> Result<(), StoreError> {
    let mut tx = store.write().await?;
    let read_at = tx
        .user(&user.tenant_id, &user.id)
        .await?
        .map_or(user.updated_at, |stored| stored.updated_at);
    let outcome = tx.update_user_if_unchanged(user, read_at).await?;
    assert_eq!(outcome, UpdateOutcome::Applied, "at the revision just read");
    tx.commit().await
}

fn constraint_of(result: Result<(), StoreError>) -> Option<String> {
    match result {
        Err(StoreError::Conflict { constraint }) => Some(constraint),
        _ => None,
    }
}

/// Every field reads back identically, by id and by address, inside the writing transaction and
/// after commit; a user with every optional field empty too. An update replaces every mutable
/// field and never the creation time; updating a missing user is NotFound.
pub async fn user_round_trips(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let full = user_fixture(&acme, 1, "Ada@Example.com");
    let bare = User {
        email_verified: false,
        name: None,
        given_name: None,
        family_name: None,
        status: UserStatus::PreProvisioned,
        password_hash: None,
        last_sign_in_at: None,
        ..user_fixture(&acme, 2, "bare@example.com")
    };
    let mut tx = store.write().await.expect("write");
    tx.insert_user(&full).await.expect("insert");
    tx.insert_user(&bare).await.expect("insert bare");
    assert_eq!(
        tx.user(&acme.id, &full.id).await.expect("own write"),
        Some(full.clone())
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.user(&acme.id, &full.id).await.expect("by id"),
        Some(full.clone())
    );
    assert_eq!(
        read.user(&acme.id, &bare.id).await.expect("bare"),
        Some(bare.clone())
    );
    let email = Email::parse("ada@example.com").expect("email");
    assert_eq!(
        read.user_by_email(&acme.id, &email)
            .await
            .expect("by email"),
        Some(full.clone())
    );
    let nobody = Email::parse("nobody@example.com").expect("email");
    assert_eq!(
        read.user_by_email(&acme.id, &nobody).await.expect("x"),
        None
    );
    read.finish().await.expect("finish");

    let changed = User {
        email: Email::parse("ada.l@example.org").expect("email"),
        email_verified: false,
        name: None,
        given_name: Some("Augusta".into()),
        family_name: None,
        status: UserStatus::Suspended,
        password_hash: None,
        updated_at: full.updated_at + Duration::minutes(3),
        last_sign_in_at: None,
        created_at: full.created_at + Duration::days(1), // must be ignored
        ..full.clone()
    };
    update_user(&store, &changed).await.expect("update");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.user(&acme.id, &full.id).await.expect("read"),
        Some(User {
            created_at: full.created_at,
            ..changed
        })
    );
    read.finish().await.expect("finish");
    assert!(matches!(
        update_user(&store, &user_fixture(&acme, 3, "ghost@example.com")).await,
        Err(StoreError::NotFound)
    ));
}

/// An address is unique among a tenant's users that are not removed: a second holder is a
/// conflict naming `users_tenant_email_key` (on insert and on update), another tenant may use
/// it, and once the holder is removed the address can be given to a new user.
pub async fn user_email_is_unique_among_users_not_removed(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let first = user_fixture(&acme, 1, "ada@example.com");
    insert_user(&store, &first).await.expect("first");

    let second = user_fixture(&acme, 2, "ADA@example.com");
    assert_eq!(
        constraint_of(insert_user(&store, &second).await).as_deref(),
        Some("users_tenant_email_key")
    );
    insert_user(&store, &user_fixture(&other, 3, "ada@example.com"))
        .await
        .expect("another tenant may use the address");

    let third = user_fixture(&acme, 4, "third@example.com");
    insert_user(&store, &third).await.expect("third");
    let taking = User {
        email: first.email.clone(),
        ..third.clone()
    };
    assert_eq!(
        constraint_of(update_user(&store, &taking).await).as_deref(),
        Some("users_tenant_email_key")
    );

    let removed = User {
        status: UserStatus::Removed,
        ..first.clone()
    };
    update_user(&store, &removed).await.expect("remove");
    insert_user(&store, &second)
        .await
        .expect("a removed user's address can be reused");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.user_by_email(&acme.id, &first.email)
            .await
            .expect("by email"),
        Some(second.clone()),
        "removed users are ignored by the address lookup"
    );
    assert_eq!(
        read.user(&acme.id, &first.id).await.expect("tombstone"),
        Some(removed)
    );
    read.finish().await.expect("finish");
    // Two removed holders of one address are fine too.
    let removed_too = User {
        status: UserStatus::Removed,
        ..second
    };
    update_user(&store, &removed_too)
        .await
        .expect("second removal");
}

/// Listing pages through one tenant in id order, filtered by state and by address.
pub async fn list_users_filters_and_paginates(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let statuses = [
        UserStatus::Active,
        UserStatus::Invited,
        UserStatus::Active,
        UserStatus::Suspended,
        UserStatus::Active,
    ];
    let mut users = Vec::new();
    for (i, status) in statuses.into_iter().enumerate() {
        let user = User {
            status,
            ..user_fixture(&acme, 10 + i as u64, &format!("u{i}@example.com"))
        };
        insert_user(&store, &user).await.expect("insert");
        users.push(user);
    }
    insert_user(&store, &user_fixture(&other, 99, "u0@example.com"))
        .await
        .expect("other tenant");
    users.sort_by(|a, b| a.id.as_str().cmp(b.id.as_str()));

    let mut read = store.read().await.expect("read");
    let all = UserFilter::default();
    let page1 = read
        .list_users(&acme.id, &all, None, crate::Order::Ascending, 2)
        .await
        .expect("page 1");
    let page2 = read
        .list_users(
            &acme.id,
            &all,
            Some(&page1[1].id),
            crate::Order::Ascending,
            2,
        )
        .await
        .expect("page 2");
    let page3 = read
        .list_users(
            &acme.id,
            &all,
            Some(&page2[1].id),
            crate::Order::Ascending,
            2,
        )
        .await
        .expect("page 3");
    let listed: Vec<User> = page1.into_iter().chain(page2).chain(page3).collect();
    assert_eq!(listed, users);
    // Newest first: the same users reversed, the cursor moving down.
    let newest = read
        .list_users(&acme.id, &all, None, crate::Order::Descending, 2)
        .await
        .expect("newest page 1");
    let older = read
        .list_users(
            &acme.id,
            &all,
            Some(&newest[1].id),
            crate::Order::Descending,
            10,
        )
        .await
        .expect("newest page 2");
    let mut reversed: Vec<User> = newest.into_iter().chain(older).collect();
    reversed.reverse();
    assert_eq!(reversed, users);

    let active = UserFilter {
        status: Some(UserStatus::Active),
        email: None,
    };
    let got = read
        .list_users(&acme.id, &active, None, crate::Order::Ascending, 10)
        .await
        .expect("active");
    let expected: Vec<&User> = users
        .iter()
        .filter(|u| u.status == UserStatus::Active)
        .collect();
    assert_eq!(got.iter().collect::<Vec<_>>(), expected);
    let after_first = read
        .list_users(
            &acme.id,
            &active,
            Some(&expected[0].id),
            crate::Order::Ascending,
            10,
        )
        .await
        .expect("active after cursor");
    assert_eq!(after_first.iter().collect::<Vec<_>>(), expected[1..]);

    let by_email = UserFilter {
        status: None,
        email: Some(Email::parse("u3@example.com").expect("email")),
    };
    let got = read
        .list_users(&acme.id, &by_email, None, crate::Order::Ascending, 10)
        .await
        .expect("by email");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].email.as_str(), "u3@example.com");
    let both = UserFilter {
        status: Some(UserStatus::Active),
        ..by_email
    };
    assert!(
        read.list_users(&acme.id, &both, None, crate::Order::Ascending, 10)
            .await
            .expect("both")
            .is_empty(),
        "u3 is suspended"
    );
    read.finish().await.expect("finish");
}

/// Another tenant's user id or address finds nothing and cannot be updated, and deleting a
/// tenant deletes its users.
pub async fn users_are_isolated_per_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    insert_user(&store, &ada).await.expect("insert");

    let mut read = store.read().await.expect("read");
    assert_eq!(read.user(&other.id, &ada.id).await.expect("by id"), None);
    assert_eq!(
        read.user_by_email(&other.id, &ada.email)
            .await
            .expect("by email"),
        None
    );
    assert!(
        read.list_users(
            &other.id,
            &UserFilter::default(),
            None,
            crate::Order::Ascending,
            10
        )
        .await
        .expect("list")
        .is_empty()
    );
    read.finish().await.expect("finish");
    let moved = User {
        tenant_id: other.id.clone(),
        ..ada.clone()
    };
    assert!(matches!(
        update_user(&store, &moved).await,
        Err(StoreError::NotFound)
    ));

    let mut tx = store.write().await.expect("write");
    tx.delete_tenant(&acme.id).await.expect("delete tenant");
    tx.insert_tenant(&acme).await.expect("same tenant again");
    assert_eq!(
        tx.user(&acme.id, &ada.id).await.expect("read"),
        None,
        "users go with their tenant"
    );
    tx.commit().await.expect("commit");
}

/// An update applies only at the revision it read: one carrying a stale `updated_at` is
/// [`UpdateOutcome::Stale`] and changes nothing (a missing user is still NotFound), sub-second
/// revisions compare exactly, and racing read-then-write transactions never lose an update:
/// every writer that reports `Applied` had read the revision it replaced.
pub async fn user_updates_apply_only_at_the_revision_read(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let ada = User {
        updated_at: acme.created_at + Duration::nanoseconds(1_234_567_000),
        ..user_fixture(&acme, 1, "ada@example.com")
    };
    insert_user(&store, &ada).await.expect("insert");
    let read_back = |store: Arc<dyn Store>, tenant: svc_domain::TenantId, id: UserId| async move {
        let mut read = store.read().await.expect("read");
        let user = read.user(&tenant, &id).await.expect("user");
        read.finish().await.expect("finish");
        user.expect("stored")
    };
    let r0 = read_back(store.clone(), acme.id.clone(), ada.id.clone())
        .await
        .updated_at;

    let first = User {
        name: Some("First".into()),
        updated_at: r0 + Duration::microseconds(1),
        ..ada.clone()
    };
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_user_if_unchanged(&first, r0)
            .await
            .expect("first"),
        UpdateOutcome::Applied
    );
    tx.commit().await.expect("commit");
    let after_first = read_back(store.clone(), acme.id.clone(), ada.id.clone()).await;
    assert_eq!(after_first.name.as_deref(), Some("First"));

    // A second writer that also read r0 is refused, and nothing it carried is written.
    let stale = User {
        name: Some("Stale".into()),
        status: UserStatus::Suspended,
        updated_at: r0 + Duration::seconds(5),
        ..ada.clone()
    };
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_user_if_unchanged(&stale, r0)
            .await
            .expect("stale"),
        UpdateOutcome::Stale
    );
    tx.commit().await.expect("commit");
    assert_eq!(
        read_back(store.clone(), acme.id.clone(), ada.id.clone()).await,
        after_first,
        "a stale update changes nothing"
    );
    // One microsecond off is another revision too.
    let mut tx = store.write().await.expect("write");
    let near = after_first.updated_at - Duration::microseconds(1);
    assert_eq!(
        tx.update_user_if_unchanged(&stale, near)
            .await
            .expect("near"),
        UpdateOutcome::Stale
    );
    let ghost = user_fixture(&acme, 2, "ghost@example.com");
    assert!(matches!(
        tx.update_user_if_unchanged(&ghost, ghost.updated_at).await,
        Err(StoreError::NotFound)
    ));
    drop(tx); // rolled back

    // Racing read-then-write transactions: each appends its mark to the name it read.
    let attempts = (0..4u8).map(|i| {
        let store = store.clone();
        let (tenant, id) = (acme.id.clone(), ada.id.clone());
        async move {
            let mut tx = store.write().await?;
            let read = tx.user(&tenant, &id).await?.ok_or(StoreError::NotFound)?;
            let next = User {
                name: Some(format!("{}|{i}", read.name.clone().unwrap_or_default())),
                updated_at: read.updated_at + Duration::milliseconds(1),
                ..read.clone()
            };
            let outcome = tx.update_user_if_unchanged(&next, read.updated_at).await?;
            tx.commit().await?;
            Ok::<_, StoreError>((i, outcome))
        }
    });
    let mut applied = Vec::new();
    for result in futures_util::future::join_all(attempts).await {
        let (i, outcome) = result.expect("transaction");
        if outcome == UpdateOutcome::Applied {
            applied.push(i);
        }
    }
    assert!(!applied.is_empty(), "someone wins");
    let last = read_back(store.clone(), acme.id.clone(), ada.id.clone()).await;
    let mut marks: Vec<u8> = last
        .name
        .as_deref()
        .unwrap_or_default()
        .split('|')
        .skip(1)
        .map(|m| m.parse().expect("mark"))
        .collect();
    marks.sort_unstable();
    assert_eq!(
        marks, applied,
        "every applied update is kept: {:?}",
        last.name
    );
}

/// Sessions read back by cookie hash and by id within their tenant only; use is recorded;
/// revocation is reported once; the live list is newest first without revoked or expired ones.
pub async fn sessions_round_trip_revoke_and_list_live(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let t0 = acme.created_at + Duration::days(1);
    let old = session_fixture(&ada, 1, t0);
    let newer = Session {
        amr: Vec::new(),
        acr: None,
        user_agent: None,
        ip: None,
        ..session_fixture(&ada, 2, t0 + Duration::milliseconds(250))
    };
    let expired = Session {
        expires_at: t0 + Duration::minutes(1),
        ..session_fixture(&ada, 3, t0 + Duration::milliseconds(500))
    };
    let bobs = session_fixture(&bob, 4, t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_user(&ada).await.expect("ada");
    tx.insert_user(&bob).await.expect("bob");
    for s in [&old, &newer, &expired, &bobs] {
        tx.insert_session(s).await.expect("session");
    }
    tx.commit().await.expect("commit");

    let now = t0 + Duration::minutes(5);
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.session_by_secret(&acme.id, &old.secret_hash)
            .await
            .expect("by secret"),
        Some(old.clone())
    );
    assert_eq!(
        read.session(&acme.id, &newer.id).await.expect("by id"),
        Some(newer.clone())
    );
    assert_eq!(
        read.session_by_secret(&other.id, &old.secret_hash)
            .await
            .expect("other tenant"),
        None
    );
    assert_eq!(
        read.session(&other.id, &old.id)
            .await
            .expect("other tenant"),
        None
    );
    assert_eq!(
        read.live_sessions(&acme.id, &ada.id, now)
            .await
            .expect("live"),
        vec![newer.clone(), old.clone()],
        "newest first, the expired one left out"
    );
    assert!(
        read.live_sessions(&other.id, &ada.id, now)
            .await
            .expect("other tenant")
            .is_empty()
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    tx.touch_session(&acme.id, &old.id, now)
        .await
        .expect("touch");
    assert!(matches!(
        tx.touch_session(&other.id, &old.id, now).await,
        Err(StoreError::NotFound)
    ));
    assert!(
        tx.revoke_session(&acme.id, &newer.id, now)
            .await
            .expect("revoke")
    );
    assert!(
        !tx.revoke_session(&acme.id, &newer.id, now + Duration::seconds(1))
            .await
            .expect("again"),
        "already revoked"
    );
    assert!(
        !tx.revoke_session(&other.id, &old.id, now)
            .await
            .expect("other tenant")
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    let touched = read
        .session(&acme.id, &old.id)
        .await
        .expect("read")
        .expect("present");
    assert_eq!(touched.last_seen_at, now);
    let revoked = read
        .session(&acme.id, &newer.id)
        .await
        .expect("read")
        .expect("present");
    assert_eq!(revoked.revoked_at, Some(now), "the first revocation stays");
    assert!(!revoked.is_live(now));
    assert_eq!(
        read.live_sessions(&acme.id, &ada.id, now)
            .await
            .expect("live"),
        vec![touched]
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.revoke_user_sessions(&other.id, &ada.id, now)
            .await
            .expect("other tenant"),
        0
    );
    // The unrevoked live one and the unrevoked expired one; not the revoked one, not Bob's.
    assert_eq!(
        tx.revoke_user_sessions(&acme.id, &ada.id, now)
            .await
            .expect("all of ada's"),
        2
    );
    assert!(
        tx.live_sessions(&acme.id, &ada.id, now)
            .await
            .expect("live")
            .is_empty()
    );
    assert_eq!(
        tx.live_sessions(&acme.id, &bob.id, now).await.expect("bob"),
        vec![bobs]
    );
    tx.commit().await.expect("commit");
}

/// A link token works once, only for its tenant and purpose and before it expires; a newer link
/// invalidates the outstanding ones of its purpose only.
pub async fn user_tokens_are_single_use(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let t0 = acme.created_at + Duration::days(1);
    let verify = user_token_fixture(&ada, "ut_verify", UserTokenPurpose::VerifyEmail, t0);
    let reset1 = user_token_fixture(&ada, "ut_reset1", UserTokenPurpose::ResetPassword, t0);
    let reset2 = user_token_fixture(&ada, "ut_reset2", UserTokenPurpose::ResetPassword, t0);
    let invite = user_token_fixture(&ada, "ut_invite", UserTokenPurpose::Invitation, t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_user(&ada).await.expect("user");
    for token in [&verify, &reset1, &reset2, &invite] {
        tx.insert_user_token(token).await.expect("token");
    }
    tx.commit().await.expect("commit");

    let now = t0 + Duration::minutes(10);
    let mut tx = store.write().await.expect("write");
    let wrong_purpose = tx
        .consume_user_token(&acme.id, &verify.hash, UserTokenPurpose::ResetPassword, now)
        .await
        .expect("wrong purpose");
    assert_eq!(wrong_purpose, None);
    let wrong_tenant = tx
        .consume_user_token(&other.id, &verify.hash, UserTokenPurpose::VerifyEmail, now)
        .await
        .expect("wrong tenant");
    assert_eq!(wrong_tenant, None);
    let expired = tx
        .consume_user_token(
            &acme.id,
            &invite.hash,
            UserTokenPurpose::Invitation,
            invite.expires_at,
        )
        .await
        .expect("expired");
    assert_eq!(expired, None, "dead from expires_at on");
    let used = tx
        .consume_user_token(&acme.id, &verify.hash, UserTokenPurpose::VerifyEmail, now)
        .await
        .expect("consume");
    assert_eq!(
        used,
        Some(UserToken {
            used_at: Some(now),
            ..verify.clone()
        })
    );
    let again = tx
        .consume_user_token(&acme.id, &verify.hash, UserTokenPurpose::VerifyEmail, now)
        .await
        .expect("again");
    assert_eq!(again, None, "single use");
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.invalidate_user_tokens(&other.id, &ada.id, UserTokenPurpose::ResetPassword, now)
            .await
            .expect("other tenant"),
        0
    );
    assert_eq!(
        tx.invalidate_user_tokens(&acme.id, &ada.id, UserTokenPurpose::ResetPassword, now)
            .await
            .expect("invalidate"),
        2
    );
    for reset in [&reset1, &reset2] {
        let got = tx
            .consume_user_token(&acme.id, &reset.hash, UserTokenPurpose::ResetPassword, now)
            .await
            .expect("invalidated");
        assert_eq!(got, None);
    }
    let invite_ok = tx
        .consume_user_token(&acme.id, &invite.hash, UserTokenPurpose::Invitation, now)
        .await
        .expect("other purposes untouched");
    assert!(invite_ok.is_some());
    tx.commit().await.expect("commit");
}

/// A counter grows within its window and starts again at 1 once the window has ended (instants
/// compared exactly, below one second too); clearing forgets it; keys are independent.
pub async fn counters_count_in_fixed_windows(store: Arc<dyn Store>) {
    let t0 = tenant_fixture("acme", 1).created_at + Duration::milliseconds(250);
    let window = Duration::minutes(15);
    let key = "signin:acct:ten_x:abc";
    let mut tx = store.write().await.expect("write");
    assert_eq!(tx.counter(key, t0).await.expect("absent"), None);
    for (i, at) in [t0, t0 + Duration::minutes(1), t0 + Duration::minutes(14)]
        .into_iter()
        .enumerate()
    {
        let state = tx.hit_counter(key, at, window).await.expect("hit");
        assert_eq!(state.count, i as u32 + 1);
        assert_eq!(state.window_ends_at, t0 + window, "the window is fixed");
    }
    let other = tx
        .hit_counter("signin:ip:192.0.2.1", t0, window)
        .await
        .expect("other key");
    assert_eq!(other.count, 1);
    let state = tx
        .counter(key, t0 + window - Duration::microseconds(1))
        .await
        .expect("read")
        .expect("live");
    assert_eq!(state.count, 3);
    tx.commit().await.expect("commit");

    let later = t0 + window;
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.counter(key, later).await.expect("ended"),
        None,
        "the window ends at window_ends_at"
    );
    let fresh = tx.hit_counter(key, later, window).await.expect("hit");
    assert_eq!(fresh.count, 1);
    assert_eq!(fresh.window_ends_at, later + window);
    assert_eq!(
        tx.counter("signin:ip:192.0.2.1", t0 + Duration::minutes(1))
            .await
            .expect("other key"),
        Some(other),
        "other keys are untouched"
    );
    tx.clear_counter(key).await.expect("clear");
    assert_eq!(tx.counter(key, later).await.expect("cleared"), None);
    tx.clear_counter("never-hit")
        .await
        .expect("clearing nothing");
    assert_eq!(
        tx.hit_counter(key, later, window).await.expect("hit").count,
        1
    );
    tx.commit().await.expect("commit");
}
