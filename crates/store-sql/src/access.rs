//! The access model: API resources with their permissions, custom roles, the permissions roles
//! hold (grants) and the tenant roles of applications. Their statements, their row forms
//! ([`ResourceRow`], [`RoleRow`], [`GrantRow`]) and the `AccessReads`/`AccessWrites` ports for
//! [`SqlTx`].
//!
//! Every statement names the tenant, so another tenant's resource, role or grant reads as absent
//! and no write reaches it. A resource is read with its permissions in one statement (a `LEFT
//! JOIN` repeating the resource's columns on each permission row), so even a read outside a
//! transaction sees one state of both. Its identifier is unique per tenant: PostgreSQL names
//! the constraint `api_resources_tenant_identifier_key`, SQLite reports its columns, renamed
//! here. An update of a resource or a role is conditional on the revision read (`updated_at`,
//! compared for equality as the column itself on both dialects, as for organizations).
//!
//! Sets (a resource's permissions, a role's grants, an application's roles) are replaced the
//! way `user_roles` replaces a person's roles: a `DELETE` of the rows no longer in the set (the
//! kept keys bound as a list), then one write per member that leaves a kept row in place. Ids,
//! keys and names are `COLLATE "C"` on PostgreSQL and compared bytewise on SQLite, so every
//! `ORDER BY` here is byte order, the order of Rust's strings.

use crate::dialect::Dialect;
use crate::naming;
use crate::record::Record;
use crate::sorted::{self, Sorted};
use crate::{Columns, PerDialect, Row, SqlTx, Stmt};
use async_trait::async_trait;
use std::collections::BTreeSet;
use svc_domain::{
    ApiResource, ApiResourceId, ClientId, Permission, PermissionName, Role, RoleGrant, RoleKey,
    RoleKind, TenantId,
};
use svc_store::{AccessReads, AccessWrites, Order, StoreError, UpdateOutcome};
use time::OffsetDateTime;

/// The unique key on the identifier, as both backends report it.
const IDENTIFIER_KEY: &str = "api_resources_tenant_identifier_key";
/// What SQLite's message (`api_resources.tenant_id, api_resources.identifier`) becomes in the
/// SQLite backend.
const IDENTIFIER_KEY_BY_COLUMNS: &str = "api_resources_tenant_id_identifier_key";
/// The foreign key to `tenants`, the only one of `api_resources` (SQLite reports a failed
/// foreign key without naming it).
const RESOURCE_TENANT_FKEY: &str = "api_resources_tenant_id_fkey";
/// The foreign key to `api_resources`, the only one of `api_resource_permissions`.
const PERMISSION_RESOURCE_FKEY: &str = "api_resource_permissions_resource_fkey";
/// The foreign key to `tenants`, the only one of `roles`.
const ROLE_TENANT_FKEY: &str = "roles_tenant_id_fkey";
/// The foreign key to the permission a grant holds, the only one of `role_permissions`.
const GRANT_PERMISSION_FKEY: &str = "role_permissions_permission_fkey";
/// The foreign key to `applications`, the only one of `application_roles`.
const APPLICATION_FKEY: &str = "application_roles_client_id_fkey";

/// A resource's columns, then its permission's (both `NULL` for a resource without any);
/// `$from` is the table or a page of it, aliased `r`.
macro_rules! select_resources {
    ($from:literal, $tail:literal) => {
        concat!(
            "SELECT r.id, r.tenant_id, r.identifier, r.name, r.created_at, r.updated_at, \
             p.name AS permission, p.description \
             FROM ",
            $from,
            " AS r LEFT JOIN api_resource_permissions AS p \
             ON p.tenant_id = r.tenant_id AND p.resource_id = r.id ",
            $tail
        )
    };
}

