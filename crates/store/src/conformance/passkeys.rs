//! Conformance: passkeys (per user and tenant, unique credential ids, scoped writes, the
//! schema's limits), WebAuthn ceremonies (single use, per purpose and tenant, expiry, races,
//! purge), security keys as second factors, the sign-in methods they add to the login history,
//! and the migration that brought them; with their fixtures.

use super::factors::whole_second;
use super::grants::stored_tenant;
use super::{assert_refused_by_check, factor_fixture, tenant_fixture, user_fixture};
use crate::{Order, Store, StoreError};
use futures_util::future::join_all;
use std::sync::Arc;
use svc_domain::{
    CeremonyPurpose, FactorKind, LoginMethod, LoginRecord, LoginRecordId, LoginResult,
    MAX_CREDENTIAL_ID_BYTES, MAX_PASSKEY_NAME_CHARS, ManualClock, Passkey, PasskeyId, SecondFactor,
    SecretHash, SeededRandom, Tenant, User, WebauthnCeremony,
};
use time::{Duration, OffsetDateTime};

/// A WebAuthn credential id of `len` bytes, different for each `seed`, with zero and high bytes.
pub fn credential_id_fixture(seed: u64, len: usize) -> Vec<u8> {
    let mut bytes: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(29) ^ seed as u8)
        .collect();
    if let [first, .., last] = bytes.as_mut_slice() {
        (*first, *last) = (0, 0xff);
    }
    bytes
}

/// A serialised credential as the WebAuthn library might write it, spelt the way no JSON
/// normaliser would (spacing, key order, escapes, non-ASCII), so a round trip proves it is kept
/// byte for byte.
pub fn credential_fixture(seed: u64, counter: u32) -> String {
    format!(
        "{{\"cred\": {{\"type_\":\"ES256\" , \"key\": [{seed}, 0, 255]}},\"counter\":{counter},\
         \"backup_state\" : false, \"label\": \"k\\u00fc \\\"{seed}\\\" ü\"}}"
    )
}

/// A passkey of `user` registered at `at`, never used: a name with quotes and non-ASCII text, a
/// 16-byte credential id of its own. Ids grow with `at`; odd seeds are backup eligible.
pub fn passkey_fixture(user: &User, seed: u64, at: OffsetDateTime) -> Passkey {
    Passkey {
        id: PasskeyId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: user.tenant_id.clone(),
        user_id: user.id.clone(),
        name: format!("Laptop \"{seed}\" ü"),
        credential_id: credential_id_fixture(seed, 16),
        credential: credential_fixture(seed, 0),
        backup_eligible: seed % 2 == 1,
        created_at: at,
        last_used_at: None,
    }
}

/// An unused ceremony of `tenant` for `purpose`, started at `at` for `user` (none for a passkey
/// sign-in), valid for five minutes, found by the hash of `secret`.
pub fn ceremony_fixture(
    tenant: &Tenant,
    user: Option<&User>,
    secret: &str,
    purpose: CeremonyPurpose,
    at: OffsetDateTime,
) -> WebauthnCeremony {
    WebauthnCeremony {
        hash: SecretHash::of(secret),
        tenant_id: tenant.id.clone(),
        user_id: user.map(|u| u.id.clone()),
        purpose,
        state: format!(
            "{{\"challenge\": \"{secret}\",\"policy\" : \"required\", \"ü\": [1, 2.50]}}"
        ),
        created_at: at,
        expires_at: at + Duration::minutes(5),
        used_at: None,
    }
}

/// A login record of `user` by `method`, `n` milliseconds after `at`.
fn login_record(user: &User, n: u64, at: OffsetDateTime, method: LoginMethod) -> LoginRecord {
    let at = at + Duration::milliseconds(n as i64);
    LoginRecord {
        id: LoginRecordId::generate(&ManualClock::new(at), &SeededRandom::new(n)),
        tenant_id: user.tenant_id.clone(),
        user_id: user.id.clone(),
        occurred_at: at,
        method,
        result: LoginResult::Success,
        client_ip: Some(format!("203.0.113.{n}")),
        user_agent: Some("Mozilla/5.0 ü".into()),
    }
}

