//! SCIM 2.0 groups: the statements of `scim_groups` and `scim_group_members`, the filtered and
//! sorted listing of `GET /Groups`, and the `ScimGroupReads` / `ScimGroupWrites` ports for
//! [`SqlTx`].
//!
//! Every statement names the group's scope (the tenant's own groups: `organization_id IS
//! NULL`; else one organization's). `displayName` is unique per scope ignoring case through
//! the `scim_groups_display_name_key` index on `lower(display_name)`, which SQLite reports by
//! name too. Members that are removed people are never read. Filters and sorts are rendered by
//! `crate::scim_filter` with bound parameters only.

use crate::dialect::{Dialect, Kind};
use crate::naming;
use crate::record::Record;
use crate::{Arg, Columns, PerDialect, Row, SqlTx, Stmt, scim_filter};
use async_trait::async_trait;
use std::collections::{BTreeMap, BTreeSet};
use svc_domain::{OrganizationId, RoleKey, ScimGroup, ScimGroupId, TenantId, UserId};
use svc_store::{
    ScimFilter, ScimGroupAttr, ScimGroupMembership, ScimGroupPage, ScimGroupReads, ScimGroupRecord,
    ScimGroupWrites, ScimSort, StoreError,
};
use time::OffsetDateTime;

const COUNT: &str = "SELECT COUNT(*) AS n FROM scim_groups g WHERE g.tenant_id = ";
const PAGE: &str = "SELECT g.id, g.tenant_id, g.organization_id, g.display_name, \
     g.external_id, g.created_at, g.updated_at FROM scim_groups g WHERE g.tenant_id = ";
const MEMBERS: &str = "SELECT gm.group_id, gm.user_id FROM scim_group_members gm \
     JOIN users u ON u.id = gm.user_id AND u.status <> 'removed' WHERE gm.group_id ";
const GROUPS_OF: &str = "SELECT gm.user_id, g.id, g.display_name FROM scim_group_members gm \
     JOIN scim_groups g ON g.id = gm.group_id WHERE g.tenant_id = ";
const INSERT: &str = "INSERT INTO scim_groups (id, tenant_id, organization_id, display_name, \
     external_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)";
const UPDATE: &str = "UPDATE scim_groups SET display_name = ";
const DELETE_MEMBERS: &str =
    "DELETE FROM scim_group_members WHERE tenant_id = $1 AND group_id = $2";
const INSERT_MEMBER: &str =
    "INSERT INTO scim_group_members (tenant_id, group_id, user_id) VALUES ($1, $2, $3)";
const DELETE: &str = "DELETE FROM scim_groups WHERE tenant_id = ";
const ROLES: &str = "SELECT role_key FROM scim_group_roles \
     WHERE tenant_id = $1 AND group_id = $2 ORDER BY role_key";
/// The roles of the group not in the list `$3` (all of them for an empty list).
const DELETE_OTHER_ROLES: PerDialect = PerDialect {
    sqlite: "DELETE FROM scim_group_roles WHERE tenant_id = $1 AND group_id = $2 \
             AND role_key NOT IN (SELECT value FROM json_each($3))",
    postgres: "DELETE FROM scim_group_roles WHERE tenant_id = $1 AND group_id = $2 \
               AND role_key <> ALL($3)",
};
// A role already granted keeps its row (and time).
const INSERT_ROLE: &str = "INSERT INTO scim_group_roles (tenant_id, group_id, role_key, created_at) \
     VALUES ($1, $2, $3, $4) ON CONFLICT (group_id, role_key) DO NOTHING";

/// Appends ` AND <the scope>` for the groups of `organization` (`None`: the tenant's own).
fn scope<'a>(stmt: &mut Stmt<'a>, organization: Option<&'a OrganizationId>) {
    match organization {
        None => {
            stmt.push(" AND g.organization_id IS NULL");
        }
        Some(org) => {
            stmt.push(" AND g.organization_id = ")
                .push_bind(org.as_str());
        }
    }
}

/// Appends ` IN <list>` (SQLite) or ` = ANY(<list>)` (PostgreSQL) for `items`.
fn among<'a>(stmt: &mut Stmt<'a>, items: Vec<&'a str>, kind: Kind) {
    match kind {
        Kind::Sqlite => {
            stmt.push(" IN (SELECT value FROM json_each(")
                .push_bind(Arg::TextList(items))
                .push("))");
        }
        Kind::Postgres => {
            stmt.push(" = ANY(")
                .push_bind(Arg::TextList(items))
                .push(")");
        }
    }
}

