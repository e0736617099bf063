//! Organizations and their memberships: their statements, their row forms
//! ([`OrganizationRow`], [`MembershipRow`]) and the `OrganizationReads`/`OrganizationWrites`
//! ports for [`SqlTx`].
//!
//! Every statement names the tenant, so another tenant's organization or membership reads as
//! absent and no write reaches it. The slug is unique per tenant: PostgreSQL names the
//! constraint `organizations_tenant_slug_key` in the violation, SQLite reports its columns
//! (`organizations_tenant_id_slug_key`), renamed here. A membership references its
//! organization by (tenant, id), so it cannot join another tenant's organization and goes with
//! the organization when it is deleted (the foreign key's cascade). An update of an
//! organization is conditional on the revision read (`updated_at`, compared for equality as the
//! column itself on both dialects, as for users).
//!
//! `metadata` is the JSON object as serde_json spells it, stored as text on both backends and
//! parsed back here; `roles` is a JSON array of role keys (text on SQLite, `jsonb` on
//! PostgreSQL), written sorted from the set. Listings are keyset pages over ids, which both
//! backends order bytewise.

use crate::dialect::Dialect;
use crate::naming;
use crate::record::{Record, encode_strings};
use crate::sorted::{self, Sorted};
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use std::collections::BTreeSet;
use svc_domain::{
    Membership, OrgSlug, OrgStatus, Organization, OrganizationId, RoleKey, TenantId, UserId,
};
use svc_store::{Order, OrganizationReads, OrganizationWrites, StoreError, UpdateOutcome};
use time::OffsetDateTime;

/// The unique key on the slug, as both backends report it.
const SLUG_KEY: &str = "organizations_tenant_slug_key";
/// What SQLite's message (`organizations.tenant_id, organizations.slug`) becomes in the SQLite
/// backend.
const SLUG_KEY_BY_COLUMNS: &str = "organizations_tenant_id_slug_key";
/// The foreign key to `tenants`, the only one of `organizations` (SQLite reports a failed
/// foreign key without naming it).
const TENANT_FKEY: &str = "organizations_tenant_id_fkey";
/// The foreign key to `organizations`, the only one of `organization_members`.
const ORGANIZATION_FKEY: &str = "organization_members_organization_fkey";

macro_rules! select_organizations {
    ($where:literal) => {
        concat!(
            "SELECT id, tenant_id, slug, name, metadata, status, created_at, updated_at \
             FROM organizations ",
            $where
        )
    };
}

const SELECT_BY_ID: &str = select_organizations!("WHERE tenant_id = $1 AND id = $2");
const SELECT_BY_SLUG: &str = select_organizations!("WHERE tenant_id = $1 AND slug = $2");
// `$2` is the cursor or the bound of its direction (`sorted::cursor`): a range scan of the key.
const LIST: Sorted = Sorted {
    asc: select_organizations!("WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3"),
    desc: select_organizations!("WHERE tenant_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3"),
};
const INSERT: &str = "INSERT INTO organizations (id, tenant_id, slug, name, metadata, status, \
     created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
// Never id, tenant_id or created_at; only at the revision read ($8). Equality on `updated_at`
// is exact on both dialects: PostgreSQL compares `timestamptz` values, and SQLite's text has one
// spelling per instant. Under READ COMMITTED, PostgreSQL re-evaluates the condition on the
// newest committed row version, so a writer that committed since the read makes this a no-op.
const UPDATE: &str = "UPDATE organizations SET slug = $3, name = $4, metadata = $5, \
     status = $6, updated_at = $7 WHERE tenant_id = $1 AND id = $2 AND updated_at = $8";
/// Whether the organization exists at all: tells a stale revision from a missing record after
/// a conditional update changed nothing.
const EXISTS: &str = "SELECT id FROM organizations WHERE tenant_id = $1 AND id = $2";
// Cascades to the organization's memberships.
const DELETE: &str = "DELETE FROM organizations WHERE tenant_id = $1 AND id = $2";

macro_rules! select_members {
    ($where:literal) => {
        concat!(
            "SELECT tenant_id, organization_id, user_id, roles, created_at, updated_at \
             FROM organization_members ",
            $where
        )
    };
}

const SELECT_MEMBER: &str =
    select_members!("WHERE tenant_id = $1 AND organization_id = $2 AND user_id = $3");
// `$3` is the cursor or the bound of the ascending direction: a range scan of the key.
const LIST_MEMBERS: &str = select_members!(
    "WHERE tenant_id = $1 AND organization_id = $2 AND user_id > $3 ORDER BY user_id LIMIT $4"
);
const MEMBERSHIPS_OF_USER: &str =
    select_members!("WHERE tenant_id = $1 AND user_id = $2 ORDER BY organization_id");
