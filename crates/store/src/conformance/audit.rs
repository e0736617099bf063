//! Conformance: the audit log, tenant deletion, idempotency keys and single-use assertion ids.

use super::{application_fixture, tenant_fixture};
use crate::{AuditFilter, IdempotencyRecord, Store, StoreError};
use std::sync::Arc;
use svc_domain::{
    AgentId, AuditEntry, AuditEntryId, AuditOutcome, ClientId, KeyState, ManualClock,
    SealedPrivateKey, SeededRandom, SigningAlg, SigningKeyRecord, Tenant, TenantId,
};
use time::{Duration, OffsetDateTime};

/// A whole second, so entries at `+0 ms` are stored without a fractional part: on SQLite that
/// text sorts after `+250 ms` of the same second, the trap the time filters must avoid.
fn base() -> OffsetDateTime {
    OffsetDateTime::UNIX_EPOCH + Duration::days(20_000)
}

/// An audit entry of `tenant` at `base() + millis`, its id generated at that instant.
pub fn audit_fixture(
    tenant: Option<&TenantId>,
    millis: i64,
    seed: u64,
    action: &str,
    actor: &str,
    target: Option<&str>,
) -> AuditEntry {
    let at = base() + Duration::milliseconds(millis);
    AuditEntry {
        id: AuditEntryId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: tenant.cloned(),
        actor: actor.to_owned(),
        action: action.to_owned(),
        target: target.map(str::to_owned),
        request_id: Some(format!("req-{seed}")),
        client_ip: Some("2001:db8::1".to_owned()),
        outcome: if seed.is_multiple_of(2) {
            AuditOutcome::Success
        } else {
            AuditOutcome::Failure
        },
        occurred_at: at,
    }
}

async fn stored_tenant(store: &Arc<dyn Store>, slug: &str, seed: u64) -> Tenant {
    let tenant = tenant_fixture(slug, seed);
    let mut tx = store.write().await.expect("write");
    tx.insert_tenant(&tenant).await.expect("insert tenant");
    tx.commit().await.expect("commit");
    tenant
}

async fn append(store: &Arc<dyn Store>, entries: &[AuditEntry]) {
    let mut tx = store.write().await.expect("write");
    for entry in entries {
        tx.insert_audit(entry).await.expect("insert audit");
    }
    tx.commit().await.expect("commit");
}

async fn list(
    store: &Arc<dyn Store>,
    tenant: &TenantId,
    filter: &AuditFilter,
    before: Option<&AuditEntryId>,
    limit: u32,
) -> Vec<AuditEntry> {
    let mut read = store.read().await.expect("read");
    let entries = read
        .list_audit(tenant, filter, before, crate::Order::Descending, limit)
        .await
        .expect("list audit");
    read.finish().await.expect("finish");
    entries
}

fn ids(entries: &[AuditEntry]) -> Vec<AuditEntryId> {
    entries.iter().map(|e| e.id.clone()).collect()
}

