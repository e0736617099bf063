//! Idempotency keys and single-use assertion ids in SQL, on one connection (always inside a
//! transaction opened by [`crate::tx`]).
//!
//! A record is live while `expires_at > now` and expired from `expires_at` on. Claiming a key and
//! using an assertion id are one upsert each: the insert takes a free key, the `DO UPDATE ...
//! WHERE` replaces an expired row, and a live row is left alone, which shows as no row changed
//! and is reported as the primary key's conflict. A concurrent claim of the same key waits for
//! the first transaction's uncommitted row, then sees it committed (live: conflict) or, after a
//! rollback, inserts; two claimants can never both succeed.

use crate::error::map_err;
use sqlx::postgres::PgRow;
use sqlx::{PgConnection, Row};
use svc_domain::{ClientId, TenantId};
use svc_store::{IdempotencyRecord, StoreError};
use time::OffsetDateTime;

const IDEMPOTENCY_PKEY: &str = "idempotency_keys_pkey";
const ASSERTION_PKEY: &str = "assertion_ids_pkey";

const SELECT_LIVE: &str = "SELECT scope, key, fingerprint, status, body, created_at, expires_at \
     FROM idempotency_keys WHERE scope = $1 AND key = $2 AND expires_at > $3";
const CLAIM: &str = "INSERT INTO idempotency_keys (scope, key, fingerprint, status, body, \
     created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
     ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, \
     status = excluded.status, body = excluded.body, created_at = excluded.created_at, \
     expires_at = excluded.expires_at \
     WHERE idempotency_keys.expires_at <= excluded.created_at";
const COMPLETE: &str =
    "UPDATE idempotency_keys SET status = $3, body = $4 WHERE scope = $1 AND key = $2";
const RELEASE: &str = "DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2";
const USE_ASSERTION: &str = "INSERT INTO assertion_ids (tenant_id, client_id, jti, expires_at) \
     VALUES ($1, $2, $3, $4) \
     ON CONFLICT (tenant_id, client_id, jti) DO UPDATE SET expires_at = excluded.expires_at \
     WHERE assertion_ids.expires_at <= $5";
const PURGE_IDEMPOTENCY: &str = "DELETE FROM idempotency_keys WHERE expires_at <= $1";
const PURGE_ASSERTIONS: &str = "DELETE FROM assertion_ids WHERE expires_at <= $1";

pub(crate) async fn idempotency_record(
    conn: &mut PgConnection,
    scope: &str,
    key: &str,
    now: OffsetDateTime,
) -> Result<Option<IdempotencyRecord>, StoreError> {
    let row = sqlx::query(SELECT_LIVE)
        .bind(scope)
        .bind(key)
        .bind(now)
        .fetch_optional(conn)
        .await
        .map_err(map_err)?;
    row.as_ref().map(decode).transpose()
}

/// Inserts `record`, or replaces a row of the same key that has expired at `record.created_at`.
pub(crate) async fn claim(
    conn: &mut PgConnection,
    record: &IdempotencyRecord,
) -> Result<(), StoreError> {
    let done = sqlx::query(CLAIM)
        .bind(record.scope.as_str())
        .bind(record.key.as_str())
        .bind(record.fingerprint.as_str())
        .bind(record.status.map(i32::from))
        .bind(record.body.as_deref())
        .bind(record.created_at)
        .bind(record.expires_at)
        .execute(conn)
        .await
        .map_err(map_err)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::Conflict {
            constraint: IDEMPOTENCY_PKEY.to_owned(),
        });
    }
    Ok(())
}

/// Stores the response of a claimed key, expired or not; [`StoreError::NotFound`] without a claim.
pub(crate) async fn complete(
    conn: &mut PgConnection,
    scope: &str,
    key: &str,
    status: u16,
    body: &str,
) -> Result<(), StoreError> {
    let done = sqlx::query(COMPLETE)
        .bind(scope)
        .bind(key)
        .bind(i32::from(status))
        .bind(body)
        .execute(conn)
        .await
        .map_err(map_err)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// Deletes the claim; releasing a key that is not (or no longer) claimed changes nothing and is
/// not an error, so a failed request's cleanup never fails after a purge.
pub(crate) async fn release(
    conn: &mut PgConnection,
    scope: &str,
    key: &str,
) -> Result<(), StoreError> {
    sqlx::query(RELEASE)
        .bind(scope)
        .bind(key)
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(())
}

pub(crate) async fn use_assertion_id(
    conn: &mut PgConnection,
    tenant: &TenantId,
    client: &ClientId,
    jti: &str,
    expires_at: OffsetDateTime,
    now: OffsetDateTime,
) -> Result<(), StoreError> {
    let done = sqlx::query(USE_ASSERTION)
        .bind(tenant.as_str())
        .bind(client.as_str())
        .bind(jti)
        .bind(expires_at)
        .bind(now)
        .execute(conn)
        .await
        .map_err(map_err)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::Conflict {
            constraint: ASSERTION_PKEY.to_owned(),
        });
    }
    Ok(())
}

/// Deletes every idempotency key and assertion id expired at `now`; returns how many.
pub(crate) async fn purge_expired(
    conn: &mut PgConnection,
    now: OffsetDateTime,
) -> Result<u64, StoreError> {
    let keys = sqlx::query(PURGE_IDEMPOTENCY)
        .bind(now)
        .execute(&mut *conn)
        .await
        .map_err(map_err)?;
    let ids = sqlx::query(PURGE_ASSERTIONS)
        .bind(now)
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(keys.rows_affected() + ids.rows_affected())
}

fn decode(row: &PgRow) -> Result<IdempotencyRecord, StoreError> {
    let scope: String = row.try_get("scope").map_err(map_err)?;
    let key: String = row.try_get("key").map_err(map_err)?;
    let status: Option<i32> = row.try_get("status").map_err(map_err)?;
    Ok(IdempotencyRecord {
        status: status
            .map(|s| {
                u16::try_from(s).map_err(|_| {
                    StoreError::Corrupt(format!(
                        "idempotency_keys.status {s} of {scope}/{key}: not an HTTP status"
                    ))
                })
            })
            .transpose()?,
        fingerprint: row.try_get("fingerprint").map_err(map_err)?,
        body: row.try_get("body").map_err(map_err)?,
        created_at: row.try_get("created_at").map_err(map_err)?,
        expires_at: row.try_get("expires_at").map_err(map_err)?,
        scope,
        key,
    })
}