const SELECT_RESOURCE: &str = select_resources!(
    "api_resources",
    "WHERE r.tenant_id = $1 AND r.id = $2 ORDER BY p.name"
);
const SELECT_BY_IDENTIFIER: &str = select_resources!(
    "api_resources",
    "WHERE r.tenant_id = $1 AND r.identifier = $2 ORDER BY p.name"
);
// The page is taken from the key alone (`$2` is the cursor or the bound of its direction, see
// `sorted::cursor`), then joined: a limit over joined rows would cut a resource's permissions.
const LIST_RESOURCES: Sorted = Sorted {
    asc: select_resources!(
        "(SELECT id, tenant_id, identifier, name, created_at, updated_at FROM api_resources \
         WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3)",
        "ORDER BY r.id, p.name"
    ),
    desc: select_resources!(
        "(SELECT id, tenant_id, identifier, name, created_at, updated_at FROM api_resources \
         WHERE tenant_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3)",
        "ORDER BY r.id DESC, p.name"
    ),
};
const INSERT_RESOURCE: &str = "INSERT INTO api_resources (id, tenant_id, identifier, name, \
     created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)";
// Never the identifier (tokens already issued carry it as their audience), only at the
// revision read ($5); see organizations' `UPDATE` for why equality on `updated_at` is exact and
// safe under READ COMMITTED.
const UPDATE_RESOURCE: &str = "UPDATE api_resources SET name = $3, updated_at = $4 \
     WHERE tenant_id = $1 AND id = $2 AND updated_at = $5";
/// Whether the resource exists at all: tells a stale revision from a missing record after a
/// conditional update changed nothing.
const RESOURCE_EXISTS: &str = "SELECT id FROM api_resources WHERE tenant_id = $1 AND id = $2";
// Cascades to its permissions, and from them to every grant of them.
const DELETE_RESOURCE: &str = "DELETE FROM api_resources WHERE tenant_id = $1 AND id = $2";

macro_rules! insert_permission {
    ($tail:literal) => {
        concat!(
            "INSERT INTO api_resource_permissions (tenant_id, resource_id, name, description) \
             VALUES ($1, $2, $3, $4)",
            $tail
        )
    };
}

// A repeated name is the key's conflict.
const INSERT_PERMISSION: &str = insert_permission!("");
// A kept permission keeps its row (and so its grants); its description is written only when it
// changed, so an unchanged one leaves no dead row version behind on PostgreSQL.
const UPSERT_PERMISSION: &str = insert_permission!(
    " ON CONFLICT (tenant_id, resource_id, name) DO UPDATE SET description = excluded.description \
     WHERE api_resource_permissions.description <> excluded.description"
);
/// Deletes the permissions of the resource not in the list `$3` (cascading to their grants).
const DELETE_OTHER_PERMISSIONS: PerDialect = PerDialect {
    sqlite: "DELETE FROM api_resource_permissions WHERE tenant_id = $1 AND resource_id = $2 \
             AND name NOT IN (SELECT value FROM json_each($3))",
    postgres: "DELETE FROM api_resource_permissions WHERE tenant_id = $1 AND resource_id = $2 \
               AND name <> ALL($3)",
};

macro_rules! select_roles {
    ($where:literal) => {
        concat!(
            "SELECT tenant_id, role_key, kind, description, created_at, updated_at FROM roles ",
            $where
        )
    };
}

const SELECT_ROLE: &str = select_roles!("WHERE tenant_id = $1 AND role_key = $2");
const LIST_ROLES: &str = select_roles!("WHERE tenant_id = $1 ORDER BY role_key");
/// A role read for an assignment: on PostgreSQL the key-share lock makes a deletion of the row
/// wait for the assigning transaction (and an assignment wait for a deletion in progress, then
/// find nothing), while concurrent assignments of the same role do not wait for each other.
/// SQLite has one writer at a time, so its plain read is already serialised with deletions.
const LOCK_ROLE: PerDialect = PerDialect {
    sqlite: select_roles!("WHERE tenant_id = $1 AND role_key = $2"),
    postgres: select_roles!("WHERE tenant_id = $1 AND role_key = $2 FOR KEY SHARE"),
};
const INSERT_ROLE: &str = "INSERT INTO roles (tenant_id, role_key, kind, description, \
     created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)";
