//! Deliveries (one per event and subscription, plus manual redeliveries), the report of a
//! finished attempt, and the attempt history.

use super::rows::{AttemptRow, DeliveryRow};
use crate::dialect::{Conn, Dialect};
use crate::sorted::{self, Sorted};
use crate::{Columns, PerDialect, Row, Stmt, naming};
use svc_domain::{Delivery, DeliveryAttempt, DeliveryId, DeliveryStatus, TenantId, WebhookId};
use svc_store::{AttemptNext, DeliveryFilter, Order, StoreError};
use time::OffsetDateTime;

/// SQLite writes the `_ns` twins of `next_attempt_at` (the claim's due order), `created_at`
/// (queue figures) and `updated_at` (the purge).
const INSERT: PerDialect = PerDialect {
    sqlite: "INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, event_id, event_type, \
             status, attempts, next_attempt_at, next_attempt_at_ns, last_status_code, \
             last_error, redelivery_of, created_at, created_at_ns, updated_at, updated_at_ns) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
    postgres: "INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, event_id, event_type, \
               status, attempts, next_attempt_at, last_status_code, last_error, \
               redelivery_of, created_at, updated_at) \
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
};
const SELECT_BY_ID: &str = concat!(
    "SELECT ",
    delivery_columns!(),
    " FROM webhook_deliveries d WHERE d.tenant_id = $1 AND d.webhook_id = $2 AND d.id = $3"
);
// `$3` is the cursor or the bound of its direction (`sorted::cursor`).
const LIST: Sorted = Sorted {
    asc: concat!(
        "SELECT ",
        delivery_columns!(),
        " FROM webhook_deliveries d WHERE d.tenant_id = $1 AND d.webhook_id = $2 \
         AND d.id > $3 AND (CAST($4 AS TEXT) IS NULL OR d.status = $4) \
         ORDER BY d.id LIMIT $5"
    ),
    desc: concat!(
        "SELECT ",
        delivery_columns!(),
        " FROM webhook_deliveries d WHERE d.tenant_id = $1 AND d.webhook_id = $2 \
         AND d.id < $3 AND (CAST($4 AS TEXT) IS NULL OR d.status = $4) \
         ORDER BY d.id DESC LIMIT $5"
    ),
};
const ATTEMPTS: &str = "SELECT a.delivery_id, a.number, a.started_at, a.duration_ms, \
     a.status_code, a.error \
     FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id \
     WHERE d.tenant_id = $1 AND a.delivery_id = $2 ORDER BY a.number";
/// The fence: only the lease owner of exactly this attempt (`attempts` counts the attempt
/// being made since the claim) may report it; a worker that outlived its lease, or a report
/// of an earlier attempt, changes nothing. Releases the lease.
const FINISH: PerDialect = PerDialect {
    sqlite: "UPDATE webhook_deliveries SET status = $5, next_attempt_at = $6, \
             next_attempt_at_ns = $7, last_status_code = $8, last_error = $9, \
             lease_owner = NULL, lease_until_ns = NULL, leased_at = NULL, updated_at = $10, \
             updated_at_ns = $11 \
             WHERE tenant_id = $1 AND id = $2 AND lease_owner = $3 AND attempts = $4",
    postgres: "UPDATE webhook_deliveries SET status = $5, next_attempt_at = $6, \
               last_status_code = $7, last_error = $8, lease_owner = NULL, \
               lease_until = NULL, leased_at = NULL, updated_at = $9 \
               WHERE tenant_id = $1 AND id = $2 AND lease_owner = $3 AND attempts = $4",
};
// An attempt already recorded (the same report twice) is kept as it was.
const INSERT_ATTEMPT: &str = "INSERT INTO webhook_attempts (delivery_id, number, started_at, \
     duration_ms, status_code, error) VALUES ($1, $2, $3, $4, $5, $6) \
     ON CONFLICT (delivery_id, number) DO NOTHING";

pub(super) async fn insert<D: Dialect>(
    conn: &mut Conn<D>,
    delivery: &Delivery,
) -> Result<(), StoreError> {
    Stmt::new(INSERT.pick::<D>())
        .bind(delivery.id.as_str())
        .bind(delivery.tenant_id.as_str())
        .bind(delivery.webhook_id.as_str())
        .bind(delivery.event_id.as_str())
        .bind(delivery.event_type.as_str())
        .bind(delivery.status.as_str())
        .bind(i64::from(delivery.attempts))
        .bind(delivery.next_attempt_at)
        .bind_twin(delivery.next_attempt_at)
        .bind(delivery.last_status_code.map(i64::from))
        .bind(delivery.last_error.as_deref())
        .bind(delivery.redelivery_of.as_ref().map(DeliveryId::as_str))
        .bind(delivery.created_at)
        .bind_twin(delivery.created_at)
        .bind(delivery.updated_at)
        .bind_twin(delivery.updated_at)
        .execute::<D>(conn)
        .await
        .map_err(|e| naming::foreign_key(e, "webhook_deliveries_webhook_id_fkey"))?;
    Ok(())
}