/// Every field reads back identically (the credential byte for byte; a 64-character name of
/// non-ASCII text; credential ids of 1 and 1023 bytes; `last_used_at` set or not), inside the
/// writing transaction and after commit; a user's passkeys list oldest first (below one second
/// too) and only theirs; a passkey is found by its credential id in its own tenant only, where
/// another tenant may hold the same credential id.
pub async fn passkeys_round_trip_per_user_and_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let eve = user_fixture(&other, 3, "eve@example.com");
    let t0 = whole_second(&acme);

    let bare = passkey_fixture(&ada, 1, t0 + Duration::milliseconds(750));
    let full = Passkey {
        name: "é".repeat(MAX_PASSKEY_NAME_CHARS),
        credential_id: credential_id_fixture(2, MAX_CREDENTIAL_ID_BYTES),
        last_used_at: Some(t0 + Duration::microseconds(1_500_001)),
        ..passkey_fixture(&ada, 2, t0 + Duration::milliseconds(250))
    };
    let tiny = Passkey {
        name: "x".into(),
        credential_id: vec![0],
        ..passkey_fixture(&ada, 3, t0 + Duration::milliseconds(1_100))
    };
    let whole = passkey_fixture(&ada, 4, t0);
    let bobs = passkey_fixture(&bob, 5, t0);
    // Eve's passkey in the other tenant has the same credential id as ada's `bare`.
    let eves = Passkey {
        credential_id: bare.credential_id.clone(),
        ..passkey_fixture(&eve, 6, t0)
    };

    let mut tx = store.write().await.expect("write");
    for user in [&ada, &bob, &eve] {
        tx.insert_user(user).await.expect("user");
    }
    for passkey in [&bare, &full, &tiny, &whole, &bobs, &eves] {
        tx.insert_passkey(passkey).await.expect("passkey");
    }
    assert_eq!(
        tx.passkey_by_credential(&acme.id, &full.credential_id)
            .await
            .expect("read own write"),
        Some(full.clone()),
        "visible inside the writing transaction"
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    for passkey in [&bare, &full, &tiny, &whole, &bobs] {
        assert_eq!(
            read.passkey_by_credential(&acme.id, &passkey.credential_id)
                .await
                .expect("by credential id")
                .as_ref(),
            Some(passkey),
            "every field as written"
        );
    }
    assert_eq!(
        read.passkeys(&acme.id, &ada.id).await.expect("ada's"),
        vec![whole.clone(), full.clone(), bare.clone(), tiny.clone()],
        "oldest first, below one second too"
    );
    assert_eq!(
        read.passkeys(&acme.id, &bob.id).await.expect("bob's"),
        vec![bobs.clone()]
    );
    assert!(
        read.passkeys(&other.id, &ada.id)
            .await
            .expect("cross-tenant list")
            .is_empty(),
        "another tenant lists nothing of ada's"
    );
    assert_eq!(
        read.passkey_by_credential(&other.id, &bare.credential_id)
            .await
            .expect("same credential id elsewhere"),
        Some(eves.clone()),
        "each tenant finds its own passkey for a shared credential id"
    );
    assert_eq!(
        read.passkey_by_credential(&other.id, &full.credential_id)
            .await
            .expect("cross-tenant read"),
        None,
        "another tenant never sees ada's passkey"
    );
    assert_eq!(
        read.passkey_by_credential(&acme.id, &credential_id_fixture(99, 16))
            .await
            .expect("unknown"),
        None
    );
    assert_eq!(
        read.passkey_by_credential(&acme.id, &full.credential_id[..1022])
            .await
            .expect("a prefix"),
        None,
        "the whole credential id, not a prefix"
    );
    read.finish().await.expect("finish");
    let mut once = store.read_once().await.expect("read once");
    assert_eq!(
        once.passkeys(&other.id, &eve.id).await.expect("eve's"),
        vec![eves]
    );
    once.finish().await.expect("finish");
}