/// Entries read back identically, newest (highest id) first, narrowed by every filter (exact
/// matches; `since` inclusive, `until` exclusive, compared as instants even below one second)
/// and paged by the `before` cursor; other tenants' and deployment-wide entries never appear.
pub async fn audit_log_lists_newest_first_with_filters_and_cursor(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let t = Some(&acme.id);
    let entries = [
        audit_fixture(
            t,
            0,
            10,
            "application.created",
            "operator:opt_1",
            Some("app_1"),
        ),
        audit_fixture(
            t,
            250,
            11,
            "application.updated",
            "client:app_2",
            Some("app_1"),
        ),
        audit_fixture(
            t,
            500,
            12,
            "application.created",
            "client:app_2",
            Some("app_2"),
        ),
        audit_fixture(t, 1_000, 13, "tenant.suspended", "system", None),
        audit_fixture(
            t,
            1_000,
            14,
            "application.created",
            "operator:opt_1",
            Some("app_3"),
        ),
        audit_fixture(
            t,
            61_000,
            15,
            "application.deleted",
            "operator:opt_1",
            Some("app_1"),
        ),
    ];
    let foreign = [
        audit_fixture(
            Some(&other.id),
            500,
            20,
            "application.created",
            "client:app_2",
            None,
        ),
        audit_fixture(
            None,
            500,
            21,
            "operator.token_created",
            "operator:opt_1",
            None,
        ),
    ];
    // Inserted out of order: the listing orders by id, not by insertion.
    append(&store, &entries[3..]).await;
    append(&store, &entries[..3]).await;
    append(&store, &foreign).await;

    let newest_first = |picked: &[usize]| {
        let mut want: Vec<AuditEntry> = picked.iter().map(|&i| entries[i].clone()).collect();
        want.sort_by(|a, b| b.id.cmp(&a.id));
        want
    };
    let all = newest_first(&[0, 1, 2, 3, 4, 5]);
    assert_eq!(
        list(&store, &acme.id, &AuditFilter::default(), None, 100).await,
        all,
        "every field reads back; newest first"
    );

    // Paging with the cursor visits every entry once, in the same order.
    let mut seen = Vec::new();
    let mut cursor: Option<AuditEntryId> = None;
    loop {
        let page = list(
            &store,
            &acme.id,
            &AuditFilter::default(),
            cursor.as_ref(),
            4,
        )
        .await;
        assert!(page.len() <= 4);
        let Some(last) = page.last() else { break };
        cursor = Some(last.id.clone());
        seen.extend(page);
    }
    assert_eq!(seen, all);

    let cases: Vec<(AuditFilter, Vec<usize>)> = vec![
        (
            AuditFilter {
                action: Some("application.created".into()),
                ..AuditFilter::default()
            },
            vec![0, 2, 4],
        ),
        (
            AuditFilter {
                action: Some("application".into()),
                ..AuditFilter::default()
            },
            vec![],
        ),
        (
            AuditFilter {
                actor: Some("client:app_2".into()),
                ..AuditFilter::default()
            },
            vec![1, 2],
        ),
        (
            AuditFilter {
                target: Some("app_1".into()),
                ..AuditFilter::default()
            },
            vec![0, 1, 5],
        ),
        (
            AuditFilter {
                since: Some(base() + Duration::milliseconds(250)),
                ..AuditFilter::default()
            },
            vec![1, 2, 3, 4, 5],
        ),
        (
            AuditFilter {
                until: Some(base() + Duration::milliseconds(250)),
                ..AuditFilter::default()
            },
            vec![0],
        ),
        (
            AuditFilter {
                since: Some(base() + Duration::milliseconds(500)),
                until: Some(base() + Duration::seconds(1)),
                ..AuditFilter::default()
            },
            vec![2],
        ),
        (
            AuditFilter {
                since: Some(base() + Duration::microseconds(1)),
                until: Some(base() + Duration::milliseconds(1_000) + Duration::microseconds(1)),
                ..AuditFilter::default()
            },
            vec![1, 2, 3, 4],
        ),
        (
            AuditFilter {
                action: Some("application.created".into()),
                actor: Some("operator:opt_1".into()),
                target: Some("app_3".into()),
                since: Some(base()),
                until: Some(base() + Duration::minutes(5)),
            },
            vec![4],
        ),
    ];
    for (filter, picked) in cases {
        assert_eq!(
            ids(&list(&store, &acme.id, &filter, None, 100).await),
            ids(&newest_first(&picked)),
            "{filter:?}"
        );
    }

    // Filters and the cursor combine, and the limit applies after filtering.
    let created = AuditFilter {
        action: Some("application.created".into()),
        ..AuditFilter::default()
    };
    let want = ids(&newest_first(&[0, 2, 4]));
    let first_page = list(&store, &acme.id, &created, None, 2).await;
    assert_eq!(ids(&first_page), want[..2]);
    let second_page = list(&store, &acme.id, &created, Some(&first_page[1].id), 2).await;
    assert_eq!(ids(&second_page), want[2..]);
    // Oldest first: the same entries the other way, the cursor moving up.
    let mut read = store.read().await.expect("read");
    let oldest = read
        .list_audit(&acme.id, &created, None, crate::Order::Ascending, 2)
        .await
        .expect("oldest first");
    let newer = read
        .list_audit(
            &acme.id,
            &created,
            Some(&oldest[1].id),
            crate::Order::Ascending,
            2,
        )
        .await
        .expect("newer");
    read.finish().await.expect("finish");
    let mut ascending = ids(&oldest);
    ascending.extend(ids(&newer));
    ascending.reverse();
    assert_eq!(ascending, want);

    assert_eq!(
        ids(&list(&store, &other.id, &AuditFilter::default(), None, 100).await),
        vec![foreign[0].id.clone()]
    );
}

