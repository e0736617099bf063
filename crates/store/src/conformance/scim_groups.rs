//! Conformance: SCIM groups live in one scope (the tenant's own, or one organization's) and
//! are invisible from any other; `displayName` is unique per scope ignoring case; members are
//! replaced as a whole, removed people are never listed, and `members.value` filters; the
//! groups of people read back per scope; listings of people and groups sort the same way on
//! every backend (lowercased byte order, missing values last ascending and first descending,
//! ties in id order).

use super::grants::stored_tenant;
use super::organizations::organization_fixture;
use super::users::user_fixture;
use crate::{ScimAttr, ScimFilter, ScimGroupAttr, ScimOp, ScimSort, ScimValue, Store, StoreError};
use std::sync::Arc;
use svc_domain::{
    ManualClock, ScimGroup, ScimGroupId, ScimProfile, SeededRandom, Tenant, UserId, UserStatus,
};
use time::{Duration, OffsetDateTime};

fn group(
    tenant: &Tenant,
    seed: u64,
    org: Option<&svc_domain::Organization>,
    name: &str,
) -> ScimGroup {
    let at = tenant.created_at + Duration::milliseconds(seed as i64);
    ScimGroup {
        id: ScimGroupId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: tenant.id.clone(),
        organization_id: org.map(|o| o.id.clone()),
        display_name: name.into(),
        external_id: None,
        created_at: at,
        updated_at: at,
    }
}

fn member(id: &UserId) -> ScimFilter<ScimGroupAttr> {
    ScimFilter::Compare(
        ScimGroupAttr::Member,
        ScimOp::Eq,
        ScimValue::Str(id.as_str().to_owned()),
    )
}