// Never the kind: where a role is assigned does not change under its holders.
const UPDATE_ROLE: &str = "UPDATE roles SET description = $3, updated_at = $4 \
     WHERE tenant_id = $1 AND role_key = $2 AND updated_at = $5";
const ROLE_EXISTS: &str = "SELECT role_key FROM roles WHERE tenant_id = $1 AND role_key = $2";
const DELETE_ROLE: &str = "DELETE FROM roles WHERE tenant_id = $1 AND role_key = $2";
// Grants do not reference `roles` (built-in roles have no row), so no cascade removes them.
const DELETE_ROLE_GRANTS: &str = "DELETE FROM role_permissions \
     WHERE tenant_id = $1 AND role_key = $2";

/// The grants of the roles in the list `$2`: a range scan of the key per role.
const SELECT_GRANTS: PerDialect = PerDialect {
    sqlite: "SELECT role_key, resource_id, permission FROM role_permissions \
             WHERE tenant_id = $1 AND role_key IN (SELECT value FROM json_each($2)) \
             ORDER BY role_key, resource_id, permission",
    postgres: "SELECT role_key, resource_id, permission FROM role_permissions \
               WHERE tenant_id = $1 AND role_key = ANY($2) \
               ORDER BY role_key, resource_id, permission",
};
/// Deletes the grants of the role not in the list `$3`. A grant is two columns and the list one
/// value per grant, so both sides are spelled `resource_id permission` (see [`grant_key`]).
const DELETE_OTHER_GRANTS: PerDialect = PerDialect {
    sqlite: "DELETE FROM role_permissions WHERE tenant_id = $1 AND role_key = $2 \
             AND (resource_id || ' ' || permission) NOT IN (SELECT value FROM json_each($3))",
    postgres: "DELETE FROM role_permissions WHERE tenant_id = $1 AND role_key = $2 \
               AND (resource_id || ' ' || permission) <> ALL($3)",
};
// `DO NOTHING` on the key only: a permission the resource does not define is still the foreign
// key's error.
const INSERT_GRANT: &str = "INSERT INTO role_permissions (tenant_id, role_key, resource_id, \
     permission) VALUES ($1, $2, $3, $4) \
     ON CONFLICT (tenant_id, role_key, resource_id, permission) DO NOTHING";

/// People, memberships and applications holding the role `$2`: three counts over the tenant's
/// rows. A membership's roles are a JSON array (text on SQLite, `jsonb` on PostgreSQL, whose
/// `?` tests for a string element).
const HOLDERS: PerDialect = PerDialect {
    sqlite: "SELECT (SELECT COUNT(*) FROM user_roles WHERE tenant_id = $1 AND role_key = $2) \
             + (SELECT COUNT(*) FROM organization_members WHERE tenant_id = $1 \
                AND EXISTS (SELECT 1 FROM json_each(roles) WHERE value = $2)) \
             + (SELECT COUNT(*) FROM application_roles WHERE tenant_id = $1 AND role_key = $2) \
             + (SELECT COUNT(*) FROM scim_group_roles WHERE tenant_id = $1 AND role_key = $2) \
             AS holders",
    postgres: "SELECT (SELECT COUNT(*) FROM user_roles WHERE tenant_id = $1 AND role_key = $2) \
               + (SELECT COUNT(*) FROM organization_members WHERE tenant_id = $1 \
                  AND roles ? $2) \
               + (SELECT COUNT(*) FROM application_roles \
                  WHERE tenant_id = $1 AND role_key = $2) \
               + (SELECT COUNT(*) FROM scim_group_roles \
                  WHERE tenant_id = $1 AND role_key = $2) \
               AS holders",
};

const APPLICATION_ROLES: &str = "SELECT client_id, role_key FROM application_roles \
     WHERE tenant_id = $1 AND client_id = $2 ORDER BY role_key";