/// A listing statement (`select` is [`COUNT`] or [`PAGE`]) up to and including its conditions.
fn groups<'a, D: Dialect>(
    select: &str,
    tenant: &'a TenantId,
    organization: Option<&'a OrganizationId>,
    filter: Option<&ScimFilter<ScimGroupAttr>>,
) -> Stmt<'a> {
    let mut stmt = Stmt::dynamic(select);
    stmt.push_bind(tenant.as_str());
    scope(&mut stmt, organization);
    if let Some(filter) = filter {
        stmt.push(" AND ");
        scim_filter::push(&mut stmt, filter, D::KIND);
    }
    stmt
}

#[async_trait]
impl<D: Dialect> ScimGroupReads for SqlTx<D> {
    async fn scim_groups(
        &mut self,
        tenant: &TenantId,
        organization: Option<&OrganizationId>,
        filter: Option<&ScimFilter<ScimGroupAttr>>,
        sort: Option<&ScimSort<ScimGroupAttr>>,
        offset: u64,
        limit: u32,
    ) -> Result<ScimGroupPage, StoreError> {
        let row = groups::<D>(COUNT, tenant, organization, filter)
            .fetch_one::<D>(self.conn())
            .await?;
        let n: i64 = Columns::<D>::new(&row, "scim_groups").get("n")?;
        let total = u64::try_from(n).unwrap_or(0);
        if limit == 0 || offset >= total {
            return Ok(ScimGroupPage {
                total,
                groups: Vec::new(),
            });
        }
        let mut stmt = groups::<D>(PAGE, tenant, organization, filter);
        scim_filter::push_order(&mut stmt, sort, "g.id", D::KIND);
        stmt.push(" LIMIT ")
            .push_bind(i64::from(limit))
            .push(" OFFSET ")
            .push_bind(i64::try_from(offset).unwrap_or(i64::MAX));
        let found = stmt
            .fetch_all_with::<D, _>(self.conn(), decode_group::<D>)
            .await?;
        let mut members: BTreeMap<String, Vec<UserId>> = BTreeMap::new();
        if !found.is_empty() {
            let ids: Vec<&str> = found.iter().map(|g| g.id.as_str()).collect();
            let mut stmt = Stmt::dynamic(MEMBERS);
            among(&mut stmt, ids, D::KIND);
            stmt.push(" ORDER BY gm.group_id, gm.user_id");
            let rows = stmt
                .fetch_all_with::<D, _>(self.conn(), |row: &Row<D>| {
                    let c = Columns::<D>::new(row, "scim_group_members");
                    let group: String = c.get("group_id")?;
                    let user: String = c.get("user_id")?;
                    let r = Record {
                        table: "scim_group_members",
                        name: &group,
                    };
                    Ok((group.clone(), r.parse("user_id", &user, UserId::parse)?))
                })
                .await?;
            for (group, user) in rows {
                members.entry(group).or_default().push(user);
            }
        }
        let groups = found
            .into_iter()
            .map(|group| ScimGroupRecord {
                members: members.remove(group.id.as_str()).unwrap_or_default(),
                group,
            })
            .collect();
        Ok(ScimGroupPage { total, groups })
    }

    async fn scim_groups_of_users(
        &mut self,
        tenant: &TenantId,
        organization: Option<&OrganizationId>,
        users: &[UserId],
    ) -> Result<Vec<ScimGroupMembership>, StoreError> {
        if users.is_empty() {
            return Ok(Vec::new());
        }
        let mut stmt = Stmt::dynamic(GROUPS_OF);
        stmt.push_bind(tenant.as_str());
        scope(&mut stmt, organization);
        stmt.push(" AND gm.user_id");
        among(
            &mut stmt,
            users.iter().map(UserId::as_str).collect(),
            D::KIND,
        );
        stmt.push(" ORDER BY gm.user_id, g.id");
        stmt.fetch_all_with::<D, _>(self.conn(), |row: &Row<D>| {
            let c = Columns::<D>::new(row, "scim_groups");
            let id: String = c.get("id")?;
            let user: String = c.get("user_id")?;
            let r = Record {
                table: "scim_groups",
                name: &id,
            };
            Ok(ScimGroupMembership {
                user_id: r.parse("user_id", &user, UserId::parse)?,
                group_id: r.parse("id", &id, ScimGroupId::parse)?,
                display_name: c.get("display_name")?,
            })
        })
        .await
    }

    async fn scim_group_roles(
        &mut self,
        tenant: &TenantId,
        id: &ScimGroupId,
    ) -> Result<BTreeSet<RoleKey>, StoreError> {
        let rows = Stmt::new(ROLES)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .fetch_all::<D>(self.conn())
            .await?;
        rows.iter()
            .map(|row| {
                let raw: String = Columns::<D>::new(row, "scim_group_roles").get("role_key")?;
                Record {
                    table: "scim_group_roles",
                    name: id.as_str(),
                }
                .parse("role_key", &raw, RoleKey::parse)
            })
            .collect()
    }
}