pub(super) async fn by_id<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    webhook: &WebhookId,
    id: &DeliveryId,
) -> Result<Option<Delivery>, StoreError> {
    Stmt::new(SELECT_BY_ID)
        .bind(tenant.as_str())
        .bind(webhook.as_str())
        .bind(id.as_str())
        .fetch_optional_with::<D, _>(conn, decode::<D>)
        .await
}

pub(super) async fn list<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    webhook: &WebhookId,
    filter: &DeliveryFilter,
    after: Option<&DeliveryId>,
    order: Order,
    limit: u32,
) -> Result<Vec<Delivery>, StoreError> {
    Stmt::new(LIST.pick(order))
        .bind(tenant.as_str())
        .bind(webhook.as_str())
        .bind(sorted::cursor(after.map(DeliveryId::as_str), order))
        .bind(filter.status.map(DeliveryStatus::as_str))
        .bind(i64::from(limit))
        .fetch_all_with::<D, _>(conn, decode::<D>)
        .await
}

pub(super) async fn attempts<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    id: &DeliveryId,
) -> Result<Vec<DeliveryAttempt>, StoreError> {
    Stmt::new(ATTEMPTS)
        .bind(tenant.as_str())
        .bind(id.as_str())
        .fetch_all_with::<D, _>(conn, decode_attempt::<D>)
        .await
}

pub(super) async fn finish_attempt<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    id: &DeliveryId,
    owner: &str,
    attempt: &DeliveryAttempt,
    next: AttemptNext,
    now: OffsetDateTime,
) -> Result<bool, StoreError> {
    let (status, next_at) = match next {
        AttemptNext::Succeeded => (DeliveryStatus::Succeeded, None),
        AttemptNext::RetryAt(at) => (DeliveryStatus::Failed, Some(at)),
        AttemptNext::Exhausted => (DeliveryStatus::Exhausted, None),
    };
    let changed = Stmt::new(FINISH.pick::<D>())
        .bind(tenant.as_str())
        .bind(id.as_str())
        .bind(owner)
        .bind(i64::from(attempt.number))
        .bind(status.as_str())
        .bind(next_at)
        .bind_twin(next_at)
        .bind(attempt.status_code.map(i64::from))
        .bind(attempt.error.as_deref())
        .bind(now)
        .bind_twin(now)
        .execute::<D>(&mut *conn)
        .await?;
    if changed == 0 {
        return Ok(false);
    }
    Stmt::new(INSERT_ATTEMPT)
        .bind(id.as_str())
        .bind(i64::from(attempt.number))
        .bind(attempt.started_at)
        .bind(i64::from(attempt.duration_ms))
        .bind(attempt.status_code.map(i64::from))
        .bind(attempt.error.as_deref())
        .execute::<D>(conn)
        .await?;
    Ok(true)
}

/// Decodes a delivery from the columns of `delivery_columns!`.
pub(super) fn decode<D: Dialect>(row: &Row<D>) -> Result<Delivery, StoreError> {
    let c = Columns::<D>::new(row, "webhook_deliveries");
    DeliveryRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        webhook_id: c.get("webhook_id")?,
        event_id: c.get("event_id")?,
        event_type: c.get("event_type")?,
        status: c.get("status")?,
        attempts: c.get("attempts")?,
        next_attempt_at: c.get("next_attempt_at")?,
        last_status_code: c.get("last_status_code")?,
        last_error: c.get("last_error")?,
        redelivery_of: c.get("redelivery_of")?,
        created_at: c.get("created_at")?,
        updated_at: c.get("updated_at")?,
    }
    .decode()
}

fn decode_attempt<D: Dialect>(row: &Row<D>) -> Result<DeliveryAttempt, StoreError> {
    let c = Columns::<D>::new(row, "webhook_attempts");
    AttemptRow {
        delivery_id: c.get("delivery_id")?,
        number: c.get("number")?,
        started_at: c.get("started_at")?,
        duration_ms: c.get("duration_ms")?,
        status_code: c.get("status_code")?,
        error: c.get("error")?,
    }
    .decode()
}
