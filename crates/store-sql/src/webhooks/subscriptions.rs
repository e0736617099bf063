//! Tenants' webhook subscriptions: their statements and `decode`.

use super::rows::{SubscriptionRow, encode_event_types};
use crate::dialect::{Conn, Dialect, PerDialect};
use crate::sorted::{self, Sorted};
use crate::{Columns, Row, Stmt, naming};
use svc_domain::{Subscription, TenantId, WebhookId};
use svc_store::{Order, StoreError};
use time::OffsetDateTime;

const SELECT_BY_ID: &str = select_subscriptions!("WHERE s.tenant_id = $1 AND s.id = $2");
// SQLite has no row locks: its write transaction already excludes every other writer.
const SELECT_FOR_UPDATE: PerDialect = PerDialect {
    sqlite: SELECT_BY_ID,
    postgres: select_subscriptions!("WHERE s.tenant_id = $1 AND s.id = $2 FOR NO KEY UPDATE OF s"),
};
// `$2` is the cursor or the bound of its direction (`sorted::cursor`).
const LIST: Sorted = Sorted {
    asc: select_subscriptions!("WHERE s.tenant_id = $1 AND s.id > $2 ORDER BY s.id LIMIT $3"),
    desc: select_subscriptions!("WHERE s.tenant_id = $1 AND s.id < $2 ORDER BY s.id DESC LIMIT $3"),
};
const ACTIVE: &str = select_subscriptions!("WHERE s.tenant_id = $1 AND s.active ORDER BY s.id");
const COUNT: &str = "SELECT count(*) AS n FROM webhook_subscriptions WHERE tenant_id = $1";
const INSERT: &str = "INSERT INTO webhook_subscriptions (id, tenant_id, url, event_types, \
     description, active, secret, previous_secret, previous_secret_until, disabled_reason, \
     created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";
// Never id, tenant_id or created_at. Conditional on the revision the caller read (`$12`, its
// `updated_at`): an equality, which the stored text decides exactly on SQLite (one UTC spelling
// per instant, see the backend's `timestamps`) and `timestamptz` on PostgreSQL; under READ
// COMMITTED a concurrent update that committed first makes the row fail the condition.
const UPDATE: &str = "UPDATE webhook_subscriptions SET url = $3, event_types = $4, \
     description = $5, active = $6, secret = $7, previous_secret = $8, \
     previous_secret_until = $9, disabled_reason = $10, updated_at = $11 \
     WHERE tenant_id = $1 AND id = $2 AND updated_at = $12";
const EXISTS: &str = "SELECT count(*) AS n FROM webhook_subscriptions \
     WHERE tenant_id = $1 AND id = $2";
// Cascades to the subscription's deliveries and their attempts. Conditional like `UPDATE`.
const DELETE: &str = "DELETE FROM webhook_subscriptions \
     WHERE tenant_id = $1 AND id = $2 AND updated_at = $3";

pub(super) async fn by_id<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    id: &WebhookId,
) -> Result<Option<Subscription>, StoreError> {
    Stmt::new(SELECT_BY_ID)
        .bind(tenant.as_str())
        .bind(id.as_str())
        .fetch_optional_with::<D, _>(conn, |r| decode::<D>(r, ""))
        .await
}

pub(super) async fn for_update<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    id: &WebhookId,
) -> Result<Option<Subscription>, StoreError> {
    Stmt::new(SELECT_FOR_UPDATE.pick::<D>())
        .bind(tenant.as_str())
        .bind(id.as_str())
        .fetch_optional_with::<D, _>(conn, |r| decode::<D>(r, ""))
        .await
}

pub(super) async fn list<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    after: Option<&WebhookId>,
    order: Order,
    limit: u32,
) -> Result<Vec<Subscription>, StoreError> {
    Stmt::new(LIST.pick(order))
        .bind(tenant.as_str())
        .bind(sorted::cursor(after.map(WebhookId::as_str), order))
        .bind(i64::from(limit))
        .fetch_all_with::<D, _>(conn, |r| decode::<D>(r, ""))
        .await
}

