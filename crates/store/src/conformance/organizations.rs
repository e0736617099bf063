//! Conformance: organizations (round trips by id and slug, slugs unique per tenant, keyset
//! pages both ways, compare-and-set updates, deletion with their memberships) and memberships
//! (round trips, one per person and organization, only in an organization of their tenant,
//! roles never empty, pages of members, a person's memberships across organizations), all
//! scoped to their tenant and deleted with it; with their fixtures.

use super::grants::stored_tenant;
use super::{assert_refused_by_check, tenant_fixture, user_fixture};
use crate::{Order, Store, StoreError, UpdateOutcome};
use futures_util::future::join_all;
use std::collections::BTreeSet;
use std::sync::Arc;
use svc_domain::{
    ManualClock, Membership, OrgSlug, OrgStatus, Organization, OrganizationId, RoleKey,
    SeededRandom, Tenant, TenantId, User, UserId,
};
use time::{Duration, OffsetDateTime};

/// Metadata with nested objects and arrays, every JSON type, quotes, non-ASCII text, the
/// escape `\u0000` and the largest unsigned integer: what the tenant's free object may hold.
const RICH_METADATA: &str = r#"{
    "plan": "enterprise",
    "seats": {"max": 250, "used": [1, 2.5, -3, -0.125]},
    "flags": {"sso": true, "scim": false, "beta": null},
    "note": "Zürich \"HQ\" \\ 東京 🚀 \u0000 end",
    "big": 18446744073709551615,
    "nested": {"deep": {"deeper": [{"k": "v"}, [], {}]}}
}"#;

/// An active organization of `tenant` with `slug`, created at `at` (at whole microseconds) and
/// changed a second and some microseconds later: a name with quotes and non-ASCII text and the
/// rich metadata above. Ids grow with `at`.
pub fn organization_fixture(
    tenant: &Tenant,
    seed: u64,
    slug: &str,
    at: OffsetDateTime,
) -> Organization {
    Organization {
        id: OrganizationId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        tenant_id: tenant.id.clone(),
        slug: OrgSlug::parse(slug).unwrap_or_else(|e| panic!("fixture slug {slug}: {e}")),
        name: format!("Société \"{seed}\" 株式会社 ü"),
        metadata: RICH_METADATA.parse().expect("fixture metadata"),
        status: OrgStatus::Active,
        created_at: at,
        updated_at: at + Duration::microseconds(1_000_017),
    }
}

/// The membership of `user` in `org` with `roles`, joined at `at`.
pub fn membership_fixture(
    org: &Organization,
    user: &User,
    roles: &[&str],
    at: OffsetDateTime,
) -> Membership {
    Membership {
        tenant_id: org.tenant_id.clone(),
        organization_id: org.id.clone(),
        user_id: user.id.clone(),
        roles: role_set(roles),
        created_at: at,
        updated_at: at + Duration::microseconds(3),
    }
}

fn role_set(roles: &[&str]) -> BTreeSet<RoleKey> {
    roles
        .iter()
        .map(|r| RoleKey::parse(r).unwrap_or_else(|e| panic!("fixture role {r}: {e}")))
        .collect()
}

/// An instant a day after the tenant's creation, on no whole millisecond.
fn moment(tenant: &Tenant) -> OffsetDateTime {
    tenant.created_at + Duration::days(1) + Duration::microseconds(123_457)
}

async fn insert_orgs(store: &Arc<dyn Store>, orgs: &[&Organization]) {
    let mut tx = store.write().await.expect("write");
    for org in orgs {
        tx.insert_organization(org)
            .await
            .unwrap_or_else(|e| panic!("insert {}: {e:?}", org.slug));
    }
    tx.commit().await.expect("commit");
}

async fn insert_memberships(store: &Arc<dyn Store>, memberships: &[&Membership]) {
    let mut tx = store.write().await.expect("write");
    for membership in memberships {
        tx.insert_membership(membership)
            .await
            .unwrap_or_else(|e| panic!("insert membership: {e:?}"));
    }
    tx.commit().await.expect("commit");
}

async fn read_org(
    store: &Arc<dyn Store>,
    tenant: &TenantId,
    id: &OrganizationId,
) -> Option<Organization> {
    let mut read = store.read().await.expect("read");
    let org = read.organization(tenant, id).await.expect("organization");
    read.finish().await.expect("finish");
    org
}