/// Deletes the roles of the application not in the list `$3`.
const DELETE_OTHER_APPLICATION_ROLES: PerDialect = PerDialect {
    sqlite: "DELETE FROM application_roles WHERE tenant_id = $1 AND client_id = $2 \
             AND role_key NOT IN (SELECT value FROM json_each($3))",
    postgres: "DELETE FROM application_roles WHERE tenant_id = $1 AND client_id = $2 \
               AND role_key <> ALL($3)",
};
// A role already held keeps its row and its `created_at`.
const INSERT_APPLICATION_ROLE: &str = "INSERT INTO application_roles (tenant_id, client_id, \
     role_key, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (client_id, role_key) DO NOTHING";

#[async_trait]
impl<D: Dialect> AccessReads for SqlTx<D> {
    async fn api_resource(
        &mut self,
        tenant: &TenantId,
        id: &ApiResourceId,
    ) -> Result<Option<ApiResource>, StoreError> {
        let rows = Stmt::new(SELECT_RESOURCE)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .fetch_all::<D>(self.conn())
            .await?;
        Ok(decode_resources::<D>(&rows)?.into_iter().next())
    }

    async fn api_resource_by_identifier(
        &mut self,
        tenant: &TenantId,
        identifier: &str,
    ) -> Result<Option<ApiResource>, StoreError> {
        let rows = Stmt::new(SELECT_BY_IDENTIFIER)
            .bind(tenant.as_str())
            .bind(identifier)
            .fetch_all::<D>(self.conn())
            .await?;
        Ok(decode_resources::<D>(&rows)?.into_iter().next())
    }

    async fn list_api_resources(
        &mut self,
        tenant: &TenantId,
        after: Option<&ApiResourceId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<ApiResource>, StoreError> {
        let rows = Stmt::new(LIST_RESOURCES.pick(order))
            .bind(tenant.as_str())
            .bind(sorted::cursor(after.map(ApiResourceId::as_str), order))
            .bind(i64::from(limit))
            .fetch_all::<D>(self.conn())
            .await?;
        decode_resources::<D>(&rows)
    }

    async fn role(&mut self, tenant: &TenantId, key: &RoleKey) -> Result<Option<Role>, StoreError> {
        Stmt::new(SELECT_ROLE)
            .bind(tenant.as_str())
            .bind(key.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode_role::<D>)
            .await
    }

    async fn list_roles(&mut self, tenant: &TenantId) -> Result<Vec<Role>, StoreError> {
        Stmt::new(LIST_ROLES)
            .bind(tenant.as_str())
            .fetch_all_with::<D, _>(self.conn(), decode_role::<D>)
            .await
    }

    async fn role_grants(
        &mut self,
        tenant: &TenantId,
        roles: &BTreeSet<RoleKey>,
    ) -> Result<Vec<RoleGrant>, StoreError> {
        if roles.is_empty() {
            return Ok(Vec::new());
        }
        Stmt::new(SELECT_GRANTS.pick::<D>())
            .bind(tenant.as_str())
            .bind_list(roles.iter().map(RoleKey::as_str).collect())
            .fetch_all_with::<D, _>(self.conn(), decode_grant::<D>)
            .await
    }

    async fn role_holders(&mut self, tenant: &TenantId, key: &RoleKey) -> Result<u64, StoreError> {
        let row = Stmt::new(HOLDERS.pick::<D>())
            .bind(tenant.as_str())
            .bind(key.as_str())
            .fetch_one::<D>(self.conn())
            .await?;
        let holders: i64 = Columns::<D>::new(&row, "roles").get("holders")?;
        u64::try_from(holders)
            .map_err(|_| StoreError::Corrupt(format!("holders of role {key}: {holders}")))
    }

    async fn application_roles(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
    ) -> Result<BTreeSet<RoleKey>, StoreError> {
        let roles = Stmt::new(APPLICATION_ROLES)
            .bind(tenant.as_str())
            .bind(client.as_str())
            .fetch_all_with::<D, _>(self.conn(), decode_application_role::<D>)
            .await?;
        Ok(roles.into_iter().collect())
    }
}

#[async_trait]
impl<D: Dialect> AccessWrites for SqlTx<D> {
    async fn lock_role(
        &mut self,
        tenant: &TenantId,
        key: &RoleKey,
    ) -> Result<Option<Role>, StoreError> {
        Stmt::new(LOCK_ROLE.pick::<D>())
            .bind(tenant.as_str())
            .bind(key.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode_role::<D>)
            .await
    }

