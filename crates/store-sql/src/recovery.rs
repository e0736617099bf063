//! Social recovery: the statements of guardians, recovery requests and approvals, their row
//! forms ([`GuardianRow`], [`RequestRow`], [`ApprovalRow`]) and the `RecoveryReads`/
//! `RecoveryWrites` ports for [`SqlTx`].
//!
//! Every rule that two racing requests must not both pass is one statement whose changed-row
//! count (or returned row) is the answer. An approval is spent by `UPDATE … WHERE approved_at IS
//! NULL AND <unexpired> RETURNING`; a status transition by `UPDATE … WHERE status = <expected>`.
//! On PostgreSQL a concurrent writer waits for the first one's row lock, then re-checks the
//! condition against the committed row (READ COMMITTED) and changes nothing; on SQLite writers
//! are serialised by `BEGIN IMMEDIATE` anyway. At most one open request per person is the
//! partial unique index `recovery_requests_one_open_key`, so two racing starts conflict.
//!
//! Instants compared in SQL (expiries, a request's closing for the purge) use the `_ns` twins on
//! SQLite and the columns themselves on PostgreSQL. Guardians are listed oldest first, ordered
//! in Rust after decoding by creation time then id (SQLite's stored text does not order below
//! one second); approvals in guardian-id order in SQL, which both backends order bytewise.
//! Booleans compared in SQL are bound, so one text serves both backends. The secret hashes of a
//! request and the token hash of an approval are written and matched, never read back.

use crate::dialect::{Dialect, PerDialect};
use crate::naming;
use crate::record::Record;
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_domain::{
    Email, Guardian, GuardianId, RecoveryApproval, RecoveryId, RecoveryRequest, RecoveryStatus,
    SecretHash, TenantId, UserId,
};
use svc_store::{RecoveryReads, RecoveryWrites, StoreError};
use time::OffsetDateTime;

const SELECT_GUARDIANS: &str = "SELECT id, tenant_id, user_id, email, created_at \
     FROM recovery_guardians WHERE tenant_id = $1 AND user_id = $2";
const INSERT_GUARDIAN: &str = "INSERT INTO recovery_guardians (id, tenant_id, user_id, email, \
     created_at) VALUES ($1, $2, $3, $4, $5)";
const DELETE_GUARDIAN: &str =
    "DELETE FROM recovery_guardians WHERE tenant_id = $1 AND user_id = $2 AND id = $3";

/// What SQLite calls a repeated guardian address (by column); PostgreSQL names the constraint.
const GUARDIAN_EMAIL_BY_COLUMNS: &str = "recovery_guardians_tenant_id_user_id_email_key";
const GUARDIAN_EMAIL_KEY: &str = "recovery_guardians_user_email_key";
/// What SQLite calls a second open request (by the partial index's columns); PostgreSQL names
/// the index.
const ONE_OPEN_BY_COLUMNS: &str = "recovery_requests_tenant_id_user_id_key";
const ONE_OPEN_KEY: &str = "recovery_requests_one_open_key";

macro_rules! select_requests {
    ($where:literal) => {
        concat!(
            "SELECT id, tenant_id, user_id, status, approvals_needed, created_at, expires_at, \
             ready_at, closed_at, factor_due FROM recovery_requests ",
            $where
        )
    };
}

const SELECT_OPEN: PerDialect = PerDialect {
    sqlite: select_requests!(
        "WHERE tenant_id = $1 AND user_id = $2 \
         AND (status = 'waiting' OR (status = 'pending' AND expires_at_ns > $3))"
    ),
    postgres: select_requests!(
        "WHERE tenant_id = $1 AND user_id = $2 \
         AND (status = 'waiting' OR (status = 'pending' AND expires_at > $3))"
    ),
};
const SELECT_BY_SECRET: &str = select_requests!("WHERE tenant_id = $1 AND secret_hash = $2");
const SELECT_BY_CANCEL: &str = select_requests!("WHERE tenant_id = $1 AND cancel_hash = $2");
const SELECT_REQUEST: &str = select_requests!("WHERE tenant_id = $1 AND id = $2");
const FACTOR_DUE: &str = "SELECT EXISTS (SELECT 1 FROM recovery_requests \
     WHERE tenant_id = $1 AND user_id = $2 AND status = 'completed' AND factor_due = $3) AS due";

