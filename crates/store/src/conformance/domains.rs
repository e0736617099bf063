//! Conformance: domains organizations claim (round trips scoped to their tenant and
//! organization, one claim of a name per organization, at most one verified claim of a name per
//! tenant whichever way it is written, compare-and-set updates, deletion scoped and with the
//! organization), with their fixture.

use super::assert_refused_by_check;
use super::grants::stored_tenant;
use super::organizations::organization_fixture;
use crate::{Store, StoreError, UpdateOutcome};
use std::collections::BTreeSet;
use std::sync::Arc;
use svc_domain::{
    DomainId, DomainName, DomainStatus, ManualClock, Organization, RoleKey, SeededRandom, Tenant,
    VerifiedDomain,
};
use time::{Duration, OffsetDateTime};

/// A pending claim of `name` by `org`, created at `at` (whole microseconds), auto-joining as
/// `member` and `billing.viewer`. Ids grow with `at`; the token is derived from the seed.
pub fn domain_fixture(
    org: &Organization,
    seed: u64,
    name: &str,
    at: OffsetDateTime,
) -> VerifiedDomain {
    VerifiedDomain {
        id: DomainId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: org.tenant_id.clone(),
        organization_id: org.id.clone(),
        name: DomainName::parse(name).unwrap_or_else(|e| panic!("fixture name {name}: {e}")),
        status: DomainStatus::Pending,
        token: format!("token{seed:0>27}"),
        verified_at: None,
        last_checked_at: None,
        auto_join: seed % 2 == 1,
        auto_join_roles: ["member", "billing.viewer"]
            .into_iter()
            .map(|r| RoleKey::parse(r).unwrap_or_else(|e| panic!("{r}: {e}")))
            .collect(),
        created_at: at,
        updated_at: at + Duration::microseconds(7),
    }
}

/// `domain` verified at `at`, a new revision.
fn verified(domain: &VerifiedDomain, at: OffsetDateTime) -> VerifiedDomain {
    VerifiedDomain {
        status: DomainStatus::Verified,
        verified_at: Some(at),
        last_checked_at: Some(at),
        updated_at: at,
        ..domain.clone()
    }
}