/// A credential id is registered once per tenant, to whoever holds it: a second passkey with it,
/// for another user or the same, is the unique key's conflict, named the same on every backend,
/// and stores nothing; so is a second passkey with the same id. A passkey for a tenant that does
/// not exist names the foreign key, and deleting a tenant deletes its passkeys.
pub async fn passkey_credential_ids_are_unique_per_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let t0 = whole_second(&acme);
    let first = passkey_fixture(&ada, 1, t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_passkey(&first).await.expect("first");
    tx.commit().await.expect("commit");

    // Each write in its own transaction: on PostgreSQL a failed statement aborts the transaction.
    macro_rules! refused {
        ($constraint:literal, $passkey:expr) => {{
            let mut tx = store.write().await.expect("write");
            match tx.insert_passkey(&$passkey).await {
                Err(StoreError::Conflict { constraint }) => assert_eq!(constraint, $constraint),
                other => panic!("{}: expected a conflict, got {other:?}", $constraint),
            }
        }};
    }
    refused!(
        "passkeys_tenant_id_credential_id_key",
        Passkey {
            credential_id: first.credential_id.clone(),
            ..passkey_fixture(&bob, 2, t0 + Duration::seconds(1))
        }
    );
    refused!(
        "passkeys_tenant_id_credential_id_key",
        Passkey {
            credential_id: first.credential_id.clone(),
            ..passkey_fixture(&ada, 3, t0 + Duration::seconds(2))
        }
    );
    refused!(
        "passkeys_pkey",
        Passkey {
            id: first.id.clone(),
            ..passkey_fixture(&bob, 4, t0)
        }
    );
    let ghost = tenant_fixture("ghost", 9);
    let casper = user_fixture(&ghost, 1, "casper@example.com");
    refused!("passkeys_tenant_id_fkey", passkey_fixture(&casper, 5, t0));

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.passkeys(&acme.id, &bob.id).await.expect("bob's"),
        vec![],
        "the refused inserts stored nothing"
    );
    assert_eq!(
        read.passkeys(&acme.id, &ada.id).await.expect("ada's"),
        vec![first.clone()]
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    tx.delete_tenant(&acme.id).await.expect("delete tenant");
    tx.commit().await.expect("commit");
    // The same tenant again (same id): nothing of the old one comes back.
    let mut tx = store.write().await.expect("write");
    tx.insert_tenant(&acme).await.expect("tenant again");
    assert_eq!(
        tx.passkey_by_credential(&acme.id, &first.credential_id)
            .await
            .expect("after the tenant went"),
        None
    );
    tx.insert_passkey(&first)
        .await
        .expect("the credential id is free again");
    tx.commit().await.expect("commit");
}

/// Renaming and deleting a passkey happen only for its owner in its tenant, recording a use only
/// in its tenant: another user's, another tenant's or an unknown id changes nothing and returns
/// false. A recorded use replaces the credential and backup eligibility and sets `last_used_at`,
/// nothing else; a rename changes the name only.
pub async fn passkey_writes_are_scoped_to_their_owner_and_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let t0 = whole_second(&acme);
    let laptop = passkey_fixture(&ada, 1, t0);
    let phone = passkey_fixture(&ada, 2, t0 + Duration::seconds(1));
    let bobs = passkey_fixture(&bob, 3, t0);
    let unknown = passkey_fixture(&ada, 4, t0).id;
    let mut tx = store.write().await.expect("write");
    for passkey in [&laptop, &phone, &bobs] {
        tx.insert_passkey(passkey).await.expect("passkey");
    }
    tx.commit().await.expect("commit");

    let now = t0 + Duration::microseconds(3_600_000_007);
    let moved = credential_fixture(1, 42);
    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.rename_passkey(&acme.id, &bob.id, &laptop.id, "Mine now")
            .await
            .expect("by bob"),
        "bob cannot rename ada's passkey"
    );
    assert!(
        !tx.rename_passkey(&other.id, &ada.id, &laptop.id, "Elsewhere")
            .await
            .expect("other tenant"),
        "not from another tenant"
    );
    assert!(
        !tx.rename_passkey(&acme.id, &ada.id, &unknown, "Unknown")
            .await
            .expect("unknown")
    );
    assert!(
        !tx.delete_passkey(&acme.id, &bob.id, &laptop.id)
            .await
            .expect("by bob"),
        "bob cannot delete ada's passkey"
    );
    assert!(
        !tx.delete_passkey(&other.id, &ada.id, &laptop.id)
            .await
            .expect("other tenant"),
        "not from another tenant"
    );
    assert!(
        !tx.delete_passkey(&acme.id, &ada.id, &unknown)
            .await
            .expect("unknown")
    );
    assert!(
        !tx.record_passkey_use(&other.id, &laptop.id, &moved, false, now)
            .await
            .expect("other tenant"),
        "no use recorded from another tenant"
    );
    assert!(
        !tx.record_passkey_use(&acme.id, &unknown, &moved, false, now)
            .await
            .expect("unknown")
    );
    assert_eq!(
        tx.passkeys(&acme.id, &ada.id).await.expect("ada's"),
        vec![laptop.clone(), phone.clone()],
        "the refused writes changed nothing"
    );

    assert!(
        tx.record_passkey_use(&acme.id, &laptop.id, &moved, false, now)
            .await
            .expect("use")
    );
    assert!(
        tx.rename_passkey(&acme.id, &ada.id, &phone.id, "Phone \"2\" ü")
            .await
            .expect("rename")
    );
    tx.commit().await.expect("commit");

    let used = Passkey {
        credential: moved.clone(),
        backup_eligible: false,
        last_used_at: Some(now),
        ..laptop.clone()
    };
    let renamed = Passkey {
        name: "Phone \"2\" ü".into(),
        ..phone.clone()
    };
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.passkeys(&acme.id, &ada.id).await.expect("ada's"),
        vec![used.clone(), renamed.clone()],
        "a use moves the credential, eligibility and last use; a rename the name"
    );
    let later = now + Duration::hours(1);
    let again = credential_fixture(1, 43);
    assert!(
        tx.record_passkey_use(&acme.id, &laptop.id, &again, true, later)
            .await
            .expect("use again")
    );
    assert!(
        tx.delete_passkey(&acme.id, &ada.id, &phone.id)
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_passkey(&acme.id, &ada.id, &phone.id)
            .await
            .expect("again"),
        "already gone"
    );
    assert!(
        !tx.rename_passkey(&acme.id, &ada.id, &phone.id, "Gone")
            .await
            .expect("rename gone"),
        "nothing to rename"
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.passkeys(&acme.id, &ada.id).await.expect("ada's"),
        vec![Passkey {
            credential: again,
            backup_eligible: true,
            last_used_at: Some(later),
            ..laptop.clone()
        }]
    );
    assert_eq!(
        read.passkey_by_credential(&acme.id, &phone.credential_id)
            .await
            .expect("deleted"),
        None
    );
    assert_eq!(
        read.passkeys(&acme.id, &bob.id).await.expect("bob's"),
        vec![bobs],
        "bob's passkey is untouched"
    );
    read.finish().await.expect("finish");
}