/// The roles the organization's own directory groups that `$2` belongs to grant: the person's
/// member rows by `scim_group_members_user_idx`, each group's scope by its key, its roles by
/// theirs. Repeats collapse in the set the caller builds.
const GROUP_ROLES: &str = "SELECT r.role_key FROM scim_group_members m \
     JOIN scim_groups g ON g.id = m.group_id AND g.tenant_id = m.tenant_id \
     JOIN scim_group_roles r ON r.group_id = m.group_id \
     WHERE m.tenant_id = $1 AND m.user_id = $2 AND g.organization_id = $3";
const INSERT_MEMBER: &str = "INSERT INTO organization_members (tenant_id, organization_id, \
     user_id, roles, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)";
const UPDATE_ROLES: &str = "UPDATE organization_members SET roles = $4, updated_at = $5 \
     WHERE tenant_id = $1 AND organization_id = $2 AND user_id = $3";
const DELETE_MEMBER: &str = "DELETE FROM organization_members \
     WHERE tenant_id = $1 AND organization_id = $2 AND user_id = $3";

#[async_trait]
impl<D: Dialect> OrganizationReads for SqlTx<D> {
    async fn organization(
        &mut self,
        tenant: &TenantId,
        id: &OrganizationId,
    ) -> Result<Option<Organization>, StoreError> {
        Stmt::new(SELECT_BY_ID)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn organization_by_slug(
        &mut self,
        tenant: &TenantId,
        slug: &OrgSlug,
    ) -> Result<Option<Organization>, StoreError> {
        Stmt::new(SELECT_BY_SLUG)
            .bind(tenant.as_str())
            .bind(slug.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn list_organizations(
        &mut self,
        tenant: &TenantId,
        after: Option<&OrganizationId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<Organization>, StoreError> {
        Stmt::new(LIST.pick(order))
            .bind(tenant.as_str())
            .bind(sorted::cursor(after.map(OrganizationId::as_str), order))
            .bind(i64::from(limit))
            .fetch_all_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn membership(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        user: &UserId,
    ) -> Result<Option<Membership>, StoreError> {
        Stmt::new(SELECT_MEMBER)
            .bind(tenant.as_str())
            .bind(org.as_str())
            .bind(user.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode_membership::<D>)
            .await
    }

    async fn list_members(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        after: Option<&UserId>,
        limit: u32,
    ) -> Result<Vec<Membership>, StoreError> {
        Stmt::new(LIST_MEMBERS)
            .bind(tenant.as_str())
            .bind(org.as_str())
            .bind(sorted::cursor(after.map(UserId::as_str), Order::Ascending))
            .bind(i64::from(limit))
            .fetch_all_with::<D, _>(self.conn(), decode_membership::<D>)
            .await
    }

    async fn memberships_of_user(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Vec<Membership>, StoreError> {
        Stmt::new(MEMBERSHIPS_OF_USER)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .fetch_all_with::<D, _>(self.conn(), decode_membership::<D>)
            .await
    }

    async fn held_organization_roles(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        user: &UserId,
    ) -> Result<Option<BTreeSet<RoleKey>>, StoreError> {
        let Some(membership) = self.membership(tenant, org, user).await? else {
            return Ok(None);
        };
        let rows = Stmt::new(GROUP_ROLES)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(org.as_str())
            .fetch_all::<D>(self.conn())
            .await?;
        let mut held = membership.roles;
        for row in &rows {
            let raw: String = Columns::<D>::new(row, "scim_group_roles").get("role_key")?;
            held.insert(
                Record {
                    table: "scim_group_roles",
                    name: user.as_str(),
                }
                .parse("role_key", &raw, RoleKey::parse)?,
            );
        }
        Ok(Some(held))
    }
}

#[async_trait]
impl<D: Dialect> OrganizationWrites for SqlTx<D> {
    async fn insert_organization(&mut self, org: &Organization) -> Result<(), StoreError> {
        Stmt::new(INSERT)
            .bind(org.id.as_str())
            .bind(org.tenant_id.as_str())
            .bind(org.slug.as_str())
            .bind(org.name.as_str())
            .bind(encode_metadata(org)?)
            .bind(org.status.as_str())
            .bind(org.created_at)
            .bind(org.updated_at)
            .execute::<D>(self.conn())
            .await
            .map_err(name_conflict)?;
        Ok(())
    }

    /// One conditional `UPDATE` (see [`UPDATE`]); when no row matched, a read tells a missing
    /// organization from one at another revision.
    async fn update_organization_if_unchanged(
        &mut self,
        org: &Organization,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError> {
        let changed = Stmt::new(UPDATE)
            .bind(org.tenant_id.as_str())
            .bind(org.id.as_str())
            .bind(org.slug.as_str())
            .bind(org.name.as_str())
            .bind(encode_metadata(org)?)
            .bind(org.status.as_str())
            .bind(org.updated_at)
            .bind(read_at)
            .execute::<D>(self.conn())
            .await
            .map_err(name_conflict)?;
        if changed > 0 {
            return Ok(UpdateOutcome::Applied);
        }
        let exists = Stmt::new(EXISTS)
            .bind(org.tenant_id.as_str())
            .bind(org.id.as_str())
            .fetch_optional::<D>(self.conn())
            .await?
            .is_some();
        if exists {
            Ok(UpdateOutcome::Stale)
        } else {
            Err(StoreError::NotFound)
        }
    }

    async fn delete_organization(
        &mut self,
        tenant: &TenantId,
        id: &OrganizationId,
    ) -> Result<bool, StoreError> {
        let deleted = Stmt::new(DELETE)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .execute::<D>(self.conn())
            .await?;
        Ok(deleted > 0)
    }

    async fn insert_membership(&mut self, membership: &Membership) -> Result<(), StoreError> {
        Stmt::new(INSERT_MEMBER)
            .bind(membership.tenant_id.as_str())
            .bind(membership.organization_id.as_str())
            .bind(membership.user_id.as_str())
            .bind_json(encode_roles(&membership.roles)?)
            .bind(membership.created_at)
            .bind(membership.updated_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, ORGANIZATION_FKEY))?;
        Ok(())
    }

    async fn update_membership_roles(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        user: &UserId,
        roles: &BTreeSet<RoleKey>,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(UPDATE_ROLES)
            .bind(tenant.as_str())
            .bind(org.as_str())
            .bind(user.as_str())
            .bind_json(encode_roles(roles)?)
            .bind(now)
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }

    async fn delete_membership(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        user: &UserId,
    ) -> Result<bool, StoreError> {
        let deleted = Stmt::new(DELETE_MEMBER)
            .bind(tenant.as_str())
            .bind(org.as_str())
            .bind(user.as_str())
            .execute::<D>(self.conn())
            .await?;
        Ok(deleted > 0)
    }
}

/// Gives the conflicts SQLite reports by column (or not at all) the names PostgreSQL reports.
fn name_conflict(err: StoreError) -> StoreError {
    naming::foreign_key(
        naming::rename(err, SLUG_KEY_BY_COLUMNS, SLUG_KEY),
        TENANT_FKEY,
    )
}

/// The metadata object as stored: serde_json's text of it.
fn encode_metadata(org: &Organization) -> Result<String, StoreError> {
    serde_json::to_string(&org.metadata)
        .map_err(|e| StoreError::Corrupt(format!("cannot encode a JSON object: {e}")))
}

/// The roles as stored: a JSON array of the keys, sorted (the set's order).
fn encode_roles(roles: &BTreeSet<RoleKey>) -> Result<String, StoreError> {
    encode_strings(roles.iter().map(RoleKey::as_str))
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<Organization, StoreError> {
    let c = Columns::<D>::new(row, "organizations");
    OrganizationRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        slug: c.get("slug")?,
        name: c.get("name")?,
        metadata: c.get("metadata")?,
        status: c.get("status")?,
        created_at: c.get("created_at")?,
        updated_at: c.get("updated_at")?,
    }
    .decode()
}

fn decode_membership<D: Dialect>(row: &Row<D>) -> Result<Membership, StoreError> {
    let c = Columns::<D>::new(row, "organization_members");
    MembershipRow {
        tenant_id: c.get("tenant_id")?,
        organization_id: c.get("organization_id")?,
        user_id: c.get("user_id")?,
        roles: c.json("roles")?,
        created_at: c.get("created_at")?,
        updated_at: c.get("updated_at")?,
    }
    .decode()
}

/// An `organizations` row as stored.
#[derive(Debug, Clone)]
struct OrganizationRow {
    id: String,
    tenant_id: String,
    slug: String,
    name: String,
    /// JSON object text.
    metadata: String,
    status: String,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

impl OrganizationRow {
    fn decode(self) -> Result<Organization, StoreError> {
        let r = Record {
            table: "organizations",
            name: &self.id,
        };
        Ok(Organization {
            id: r.parse("id", &self.id, OrganizationId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            slug: r.parse("slug", &self.slug, OrgSlug::parse)?,
            name: self.name,
            // Named by its length: the tenant's object may be long.
            metadata: serde_json::from_str(&self.metadata).map_err(|e| {
                r.corrupt(
                    "metadata",
                    &format_args!("({} bytes)", self.metadata.len()),
                    &format_args!("not a JSON object: {e}"),
                )
            })?,
            status: r.parse("status", &self.status, |s| {
                OrgStatus::parse(s).ok_or("unknown status")
            })?,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// An `organization_members` row as stored.
#[derive(Debug, Clone)]
struct MembershipRow {
    tenant_id: String,
    organization_id: String,
    user_id: String,
    /// JSON array text of role keys, never empty.
    roles: String,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

impl MembershipRow {
    fn decode(self) -> Result<Membership, StoreError> {
        let name = format!("{} in {}", self.user_id, self.organization_id);
        let r = Record {
            table: "organization_members",
            name: &name,
        };
        let roles = r
            .strings("roles", &self.roles)?
            .iter()
            .map(|role| r.parse("roles", role, RoleKey::parse))
            .collect::<Result<BTreeSet<_>, _>>()?;
        if roles.is_empty() {
            return Err(r.corrupt("roles", &self.roles, &"no role"));
        }
        Ok(Membership {
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            organization_id: r.parse(
                "organization_id",
                &self.organization_id,
                OrganizationId::parse,
            )?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            roles,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::{AT, TENANT, USER, check};

    const ORG: &str = "org_01jd0000000000000000000000";

    #[test]
    fn organization_rows_decode_and_name_each_bad_column() {
        let org = OrganizationRow {
            id: ORG.into(),
            tenant_id: TENANT.into(),
            slug: "acme-eu".into(),
            name: "Acme \"EU\" ü".into(),
            metadata: r#"{"plan":"gold","seats":{"max":10}}"#.into(),
            status: "suspended".into(),
            created_at: AT,
            updated_at: AT,
        };
        let decoded = org.clone().decode().unwrap();
        assert_eq!(decoded.status, OrgStatus::Suspended);
        assert_eq!(decoded.metadata["seats"]["max"], 10);
        check(
            org,
            OrganizationRow::decode,
            &[
                ("organizations.id", |r| r.id = USER.into()),
                ("organizations.tenant_id", |r| r.tenant_id = ORG.into()),
                ("organizations.slug", |r| r.slug = "Acme".into()),
                ("organizations.metadata", |r| r.metadata = "[]".into()),
                ("organizations.metadata", |r| r.metadata = "{".into()),
                ("organizations.status", |r| r.status = "deleted".into()),
            ],
        );
    }

    #[test]
    fn membership_rows_decode_and_name_each_bad_column() {
        let membership = MembershipRow {
            tenant_id: TENANT.into(),
            organization_id: ORG.into(),
            user_id: USER.into(),
            roles: r#"["member","admin","admin"]"#.into(),
            created_at: AT,
            updated_at: AT,
        };
        let decoded = membership.clone().decode().unwrap();
        assert_eq!(
            decoded
                .roles
                .iter()
                .map(RoleKey::as_str)
                .collect::<Vec<_>>(),
            ["admin", "member"],
            "a set, whatever the stored order"
        );
        check(
            membership,
            MembershipRow::decode,
            &[
                ("organization_members.tenant_id", |r| {
                    r.tenant_id = USER.into();
                }),
                ("organization_members.organization_id", |r| {
                    r.organization_id = TENANT.into();
                }),
                ("organization_members.user_id", |r| r.user_id = ORG.into()),
                ("organization_members.roles", |r| r.roles = "[]".into()),
                ("organization_members.roles", |r| r.roles = "{}".into()),
                ("organization_members.roles", |r| {
                    r.roles = r#"["Owner"]"#.into();
                }),
            ],
        );
    }

    #[test]
    fn roles_are_stored_sorted() {
        let roles: BTreeSet<RoleKey> = ["owner", "billing.viewer", "admin"]
            .into_iter()
            .map(|r| RoleKey::parse(r).unwrap())
            .collect();
        assert_eq!(
            encode_roles(&roles).unwrap(),
            r#"["admin","billing.viewer","owner"]"#
        );
    }

    #[test]
    fn conflicts_get_the_names_postgresql_reports() {
        let named = |constraint: &str| match name_conflict(StoreError::Conflict {
            constraint: constraint.to_owned(),
        }) {
            StoreError::Conflict { constraint } => Some(constraint),
            _ => None,
        };
        assert_eq!(named(SLUG_KEY_BY_COLUMNS).as_deref(), Some(SLUG_KEY));
        assert_eq!(named(SLUG_KEY).as_deref(), Some(SLUG_KEY));
        assert_eq!(
            named(naming::UNNAMED_FOREIGN_KEY).as_deref(),
            Some(TENANT_FKEY)
        );
        assert_eq!(
            named("organizations_pkey").as_deref(),
            Some("organizations_pkey")
        );
    }
}
