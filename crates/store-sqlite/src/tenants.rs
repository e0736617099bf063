//! The tenant repository in SQL: queries on one connection (always inside a transaction opened by
//! [`crate::tx`]) and the decoding of rows back into domain types.
//!
//! The SQL text is identical to the PostgreSQL backend's; only binding and decoding differ.

use crate::error::map_err;
use crate::timestamps::utc;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection};
use svc_domain::{Tenant, TenantId, TenantSlug, TenantStatus};
use svc_store::StoreError;

const SELECT_BY_ID: &str = "SELECT id, slug, display_name, status, created_at, updated_at \
     FROM tenants WHERE id = $1";
const SELECT_BY_SLUG: &str = "SELECT id, slug, display_name, status, created_at, updated_at \
     FROM tenants WHERE slug = $1";
// Two statements rather than `$1 IS NULL OR id > $1`, so each has a plain index range scan.
const LIST_FIRST: &str = "SELECT id, slug, display_name, status, created_at, updated_at \
     FROM tenants ORDER BY id LIMIT $1";
const LIST_AFTER: &str = "SELECT id, slug, display_name, status, created_at, updated_at \
     FROM tenants WHERE id > $1 ORDER BY id LIMIT $2";
const INSERT: &str = "INSERT INTO tenants (id, slug, display_name, status, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6)";
const UPDATE: &str =
    "UPDATE tenants SET display_name = $2, status = $3, updated_at = $4 WHERE id = $1";
// Cascades to the tenant's signing keys and applications; audit entries have no foreign key.
const DELETE: &str = "DELETE FROM tenants WHERE id = $1";

pub(crate) async fn by_id(
    conn: &mut SqliteConnection,
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
    conn: &mut SqliteConnection,
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
    conn: &mut SqliteConnection,
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

pub(crate) async fn insert(conn: &mut SqliteConnection, tenant: &Tenant) -> Result<(), StoreError> {
    sqlx::query(INSERT)
        .bind(tenant.id.as_str())
        .bind(tenant.slug.as_str())
        .bind(tenant.display_name.as_str())
        .bind(tenant.status.as_str())
        .bind(utc(tenant.created_at))
        .bind(utc(tenant.updated_at))
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(())
}

pub(crate) async fn update(conn: &mut SqliteConnection, tenant: &Tenant) -> Result<(), StoreError> {
    let done = sqlx::query(UPDATE)
        .bind(tenant.id.as_str())
        .bind(tenant.display_name.as_str())
        .bind(tenant.status.as_str())
        .bind(utc(tenant.updated_at))
        .execute(conn)
        .await
        .map_err(map_err)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub(crate) async fn delete(conn: &mut SqliteConnection, id: &TenantId) -> Result<(), StoreError> {
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

fn decode(row: &SqliteRow) -> Result<Tenant, StoreError> {
    let id: String = row.try_get("id").map_err(map_err)?;
    let slug: String = row.try_get("slug").map_err(map_err)?;
    let status: String = row.try_get("status").map_err(map_err)?;
    Ok(Tenant {
        id: TenantId::parse(&id)
            .map_err(|e| StoreError::Corrupt(format!("tenants.id {id:?}: {e}")))?,
        slug: TenantSlug::parse(&slug)
            .map_err(|e| StoreError::Corrupt(format!("tenants.slug {slug:?} of {id}: {e}")))?,
        display_name: row.try_get("display_name").map_err(map_err)?,
        status: TenantStatus::parse(&status).ok_or_else(|| {
            StoreError::Corrupt(format!("tenants.status {status:?} of {id}: unknown status"))
        })?,
        created_at: row.try_get("created_at").map_err(map_err)?,
        updated_at: row.try_get("updated_at").map_err(map_err)?,
    })
}
