//! Tenant users and their one-time link tokens in SQL, on one connection (always inside a
//! transaction opened by [`crate::tx`]); rows are read into [`UserRow`] / [`UserTokenRow`], which
//! decode them.
//!
//! The address is unique per tenant among users that are not removed: a partial unique index,
//! `users_tenant_email_key`, which PostgreSQL names in the violation. A link token is consumed by
//! one conditional `UPDATE ... RETURNING`: a concurrent consumer waits for the first one's row
//! lock, then re-checks `used_at IS NULL` against the committed row and changes nothing, so a
//! token works once however many requests race.

use crate::error::{Columns, map_err};
use sqlx::postgres::PgRow;
use sqlx::{PgConnection, Postgres, QueryBuilder};
use svc_domain::{
    Email, PasswordHash, SecretHash, TenantId, User, UserId, UserToken, UserTokenPurpose,
};
use svc_store::rows::{UserRow, UserTokenRow};
use svc_store::{StoreError, UserFilter};
use time::OffsetDateTime;

macro_rules! select_users {
    ($where:literal) => {
        concat!(
            "SELECT id, tenant_id, email, email_verified, name, given_name, family_name, status, \
             password_hash, created_at, updated_at, last_sign_in_at FROM users ",
            $where
        )
    };
}

const SELECT_BY_ID: &str = select_users!("WHERE tenant_id = $1 AND id = $2");
const SELECT_BY_EMAIL: &str =
    select_users!("WHERE tenant_id = $1 AND email = $2 AND status <> 'removed'");
const SELECT_LIST: &str = select_users!("WHERE tenant_id = ");
const INSERT: &str = "INSERT INTO users (id, tenant_id, email, email_verified, name, given_name, \
     family_name, status, password_hash, created_at, updated_at, last_sign_in_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";
// Never id, tenant_id or created_at.
const UPDATE: &str = "UPDATE users SET email = $3, email_verified = $4, name = $5, \
     given_name = $6, family_name = $7, status = $8, password_hash = $9, updated_at = $10, \
     last_sign_in_at = $11 WHERE tenant_id = $1 AND id = $2";

const INSERT_TOKEN: &str = "INSERT INTO user_tokens (hash, tenant_id, user_id, purpose, \
     created_at, expires_at, used_at) VALUES ($1, $2, $3, $4, $5, $6, $7)";
const CONSUME_TOKEN: &str = "UPDATE user_tokens SET used_at = $4 \
     WHERE tenant_id = $1 AND hash = $2 AND purpose = $3 AND used_at IS NULL \
     AND expires_at > $4 \
     RETURNING hash, tenant_id, user_id, purpose, created_at, expires_at, used_at";
const INVALIDATE_TOKENS: &str = "UPDATE user_tokens SET used_at = $4 \
     WHERE tenant_id = $1 AND user_id = $2 AND purpose = $3 AND used_at IS NULL";

pub(crate) async fn by_id(
    conn: &mut PgConnection,
    tenant: &TenantId,
    id: &UserId,
) -> Result<Option<User>, StoreError> {
    let row = sqlx::query(SELECT_BY_ID)
        .bind(tenant.as_str())
        .bind(id.as_str())
        .fetch_optional(conn)
        .await
        .map_err(map_err)?;
    row.as_ref().map(decode).transpose()
}

pub(crate) async fn by_email(
    conn: &mut PgConnection,
    tenant: &TenantId,
    email: &Email,
) -> Result<Option<User>, StoreError> {
    let row = sqlx::query(SELECT_BY_EMAIL)
        .bind(tenant.as_str())
        .bind(email.as_str())
        .fetch_optional(conn)
        .await
        .map_err(map_err)?;
    row.as_ref().map(decode).transpose()
}

/// Assembled from the filters present, each value bound, so every shape is a range scan of
/// `users_tenant_id_id_idx`.
pub(crate) async fn list(
    conn: &mut PgConnection,
    tenant: &TenantId,
    filter: &UserFilter,
    after: Option<&UserId>,
    limit: u32,
) -> Result<Vec<User>, StoreError> {
    let mut query = QueryBuilder::<Postgres>::new(SELECT_LIST);
    query.push_bind(tenant.as_str());
    if let Some(after) = after {
        query.push(" AND id > ").push_bind(after.as_str());
    }
    if let Some(status) = filter.status {
        query.push(" AND status = ").push_bind(status.as_str());
    }
    if let Some(email) = &filter.email {
        query.push(" AND email = ").push_bind(email.as_str());
    }
    query
        .push(" ORDER BY id LIMIT ")
        .push_bind(i64::from(limit));
    let rows = query.build().fetch_all(conn).await.map_err(map_err)?;
    rows.iter().map(decode).collect()
}