    async fn insert_api_resource(&mut self, resource: &ApiResource) -> Result<(), StoreError> {
        Stmt::new(INSERT_RESOURCE)
            .bind(resource.id.as_str())
            .bind(resource.tenant_id.as_str())
            .bind(resource.identifier.as_str())
            .bind(resource.name.as_str())
            .bind(resource.created_at)
            .bind(resource.updated_at)
            .execute::<D>(self.conn())
            .await
            .map_err(resource_conflict)?;
        for permission in &resource.permissions {
            Stmt::new(INSERT_PERMISSION)
                .bind(resource.tenant_id.as_str())
                .bind(resource.id.as_str())
                .bind(permission.name.as_str())
                .bind(permission.description.as_str())
                .execute::<D>(self.conn())
                .await
                .map_err(|e| naming::foreign_key(e, PERMISSION_RESOURCE_FKEY))?;
        }
        Ok(())
    }

    /// The conditional `UPDATE` first: only at the revision read are the permissions touched.
    async fn update_api_resource_if_unchanged(
        &mut self,
        resource: &ApiResource,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError> {
        let (tenant, id) = (resource.tenant_id.as_str(), resource.id.as_str());
        let changed = Stmt::new(UPDATE_RESOURCE)
            .bind(tenant)
            .bind(id)
            .bind(resource.name.as_str())
            .bind(resource.updated_at)
            .bind(read_at)
            .execute::<D>(self.conn())
            .await?;
        if changed == 0 {
            let exists = Stmt::new(RESOURCE_EXISTS)
                .bind(tenant)
                .bind(id)
                .fetch_optional::<D>(self.conn())
                .await?
                .is_some();
            return if exists {
                Ok(UpdateOutcome::Stale)
            } else {
                Err(StoreError::NotFound)
            };
        }
        Stmt::new(DELETE_OTHER_PERMISSIONS.pick::<D>())
            .bind(tenant)
            .bind(id)
            .bind_list(
                resource
                    .permissions
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect(),
            )
            .execute::<D>(self.conn())
            .await?;
        for permission in &resource.permissions {
            Stmt::new(UPSERT_PERMISSION)
                .bind(tenant)
                .bind(id)
                .bind(permission.name.as_str())
                .bind(permission.description.as_str())
                .execute::<D>(self.conn())
                .await
                .map_err(|e| naming::foreign_key(e, PERMISSION_RESOURCE_FKEY))?;
        }
        Ok(UpdateOutcome::Applied)
    }

    async fn delete_api_resource(
        &mut self,
        tenant: &TenantId,
        id: &ApiResourceId,
    ) -> Result<bool, StoreError> {
        let deleted = Stmt::new(DELETE_RESOURCE)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .execute::<D>(self.conn())
            .await?;
        Ok(deleted > 0)
    }

    async fn insert_role(&mut self, role: &Role) -> Result<(), StoreError> {
        Stmt::new(INSERT_ROLE)
            .bind(role.tenant_id.as_str())
            .bind(role.key.as_str())
            .bind(role.kind.as_str())
            .bind(role.description.as_str())
            .bind(role.created_at)
            .bind(role.updated_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, ROLE_TENANT_FKEY))?;
        Ok(())
    }