const INSERT_REQUEST: PerDialect = PerDialect {
    sqlite: "INSERT INTO recovery_requests (id, tenant_id, user_id, status, approvals_needed, \
         secret_hash, cancel_hash, created_at, expires_at, expires_at_ns, ready_at, closed_at, \
         closed_at_ns, factor_due) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
    postgres: "INSERT INTO recovery_requests (id, tenant_id, user_id, status, approvals_needed, \
         secret_hash, cancel_hash, created_at, expires_at, ready_at, closed_at, factor_due) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
};
const EXPIRE_REQUESTS: PerDialect = PerDialect {
    sqlite: "UPDATE recovery_requests SET status = 'expired', closed_at = $3, closed_at_ns = $4 \
         WHERE tenant_id = $1 AND user_id = $2 AND status = 'pending' AND expires_at_ns <= $5",
    postgres: "UPDATE recovery_requests SET status = 'expired', closed_at = $3 \
         WHERE tenant_id = $1 AND user_id = $2 AND status = 'pending' AND expires_at <= $4",
};
const UPDATE_REQUEST: PerDialect = PerDialect {
    sqlite: "UPDATE recovery_requests SET status = $3, ready_at = $4, closed_at = $5, \
         closed_at_ns = $6, factor_due = $7 WHERE tenant_id = $1 AND id = $2 AND status = $8",
    postgres: "UPDATE recovery_requests SET status = $3, ready_at = $4, closed_at = $5, \
         factor_due = $6 WHERE tenant_id = $1 AND id = $2 AND status = $7",
};
const CLEAR_FACTOR_DUE: &str = "UPDATE recovery_requests SET factor_due = $3 \
     WHERE tenant_id = $1 AND user_id = $2 AND factor_due = $4";

macro_rules! select_approvals {
    ($where:literal) => {
        concat!(
            "SELECT tenant_id, request_id, guardian_id, email, expires_at, approved_at \
             FROM recovery_approvals ",
            $where
        )
    };
}

const SELECT_APPROVAL: &str = select_approvals!("WHERE tenant_id = $1 AND token_hash = $2");
const SELECT_APPROVALS: &str =
    select_approvals!("WHERE tenant_id = $1 AND request_id = $2 ORDER BY guardian_id");
