//! Idempotency keys and single-use assertion ids (the `CoordinationWrites` port for [`SqlTx`]),
//! and the idempotency row form.
//!
//! A record is live while `expires_at > now` and expired from `expires_at` on. Expiry is compared
//! in SQL: on PostgreSQL on `expires_at` itself (`timestamptz`), on SQLite on the `expires_at_ns`
//! integer twin, never on the stored text (which does not order chronologically below one
//! second). So each statement comparing an instant is a [`PerDialect`], and the twins are written
//! on SQLite only.
//!
//! Claiming a key and using an assertion id are one upsert each: the insert takes a free key, the
//! `DO UPDATE ... WHERE` replaces an expired row, and a live row is left alone, which shows as no
//! row changed and is reported as the primary key's conflict. On PostgreSQL a concurrent claim of
//! the same key waits for the first transaction's uncommitted row, then sees it committed (live:
//! conflict) or, after a rollback, inserts; on SQLite writers are serialised. Either way two
//! claimants can never both succeed.

use crate::dialect::{Dialect, PerDialect};
use crate::record::Record;
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_domain::{AgentId, ClientId, TenantId};
use svc_store::{CoordinationWrites, IdempotencyRecord, StoreError};
use time::OffsetDateTime;

const IDEMPOTENCY_PKEY: &str = "idempotency_keys_pkey";
const ASSERTION_PKEY: &str = "assertion_ids_pkey";

const SELECT_LIVE: PerDialect = PerDialect {
    sqlite: "SELECT scope, key, fingerprint, status, body, created_at, expires_at \
     FROM idempotency_keys WHERE scope = $1 AND key = $2 AND expires_at_ns > $3",
    postgres: "SELECT scope, key, fingerprint, status, body, created_at, expires_at \
     FROM idempotency_keys WHERE scope = $1 AND key = $2 AND expires_at > $3",
};
// The last placeholder is the claim's `created_at` as an instant: a row expired at that instant
// is replaced.
const CLAIM: PerDialect = PerDialect {
    sqlite: "INSERT INTO idempotency_keys (scope, key, fingerprint, status, body, \
     created_at, expires_at, expires_at_ns) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
     ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, \
     status = excluded.status, body = excluded.body, created_at = excluded.created_at, \
     expires_at = excluded.expires_at, expires_at_ns = excluded.expires_at_ns \
     WHERE idempotency_keys.expires_at_ns <= $9",
    postgres: "INSERT INTO idempotency_keys (scope, key, fingerprint, status, body, \
     created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
     ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, \
     status = excluded.status, body = excluded.body, created_at = excluded.created_at, \
     expires_at = excluded.expires_at \
     WHERE idempotency_keys.expires_at <= $8",
};
const COMPLETE: &str =
    "UPDATE idempotency_keys SET status = $3, body = $4 WHERE scope = $1 AND key = $2";
const RELEASE: &str = "DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2";
const USE_ASSERTION: PerDialect = PerDialect {
    sqlite: "INSERT INTO assertion_ids (tenant_id, client_id, jti, expires_at, \
     expires_at_ns) VALUES ($1, $2, $3, $4, $5) \
     ON CONFLICT (tenant_id, client_id, jti) DO UPDATE SET expires_at = excluded.expires_at, \
     expires_at_ns = excluded.expires_at_ns \
     WHERE assertion_ids.expires_at_ns <= $6",
    postgres: "INSERT INTO assertion_ids (tenant_id, client_id, jti, expires_at) \
     VALUES ($1, $2, $3, $4) \
     ON CONFLICT (tenant_id, client_id, jti) DO UPDATE SET expires_at = excluded.expires_at \
     WHERE assertion_ids.expires_at <= $5",
};
// At most `$2` rows each, selected by primary key (see `GrantWrites::purge_expired_grants_at_most`).
const PURGE_IDEMPOTENCY: PerDialect = PerDialect {
    sqlite: "DELETE FROM idempotency_keys WHERE (scope, key) IN (SELECT scope, key \
         FROM idempotency_keys WHERE expires_at_ns <= $1 LIMIT $2)",
    postgres: "DELETE FROM idempotency_keys WHERE (scope, key) IN (SELECT scope, key \
         FROM idempotency_keys WHERE expires_at <= $1 LIMIT $2)",
};
const PURGE_ASSERTIONS: PerDialect = PerDialect {
    sqlite: "DELETE FROM assertion_ids WHERE (tenant_id, client_id, jti) IN \
         (SELECT tenant_id, client_id, jti FROM assertion_ids WHERE expires_at_ns <= $1 LIMIT $2)",
    postgres: "DELETE FROM assertion_ids WHERE (tenant_id, client_id, jti) IN \
         (SELECT tenant_id, client_id, jti FROM assertion_ids WHERE expires_at <= $1 LIMIT $2)",
};