/// A write transaction holding an application and its audit entry, dropped without commit,
/// leaves neither behind.
pub async fn uncommitted_audit_entry_is_rolled_back(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let app = application_fixture(&acme, 10);
    let entry = audit_fixture(
        Some(&acme.id),
        0,
        10,
        "application.created",
        "operator:opt_1",
        Some(app.id.as_str()),
    );
    {
        let mut tx = store.write().await.expect("write");
        tx.insert_application(&app).await.expect("insert app");
        tx.insert_audit(&entry).await.expect("insert audit");
        assert_eq!(
            tx.list_audit(
                &acme.id,
                &AuditFilter::default(),
                None,
                crate::Order::Descending,
                10
            )
            .await
            .expect("own write"),
            vec![entry.clone()],
            "a transaction sees its own entries"
        );
        // dropped here without commit
    }
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.application(&acme.id, &app.id).await.expect("read"),
        None
    );
    assert!(
        read.list_audit(
            &acme.id,
            &AuditFilter::default(),
            None,
            crate::Order::Descending,
            10
        )
        .await
        .expect("list")
        .is_empty()
    );
    read.finish().await.expect("finish");
}

fn key_fixture(tenant: &Tenant) -> SigningKeyRecord {
    SigningKeyRecord {
        tenant_id: tenant.id.clone(),
        kid: "k1".into(),
        alg: SigningAlg::Es256,
        state: KeyState::Active,
        public_jwk: r#"{"kid":"k1"}"#.into(),
        sealed: SealedPrivateKey {
            wrapped_dek: vec![1; 40],
            ciphertext: vec![2; 120],
        },
        created_at: tenant.created_at,
        activates_at: tenant.created_at,
        retired_at: None,
        remove_after: None,
    }
}

/// Deleting a tenant deletes its applications and signing keys (and nothing of other tenants)
/// but keeps its audit entries; deleting a missing tenant is NotFound.
pub async fn delete_tenant_keeps_audit_entries(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let acme_app = application_fixture(&acme, 10);
    let other_app = application_fixture(&other, 11);
    let mut tx = store.write().await.expect("write");
    for tenant in [&acme, &other] {
        tx.lock_signing_keys(&tenant.id).await.expect("lock");
        tx.insert_signing_key(&key_fixture(tenant))
            .await
            .expect("key");
    }
    tx.insert_application(&acme_app).await.expect("app");
    tx.insert_application(&other_app).await.expect("app");
    tx.commit().await.expect("commit");
    let before = audit_fixture(Some(&acme.id), 0, 10, "application.created", "system", None);
    let deletion = audit_fixture(
        Some(&acme.id),
        1_000,
        12,
        "tenant.deleted",
        "operator:opt_1",
        Some(acme.id.as_str()),
    );
    append(&store, std::slice::from_ref(&before)).await;

    // The deletion and its audit entry commit together.
    let mut tx = store.write().await.expect("write");
    tx.delete_tenant(&acme.id).await.expect("delete tenant");
    tx.insert_audit(&deletion).await.expect("audit");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(read.tenant_by_id(&acme.id).await.expect("tenant"), None);
    assert_eq!(
        read.application(&acme.id, &acme_app.id).await.expect("app"),
        None
    );
    assert!(
        read.list_applications(&acme.id, None, crate::Order::Ascending, 10)
            .await
            .expect("list")
            .is_empty()
    );
    assert!(read.signing_keys(&acme.id).await.expect("keys").is_empty());
    assert_eq!(
        read.list_audit(
            &acme.id,
            &AuditFilter::default(),
            None,
            crate::Order::Descending,
            10
        )
        .await
        .expect("audit"),
        vec![deletion, before],
        "audit entries outlive their tenant"
    );
    assert!(read.tenant_by_id(&other.id).await.expect("other").is_some());
    assert_eq!(
        read.application(&other.id, &other_app.id)
            .await
            .expect("app"),
        Some(other_app)
    );
    assert_eq!(read.signing_keys(&other.id).await.expect("keys").len(), 1);
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    assert!(matches!(
        tx.delete_tenant(&acme.id).await,
        Err(StoreError::NotFound)
    ));
}