/// What WebAuthn and the domain rule out is refused by the schema on every backend, naming the
/// rule: a credential id of 0 or more than 1023 bytes, a name of 0 or more than 64 characters
/// (on insert and on rename), a credential or a ceremony state that is JSON but not an object.
/// Nothing is stored.
pub async fn passkeys_and_ceremonies_refuse_what_the_schema_forbids(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let t0 = whole_second(&acme);
    let stored = passkey_fixture(&ada, 1, t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_passkey(&stored).await.expect("passkey");
    tx.commit().await.expect("commit");

    // Each write in its own transaction: on PostgreSQL a failed statement aborts the transaction.
    let refusals = [
        (
            Passkey {
                credential_id: credential_id_fixture(2, MAX_CREDENTIAL_ID_BYTES + 1),
                ..passkey_fixture(&ada, 2, t0)
            },
            "passkeys_credential_id_check",
        ),
        (
            Passkey {
                credential_id: Vec::new(),
                ..passkey_fixture(&ada, 3, t0)
            },
            "passkeys_credential_id_check",
        ),
        (
            Passkey {
                name: "é".repeat(MAX_PASSKEY_NAME_CHARS + 1),
                ..passkey_fixture(&ada, 4, t0)
            },
            "passkeys_name_check",
        ),
        (
            Passkey {
                name: String::new(),
                ..passkey_fixture(&ada, 5, t0)
            },
            "passkeys_name_check",
        ),
        (
            Passkey {
                credential: "[\"not\", \"an object\"]".into(),
                ..passkey_fixture(&ada, 6, t0)
            },
            "passkeys_credential_check",
        ),
    ];
    for (passkey, constraint) in &refusals {
        let mut tx = store.write().await.expect("write");
        assert_refused_by_check(tx.insert_passkey(passkey).await, constraint);
    }
    for name in [String::new(), "é".repeat(MAX_PASSKEY_NAME_CHARS + 1)] {
        let mut tx = store.write().await.expect("write");
        assert_refused_by_check(
            tx.rename_passkey(&acme.id, &ada.id, &stored.id, &name)
                .await,
            "passkeys_name_check",
        );
    }
    let mut tx = store.write().await.expect("write");
    assert_refused_by_check(
        tx.record_passkey_use(&acme.id, &stored.id, "42", true, t0)
            .await,
        "passkeys_credential_check",
    );
    drop(tx);
    let mut tx = store.write().await.expect("write");
    let stateless = WebauthnCeremony {
        state: "\"a string\"".into(),
        ..ceremony_fixture(&acme, None, "wc_bad", CeremonyPurpose::PasskeySignIn, t0)
    };
    assert_refused_by_check(
        tx.insert_webauthn_ceremony(&stateless).await,
        "webauthn_ceremonies_state_check",
    );
    drop(tx);

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.passkeys(&acme.id, &ada.id).await.expect("ada's"),
        vec![stored],
        "only the valid passkey, unchanged"
    );
    read.finish().await.expect("finish");
}

