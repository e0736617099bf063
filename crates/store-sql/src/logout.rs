//! Logout propagation: the applications each session signed into (`session_clients`), the
//! back-channel outbox (`logout_notices`), and the `LogoutReads`/`LogoutWrites` ports for
//! [`SqlTx`]. The statements that write notices when sessions end are here too; `sessions` runs
//! them in the revoking transaction.
//!
//! Claiming is the webhook queue's pattern: one `UPDATE … WHERE (session_id, client_id) IN
//! (SELECT … LIMIT n) RETURNING`, under SQLite's single writer (`BEGIN IMMEDIATE`) or with the
//! inner `SELECT … FOR UPDATE SKIP LOCKED` on PostgreSQL, so concurrent workers take disjoint
//! notices. The lease is `due_at` itself, pushed past the attempt. Times are compared on the
//! `_ns` twins on SQLite and on the `timestamptz` columns on PostgreSQL.
//!
//! Expired sessions get their notices from `logout_expiry_mark`: one row saying through which
//! instant expiries were already announced, locked `FOR UPDATE` on PostgreSQL (SQLite's single
//! writer already serialises), so two instances never announce the same window.

use crate::dialect::{Conn, Dialect, PerDialect};
use crate::naming;
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_domain::{
    ClientId, LogoutAttempt, LogoutNotice, LogoutNoticeState, LogoutOutcome, SessionClient,
    SessionId, TenantId, UserId,
};
use svc_store::{EXPIRY_LOOKBACK, LogoutReads, LogoutWrites, StoreError};
use time::OffsetDateTime;

const JOIN: &str = "INSERT INTO session_clients (tenant_id, session_id, client_id, subject, \
     issuer, joined_at) VALUES ($1, $2, $3, $4, $5, $6) \
     ON CONFLICT (session_id, client_id) DO NOTHING";
const CLIENTS: &str = "SELECT tenant_id, session_id, client_id, subject, issuer, joined_at \
     FROM session_clients WHERE tenant_id = $1 AND session_id = $2";
const NOTICES: &str = "SELECT client_id, outcome, attempts, last_status_code, last_error \
     FROM logout_notices WHERE tenant_id = $1 AND session_id = $2 ORDER BY client_id";