#[async_trait]
impl<D: Dialect> ScimGroupWrites for SqlTx<D> {
    async fn set_scim_group_roles(
        &mut self,
        tenant: &TenantId,
        id: &ScimGroupId,
        roles: &BTreeSet<RoleKey>,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        Stmt::new(DELETE_OTHER_ROLES.pick::<D>())
            .bind(tenant.as_str())
            .bind(id.as_str())
            .bind_list(roles.iter().map(RoleKey::as_str).collect())
            .execute::<D>(self.conn())
            .await?;
        for role in roles {
            Stmt::new(INSERT_ROLE)
                .bind(tenant.as_str())
                .bind(id.as_str())
                .bind(role.as_str())
                .bind(now)
                .execute::<D>(self.conn())
                .await
                .map_err(|e| naming::foreign_key(e, "scim_group_roles_group_fkey"))?;
        }
        Ok(())
    }

    async fn insert_scim_group(&mut self, group: &ScimGroup) -> Result<(), StoreError> {
        Stmt::new(INSERT)
            .bind(group.id.as_str())
            .bind(group.tenant_id.as_str())
            .bind(group.organization_id.as_ref().map(OrganizationId::as_str))
            .bind(group.display_name.as_str())
            .bind(group.external_id.as_deref())
            .bind(group.created_at)
            .bind(group.updated_at)
            .execute::<D>(self.conn())
            .await
            // SQLite names no foreign key; an organization is the narrower one a caller names.
            .map_err(|e| {
                let name = if group.organization_id.is_some() {
                    "scim_groups_organization_fkey"
                } else {
                    "scim_groups_tenant_id_fkey"
                };
                naming::foreign_key(e, name)
            })?;
        Ok(())
    }

    async fn update_scim_group(&mut self, group: &ScimGroup) -> Result<bool, StoreError> {
        let mut stmt = Stmt::dynamic(UPDATE);
        stmt.push_bind(group.display_name.as_str())
            .push(", external_id = ")
            .push_bind(group.external_id.as_deref())
            .push(", updated_at = ")
            .push_bind(group.updated_at)
            .push(" WHERE id = ")
            .push_bind(group.id.as_str())
            .push(" AND tenant_id = ")
            .push_bind(group.tenant_id.as_str());
        match &group.organization_id {
            None => stmt.push(" AND organization_id IS NULL"),
            Some(org) => stmt.push(" AND organization_id = ").push_bind(org.as_str()),
        };
        let changed = stmt.execute::<D>(self.conn()).await?;
        Ok(changed > 0)
    }

    async fn set_scim_group_members(
        &mut self,
        tenant: &TenantId,
        id: &ScimGroupId,
        members: &[UserId],
    ) -> Result<(), StoreError> {
        Stmt::new(DELETE_MEMBERS)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .execute::<D>(self.conn())
            .await?;
        for user in members {
            Stmt::new(INSERT_MEMBER)
                .bind(tenant.as_str())
                .bind(id.as_str())
                .bind(user.as_str())
                .execute::<D>(self.conn())
                .await
                .map_err(|e| naming::foreign_key(e, "scim_group_members_user_fkey"))?;
        }
        Ok(())
    }

    async fn delete_scim_group(
        &mut self,
        tenant: &TenantId,
        organization: Option<&OrganizationId>,
        id: &ScimGroupId,
    ) -> Result<bool, StoreError> {
        let mut stmt = Stmt::dynamic(DELETE);
        stmt.push_bind(tenant.as_str())
            .push(" AND id = ")
            .push_bind(id.as_str());
        match organization {
            None => stmt.push(" AND organization_id IS NULL"),
            Some(org) => stmt.push(" AND organization_id = ").push_bind(org.as_str()),
        };
        let found = stmt.execute::<D>(self.conn()).await?;
        if found > 0 {
            // Also by the foreign key's cascade; explicit, so it never depends on a pragma.
            Stmt::new(DELETE_MEMBERS)
                .bind(tenant.as_str())
                .bind(id.as_str())
                .execute::<D>(self.conn())
                .await?;
        }
        Ok(found > 0)
    }
}

fn decode_group<D: Dialect>(row: &Row<D>) -> Result<ScimGroup, StoreError> {
    let c = Columns::<D>::new(row, "scim_groups");
    let id: String = c.get("id")?;
    let r = Record {
        table: "scim_groups",
        name: &id,
    };
    let tenant: String = c.get("tenant_id")?;
    let organization: Option<String> = c.get("organization_id")?;
    Ok(ScimGroup {
        id: r.parse("id", &id, ScimGroupId::parse)?,
        tenant_id: r.parse("tenant_id", &tenant, TenantId::parse)?,
        organization_id: r.parse_opt(
            "organization_id",
            organization.as_deref(),
            OrganizationId::parse,
        )?,
        display_name: c.get("display_name")?,
        external_id: c.get("external_id")?,
        created_at: c.get("created_at")?,
        updated_at: c.get("updated_at")?,
    })
}
