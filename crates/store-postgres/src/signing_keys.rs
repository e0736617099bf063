//! The signing-key repository in SQL: queries on one connection (always inside a transaction
//! opened by [`crate::tx`]) and the decoding of rows back into domain types.
//!
//! The SQL text is identical to the SQLite backend's, apart from the lock, which only PostgreSQL
//! needs (see [`lock`]); binding and decoding differ.

use crate::error::map_err;
use sqlx::postgres::PgRow;
use sqlx::{PgConnection, Row};
use svc_domain::{KeyState, SealedPrivateKey, SigningAlg, SigningKeyRecord, TenantId};
use svc_store::{KeyTransition, StoreError};

// The advisory lock's key: a 64-bit hash of a namespaced string, so it cannot meet the lock of
// another aggregate (or sqlx's migration lock) by accident. A hash collision between two tenants
// would only make them wait for each other, never let two holders in.
const LOCK: &str = "SELECT pg_advisory_xact_lock(hashtextextended('signing_keys:' || $1, 0))";
const SELECT_FOR_TENANT: &str = "SELECT kid, alg, state, public_jwk, wrapped_dek, ciphertext, \
     created_at, activates_at, retired_at, remove_after \
     FROM signing_keys WHERE tenant_id = $1 ORDER BY created_at, kid";
const INSERT: &str = "INSERT INTO signing_keys (tenant_id, kid, alg, state, public_jwk, \
     wrapped_dek, ciphertext, created_at, activates_at, retired_at, remove_after) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";
// COALESCE: a timestamp the transition does not set keeps its stored value.
const TRANSITION: &str = "UPDATE signing_keys SET state = $4, \
     activates_at = COALESCE($5, activates_at), \
     retired_at = COALESCE($6, retired_at), \
     remove_after = COALESCE($7, remove_after) \
     WHERE tenant_id = $1 AND kid = $2 AND state = $3";
const DELETE: &str = "DELETE FROM signing_keys WHERE tenant_id = $1 AND kid = $2";

/// Takes the transaction-scoped advisory lock of `tenant`'s keys, waiting for another
/// transaction holding it to commit or roll back (at most `statement_timeout`, after which the
/// wait fails as [`StoreError::Unavailable`]). PostgreSQL releases it when this transaction
/// ends; there is no unlock.
pub(crate) async fn lock(conn: &mut PgConnection, tenant: &TenantId) -> Result<(), StoreError> {
    sqlx::query(LOCK)
        .bind(tenant.as_str())
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(())
}

/// Every key of `tenant`, ordered by `created_at`, then `kid` (bytewise: `COLLATE "C"`).
pub(crate) async fn for_tenant(
    conn: &mut PgConnection,
    tenant: &TenantId,
) -> Result<Vec<SigningKeyRecord>, StoreError> {
    let rows = sqlx::query(SELECT_FOR_TENANT)
        .bind(tenant.as_str())
        .fetch_all(conn)
        .await
        .map_err(map_err)?;
    rows.iter().map(|row| decode(row, tenant)).collect()
}

pub(crate) async fn insert(
    conn: &mut PgConnection,
    key: &SigningKeyRecord,
) -> Result<(), StoreError> {
    sqlx::query(INSERT)
        .bind(key.tenant_id.as_str())
        .bind(key.kid.as_str())
        .bind(key.alg.as_str())
        .bind(key.state.as_str())
        .bind(key.public_jwk.as_str())
        .bind(key.sealed.wrapped_dek.as_slice())
        .bind(key.sealed.ciphertext.as_slice())
        .bind(key.created_at)
        .bind(key.activates_at)
        .bind(key.retired_at)
        .bind(key.remove_after)
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(())
}

pub(crate) async fn transition(
    conn: &mut PgConnection,
    tenant: &TenantId,
    change: &KeyTransition,
) -> Result<(), StoreError> {
    let done = sqlx::query(TRANSITION)
        .bind(tenant.as_str())
        .bind(change.kid.as_str())
        .bind(change.from.as_str())
        .bind(change.to.as_str())
        .bind(change.activates_at)
        .bind(change.retired_at)
        .bind(change.remove_after)
        .execute(conn)
        .await
        .map_err(map_err)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub(crate) async fn delete(
    conn: &mut PgConnection,
    tenant: &TenantId,
    kid: &str,
) -> Result<(), StoreError> {
    let done = sqlx::query(DELETE)
        .bind(tenant.as_str())
        .bind(kid)
        .execute(conn)
        .await
        .map_err(map_err)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

fn decode(row: &PgRow, tenant: &TenantId) -> Result<SigningKeyRecord, StoreError> {
    let kid: String = row.try_get("kid").map_err(map_err)?;
    let alg: String = row.try_get("alg").map_err(map_err)?;
    let state: String = row.try_get("state").map_err(map_err)?;
    Ok(SigningKeyRecord {
        tenant_id: tenant.clone(),
        alg: SigningAlg::parse(&alg).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "signing_keys.alg {alg:?} of {tenant}/{kid}: unknown algorithm"
            ))
        })?,
        state: KeyState::parse(&state).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "signing_keys.state {state:?} of {tenant}/{kid}: unknown state"
            ))
        })?,
        public_jwk: row.try_get("public_jwk").map_err(map_err)?,
        sealed: SealedPrivateKey {
            wrapped_dek: row.try_get("wrapped_dek").map_err(map_err)?,
            ciphertext: row.try_get("ciphertext").map_err(map_err)?,
        },
        created_at: row.try_get("created_at").map_err(map_err)?,
        activates_at: row.try_get("activates_at").map_err(map_err)?,
        retired_at: row.try_get("retired_at").map_err(map_err)?,
        remove_after: row.try_get("remove_after").map_err(map_err)?,
        kid,
    })
}