macro_rules! notify {
    ($values:literal, $from:literal) => {
        concat!(
            "INSERT INTO logout_notices (tenant_id, session_id, client_id, subject, issuer, ",
            $values,
            " SELECT sc.tenant_id, sc.session_id, sc.client_id, sc.subject, sc.issuer, ",
            $from,
            " ON CONFLICT (session_id, client_id) DO NOTHING"
        )
    };
}
/// Notices for the session `$2` of tenant `$1`, due at `$3` (run once it was revoked).
const NOTIFY_SESSION: PerDialect = PerDialect {
    sqlite: notify!(
        "created_at, created_at_ns, due_at, due_at_ns)",
        "$3, $4, $3, $4 FROM session_clients sc JOIN applications a ON a.id = sc.client_id \
         WHERE sc.tenant_id = $1 AND sc.session_id = $2 AND a.backchannel_logout_uri IS NOT NULL"
    ),
    postgres: notify!(
        "created_at, due_at)",
        "$3, $3 FROM session_clients sc JOIN applications a ON a.id = sc.client_id \
         WHERE sc.tenant_id = $1 AND sc.session_id = $2 AND a.backchannel_logout_uri IS NOT NULL"
    ),
};
/// Notices for every unrevoked session of the user `$2` of tenant `$1`, due at `$3` (run just
/// before they are revoked).
const NOTIFY_USER: PerDialect = PerDialect {
    sqlite: notify!(
        "created_at, created_at_ns, due_at, due_at_ns)",
        "$3, $4, $3, $4 FROM session_clients sc JOIN applications a ON a.id = sc.client_id \
         JOIN sessions s ON s.id = sc.session_id \
         WHERE s.tenant_id = $1 AND s.user_id = $2 AND s.revoked_at IS NULL \
         AND a.backchannel_logout_uri IS NOT NULL"
    ),
    postgres: notify!(
        "created_at, due_at)",
        "$3, $3 FROM session_clients sc JOIN applications a ON a.id = sc.client_id \
         JOIN sessions s ON s.id = sc.session_id \
         WHERE s.tenant_id = $1 AND s.user_id = $2 AND s.revoked_at IS NULL \
         AND a.backchannel_logout_uri IS NOT NULL"
    ),
};
/// Notices for every unrevoked session that expired in `($1, $2]`, due at `$3`.
const NOTIFY_EXPIRED: PerDialect = PerDialect {
    sqlite: notify!(
        "created_at, created_at_ns, due_at, due_at_ns)",
        "$3, $4, $3, $4 FROM sessions s JOIN session_clients sc ON sc.session_id = s.id \
         JOIN applications a ON a.id = sc.client_id \
         WHERE s.expires_at_ns > $1 AND s.expires_at_ns <= $2 AND s.revoked_at IS NULL \
         AND a.backchannel_logout_uri IS NOT NULL"
    ),
    postgres: notify!(
        "created_at, due_at)",
        "$3, $3 FROM sessions s JOIN session_clients sc ON sc.session_id = s.id \
         JOIN applications a ON a.id = sc.client_id \
         WHERE s.expires_at > $1 AND s.expires_at <= $2 AND s.revoked_at IS NULL \
         AND a.backchannel_logout_uri IS NOT NULL"
    ),
};
const READ_MARK: PerDialect = PerDialect {
    sqlite: "SELECT through FROM logout_expiry_mark WHERE id = 1",
    postgres: "SELECT through FROM logout_expiry_mark WHERE id = 1 FOR UPDATE",
};
const MOVE_MARK: PerDialect = PerDialect {
    sqlite: "UPDATE logout_expiry_mark SET through = $1, through_ns = $2 WHERE id = 1",
    postgres: "UPDATE logout_expiry_mark SET through = $1 WHERE id = 1",
};
/// Leases up to `$4` (`$3` on PostgreSQL) notices due at `$1` until `$2`, counting the attempt.
const CLAIM: PerDialect = PerDialect {
    sqlite: "UPDATE logout_notices SET due_at = $2, due_at_ns = $3, attempts = attempts + 1 \
         WHERE (session_id, client_id) IN (SELECT session_id, client_id FROM logout_notices \
             WHERE due_at_ns <= $1 ORDER BY due_at_ns LIMIT $4) \
         RETURNING tenant_id, session_id, client_id, subject, issuer, attempts",
    postgres: "UPDATE logout_notices SET due_at = $2, attempts = attempts + 1 \
         WHERE (session_id, client_id) IN (SELECT session_id, client_id FROM logout_notices \
             WHERE due_at <= $1 ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED) \
         RETURNING tenant_id, session_id, client_id, subject, issuer, attempts",
};
const RETRY: PerDialect = PerDialect {
    sqlite: "UPDATE logout_notices SET due_at = $4, due_at_ns = $5, last_status_code = $6, \
         last_error = $7 WHERE tenant_id = $1 AND session_id = $2 AND client_id = $3",
    postgres: "UPDATE logout_notices SET due_at = $4, last_status_code = $5, last_error = $6 \
         WHERE tenant_id = $1 AND session_id = $2 AND client_id = $3",
};
const FINISH: PerDialect = PerDialect {
    sqlite: "UPDATE logout_notices SET due_at = NULL, due_at_ns = NULL, outcome = $4, \
         last_status_code = $5, last_error = $6 \
         WHERE tenant_id = $1 AND session_id = $2 AND client_id = $3",
    postgres: "UPDATE logout_notices SET due_at = NULL, outcome = $4, last_status_code = $5, \
         last_error = $6 WHERE tenant_id = $1 AND session_id = $2 AND client_id = $3",
};

