//! The delivery workers' queue: claiming due deliveries with a lease, reporting leases that ran
//! out, the queue figures for metrics, and the purge of finished history.
//!
//! Concurrent claimers (threads, processes, instances) must never lease the same delivery, and
//! how that is ensured is the one real difference between the dialects here:
//!
//! - SQLite: every write transaction began with `BEGIN IMMEDIATE`, so the claim's
//!   `UPDATE … WHERE id IN (SELECT … LIMIT n) RETURNING` runs under the database's single write
//!   lock: no other writer can pick the same rows between the `SELECT` and the `UPDATE`.
//! - PostgreSQL: the inner `SELECT` takes the rows `FOR UPDATE OF d SKIP LOCKED`, so concurrent
//!   instances take disjoint rows without waiting for each other.
//!
//! Either way the row lock (or the write lock) ends with the claim's short transaction: what
//! outlives it is the lease (`lease_owner` until `lease_until`), never a lock held across the
//! HTTP call.

use super::{count, deliveries, subscriptions};
use crate::dialect::{Conn, Dialect};
use crate::{Columns, PerDialect, Stmt};
use svc_store::{ClaimedDelivery, ExpiredLease, QueueStats, StoreError};
use time::OffsetDateTime;

/// Leases up to `$5` due deliveries (pending or failed, `next_attempt_at <= $2`, no lease,
/// subscription active) to `$1` until `$3`, counting the attempt; `$4` is `leased_at` (the
/// same instant as `$2`, as stored text on SQLite). Due order through
/// `webhook_deliveries_due_idx`. See the module's documentation for why the texts differ.
const CLAIM: PerDialect = PerDialect {
    sqlite: "UPDATE webhook_deliveries SET lease_owner = $1, lease_until_ns = $3, \
             leased_at = $4, attempts = attempts + 1 \
             WHERE id IN (SELECT d.id FROM webhook_deliveries d \
                 JOIN webhook_subscriptions s ON s.id = d.webhook_id \
                 WHERE d.status IN ('pending', 'failed') AND d.next_attempt_at_ns <= $2 \
                 AND d.lease_owner IS NULL AND s.active \
                 ORDER BY d.next_attempt_at_ns, d.id LIMIT $5) \
             RETURNING id",
    postgres: "UPDATE webhook_deliveries SET lease_owner = $1, lease_until = $3, \
               leased_at = $4, attempts = attempts + 1 \
               WHERE id IN (SELECT d.id FROM webhook_deliveries d \
                   JOIN webhook_subscriptions s ON s.id = d.webhook_id \
                   WHERE d.status IN ('pending', 'failed') AND d.next_attempt_at <= $2 \
                   AND d.lease_owner IS NULL AND s.active \
                   ORDER BY d.next_attempt_at, d.id LIMIT $5 FOR UPDATE OF d SKIP LOCKED) \
               RETURNING id",
};
macro_rules! claimed {
    ($where:literal) => {
        concat!(
            "SELECT ",
            delivery_columns!(),
            ", e.body, s.id AS sub_id, s.tenant_id AS sub_tenant_id, s.url AS sub_url, \
             s.event_types AS sub_event_types, s.description AS sub_description, \
             s.active AS sub_active, s.secret AS sub_secret, \
             s.previous_secret AS sub_previous_secret, \
             s.previous_secret_until AS sub_previous_secret_until, \
             s.disabled_reason AS sub_disabled_reason, s.created_at AS sub_created_at, \
             s.updated_at AS sub_updated_at \
             FROM webhook_deliveries d JOIN events e ON e.id = d.event_id \
             JOIN webhook_subscriptions s ON s.id = d.webhook_id ",
            $where
        )
    };
}
/// What a worker needs to send the deliveries just claimed (ids `$1` as a list: `json_each` on
/// SQLite, `= ANY` on PostgreSQL), in due order.
const CLAIMED: PerDialect = PerDialect {
    sqlite: claimed!(
        "WHERE d.id IN (SELECT value FROM json_each($1)) ORDER BY d.next_attempt_at_ns, d.id"
    ),
    postgres: claimed!("WHERE d.id = ANY($1) ORDER BY d.next_attempt_at, d.id"),
};
/// Leases that ran out before `$1`, through `webhook_deliveries_lease_idx`. On PostgreSQL the
/// rows stay locked until the reaper's transaction ends and concurrent reapers skip them; on
/// SQLite the reaper's write transaction already excludes every other writer.
const EXPIRED: PerDialect = PerDialect {
    sqlite: concat!(
        "SELECT ",
        delivery_columns!(),
        ", d.lease_owner, d.leased_at FROM webhook_deliveries d \
         WHERE d.lease_owner IS NOT NULL AND d.lease_until_ns < $1 \
         ORDER BY d.lease_until_ns LIMIT $2"
    ),
    postgres: concat!(
        "SELECT ",
        delivery_columns!(),
        ", d.lease_owner, d.leased_at FROM webhook_deliveries d \
         WHERE d.lease_owner IS NOT NULL AND d.lease_until < $1 \
         ORDER BY d.lease_until LIMIT $2 FOR UPDATE SKIP LOCKED"
    ),
};
/// Unrelayed events, open deliveries of active subscriptions, and the oldest of either
/// (`oldest` is an instant: nanoseconds from the `_ns` twins on SQLite, `timestamptz` on
/// PostgreSQL; `min` skips the `NULL` of an empty side).
const STATS: PerDialect = PerDialect {
    sqlite: "SELECT (SELECT count(*) FROM events WHERE relayed_at_ns IS NULL) AS unrelayed, \
             (SELECT count(*) FROM webhook_deliveries d JOIN webhook_subscriptions s \
                 ON s.id = d.webhook_id WHERE d.status IN ('pending', 'failed') AND s.active) \
                 AS open, \
             (SELECT min(t) FROM ( \
                 SELECT min(occurred_at_ns) AS t FROM events WHERE relayed_at_ns IS NULL \
                 UNION ALL \
                 SELECT min(d.created_at_ns) FROM webhook_deliveries d \
                     JOIN webhook_subscriptions s ON s.id = d.webhook_id \
                     WHERE d.status IN ('pending', 'failed') AND s.active) AS x) AS oldest",
    postgres: "SELECT (SELECT count(*) FROM events WHERE relayed_at IS NULL) AS unrelayed, \
               (SELECT count(*) FROM webhook_deliveries d JOIN webhook_subscriptions s \
                   ON s.id = d.webhook_id WHERE d.status IN ('pending', 'failed') AND s.active) \
                   AS open, \
               (SELECT min(t) FROM ( \
                   SELECT min(occurred_at) AS t FROM events WHERE relayed_at IS NULL \
                   UNION ALL \
                   SELECT min(d.created_at) FROM webhook_deliveries d \
                       JOIN webhook_subscriptions s ON s.id = d.webhook_id \
                       WHERE d.status IN ('pending', 'failed') AND s.active) AS x) AS oldest",
};
/// At most `$2` final deliveries (their attempts cascade) older than `$1`, through
/// `webhook_deliveries_final_idx`.
const PURGE_DELIVERIES: PerDialect = PerDialect {
    sqlite: "DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries \
             WHERE status IN ('succeeded', 'exhausted') AND updated_at_ns < $1 LIMIT $2)",
    postgres: "DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries \
               WHERE status IN ('succeeded', 'exhausted') AND updated_at < $1 LIMIT $2)",
};
/// At most `$2` fanned-out events older than `$1` that no remaining delivery refers to (run
/// after [`PURGE_DELIVERIES`], so the deliveries just purged no longer keep their events).
const PURGE_EVENTS: PerDialect = PerDialect {
    sqlite: "DELETE FROM events WHERE id IN (SELECT id FROM events \
             WHERE relayed_at_ns IS NOT NULL AND occurred_at_ns < $1 \
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id) \
             LIMIT $2)",
    postgres: "DELETE FROM events WHERE id IN (SELECT id FROM events \
               WHERE relayed_at IS NOT NULL AND occurred_at < $1 \
               AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id) \
               LIMIT $2)",
};