const INSERT_APPROVAL: PerDialect = PerDialect {
    sqlite: "INSERT INTO recovery_approvals (token_hash, tenant_id, request_id, guardian_id, \
         email, expires_at, expires_at_ns, approved_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    postgres: "INSERT INTO recovery_approvals (token_hash, tenant_id, request_id, guardian_id, \
         email, expires_at, approved_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
};
const SPEND_APPROVAL: PerDialect = PerDialect {
    sqlite: "UPDATE recovery_approvals SET approved_at = $3 \
         WHERE tenant_id = $1 AND token_hash = $2 AND approved_at IS NULL AND expires_at_ns > $4 \
         RETURNING tenant_id, request_id, guardian_id, email, expires_at, approved_at",
    postgres: "UPDATE recovery_approvals SET approved_at = $3 \
         WHERE tenant_id = $1 AND token_hash = $2 AND approved_at IS NULL AND expires_at > $4 \
         RETURNING tenant_id, request_id, guardian_id, email, expires_at, approved_at",
};

/// The first `$3` requests, in key order, closed before `$1` and owing no factor (`$2` false).
macro_rules! closed_requests {
    ($closed_at:literal) => {
        concat!(
            "(SELECT tenant_id, id FROM recovery_requests \
              WHERE status IN ('cancelled', 'completed', 'expired') AND ",
            $closed_at,
            " < $1 AND factor_due = $2 ORDER BY tenant_id, id LIMIT $3)"
        )
    };
}

/// The purge: first the approvals of the requests it deletes (counted, which the foreign key's
/// cascade would not report), then the requests. Both name the same requests
/// ([`closed_requests`]); within the write transaction a closed request stays closed, so the
/// second statement selects the requests whose approvals the first one counted.
const PURGE_APPROVALS: PerDialect = PerDialect {
    sqlite: concat!(
        "DELETE FROM recovery_approvals WHERE (tenant_id, request_id) IN ",
        closed_requests!("closed_at_ns")
    ),
    postgres: concat!(
        "DELETE FROM recovery_approvals WHERE (tenant_id, request_id) IN ",
        closed_requests!("closed_at")
    ),
};
const PURGE_REQUESTS: PerDialect = PerDialect {
    sqlite: concat!(
        "DELETE FROM recovery_requests WHERE (tenant_id, id) IN ",
        closed_requests!("closed_at_ns")
    ),
    postgres: concat!(
        "DELETE FROM recovery_requests WHERE (tenant_id, id) IN ",
        closed_requests!("closed_at")
    ),
};

#[async_trait]
impl<D: Dialect> RecoveryReads for SqlTx<D> {
    /// Oldest first (see the module documentation).
    async fn guardians(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Vec<Guardian>, StoreError> {
        let mut guardians = Stmt::new(SELECT_GUARDIANS)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .fetch_all_with::<D, _>(self.conn(), decode_guardian::<D>)
            .await?;
        guardians.sort_by(|a, b| (a.created_at, a.id.as_str()).cmp(&(b.created_at, b.id.as_str())));
        Ok(guardians)
    }

    async fn open_recovery(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<Option<RecoveryRequest>, StoreError> {
        Stmt::new(SELECT_OPEN.pick::<D>())
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind_instant(now)
            .fetch_optional_with::<D, _>(self.conn(), decode_request::<D>)
            .await
    }

    async fn recovery_by_secret(
        &mut self,
        tenant: &TenantId,
        secret: &SecretHash,
    ) -> Result<Option<RecoveryRequest>, StoreError> {
        Stmt::new(SELECT_BY_SECRET)
            .bind(tenant.as_str())
            .bind(secret.as_bytes())
            .fetch_optional_with::<D, _>(self.conn(), decode_request::<D>)
            .await
    }

    async fn recovery_by_cancel_token(
        &mut self,
        tenant: &TenantId,
        cancel: &SecretHash,
    ) -> Result<Option<RecoveryRequest>, StoreError> {
        Stmt::new(SELECT_BY_CANCEL)
            .bind(tenant.as_str())
            .bind(cancel.as_bytes())
            .fetch_optional_with::<D, _>(self.conn(), decode_request::<D>)
            .await
    }

    async fn recovery(
        &mut self,
        tenant: &TenantId,
        id: &RecoveryId,
    ) -> Result<Option<RecoveryRequest>, StoreError> {
        Stmt::new(SELECT_REQUEST)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode_request::<D>)
            .await
    }

    async fn recovery_approval(
        &mut self,
        tenant: &TenantId,
        token: &SecretHash,
    ) -> Result<Option<RecoveryApproval>, StoreError> {
        Stmt::new(SELECT_APPROVAL)
            .bind(tenant.as_str())
            .bind(token.as_bytes())
            .fetch_optional_with::<D, _>(self.conn(), decode_approval::<D>)
            .await
    }

    async fn recovery_approvals(
        &mut self,
        tenant: &TenantId,
        id: &RecoveryId,
    ) -> Result<Vec<RecoveryApproval>, StoreError> {
        Stmt::new(SELECT_APPROVALS)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .fetch_all_with::<D, _>(self.conn(), decode_approval::<D>)
            .await
    }

    async fn recovery_factor_due(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<bool, StoreError> {
        let row = Stmt::new(FACTOR_DUE)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(true)
            .fetch_one::<D>(self.conn())
            .await?;
        Columns::<D>::new(&row, "recovery_requests").get("due")
    }
}

#[async_trait]
impl<D: Dialect> RecoveryWrites for SqlTx<D> {
    async fn insert_guardian(&mut self, guardian: &Guardian) -> Result<(), StoreError> {
        Stmt::new(INSERT_GUARDIAN)
            .bind(guardian.id.as_str())
            .bind(guardian.tenant_id.as_str())
            .bind(guardian.user_id.as_str())
            .bind(guardian.email.as_str())
            .bind(guardian.created_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| {
                naming::foreign_key(
                    naming::rename(e, GUARDIAN_EMAIL_BY_COLUMNS, GUARDIAN_EMAIL_KEY),
                    "recovery_guardians_tenant_id_fkey",
                )
            })?;
        Ok(())
    }

    async fn delete_guardian(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &GuardianId,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(DELETE_GUARDIAN)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(id.as_str())
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }

    async fn insert_recovery(
        &mut self,
        request: &RecoveryRequest,
        secret: &SecretHash,
        cancel: &SecretHash,
    ) -> Result<(), StoreError> {
        Stmt::new(INSERT_REQUEST.pick::<D>())
            .bind(request.id.as_str())
            .bind(request.tenant_id.as_str())
            .bind(request.user_id.as_str())
            .bind(request.status.as_str())
            .bind(i64::from(request.approvals_needed))
            .bind(secret.as_bytes())
            .bind(cancel.as_bytes())
            .bind(request.created_at)
            .bind(request.expires_at)
            .bind_twin(request.expires_at)
            .bind(request.ready_at)
            .bind(request.closed_at)
            .bind_twin(request.closed_at)
            .bind(request.factor_due)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| {
                naming::foreign_key(
                    naming::rename(e, ONE_OPEN_BY_COLUMNS, ONE_OPEN_KEY),
                    "recovery_requests_tenant_id_fkey",
                )
            })?;
        Ok(())
    }

    async fn expire_recoveries(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        Stmt::new(EXPIRE_REQUESTS.pick::<D>())
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(now)
            .bind_twin(now)
            .bind_instant(now)
            .execute::<D>(self.conn())
            .await
    }

    async fn insert_recovery_approval(
        &mut self,
        approval: &RecoveryApproval,
        token: &SecretHash,
    ) -> Result<(), StoreError> {
        Stmt::new(INSERT_APPROVAL.pick::<D>())
            .bind(token.as_bytes())
            .bind(approval.tenant_id.as_str())
            .bind(approval.request_id.as_str())
            .bind(approval.guardian_id.as_str())
            .bind(approval.email.as_str())
            .bind(approval.expires_at)
            .bind_twin(approval.expires_at)
            .bind(approval.approved_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, "recovery_approvals_request_id_fkey"))?;
        Ok(())
    }

    /// One conditional `UPDATE … RETURNING` (see the module documentation).
    async fn spend_recovery_approval(
        &mut self,
        tenant: &TenantId,
        token: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<RecoveryApproval>, StoreError> {
        Stmt::new(SPEND_APPROVAL.pick::<D>())
            .bind(tenant.as_str())
            .bind(token.as_bytes())
            .bind(now)
            .bind_instant(now)
            .fetch_optional_with::<D, _>(self.conn(), decode_approval::<D>)
            .await
    }

    /// Compare-and-set on the stored status (see the module documentation).
    async fn update_recovery(
        &mut self,
        request: &RecoveryRequest,
        expected: RecoveryStatus,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(UPDATE_REQUEST.pick::<D>())
            .bind(request.tenant_id.as_str())
            .bind(request.id.as_str())
            .bind(request.status.as_str())
            .bind(request.ready_at)
            .bind(request.closed_at)
            .bind_twin(request.closed_at)
            .bind(request.factor_due)
            .bind(expected.as_str())
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::rename(e, ONE_OPEN_BY_COLUMNS, ONE_OPEN_KEY))?;
        Ok(changed > 0)
    }

    async fn clear_recovery_factor_due(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<u64, StoreError> {
        Stmt::new(CLEAR_FACTOR_DUE)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(false)
            .bind(true)
            .execute::<D>(self.conn())
            .await
    }

    /// Approvals first, then their requests (see [`PURGE_APPROVALS`]); returns both counts.
    async fn purge_closed_recoveries(
        &mut self,
        before: OffsetDateTime,
        limit: u64,
    ) -> Result<u64, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let approvals = Stmt::new(PURGE_APPROVALS.pick::<D>())
            .bind_instant(before)
            .bind(false)
            .bind(limit)
            .execute::<D>(self.conn())
            .await?;
        let requests = Stmt::new(PURGE_REQUESTS.pick::<D>())
            .bind_instant(before)
            .bind(false)
            .bind(limit)
            .execute::<D>(self.conn())
            .await?;
        Ok(approvals + requests)
    }
}

fn decode_guardian<D: Dialect>(row: &Row<D>) -> Result<Guardian, StoreError> {
    let c = Columns::<D>::new(row, "recovery_guardians");
    GuardianRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        user_id: c.get("user_id")?,
        email: c.get("email")?,
        created_at: c.get("created_at")?,
    }
    .decode()
}