impl<D: Dialect> SqlTx<D> {
    /// Records `jti` of `minter` (a client id, or a DPoP key) until `expires_at`, replacing a
    /// record expired at `now`; a live one is the primary key's conflict.
    async fn use_once(
        &mut self,
        tenant: &TenantId,
        minter: &str,
        jti: &str,
        expires_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let changed = Stmt::new(USE_ASSERTION.pick::<D>())
            .bind(tenant.as_str())
            .bind(minter)
            .bind(jti)
            .bind(expires_at)
            .bind_twin(expires_at)
            .bind_instant(now)
            .execute::<D>(self.conn())
            .await?;
        if changed == 0 {
            return Err(StoreError::Conflict {
                constraint: ASSERTION_PKEY.to_owned(),
            });
        }
        Ok(())
    }
}

#[async_trait]
impl<D: Dialect> CoordinationWrites for SqlTx<D> {
    async fn idempotency_record(
        &mut self,
        scope: &str,
        key: &str,
        now: OffsetDateTime,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        Stmt::new(SELECT_LIVE.pick::<D>())
            .bind(scope)
            .bind(key)
            .bind_instant(now)
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    /// Inserts `record`, or replaces a row of the same key that has expired at
    /// `record.created_at`.
    async fn claim_idempotency(&mut self, record: &IdempotencyRecord) -> Result<(), StoreError> {
        let changed = Stmt::new(CLAIM.pick::<D>())
            .bind(record.scope.as_str())
            .bind(record.key.as_str())
            .bind(record.fingerprint.as_str())
            .bind(record.status.map(i64::from))
            .bind(record.body.as_deref())
            .bind(record.created_at)
            .bind(record.expires_at)
            .bind_twin(record.expires_at)
            .bind_instant(record.created_at)
            .execute::<D>(self.conn())
            .await?;
        if changed == 0 {
            return Err(StoreError::Conflict {
                constraint: IDEMPOTENCY_PKEY.to_owned(),
            });
        }
        Ok(())
    }

    /// Stores the response of a claimed key, expired or not; [`StoreError::NotFound`] without a
    /// claim.
    async fn complete_idempotency(
        &mut self,
        scope: &str,
        key: &str,
        status: u16,
        body: &str,
    ) -> Result<(), StoreError> {
        let changed = Stmt::new(COMPLETE)
            .bind(scope)
            .bind(key)
            .bind(i64::from(status))
            .bind(body)
            .execute::<D>(self.conn())
            .await?;
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// Deletes the claim; releasing a key that is not (or no longer) claimed changes nothing and
    /// is not an error, so a failed request's cleanup never fails after a purge.
    async fn release_idempotency(&mut self, scope: &str, key: &str) -> Result<(), StoreError> {
        Stmt::new(RELEASE)
            .bind(scope)
            .bind(key)
            .execute::<D>(self.conn())
            .await?;
        Ok(())
    }

    async fn use_assertion_id(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
        jti: &str,
        expires_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.use_once(tenant, client.as_str(), jti, expires_at, now)
            .await
    }

    /// A proof's id sits beside client assertions' under `dpop#<jkt>`: `#` appears in no
    /// client id, so the two can never collide.
    async fn use_proof_id(
        &mut self,
        tenant: &TenantId,
        jkt: &str,
        jti: &str,
        expires_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.use_once(tenant, &format!("dpop#{jkt}"), jti, expires_at, now)
            .await
    }

    async fn use_agent_challenge(
        &mut self,
        tenant: &TenantId,
        agent: &AgentId,
        id: &str,
        expires_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.use_once(tenant, &format!("challenge#{agent}"), id, expires_at, now)
            .await
    }

    /// Deletes at most `limit` idempotency keys and `limit` assertion ids expired at `now`;
    /// returns how many.
    async fn purge_expired(&mut self, now: OffsetDateTime, limit: u64) -> Result<u64, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let keys = Stmt::new(PURGE_IDEMPOTENCY.pick::<D>())
            .bind_instant(now)
            .bind(limit)
            .execute::<D>(self.conn())
            .await?;
        let ids = Stmt::new(PURGE_ASSERTIONS.pick::<D>())
            .bind_instant(now)
            .bind(limit)
            .execute::<D>(self.conn())
            .await?;
        Ok(keys + ids)
    }
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<IdempotencyRecord, StoreError> {
    let c = Columns::<D>::new(row, "idempotency_keys");
    IdempotencyRow {
        scope: c.get("scope")?,
        key: c.get("key")?,
        fingerprint: c.get("fingerprint")?,
        status: c.get("status")?,
        body: c.get("body")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
    }
    .decode()
}

/// An `idempotency_keys` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct IdempotencyRow {
    /// `scope`.
    pub scope: String,
    /// `key`.
    pub key: String,
    /// `fingerprint`.
    pub fingerprint: String,
    /// `status` (an HTTP status, once the first request finished).
    pub status: Option<i64>,
    /// `body`.
    pub body: Option<String>,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `expires_at`.
    pub expires_at: OffsetDateTime,
}

impl IdempotencyRow {
    /// The idempotency record this row stores.
    pub(crate) fn decode(self) -> Result<IdempotencyRecord, StoreError> {
        let name = format!("{}/{}", self.scope, self.key);
        let r = Record {
            table: "idempotency_keys",
            name: &name,
        };
        Ok(IdempotencyRecord {
            status: self
                .status
                .map(|s| {
                    u16::try_from(s).map_err(|_| r.corrupt("status", &s, &"not an HTTP status"))
                })
                .transpose()?,
            scope: self.scope,
            key: self.key,
            fingerprint: self.fingerprint,
            body: self.body,
            created_at: self.created_at,
            expires_at: self.expires_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idempotency_row_decodes_and_a_bad_status_is_named() {
        let good = IdempotencyRow {
            scope: "operator:opt_1".into(),
            key: "k".into(),
            fingerprint: "f".into(),
            status: Some(201),
            body: Some("{}".into()),
            created_at: OffsetDateTime::UNIX_EPOCH,
            expires_at: OffsetDateTime::UNIX_EPOCH,
        };
        assert_eq!(good.clone().decode().unwrap().status, Some(201));
        let mut pending = good.clone();
        pending.status = None;
        assert_eq!(pending.decode().unwrap().status, None);
        let mut bad = good;
        bad.status = Some(70_000);
        match bad.decode() {
            Err(StoreError::Corrupt(message)) => {
                assert!(
                    message.contains("idempotency_keys.status 70000 of operator:opt_1/k"),
                    "{message}"
                )
            }
            other => panic!("expected Corrupt, got {other:?}"),
        }
    }

    #[test]
    fn each_dialect_binds_as_many_values_as_it_has_placeholders() {
        // SQLite's texts have one more placeholder per `_ns` twin written; `bind_twin` values
        // are skipped on PostgreSQL.
        for (stmt, twins) in [(CLAIM, 1), (USE_ASSERTION, 1)] {
            let count = |sql: &str| sql.matches('$').count();
            assert_eq!(count(stmt.sqlite), count(stmt.postgres) + twins);
        }
    }
}
