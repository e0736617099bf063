//! The audit log: appends, and listings newest first with exact-match and time filters (the
//! `AuditReads`/`AuditWrites` ports for [`SqlTx`]), and its row form.
//!
//! The time filters compare instants in SQL, so `LIMIT` and the cursor stay exact, with no
//! filtering after the fact. PostgreSQL compares `occurred_at` itself (a `timestamptz`). SQLite
//! compares `occurred_at_ns`, the integer twin of `occurred_at`: the stored RFC 3339 text does not
//! order chronologically below one second, so comparing it would let an entry at `12:00:00` pass
//! `since = 12:00:00.25`. The statement is assembled from the filters present, each value bound,
//! so every shape keeps a plain range scan of `audit_log_tenant_id_id_idx`.

use crate::dialect::{Dialect, PerDialect};
use crate::record::Record;
use crate::sorted;
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_domain::{AuditEntry, AuditEntryId, AuditOutcome, TenantId};
use svc_store::{AuditFilter, AuditReads, AuditWrites, Order, StoreError};
use time::OffsetDateTime;

// Completed by `list_audit`: the tenant's placeholder, then the filters present.
const SELECT: &str = "SELECT id, tenant_id, actor, action, target, request_id, client_ip, \
     outcome, occurred_at FROM audit_log WHERE tenant_id = ";
const INSERT: PerDialect = PerDialect {
    sqlite: "INSERT INTO audit_log (id, tenant_id, actor, action, target, request_id, \
     client_ip, outcome, occurred_at, occurred_at_ns) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    postgres: "INSERT INTO audit_log (id, tenant_id, actor, action, target, request_id, \
     client_ip, outcome, occurred_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
};
/// The `since` filter, completed by an instant (see the module documentation).
const SINCE: PerDialect = PerDialect {
    sqlite: " AND occurred_at_ns >= ",
    postgres: " AND occurred_at >= ",
};
/// The `until` filter, completed by an instant.
const UNTIL: PerDialect = PerDialect {
    sqlite: " AND occurred_at_ns < ",
    postgres: " AND occurred_at < ",
};

#[async_trait]
impl<D: Dialect> AuditReads for SqlTx<D> {
    /// Up to `limit` entries of `tenant` matching `filter`, newest (highest id) first, with ids
    /// below `before`.
    async fn list_audit(
        &mut self,
        tenant: &TenantId,
        filter: &AuditFilter,
        after: Option<&AuditEntryId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let mut stmt = Stmt::dynamic(SELECT);
        stmt.push_bind(tenant.as_str());
        if let Some(after) = after {
            stmt.push(sorted::past(order)).push_bind(after.as_str());
        }
        if let Some(action) = &filter.action {
            stmt.push(" AND action = ").push_bind(action.as_str());
        }
        if let Some(actor) = &filter.actor {
            stmt.push(" AND actor = ").push_bind(actor.as_str());
        }
        if let Some(target) = &filter.target {
            stmt.push(" AND target = ").push_bind(target.as_str());
        }
        if let Some(since) = filter.since {
            stmt.push(SINCE.pick::<D>()).push_bind_instant(since);
        }
        if let Some(until) = filter.until {
            stmt.push(UNTIL.pick::<D>()).push_bind_instant(until);
        }
        stmt.push(sorted::order_by(order))
            .push_bind(i64::from(limit));
        let rows = stmt.fetch_all::<D>(self.conn()).await?;
        rows.iter().map(decode::<D>).collect()
    }
}

#[async_trait]
impl<D: Dialect> AuditWrites for SqlTx<D> {
    async fn insert_audit(&mut self, entry: &AuditEntry) -> Result<(), StoreError> {
        Stmt::new(INSERT.pick::<D>())
            .bind(entry.id.as_str())
            .bind(entry.tenant_id.as_ref().map(TenantId::as_str))
            .bind(entry.actor.as_str())
            .bind(entry.action.as_str())
            .bind(entry.target.as_deref())
            .bind(entry.request_id.as_deref())
            .bind(entry.client_ip.as_deref())
            .bind(entry.outcome.as_str())
            .bind(entry.occurred_at)
            .bind_twin(entry.occurred_at)
            .execute::<D>(self.conn())
            .await?;
        Ok(())
    }
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<AuditEntry, StoreError> {
    let c = Columns::<D>::new(row, "audit_log");
    AuditRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        actor: c.get("actor")?,
        action: c.get("action")?,
        target: c.get("target")?,
        request_id: c.get("request_id")?,
        client_ip: c.get("client_ip")?,
        outcome: c.get("outcome")?,
        occurred_at: c.get("occurred_at")?,
    }
    .decode()
}

/// An `audit_log` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct AuditRow {
    /// `id`.
    pub id: String,
    /// `tenant_id` (no foreign key; `NULL` for deployment-wide actions).
    pub tenant_id: Option<String>,
    /// `actor`.
    pub actor: String,
    /// `action`.
    pub action: String,
    /// `target`.
    pub target: Option<String>,
    /// `request_id`.
    pub request_id: Option<String>,
    /// `client_ip`.
    pub client_ip: Option<String>,
    /// `outcome`.
    pub outcome: String,
    /// `occurred_at`.
    pub occurred_at: OffsetDateTime,
}

