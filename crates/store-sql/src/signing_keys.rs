//! The signing-key aggregate: its statements, its row form, the naming of its conflicts, and the
//! `SigningKeyReads`/`SigningKeyWrites` ports for [`SqlTx`].
//!
//! The statements are the same on every dialect; only the per-tenant lock differs (see
//! [`SigningKeyWrites::lock_signing_keys`] below): PostgreSQL takes an advisory lock, SQLite needs
//! none.

use crate::dialect::Dialect;
use crate::naming;
use crate::record::Record;
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_domain::{KeyState, SealedPrivateKey, SigningAlg, SigningKeyRecord, TenantId};
use svc_store::{KeyTransition, SigningKeyReads, SigningKeyWrites, StoreError};
use time::OffsetDateTime;

/// The partial unique index allowing one `active` key per tenant and algorithm.
const ONE_ACTIVE: &str = "signing_keys_one_active";
/// The partial unique index allowing one `next` key per tenant and algorithm.
const ONE_NEXT: &str = "signing_keys_one_next";
/// The foreign key to `tenants`.
const TENANT_FKEY: &str = "signing_keys_tenant_id_fkey";
/// What the SQLite backend derives from SQLite's message for either partial index, which only
/// names the indexed columns: `UNIQUE constraint failed: signing_keys.tenant_id, signing_keys.alg`.
const SLOT_COLUMNS: &str = "signing_keys_tenant_id_alg_key";

// PostgreSQL only (see `lock_signing_keys`). The advisory lock's key: a 64-bit hash of a
// namespaced string, so it cannot meet the lock of another aggregate (or sqlx's migration lock)
// by accident. A hash collision between two tenants would only make them wait for each other,
// never let two holders in.
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

#[async_trait]
impl<D: Dialect> SigningKeyReads for SqlTx<D> {
    /// Every key of `tenant`, ordered by `created_at`, then `kid` (bytewise).
    ///
    /// SQLite's stored timestamps are text whose order is not chronological below one second,
    /// so the rows are sorted again after decoding, on every dialect (on PostgreSQL, where `kid`
    /// is `COLLATE "C"`, they already are); a tenant has a handful of keys.
    async fn signing_keys(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<SigningKeyRecord>, StoreError> {
        let rows = Stmt::new(SELECT_FOR_TENANT)
            .bind(tenant.as_str())
            .fetch_all::<D>(self.conn())
            .await?;
        let mut keys = rows
            .iter()
            .map(|row| decode::<D>(row, tenant))
            .collect::<Result<Vec<_>, _>>()?;
        keys.sort_by(|a, b| (a.created_at, &a.kid).cmp(&(b.created_at, &b.kid)));
        Ok(keys)
    }
}

#[async_trait]
impl<D: Dialect> SigningKeyWrites for SqlTx<D> {
    /// SQLite ([`Dialect::WRITES_SERIALIZED`]): nothing to take. This is only reachable through a
    /// `WriteTx`, which began with `BEGIN IMMEDIATE` and so already holds the database's single
    /// write lock until it commits or rolls back. No other writer, in this process or another,
    /// can change any key meanwhile, and in WAL mode the transaction reads the latest committed
    /// state (nobody can have written since it took the lock), so check-then-write under it is
    /// safe.
    ///
    /// PostgreSQL: a transaction-scoped advisory lock per tenant. Concurrent writers (on any
    /// replica) serialise on it, waiting for another transaction holding it to commit or roll
    /// back (at most `statement_timeout`, after which the wait fails as
    /// [`StoreError::Unavailable`]). PostgreSQL releases it when this transaction ends; there is
    /// no unlock.
    async fn lock_signing_keys(&mut self, tenant: &TenantId) -> Result<(), StoreError> {
        if D::WRITES_SERIALIZED {
            return Ok(());
        }
        Stmt::new(LOCK)
            .bind(tenant.as_str())
            .execute::<D>(self.conn())
            .await?;
        Ok(())
    }

    async fn insert_signing_key(&mut self, key: &SigningKeyRecord) -> Result<(), StoreError> {
        Stmt::new(INSERT)
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
            .execute::<D>(self.conn())
            .await
            .map_err(|e| name_conflict(e, key.state))?;
        Ok(())
    }