/// A ceremony is taken once: the take for its tenant and purpose, unused and unexpired at `now`,
/// returns it whole (marked used at `now`, its user or none round-tripping) and a second take
/// finds nothing. A take for another purpose or tenant, of an unknown, stored-used or expired
/// ceremony finds nothing and spends nothing: the right take afterwards still succeeds. Expiry
/// is compared as instants, below one second too. A ceremony for a tenant that does not exist
/// names the foreign key; deleting a tenant deletes its ceremonies.
pub async fn webauthn_ceremonies_are_taken_once_for_their_purpose(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let t0 = whole_second(&acme);
    let sign_in = ceremony_fixture(
        &acme,
        None,
        "wc_sign_in",
        CeremonyPurpose::PasskeySignIn,
        t0 + Duration::microseconds(250_001),
    );
    let registration = ceremony_fixture(
        &acme,
        Some(&ada),
        "wc_registration",
        CeremonyPurpose::PasskeyRegistration,
        t0,
    );
    let verification = ceremony_fixture(
        &acme,
        Some(&ada),
        "wc_verification",
        CeremonyPurpose::SecurityKeyVerification,
        t0,
    );
    let used = WebauthnCeremony {
        used_at: Some(t0 + Duration::seconds(1)),
        ..ceremony_fixture(
            &acme,
            Some(&ada),
            "wc_used",
            CeremonyPurpose::SecurityKeyRegistration,
            t0,
        )
    };
    // Expires at a whole second: its text sorts after that of the instants just before it.
    let expiring = ceremony_fixture(
        &acme,
        Some(&ada),
        "wc_expiring",
        CeremonyPurpose::SecurityKeyRegistration,
        t0,
    );
    let mut tx = store.write().await.expect("write");
    for c in [&sign_in, &registration, &verification, &used, &expiring] {
        tx.insert_webauthn_ceremony(c).await.expect("ceremony");
    }
    tx.commit().await.expect("commit");

    let now = t0 + Duration::minutes(1) + Duration::microseconds(7);
    let mut tx = store.write().await.expect("write");
    for (tenant, ceremony, purpose, why) in [
        (
            &acme,
            &sign_in,
            CeremonyPurpose::PasskeyRegistration,
            "another purpose",
        ),
        (
            &acme,
            &registration,
            CeremonyPurpose::SecurityKeyRegistration,
            "another purpose",
        ),
        (
            &acme,
            &verification,
            CeremonyPurpose::PasskeySignIn,
            "another purpose",
        ),
        (
            &other,
            &sign_in,
            CeremonyPurpose::PasskeySignIn,
            "another tenant",
        ),
        (
            &acme,
            &used,
            CeremonyPurpose::SecurityKeyRegistration,
            "stored used",
        ),
    ] {
        assert_eq!(
            tx.take_webauthn_ceremony(&tenant.id, &ceremony.hash, purpose, now)
                .await
                .expect("take"),
            None,
            "{why}"
        );
    }
    assert_eq!(
        tx.take_webauthn_ceremony(
            &acme.id,
            &SecretHash::of("wc_unknown"),
            CeremonyPurpose::PasskeySignIn,
            now
        )
        .await
        .expect("unknown"),
        None
    );
    assert_eq!(
        tx.take_webauthn_ceremony(
            &acme.id,
            &expiring.hash,
            expiring.purpose,
            expiring.expires_at
        )
        .await
        .expect("at expiry"),
        None,
        "dead from expires_at on"
    );
    assert_eq!(
        tx.take_webauthn_ceremony(&acme.id, &sign_in.hash, sign_in.purpose, now)
            .await
            .expect("take"),
        Some(WebauthnCeremony {
            used_at: Some(now),
            ..sign_in.clone()
        }),
        "the wrong takes spent nothing; no user round-trips"
    );
    assert_eq!(
        tx.take_webauthn_ceremony(&acme.id, &sign_in.hash, sign_in.purpose, now)
            .await
            .expect("take again"),
        None,
        "single use, even in the same transaction"
    );
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    let later = now + Duration::seconds(1);
    assert_eq!(
        tx.take_webauthn_ceremony(&acme.id, &sign_in.hash, sign_in.purpose, later)
            .await
            .expect("after commit"),
        None,
        "spent for good"
    );
    for ceremony in [&registration, &verification] {
        assert_eq!(
            tx.take_webauthn_ceremony(&acme.id, &ceremony.hash, ceremony.purpose, later)
                .await
                .expect("take"),
            Some(WebauthnCeremony {
                used_at: Some(later),
                ..ceremony.clone()
            }),
            "its user round-trips"
        );
    }
    let just_before = expiring.expires_at - Duration::milliseconds(500);
    assert_eq!(
        tx.take_webauthn_ceremony(&acme.id, &expiring.hash, expiring.purpose, just_before)
            .await
            .expect("just before expiry"),
        Some(WebauthnCeremony {
            used_at: Some(just_before),
            ..expiring.clone()
        }),
        "alive until its expiry, below one second too; the expired take spent nothing"
    );
    tx.commit().await.expect("commit");

    let ghost = tenant_fixture("ghost", 9);
    let mut tx = store.write().await.expect("write");
    match tx
        .insert_webauthn_ceremony(&ceremony_fixture(
            &ghost,
            None,
            "wc_ghost",
            CeremonyPurpose::PasskeySignIn,
            t0,
        ))
        .await
    {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "webauthn_ceremonies_tenant_id_fkey");
        }
        other => panic!("expected the foreign key, got {other:?}"),
    }
    drop(tx);
    let mut tx = store.write().await.expect("write");
    match tx.insert_webauthn_ceremony(&registration).await {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "webauthn_ceremonies_pkey");
        }
        other => panic!("expected the key, got {other:?}"),
    }
    drop(tx);

    let fresh = ceremony_fixture(
        &acme,
        None,
        "wc_fresh",
        CeremonyPurpose::PasskeySignIn,
        later,
    );
    let mut tx = store.write().await.expect("write");
    tx.insert_webauthn_ceremony(&fresh).await.expect("fresh");
    tx.delete_tenant(&acme.id).await.expect("delete tenant");
    tx.insert_tenant(&acme).await.expect("tenant again");
    assert_eq!(
        tx.take_webauthn_ceremony(&acme.id, &fresh.hash, fresh.purpose, later)
            .await
            .expect("after the tenant went"),
        None,
        "ceremonies go with their tenant"
    );
    tx.commit().await.expect("commit");
}

