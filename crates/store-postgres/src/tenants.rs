//! The tenant repository in SQL: queries on one connection (always inside a transaction opened by
//! [`crate::tx`]), reading rows into [`TenantRow`], which decodes them.
//!
//! The SQL text is identical to the SQLite backend's; only binding and decoding differ.

use crate::error::{Columns, map_err};
use sqlx::PgConnection;
use sqlx::postgres::PgRow;
use svc_domain::{Tenant, TenantId, TenantSlug};
use svc_store::StoreError;
use svc_store::rows::TenantRow;

const SELECT_BY_ID: &str = "SELECT id, slug, display_name, status, signup_enabled, \
     pairwise_secret, created_at, updated_at \
     FROM tenants WHERE id = $1";
const SELECT_BY_SLUG: &str = "SELECT id, slug, display_name, status, signup_enabled, \
     pairwise_secret, created_at, updated_at \
     FROM tenants WHERE slug = $1";
// Two statements rather than `$1 IS NULL OR id > $1`, so each has a plain index range scan.
const LIST_FIRST: &str = "SELECT id, slug, display_name, status, signup_enabled, \
     pairwise_secret, created_at, updated_at \
     FROM tenants ORDER BY id LIMIT $1";
const LIST_AFTER: &str = "SELECT id, slug, display_name, status, signup_enabled, \
     pairwise_secret, created_at, updated_at \
     FROM tenants WHERE id > $1 ORDER BY id LIMIT $2";
const INSERT: &str = "INSERT INTO tenants (id, slug, display_name, status, signup_enabled, \
     pairwise_secret, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
// Never id, slug, created_at or pairwise_secret: the secret is fixed at creation, since changing
// it would change every pairwise subject the tenant's third-party applications know.
const UPDATE: &str = "UPDATE tenants SET display_name = $2, status = $3, signup_enabled = $4, \
     updated_at = $5 WHERE id = $1";
// Cascades to everything the tenant owns (signing keys, applications, users, sessions, link
// tokens, grants); audit entries have no foreign key.
const DELETE: &str = "DELETE FROM tenants WHERE id = $1";

pub(crate) async fn by_id(
    conn: &mut PgConnection,
    id: &TenantId,
) -> Result<Option<Tenant>, StoreError> {
    let row = sqlx::query(SELECT_BY_ID)
        .bind(id.as_str())
        .fetch_optional(conn)
        .await
        .map_err(map_err)?;
    row.as_ref().map(decode).transpose()
}

pub(crate) async fn by_slug(
    conn: &mut PgConnection,
    slug: &TenantSlug,
) -> Result<Option<Tenant>, StoreError> {
    let row = sqlx::query(SELECT_BY_SLUG)
        .bind(slug.as_str())
        .fetch_optional(conn)
        .await
        .map_err(map_err)?;
    row.as_ref().map(decode).transpose()
}

pub(crate) async fn list(
    conn: &mut PgConnection,
    after: Option<&TenantId>,
    limit: u32,
) -> Result<Vec<Tenant>, StoreError> {
    let limit = i64::from(limit);
    let rows = match after {
        None => sqlx::query(LIST_FIRST).bind(limit).fetch_all(conn).await,
        Some(after) => {
            sqlx::query(LIST_AFTER)
                .bind(after.as_str())
                .bind(limit)
                .fetch_all(conn)
                .await
        }
    }
    .map_err(map_err)?;
    rows.iter().map(decode).collect()
}

pub(crate) async fn insert(conn: &mut PgConnection, tenant: &Tenant) -> Result<(), StoreError> {
    sqlx::query(INSERT)
        .bind(tenant.id.as_str())
        .bind(tenant.slug.as_str())
        .bind(tenant.display_name.as_str())
        .bind(tenant.status.as_str())
        .bind(tenant.signup_enabled)
        .bind(tenant.pairwise_secret.as_bytes().as_slice())
        .bind(tenant.created_at)
        .bind(tenant.updated_at)
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(())
}

pub(crate) async fn update(conn: &mut PgConnection, tenant: &Tenant) -> Result<(), StoreError> {
    let done = sqlx::query(UPDATE)
        .bind(tenant.id.as_str())
        .bind(tenant.display_name.as_str())
        .bind(tenant.status.as_str())
        .bind(tenant.signup_enabled)
        .bind(tenant.updated_at)
        .execute(conn)
        .await
        .map_err(map_err)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub(crate) async fn delete(conn: &mut PgConnection, id: &TenantId) -> Result<(), StoreError> {
    let done = sqlx::query(DELETE)
        .bind(id.as_str())
        .execute(conn)
        .await
        .map_err(map_err)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

fn decode(row: &PgRow) -> Result<Tenant, StoreError> {
    let c = Columns::new(row, "tenants");
    TenantRow {
        id: c.get("id")?,
        slug: c.get("slug")?,
        display_name: c.get("display_name")?,
        status: c.get("status")?,
        signup_enabled: c.get("signup_enabled")?,
        pairwise_secret: c.get("pairwise_secret")?,
        created_at: c.get("created_at")?,
        updated_at: c.get("updated_at")?,
    }
    .decode()
}