/// Writes the notices of the session `id`, just revoked at `now`.
pub(crate) async fn notify_session<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    id: &SessionId,
    now: OffsetDateTime,
) -> Result<u64, StoreError> {
    Stmt::new(NOTIFY_SESSION.pick::<D>())
        .bind(tenant.as_str())
        .bind(id.as_str())
        .bind(now)
        .bind_twin(now)
        .execute::<D>(conn)
        .await
}

/// Writes the notices of every unrevoked session of `user`, about to be revoked at `now`.
pub(crate) async fn notify_user<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    user: &UserId,
    now: OffsetDateTime,
) -> Result<u64, StoreError> {
    Stmt::new(NOTIFY_USER.pick::<D>())
        .bind(tenant.as_str())
        .bind(user.as_str())
        .bind(now)
        .bind_twin(now)
        .execute::<D>(conn)
        .await
}

#[async_trait]
impl<D: Dialect> LogoutReads for SqlTx<D> {
    async fn session_clients(
        &mut self,
        tenant: &TenantId,
        session: &SessionId,
    ) -> Result<Vec<SessionClient>, StoreError> {
        let mut clients = Stmt::new(CLIENTS)
            .bind(tenant.as_str())
            .bind(session.as_str())
            .fetch_all_with::<D, _>(self.conn(), decode_client::<D>)
            .await?;
        // Ordered here: SQLite's stored text does not order below one second.
        clients.sort_by(|a, b| (a.joined_at, &a.client_id).cmp(&(b.joined_at, &b.client_id)));
        Ok(clients)
    }

    async fn logout_notices(
        &mut self,
        tenant: &TenantId,
        session: &SessionId,
    ) -> Result<Vec<LogoutNoticeState>, StoreError> {
        Stmt::new(NOTICES)
            .bind(tenant.as_str())
            .bind(session.as_str())
            .fetch_all_with::<D, _>(self.conn(), decode_state::<D>)
            .await
    }
}

#[async_trait]
impl<D: Dialect> LogoutWrites for SqlTx<D> {
    async fn join_session(&mut self, client: &SessionClient) -> Result<(), StoreError> {
        Stmt::new(JOIN)
            .bind(client.tenant_id.as_str())
            .bind(client.session_id.as_str())
            .bind(client.client_id.as_str())
            .bind(client.subject.as_str())
            .bind(client.issuer.as_str())
            .bind(client.joined_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "session_clients_session_id_fkey"))?;
        Ok(())
    }

    async fn notify_expired_sessions(&mut self, now: OffsetDateTime) -> Result<u64, StoreError> {
        let mark = Stmt::new(READ_MARK.pick::<D>())
            .fetch_optional::<D>(self.conn())
            .await?
            .ok_or_else(|| StoreError::Corrupt("logout_expiry_mark: the row is missing".into()))?;
        let through: Option<OffsetDateTime> =
            Columns::<D>::new(&mark, "logout_expiry_mark").get("through")?;
        let written = match through {
            // The first pass on this database: expiries from here on.
            None => 0,
            Some(through) if through >= now => return Ok(0),
            Some(through) => {
                let from = through.max(now - EXPIRY_LOOKBACK);
                Stmt::new(NOTIFY_EXPIRED.pick::<D>())
                    .bind_instant(from)
                    .bind_instant(now)
                    .bind(now)
                    .bind_twin(now)
                    .execute::<D>(self.conn())
                    .await?
            }
        };
        Stmt::new(MOVE_MARK.pick::<D>())
            .bind(now)
            .bind_twin(now)
            .execute::<D>(self.conn())
            .await?;
        Ok(written)
    }

    async fn claim_logout_notices(
        &mut self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<LogoutNotice>, StoreError> {
        Stmt::new(CLAIM.pick::<D>())
            .bind_instant(now)
            .bind(lease_until)
            .bind_twin(lease_until)
            .bind(i64::from(limit))
            .fetch_all_with::<D, _>(self.conn(), decode_notice::<D>)
            .await
    }

    async fn record_logout_attempt(
        &mut self,
        tenant: &TenantId,
        session: &SessionId,
        client: &ClientId,
        attempt: &LogoutAttempt,
    ) -> Result<(), StoreError> {
        let status = attempt.status_code.map(i64::from);
        let error = attempt.error.as_deref();
        let stmt = match attempt.retry_at {
            Some(_) => Stmt::new(RETRY.pick::<D>()),
            None => Stmt::new(FINISH.pick::<D>()),
        }
        .bind(tenant.as_str())
        .bind(session.as_str())
        .bind(client.as_str());
        let stmt = match attempt.retry_at {
            Some(at) => stmt.bind(at).bind_twin(at),
            None => stmt.bind(attempt.outcome.as_str()),
        };
        let changed = stmt
            .bind(status)
            .bind(error)
            .execute::<D>(self.conn())
            .await?;
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }
}

