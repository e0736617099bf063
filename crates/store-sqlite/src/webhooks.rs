//! The event outbox and webhook delivery in SQL, on one connection (always inside a transaction
//! opened by [`crate::tx`]); rows are read into the row forms of `svc_store::rows`.
//!
//! Every write transaction began with `BEGIN IMMEDIATE`, so the claim's
//! `UPDATE … WHERE id IN (SELECT … LIMIT n) RETURNING` runs under the database's single write
//! lock: two workers (threads or processes) can never lease the same delivery. Instants compared
//! in SQL use the `_ns` twins (see [`crate::timestamps`]).

use crate::error::{Columns, map_err, name_foreign_key};
use crate::timestamps::{nanos, utc};
use sqlx::SqliteConnection;
use sqlx::sqlite::SqliteRow;
use svc_domain::{
    Delivery, DeliveryAttempt, DeliveryId, DeliveryStatus, Event, EventId, EventType, Subscription,
    TenantId, WebhookId,
};
use svc_store::rows::{
    AttemptRow, DeliveryRow, SubscriptionRow, encode_event_types, encode_strings,
};
use svc_store::{
    AttemptNext, ClaimedDelivery, DeliveryFilter, ExpiredLease, QueueStats, StoreError,
    StoredEvent, UnrelayedEvent,
};
use time::OffsetDateTime;

macro_rules! select_subscriptions {
    ($rest:literal) => {
        concat!(
            "SELECT s.id, s.tenant_id, s.url, s.event_types, s.description, s.active, s.secret, \
             s.previous_secret, s.previous_secret_until, s.disabled_reason, s.created_at, \
             s.updated_at FROM webhook_subscriptions s ",
            $rest
        )
    };
}

macro_rules! delivery_columns {
    () => {
        "d.id, d.tenant_id, d.webhook_id, d.event_id, d.event_type, d.status, d.attempts, \
         d.next_attempt_at, d.last_status_code, d.last_error, d.redelivery_of, d.created_at, \
         d.updated_at"
    };
}

const INSERT_EVENT: &str = "INSERT INTO events (id, tenant_id, event_type, body, occurred_at, \
     occurred_at_ns, relayed_at, relayed_at_ns) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
const INSERT_SUBSCRIPTION: &str = "INSERT INTO webhook_subscriptions (id, tenant_id, url, \
     event_types, description, active, secret, previous_secret, previous_secret_until, \
     disabled_reason, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";
const UPDATE_SUBSCRIPTION: &str = "UPDATE webhook_subscriptions SET url = $3, event_types = $4, \
     description = $5, active = $6, secret = $7, previous_secret = $8, \
     previous_secret_until = $9, disabled_reason = $10, updated_at = $11 \
     WHERE tenant_id = $1 AND id = $2";
const INSERT_DELIVERY: &str = "INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, \
     event_id, event_type, status, attempts, next_attempt_at, next_attempt_at_ns, \
     last_status_code, last_error, redelivery_of, created_at, created_at_ns, updated_at, \
     updated_at_ns) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)";
const CLAIM: &str = "UPDATE webhook_deliveries SET lease_owner = $1, lease_until_ns = $3, \
     leased_at = $4, attempts = attempts + 1 \
     WHERE id IN (SELECT d.id FROM webhook_deliveries d \
         JOIN webhook_subscriptions s ON s.id = d.webhook_id \
         WHERE d.status IN ('pending', 'failed') AND d.next_attempt_at_ns <= $2 \
         AND d.lease_owner IS NULL AND s.active = 1 \
         ORDER BY d.next_attempt_at_ns, d.id LIMIT $5) \
     RETURNING id";
const FINISH: &str = "UPDATE webhook_deliveries SET status = $5, next_attempt_at = $6, \
     next_attempt_at_ns = $7, last_status_code = $8, last_error = $9, lease_owner = NULL, \
     lease_until_ns = NULL, leased_at = NULL, updated_at = $10, updated_at_ns = $11 \
     WHERE tenant_id = $1 AND id = $2 AND lease_owner = $3 AND attempts = $4";
const INSERT_ATTEMPT: &str = "INSERT INTO webhook_attempts (delivery_id, number, started_at, \
     duration_ms, status_code, error) VALUES ($1, $2, $3, $4, $5, $6) \
     ON CONFLICT (delivery_id, number) DO NOTHING";