fn moment(tenant: &Tenant) -> OffsetDateTime {
    tenant.created_at + Duration::days(2) + Duration::microseconds(654_321)
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

fn assert_conflict<T: std::fmt::Debug>(result: Result<T, StoreError>, constraint: &str) {
    match result {
        Err(StoreError::Conflict { constraint: named }) => assert_eq!(named, constraint),
        other => panic!("{constraint}: expected a conflict, got {other:?}"),
    }
}

/// Every field of a claim reads back as written, by id and in its organization's list (id
/// order), inside the writing transaction and after commit. Another organization of the tenant,
/// another tenant, or an unknown id reads nothing. An organization claims a name once; another
/// organization of the tenant may claim it too. A claim for an organization that is not the
/// tenant's is the foreign key; empty auto-join roles and a verified claim without its time are
/// refused by the schema.
pub async fn domains_round_trip_and_are_claimed_once_per_organization(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let orgs = stored_orgs(&store, &acme, &["globex", "hooli"]).await;
    let (globex, hooli) = (&orgs[0], &orgs[1]);
    let foreign = stored_orgs(&store, &other, &["initech"]).await;
    let at = moment(&acme) + Duration::minutes(1);
    let first = domain_fixture(globex, 1, "example.com", at);
    let second = domain_fixture(
        globex,
        2,
        "xn--bcher-kva.example",
        at + Duration::seconds(1),
    );

    let mut tx = store.write().await.expect("write");
    tx.insert_domain(&second).await.expect("second");
    tx.insert_domain(&first).await.expect("first");
    assert_eq!(
        tx.domain(&acme.id, &globex.id, &first.id)
            .await
            .expect("read"),
        Some(first.clone())
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.domain(&acme.id, &globex.id, &second.id)
            .await
            .expect("read"),
        Some(second.clone())
    );
    assert_eq!(
        read.domains_of_organization(&acme.id, &globex.id)
            .await
            .expect("list"),
        vec![first.clone(), second.clone()],
        "in id order"
    );
    assert_eq!(
        read.domain(&acme.id, &hooli.id, &first.id)
            .await
            .expect("x"),
        None
    );
    assert_eq!(
        read.domain(&other.id, &globex.id, &first.id)
            .await
            .expect("x"),
        None
    );
    assert!(
        read.domains_of_organization(&other.id, &globex.id)
            .await
            .expect("list")
            .is_empty()
    );
    assert_eq!(
        read.verified_domain_by_name(&acme.id, &first.name)
            .await
            .expect("by name"),
        None,
        "pending claims are not found by name"
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    let again = domain_fixture(globex, 3, "example.com", at + Duration::seconds(2));
    assert_conflict(
        tx.insert_domain(&again).await,
        "verified_domains_org_name_key",
    );
    drop(tx);
    let mut tx = store.write().await.expect("write");
    let hooli_claim = domain_fixture(hooli, 4, "example.com", at + Duration::seconds(3));
    tx.insert_domain(&hooli_claim)
        .await
        .expect("another organization claims it too");
    tx.commit().await.expect("commit");

    // An organization of another tenant, named with this tenant: no such organization here.
    let planted = VerifiedDomain {
        organization_id: foreign[0].id.clone(),
        ..domain_fixture(globex, 5, "planted.example", at)
    };
    let mut tx = store.write().await.expect("write");
    assert_conflict(
        tx.insert_domain(&planted).await,
        "verified_domains_organization_fkey",
    );
    drop(tx);

    let mut tx = store.write().await.expect("write");
    let no_roles = VerifiedDomain {
        auto_join_roles: BTreeSet::new(),
        ..domain_fixture(globex, 6, "roles.example", at)
    };
    assert_refused_by_check(
        tx.insert_domain(&no_roles).await,
        "verified_domains_auto_join_roles_check",
    );
    drop(tx);
    let mut tx = store.write().await.expect("write");
    let untimed = VerifiedDomain {
        status: DomainStatus::Verified,
        ..domain_fixture(globex, 7, "untimed.example", at)
    };
    assert_refused_by_check(
        tx.insert_domain(&untimed).await,
        "verified_domains_verified_at_check",
    );
}

/// A name is verified by at most one organization of a tenant: verifying a second claim of it
/// (by update or by insert) is the partial unique index, while pending claims of it stay
/// possible; the verified claim is found by name in its tenant only. Another tenant verifies the
/// same name independently. Once the verified claim is deleted, another organization can verify.
pub async fn one_verified_claim_per_name_and_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let orgs = stored_orgs(&store, &acme, &["globex", "hooli", "initech"]).await;
    let theirs = stored_orgs(&store, &other, &["globex"]).await;
    let at = moment(&acme) + Duration::minutes(1);
    let a = domain_fixture(&orgs[0], 1, "example.com", at);
    let b = domain_fixture(&orgs[1], 2, "example.com", at + Duration::seconds(1));
    let t = domain_fixture(&theirs[0], 3, "example.com", at + Duration::seconds(2));
    let mut tx = store.write().await.expect("write");
    for d in [&a, &b, &t] {
        tx.insert_domain(d).await.expect("claim");
    }
    tx.commit().await.expect("commit");

    let later = at + Duration::minutes(5);
    let a_verified = verified(&a, later);
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_domain_if_unchanged(&a_verified, a.updated_at)
            .await
            .expect("verify a"),
        UpdateOutcome::Applied
    );
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_conflict(
        tx.update_domain_if_unchanged(&verified(&b, later), b.updated_at)
            .await,
        "verified_domains_tenant_name_verified_key",
    );
    drop(tx);
    let mut tx = store.write().await.expect("write");
    let c = verified(
        &domain_fixture(&orgs[2], 4, "example.com", at + Duration::seconds(4)),
        later,
    );
    assert_conflict(
        tx.insert_domain(&c).await,
        "verified_domains_tenant_name_verified_key",
    );
    drop(tx);
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_domain_if_unchanged(&verified(&t, later), t.updated_at)
            .await
            .expect("another tenant verifies its own claim"),
        UpdateOutcome::Applied
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.verified_domain_by_name(&acme.id, &a.name)
            .await
            .expect("by name"),
        Some(a_verified.clone())
    );
    assert_eq!(
        read.verified_domain_by_name(&other.id, &a.name)
            .await
            .expect("by name")
            .map(|d| d.organization_id),
        Some(theirs[0].id.clone())
    );
    assert_eq!(
        read.verified_domain_by_name(&acme.id, &DomainName::parse("eu.example.com").expect("n"))
            .await
            .expect("by name"),
        None,
        "exact names only"
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    assert!(
        tx.delete_domain(&acme.id, &orgs[0].id, &a.id)
            .await
            .expect("delete")
    );
    assert_eq!(
        tx.update_domain_if_unchanged(&verified(&b, later), b.updated_at)
            .await
            .expect("b verifies now"),
        UpdateOutcome::Applied
    );
    tx.commit().await.expect("commit");
}