fn decode_client<D: Dialect>(row: &Row<D>) -> Result<SessionClient, StoreError> {
    let c = Columns::<D>::new(row, "session_clients");
    let corrupt = |column: &str, e: &dyn std::fmt::Display| {
        StoreError::Corrupt(format!("session_clients.{column}: {e}"))
    };
    let tenant: String = c.get("tenant_id")?;
    let session: String = c.get("session_id")?;
    let client: String = c.get("client_id")?;
    Ok(SessionClient {
        tenant_id: TenantId::parse(&tenant).map_err(|e| corrupt("tenant_id", &e))?,
        session_id: SessionId::parse(&session).map_err(|e| corrupt("session_id", &e))?,
        client_id: ClientId::parse(&client).map_err(|e| corrupt("client_id", &e))?,
        subject: c.get("subject")?,
        issuer: c.get("issuer")?,
        joined_at: c.get("joined_at")?,
    })
}

fn decode_notice<D: Dialect>(row: &Row<D>) -> Result<LogoutNotice, StoreError> {
    let c = Columns::<D>::new(row, "logout_notices");
    let corrupt = |column: &str, e: &dyn std::fmt::Display| {
        StoreError::Corrupt(format!("logout_notices.{column}: {e}"))
    };
    let tenant: String = c.get("tenant_id")?;
    let session: String = c.get("session_id")?;
    let client: String = c.get("client_id")?;
    let attempts: i64 = c.get("attempts")?;
    Ok(LogoutNotice {
        tenant_id: TenantId::parse(&tenant).map_err(|e| corrupt("tenant_id", &e))?,
        session_id: SessionId::parse(&session).map_err(|e| corrupt("session_id", &e))?,
        client_id: ClientId::parse(&client).map_err(|e| corrupt("client_id", &e))?,
        subject: c.get("subject")?,
        issuer: c.get("issuer")?,
        attempts: u32::try_from(attempts).map_err(|e| corrupt("attempts", &e))?,
    })
}

fn decode_state<D: Dialect>(row: &Row<D>) -> Result<LogoutNoticeState, StoreError> {
    let c = Columns::<D>::new(row, "logout_notices");
    let corrupt = |column: &str, e: &dyn std::fmt::Display| {
        StoreError::Corrupt(format!("logout_notices.{column}: {e}"))
    };
    let client: String = c.get("client_id")?;
    let outcome: String = c.get("outcome")?;
    let attempts: i64 = c.get("attempts")?;
    let status: Option<i64> = c.get("last_status_code")?;
    Ok(LogoutNoticeState {
        client_id: ClientId::parse(&client).map_err(|e| corrupt("client_id", &e))?,
        outcome: LogoutOutcome::parse(&outcome)
            .ok_or_else(|| corrupt("outcome", &"unknown outcome"))?,
        attempts: u32::try_from(attempts).map_err(|e| corrupt("attempts", &e))?,
        last_status_code: status
            .map(u16::try_from)
            .transpose()
            .map_err(|e| corrupt("last_status_code", &e))?,
        last_error: c.get("last_error")?,
    })
}