fn idempotency_fixture(
    scope: &str,
    key: &str,
    fingerprint: &str,
    at: OffsetDateTime,
) -> IdempotencyRecord {
    IdempotencyRecord {
        scope: scope.to_owned(),
        key: key.to_owned(),
        fingerprint: fingerprint.to_owned(),
        status: None,
        body: None,
        created_at: at,
        expires_at: at + Duration::hours(24),
    }
}

fn is_conflict_on(result: Result<(), StoreError>, name: &str) -> bool {
    matches!(result, Err(StoreError::Conflict { constraint }) if constraint == name)
}

/// A key is claimed once; its response is stored and replayed while it lives; an expired claim
/// is replaced; a released key is free again; keys of different scopes never collide.
pub async fn idempotency_keys_claim_complete_replay_and_expire(store: Arc<dyn Store>) {
    let t0 = base();
    let scope = "ten_x:client:app_y";
    let first = idempotency_fixture(scope, "k1", "fp-1", t0);

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.idempotency_record(scope, "k1", t0)
            .await
            .expect("record"),
        None
    );
    tx.claim_idempotency(&first).await.expect("claim");
    assert_eq!(
        tx.idempotency_record(scope, "k1", t0)
            .await
            .expect("record"),
        Some(first.clone()),
        "in progress: no status yet"
    );
    let retry = idempotency_fixture(scope, "k1", "fp-other", t0 + Duration::minutes(1));
    assert!(is_conflict_on(
        tx.claim_idempotency(&retry).await,
        "idempotency_keys_pkey"
    ));
    // The same key in another scope is another key.
    let elsewhere = idempotency_fixture("operator:opt_z", "k1", "fp-9", t0);
    tx.claim_idempotency(&elsewhere).await.expect("other scope");
    tx.complete_idempotency(scope, "k1", 201, r#"{"id":"app_1"}"#)
        .await
        .expect("complete");
    assert!(matches!(
        tx.complete_idempotency(scope, "never-claimed", 200, "{}")
            .await,
        Err(StoreError::NotFound)
    ));
    tx.commit().await.expect("commit");

    let completed = IdempotencyRecord {
        status: Some(201),
        body: Some(r#"{"id":"app_1"}"#.into()),
        ..first.clone()
    };
    let mut tx = store.write().await.expect("write");
    let just_before_expiry = first.expires_at - Duration::microseconds(1);
    assert_eq!(
        tx.idempotency_record(scope, "k1", just_before_expiry)
            .await
            .expect("record"),
        Some(completed.clone()),
        "replayable until it expires"
    );
    assert_eq!(
        tx.idempotency_record("operator:opt_z", "k1", t0)
            .await
            .expect("record"),
        Some(elsewhere),
        "completing one scope's key leaves the other alone"
    );
    assert_eq!(
        tx.idempotency_record(scope, "k1", first.expires_at)
            .await
            .expect("record"),
        None,
        "expired at expires_at"
    );
    // Still live at the new claim's time: refused; expired at it: replaced.
    let too_early = idempotency_fixture(scope, "k1", "fp-2", just_before_expiry);
    assert!(is_conflict_on(
        tx.claim_idempotency(&too_early).await,
        "idempotency_keys_pkey"
    ));
    let fresh = idempotency_fixture(scope, "k1", "fp-2", first.expires_at);
    tx.claim_idempotency(&fresh).await.expect("replace expired");
    assert_eq!(
        tx.idempotency_record(scope, "k1", fresh.created_at)
            .await
            .expect("record"),
        Some(fresh.clone()),
        "the replacement starts over, without the old response"
    );
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    tx.release_idempotency(scope, "k1").await.expect("release");
    assert_eq!(
        tx.idempotency_record(scope, "k1", fresh.created_at)
            .await
            .expect("record"),
        None
    );
    tx.release_idempotency(scope, "k1")
        .await
        .expect("releasing an unclaimed key changes nothing");
    tx.claim_idempotency(&fresh).await.expect("claim again");
    tx.commit().await.expect("commit");
}

/// An assertion id is used once per tenant and client until it expires, then may be used again.
pub async fn assertion_ids_are_single_use_per_client(store: Arc<dyn Store>) {
    let t0 = base();
    let clock = ManualClock::new(t0);
    let acme = tenant_fixture("acme", 1).id;
    let other = tenant_fixture("other", 2).id;
    let app = ClientId::generate(&clock, &SeededRandom::new(10));
    let sibling = ClientId::generate(&clock, &SeededRandom::new(11));
    let exp = t0 + Duration::minutes(5);

    let mut tx = store.write().await.expect("write");
    tx.use_assertion_id(&acme, &app, "jti-1", exp, t0)
        .await
        .expect("first use");
    assert!(is_conflict_on(
        tx.use_assertion_id(&acme, &app, "jti-1", exp, t0 + Duration::minutes(1))
            .await,
        "assertion_ids_pkey"
    ));
    assert!(
        is_conflict_on(
            tx.use_assertion_id(&acme, &app, "jti-1", exp, exp - Duration::microseconds(1))
                .await,
            "assertion_ids_pkey"
        ),
        "still unexpired just before expires_at"
    );
    tx.use_assertion_id(&acme, &sibling, "jti-1", exp, t0)
        .await
        .expect("another client's jti");
    tx.use_assertion_id(&other, &app, "jti-1", exp, t0)
        .await
        .expect("another tenant's jti");
    tx.use_assertion_id(&acme, &app, "jti-2", exp, t0)
        .await
        .expect("another jti");
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    let later = exp + Duration::minutes(5);
    tx.use_assertion_id(&acme, &app, "jti-1", later, exp)
        .await
        .expect("reuse once expired");
    assert!(
        is_conflict_on(
            tx.use_assertion_id(&acme, &app, "jti-1", later, exp + Duration::minutes(1))
                .await,
            "assertion_ids_pkey"
        ),
        "the reuse is single-use again, until its new expiry"
    );
    tx.commit().await.expect("commit");
}

/// A DPoP proof id is used once per tenant and key until it expires, and never collides with a
/// client's assertion id of the same text.
pub async fn proof_ids_are_single_use_per_key(store: Arc<dyn Store>) {
    let t0 = base();
    let acme = tenant_fixture("acme", 1).id;
    let other = tenant_fixture("other", 2).id;
    let app = ClientId::generate(&ManualClock::new(t0), &SeededRandom::new(10));
    let exp = t0 + Duration::seconds(61);

    let mut tx = store.write().await.expect("write");
    tx.use_proof_id(&acme, "key-a", "jti-1", exp, t0)
        .await
        .expect("first use");
    assert!(is_conflict_on(
        tx.use_proof_id(&acme, "key-a", "jti-1", exp, t0 + Duration::seconds(60))
            .await,
        "assertion_ids_pkey"
    ));
    tx.use_proof_id(&acme, "key-b", "jti-1", exp, t0)
        .await
        .expect("another key's jti");
    tx.use_proof_id(&other, "key-a", "jti-1", exp, t0)
        .await
        .expect("another tenant's jti");
    tx.use_assertion_id(&acme, &app, "jti-1", exp, t0)
        .await
        .expect("a client's assertion id is another record");
    tx.use_proof_id(&acme, "key-a", "jti-1", exp + Duration::seconds(61), exp)
        .await
        .expect("reuse once expired");
    tx.commit().await.expect("commit");
}

/// An agent's challenge is answered once per agent and tenant until it expires, in a record of
/// its own (the same text as a client's assertion id or a proof's `jti` is another record).
pub async fn agent_challenges_are_single_use_per_agent(store: Arc<dyn Store>) {
    let t0 = base();
    let acme = tenant_fixture("acme", 1).id;
    let other = tenant_fixture("other", 2).id;
    let clock = ManualClock::new(t0);
    let agent = AgentId::generate(&clock, &SeededRandom::new(11));
    let second = AgentId::generate(&clock, &SeededRandom::new(12));
    let exp = t0 + Duration::seconds(60);

    let mut tx = store.write().await.expect("write");
    tx.use_agent_challenge(&acme, &agent, "c-1", exp, t0)
        .await
        .expect("first answer");
    assert!(is_conflict_on(
        tx.use_agent_challenge(&acme, &agent, "c-1", exp, t0 + Duration::seconds(59))
            .await,
        "assertion_ids_pkey"
    ));
    tx.use_agent_challenge(&acme, &second, "c-1", exp, t0)
        .await
        .expect("another agent's challenge");
    tx.use_agent_challenge(&other, &agent, "c-1", exp, t0)
        .await
        .expect("another tenant's challenge");
    tx.use_proof_id(&acme, agent.as_str(), "c-1", exp, t0)
        .await
        .expect("a proof's jti is another record");
    tx.use_agent_challenge(&acme, &agent, "c-1", exp + Duration::seconds(60), exp)
        .await
        .expect("reuse once expired");
    tx.commit().await.expect("commit");
}

/// Purging deletes exactly the idempotency keys and assertion ids expired at `now`, at most the
/// given number of each per call, and counts them; live rows keep working.
pub async fn purge_expired_counts_and_keeps_live_rows(store: Arc<dyn Store>) {
    let t0 = base();
    let now = t0 + Duration::hours(24);
    let acme = tenant_fixture("acme", 1).id;
    let app = ClientId::generate(&ManualClock::new(t0), &SeededRandom::new(10));
    let expired_a = idempotency_fixture("s", "old-a", "fp", t0 - Duration::hours(1));
    let expired_at_now = idempotency_fixture("s", "old-b", "fp", t0);
    let live = idempotency_fixture("s", "live", "fp", t0 + Duration::milliseconds(1));
    let mut tx = store.write().await.expect("write");
    for record in [&expired_a, &expired_at_now, &live] {
        tx.claim_idempotency(record).await.expect("claim");
    }
    tx.use_assertion_id(&acme, &app, "old", now - Duration::milliseconds(1), t0)
        .await
        .expect("use");
    tx.use_assertion_id(&acme, &app, "live", now + Duration::milliseconds(1), t0)
        .await
        .expect("use");
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    // At most one of each kind per call: one key and the assertion id, then the other key.
    assert_eq!(tx.purge_expired(now, 1).await.expect("purge"), 2);
    assert_eq!(tx.purge_expired(now, 1).await.expect("the rest"), 1);
    assert_eq!(tx.purge_expired(now, 1).await.expect("purge again"), 0);
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.idempotency_record("s", "live", now)
            .await
            .expect("record"),
        Some(live.clone())
    );
    assert!(is_conflict_on(
        tx.claim_idempotency(&idempotency_fixture("s", "live", "fp", now))
            .await,
        "idempotency_keys_pkey"
    ));
    assert!(is_conflict_on(
        tx.use_assertion_id(&acme, &app, "live", now + Duration::hours(1), now)
            .await,
        "assertion_ids_pkey"
    ));
    // The purged key is free; its complete() finds nothing to complete.
    assert!(matches!(
        tx.complete_idempotency("s", "old-a", 200, "{}").await,
        Err(StoreError::NotFound)
    ));
    tx.commit().await.expect("commit");
}