/// Asserts a refused write is the conflict `constraint`.
fn assert_conflict<T: std::fmt::Debug>(result: Result<T, StoreError>, constraint: &str) {
    match result {
        Err(StoreError::Conflict { constraint: named }) => assert_eq!(named, constraint),
        other => panic!("{constraint}: expected a conflict, got {other:?}"),
    }
}

/// Every field of an organization reads back as written, by id and by slug, inside the writing
/// transaction and after commit: a unicode name, metadata with nested objects and arrays (every
/// JSON type, `\u0000`, the largest u64), timestamps at microseconds; and an organization with
/// empty metadata, suspended. Another tenant, an unknown id or slug reads nothing.
pub async fn organizations_round_trip_by_id_and_slug(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let rich = organization_fixture(&acme, 1, "globex", at);
    assert!(rich.metadata["nested"]["deep"]["deeper"][0]["k"] == "v");
    let bare = Organization {
        name: "B".into(),
        metadata: Default::default(),
        status: OrgStatus::Suspended,
        ..organization_fixture(&acme, 2, "initech-eu-1", at + Duration::microseconds(9))
    };

    let mut tx = store.write().await.expect("write");
    tx.insert_organization(&rich).await.expect("rich");
    tx.insert_organization(&bare).await.expect("bare");
    assert_eq!(
        tx.organization(&acme.id, &rich.id)
            .await
            .expect("own write"),
        Some(rich.clone()),
        "visible inside the writing transaction"
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    for org in [&rich, &bare] {
        assert_eq!(
            read.organization(&acme.id, &org.id).await.expect("by id"),
            Some(org.clone()),
            "every field as written, by id"
        );
        assert_eq!(
            read.organization_by_slug(&acme.id, &org.slug)
                .await
                .expect("by slug"),
            Some(org.clone()),
            "every field as written, by slug"
        );
        assert_eq!(
            read.organization(&other.id, &org.id)
                .await
                .expect("cross-tenant id"),
            None,
            "another tenant reads nothing"
        );
        assert_eq!(
            read.organization_by_slug(&other.id, &org.slug)
                .await
                .expect("cross-tenant slug"),
            None
        );
    }
    let unknown = organization_fixture(&acme, 3, "unknown", at);
    assert_eq!(
        read.organization(&acme.id, &unknown.id)
            .await
            .expect("unknown id"),
        None
    );
    assert_eq!(
        read.organization_by_slug(&acme.id, &unknown.slug)
            .await
            .expect("unknown slug"),
        None
    );
    read.finish().await.expect("finish");
}

/// A slug is unique in its tenant: a second organization with it is the unique key's conflict
/// (named the same on every backend) and stores nothing, while another tenant may use it. A
/// repeated id in the tenant is the key's conflict, an unknown tenant the foreign key's.
pub async fn organization_slugs_are_unique_per_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let first = organization_fixture(&acme, 1, "globex", at);
    let elsewhere = organization_fixture(&other, 2, "globex", at);
    insert_orgs(&store, &[&first, &elsewhere]).await;

    // Each write in its own transaction: on PostgreSQL a failed statement aborts the transaction.
    let ghost = tenant_fixture("ghost", 9);
    for (org, constraint) in [
        (
            organization_fixture(&acme, 3, "globex", at + Duration::seconds(1)),
            "organizations_tenant_slug_key",
        ),
        (
            Organization {
                id: first.id.clone(),
                ..organization_fixture(&acme, 4, "hooli", at)
            },
            "organizations_pkey",
        ),
        (
            organization_fixture(&ghost, 5, "hooli", at),
            "organizations_tenant_id_fkey",
        ),
    ] {
        let mut tx = store.write().await.expect("write");
        assert_conflict(tx.insert_organization(&org).await, constraint);
    }

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.list_organizations(&acme.id, None, Order::Ascending, 10)
            .await
            .expect("acme's"),
        vec![first.clone()],
        "the refused inserts stored nothing"
    );
    assert_eq!(
        read.organization_by_slug(&other.id, &elsewhere.slug)
            .await
            .expect("other's"),
        Some(elsewhere),
        "the same slug in another tenant is another organization"
    );
    read.finish().await.expect("finish");
}