pub(crate) async fn insert(conn: &mut PgConnection, user: &User) -> Result<(), StoreError> {
    sqlx::query(INSERT)
        .bind(user.id.as_str())
        .bind(user.tenant_id.as_str())
        .bind(user.email.as_str())
        .bind(user.email_verified)
        .bind(user.name.as_deref())
        .bind(user.given_name.as_deref())
        .bind(user.family_name.as_deref())
        .bind(user.status.as_str())
        .bind(user.password_hash.as_ref().map(PasswordHash::as_str))
        .bind(user.created_at)
        .bind(user.updated_at)
        .bind(user.last_sign_in_at)
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(())
}

pub(crate) async fn update(conn: &mut PgConnection, user: &User) -> Result<(), StoreError> {
    let done = sqlx::query(UPDATE)
        .bind(user.tenant_id.as_str())
        .bind(user.id.as_str())
        .bind(user.email.as_str())
        .bind(user.email_verified)
        .bind(user.name.as_deref())
        .bind(user.given_name.as_deref())
        .bind(user.family_name.as_deref())
        .bind(user.status.as_str())
        .bind(user.password_hash.as_ref().map(PasswordHash::as_str))
        .bind(user.updated_at)
        .bind(user.last_sign_in_at)
        .execute(conn)
        .await
        .map_err(map_err)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub(crate) async fn insert_token(
    conn: &mut PgConnection,
    token: &UserToken,
) -> Result<(), StoreError> {
    sqlx::query(INSERT_TOKEN)
        .bind(token.hash.as_bytes().as_slice())
        .bind(token.tenant_id.as_str())
        .bind(token.user_id.as_str())
        .bind(token.purpose.as_str())
        .bind(token.created_at)
        .bind(token.expires_at)
        .bind(token.used_at)
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(())
}

/// One conditional `UPDATE`: the token is returned (with `used_at` set) only by the call that
/// used it.
pub(crate) async fn consume_token(
    conn: &mut PgConnection,
    tenant: &TenantId,
    hash: &SecretHash,
    purpose: UserTokenPurpose,
    now: OffsetDateTime,
) -> Result<Option<UserToken>, StoreError> {
    let row = sqlx::query(CONSUME_TOKEN)
        .bind(tenant.as_str())
        .bind(hash.as_bytes().as_slice())
        .bind(purpose.as_str())
        .bind(now)
        .fetch_optional(conn)
        .await
        .map_err(map_err)?;
    row.as_ref().map(decode_token).transpose()
}

pub(crate) async fn invalidate_tokens(
    conn: &mut PgConnection,
    tenant: &TenantId,
    user: &UserId,
    purpose: UserTokenPurpose,
    now: OffsetDateTime,
) -> Result<u64, StoreError> {
    let done = sqlx::query(INVALIDATE_TOKENS)
        .bind(tenant.as_str())
        .bind(user.as_str())
        .bind(purpose.as_str())
        .bind(now)
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(done.rows_affected())
}

fn decode(row: &PgRow) -> Result<User, StoreError> {
    let c = Columns::new(row, "users");
    UserRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        email: c.get("email")?,
        email_verified: c.get("email_verified")?,
        name: c.get("name")?,
        given_name: c.get("given_name")?,
        family_name: c.get("family_name")?,
        status: c.get("status")?,
        password_hash: c.get("password_hash")?,
        created_at: c.get("created_at")?,
        updated_at: c.get("updated_at")?,
        last_sign_in_at: c.get("last_sign_in_at")?,
    }
    .decode()
}

fn decode_token(row: &PgRow) -> Result<UserToken, StoreError> {
    let c = Columns::new(row, "user_tokens");
    UserTokenRow {
        hash: c.get("hash")?,
        tenant_id: c.get("tenant_id")?,
        user_id: c.get("user_id")?,
        purpose: c.get("purpose")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
        used_at: c.get("used_at")?,
    }
    .decode()
}