/// Racing claims of one idempotency key, and racing uses of one assertion id: exactly one of
/// each wins, the rest see the primary key's conflict (what makes a retried request run once).
pub async fn racing_claims_admit_exactly_one(store: Arc<dyn Store>) {
    let t0 = base();
    let acme = tenant_fixture("acme", 1).id;
    let app = ClientId::generate(&ManualClock::new(t0), &SeededRandom::new(10));
    let attempts = (0..6u64).map(|i| {
        let store = store.clone();
        let record = idempotency_fixture("s", "k", &format!("fp-{i}"), t0);
        let (acme, app) = (acme.clone(), app.clone());
        async move {
            let mut tx = store.write().await?;
            let claimed = tx.claim_idempotency(&record).await;
            let used = tx
                .use_assertion_id(&acme, &app, "jti", t0 + Duration::minutes(5), t0)
                .await;
            tx.commit().await?;
            Ok::<_, StoreError>((claimed, used))
        }
    });
    let results = futures_util::future::join_all(attempts).await;
    let mut claims = 0;
    let mut uses = 0;
    for result in results {
        let (claimed, used) = result.expect("transaction");
        match claimed {
            Ok(()) => claims += 1,
            Err(StoreError::Conflict { constraint }) => {
                assert_eq!(constraint, "idempotency_keys_pkey")
            }
            Err(other) => panic!("unexpected {other:?}"),
        }
        match used {
            Ok(()) => uses += 1,
            Err(StoreError::Conflict { constraint }) => {
                assert_eq!(constraint, "assertion_ids_pkey")
            }
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!((claims, uses), (1, 1));
}