/// Listing pages through one tenant's organizations once each, in id order both ways, past the
/// cursor, with no overlap and nothing of another tenant.
pub async fn list_organizations_paginates_both_ways(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let empty = stored_tenant(&store, "empty", 3).await;
    let at = moment(&acme);
    let mut all = Vec::new();
    for i in 0..7u64 {
        // Inserted out of id order: the listing orders, not the insertion.
        let org = organization_fixture(
            &acme,
            10 + i,
            &format!("org-{i}"),
            at + Duration::milliseconds(((i * 5) % 7) as i64),
        );
        let theirs = organization_fixture(&other, 20 + i, &format!("org-{i}"), at);
        insert_orgs(&store, &[&org, &theirs]).await;
        all.push(org);
    }
    all.sort_by(|a, b| a.id.cmp(&b.id));

    for order in [Order::Ascending, Order::Descending] {
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let mut read = store.read().await.expect("read");
            let page = read
                .list_organizations(&acme.id, cursor.as_ref(), order, 3)
                .await
                .expect("list");
            read.finish().await.expect("finish");
            assert!(page.len() <= 3);
            if page.is_empty() {
                break;
            }
            cursor = page.last().map(|o| o.id.clone());
            seen.extend(page);
        }
        if order == Order::Descending {
            seen.reverse();
        }
        assert_eq!(seen, all, "{order:?}: every field, each once, in id order");
    }
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.list_organizations(&acme.id, Some(&all[4].id), Order::Descending, 2)
            .await
            .expect("older"),
        vec![all[3].clone(), all[2].clone()],
        "descending past a cursor"
    );
    assert!(
        read.list_organizations(&empty.id, None, Order::Ascending, 10)
            .await
            .expect("empty")
            .is_empty()
    );
    read.finish().await.expect("finish");
}

/// An update replaces slug, name, metadata, status and `updated_at` (never id, tenant or
/// creation time), only at the revision read: one carrying an older revision is Stale and
/// changes nothing, one microsecond off too; an absent organization (or one of another tenant)
/// is NotFound; a slug the tenant already uses is the unique key's conflict, while the slug an
/// organization gave up is free. Racing read-then-write transactions never lose an update.
pub async fn organization_updates_apply_only_at_the_revision_read(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let globex = organization_fixture(&acme, 1, "globex", at);
    let hooli = organization_fixture(&acme, 2, "hooli", at + Duration::seconds(1));
    insert_orgs(&store, &[&globex, &hooli]).await;
    let r0 = globex.updated_at;

    let renamed = Organization {
        slug: OrgSlug::parse("globex-corp").expect("slug"),
        name: "Globex Corporation ü".into(),
        metadata: r#"{"plan":"free","tags":["a","b"]}"#.parse().expect("metadata"),
        status: OrgStatus::Suspended,
        updated_at: r0 + Duration::microseconds(1),
        // Ignored: an update never moves the creation time.
        created_at: r0 + Duration::days(3),
        ..globex.clone()
    };
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_organization_if_unchanged(&renamed, r0)
            .await
            .expect("first"),
        UpdateOutcome::Applied
    );
    tx.commit().await.expect("commit");
    let after = Organization {
        created_at: globex.created_at,
        ..renamed.clone()
    };
    assert_eq!(
        read_org(&store, &acme.id, &globex.id).await,
        Some(after.clone())
    );

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.organization_by_slug(&acme.id, &renamed.slug)
            .await
            .expect("new slug"),
        Some(after.clone())
    );
    assert_eq!(
        read.organization_by_slug(&acme.id, &globex.slug)
            .await
            .expect("old slug"),
        None,
        "the old slug no longer names it"
    );
    read.finish().await.expect("finish");

    // A second writer that also read r0 is refused, and nothing it carried is written; one
    // microsecond off the stored revision is another revision too.
    let stale = Organization {
        name: "Stale".into(),
        updated_at: r0 + Duration::seconds(5),
        ..globex.clone()
    };
    let mut tx = store.write().await.expect("write");
    for read_at in [r0, after.updated_at - Duration::microseconds(1)] {
        assert_eq!(
            tx.update_organization_if_unchanged(&stale, read_at)
                .await
                .expect("stale"),
            UpdateOutcome::Stale
        );
    }
    let absent = organization_fixture(&acme, 3, "absent", at);
    assert!(matches!(
        tx.update_organization_if_unchanged(&absent, absent.updated_at)
            .await,
        Err(StoreError::NotFound)
    ));
    let moved = Organization {
        tenant_id: other.id.clone(),
        ..after.clone()
    };
    assert!(
        matches!(
            tx.update_organization_if_unchanged(&moved, after.updated_at)
                .await,
            Err(StoreError::NotFound)
        ),
        "another tenant's id finds nothing"
    );
    tx.commit().await.expect("commit");
    assert_eq!(
        read_org(&store, &acme.id, &globex.id).await,
        Some(after.clone()),
        "stale and misdirected updates change nothing"
    );

    // Taking another organization's slug; then the slug globex gave up is free.
    let mut tx = store.write().await.expect("write");
    let taking = Organization {
        slug: hooli.slug.clone(),
        updated_at: after.updated_at + Duration::seconds(1),
        ..after.clone()
    };
    assert_conflict(
        tx.update_organization_if_unchanged(&taking, after.updated_at)
            .await,
        "organizations_tenant_slug_key",
    );
    drop(tx);
    let reuse = Organization {
        slug: globex.slug.clone(),
        updated_at: hooli.updated_at + Duration::seconds(1),
        ..hooli.clone()
    };
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_organization_if_unchanged(&reuse, hooli.updated_at)
            .await
            .expect("reuse"),
        UpdateOutcome::Applied
    );
    tx.commit().await.expect("commit");
    assert_eq!(read_org(&store, &acme.id, &hooli.id).await, Some(reuse));
    assert_eq!(
        read_org(&store, &acme.id, &globex.id).await,
        Some(after.clone()),
        "the refused update changed nothing"
    );

    // Racing read-then-write transactions: each appends its mark to the name it read.
    let attempts = (0..4u8).map(|i| {
        let store = store.clone();
        let (tenant, id) = (acme.id.clone(), globex.id.clone());
        async move {
            let mut tx = store.write().await?;
            let read = tx
                .organization(&tenant, &id)
                .await?
                .ok_or(StoreError::NotFound)?;
            let next = Organization {
                name: format!("{}|{i}", read.name),
                updated_at: read.updated_at + Duration::milliseconds(1),
                ..read.clone()
            };
            let outcome = tx
                .update_organization_if_unchanged(&next, read.updated_at)
                .await?;
            tx.commit().await?;
            Ok::<_, StoreError>((i, outcome))
        }
    });
    let mut applied = Vec::new();
    for result in join_all(attempts).await {
        let (i, outcome) = result.expect("transaction");
        if outcome == UpdateOutcome::Applied {
            applied.push(i);
        }
    }
    assert!(!applied.is_empty(), "someone wins");
    let last = read_org(&store, &acme.id, &globex.id)
        .await
        .expect("stored");
    let mut marks: Vec<u8> = last
        .name
        .split('|')
        .skip(1)
        .map(|m| m.parse().expect("mark"))
        .collect();
    marks.sort_unstable();
    assert_eq!(
        marks, applied,
        "every applied update is kept: {}",
        last.name
    );
}

