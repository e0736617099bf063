//! A person's login history: its statements, its row form and `decode`, used by the session
//! ports of [`crate::SqlTx`] (a sign-in writes its record in the transaction of its session).

use crate::dialect::{Conn, Dialect};
use crate::naming;
use crate::record::Record;
use crate::sorted::{self, Sorted};
use crate::{Columns, Row, Stmt};
use svc_domain::{LoginMethod, LoginRecord, LoginRecordId, LoginResult, TenantId, UserId};
use svc_store::{Order, StoreError};
use time::OffsetDateTime;

macro_rules! select_login_history {
    ($where:literal) => {
        concat!(
            "SELECT id, tenant_id, user_id, occurred_at, method, result, client_ip, user_agent \
             FROM login_history ",
            $where
        )
    };
}

// `$3` is the cursor or the bound of its direction (`sorted::cursor`).
const LIST: Sorted = Sorted {
    asc: select_login_history!(
        "WHERE tenant_id = $1 AND user_id = $2 AND id > $3 ORDER BY id LIMIT $4"
    ),
    desc: select_login_history!(
        "WHERE tenant_id = $1 AND user_id = $2 AND id < $3 ORDER BY id DESC LIMIT $4"
    ),
};
// Ids are time-ordered, so "older than" is a primary-key range: no timestamp comparison (and no
// `_ns` twin) needed.
/// The oldest `$2` records before the id floor `$1` (ids order by time).
const PURGE: &str = "DELETE FROM login_history WHERE id IN \
     (SELECT id FROM login_history WHERE id < $1 ORDER BY id LIMIT $2)";
const INSERT: &str = "INSERT INTO login_history (id, tenant_id, user_id, occurred_at, method, \
     result, client_ip, user_agent) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

pub(crate) async fn list<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    user: &UserId,
    after: Option<&LoginRecordId>,
    order: Order,
    limit: u32,
) -> Result<Vec<LoginRecord>, StoreError> {
    Stmt::new(LIST.pick(order))
        .bind(tenant.as_str())
        .bind(user.as_str())
        .bind(sorted::cursor(after.map(LoginRecordId::as_str), order))
        .bind(i64::from(limit))
        .fetch_all_with::<D, _>(conn, decode::<D>)
        .await
}

pub(crate) async fn purge<D: Dialect>(
    conn: &mut Conn<D>,
    before: OffsetDateTime,
    limit: u64,
) -> Result<u64, StoreError> {
    Stmt::new(PURGE)
        .bind(LoginRecordId::floor(before).as_str().to_owned())
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .execute::<D>(conn)
        .await
}

pub(crate) async fn insert<D: Dialect>(
    conn: &mut Conn<D>,
    record: &LoginRecord,
) -> Result<(), StoreError> {
    Stmt::new(INSERT)
        .bind(record.id.as_str())
        .bind(record.tenant_id.as_str())
        .bind(record.user_id.as_str())
        .bind(record.occurred_at)
        .bind(record.method.as_str())
        .bind(record.result.as_str())
        .bind(record.client_ip.as_deref())
        .bind(record.user_agent.as_deref())
        .execute::<D>(conn)
        .await
        .map_err(|e| naming::foreign_key(e, "login_history_tenant_id_fkey"))?;
    Ok(())
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<LoginRecord, StoreError> {
    let c = Columns::<D>::new(row, "login_history");
    LoginRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        user_id: c.get("user_id")?,
        occurred_at: c.get("occurred_at")?,
        method: c.get("method")?,
        result: c.get("result")?,
        client_ip: c.get("client_ip")?,
        user_agent: c.get("user_agent")?,
    }
    .decode()
}

/// A `login_history` row as stored.
#[derive(Debug, Clone)]
struct LoginRow {
    id: String,
    tenant_id: String,
    user_id: String,
    occurred_at: OffsetDateTime,
    method: String,
    result: String,
    client_ip: Option<String>,
    user_agent: Option<String>,
}

impl LoginRow {
    fn decode(self) -> Result<LoginRecord, StoreError> {
        let r = Record {
            table: "login_history",
            name: &self.id,
        };
        Ok(LoginRecord {
            id: r.parse("id", &self.id, LoginRecordId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            occurred_at: self.occurred_at,
            method: r.parse("method", &self.method, LoginMethod::parse)?,
            result: r.parse("result", &self.result, LoginResult::parse)?,
            client_ip: self.client_ip,
            user_agent: self.user_agent,
        })
    }
}
