//! A person's tenant roles: their statements, their row form ([`UserRoleRow`]) and the
//! `UserRoleReads`/`UserRoleWrites` ports for [`SqlTx`].
//!
//! One row per person and role key; every statement names the tenant, so another tenant's roles
//! read as none and no write reaches them. Replacing the set is two statements in the caller's
//! transaction: a `DELETE` of the roles no longer held (the kept keys bound as a list: a JSON
//! array for `json_each` on SQLite, a `text[]` for `<> ALL` on PostgreSQL), then an `INSERT … ON
//! CONFLICT DO NOTHING` per key, which leaves the row (and its `created_at`) of a role already
//! held as it is. A role's only foreign key is its tenant's (`user_roles_tenant_id_fkey`, which
//! SQLite reports unnamed, renamed here).

use crate::dialect::Dialect;
use crate::naming;
use crate::record::Record;
use crate::{Columns, PerDialect, Row, SqlTx, Stmt};
use async_trait::async_trait;
use std::collections::BTreeSet;
use svc_domain::{RoleKey, TenantId, UserId};
use svc_store::{StoreError, UserRoleReads, UserRoleWrites};
use time::OffsetDateTime;

/// The foreign key to `tenants`, the only one of `user_roles` (SQLite reports a failed foreign
/// key without naming it).
const TENANT_FKEY: &str = "user_roles_tenant_id_fkey";

// A range scan of the key, in key order.
const SELECT: &str = "SELECT user_id, role_key FROM user_roles \
     WHERE tenant_id = $1 AND user_id = $2 ORDER BY role_key";
/// Deletes the roles of the person that are not in the list `$3` (all of them for an empty
/// list: `NOT IN` of no row and `<> ALL` of an empty array are both true).
const DELETE_OTHERS: PerDialect = PerDialect {
    sqlite: "DELETE FROM user_roles WHERE tenant_id = $1 AND user_id = $2 \
             AND role_key NOT IN (SELECT value FROM json_each($3))",
    postgres: "DELETE FROM user_roles WHERE tenant_id = $1 AND user_id = $2 \
               AND role_key <> ALL($3)",
};
/// The direct roles and those of the tenant's own directory groups the person belongs to (an
/// organization's groups grant organization roles, read with the membership); `UNION` drops the
/// repeats. Both halves are range scans (the person's member rows by
/// `scim_group_members_user_idx`, each group by its key, its roles by theirs).
const SELECT_GRANTED: &str = "SELECT role_key FROM user_roles WHERE tenant_id = $1 AND user_id = $2 \
     UNION SELECT r.role_key FROM scim_group_members m \
     JOIN scim_groups g ON g.id = m.group_id AND g.tenant_id = m.tenant_id \
     AND g.organization_id IS NULL \
     JOIN scim_group_roles r ON r.group_id = m.group_id AND r.tenant_id = m.tenant_id \
     WHERE m.tenant_id = $1 AND m.user_id = $2 ORDER BY role_key";
// A role already held keeps its row: `DO NOTHING` on the key only; a failed foreign key is still
// an error.
const INSERT: &str = "INSERT INTO user_roles (tenant_id, user_id, role_key, created_at) \
     VALUES ($1, $2, $3, $4) ON CONFLICT (tenant_id, user_id, role_key) DO NOTHING";

#[async_trait]
impl<D: Dialect> UserRoleReads for SqlTx<D> {
    async fn user_roles(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<BTreeSet<RoleKey>, StoreError> {
        let roles = Stmt::new(SELECT)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .fetch_all_with::<D, _>(self.conn(), decode::<D>)
            .await?;
        Ok(roles.into_iter().collect())
    }

    async fn granted_roles(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<BTreeSet<RoleKey>, StoreError> {
        let rows = Stmt::new(SELECT_GRANTED)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .fetch_all::<D>(self.conn())
            .await?;
        rows.iter()
            .map(|row| {
                let raw: String = Columns::<D>::new(row, "user_roles").get("role_key")?;
                Record {
                    table: "user_roles",
                    name: user.as_str(),
                }
                .parse("role_key", &raw, RoleKey::parse)
            })
            .collect()
    }
}

#[async_trait]
impl<D: Dialect> UserRoleWrites for SqlTx<D> {
    async fn set_user_roles(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        roles: &BTreeSet<RoleKey>,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        Stmt::new(DELETE_OTHERS.pick::<D>())
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind_list(roles.iter().map(RoleKey::as_str).collect())
            .execute::<D>(self.conn())
            .await?;
        for role in roles {
            Stmt::new(INSERT)
                .bind(tenant.as_str())
                .bind(user.as_str())
                .bind(role.as_str())
                .bind(now)
                .execute::<D>(self.conn())
                .await
                .map_err(|e| naming::foreign_key(e, TENANT_FKEY))?;
        }
        Ok(())
    }
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<RoleKey, StoreError> {
    let c = Columns::<D>::new(row, "user_roles");
    UserRoleRow {
        user_id: c.get("user_id")?,
        role_key: c.get("role_key")?,
    }
    .decode()
}

/// The columns of a `user_roles` row a read needs.
#[derive(Debug, Clone)]
struct UserRoleRow {
    user_id: String,
    role_key: String,
}

impl UserRoleRow {
    fn decode(self) -> Result<RoleKey, StoreError> {
        let r = Record {
            table: "user_roles",
            name: &self.user_id,
        };
        r.parse("role_key", &self.role_key, RoleKey::parse)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::{USER, check};

    #[test]
    fn rows_decode_and_name_a_bad_role_key() {
        let row = UserRoleRow {
            user_id: USER.into(),
            role_key: "tenant_admin".into(),
        };
        assert_eq!(row.clone().decode().unwrap().as_str(), "tenant_admin");
        check(
            row,
            UserRoleRow::decode,
            &[
                ("user_roles.role_key", |r| {
                    r.role_key = "Tenant Admin".into()
                }),
                ("user_roles.role_key", |r| r.role_key = String::new()),
            ],
        );
    }

    #[test]
    fn an_unnamed_foreign_key_is_the_tenant_one() {
        let named = match naming::foreign_key(
            StoreError::Conflict {
                constraint: naming::UNNAMED_FOREIGN_KEY.to_owned(),
            },
            TENANT_FKEY,
        ) {
            StoreError::Conflict { constraint } => constraint,
            other => panic!("{other:?}"),
        };
        assert_eq!(named, "user_roles_tenant_id_fkey");
    }
}