/// Deleting an organization deletes its memberships and nothing else (another organization's
/// members and the person's other memberships stay); a second delete, another tenant's delete
/// or an unknown id returns false and changes nothing.
pub async fn deleting_an_organization_deletes_its_memberships(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let globex = organization_fixture(&acme, 1, "globex", at);
    let hooli = organization_fixture(&acme, 2, "hooli", at + Duration::seconds(1));
    insert_orgs(&store, &[&globex, &hooli]).await;
    let ada_globex = membership_fixture(&globex, &ada, &["owner"], at);
    let bob_globex = membership_fixture(&globex, &bob, &["member"], at);
    let ada_hooli = membership_fixture(&hooli, &ada, &["admin", "member"], at);
    insert_memberships(&store, &[&ada_globex, &bob_globex, &ada_hooli]).await;

    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.delete_organization(&other.id, &globex.id)
            .await
            .expect("other tenant"),
        "not from another tenant"
    );
    assert_eq!(
        tx.list_members(&acme.id, &globex.id, None, 10)
            .await
            .expect("members"),
        {
            let mut both = vec![ada_globex.clone(), bob_globex.clone()];
            both.sort_by(|a, b| a.user_id.cmp(&b.user_id));
            both
        },
        "the refused delete changed nothing"
    );
    assert!(
        tx.delete_organization(&acme.id, &globex.id)
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_organization(&acme.id, &globex.id)
            .await
            .expect("again"),
        "already gone"
    );
    let unknown = organization_fixture(&acme, 3, "unknown", at);
    assert!(
        !tx.delete_organization(&acme.id, &unknown.id)
            .await
            .expect("unknown")
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.organization(&acme.id, &globex.id)
            .await
            .expect("deleted"),
        None
    );
    for user in [&ada, &bob] {
        assert_eq!(
            read.membership(&acme.id, &globex.id, &user.id)
                .await
                .expect("membership"),
            None,
            "memberships go with their organization"
        );
    }
    assert!(
        read.list_members(&acme.id, &globex.id, None, 10)
            .await
            .expect("members")
            .is_empty()
    );
    assert_eq!(
        read.memberships_of_user(&acme.id, &ada.id)
            .await
            .expect("ada's"),
        vec![ada_hooli.clone()],
        "ada's other membership stays"
    );
    assert!(
        read.memberships_of_user(&acme.id, &bob.id)
            .await
            .expect("bob's")
            .is_empty()
    );
    assert_eq!(
        read.organization(&acme.id, &hooli.id).await.expect("hooli"),
        Some(hooli)
    );
    read.finish().await.expect("finish");
}

