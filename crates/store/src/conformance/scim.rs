//! Conformance: SCIM tokens are found by hash within their tenant until revoked; a person's
//! SCIM attributes are upserted, their `userName` unique per tenant case-insensitively; the
//! SCIM listing counts and pages the tenant's people that are not removed, narrowed to an
//! organization's members and by a filter whose values are bound, never spliced.

use super::grants::stored_tenant;
use super::organizations::{membership_fixture, organization_fixture};
use super::users::user_fixture;
use crate::{ScimAttr, ScimFilter, ScimOp, ScimValue, Store, StoreError};
use std::sync::Arc;
use svc_domain::{
    ManualClock, ScimProfile, ScimToken, ScimTokenId, SecretHash, SeededRandom, UserStatus,
};
use time::Duration;

fn eq(attr: ScimAttr, value: &str) -> ScimFilter {
    ScimFilter::Compare(attr, ScimOp::Eq, ScimValue::Str(value.into()))
}

/// A token reads back by its hash in its own tenant only, lists with the tenant's, and stops
/// authenticating once revoked (revoking twice reports nothing left to revoke); a token of an
/// unknown organization names the foreign key.
pub async fn scim_tokens_are_found_by_hash_in_their_tenant_until_revoked(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = acme.created_at + Duration::seconds(5);
    let org = organization_fixture(&acme, 3, "north", at);
    let token = |seed: u64, organization| ScimToken {
        id: ScimTokenId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: acme.id.clone(),
        organization_id: organization,
        hash: SecretHash::of(&format!("svcscim_{seed}")),
        created_at: at,
        revoked_at: None,
    };
    let tenant_wide = token(10, None);
    let scoped = token(11, Some(org.id.clone()));
    let mut tx = store.write().await.expect("write");
    tx.insert_organization(&org).await.expect("org");
    tx.insert_scim_token(&tenant_wide).await.expect("token");
    tx.insert_scim_token(&scoped).await.expect("scoped token");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.scim_token_by_hash(&acme.id, &SecretHash::of("svcscim_11"))
            .await
            .expect("by hash"),
        Some(scoped.clone())
    );
    assert_eq!(
        read.scim_token_by_hash(&other.id, &SecretHash::of("svcscim_10"))
            .await
            .expect("other tenant"),
        None
    );
    let listed = read.scim_tokens(&acme.id).await.expect("list");
    assert_eq!(listed.len(), 2);
    assert!(read.scim_tokens(&other.id).await.expect("other").is_empty());
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.revoke_scim_token(&other.id, &tenant_wide.id, at)
            .await
            .expect("other tenant's revoke")
    );
    assert!(
        tx.revoke_scim_token(&acme.id, &tenant_wide.id, at)
            .await
            .expect("revoke")
    );
    assert!(
        !tx.revoke_scim_token(&acme.id, &tenant_wide.id, at)
            .await
            .expect("again")
    );
    assert_eq!(
        tx.scim_token_by_hash(&acme.id, &tenant_wide.hash)
            .await
            .expect("revoked"),
        None
    );
    let listed = tx.scim_tokens(&acme.id).await.expect("list");
    assert!(listed.iter().any(|t| t.revoked_at == Some(at)));
    let mut orphan = token(12, None);
    orphan.organization_id = Some(organization_fixture(&acme, 4, "gone", at).id);
    match tx.insert_scim_token(&orphan).await {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "scim_tokens_organization_fkey");
        }
        other => panic!("expected the foreign key, got {other:?}"),
    }
}