pub(super) async fn active<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
) -> Result<Vec<Subscription>, StoreError> {
    Stmt::new(ACTIVE)
        .bind(tenant.as_str())
        .fetch_all_with::<D, _>(conn, |r| decode::<D>(r, ""))
        .await
}

pub(super) async fn count<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
) -> Result<u64, StoreError> {
    let row = Stmt::new(COUNT)
        .bind(tenant.as_str())
        .fetch_one::<D>(conn)
        .await?;
    super::count(&Columns::<D>::new(&row, "webhook_subscriptions"), "n")
}

pub(super) async fn insert<D: Dialect>(
    conn: &mut Conn<D>,
    webhook: &Subscription,
) -> Result<(), StoreError> {
    Stmt::new(INSERT)
        .bind(webhook.id.as_str())
        .bind(webhook.tenant_id.as_str())
        .bind(webhook.url.as_str())
        .bind_json(encode_event_types(&webhook.event_types)?)
        .bind(webhook.description.as_deref())
        .bind(webhook.active)
        .bind(webhook.secret.expose())
        .bind(webhook.previous_secret.as_ref().map(|(s, _)| s.expose()))
        .bind(webhook.previous_secret.as_ref().map(|(_, until)| *until))
        .bind(webhook.disabled_reason.as_deref())
        .bind(webhook.created_at)
        .bind(webhook.updated_at)
        .execute::<D>(conn)
        .await
        .map_err(|e| naming::foreign_key(e, "webhook_subscriptions_tenant_id_fkey"))?;
    Ok(())
}

pub(super) async fn update<D: Dialect>(
    conn: &mut Conn<D>,
    webhook: &Subscription,
    read_at: OffsetDateTime,
) -> Result<bool, StoreError> {
    let changed = Stmt::new(UPDATE)
        .bind(webhook.tenant_id.as_str())
        .bind(webhook.id.as_str())
        .bind(webhook.url.as_str())
        .bind_json(encode_event_types(&webhook.event_types)?)
        .bind(webhook.description.as_deref())
        .bind(webhook.active)
        .bind(webhook.secret.expose())
        .bind(webhook.previous_secret.as_ref().map(|(s, _)| s.expose()))
        .bind(webhook.previous_secret.as_ref().map(|(_, until)| *until))
        .bind(webhook.disabled_reason.as_deref())
        .bind(webhook.updated_at)
        .bind(read_at)
        .execute::<D>(conn)
        .await?;
    if changed > 0 {
        return Ok(true);
    }
    // Nothing matched: gone (NotFound), or changed since the caller read it (false).
    let row = Stmt::new(EXISTS)
        .bind(webhook.tenant_id.as_str())
        .bind(webhook.id.as_str())
        .fetch_one::<D>(conn)
        .await?;
    if super::count(&Columns::<D>::new(&row, "webhook_subscriptions"), "n")? == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(false)
}

pub(super) async fn delete<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    id: &WebhookId,
    read_at: OffsetDateTime,
) -> Result<bool, StoreError> {
    let changed = Stmt::new(DELETE)
        .bind(tenant.as_str())
        .bind(id.as_str())
        .bind(read_at)
        .execute::<D>(conn)
        .await?;
    Ok(changed > 0)
}

/// Decodes a subscription from columns named `{prefix}id`, `{prefix}url`, ….
pub(super) fn decode<D: Dialect>(row: &Row<D>, prefix: &str) -> Result<Subscription, StoreError> {
    let c = Columns::<D>::new(row, "webhook_subscriptions");
    let col = |name: &str| format!("{prefix}{name}");
    SubscriptionRow {
        id: c.get(&col("id"))?,
        tenant_id: c.get(&col("tenant_id"))?,
        url: c.get(&col("url"))?,
        event_types: c.json(&col("event_types"))?,
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