/// A membership reads back as written (roles sorted, timestamps at microseconds), inside the
/// writing transaction and after commit; its roles are replaced with their `updated_at` (never
/// the join time); it is deleted once. A person is a member once per organization (the key's
/// conflict), only of an organization of the membership's tenant (the foreign key's conflict,
/// for another tenant's organization as for an unknown one), and never with no role (the
/// schema refuses it, on insert and on update). Writes to a membership that does not exist
/// return false.
pub async fn memberships_round_trip_and_are_unique_per_organization(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let globex = organization_fixture(&acme, 1, "globex", at);
    let theirs = organization_fixture(&other, 2, "theirs", at);
    insert_orgs(&store, &[&globex, &theirs]).await;
    let membership = membership_fixture(
        &globex,
        &ada,
        &["owner", "billing.viewer", "admin"],
        at + Duration::microseconds(77),
    );
    assert_eq!(
        membership
            .roles
            .iter()
            .map(RoleKey::as_str)
            .collect::<Vec<_>>(),
        ["admin", "billing.viewer", "owner"]
    );

    let mut tx = store.write().await.expect("write");
    tx.insert_membership(&membership).await.expect("insert");
    assert_eq!(
        tx.membership(&acme.id, &globex.id, &ada.id)
            .await
            .expect("own write"),
        Some(membership.clone()),
        "visible inside the writing transaction"
    );
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.membership(&acme.id, &globex.id, &ada.id)
            .await
            .expect("membership"),
        Some(membership.clone()),
        "every field as written"
    );
    assert_eq!(
        read.membership(&acme.id, &globex.id, &bob.id)
            .await
            .expect("bob"),
        None,
        "bob is no member"
    );
    read.finish().await.expect("finish");

    // Refused inserts, each in its own transaction.
    let ghost_org = organization_fixture(&acme, 3, "ghost", at);
    for (refused, constraint) in [
        (
            Membership {
                roles: role_set(&["member"]),
                ..membership.clone()
            },
            "organization_members_pkey",
        ),
        (
            // Acme's membership in the other tenant's organization.
            Membership {
                organization_id: theirs.id.clone(),
                ..membership_fixture(&globex, &bob, &["member"], at)
            },
            "organization_members_organization_fkey",
        ),
        (
            // The other tenant's membership in acme's organization.
            Membership {
                tenant_id: other.id.clone(),
                ..membership_fixture(&globex, &bob, &["member"], at)
            },
            "organization_members_organization_fkey",
        ),
        (
            membership_fixture(&ghost_org, &bob, &["member"], at),
            "organization_members_organization_fkey",
        ),
    ] {
        let mut tx = store.write().await.expect("write");
        assert_conflict(tx.insert_membership(&refused).await, constraint);
    }
    let mut tx = store.write().await.expect("write");
    assert_refused_by_check(
        tx.insert_membership(&membership_fixture(&globex, &bob, &[], at))
            .await,
        "organization_members_roles_check",
    );
    drop(tx);
    let mut tx = store.write().await.expect("write");
    assert_refused_by_check(
        tx.update_membership_roles(&acme.id, &globex.id, &ada.id, &BTreeSet::new(), at)
            .await,
        "organization_members_roles_check",
    );
    drop(tx);

    // Replacing the roles.
    let changed_at = at + Duration::seconds(30) + Duration::microseconds(5);
    let mut tx = store.write().await.expect("write");
    assert!(
        tx.update_membership_roles(
            &acme.id,
            &globex.id,
            &ada.id,
            &role_set(&["member", "admin"]),
            changed_at,
        )
        .await
        .expect("update roles")
    );
    assert!(
        !tx.update_membership_roles(
            &acme.id,
            &globex.id,
            &bob.id,
            &role_set(&["admin"]),
            changed_at
        )
        .await
        .expect("no such membership"),
        "bob is no member"
    );
    assert!(
        !tx.update_membership_roles(
            &acme.id,
            &ghost_org.id,
            &ada.id,
            &role_set(&["admin"]),
            changed_at
        )
        .await
        .expect("no such organization")
    );
    tx.commit().await.expect("commit");
    let updated = Membership {
        roles: role_set(&["admin", "member"]),
        updated_at: changed_at,
        ..membership.clone()
    };
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.membership(&acme.id, &globex.id, &ada.id)
            .await
            .expect("membership"),
        Some(updated.clone()),
        "roles and updated_at replaced, the join time kept; the refused writes stored nothing"
    );
    assert_eq!(
        read.list_members(&acme.id, &globex.id, None, 10)
            .await
            .expect("members"),
        vec![updated],
        "only ada is a member"
    );
    read.finish().await.expect("finish");

    // Deleting it, once.
    let mut tx = store.write().await.expect("write");
    assert!(
        !tx.delete_membership(&acme.id, &globex.id, &bob.id)
            .await
            .expect("bob's"),
        "no such membership"
    );
    assert!(
        tx.delete_membership(&acme.id, &globex.id, &ada.id)
            .await
            .expect("delete")
    );
    assert!(
        !tx.delete_membership(&acme.id, &globex.id, &ada.id)
            .await
            .expect("again"),
        "already gone"
    );
    assert_eq!(
        tx.membership(&acme.id, &globex.id, &ada.id)
            .await
            .expect("deleted"),
        None
    );
    tx.commit().await.expect("commit");
    assert_eq!(
        read_org(&store, &acme.id, &globex.id).await,
        Some(globex),
        "the organization stays without members"
    );
}