    async fn update_role_if_unchanged(
        &mut self,
        role: &Role,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError> {
        let changed = Stmt::new(UPDATE_ROLE)
            .bind(role.tenant_id.as_str())
            .bind(role.key.as_str())
            .bind(role.description.as_str())
            .bind(role.updated_at)
            .bind(read_at)
            .execute::<D>(self.conn())
            .await?;
        if changed > 0 {
            return Ok(UpdateOutcome::Applied);
        }
        let exists = Stmt::new(ROLE_EXISTS)
            .bind(role.tenant_id.as_str())
            .bind(role.key.as_str())
            .fetch_optional::<D>(self.conn())
            .await?
            .is_some();
        if exists {
            Ok(UpdateOutcome::Stale)
        } else {
            Err(StoreError::NotFound)
        }
    }

    /// The role's row first: on PostgreSQL its deletion holds the row lock until the
    /// transaction ends (see the port).
    async fn delete_role(&mut self, tenant: &TenantId, key: &RoleKey) -> Result<bool, StoreError> {
        let deleted = Stmt::new(DELETE_ROLE)
            .bind(tenant.as_str())
            .bind(key.as_str())
            .execute::<D>(self.conn())
            .await?;
        Stmt::new(DELETE_ROLE_GRANTS)
            .bind(tenant.as_str())
            .bind(key.as_str())
            .execute::<D>(self.conn())
            .await?;
        Ok(deleted > 0)
    }

    async fn replace_role_grants(
        &mut self,
        tenant: &TenantId,
        role: &RoleKey,
        grants: &BTreeSet<(ApiResourceId, PermissionName)>,
    ) -> Result<(), StoreError> {
        let kept: Vec<String> = grants
            .iter()
            .map(|(resource, permission)| grant_key(resource, permission))
            .collect();
        Stmt::new(DELETE_OTHER_GRANTS.pick::<D>())
            .bind(tenant.as_str())
            .bind(role.as_str())
            .bind_list(kept.iter().map(String::as_str).collect())
            .execute::<D>(self.conn())
            .await?;
        for (resource, permission) in grants {
            Stmt::new(INSERT_GRANT)
                .bind(tenant.as_str())
                .bind(role.as_str())
                .bind(resource.as_str())
                .bind(permission.as_str())
                .execute::<D>(self.conn())
                .await
                .map_err(|e| naming::foreign_key(e, GRANT_PERMISSION_FKEY))?;
        }
        Ok(())
    }

    async fn replace_application_roles(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
        roles: &BTreeSet<RoleKey>,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        Stmt::new(DELETE_OTHER_APPLICATION_ROLES.pick::<D>())
            .bind(tenant.as_str())
            .bind(client.as_str())
            .bind_list(roles.iter().map(RoleKey::as_str).collect())
            .execute::<D>(self.conn())
            .await?;
        for role in roles {
            Stmt::new(INSERT_APPLICATION_ROLE)
                .bind(tenant.as_str())
                .bind(client.as_str())
                .bind(role.as_str())
                .bind(now)
                .execute::<D>(self.conn())
                .await
                .map_err(|e| naming::foreign_key(e, APPLICATION_FKEY))?;
        }
        Ok(())
    }
}

/// Gives the conflicts of a resource insert that SQLite reports by column (or not at all) the
/// names PostgreSQL reports.
fn resource_conflict(err: StoreError) -> StoreError {
    naming::foreign_key(
        naming::rename(err, IDENTIFIER_KEY_BY_COLUMNS, IDENTIFIER_KEY),
        RESOURCE_TENANT_FKEY,
    )
}

/// A grant as one value of the kept list of [`DELETE_OTHER_GRANTS`]. Neither an id nor a scope
/// token contains a space, so the spelling is unambiguous.
fn grant_key(resource: &ApiResourceId, permission: &PermissionName) -> String {
    format!("{} {}", resource.as_str(), permission.as_str())
}

/// The resources of rows ordered by resource (each resource's rows together, its permissions in
/// name order), with their permissions.
fn decode_resources<D: Dialect>(rows: &[Row<D>]) -> Result<Vec<ApiResource>, StoreError> {
    let mut resources: Vec<ResourceRow> = Vec::new();
    for row in rows {
        let c = Columns::<D>::new(row, "api_resources");
        let id: String = c.get("id")?;
        if resources.last().is_none_or(|last| last.id != id) {
            resources.push(ResourceRow {
                id,
                tenant_id: c.get("tenant_id")?,
                identifier: c.get("identifier")?,
                name: c.get("name")?,
                created_at: c.get("created_at")?,
                updated_at: c.get("updated_at")?,
                permissions: Vec::new(),
            });
        }
        let p = Columns::<D>::new(row, "api_resource_permissions");
        // `NULL` only for a resource without permissions: the join found no row.
        let permission: Option<String> = p.get("permission")?;
        if let (Some(resource), Some(name)) = (resources.last_mut(), permission) {
            resource.permissions.push((name, p.get("description")?));
        }
    }
    resources.into_iter().map(ResourceRow::decode).collect()
}

fn decode_role<D: Dialect>(row: &Row<D>) -> Result<Role, StoreError> {
    let c = Columns::<D>::new(row, "roles");
    RoleRow {
        tenant_id: c.get("tenant_id")?,
        role_key: c.get("role_key")?,
        kind: c.get("kind")?,
        description: c.get("description")?,
        created_at: c.get("created_at")?,
        updated_at: c.get("updated_at")?,
    }
    .decode()
}

fn decode_grant<D: Dialect>(row: &Row<D>) -> Result<RoleGrant, StoreError> {
    let c = Columns::<D>::new(row, "role_permissions");
    GrantRow {
        role_key: c.get("role_key")?,
        resource_id: c.get("resource_id")?,
        permission: c.get("permission")?,
    }
    .decode()
}

fn decode_application_role<D: Dialect>(row: &Row<D>) -> Result<RoleKey, StoreError> {
    let c = Columns::<D>::new(row, "application_roles");
    let client_id: String = c.get("client_id")?;
    let role_key: String = c.get("role_key")?;
    Record {
        table: "application_roles",
        name: &client_id,
    }
    .parse("role_key", &role_key, RoleKey::parse)
}

/// An `api_resources` row as stored, with its `api_resource_permissions` rows (name,
/// description) in name order.
#[derive(Debug, Clone)]
struct ResourceRow {
    id: String,
    tenant_id: String,
    identifier: String,
    name: String,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
    permissions: Vec<(String, String)>,
}

impl ResourceRow {
    fn decode(self) -> Result<ApiResource, StoreError> {
        let r = Record {
            table: "api_resources",
            name: &self.id,
        };
        let permissions = self
            .permissions
            .into_iter()
            .map(|(name, description)| {
                Ok(Permission {
                    name: Record {
                        table: "api_resource_permissions",
                        name: &self.id,
                    }
                    .parse("name", &name, PermissionName::parse)?,
                    description,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(ApiResource {
            id: r.parse("id", &self.id, ApiResourceId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            identifier: self.identifier,
            name: self.name,
            permissions,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// A `roles` row as stored.
#[derive(Debug, Clone)]
struct RoleRow {
    tenant_id: String,
    role_key: String,
    kind: String,
    description: String,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

impl RoleRow {
    fn decode(self) -> Result<Role, StoreError> {
        let r = Record {
            table: "roles",
            name: &self.role_key,
        };
        Ok(Role {
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            key: r.parse("role_key", &self.role_key, RoleKey::parse)?,
            kind: r.parse("kind", &self.kind, |s| {
                RoleKind::parse(s).ok_or("unknown kind")
            })?,
            description: self.description,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// The columns of a `role_permissions` row a read needs.
#[derive(Debug, Clone)]
struct GrantRow {
    role_key: String,
    resource_id: String,
    permission: String,
}

impl GrantRow {
    fn decode(self) -> Result<RoleGrant, StoreError> {
        let r = Record {
            table: "role_permissions",
            name: &self.role_key,
        };
        Ok(RoleGrant {
            role: r.parse("role_key", &self.role_key, RoleKey::parse)?,
            resource_id: r.parse("resource_id", &self.resource_id, ApiResourceId::parse)?,
            permission: r.parse("permission", &self.permission, PermissionName::parse)?,
        })
    }
}

#[cfg(test)]
#[path = "access_tests.rs"]
mod tests;