/// Twenty transactions race, each on its own connection, to take one ceremony: exactly one gets
/// it.
pub async fn racing_ceremony_takes_admit_exactly_one(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let t0 = whole_second(&acme);
    let ceremony = ceremony_fixture(&acme, None, "wc_race", CeremonyPurpose::PasskeySignIn, t0);
    let mut tx = store.write().await.expect("write");
    tx.insert_webauthn_ceremony(&ceremony)
        .await
        .expect("ceremony");
    tx.commit().await.expect("commit");

    let attempts = (0..20i64).map(|i| {
        let store = store.clone();
        let (tenant, hash) = (acme.id.clone(), ceremony.hash.clone());
        async move {
            let now = t0 + Duration::milliseconds(i);
            let mut tx = store.write().await?;
            let taken = tx
                .take_webauthn_ceremony(&tenant, &hash, CeremonyPurpose::PasskeySignIn, now)
                .await?;
            tx.commit().await?;
            Ok::<_, StoreError>(taken.is_some())
        }
    });
    let mut wins = 0;
    for outcome in join_all(attempts).await {
        wins += usize::from(outcome.expect("transaction"));
    }
    assert_eq!(wins, 1, "one ceremony checks one answer");
}

/// A security key is stored as a second factor (the kind the schema now admits) and reads back
/// as one; its sealed secret is replaced in its tenant only: another tenant's or an unknown id
/// returns false and changes nothing, and nothing else of the factor changes.
pub async fn security_key_factor_secrets_are_replaced_in_their_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let t0 = whole_second(&acme);
    let key = SecondFactor {
        kind: FactorKind::SecurityKey,
        label: "YubiKey \"5\" ü".into(),
        confirmed_at: Some(t0 + Duration::microseconds(1)),
        ..factor_fixture(&ada, 1, t0)
    };
    let totp = factor_fixture(&ada, 2, t0 + Duration::seconds(1));
    let mut tx = store.write().await.expect("write");
    tx.insert_second_factor(&key).await.expect("security key");
    tx.insert_second_factor(&totp).await.expect("totp");
    tx.commit().await.expect("commit");

    let resealed: Vec<u8> = (0..90u8).rev().chain([0, 0xff]).collect();
    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.update_factor_secret(&other.id, &key.id, &resealed)
            .await
            .expect("other tenant"),
        "not from another tenant"
    );
    assert!(
        !tx.update_factor_secret(&acme.id, &factor_fixture(&ada, 3, t0).id, &resealed)
            .await
            .expect("unknown"),
    );
    assert_eq!(
        tx.second_factor(&acme.id, &key.id).await.expect("read"),
        Some(key.clone()),
        "the refused updates changed nothing"
    );
    assert!(
        tx.update_factor_secret(&acme.id, &key.id, &resealed)
            .await
            .expect("update")
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.second_factors(&acme.id, &ada.id).await.expect("ada's"),
        vec![
            SecondFactor {
                sealed_secret: resealed,
                ..key
            },
            totp
        ],
        "only the security key's sealed secret changed"
    );
    read.finish().await.expect("finish");
}