/// An organization's members page through in user-id order past the cursor, once each and only
/// that organization's; a person's memberships span every organization of the tenant they
/// belong to, in organization-id order, and nothing of another person or tenant.
pub async fn members_page_by_user_and_memberships_span_organizations(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let users: Vec<User> = (0..7u64)
        .map(|i| user_fixture(&acme, 10 + i, &format!("u{i}@example.com")))
        .collect();
    let eve = user_fixture(&other, 30, "eve@example.com");
    // Created out of id order: the listings order, not the insertion.
    let orgs: Vec<Organization> = (0..4u64)
        .map(|i| {
            organization_fixture(
                &acme,
                i,
                &format!("org-{i}"),
                at + Duration::milliseconds(((i * 3) % 4) as i64),
            )
        })
        .collect();
    let theirs = organization_fixture(&other, 9, "theirs", at);
    insert_orgs(&store, &orgs.iter().chain([&theirs]).collect::<Vec<_>>()).await;

    // Everyone is in orgs[0]; users[0] is also in orgs[1..], and orgs[1] has one more member.
    let mut members: Vec<Membership> = users
        .iter()
        .enumerate()
        .map(|(i, user)| {
            let role = if i == 0 { "owner" } else { "member" };
            membership_fixture(
                &orgs[0],
                user,
                &[role],
                at + Duration::microseconds(i as i64),
            )
        })
        .collect();
    let mut firsts: Vec<Membership> = orgs
        .iter()
        .map(|org| membership_fixture(org, &users[0], &["admin", "member"], at))
        .collect();
    firsts[0] = members[0].clone();
    let second_user_in_org1 = membership_fixture(&orgs[1], &users[1], &["member"], at);
    let eves = membership_fixture(&theirs, &eve, &["owner"], at);
    insert_memberships(
        &store,
        &members
            .iter()
            .chain(&firsts[1..])
            .chain([&second_user_in_org1, &eves])
            .collect::<Vec<_>>(),
    )
    .await;
    let mut org1 = vec![firsts[1].clone(), second_user_in_org1];
    org1.sort_by(|a, b| a.user_id.cmp(&b.user_id));
    members.sort_by(|a, b| a.user_id.cmp(&b.user_id));
    firsts.sort_by(|a, b| a.organization_id.cmp(&b.organization_id));

    let mut seen = Vec::new();
    let mut cursor: Option<UserId> = None;
    loop {
        let mut read = store.read().await.expect("read");
        let page = read
            .list_members(&acme.id, &orgs[0].id, cursor.as_ref(), 3)
            .await
            .expect("members");
        read.finish().await.expect("finish");
        assert!(page.len() <= 3);
        if page.is_empty() {
            break;
        }
        cursor = page.last().map(|m| m.user_id.clone());
        seen.extend(page);
    }
    assert_eq!(seen, members, "each member once, in user-id order");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.list_members(&acme.id, &orgs[1].id, None, 10)
            .await
            .expect("org 1"),
        org1
    );
    assert_eq!(
        read.memberships_of_user(&acme.id, &users[0].id)
            .await
            .expect("first user's"),
        firsts,
        "every organization, in id order"
    );
    assert_eq!(
        read.memberships_of_user(&acme.id, &users[1].id)
            .await
            .expect("second user's")
            .len(),
        2
    );
    assert_eq!(
        read.memberships_of_user(&acme.id, &users[6].id)
            .await
            .expect("last user's"),
        vec![
            members
                .iter()
                .find(|m| m.user_id == users[6].id)
                .cloned()
                .expect("member")
        ]
    );
    assert_eq!(
        read.memberships_of_user(&other.id, &eve.id)
            .await
            .expect("eve's"),
        vec![eves]
    );
    read.finish().await.expect("finish");
}