/// An update applies only at the revision read: a stale revision changes nothing and says so,
/// a missing claim (or one of another organization or tenant) is not found. Deletion is scoped
/// to the tenant and organization, and deleting an organization deletes its claims.
pub async fn domain_updates_and_deletes_are_scoped_and_conditional(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let orgs = stored_orgs(&store, &acme, &["globex", "hooli"]).await;
    let at = moment(&acme) + Duration::minutes(1);
    let d = domain_fixture(&orgs[0], 1, "example.com", at);
    let e = domain_fixture(&orgs[0], 2, "example.org", at + Duration::seconds(1));
    let mut tx = store.write().await.expect("write");
    tx.insert_domain(&d).await.expect("d");
    tx.insert_domain(&e).await.expect("e");
    tx.commit().await.expect("commit");

    let changed = VerifiedDomain {
        auto_join: !d.auto_join,
        auto_join_roles: [RoleKey::parse("admin").expect("role")].into(),
        last_checked_at: Some(at + Duration::seconds(30)),
        token: "another-token-of-sixteen".into(),
        updated_at: at + Duration::minutes(1),
        ..d.clone()
    };
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_domain_if_unchanged(&changed, at)
            .await
            .expect("stale"),
        UpdateOutcome::Stale
    );
    assert_eq!(
        tx.update_domain_if_unchanged(&changed, d.updated_at)
            .await
            .expect("apply"),
        UpdateOutcome::Applied
    );
    assert_eq!(
        tx.domain(&acme.id, &orgs[0].id, &d.id).await.expect("read"),
        Some(changed.clone())
    );
    let elsewhere = VerifiedDomain {
        organization_id: orgs[1].id.clone(),
        ..changed.clone()
    };
    assert!(matches!(
        tx.update_domain_if_unchanged(&elsewhere, changed.updated_at)
            .await,
        Err(StoreError::NotFound)
    ));
    let other_tenant = VerifiedDomain {
        tenant_id: other.id.clone(),
        ..changed.clone()
    };
    assert!(matches!(
        tx.update_domain_if_unchanged(&other_tenant, changed.updated_at)
            .await,
        Err(StoreError::NotFound)
    ));
    assert!(
        !tx.delete_domain(&other.id, &orgs[0].id, &d.id)
            .await
            .expect("x")
    );
    assert!(
        !tx.delete_domain(&acme.id, &orgs[1].id, &d.id)
            .await
            .expect("x")
    );
    assert!(
        tx.delete_domain(&acme.id, &orgs[0].id, &d.id)
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_domain(&acme.id, &orgs[0].id, &d.id)
            .await
            .expect("again")
    );
    assert!(
        tx.delete_organization(&acme.id, &orgs[0].id)
            .await
            .expect("org")
    );
    assert!(
        tx.domains_of_organization(&acme.id, &orgs[0].id)
            .await
            .expect("list")
            .is_empty(),
        "the organization's claims went with it"
    );
    assert_eq!(
        tx.domain(&acme.id, &orgs[0].id, &e.id).await.expect("e"),
        None
    );
    tx.commit().await.expect("commit");
}