/// Sign-ins by passkey and by password then security key are recorded in the login history (the
/// methods the schema now admits) and read back as written.
pub async fn passkey_sign_ins_are_recorded_in_login_history(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let t0 = whole_second(&acme);
    let mut written = vec![
        login_record(&ada, 1, t0, LoginMethod::Passkey),
        login_record(&ada, 2, t0, LoginMethod::PasswordSecurityKey),
        LoginRecord {
            result: LoginResult::InvalidSecondFactor,
            ..login_record(&ada, 3, t0, LoginMethod::PasswordSecurityKey)
        },
    ];
    let mut tx = store.write().await.expect("write");
    tx.insert_user(&ada).await.expect("ada");
    for record in &written {
        tx.insert_login_record(record)
            .await
            .unwrap_or_else(|e| panic!("{}: {e:?}", record.method.as_str()));
    }
    tx.commit().await.expect("commit");
    written.sort_by(|a, b| a.id.as_str().cmp(b.id.as_str()));

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.login_history(&acme.id, &ada.id, None, Order::Ascending, 10)
            .await
            .expect("history"),
        written
    );
    read.finish().await.expect("finish");
}

/// The purge deletes spent ceremonies and those expired at `now` (compared as instants, below
/// one second too), counting them, and keeps live ones, which can still be taken.
pub async fn spent_and_expired_ceremonies_are_purged(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let t0 = whole_second(&acme);
    // `now` is a quarter second past a whole second; `live` expires at that whole second plus
    // one, `expired` at the whole second itself (its text sorts after `now`'s).
    let now = t0 + Duration::minutes(5) + Duration::milliseconds(250);
    let expired = ceremony_fixture(
        &acme,
        None,
        "wc_expired",
        CeremonyPurpose::PasskeySignIn,
        t0,
    );
    let at_now = WebauthnCeremony {
        expires_at: now,
        ..ceremony_fixture(
            &acme,
            Some(&ada),
            "wc_at_now",
            CeremonyPurpose::PasskeyRegistration,
            t0,
        )
    };
    let spent = WebauthnCeremony {
        used_at: Some(t0 + Duration::seconds(1)),
        ..ceremony_fixture(
            &acme,
            Some(&ada),
            "wc_spent",
            CeremonyPurpose::SecurityKeyVerification,
            now - Duration::seconds(1),
        )
    };
    let live = ceremony_fixture(
        &acme,
        Some(&ada),
        "wc_live",
        CeremonyPurpose::SecurityKeyRegistration,
        t0 + Duration::seconds(1),
    );
    let mut tx = store.write().await.expect("write");
    for c in [&expired, &at_now, &spent, &live] {
        tx.insert_webauthn_ceremony(c).await.expect("ceremony");
    }
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_eq!(tx.purge_expired_grants(now).await.expect("purge"), 3);
    assert_eq!(tx.purge_expired_grants(now).await.expect("again"), 0);
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.take_webauthn_ceremony(&acme.id, &live.hash, live.purpose, now)
            .await
            .expect("live"),
        Some(WebauthnCeremony {
            used_at: Some(now),
            ..live
        }),
        "the live ceremony stays"
    );
    tx.commit().await.expect("commit");
}

