//! The tenant aggregate: its statements, its row form, and the `TenantReads`/`TenantWrites`
//! ports for [`SqlTx`].

use crate::dialect::{Dialect, PerDialect};
use crate::record::Record;
use crate::sorted::{self, Sorted};
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_domain::{MfaPolicy, PairwiseSecret, Tenant, TenantId, TenantSlug, TenantStatus};
use svc_store::{Order, StoreError, TenantReads, TenantWrites};
use time::OffsetDateTime;

const SELECT_BY_ID: &str = "SELECT id, slug, display_name, status, signup_enabled, mfa_policy, \
     pairwise_secret, created_at, updated_at \
     FROM tenants WHERE id = $1";
const SELECT_BY_SLUG: &str = "SELECT id, slug, display_name, status, signup_enabled, mfa_policy, \
     pairwise_secret, created_at, updated_at \
     FROM tenants WHERE slug = $1";
// SQLite has no row locks: its write transaction already excludes every other writer.
const SELECT_FOR_UPDATE: PerDialect = PerDialect {
    sqlite: SELECT_BY_ID,
    postgres: "SELECT id, slug, display_name, status, signup_enabled, mfa_policy, \
     pairwise_secret, created_at, updated_at \
     FROM tenants WHERE id = $1 FOR NO KEY UPDATE",
};
// `$1` is the cursor or the bound of its direction (`sorted::cursor`): a plain index range scan.
const LIST: Sorted = Sorted {
    asc: "SELECT id, slug, display_name, status, signup_enabled, mfa_policy, \
     pairwise_secret, created_at, updated_at \
     FROM tenants WHERE id > $1 ORDER BY id LIMIT $2",
    desc: "SELECT id, slug, display_name, status, signup_enabled, mfa_policy, \
     pairwise_secret, created_at, updated_at \
     FROM tenants WHERE id < $1 ORDER BY id DESC LIMIT $2",
};
// The policy goes last so both statements bind alike. A tenant on the default policy is
// written without the column (the database's default is 'default'): the migration tests seed
// tenants through this port on schemas older than the column.
const INSERT: &str = "INSERT INTO tenants (id, slug, display_name, status, signup_enabled, \
     pairwise_secret, created_at, updated_at, mfa_policy) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
const INSERT_DEFAULT_POLICY: &str = "INSERT INTO tenants (id, slug, display_name, status, \
     signup_enabled, pairwise_secret, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
// Never id, slug, created_at or pairwise_secret: the secret is fixed at creation, since changing
// it would change every pairwise subject the tenant's third-party applications know.
// Conditional on the revision the caller read (`$6`, its `updated_at`): an equality, which the
// stored text decides exactly on SQLite (one UTC spelling per instant) and `timestamptz` on
// PostgreSQL; under READ COMMITTED a concurrent update that committed first makes the row fail
// the condition.
const UPDATE: &str = "UPDATE tenants SET display_name = $2, status = $3, signup_enabled = $4, \
     mfa_policy = $5, updated_at = $6 WHERE id = $1 AND updated_at = $7";
const EXISTS: &str = "SELECT count(*) AS n FROM tenants WHERE id = $1";
// Cascades to everything the tenant owns (signing keys, applications, users, sessions, link
// tokens, grants); audit entries have no foreign key.
const DELETE: &str = "DELETE FROM tenants WHERE id = $1";