/// A profile is upserted and read back; another person taking the same `userName` in any case
/// names `scim_users_user_name_key`, in another tenant it is free; deleting frees it.
pub async fn scim_user_names_are_unique_per_tenant_ignoring_case(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let ada = user_fixture(&acme, 10, "ada@example.com");
    let bob = user_fixture(&acme, 11, "bob@example.com");
    let eve = user_fixture(&other, 12, "eve@example.com");
    let at = acme.created_at + Duration::seconds(9);
    let profile = |user: &svc_domain::User, name: &str| ScimProfile {
        user_id: user.id.clone(),
        user_name: name.into(),
        external_id: Some("ext-\"1\"".into()),
        enterprise: svc_domain::EnterpriseUser {
            department: Some("Analytical \"Engines\" ✓".into()),
            manager: Some("mgr-1".into()),
            ..svc_domain::EnterpriseUser::default()
        },
        updated_at: at,
    };
    let mut tx = store.write().await.expect("write");
    for user in [&ada, &bob, &eve] {
        tx.insert_user(user).await.expect("user");
    }
    tx.set_scim_profile(&acme.id, &profile(&ada, "Ada.L"))
        .await
        .expect("profile");
    tx.set_scim_profile(&acme.id, &profile(&ada, "Ada.Lovelace"))
        .await
        .expect("upsert");
    tx.set_scim_profile(&other.id, &profile(&eve, "ada.lovelace"))
        .await
        .expect("other tenant");
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.scim_profile(&acme.id, &ada.id).await.expect("read"),
        Some(profile(&ada, "Ada.Lovelace"))
    );
    assert_eq!(
        tx.scim_profile(&acme.id, &bob.id).await.expect("none"),
        None
    );
    match tx
        .set_scim_profile(&acme.id, &profile(&bob, "ADA.LOVELACE"))
        .await
    {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "scim_users_user_name_key");
        }
        other => panic!("expected the unique index, got {other:?}"),
    }
    drop(tx);

    let mut tx = store.write().await.expect("write");
    assert!(
        tx.delete_scim_profile(&acme.id, &ada.id)
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_scim_profile(&acme.id, &ada.id)
            .await
            .expect("again")
    );
    tx.set_scim_profile(&acme.id, &profile(&bob, "ADA.LOVELACE"))
        .await
        .expect("freed");
    tx.commit().await.expect("commit");
}

