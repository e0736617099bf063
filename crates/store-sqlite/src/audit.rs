//! The audit-log repository in SQL: appends, and listings newest first with exact-match and time
//! filters, on one connection (always inside a transaction opened by [`crate::tx`]).
//!
//! The time filters compare `occurred_at_ns`, the integer twin of `occurred_at` (see
//! [`crate::timestamps`]): the stored RFC 3339 text does not order chronologically below one
//! second, so comparing it would let an entry at `12:00:00` pass `since = 12:00:00.25`. The
//! comparison happens in SQL, so `LIMIT` and the cursor stay exact, with no filtering after the
//! fact. The statement is assembled from the filters present, each value bound, so every shape
//! keeps a plain range scan of `audit_log_tenant_id_id_idx`.

use crate::error::map_err;
use crate::timestamps::{nanos, utc};
use sqlx::sqlite::SqliteRow;
use sqlx::{QueryBuilder, Row, Sqlite, SqliteConnection};
use svc_domain::{AuditEntry, AuditEntryId, AuditOutcome, TenantId};
use svc_store::{AuditFilter, StoreError};

const SELECT: &str = "SELECT id, tenant_id, actor, action, target, request_id, client_ip, \
     outcome, occurred_at FROM audit_log WHERE tenant_id = ";
const INSERT: &str = "INSERT INTO audit_log (id, tenant_id, actor, action, target, request_id, \
     client_ip, outcome, occurred_at, occurred_at_ns) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";

pub(crate) async fn insert(
    conn: &mut SqliteConnection,
    entry: &AuditEntry,
) -> Result<(), StoreError> {
    sqlx::query(INSERT)
        .bind(entry.id.as_str())
        .bind(entry.tenant_id.as_ref().map(TenantId::as_str))
        .bind(entry.actor.as_str())
        .bind(entry.action.as_str())
        .bind(entry.target.as_deref())
        .bind(entry.request_id.as_deref())
        .bind(entry.client_ip.as_deref())
        .bind(entry.outcome.as_str())
        .bind(utc(entry.occurred_at))
        .bind(nanos(entry.occurred_at))
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(())
}

/// Up to `limit` entries of `tenant` matching `filter`, newest (highest id) first, with ids below
/// `before`.
pub(crate) async fn list(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    filter: &AuditFilter,
    before: Option<&AuditEntryId>,
    limit: u32,
) -> Result<Vec<AuditEntry>, StoreError> {
    let mut query = QueryBuilder::<Sqlite>::new(SELECT);
    query.push_bind(tenant.as_str());
    if let Some(before) = before {
        query.push(" AND id < ").push_bind(before.as_str());
    }
    if let Some(action) = &filter.action {
        query.push(" AND action = ").push_bind(action.as_str());
    }
    if let Some(actor) = &filter.actor {
        query.push(" AND actor = ").push_bind(actor.as_str());
    }
    if let Some(target) = &filter.target {
        query.push(" AND target = ").push_bind(target.as_str());
    }
    if let Some(since) = filter.since {
        query
            .push(" AND occurred_at_ns >= ")
            .push_bind(nanos(since));
    }
    if let Some(until) = filter.until {
        query.push(" AND occurred_at_ns < ").push_bind(nanos(until));
    }
    query
        .push(" ORDER BY id DESC LIMIT ")
        .push_bind(i64::from(limit));
    let rows = query.build().fetch_all(conn).await.map_err(map_err)?;
    rows.iter().map(decode).collect()
}

fn decode(row: &SqliteRow) -> Result<AuditEntry, StoreError> {
    let id: String = row.try_get("id").map_err(map_err)?;
    let tenant_id: Option<String> = row.try_get("tenant_id").map_err(map_err)?;
    let outcome: String = row.try_get("outcome").map_err(map_err)?;
    Ok(AuditEntry {
        tenant_id: tenant_id
            .map(|t| {
                TenantId::parse(&t).map_err(|e| {
                    StoreError::Corrupt(format!("audit_log.tenant_id {t:?} of {id}: {e}"))
                })
            })
            .transpose()?,
        actor: row.try_get("actor").map_err(map_err)?,
        action: row.try_get("action").map_err(map_err)?,
        target: row.try_get("target").map_err(map_err)?,
        request_id: row.try_get("request_id").map_err(map_err)?,
        client_ip: row.try_get("client_ip").map_err(map_err)?,
        outcome: AuditOutcome::parse(&outcome).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "audit_log.outcome {outcome:?} of {id}: unknown outcome"
            ))
        })?,
        occurred_at: row.try_get("occurred_at").map_err(map_err)?,
        id: AuditEntryId::parse(&id)
            .map_err(|e| StoreError::Corrupt(format!("audit_log.id {id:?}: {e}")))?,
    })
}