    async fn transition_signing_key(
        &mut self,
        tenant: &TenantId,
        change: &KeyTransition,
    ) -> Result<(), StoreError> {
        let changed = Stmt::new(TRANSITION)
            .bind(tenant.as_str())
            .bind(change.kid.as_str())
            .bind(change.from.as_str())
            .bind(change.to.as_str())
            .bind(change.activates_at)
            .bind(change.retired_at)
            .bind(change.remove_after)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| name_conflict(e, change.to))?;
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    async fn delete_signing_key(&mut self, tenant: &TenantId, kid: &str) -> Result<(), StoreError> {
        let changed = Stmt::new(DELETE)
            .bind(tenant.as_str())
            .bind(kid)
            .execute::<D>(self.conn())
            .await?;
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }
}

/// Gives a conflict the name PostgreSQL reports for it (see [`naming`]). SQLite's message names
/// the columns of a unique index, which are the same for both partial indexes, so the state being
/// written says which one refused it (a `retired` row is in neither). It names no foreign key at
/// all, and this table has exactly one. On PostgreSQL the SQLite-style names never occur.
fn name_conflict(err: StoreError, writing: KeyState) -> StoreError {
    let err = naming::foreign_key(err, TENANT_FKEY);
    match writing {
        KeyState::Active => naming::rename(err, SLOT_COLUMNS, ONE_ACTIVE),
        KeyState::Next => naming::rename(err, SLOT_COLUMNS, ONE_NEXT),
        KeyState::Retired => err,
    }
}

fn decode<D: Dialect>(row: &Row<D>, tenant: &TenantId) -> Result<SigningKeyRecord, StoreError> {
    let c = Columns::<D>::new(row, "signing_keys");
    SigningKeyRow {
        kid: c.get("kid")?,
        alg: c.get("alg")?,
        state: c.get("state")?,
        public_jwk: c.get("public_jwk")?,
        wrapped_dek: c.get("wrapped_dek")?,
        ciphertext: c.get("ciphertext")?,
        created_at: c.get("created_at")?,
        activates_at: c.get("activates_at")?,
        retired_at: c.get("retired_at")?,
        remove_after: c.get("remove_after")?,
    }
    .decode(tenant)
}

/// A `signing_keys` row as stored (the tenant is the one the rows were selected by).
#[derive(Debug, Clone)]
pub(crate) struct SigningKeyRow {
    /// `kid`.
    pub kid: String,
    /// `alg`.
    pub alg: String,
    /// `state`.
    pub state: String,
    /// `public_jwk`.
    pub public_jwk: String,
    /// `wrapped_dek`.
    pub wrapped_dek: Vec<u8>,
    /// `ciphertext`.
    pub ciphertext: Vec<u8>,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `activates_at`.
    pub activates_at: OffsetDateTime,
    /// `retired_at`.
    pub retired_at: Option<OffsetDateTime>,
    /// `remove_after`.
    pub remove_after: Option<OffsetDateTime>,
}

impl SigningKeyRow {
    /// The key record this row of `tenant` stores.
    pub(crate) fn decode(self, tenant: &TenantId) -> Result<SigningKeyRecord, StoreError> {
        let name = format!("{tenant}/{}", self.kid);
        let r = Record {
            table: "signing_keys",
            name: &name,
        };
        Ok(SigningKeyRecord {
            tenant_id: tenant.clone(),
            alg: r.parse("alg", &self.alg, |s| {
                SigningAlg::parse(s).ok_or("unknown algorithm")
            })?,
            state: r.parse("state", &self.state, |s| {
                KeyState::parse(s).ok_or("unknown state")
            })?,
            public_jwk: self.public_jwk,
            sealed: SealedPrivateKey {
                wrapped_dek: self.wrapped_dek,
                ciphertext: self.ciphertext,
            },
            created_at: self.created_at,
            activates_at: self.activates_at,
            retired_at: self.retired_at,
            remove_after: self.remove_after,
            kid: self.kid,
        })
    }
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
        let fkey = name_of(name_conflict(
            conflict(naming::UNNAMED_FOREIGN_KEY),
            KeyState::Active,
        ));
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

    #[test]
    fn a_key_row_decodes_and_each_bad_column_is_named() {
        let tenant = TenantId::parse("ten_01jd0000000000000000000000").unwrap();
        let row = SigningKeyRow {
            kid: "k1".into(),
            alg: "RS256".into(),
            state: "active".into(),
            public_jwk: "{}".into(),
            wrapped_dek: vec![1],
            ciphertext: vec![2],
            created_at: OffsetDateTime::UNIX_EPOCH,
            activates_at: OffsetDateTime::UNIX_EPOCH,
            retired_at: None,
            remove_after: None,
        };
        let key = row.clone().decode(&tenant).unwrap();
        assert_eq!(key.state, KeyState::Active);
        assert_eq!(key.kid, "k1");
        let mut bad = row.clone();
        bad.alg = "none".into();
        assert!(matches!(
            bad.decode(&tenant),
            Err(StoreError::Corrupt(m)) if m.contains("signing_keys.alg") && m.contains("/k1")
        ));
        let mut bad = row;
        bad.state = "gone".into();
        assert!(matches!(
            bad.decode(&tenant),
            Err(StoreError::Corrupt(m)) if m.contains("signing_keys.state")
        ));
    }
}
