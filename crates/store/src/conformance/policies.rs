//! Conformance: access-control policies. Round trips with every list and rule (IPv4 and IPv6
//! networks, quotes and non-ASCII in names), names unique per tenant, a tenant's policies read
//! whole in id order and never another tenant's, compare-and-set updates, deletion.

use super::grants::stored_tenant;
use crate::{Store, StoreError, UpdateOutcome};
use std::sync::Arc;
use svc_domain::{
    AccessPolicy, ClientId, ManualClock, OrganizationId, PolicyId, PolicyRules, PolicyTargets,
    RoleKey, SeededRandom, Tenant,
};
use time::{Duration, OffsetDateTime};

/// A policy of `tenant` named `name`, created at `at` (whole microseconds) and changed a few
/// microseconds later. Ids grow with `at`.
pub fn policy_fixture(tenant: &Tenant, seed: u64, name: &str, at: OffsetDateTime) -> AccessPolicy {
    AccessPolicy {
        id: PolicyId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: tenant.id.clone(),
        name: name.to_owned(),
        description: format!("Policy \"{name}\" — ü"),
        enabled: seed.is_multiple_of(2),
        targets: PolicyTargets {
            applications: [ClientId::generate(
                &ManualClock::new(at),
                &SeededRandom::new(seed ^ 7),
            )]
            .into(),
            organizations: [OrganizationId::generate(
                &ManualClock::new(at),
                &SeededRandom::new(seed ^ 11),
            )]
            .into(),
            roles: [
                RoleKey::parse("accountant").expect("role"),
                RoleKey::parse("tenant_admin").expect("role"),
            ]
            .into(),
        },
        rules: PolicyRules {
            require_acr: Some(svc_domain::ACR_AAL2.to_owned()),
            allowed_ip_ranges: vec![
                "10.0.0.0/8".parse().expect("net"),
                "2001:db8::/32".parse().expect("net"),
            ],
            sign_in_methods: ["hwk".to_owned(), "otp".to_owned()].into(),
            max_session_age_secs: Some(3_600),
        },
        created_at: at,
        updated_at: at + Duration::microseconds(5),
    }
}

fn moment(tenant: &Tenant) -> OffsetDateTime {
    tenant.created_at + Duration::days(1) + Duration::microseconds(135_791)
}

/// Policies round-trip with every field; a tenant reads its own, in id order; names are unique
/// per tenant (the same name in another tenant is fine); a policy with only one rule and no
/// targets round-trips with its empty lists.
pub async fn access_policies_round_trip_and_names_are_unique_per_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let first = policy_fixture(&acme, 2, "finance \"mfa\" ü", at);
    let mut bare = policy_fixture(&acme, 3, "office network", at + Duration::seconds(1));
    bare.targets = PolicyTargets::default();
    bare.rules = PolicyRules {
        allowed_ip_ranges: vec!["192.0.2.0/24".parse().expect("net")],
        ..PolicyRules::default()
    };
    let theirs = policy_fixture(&other, 4, "finance \"mfa\" ü", at);

    let mut tx = store.write().await.expect("write");
    tx.insert_access_policy(&bare).await.expect("bare");
    tx.insert_access_policy(&first).await.expect("first");
    tx.insert_access_policy(&theirs)
        .await
        .expect("same name, other tenant");
    let twin = PolicyId::generate(&ManualClock::new(at), &SeededRandom::new(99));
    let clash = AccessPolicy {
        id: twin,
        ..first.clone()
    };
    match tx.insert_access_policy(&clash).await {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "access_policies_tenant_name_key");
        }
        other => panic!("a taken name must conflict, got {other:?}"),
    }
    drop(tx);

    let mut tx = store.write().await.expect("write");
    tx.insert_access_policy(&bare).await.expect("bare");
    tx.insert_access_policy(&first).await.expect("first");
    tx.insert_access_policy(&theirs).await.expect("theirs");
    tx.commit().await.expect("commit");

    let mut tx = store.read().await.expect("read");
    assert_eq!(
        tx.access_policy(&acme.id, &first.id).await.expect("read"),
        Some(first.clone())
    );
    assert_eq!(
        tx.access_policy(&other.id, &first.id).await.expect("read"),
        None,
        "another tenant's id reads as absent"
    );
    assert_eq!(
        tx.access_policies(&acme.id).await.expect("all"),
        vec![first.clone(), bare.clone()],
        "id order (the ids grow with creation time)"
    );
    assert_eq!(
        tx.access_policies(&other.id).await.expect("all"),
        vec![theirs]
    );
    tx.finish().await.expect("finish");
}

/// An update applies only at the revision read, reports a stale revision as such and a missing
/// policy as not found; a rename onto a taken name conflicts; deletion reports whether it
/// removed anything and never reaches another tenant's policy.
pub async fn access_policy_updates_apply_only_at_the_revision_read(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let first = policy_fixture(&acme, 2, "first", at);
    let second = policy_fixture(&acme, 3, "second", at + Duration::seconds(1));
    let mut tx = store.write().await.expect("write");
    tx.insert_access_policy(&first).await.expect("first");
    tx.insert_access_policy(&second).await.expect("second");
    tx.commit().await.expect("commit");

    let mut changed = first.clone();
    changed.enabled = !first.enabled;
    changed.rules = PolicyRules {
        max_session_age_secs: Some(60),
        ..PolicyRules::default()
    };
    changed.targets.organizations.clear();
    changed.updated_at = first.updated_at + Duration::seconds(2);
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_access_policy_if_unchanged(&changed, first.updated_at)
            .await
            .expect("update"),
        UpdateOutcome::Applied
    );
    assert_eq!(
        tx.update_access_policy_if_unchanged(&changed, first.updated_at)
            .await
            .expect("stale"),
        UpdateOutcome::Stale,
        "the revision read is gone"
    );
    let mut renamed = second.clone();
    renamed.name = "first".into();
    renamed.updated_at = second.updated_at + Duration::seconds(1);
    match tx
        .update_access_policy_if_unchanged(&renamed, second.updated_at)
        .await
    {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "access_policies_tenant_name_key");
        }
        other => panic!("a rename onto a taken name must conflict, got {other:?}"),
    }
    drop(tx);

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_access_policy_if_unchanged(&changed, first.updated_at)
            .await
            .expect("update"),
        UpdateOutcome::Applied
    );
    let mut foreign = changed.clone();
    foreign.tenant_id = other.id.clone();
    assert!(matches!(
        tx.update_access_policy_if_unchanged(&foreign, changed.updated_at)
            .await,
        Err(StoreError::NotFound)
    ));
    assert!(
        !tx.delete_access_policy(&other.id, &second.id)
            .await
            .expect("foreign delete"),
        "another tenant's delete reaches nothing"
    );
    assert!(
        tx.delete_access_policy(&acme.id, &second.id)
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_access_policy(&acme.id, &second.id)
            .await
            .expect("again")
    );
    tx.commit().await.expect("commit");

    let mut tx = store.read().await.expect("read");
    assert_eq!(
        tx.access_policies(&acme.id).await.expect("all"),
        vec![changed]
    );
    tx.finish().await.expect("finish");
}
