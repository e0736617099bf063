//! The event outbox: events recorded in the same transaction as the change they describe, the
//! relay's work list of events not yet fanned out, and the per-tenant event listing.

use super::rows::event_type;
use crate::dialect::{Conn, Dialect};
use crate::record::Record;
use crate::{Columns, PerDialect, Row, Stmt, naming};
use svc_domain::{Event, EventId, TenantId};
use svc_store::{StoreError, StoredEvent, UnrelayedEvent};
use time::OffsetDateTime;

/// `relayed_at` is given for an event delivered directly (already counted as fanned out).
const INSERT: PerDialect = PerDialect {
    sqlite: "INSERT INTO events (id, tenant_id, event_type, body, occurred_at, occurred_at_ns, \
             relayed_at, relayed_at_ns) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    postgres: "INSERT INTO events (id, tenant_id, event_type, body, occurred_at, relayed_at) \
               VALUES ($1, $2, $3, $4, $5, $6)",
};
/// The relay's work list, oldest (lowest id) first, through the partial index of unrelayed
/// events (`events_unrelayed_idx`, whose predicate each text repeats). On PostgreSQL the rows
/// stay locked until the relay's transaction ends and concurrent relays skip them
/// (`SKIP LOCKED`), so two instances never fan out the same event; on SQLite the relay's
/// write transaction already holds the database's single write lock.
const UNRELAYED: PerDialect = PerDialect {
    sqlite: "SELECT id, tenant_id, event_type, occurred_at FROM events \
             WHERE relayed_at_ns IS NULL ORDER BY id LIMIT $1",
    postgres: "SELECT id, tenant_id, event_type, occurred_at FROM events \
               WHERE relayed_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED",
};
// `""` sorts before every id, so "no cursor" is a lower bound like any other.
const LIST: &str = "SELECT id, tenant_id, event_type, occurred_at, body FROM events \
     WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3";
/// The ids as a list: a JSON array for `json_each` on SQLite, a `text[]` for `= ANY` on
/// PostgreSQL.
const MARK_RELAYED: PerDialect = PerDialect {
    sqlite: "UPDATE events SET relayed_at = $1, relayed_at_ns = $2 \
             WHERE id IN (SELECT value FROM json_each($3))",
    postgres: "UPDATE events SET relayed_at = $1 WHERE id = ANY($2)",
};

pub(super) async fn insert<D: Dialect>(
    conn: &mut Conn<D>,
    event: &Event,
    relayed_at: Option<OffsetDateTime>,
) -> Result<(), StoreError> {
    Stmt::new(INSERT.pick::<D>())
        .bind(event.id.as_str())
        .bind(event.tenant_id.as_str())
        .bind(event.event_type.as_str())
        .bind(event.envelope())
        .bind(event.occurred_at)
        .bind_twin(event.occurred_at)
        .bind(relayed_at)
        .bind_twin(relayed_at)
        .execute::<D>(conn)
        .await
        .map_err(|e| naming::foreign_key(e, "events_tenant_id_fkey"))?;
    Ok(())
}

pub(super) async fn unrelayed<D: Dialect>(
    conn: &mut Conn<D>,
    limit: u32,
) -> Result<Vec<UnrelayedEvent>, StoreError> {
    Stmt::new(UNRELAYED.pick::<D>())
        .bind(i64::from(limit))
        .fetch_all_with::<D, _>(conn, decode::<D>)
        .await
}

pub(super) async fn list<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    after: Option<&EventId>,
    limit: u32,
) -> Result<Vec<StoredEvent>, StoreError> {
    let rows = Stmt::new(LIST)
        .bind(tenant.as_str())
        .bind(after.map_or("", EventId::as_str))
        .bind(i64::from(limit))
        .fetch_all::<D>(conn)
        .await?;
    rows.iter()
        .map(|row| {
            let event = decode::<D>(row)?;
            Ok(StoredEvent {
                id: event.id,
                event_type: event.event_type,
                occurred_at: event.occurred_at,
                body: Columns::<D>::new(row, "events").get("body")?,
            })
        })
        .collect()
}

pub(super) async fn mark_relayed<D: Dialect>(
    conn: &mut Conn<D>,
    ids: &[EventId],
    now: OffsetDateTime,
) -> Result<(), StoreError> {
    if ids.is_empty() {
        return Ok(());
    }
    Stmt::new(MARK_RELAYED.pick::<D>())
        .bind(now)
        .bind_twin(now)
        .bind_list(ids.iter().map(EventId::as_str).collect())
        .execute::<D>(conn)
        .await?;
    Ok(())
}

/// Decodes an event's `id`, `tenant_id`, `event_type` and `occurred_at`.
fn decode<D: Dialect>(row: &Row<D>) -> Result<UnrelayedEvent, StoreError> {
    let c = Columns::<D>::new(row, "events");
    let id: String = c.get("id")?;
    let tenant: String = c.get("tenant_id")?;
    let kind: String = c.get("event_type")?;
    let r = Record {
        table: "events",
        name: &id,
    };
    Ok(UnrelayedEvent {
        id: r.parse("id", &id, EventId::parse)?,
        tenant_id: r.parse("tenant_id", &tenant, TenantId::parse)?,
        event_type: event_type(&r, "event_type", &kind)?,
        occurred_at: c.get("occurred_at")?,
    })
}