pub(crate) async fn insert_event(
    conn: &mut SqliteConnection,
    event: &Event,
    relayed_at: Option<OffsetDateTime>,
) -> Result<(), StoreError> {
    sqlx::query(INSERT_EVENT)
        .bind(event.id.as_str())
        .bind(event.tenant_id.as_str())
        .bind(event.event_type.as_str())
        .bind(event.envelope())
        .bind(utc(event.occurred_at))
        .bind(nanos(event.occurred_at))
        .bind(relayed_at.map(utc))
        .bind(relayed_at.map(nanos))
        .execute(conn)
        .await
        .map_err(|e| name_foreign_key(map_err(e), "events_tenant_id_fkey"))?;
    Ok(())
}

pub(crate) async fn webhook(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    id: &WebhookId,
) -> Result<Option<Subscription>, StoreError> {
    let row = sqlx::query(select_subscriptions!(
        "WHERE s.tenant_id = $1 AND s.id = $2"
    ))
    .bind(tenant.as_str())
    .bind(id.as_str())
    .fetch_optional(conn)
    .await
    .map_err(map_err)?;
    row.as_ref().map(|r| decode_subscription(r, "")).transpose()
}

pub(crate) async fn list_webhooks(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    after: Option<&WebhookId>,
    limit: u32,
) -> Result<Vec<Subscription>, StoreError> {
    let rows = sqlx::query(select_subscriptions!(
        "WHERE s.tenant_id = $1 AND s.id > $2 ORDER BY s.id LIMIT $3"
    ))
    .bind(tenant.as_str())
    .bind(after.map_or("", WebhookId::as_str))
    .bind(i64::from(limit))
    .fetch_all(conn)
    .await
    .map_err(map_err)?;
    rows.iter().map(|r| decode_subscription(r, "")).collect()
}

pub(crate) async fn active_webhooks(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
) -> Result<Vec<Subscription>, StoreError> {
    let rows = sqlx::query(select_subscriptions!(
        "WHERE s.tenant_id = $1 AND s.active = 1 ORDER BY s.id"
    ))
    .bind(tenant.as_str())
    .fetch_all(conn)
    .await
    .map_err(map_err)?;
    rows.iter().map(|r| decode_subscription(r, "")).collect()
}

pub(crate) async fn count_webhooks(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
) -> Result<u64, StoreError> {
    let count: i64 =
        sqlx::query_scalar("SELECT count(*) FROM webhook_subscriptions WHERE tenant_id = $1")
            .bind(tenant.as_str())
            .fetch_one(conn)
            .await
            .map_err(map_err)?;
    Ok(u64::try_from(count).unwrap_or(0))
}

pub(crate) async fn insert_webhook(
    conn: &mut SqliteConnection,
    webhook: &Subscription,
) -> Result<(), StoreError> {
    sqlx::query(INSERT_SUBSCRIPTION)
        .bind(webhook.id.as_str())
        .bind(webhook.tenant_id.as_str())
        .bind(webhook.url.as_str())
        .bind(encode_event_types(&webhook.event_types)?)
        .bind(webhook.description.as_deref())
        .bind(webhook.active)
        .bind(webhook.secret.expose())
        .bind(webhook.previous_secret.as_ref().map(|(s, _)| s.expose()))
        .bind(
            webhook
                .previous_secret
                .as_ref()
                .map(|(_, until)| utc(*until)),
        )
        .bind(webhook.disabled_reason.as_deref())
        .bind(utc(webhook.created_at))
        .bind(utc(webhook.updated_at))
        .execute(conn)
        .await
        .map_err(|e| name_foreign_key(map_err(e), "webhook_subscriptions_tenant_id_fkey"))?;
    Ok(())
}