#[async_trait]
impl<D: Dialect> TenantReads for SqlTx<D> {
    async fn tenant_by_id(&mut self, id: &TenantId) -> Result<Option<Tenant>, StoreError> {
        Stmt::new(SELECT_BY_ID)
            .bind(id.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn tenant_by_slug(&mut self, slug: &TenantSlug) -> Result<Option<Tenant>, StoreError> {
        Stmt::new(SELECT_BY_SLUG)
            .bind(slug.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn list_tenants(
        &mut self,
        after: Option<&TenantId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<Tenant>, StoreError> {
        let rows = Stmt::new(LIST.pick(order))
            .bind(sorted::cursor(after.map(TenantId::as_str), order))
            .bind(i64::from(limit))
            .fetch_all::<D>(self.conn())
            .await?;
        rows.iter().map(decode::<D>).collect()
    }
}

#[async_trait]
impl<D: Dialect> TenantWrites for SqlTx<D> {
    async fn insert_tenant(&mut self, tenant: &Tenant) -> Result<(), StoreError> {
        let default_policy = tenant.mfa_policy == MfaPolicy::Default;
        let stmt = Stmt::new(if default_policy {
            INSERT_DEFAULT_POLICY
        } else {
            INSERT
        })
        .bind(tenant.id.as_str())
        .bind(tenant.slug.as_str())
        .bind(tenant.display_name.as_str())
        .bind(tenant.status.as_str())
        .bind(tenant.signup_enabled)
        .bind(tenant.pairwise_secret.as_bytes())
        .bind(tenant.created_at)
        .bind(tenant.updated_at);
        let stmt = if default_policy {
            stmt
        } else {
            stmt.bind(tenant.mfa_policy.as_str())
        };
        stmt.execute::<D>(self.conn()).await?;
        Ok(())
    }

    async fn tenant_for_update(&mut self, id: &TenantId) -> Result<Option<Tenant>, StoreError> {
        Stmt::new(SELECT_FOR_UPDATE.pick::<D>())
            .bind(id.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn update_tenant(
        &mut self,
        tenant: &Tenant,
        read_at: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(UPDATE)
            .bind(tenant.id.as_str())
            .bind(tenant.display_name.as_str())
            .bind(tenant.status.as_str())
            .bind(tenant.signup_enabled)
            .bind(tenant.mfa_policy.as_str())
            .bind(tenant.updated_at)
            .bind(read_at)
            .execute::<D>(self.conn())
            .await?;
        if changed > 0 {
            return Ok(true);
        }
        // Nothing matched: gone (NotFound), or changed since the caller read it (false).
        let row = Stmt::new(EXISTS)
            .bind(tenant.id.as_str())
            .fetch_one::<D>(self.conn())
            .await?;
        let n: i64 = Columns::<D>::new(&row, "tenants").get("n")?;
        if n == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(false)
    }

    async fn delete_tenant(&mut self, id: &TenantId) -> Result<(), StoreError> {
        let changed = Stmt::new(DELETE)
            .bind(id.as_str())
            .execute::<D>(self.conn())
            .await?;
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<Tenant, StoreError> {
    let c = Columns::<D>::new(row, "tenants");
    TenantRow {
        id: c.get("id")?,
        slug: c.get("slug")?,
        display_name: c.get("display_name")?,
        status: c.get("status")?,
        signup_enabled: c.get("signup_enabled")?,
        mfa_policy: c.get("mfa_policy")?,
        pairwise_secret: c.get("pairwise_secret")?,
        created_at: c.get("created_at")?,
        updated_at: c.get("updated_at")?,
    }
    .decode()
}

/// A `tenants` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct TenantRow {
    /// `id`.
    pub id: String,
    /// `slug`.
    pub slug: String,
    /// `display_name`.
    pub display_name: String,
    /// `status`.
    pub status: String,
    /// `signup_enabled`.
    pub signup_enabled: bool,
    /// `mfa_policy`.
    pub mfa_policy: String,
    /// `pairwise_secret` (32 bytes).
    pub pairwise_secret: Vec<u8>,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `updated_at`.
    pub updated_at: OffsetDateTime,
}

impl TenantRow {
    /// The tenant this row stores.
    pub(crate) fn decode(self) -> Result<Tenant, StoreError> {
        let r = Record {
            table: "tenants",
            name: &self.id,
        };
        Ok(Tenant {
            id: r.parse("id", &self.id, TenantId::parse)?,
            slug: r.parse("slug", &self.slug, TenantSlug::parse)?,
            status: r.parse("status", &self.status, |s| {
                TenantStatus::parse(s).ok_or("unknown status")
            })?,
            pairwise_secret: PairwiseSecret::from_bytes(&self.pairwise_secret).ok_or_else(
                || {
                    r.corrupt(
                        "pairwise_secret",
                        &format_args!("({} bytes)", self.pairwise_secret.len()),
                        &"not 32 bytes",
                    )
                },
            )?,
            mfa_policy: r.parse("mfa_policy", &self.mfa_policy, |s| {
                MfaPolicy::parse(s).ok_or("unknown policy")
            })?,
            display_name: self.display_name,
            signup_enabled: self.signup_enabled,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::{AT, TENANT, check};

    #[test]
    fn tenant_rows_decode_and_name_each_bad_column() {
        let tenant = TenantRow {
            id: TENANT.into(),
            slug: "acme".into(),
            display_name: "Acme".into(),
            status: "active".into(),
            signup_enabled: true,
            mfa_policy: "optional".into(),
            pairwise_secret: vec![1; 32],
            created_at: AT,
            updated_at: AT,
        };
        check(
            tenant,
            TenantRow::decode,
            &[
                ("tenants.pairwise_secret", |r| {
                    r.pairwise_secret = vec![1; 3]
                }),
                ("tenants.status", |r| r.status = "deleted".into()),
                ("tenants.mfa_policy", |r| r.mfa_policy = "admins".into()),
            ],
        );
    }
}
