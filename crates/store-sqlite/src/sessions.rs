//! Browser sessions in SQL, on one connection (always inside a transaction opened by
//! [`crate::tx`]); rows are read into [`SessionRow`], which decodes them.
//!
//! Liveness and purge compare the `expires_at_ns` / `revoked_at_ns` twins (see
//! [`crate::timestamps`]); "newest first" is ordered in Rust after decoding, since the stored
//! text does not order chronologically below one second.

use crate::error::{Columns, map_err, name_foreign_key};
use crate::timestamps::{nanos, utc};
use sqlx::SqliteConnection;
use sqlx::sqlite::SqliteRow;
use svc_domain::{SecretHash, Session, SessionId, TenantId, UserId};
use svc_store::StoreError;
use svc_store::rows::{SessionRow, encode_strings};
use time::OffsetDateTime;

macro_rules! select_sessions {
    ($where:literal) => {
        concat!(
            "SELECT id, tenant_id, user_id, secret_hash, created_at, auth_time, amr, acr, \
             expires_at, last_seen_at, revoked_at, user_agent, ip FROM sessions ",
            $where
        )
    };
}

const SELECT_BY_SECRET: &str = select_sessions!("WHERE tenant_id = $1 AND secret_hash = $2");
const SELECT_BY_ID: &str = select_sessions!("WHERE tenant_id = $1 AND id = $2");
const SELECT_LIVE: &str = select_sessions!(
    "WHERE tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL AND expires_at_ns > $3"
);
const INSERT: &str = "INSERT INTO sessions (id, tenant_id, user_id, secret_hash, created_at, \
     auth_time, amr, acr, expires_at, expires_at_ns, last_seen_at, revoked_at, revoked_at_ns, \
     user_agent, ip) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)";
const TOUCH: &str = "UPDATE sessions SET last_seen_at = $3 WHERE tenant_id = $1 AND id = $2";
const REVOKE: &str = "UPDATE sessions SET revoked_at = $3, revoked_at_ns = $4 \
     WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL";
const REVOKE_USER: &str = "UPDATE sessions SET revoked_at = $3, revoked_at_ns = $4 \
     WHERE tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL";

pub(crate) async fn by_secret(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    secret: &SecretHash,
) -> Result<Option<Session>, StoreError> {
    let row = sqlx::query(SELECT_BY_SECRET)
        .bind(tenant.as_str())
        .bind(secret.as_bytes().as_slice())
        .fetch_optional(conn)
        .await
        .map_err(map_err)?;
    row.as_ref().map(decode).transpose()
}

pub(crate) async fn by_id(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    id: &SessionId,
) -> Result<Option<Session>, StoreError> {
    let row = sqlx::query(SELECT_BY_ID)
        .bind(tenant.as_str())
        .bind(id.as_str())
        .fetch_optional(conn)
        .await
        .map_err(map_err)?;
    row.as_ref().map(decode).transpose()
}

/// Newest first: by creation time, then by id so equal instants still have one order.
pub(crate) async fn live(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    user: &UserId,
    now: OffsetDateTime,
) -> Result<Vec<Session>, StoreError> {
    let rows = sqlx::query(SELECT_LIVE)
        .bind(tenant.as_str())
        .bind(user.as_str())
        .bind(nanos(now))
        .fetch_all(conn)
        .await
        .map_err(map_err)?;
    let mut sessions = rows.iter().map(decode).collect::<Result<Vec<_>, _>>()?;
    sessions.sort_by(|a, b| (b.created_at, b.id.as_str()).cmp(&(a.created_at, a.id.as_str())));
    Ok(sessions)
}

pub(crate) async fn insert(
    conn: &mut SqliteConnection,
    session: &Session,
) -> Result<(), StoreError> {
    sqlx::query(INSERT)
        .bind(session.id.as_str())
        .bind(session.tenant_id.as_str())
        .bind(session.user_id.as_str())
        .bind(session.secret_hash.as_bytes().as_slice())
        .bind(utc(session.created_at))
        .bind(utc(session.auth_time))
        .bind(encode_strings(session.amr.iter().map(String::as_str))?)
        .bind(session.acr.as_deref())
        .bind(utc(session.expires_at))
        .bind(nanos(session.expires_at))
        .bind(utc(session.last_seen_at))
        .bind(session.revoked_at.map(utc))
        .bind(session.revoked_at.map(nanos))
        .bind(session.user_agent.as_deref())
        .bind(session.ip.as_deref())
        .execute(conn)
        .await
        .map_err(|e| name_foreign_key(map_err(e), "sessions_tenant_id_fkey"))?;
    Ok(())
}

/// [`StoreError::NotFound`] when the session does not exist (any more) for the tenant.
pub(crate) async fn touch(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    id: &SessionId,
    now: OffsetDateTime,
) -> Result<(), StoreError> {
    let done = sqlx::query(TOUCH)
        .bind(tenant.as_str())
        .bind(id.as_str())
        .bind(utc(now))
        .execute(conn)
        .await
        .map_err(map_err)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub(crate) async fn revoke(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    id: &SessionId,
    now: OffsetDateTime,
) -> Result<bool, StoreError> {
    let done = sqlx::query(REVOKE)
        .bind(tenant.as_str())
        .bind(id.as_str())
        .bind(utc(now))
        .bind(nanos(now))
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(done.rows_affected() > 0)
}

pub(crate) async fn revoke_user(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    user: &UserId,
    now: OffsetDateTime,
) -> Result<u64, StoreError> {
    let done = sqlx::query(REVOKE_USER)
        .bind(tenant.as_str())
        .bind(user.as_str())
        .bind(utc(now))
        .bind(nanos(now))
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(done.rows_affected())
}

fn decode(row: &SqliteRow) -> Result<Session, StoreError> {
    let c = Columns::new(row, "sessions");
    SessionRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        user_id: c.get("user_id")?,
        secret_hash: c.get("secret_hash")?,
        created_at: c.get("created_at")?,
        auth_time: c.get("auth_time")?,
        amr: c.get("amr")?,
        acr: c.get("acr")?,
        expires_at: c.get("expires_at")?,
        last_seen_at: c.get("last_seen_at")?,
        revoked_at: c.get("revoked_at")?,
        user_agent: c.get("user_agent")?,
        ip: c.get("ip")?,
    }
    .decode()
}