fn decode_request<D: Dialect>(row: &Row<D>) -> Result<RecoveryRequest, StoreError> {
    let c = Columns::<D>::new(row, "recovery_requests");
    RequestRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        user_id: c.get("user_id")?,
        status: c.get("status")?,
        approvals_needed: c.get("approvals_needed")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
        ready_at: c.get("ready_at")?,
        closed_at: c.get("closed_at")?,
        factor_due: c.get("factor_due")?,
    }
    .decode()
}

fn decode_approval<D: Dialect>(row: &Row<D>) -> Result<RecoveryApproval, StoreError> {
    let c = Columns::<D>::new(row, "recovery_approvals");
    ApprovalRow {
        tenant_id: c.get("tenant_id")?,
        request_id: c.get("request_id")?,
        guardian_id: c.get("guardian_id")?,
        email: c.get("email")?,
        expires_at: c.get("expires_at")?,
        approved_at: c.get("approved_at")?,
    }
    .decode()
}

/// A `recovery_guardians` row as stored.
#[derive(Debug, Clone)]
struct GuardianRow {
    id: String,
    tenant_id: String,
    user_id: String,
    email: String,
    created_at: OffsetDateTime,
}

impl GuardianRow {
    fn decode(self) -> Result<Guardian, StoreError> {
        let r = Record {
            table: "recovery_guardians",
            name: &self.id,
        };
        Ok(Guardian {
            id: r.parse("id", &self.id, GuardianId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            email: r.parse("email", &self.email, Email::parse)?,
            created_at: self.created_at,
        })
    }
}

/// A `recovery_requests` row as read (its secret hashes are never read back).
#[derive(Debug, Clone)]
struct RequestRow {
    id: String,
    tenant_id: String,
    user_id: String,
    status: String,
    /// At least one (a check); a `u32` in the domain.
    approvals_needed: i64,
    created_at: OffsetDateTime,
    expires_at: OffsetDateTime,
    ready_at: Option<OffsetDateTime>,
    closed_at: Option<OffsetDateTime>,
    factor_due: bool,
}

impl RequestRow {
    fn decode(self) -> Result<RecoveryRequest, StoreError> {
        let r = Record {
            table: "recovery_requests",
            name: &self.id,
        };
        Ok(RecoveryRequest {
            id: r.parse("id", &self.id, RecoveryId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            status: r.parse("status", &self.status, |s| {
                RecoveryStatus::parse(s).ok_or("unknown status")
            })?,
            approvals_needed: u32::try_from(self.approvals_needed)
                .map_err(|e| r.corrupt("approvals_needed", &self.approvals_needed, &e))?,
            created_at: self.created_at,
            expires_at: self.expires_at,
            ready_at: self.ready_at,
            closed_at: self.closed_at,
            factor_due: self.factor_due,
        })
    }
}

/// A `recovery_approvals` row as read (its token hash is never read back).
#[derive(Debug, Clone)]
struct ApprovalRow {
    tenant_id: String,
    request_id: String,
    guardian_id: String,
    email: String,
    expires_at: OffsetDateTime,
    approved_at: Option<OffsetDateTime>,
}

impl ApprovalRow {
    fn decode(self) -> Result<RecoveryApproval, StoreError> {
        // Named by request and guardian: the token hash that keys it is not read back.
        let name = format!("{} of {}", self.guardian_id, self.request_id);
        let r = Record {
            table: "recovery_approvals",
            name: &name,
        };
        Ok(RecoveryApproval {
            request_id: r.parse("request_id", &self.request_id, RecoveryId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            guardian_id: r.parse("guardian_id", &self.guardian_id, GuardianId::parse)?,
            email: r.parse("email", &self.email, Email::parse)?,
            expires_at: self.expires_at,
            approved_at: self.approved_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::{AT, TENANT, USER, assert_twins, check};

    const GUARDIAN: &str = "gdn_01jd0000000000000000000000";
    const REQUEST: &str = "rcv_01jd0000000000000000000000";

    #[test]
    fn each_dialect_binds_as_many_values_as_it_has_placeholders() {
        assert_twins(&[
            (SELECT_OPEN, 0),
            (INSERT_REQUEST, 2),
            (EXPIRE_REQUESTS, 1),
            (UPDATE_REQUEST, 1),
            (INSERT_APPROVAL, 1),
            (SPEND_APPROVAL, 0),
            (PURGE_APPROVALS, 0),
            (PURGE_REQUESTS, 0),
        ]);
    }

    #[test]
    fn single_use_and_transitions_are_conditions_of_one_statement() {
        for sql in [SPEND_APPROVAL.sqlite, SPEND_APPROVAL.postgres] {
            assert!(sql.starts_with("UPDATE "), "{sql}");
            for condition in ["tenant_id = $1", "approved_at IS NULL", "RETURNING"] {
                assert!(sql.contains(condition), "{condition}: {sql}");
            }
        }
        assert!(SPEND_APPROVAL.sqlite.contains("expires_at_ns > $4"));
        assert!(SPEND_APPROVAL.postgres.contains("expires_at > $4"));
        assert!(UPDATE_REQUEST.sqlite.ends_with("AND status = $8"));
        assert!(UPDATE_REQUEST.postgres.ends_with("AND status = $7"));
        for (requests, approvals) in [
            (PURGE_REQUESTS.sqlite, PURGE_APPROVALS.sqlite),
            (PURGE_REQUESTS.postgres, PURGE_APPROVALS.postgres),
        ] {
            let named = |sql: &'static str| sql.split_once(" IN ").map(|(_, requests)| requests);
            assert_eq!(
                named(requests),
                named(approvals),
                "both purge statements name the same requests"
            );
            assert!(requests.ends_with("LIMIT $3)"), "{requests}");
        }
    }

    #[test]
    fn recovery_rows_decode_and_name_each_bad_column() {
        let guardian = GuardianRow {
            id: GUARDIAN.into(),
            tenant_id: TENANT.into(),
            user_id: USER.into(),
            email: "grace@example.com".into(),
            created_at: AT,
        };
        check(
            guardian,
            GuardianRow::decode,
            &[
                ("recovery_guardians.id", |r| r.id = USER.into()),
                ("recovery_guardians.tenant_id", |r| {
                    r.tenant_id = USER.into();
                }),
                ("recovery_guardians.user_id", |r| r.user_id = TENANT.into()),
                ("recovery_guardians.email", |r| r.email = "grace".into()),
            ],
        );
        let request = RequestRow {
            id: REQUEST.into(),
            tenant_id: TENANT.into(),
            user_id: USER.into(),
            status: "waiting".into(),
            approvals_needed: 2,
            created_at: AT,
            expires_at: AT,
            ready_at: Some(AT),
            closed_at: None,
            factor_due: false,
        };
        check(
            request,
            RequestRow::decode,
            &[
                ("recovery_requests.id", |r| r.id = GUARDIAN.into()),
                ("recovery_requests.tenant_id", |r| r.tenant_id = USER.into()),
                ("recovery_requests.user_id", |r| r.user_id = TENANT.into()),
                ("recovery_requests.status", |r| r.status = "open".into()),
                ("recovery_requests.approvals_needed", |r| {
                    r.approvals_needed = -1;
                }),
                ("recovery_requests.approvals_needed", |r| {
                    r.approvals_needed = i64::from(u32::MAX) + 1;
                }),
            ],
        );
        let approval = ApprovalRow {
            tenant_id: TENANT.into(),
            request_id: REQUEST.into(),
            guardian_id: GUARDIAN.into(),
            email: "grace@example.com".into(),
            expires_at: AT,
            approved_at: None,
        };
        check(
            approval,
            ApprovalRow::decode,
            &[
                ("recovery_approvals.tenant_id", |r| {
                    r.tenant_id = USER.into()
                }),
                ("recovery_approvals.request_id", |r| {
                    r.request_id = GUARDIAN.into();
                }),
                ("recovery_approvals.guardian_id", |r| {
                    r.guardian_id = REQUEST.into();
                }),
                ("recovery_approvals.email", |r| r.email = String::new()),
            ],
        );
    }
}
