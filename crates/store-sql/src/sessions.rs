//! Browser sessions: their statements, their row form ([`SessionRow`]) and the
//! `SessionReads`/`SessionWrites` ports for [`SqlTx`].
//!
//! Liveness compares the `expires_at_ns` twin on SQLite and `expires_at` itself on PostgreSQL;
//! SQLite also writes the `expires_at_ns` / `revoked_at_ns` twins, for the purge (see `grants`).
//! "Newest first" is ordered in Rust after decoding, by creation time then id so equal instants
//! still have one order, on both backends: SQLite's stored text does not order chronologically
//! below one second, and on PostgreSQL (microsecond `timestamptz`, ids in the "C" collation) the
//! `ORDER BY created_at DESC, id DESC` it used to run gives exactly this order, so the statement
//! no longer sorts. `amr` is a JSON array (`jsonb` on PostgreSQL).

use crate::dialect::{Dialect, PerDialect};
use crate::login_history;
use crate::logout;
use crate::naming;
use crate::record::Record;
use crate::{Columns, Row, SqlTx, Stmt, encode_strings};
use async_trait::async_trait;
use svc_domain::{LoginRecord, LoginRecordId, SecretHash, Session, SessionId, TenantId, UserId};
use svc_store::{Order, SessionReads, SessionWrites, StoreError};
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
const SELECT_LIVE: PerDialect = PerDialect {
    sqlite: select_sessions!(
        "WHERE tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL AND expires_at_ns > $3"
    ),
    postgres: select_sessions!(
        "WHERE tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL AND expires_at > $3"
    ),
};
const INSERT: PerDialect = PerDialect {
    sqlite: "INSERT INTO sessions (id, tenant_id, user_id, secret_hash, created_at, auth_time, \
         amr, acr, expires_at, expires_at_ns, last_seen_at, revoked_at, revoked_at_ns, \
         user_agent, ip) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, \
         $15)",
    postgres: "INSERT INTO sessions (id, tenant_id, user_id, secret_hash, created_at, \
         auth_time, amr, acr, expires_at, last_seen_at, revoked_at, user_agent, ip) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
};
const TOUCH: &str = "UPDATE sessions SET last_seen_at = $3 WHERE tenant_id = $1 AND id = $2";
const REVOKE: PerDialect = PerDialect {
    sqlite: "UPDATE sessions SET revoked_at = $3, revoked_at_ns = $4 \
         WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL",
    postgres: "UPDATE sessions SET revoked_at = $3 \
         WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL",
};
const REVOKE_USER: PerDialect = PerDialect {
    sqlite: "UPDATE sessions SET revoked_at = $3, revoked_at_ns = $4 \
         WHERE tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL",
    postgres: "UPDATE sessions SET revoked_at = $3 \
         WHERE tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL",
};