pub(super) async fn claim<D: Dialect>(
    conn: &mut Conn<D>,
    owner: &str,
    now: OffsetDateTime,
    lease_until: OffsetDateTime,
    limit: u32,
) -> Result<Vec<ClaimedDelivery>, StoreError> {
    let rows = Stmt::new(CLAIM.pick::<D>())
        .bind(owner)
        .bind_instant(now)
        .bind_instant(lease_until)
        .bind(now)
        .bind(i64::from(limit))
        .fetch_all::<D>(&mut *conn)
        .await?;
    let ids = rows
        .iter()
        .map(|row| Columns::<D>::new(row, "webhook_deliveries").get::<String>("id"))
        .collect::<Result<Vec<_>, _>>()?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows = Stmt::new(CLAIMED.pick::<D>())
        .bind_list(ids.iter().map(String::as_str).collect())
        .fetch_all::<D>(conn)
        .await?;
    rows.iter()
        .map(|row| {
            Ok(ClaimedDelivery {
                delivery: deliveries::decode::<D>(row)?,
                body: Columns::<D>::new(row, "events").get("body")?,
                subscription: subscriptions::decode::<D>(row, "sub_")?,
            })
        })
        .collect()
}

pub(super) async fn expired_leases<D: Dialect>(
    conn: &mut Conn<D>,
    now: OffsetDateTime,
    limit: u32,
) -> Result<Vec<ExpiredLease>, StoreError> {
    let rows = Stmt::new(EXPIRED.pick::<D>())
        .bind_instant(now)
        .bind(i64::from(limit))
        .fetch_all::<D>(conn)
        .await?;
    rows.iter()
        .map(|row| {
            let c = Columns::<D>::new(row, "webhook_deliveries");
            Ok(ExpiredLease {
                delivery: deliveries::decode::<D>(row)?,
                owner: c.get("lease_owner")?,
                leased_at: c.get("leased_at")?,
            })
        })
        .collect()
}

pub(super) async fn stats<D: Dialect>(conn: &mut Conn<D>) -> Result<QueueStats, StoreError> {
    let row = Stmt::new(STATS.pick::<D>()).fetch_one::<D>(conn).await?;
    let c = Columns::<D>::new(&row, "events");
    Ok(QueueStats {
        unrelayed_events: count(&c, "unrelayed")?,
        open_deliveries: count(&c, "open")?,
        oldest_pending_at: c.instant("oldest")?,
    })
}

pub(super) async fn purge_history<D: Dialect>(
    conn: &mut Conn<D>,
    before: OffsetDateTime,
    limit: u64,
) -> Result<u64, StoreError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let deliveries = Stmt::new(PURGE_DELIVERIES.pick::<D>())
        .bind_instant(before)
        .bind(limit)
        .execute::<D>(&mut *conn)
        .await?;
    let events = Stmt::new(PURGE_EVENTS.pick::<D>())
        .bind_instant(before)
        .bind(limit)
        .execute::<D>(conn)
        .await?;
    Ok(deliveries + events)
}