/// The passkeys migration (`20261123000005_passkeys`), given a store migrated only up to the
/// version before it: the second factors and login history written before it (SQLite rebuilds
/// both tables to widen their checks) read back unchanged and in order afterwards, still keyed
/// and tied to their tenant (the foreign keys are named, and deleting the tenant deletes them),
/// and security keys and passkey sign-ins are accepted.
pub async fn factors_and_login_history_survive_the_passkeys_migration(store: Arc<dyn Store>) {
    let acme = tenant_fixture("acme", 1);
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let t0 = whole_second(&acme);
    let factors = vec![
        SecondFactor {
            confirmed_at: Some(t0),
            last_used_step: Some(58_000_000_123),
            ..factor_fixture(&ada, 1, t0)
        },
        factor_fixture(&ada, 2, t0 + Duration::milliseconds(500)),
    ];
    let mut history: Vec<LoginRecord> = [
        LoginMethod::Password,
        LoginMethod::PasswordTotp,
        LoginMethod::PasswordBackupCode,
        LoginMethod::PasswordTrustedDevice,
    ]
    .into_iter()
    .zip(1..)
    .map(|(method, n)| login_record(&ada, n, t0, method))
    .collect();
    let mut tx = store.write().await.expect("write");
    tx.insert_tenant(&acme).await.expect("acme");
    tx.insert_user(&ada).await.expect("ada");
    for factor in &factors {
        tx.insert_second_factor(factor).await.expect("factor");
    }
    for record in &history {
        tx.insert_login_record(record).await.expect("record");
    }
    tx.commit().await.expect("commit");
    history.sort_by(|a, b| a.id.as_str().cmp(b.id.as_str()));

    store.migrate().await.expect("the remaining migrations");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.second_factors(&acme.id, &ada.id)
            .await
            .expect("factors"),
        factors,
        "every factor survives, exactly as written"
    );
    assert_eq!(
        read.login_history(&acme.id, &ada.id, None, Order::Ascending, 100)
            .await
            .expect("history"),
        history,
        "every record survives, exactly as written"
    );
    read.finish().await.expect("finish");

    // The new values are admitted; the keys and the foreign keys still hold.
    let key = SecondFactor {
        kind: FactorKind::SecurityKey,
        ..factor_fixture(&ada, 3, t0 + Duration::seconds(1))
    };
    let passkey_sign_in = login_record(&ada, 50, t0, LoginMethod::Passkey);
    let mut tx = store.write().await.expect("write");
    tx.insert_second_factor(&key).await.expect("a security key");
    tx.insert_login_record(&passkey_sign_in)
        .await
        .expect("a passkey sign-in");
    tx.insert_passkey(&passkey_fixture(&ada, 4, t0))
        .await
        .expect("a passkey");
    tx.commit().await.expect("commit");
    let ghost = tenant_fixture("ghost", 9);
    let casper = user_fixture(&ghost, 1, "casper@example.com");
    macro_rules! refused {
        ($constraint:literal, |$tx:ident| $write:expr) => {{
            let mut $tx = store.write().await.expect("write");
            match $write.await {
                Err(StoreError::Conflict { constraint }) => assert_eq!(constraint, $constraint),
                other => panic!("{}: expected a conflict, got {other:?}", $constraint),
            }
        }};
    }
    refused!("second_factors_pkey", |tx| tx
        .insert_second_factor(&factors[0]));
    refused!("second_factors_tenant_id_fkey", |tx| tx
        .insert_second_factor(&factor_fixture(&casper, 5, t0)));
    refused!("login_history_pkey", |tx| tx
        .insert_login_record(&history[0]));
    refused!("login_history_tenant_id_fkey", |tx| tx.insert_login_record(
        &login_record(&casper, 60, t0, LoginMethod::Passkey)
    ));

    let mut tx = store.write().await.expect("write");
    tx.delete_tenant(&acme.id).await.expect("delete tenant");
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert!(
        read.second_factors(&acme.id, &ada.id)
            .await
            .expect("factors")
            .is_empty(),
        "the factors go with their tenant"
    );
    assert!(
        read.login_history(&acme.id, &ada.id, None, Order::Ascending, 100)
            .await
            .expect("history")
            .is_empty(),
        "the history goes with its tenant"
    );
    read.finish().await.expect("finish");
}
