//! The signing-key repository in SQL: queries on one connection (always inside a transaction
//! opened by [`crate::tx`]) and the decoding of rows back into domain types.
//!
//! The SQL text is identical to the PostgreSQL backend's; binding, decoding, the order of the
//! result (see [`for_tenant`]) and the naming of conflicts (see [`name_conflict`]) differ.

use crate::error::map_err;
use crate::timestamps::utc;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection};
use svc_domain::{KeyState, SealedPrivateKey, SigningAlg, SigningKeyRecord, TenantId};
use svc_store::{KeyTransition, StoreError};

/// The partial unique index allowing one `active` key per tenant and algorithm.
const ONE_ACTIVE: &str = "signing_keys_one_active";
/// The partial unique index allowing one `next` key per tenant and algorithm.
const ONE_NEXT: &str = "signing_keys_one_next";
/// The foreign key to `tenants`.
const TENANT_FKEY: &str = "signing_keys_tenant_id_fkey";
/// What [`crate::error`] derives from SQLite's message for either partial index, which only
/// names the indexed columns: `UNIQUE constraint failed: signing_keys.tenant_id, signing_keys.alg`.
const SLOT_COLUMNS: &str = "signing_keys_tenant_id_alg_key";

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

/// Every key of `tenant`, ordered by `created_at`, then `kid`.
///
/// The stored timestamps are text whose order is not chronological below one second (see
/// [`crate::timestamps`]), so the rows are sorted again after decoding; a tenant has a handful of
/// keys.
pub(crate) async fn for_tenant(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
) -> Result<Vec<SigningKeyRecord>, StoreError> {
    let rows = sqlx::query(SELECT_FOR_TENANT)
        .bind(tenant.as_str())
        .fetch_all(conn)
        .await
        .map_err(map_err)?;
    let mut keys = rows
        .iter()
        .map(|row| decode(row, tenant))
        .collect::<Result<Vec<_>, _>>()?;
    keys.sort_by(|a, b| (a.created_at, &a.kid).cmp(&(b.created_at, &b.kid)));
    Ok(keys)
}

pub(crate) async fn insert(
    conn: &mut SqliteConnection,
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
        .bind(utc(key.created_at))
        .bind(utc(key.activates_at))
        .bind(key.retired_at.map(utc))
        .bind(key.remove_after.map(utc))
        .execute(conn)
        .await
        .map_err(|e| name_conflict(map_err(e), key.state))?;
    Ok(())
}

pub(crate) async fn transition(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    change: &KeyTransition,
) -> Result<(), StoreError> {
    let done = sqlx::query(TRANSITION)
        .bind(tenant.as_str())
        .bind(change.kid.as_str())
        .bind(change.from.as_str())
        .bind(change.to.as_str())
        .bind(change.activates_at.map(utc))
        .bind(change.retired_at.map(utc))
        .bind(change.remove_after.map(utc))
        .execute(conn)
        .await
        .map_err(|e| name_conflict(map_err(e), change.to))?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub(crate) async fn delete(
    conn: &mut SqliteConnection,
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

/// Gives a conflict the name PostgreSQL reports for it. SQLite's message names the columns of a
/// unique index, which are the same for both partial indexes, so the state being written says
/// which one refused it (a `retired` row is in neither). It names no foreign key at all, and this
/// table has exactly one.
fn name_conflict(err: StoreError, writing: KeyState) -> StoreError {
    let StoreError::Conflict { constraint } = err else {
        return err;
    };
    let constraint = match (constraint.as_str(), writing) {
        (SLOT_COLUMNS, KeyState::Active) => ONE_ACTIVE.to_owned(),
        (SLOT_COLUMNS, KeyState::Next) => ONE_NEXT.to_owned(),
        ("foreign_key", _) => TENANT_FKEY.to_owned(),
        _ => constraint,
    };
    StoreError::Conflict { constraint }
}

fn decode(row: &SqliteRow, tenant: &TenantId) -> Result<SigningKeyRecord, StoreError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn conflict(constraint: &str) -> StoreError {
        StoreError::Conflict {
            constraint: constraint.to_owned(),
        }
    }

    fn name_of(err: StoreError) -> Option<String> {
        match err {
            StoreError::Conflict { constraint } => Some(constraint),
            _ => None,
        }
    }

    #[test]
    fn slot_conflicts_are_named_after_the_state_written() {
        let named = |state| name_of(name_conflict(conflict(SLOT_COLUMNS), state));
        assert_eq!(named(KeyState::Active).as_deref(), Some(ONE_ACTIVE));
        assert_eq!(named(KeyState::Next).as_deref(), Some(ONE_NEXT));
        assert_eq!(named(KeyState::Retired).as_deref(), Some(SLOT_COLUMNS));
        let fkey = name_of(name_conflict(conflict("foreign_key"), KeyState::Active));
        assert_eq!(fkey.as_deref(), Some(TENANT_FKEY));
        let pkey = name_of(name_conflict(
            conflict("signing_keys_pkey"),
            KeyState::Active,
        ));
        assert_eq!(pkey.as_deref(), Some("signing_keys_pkey"));
        assert!(matches!(
            name_conflict(StoreError::NotFound, KeyState::Next),
            StoreError::NotFound
        ));
    }
}