#[async_trait]
impl<D: Dialect> SessionReads for SqlTx<D> {
    async fn session_by_secret(
        &mut self,
        tenant: &TenantId,
        secret: &SecretHash,
    ) -> Result<Option<Session>, StoreError> {
        Stmt::new(SELECT_BY_SECRET)
            .bind(tenant.as_str())
            .bind(secret.as_bytes())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn session(
        &mut self,
        tenant: &TenantId,
        id: &SessionId,
    ) -> Result<Option<Session>, StoreError> {
        Stmt::new(SELECT_BY_ID)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    /// Newest first (see the module documentation).
    async fn live_sessions(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<Vec<Session>, StoreError> {
        let rows = Stmt::new(SELECT_LIVE.pick::<D>())
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind_instant(now)
            .fetch_all::<D>(self.conn())
            .await?;
        let mut sessions = rows
            .iter()
            .map(decode::<D>)
            .collect::<Result<Vec<_>, _>>()?;
        sessions.sort_by(|a, b| (b.created_at, b.id.as_str()).cmp(&(a.created_at, a.id.as_str())));
        Ok(sessions)
    }

    async fn login_history(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        after: Option<&LoginRecordId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<LoginRecord>, StoreError> {
        login_history::list::<D>(self.conn(), tenant, user, after, order, limit).await
    }
}

#[async_trait]
impl<D: Dialect> SessionWrites for SqlTx<D> {
    async fn insert_session(&mut self, session: &Session) -> Result<(), StoreError> {
        Stmt::new(INSERT.pick::<D>())
            .bind(session.id.as_str())
            .bind(session.tenant_id.as_str())
            .bind(session.user_id.as_str())
            .bind(session.secret_hash.as_bytes())
            .bind(session.created_at)
            .bind(session.auth_time)
            .bind_json(encode_strings(session.amr.iter().map(String::as_str))?)
            .bind(session.acr.as_deref())
            .bind(session.expires_at)
            .bind_twin(session.expires_at)
            .bind(session.last_seen_at)
            .bind(session.revoked_at)
            .bind_twin(session.revoked_at)
            .bind(session.user_agent.as_deref())
            .bind(session.ip.as_deref())
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "sessions_tenant_id_fkey"))?;
        Ok(())
    }

    async fn insert_login_record(&mut self, record: &LoginRecord) -> Result<(), StoreError> {
        login_history::insert::<D>(self.conn(), record).await
    }

    async fn purge_login_history(
        &mut self,
        before: OffsetDateTime,
        limit: u64,
    ) -> Result<u64, StoreError> {
        login_history::purge::<D>(self.conn(), before, limit).await
    }

    /// [`StoreError::NotFound`] when the session does not exist (any more) for the tenant.
    async fn touch_session(
        &mut self,
        tenant: &TenantId,
        id: &SessionId,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let changed = Stmt::new(TOUCH)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .bind(now)
            .execute::<D>(self.conn())
            .await?;
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    async fn revoke_session(
        &mut self,
        tenant: &TenantId,
        id: &SessionId,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(REVOKE.pick::<D>())
            .bind(tenant.as_str())
            .bind(id.as_str())
            .bind(now)
            .bind_twin(now)
            .execute::<D>(self.conn())
            .await?;
        if changed > 0 {
            logout::notify_session::<D>(self.conn(), tenant, id, now).await?;
        }
        Ok(changed > 0)
    }

    async fn revoke_user_sessions(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        // Before the revocation: the notices are for the sessions it is about to end.
        logout::notify_user::<D>(self.conn(), tenant, user, now).await?;
        Stmt::new(REVOKE_USER.pick::<D>())
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(now)
            .bind_twin(now)
            .execute::<D>(self.conn())
            .await
    }
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<Session, StoreError> {
    let c = Columns::<D>::new(row, "sessions");
    SessionRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        user_id: c.get("user_id")?,
        secret_hash: c.get("secret_hash")?,
        created_at: c.get("created_at")?,
        auth_time: c.get("auth_time")?,
        amr: c.json("amr")?,
        acr: c.get("acr")?,
        expires_at: c.get("expires_at")?,
        last_seen_at: c.get("last_seen_at")?,
        revoked_at: c.get("revoked_at")?,
        user_agent: c.get("user_agent")?,
        ip: c.get("ip")?,
    }
    .decode()
}

/// A `sessions` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct SessionRow {
    /// `id`.
    pub id: String,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `user_id`.
    pub user_id: String,
    /// `secret_hash` (32 bytes).
    pub secret_hash: Vec<u8>,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `auth_time`.
    pub auth_time: OffsetDateTime,
    /// `amr` (JSON array text).
    pub amr: String,
    /// `acr`.
    pub acr: Option<String>,
    /// `expires_at`.
    pub expires_at: OffsetDateTime,
    /// `last_seen_at`.
    pub last_seen_at: OffsetDateTime,
    /// `revoked_at`.
    pub revoked_at: Option<OffsetDateTime>,
    /// `user_agent`.
    pub user_agent: Option<String>,
    /// `ip`.
    pub ip: Option<String>,
}

impl SessionRow {
    /// The session this row stores.
    pub(crate) fn decode(self) -> Result<Session, StoreError> {
        let r = Record {
            table: "sessions",
            name: &self.id,
        };
        Ok(Session {
            id: r.parse("id", &self.id, SessionId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            secret_hash: r.hash("secret_hash", &self.secret_hash)?,
            amr: r.strings("amr", &self.amr)?,
            created_at: self.created_at,
            auth_time: self.auth_time,
            acr: self.acr,
            expires_at: self.expires_at,
            last_seen_at: self.last_seen_at,
            revoked_at: self.revoked_at,
            user_agent: self.user_agent,
            ip: self.ip,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::{AT, SESSION, TENANT, USER, assert_twins, check};

    #[test]
    fn each_dialect_binds_as_many_values_as_it_has_placeholders() {
        assert_twins(&[(SELECT_LIVE, 0), (INSERT, 2), (REVOKE, 1), (REVOKE_USER, 1)]);
    }

    #[test]
    fn session_rows_decode_and_name_each_bad_column() {
        let session = SessionRow {
            id: SESSION.into(),
            tenant_id: TENANT.into(),
            user_id: USER.into(),
            secret_hash: vec![7; 32],
            created_at: AT,
            auth_time: AT,
            amr: r#"["pwd"]"#.into(),
            acr: None,
            expires_at: AT,
            last_seen_at: AT,
            revoked_at: None,
            user_agent: None,
            ip: None,
        };
        check(
            session,
            SessionRow::decode,
            &[
                ("sessions.amr", |r| r.amr = "{}".into()),
                ("sessions.secret_hash", |r| r.secret_hash = vec![7; 31]),
            ],
        );
    }
}