/// The listing counts every match and pages in id order; removed people are never listed; an
/// organization narrows to its members; the filter compares case-insensitively, treats `%`,
/// `_` and quotes literally, and handles `not`, `pr`, `active`.
pub async fn scim_listing_filters_pages_and_scopes(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let at = acme.created_at + Duration::seconds(3);
    let org = organization_fixture(&acme, 2, "north", at);
    let mut people = Vec::new();
    for (seed, email) in [
        (10, "ada@example.com"),
        (11, "bob_x@example.com"),
        (12, "carol%@example.com"),
        (13, "dan@example.com"),
    ] {
        people.push(user_fixture(&acme, seed, email));
    }
    let mut removed = user_fixture(&acme, 14, "gone@example.com");
    removed.status = UserStatus::Removed;
    people[3].status = UserStatus::Suspended;
    let mut tx = store.write().await.expect("write");
    tx.insert_organization(&org).await.expect("org");
    for user in people.iter().chain([&removed]) {
        tx.insert_user(user).await.expect("user");
    }
    tx.insert_membership(&membership_fixture(&org, &people[0], &["member"], at))
        .await
        .expect("member");
    tx.set_scim_profile(
        &acme.id,
        &ScimProfile {
            user_id: people[0].id.clone(),
            user_name: "Ada.Lovelace".into(),
            external_id: Some("E-1".into()),
            enterprise: svc_domain::EnterpriseUser::default(),
            updated_at: at,
        },
    )
    .await
    .expect("profile");
    tx.commit().await.expect("commit");

    let ids = |page: &crate::ScimPage| -> Vec<String> {
        page.users
            .iter()
            .map(|u| u.user.email.to_string())
            .collect()
    };
    let mut read = store.read().await.expect("read");
    let all = read
        .scim_users(&acme.id, None, None, None, 0, 10)
        .await
        .expect("all");
    assert_eq!(all.total, 4, "the removed person is not listed");
    assert!(all.users.windows(2).all(|w| w[0].user.id < w[1].user.id));
    assert_eq!(
        all.users[0].profile.as_ref().map(|p| p.user_name.as_str()),
        Some("Ada.Lovelace")
    );
    let page = read
        .scim_users(&acme.id, None, None, None, 1, 2)
        .await
        .expect("page");
    assert_eq!((page.total, page.users.len()), (4, 2));
    assert_eq!(page.users[0].user.id, all.users[1].user.id);
    let none = read
        .scim_users(&acme.id, None, None, None, 0, 0)
        .await
        .expect("count only");
    assert_eq!((none.total, none.users.len()), (4, 0));

    let by_name = read
        .scim_users(
            &acme.id,
            None,
            Some(&eq(ScimAttr::UserName, "ADA.lovelace")),
            None,
            0,
            10,
        )
        .await
        .expect("userName");
    assert_eq!(ids(&by_name), ["ada@example.com"]);
    let by_email_as_name = read
        .scim_users(
            &acme.id,
            None,
            Some(&eq(ScimAttr::UserName, "Dan@Example.com")),
            None,
            0,
            10,
        )
        .await
        .expect("email as userName");
    assert_eq!(ids(&by_email_as_name), ["dan@example.com"]);
    let injected = read
        .scim_users(
            &acme.id,
            None,
            Some(&eq(ScimAttr::UserName, "x\" or 1=1 or \"\"=\"")),
            None,
            0,
            10,
        )
        .await
        .expect("injection is a value");
    assert_eq!(injected.total, 0);
    let percent = ScimFilter::Compare(ScimAttr::Email, ScimOp::Co, ScimValue::Str("%".into()));
    let found = read
        .scim_users(&acme.id, None, Some(&percent), None, 0, 10)
        .await
        .expect("literal percent");
    assert_eq!(ids(&found), ["carol%@example.com"]);
    let underscore =
        ScimFilter::Compare(ScimAttr::Email, ScimOp::Sw, ScimValue::Str("bob_".into()));
    let found = read
        .scim_users(&acme.id, None, Some(&underscore), None, 0, 10)
        .await
        .expect("literal underscore");
    assert_eq!(ids(&found), ["bob_x@example.com"]);
    let inactive = ScimFilter::Compare(ScimAttr::Active, ScimOp::Eq, ScimValue::Bool(false));
    let found = read
        .scim_users(&acme.id, None, Some(&inactive), None, 0, 10)
        .await
        .expect("active");
    assert_eq!(ids(&found), ["dan@example.com"]);
    let no_external = ScimFilter::Not(Box::new(eq(ScimAttr::ExternalId, "E-1")));
    let found = read
        .scim_users(&acme.id, None, Some(&no_external), None, 0, 10)
        .await
        .expect("not over an absent attribute");
    assert_eq!(found.total, 3);
    let wrong_case = read
        .scim_users(
            &acme.id,
            None,
            Some(&eq(ScimAttr::ExternalId, "e-1")),
            None,
            0,
            10,
        )
        .await
        .expect("externalId is caseExact");
    assert_eq!(wrong_case.total, 0);
    let either = ScimFilter::Or(vec![
        ScimFilter::Present(ScimAttr::ExternalId),
        ScimFilter::And(vec![
            ScimFilter::Compare(
                ScimAttr::Email,
                ScimOp::Ew,
                ScimValue::Str("N@EXAMPLE.COM".into()),
            ),
            ScimFilter::Const(true),
        ]),
    ]);
    let found = read
        .scim_users(&acme.id, None, Some(&either), None, 0, 10)
        .await
        .expect("or");
    assert_eq!(ids(&found), ["ada@example.com", "dan@example.com"]);

    // Times, to the millisecond: creation (1 ms apart here), and the later of the record's
    // and the SCIM attributes' change (Ada's profile, written at +3 s, after every record).
    let since = ScimFilter::Compare(
        ScimAttr::Created,
        ScimOp::Ge,
        ScimValue::Time(people[2].created_at),
    );
    let found = read
        .scim_users(&acme.id, None, Some(&since), None, 0, 10)
        .await
        .expect("meta.created");
    assert_eq!(ids(&found), ["carol%@example.com", "dan@example.com"]);
    let changed = ScimFilter::Compare(
        ScimAttr::LastModified,
        ScimOp::Gt,
        ScimValue::Time(acme.created_at + Duration::seconds(2)),
    );
    let found = read
        .scim_users(&acme.id, None, Some(&changed), None, 0, 10)
        .await
        .expect("meta.lastModified");
    assert_eq!(ids(&found), ["ada@example.com"]);

    let members = read
        .scim_users(&acme.id, Some(&org.id), None, None, 0, 10)
        .await
        .expect("members");
    assert_eq!(ids(&members), ["ada@example.com"]);
    let outsider = read
        .scim_users(
            &acme.id,
            Some(&org.id),
            Some(&eq(ScimAttr::Id, people[1].id.as_str())),
            None,
            0,
            10,
        )
        .await
        .expect("outsider");
    assert_eq!(outsider.total, 0);
    read.finish().await.expect("finish");
}