pub(crate) async fn update_webhook(
    conn: &mut SqliteConnection,
    webhook: &Subscription,
) -> Result<(), StoreError> {
    let done = sqlx::query(UPDATE_SUBSCRIPTION)
        .bind(webhook.tenant_id.as_str())
        .bind(webhook.id.as_str())
        .bind(webhook.url.as_str())
        .bind(encode_event_types(&webhook.event_types)?)
        .bind(webhook.description.as_deref())
        .bind(webhook.active)
        .bind(webhook.secret.expose())
        .bind(webhook.previous_secret.as_ref().map(|(s, _)| s.expose()))
        .bind(
            webhook
                .previous_secret
                .as_ref()
                .map(|(_, until)| utc(*until)),
        )
        .bind(webhook.disabled_reason.as_deref())
        .bind(utc(webhook.updated_at))
        .execute(conn)
        .await
        .map_err(map_err)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub(crate) async fn delete_webhook(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    id: &WebhookId,
) -> Result<bool, StoreError> {
    let done = sqlx::query("DELETE FROM webhook_subscriptions WHERE tenant_id = $1 AND id = $2")
        .bind(tenant.as_str())
        .bind(id.as_str())
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(done.rows_affected() > 0)
}

pub(crate) async fn unrelayed_events(
    conn: &mut SqliteConnection,
    limit: u32,
) -> Result<Vec<UnrelayedEvent>, StoreError> {
    let rows = sqlx::query(
        "SELECT id, tenant_id, event_type, occurred_at FROM events WHERE relayed_at_ns IS NULL \
         ORDER BY id LIMIT $1",
    )
    .bind(i64::from(limit))
    .fetch_all(conn)
    .await
    .map_err(map_err)?;
    rows.iter().map(decode_unrelayed).collect()
}

fn decode_unrelayed(row: &SqliteRow) -> Result<UnrelayedEvent, StoreError> {
    let c = Columns::new(row, "events");
    let id: String = c.get("id")?;
    let tenant: String = c.get("tenant_id")?;
    let event_type: String = c.get("event_type")?;
    let corrupt = |column: &str, value: &str| {
        StoreError::Corrupt(format!("events.{column} {value:?} of {id}: unreadable"))
    };
    Ok(UnrelayedEvent {
        id: EventId::parse(&id).map_err(|_| corrupt("id", &id))?,
        tenant_id: TenantId::parse(&tenant).map_err(|_| corrupt("tenant_id", &tenant))?,
        event_type: EventType::parse(&event_type)
            .ok_or_else(|| corrupt("event_type", &event_type))?,
        occurred_at: c.get("occurred_at")?,
    })
}

pub(crate) async fn events(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    after: Option<&EventId>,
    limit: u32,
) -> Result<Vec<StoredEvent>, StoreError> {
    let rows = sqlx::query(
        "SELECT id, tenant_id, event_type, occurred_at, body FROM events \
         WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3",
    )
    .bind(tenant.as_str())
    .bind(after.map_or("", EventId::as_str))
    .bind(i64::from(limit))
    .fetch_all(conn)
    .await
    .map_err(map_err)?;
    rows.iter()
        .map(|row| {
            let event = decode_unrelayed(row)?;
            Ok(StoredEvent {
                id: event.id,
                event_type: event.event_type,
                occurred_at: event.occurred_at,
                body: Columns::new(row, "events").get("body")?,
            })
        })
        .collect()
}

pub(crate) async fn mark_events_relayed(
    conn: &mut SqliteConnection,
    ids: &[EventId],
    now: OffsetDateTime,
) -> Result<(), StoreError> {
    if ids.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "UPDATE events SET relayed_at = $1, relayed_at_ns = $2 \
         WHERE id IN (SELECT value FROM json_each($3))",
    )
    .bind(utc(now))
    .bind(nanos(now))
    .bind(encode_strings(ids.iter().map(EventId::as_str))?)
    .execute(conn)
    .await
    .map_err(map_err)?;
    Ok(())
}

pub(crate) async fn insert_delivery(
    conn: &mut SqliteConnection,
    delivery: &Delivery,
) -> Result<(), StoreError> {
    sqlx::query(INSERT_DELIVERY)
        .bind(delivery.id.as_str())
        .bind(delivery.tenant_id.as_str())
        .bind(delivery.webhook_id.as_str())
        .bind(delivery.event_id.as_str())
        .bind(delivery.event_type.as_str())
        .bind(delivery.status.as_str())
        .bind(i64::from(delivery.attempts))
        .bind(delivery.next_attempt_at.map(utc))
        .bind(delivery.next_attempt_at.map(nanos))
        .bind(delivery.last_status_code.map(i64::from))
        .bind(delivery.last_error.as_deref())
        .bind(delivery.redelivery_of.as_ref().map(DeliveryId::as_str))
        .bind(utc(delivery.created_at))
        .bind(nanos(delivery.created_at))
        .bind(utc(delivery.updated_at))
        .bind(nanos(delivery.updated_at))
        .execute(conn)
        .await
        .map_err(|e| name_foreign_key(map_err(e), "webhook_deliveries_webhook_id_fkey"))?;
    Ok(())
}