impl AuditRow {
    /// The audit entry this row stores.
    pub(crate) fn decode(self) -> Result<AuditEntry, StoreError> {
        let r = Record {
            table: "audit_log",
            name: &self.id,
        };
        Ok(AuditEntry {
            tenant_id: r.parse_opt("tenant_id", self.tenant_id.as_deref(), TenantId::parse)?,
            outcome: r.parse("outcome", &self.outcome, |s| {
                AuditOutcome::parse(s).ok_or("unknown outcome")
            })?,
            id: r.parse("id", &self.id, AuditEntryId::parse)?,
            actor: self.actor,
            action: self.action,
            target: self.target,
            request_id: self.request_id,
            client_ip: self.client_ip,
            occurred_at: self.occurred_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> AuditRow {
        AuditRow {
            id: "aud_01jd0000000000000000000000".into(),
            tenant_id: Some("ten_01jd0000000000000000000000".into()),
            actor: "system".into(),
            action: "tenant.created".into(),
            target: None,
            request_id: None,
            client_ip: None,
            outcome: "success".into(),
            occurred_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    /// A `table.column` and how to spoil that column.
    type Spoil = fn(&mut AuditRow);

    #[test]
    fn an_audit_row_decodes_and_each_bad_column_is_named() {
        let entry = row().decode().unwrap();
        assert_eq!(entry.outcome, AuditOutcome::Success);
        let mut deployment_wide = row();
        deployment_wide.tenant_id = None;
        assert_eq!(deployment_wide.decode().unwrap().tenant_id, None);
        let cases: [(&str, Spoil); 3] = [
            ("audit_log.id", |r| {
                r.id = "ten_01jd0000000000000000000000".into()
            }),
            ("audit_log.tenant_id", |r| r.tenant_id = Some("x".into())),
            ("audit_log.outcome", |r| r.outcome = "maybe".into()),
        ];
        for (column, spoil) in cases {
            let mut bad = row();
            spoil(&mut bad);
            match bad.decode() {
                Err(StoreError::Corrupt(message)) => {
                    assert!(message.contains(column), "{column}: {message}")
                }
                other => panic!("{column}: expected Corrupt, got {other:?}"),
            }
        }
    }

    #[test]
    fn filters_are_appended_in_order_with_numbered_placeholders() {
        let mut stmt = Stmt::dynamic(SELECT);
        stmt.push_bind("ten_1");
        stmt.push(SINCE.sqlite)
            .push_bind_instant(OffsetDateTime::UNIX_EPOCH);
        stmt.push(" ORDER BY id DESC LIMIT ").push_bind(10_i64);
        assert!(
            stmt.sql().ends_with(
                "WHERE tenant_id = $1 AND occurred_at_ns >= $2 ORDER BY id DESC LIMIT $3"
            ),
            "{}",
            stmt.sql()
        );
    }
}