/// Scopes, uniqueness, members and deletion of groups.
pub async fn scim_groups_are_scoped_unique_and_keep_their_members(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let at = acme.created_at + Duration::seconds(3);
    let north = organization_fixture(&acme, 2, "north", at);
    let ada = user_fixture(&acme, 10, "ada@example.com");
    let bob = user_fixture(&acme, 11, "bob@example.com");
    let mut gone = user_fixture(&acme, 12, "gone@example.com");
    gone.status = UserStatus::Removed;
    let sales = group(&acme, 20, None, "Sales");
    let north_sales = group(&acme, 21, Some(&north), "sales");
    let mut tx = store.write().await.expect("write");
    tx.insert_organization(&north).await.expect("org");
    for user in [&ada, &bob, &gone] {
        tx.insert_user(user).await.expect("user");
    }
    tx.insert_scim_group(&sales).await.expect("tenant group");
    tx.insert_scim_group(&north_sales)
        .await
        .expect("the same name in another scope");
    tx.set_scim_group_members(&acme.id, &sales.id, &[ada.id.clone(), gone.id.clone()])
        .await
        .expect("members");
    tx.set_scim_group_members(&acme.id, &north_sales.id, std::slice::from_ref(&bob.id))
        .await
        .expect("org members");
    tx.commit().await.expect("commit");

    let mut tx = store.write().await.expect("write");
    let taken = tx
        .insert_scim_group(&group(&acme, 22, None, "SALES"))
        .await
        .expect_err("taken in the tenant's scope");
    assert!(
        matches!(&taken, StoreError::Conflict { constraint } if constraint == "scim_groups_display_name_key"),
        "{taken:?}"
    );
    drop(tx);

    let mut read = store.read().await.expect("read");
    let tenant_groups = read
        .scim_groups(&acme.id, None, None, None, 0, 10)
        .await
        .expect("tenant scope");
    assert_eq!(tenant_groups.total, 1);
    assert_eq!(tenant_groups.groups[0].group, sales);
    assert_eq!(
        tenant_groups.groups[0].members,
        std::slice::from_ref(&ada.id),
        "the removed person is not listed"
    );
    let org_groups = read
        .scim_groups(&acme.id, Some(&north.id), None, None, 0, 10)
        .await
        .expect("org scope");
    assert_eq!(org_groups.total, 1);
    assert_eq!(org_groups.groups[0].group.id, north_sales.id);
    let by_member = read
        .scim_groups(&acme.id, None, Some(&member(&bob.id)), None, 0, 10)
        .await
        .expect("member filter");
    assert_eq!(
        by_member.total, 0,
        "bob is in the organization's group only"
    );
    let by_removed = read
        .scim_groups(&acme.id, None, Some(&member(&gone.id)), None, 0, 10)
        .await
        .expect("removed member filter");
    assert_eq!(by_removed.total, 0, "removed people match nothing");
    let by_ada = read
        .scim_groups(&acme.id, None, Some(&member(&ada.id)), None, 0, 10)
        .await
        .expect("ada");
    assert_eq!(by_ada.total, 1);
    let of_people = read
        .scim_groups_of_users(&acme.id, None, &[ada.id.clone(), bob.id.clone()])
        .await
        .expect("groups of people");
    assert_eq!(of_people.len(), 1);
    assert_eq!(
        (
            &of_people[0].user_id,
            &of_people[0].group_id,
            of_people[0].display_name.as_str()
        ),
        (&ada.id, &sales.id, "Sales")
    );
    let of_bob = read
        .scim_groups_of_users(&acme.id, Some(&north.id), std::slice::from_ref(&bob.id))
        .await
        .expect("org groups of bob");
    assert_eq!(of_bob.len(), 1);
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    let renamed = ScimGroup {
        display_name: "Sales EU".into(),
        external_id: Some("E-7".into()),
        updated_at: at + Duration::seconds(9),
        ..sales.clone()
    };
    assert!(tx.update_scim_group(&renamed).await.expect("update"));
    let wrong_scope = ScimGroup {
        organization_id: Some(north.id.clone()),
        ..renamed.clone()
    };
    assert!(
        !tx.update_scim_group(&wrong_scope)
            .await
            .expect("another scope")
    );
    tx.set_scim_group_members(&acme.id, &sales.id, std::slice::from_ref(&bob.id))
        .await
        .expect("replace members");
    assert!(
        !tx.delete_scim_group(&acme.id, Some(&north.id), &sales.id)
            .await
            .expect("another scope")
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    let page = read
        .scim_groups(&acme.id, None, None, None, 0, 10)
        .await
        .expect("after update");
    assert_eq!(page.groups[0].group, renamed);
    assert_eq!(
        page.groups[0].members,
        std::slice::from_ref(&bob.id),
        "replaced as a whole"
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    assert!(
        tx.delete_scim_group(&acme.id, None, &sales.id)
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_scim_group(&acme.id, None, &sales.id)
            .await
            .expect("again")
    );
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert!(
        read.scim_groups_of_users(&acme.id, None, std::slice::from_ref(&bob.id))
            .await
            .expect("gone")
            .is_empty()
    );
    assert_eq!(
        read.scim_groups(&acme.id, Some(&north.id), None, None, 0, 10)
            .await
            .expect("org group stays")
            .total,
        1
    );
    read.finish().await.expect("finish");
}

/// Sorting by strings (ignoring case, in byte order, so non-ASCII letters come after every
/// ASCII one), by `externalId` (case-exact), by time, both directions, with missing values
/// last when ascending and first when descending and ties in id order; paging follows the
/// sort.
pub async fn scim_sorting_is_the_same_on_every_backend(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let mut people = Vec::new();
    for (seed, email, family, external) in [
        (10, "p10@example.com", Some("b"), Some("b")),
        (11, "p11@example.com", Some("A"), Some("B")),
        (12, "p12@example.com", None, None),
        (13, "p13@example.com", Some("a"), Some("a")),
        (14, "p14@example.com", Some("Émile"), None),
        (15, "p15@example.com", Some("z"), Some("A")),
    ] {
        let mut user = user_fixture(&acme, seed, email);
        user.family_name = family.map(str::to_owned);
        // Created in the reverse order of the seeds.
        user.created_at = acme.created_at + Duration::seconds(100 - seed as i64);
        people.push((user, external));
    }
    let mut tx = store.write().await.expect("write");
    for (user, external) in &people {
        tx.insert_user(user).await.expect("user");
        if let Some(external) = external {
            tx.set_scim_profile(
                &acme.id,
                &ScimProfile {
                    user_id: user.id.clone(),
                    user_name: format!("U-{}", user.email),
                    external_id: Some((*external).to_owned()),
                    enterprise: svc_domain::EnterpriseUser::default(),
                    updated_at: user.updated_at,
                },
            )
            .await
            .expect("profile");
        }
    }
    let names = ["beta", "Alpha", "alpha2", "Ärger", "ALPHA1"];
    for (i, name) in names.iter().enumerate() {
        let mut g = group(&acme, 30 + i as u64, None, name);
        g.created_at = OffsetDateTime::UNIX_EPOCH + Duration::days(20_000 - i as i64);
        tx.insert_scim_group(&g).await.expect("group");
    }
    tx.commit().await.expect("commit");
    let seed_of = |id: &UserId| -> u64 {
        people
            .iter()
            .position(|(u, _)| &u.id == id)
            .map_or(0, |i| 10 + i as u64)
    };

    let mut read = store.read().await.expect("read");
    let mut order = Vec::new();
    for (attr, descending) in [
        (ScimAttr::FamilyName, false),
        (ScimAttr::FamilyName, true),
        (ScimAttr::ExternalId, false),
        (ScimAttr::Created, false),
        (ScimAttr::Created, true),
    ] {
        let page = read
            .scim_users(
                &acme.id,
                None,
                None,
                Some(&ScimSort { attr, descending }),
                0,
                10,
            )
            .await
            .expect("sorted");
        order.push(
            page.users
                .iter()
                .map(|u| seed_of(&u.user.id))
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(order[0], [11, 13, 10, 15, 14, 12], "familyName ascending");
    assert_eq!(order[1], [12, 14, 15, 10, 11, 13], "familyName descending");
    assert_eq!(order[2], [15, 11, 13, 10, 12, 14], "externalId, case-exact");
    assert_eq!(order[3], [15, 14, 13, 12, 11, 10], "meta.created ascending");
    assert_eq!(
        order[4],
        [10, 11, 12, 13, 14, 15],
        "meta.created descending"
    );
    let second_page = read
        .scim_users(
            &acme.id,
            None,
            None,
            Some(&ScimSort {
                attr: ScimAttr::FamilyName,
                descending: false,
            }),
            2,
            2,
        )
        .await
        .expect("page");
    assert_eq!(
        second_page
            .users
            .iter()
            .map(|u| seed_of(&u.user.id))
            .collect::<Vec<_>>(),
        [10, 15]
    );
    let groups = read
        .scim_groups(
            &acme.id,
            None,
            None,
            Some(&ScimSort {
                attr: ScimGroupAttr::DisplayName,
                descending: false,
            }),
            0,
            10,
        )
        .await
        .expect("groups by name");
    let shown: Vec<&str> = groups
        .groups
        .iter()
        .map(|g| g.group.display_name.as_str())
        .collect();
    assert_eq!(shown, ["Alpha", "ALPHA1", "alpha2", "beta", "Ärger"]);
    let by_created = read
        .scim_groups(
            &acme.id,
            None,
            None,
            Some(&ScimSort {
                attr: ScimGroupAttr::Created,
                descending: true,
            }),
            0,
            10,
        )
        .await
        .expect("groups by creation");
    let shown: Vec<&str> = by_created
        .groups
        .iter()
        .map(|g| g.group.display_name.as_str())
        .collect();
    assert_eq!(shown, names);
    read.finish().await.expect("finish");
}

/// Roles of the tenant's directory groups: replaced as a set, granted to the group's members
/// besides their own roles (repeats once), gone with the group or the membership, counted as
/// holders of the role, and invisible from another tenant.
pub async fn scim_group_roles_reach_members_and_go_with_the_group(store: Arc<dyn Store>) {
    use svc_domain::RoleKey;
    let key = |k: &str| RoleKey::parse(k).unwrap();
    let set = |keys: &[&str]| {
        keys.iter()
            .map(|k| key(k))
            .collect::<std::collections::BTreeSet<_>>()
    };
    let acme = stored_tenant(&store, "acme", 31).await;
    let other = stored_tenant(&store, "other", 32).await;
    let ada = user_fixture(&acme, 40, "ada@example.com");
    let bob = user_fixture(&acme, 41, "bob@example.com");
    let engineers = group(&acme, 50, None, "Engineers");
    let at = acme.created_at + Duration::seconds(5);
    let mut tx = store.write().await.expect("write");
    for user in [&ada, &bob] {
        tx.insert_user(user).await.expect("user");
    }
    tx.insert_scim_group(&engineers).await.expect("group");
    tx.set_scim_group_members(&acme.id, &engineers.id, std::slice::from_ref(&ada.id))
        .await
        .expect("members");
    tx.set_user_roles(&acme.id, &ada.id, &set(&["auditor"]), at)
        .await
        .expect("direct role");
    tx.set_scim_group_roles(&acme.id, &engineers.id, &set(&["auditor", "developer"]), at)
        .await
        .expect("group roles");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.scim_group_roles(&acme.id, &engineers.id)
            .await
            .expect("roles"),
        set(&["auditor", "developer"])
    );
    assert!(
        read.scim_group_roles(&other.id, &engineers.id)
            .await
            .expect("other")
            .is_empty(),
        "another tenant reads none"
    );
    assert_eq!(
        read.granted_roles(&acme.id, &ada.id)
            .await
            .expect("granted"),
        set(&["auditor", "developer"]),
        "direct and group roles, each once"
    );
    assert_eq!(
        read.user_roles(&acme.id, &ada.id).await.expect("direct"),
        set(&["auditor"]),
        "the direct roles alone are unchanged"
    );
    assert!(
        read.granted_roles(&acme.id, &bob.id)
            .await
            .expect("bob")
            .is_empty()
    );
    assert!(
        read.granted_roles(&other.id, &ada.id)
            .await
            .expect("other")
            .is_empty(),
        "not through another tenant"
    );
    assert_eq!(
        read.role_holders(&acme.id, &key("developer"))
            .await
            .expect("holders"),
        1
    );
    read.finish().await.expect("finish");

    // Replaced as a set; the membership moves; then the group goes.
    let mut tx = store.write().await.expect("write");
    tx.set_scim_group_roles(&acme.id, &engineers.id, &set(&["developer"]), at)
        .await
        .expect("replace");
    tx.set_scim_group_members(&acme.id, &engineers.id, std::slice::from_ref(&bob.id))
        .await
        .expect("members");
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.granted_roles(&acme.id, &ada.id).await.expect("ada"),
        set(&["auditor"])
    );
    assert_eq!(
        read.granted_roles(&acme.id, &bob.id).await.expect("bob"),
        set(&["developer"])
    );
    read.finish().await.expect("finish");
    let mut tx = store.write().await.expect("write");
    assert!(
        tx.delete_scim_group(&acme.id, None, &engineers.id)
            .await
            .expect("delete")
    );
    tx.commit().await.expect("commit");
    let mut tx = store.write().await.expect("write");
    let unknown = tx
        .set_scim_group_roles(&acme.id, &engineers.id, &set(&["developer"]), at)
        .await
        .expect_err("no such group");
    assert!(
        matches!(&unknown, StoreError::Conflict { constraint } if constraint == "scim_group_roles_group_fkey"),
        "{unknown:?}"
    );
    drop(tx);
    let mut read = store.read().await.expect("read");
    assert!(
        read.granted_roles(&acme.id, &bob.id)
            .await
            .expect("bob")
            .is_empty()
    );
    assert_eq!(
        read.role_holders(&acme.id, &key("developer"))
            .await
            .expect("holders"),
        0
    );
}

/// Roles of an organization's directory groups: read with the membership in that organization
/// only (its own roles besides, repeats once), nothing for someone outside it or in another
/// organization, never among the person's tenant roles, gone when the directory takes the
/// person out of the group.
pub async fn organization_group_roles_stay_in_their_organization(store: Arc<dyn Store>) {
    use super::organizations::membership_fixture;
    use svc_domain::RoleKey;
    let set = |keys: &[&str]| {
        keys.iter()
            .map(|k| RoleKey::parse(k).unwrap())
            .collect::<std::collections::BTreeSet<_>>()
    };
    let acme = stored_tenant(&store, "acme", 33).await;
    let at = acme.created_at + Duration::seconds(5);
    let north = organization_fixture(&acme, 60, "north", at);
    let south = organization_fixture(&acme, 61, "south", at);
    let ada = user_fixture(&acme, 42, "ada@example.com");
    let bob = user_fixture(&acme, 43, "bob@example.com");
    let leads = group(&acme, 51, Some(&north), "Leads");
    let mut tx = store.write().await.expect("write");
    for user in [&ada, &bob] {
        tx.insert_user(user).await.expect("user");
    }
    for org in [&north, &south] {
        tx.insert_organization(org).await.expect("organization");
    }
    tx.insert_membership(&membership_fixture(&north, &ada, &["member"], at))
        .await
        .expect("ada in north");
    tx.insert_membership(&membership_fixture(&south, &ada, &["member"], at))
        .await
        .expect("ada in south");
    tx.insert_scim_group(&leads).await.expect("group");
    // Bob is in the group without being a member of north.
    tx.set_scim_group_members(&acme.id, &leads.id, &[ada.id.clone(), bob.id.clone()])
        .await
        .expect("members");
    tx.set_scim_group_roles(&acme.id, &leads.id, &set(&["admin", "member"]), at)
        .await
        .expect("group roles");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.held_organization_roles(&acme.id, &north.id, &ada.id)
            .await
            .expect("north"),
        Some(set(&["admin", "member"])),
        "her membership's role and the group's, each once"
    );
    assert_eq!(
        read.membership(&acme.id, &north.id, &ada.id)
            .await
            .expect("membership")
            .map(|m| m.roles),
        Some(set(&["member"])),
        "the membership keeps its own roles"
    );
    assert_eq!(
        read.held_organization_roles(&acme.id, &south.id, &ada.id)
            .await
            .expect("south"),
        Some(set(&["member"])),
        "not in another organization"
    );
    assert_eq!(
        read.held_organization_roles(&acme.id, &north.id, &bob.id)
            .await
            .expect("bob"),
        None,
        "a group makes nobody a member"
    );
    assert!(
        read.granted_roles(&acme.id, &ada.id)
            .await
            .expect("tenant roles")
            .is_empty(),
        "an organization's group grants no tenant role"
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    tx.set_scim_group_members(&acme.id, &leads.id, std::slice::from_ref(&bob.id))
        .await
        .expect("members");
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.held_organization_roles(&acme.id, &north.id, &ada.id)
            .await
            .expect("north"),
        Some(set(&["member"])),
        "out of the group, out of its roles"
    );
    read.finish().await.expect("finish");
}