pub(crate) async fn delivery(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    webhook: &WebhookId,
    id: &DeliveryId,
) -> Result<Option<Delivery>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        delivery_columns!(),
        " FROM webhook_deliveries d WHERE d.tenant_id = $1 AND d.webhook_id = $2 AND d.id = $3"
    ))
    .bind(tenant.as_str())
    .bind(webhook.as_str())
    .bind(id.as_str())
    .fetch_optional(conn)
    .await
    .map_err(map_err)?;
    row.as_ref().map(decode_delivery).transpose()
}

pub(crate) async fn list_deliveries(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    webhook: &WebhookId,
    filter: &DeliveryFilter,
    before: Option<&DeliveryId>,
    limit: u32,
) -> Result<Vec<Delivery>, StoreError> {
    // `~` sorts after every id character, so "no cursor" is an upper bound like any other.
    let rows = sqlx::query(concat!(
        "SELECT ",
        delivery_columns!(),
        " FROM webhook_deliveries d WHERE d.tenant_id = $1 AND d.webhook_id = $2 \
         AND d.id < $3 AND ($4 IS NULL OR d.status = $4) ORDER BY d.id DESC LIMIT $5"
    ))
    .bind(tenant.as_str())
    .bind(webhook.as_str())
    .bind(before.map_or("~", DeliveryId::as_str))
    .bind(filter.status.map(DeliveryStatus::as_str))
    .bind(i64::from(limit))
    .fetch_all(conn)
    .await
    .map_err(map_err)?;
    rows.iter().map(decode_delivery).collect()
}

pub(crate) async fn delivery_attempts(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    id: &DeliveryId,
) -> Result<Vec<DeliveryAttempt>, StoreError> {
    let rows = sqlx::query(
        "SELECT a.delivery_id, a.number, a.started_at, a.duration_ms, a.status_code, a.error \
         FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id \
         WHERE d.tenant_id = $1 AND a.delivery_id = $2 ORDER BY a.number",
    )
    .bind(tenant.as_str())
    .bind(id.as_str())
    .fetch_all(conn)
    .await
    .map_err(map_err)?;
    rows.iter().map(decode_attempt).collect()
}

pub(crate) async fn queue_stats(conn: &mut SqliteConnection) -> Result<QueueStats, StoreError> {
    let row = sqlx::query(
        "SELECT (SELECT count(*) FROM events WHERE relayed_at_ns IS NULL) AS unrelayed, \
         (SELECT count(*) FROM webhook_deliveries d JOIN webhook_subscriptions s \
             ON s.id = d.webhook_id WHERE d.status IN ('pending', 'failed') AND s.active = 1) \
             AS open, \
         (SELECT min(t) FROM ( \
             SELECT min(occurred_at_ns) AS t FROM events WHERE relayed_at_ns IS NULL \
             UNION ALL \
             SELECT min(d.created_at_ns) FROM webhook_deliveries d JOIN webhook_subscriptions s \
                 ON s.id = d.webhook_id WHERE d.status IN ('pending', 'failed') \
                 AND s.active = 1)) AS oldest_ns",
    )
    .fetch_one(conn)
    .await
    .map_err(map_err)?;
    let c = Columns::new(&row, "events");
    let unrelayed: i64 = c.get("unrelayed")?;
    let open: i64 = c.get("open")?;
    let oldest: Option<i64> = c.get("oldest_ns")?;
    Ok(QueueStats {
        unrelayed_events: u64::try_from(unrelayed).unwrap_or(0),
        open_deliveries: u64::try_from(open).unwrap_or(0),
        oldest_pending_at: oldest
            .and_then(|ns| OffsetDateTime::from_unix_timestamp_nanos(i128::from(ns)).ok()),
    })
}

pub(crate) async fn claim(
    conn: &mut SqliteConnection,
    owner: &str,
    now: OffsetDateTime,
    lease_until: OffsetDateTime,
    limit: u32,
) -> Result<Vec<ClaimedDelivery>, StoreError> {
    let ids: Vec<String> = sqlx::query_scalar(CLAIM)
        .bind(owner)
        .bind(nanos(now))
        .bind(nanos(lease_until))
        .bind(utc(now))
        .bind(i64::from(limit))
        .fetch_all(&mut *conn)
        .await
        .map_err(map_err)?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows = sqlx::query(concat!(
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
         JOIN webhook_subscriptions s ON s.id = d.webhook_id \
         WHERE d.id IN (SELECT value FROM json_each($1)) ORDER BY d.next_attempt_at_ns, d.id"
    ))
    .bind(encode_strings(ids.iter().map(String::as_str))?)
    .fetch_all(conn)
    .await
    .map_err(map_err)?;
    rows.iter()
        .map(|row| {
            Ok(ClaimedDelivery {
                delivery: decode_delivery(row)?,
                body: Columns::new(row, "events").get("body")?,
                subscription: decode_subscription(row, "sub_")?,
            })
        })
        .collect()
}