/// Everything is scoped to the tenant: with another tenant's id, reads find nothing and writes
/// change nothing (false, or NotFound for an update); deleting the tenant deletes its
/// organizations and their memberships, and leaves another tenant's alone.
pub async fn organizations_go_with_their_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let at = moment(&acme);
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let eve = user_fixture(&other, 2, "eve@example.com");
    let globex = organization_fixture(&acme, 1, "globex", at);
    let theirs = organization_fixture(&other, 2, "globex", at);
    insert_orgs(&store, &[&globex, &theirs]).await;
    let adas = membership_fixture(&globex, &ada, &["owner"], at);
    let eves = membership_fixture(&theirs, &eve, &["owner"], at);
    insert_memberships(&store, &[&adas, &eves]).await;

    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.organization(&other.id, &globex.id).await.expect("by id"),
        None
    );
    assert_eq!(
        tx.membership(&other.id, &globex.id, &ada.id)
            .await
            .expect("membership"),
        None
    );
    assert!(
        tx.list_members(&other.id, &globex.id, None, 10)
            .await
            .expect("members")
            .is_empty()
    );
    assert!(
        tx.memberships_of_user(&other.id, &ada.id)
            .await
            .expect("ada's")
            .is_empty()
    );
    assert!(
        !tx.update_membership_roles(&other.id, &globex.id, &ada.id, &role_set(&["admin"]), at)
            .await
            .expect("roles")
    );
    assert!(
        !tx.delete_membership(&other.id, &globex.id, &ada.id)
            .await
            .expect("membership")
    );
    assert!(
        !tx.delete_organization(&other.id, &globex.id)
            .await
            .expect("organization")
    );
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.membership(&acme.id, &globex.id, &ada.id)
            .await
            .expect("untouched"),
        Some(adas.clone()),
        "the misdirected writes changed nothing"
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    tx.delete_tenant(&acme.id).await.expect("delete tenant");
    tx.insert_tenant(&acme).await.expect("same tenant again");
    assert_eq!(
        tx.organization(&acme.id, &globex.id).await.expect("org"),
        None,
        "organizations go with their tenant"
    );
    assert_eq!(
        tx.organization_by_slug(&acme.id, &globex.slug)
            .await
            .expect("by slug"),
        None
    );
    assert!(
        tx.memberships_of_user(&acme.id, &ada.id)
            .await
            .expect("memberships")
            .is_empty(),
        "and so do their memberships"
    );
    // The slug and the id are free again in the recreated tenant: nothing of the old rows is
    // left to conflict with.
    tx.insert_organization(&globex).await.expect("insert again");
    tx.insert_membership(&adas).await.expect("membership again");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.organization(&other.id, &theirs.id)
            .await
            .expect("theirs"),
        Some(theirs.clone()),
        "another tenant's organization stays"
    );
    assert_eq!(
        read.memberships_of_user(&other.id, &eve.id)
            .await
            .expect("eve's"),
        vec![eves]
    );
    read.finish().await.expect("finish");
}