pub(crate) async fn expired_leases(
    conn: &mut SqliteConnection,
    now: OffsetDateTime,
    limit: u32,
) -> Result<Vec<ExpiredLease>, StoreError> {
    let rows = sqlx::query(concat!(
        "SELECT ",
        delivery_columns!(),
        ", d.lease_owner, d.leased_at FROM webhook_deliveries d \
         WHERE d.lease_owner IS NOT NULL AND d.lease_until_ns < $1 \
         ORDER BY d.lease_until_ns LIMIT $2"
    ))
    .bind(nanos(now))
    .bind(i64::from(limit))
    .fetch_all(conn)
    .await
    .map_err(map_err)?;
    rows.iter()
        .map(|row| {
            let c = Columns::new(row, "webhook_deliveries");
            Ok(ExpiredLease {
                delivery: decode_delivery(row)?,
                owner: c.get("lease_owner")?,
                leased_at: c.get("leased_at")?,
            })
        })
        .collect()
}

pub(crate) async fn finish_attempt(
    conn: &mut SqliteConnection,
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
    let done = sqlx::query(FINISH)
        .bind(tenant.as_str())
        .bind(id.as_str())
        .bind(owner)
        .bind(i64::from(attempt.number))
        .bind(status.as_str())
        .bind(next_at.map(utc))
        .bind(next_at.map(nanos))
        .bind(attempt.status_code.map(i64::from))
        .bind(attempt.error.as_deref())
        .bind(utc(now))
        .bind(nanos(now))
        .execute(&mut *conn)
        .await
        .map_err(map_err)?;
    if done.rows_affected() == 0 {
        return Ok(false);
    }
    sqlx::query(INSERT_ATTEMPT)
        .bind(id.as_str())
        .bind(i64::from(attempt.number))
        .bind(utc(attempt.started_at))
        .bind(i64::from(attempt.duration_ms))
        .bind(attempt.status_code.map(i64::from))
        .bind(attempt.error.as_deref())
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(true)
}

pub(crate) async fn purge_history(
    conn: &mut SqliteConnection,
    before: OffsetDateTime,
) -> Result<u64, StoreError> {
    let deliveries = sqlx::query(
        "DELETE FROM webhook_deliveries WHERE status IN ('succeeded', 'exhausted') \
         AND updated_at_ns < $1",
    )
    .bind(nanos(before))
    .execute(&mut *conn)
    .await
    .map_err(map_err)?;
    let events = sqlx::query(
        "DELETE FROM events WHERE relayed_at_ns IS NOT NULL AND occurred_at_ns < $1 \
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id)",
    )
    .bind(nanos(before))
    .execute(conn)
    .await
    .map_err(map_err)?;
    Ok(deliveries.rows_affected() + events.rows_affected())
}

/// Decodes a subscription from columns named `{prefix}id`, `{prefix}url`, ….
fn decode_subscription(row: &SqliteRow, prefix: &str) -> Result<Subscription, StoreError> {
    let c = Columns::new(row, "webhook_subscriptions");
    let col = |name: &str| format!("{prefix}{name}");
    SubscriptionRow {
        id: c.get(&col("id"))?,
        tenant_id: c.get(&col("tenant_id"))?,
        url: c.get(&col("url"))?,
        event_types: c.get(&col("event_types"))?,
        description: c.get(&col("description"))?,
        active: c.get(&col("active"))?,
        secret: c.get(&col("secret"))?,
        previous_secret: c.get(&col("previous_secret"))?,
        previous_secret_until: c.get(&col("previous_secret_until"))?,
        disabled_reason: c.get(&col("disabled_reason"))?,
        created_at: c.get(&col("created_at"))?,
        updated_at: c.get(&col("updated_at"))?,
    }
    .decode()
}

fn decode_delivery(row: &SqliteRow) -> Result<Delivery, StoreError> {
    let c = Columns::new(row, "webhook_deliveries");
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

fn decode_attempt(row: &SqliteRow) -> Result<DeliveryAttempt, StoreError> {
    let c = Columns::new(row, "webhook_attempts");
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
