//! [`PgDialect`]: how the shared repositories of `svc-store-sql` run on PostgreSQL.
//!
//! Timestamps are `timestamptz` and are compared directly (so the `_ns` twins of the SQLite
//! schema are skipped); JSON is `jsonb`, bound and read through [`Jsonb`] so no statement needs a
//! cast; lists matched with `IN` are `text[]` for `= ANY($n)`.

use crate::error::map_err;
use sqlx::ValueRef as _;
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::pool::PoolConnection;
use sqlx::postgres::types::Oid;
use sqlx::postgres::{PgArgumentBuffer, PgArguments, PgRow, PgTypeInfo, PgValueFormat, PgValueRef};
use sqlx::query::Query;
use sqlx::{
    AssertSqlSafe, Column as _, Decode, Encode, PgConnection, Postgres, Row as _, Transaction,
    Type, TypeInfo as _,
};
use std::future::Future;
use svc_store::StoreError;
use svc_store_sql::{Arg, Dialect, Kind, Lease, Stmt};
use time::OffsetDateTime;

/// The PostgreSQL dialect.
#[derive(Debug, Clone, Copy)]
pub struct PgDialect;

/// What a PostgreSQL transaction holds: a transaction begun on a pooled connection, or a pooled
/// connection in autocommit for one statement. sqlx rolls a dropped transaction back before the
/// connection is lent out again.
pub enum PgLease {
    /// `BEGIN` was sent.
    Tx(Transaction<'static, Postgres>),
    /// Autocommit: each statement commits itself.
    Plain(PoolConnection<Postgres>),
}

impl Lease for PgLease {
    type Conn = PgConnection;

    fn conn(&mut self) -> &mut PgConnection {
        match self {
            Self::Tx(tx) => tx,
            Self::Plain(conn) => conn,
        }
    }

    async fn commit(self) -> Result<(), StoreError> {
        match self {
            Self::Tx(tx) => tx.commit().await.map_err(map_err),
            // `write_once`: the one statement committed itself when it ran.
            Self::Plain(_) => Ok(()),
        }
    }

    async fn finish(self) -> Result<(), StoreError> {
        match self {
            // A read changed nothing: a rollback ends it without a commit's work.
            Self::Tx(tx) => tx.rollback().await.map_err(map_err),
            // Autocommit: nothing to end; the connection goes back to the pool.
            Self::Plain(_) => Ok(()),
        }
    }
}

type PgQuery<'a> = Query<'a, Postgres, PgArguments>;

/// The `jsonb` type's fixed OID (`pg_type.dat`), so binding needs no lookup round trip.
const JSONB_OID: Oid = Oid(3802);

/// The text of a JSON document, bound as and read from `jsonb` (binary format: a version byte,
/// 1, then the text).
#[derive(Debug)]
struct Jsonb(String);

impl Type<Postgres> for Jsonb {
    fn type_info() -> PgTypeInfo {
        PgTypeInfo::with_oid(JSONB_OID)
    }

    fn compatible(ty: &PgTypeInfo) -> bool {
        matches!(ty.name(), "JSONB" | "JSON")
    }
}

impl Encode<'_, Postgres> for Jsonb {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        buf.push(1);
        buf.extend_from_slice(self.0.as_bytes());
        Ok(IsNull::No)
    }
}

impl<'r> Decode<'r, Postgres> for Jsonb {
    fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
        let binary_jsonb =
            value.format() == PgValueFormat::Binary && value.type_info().name() == "JSONB";
        let bytes = value.as_bytes()?;
        let text = match (binary_jsonb, bytes.split_first()) {
            (true, Some((1, rest))) => rest,
            (true, _) => return Err("unsupported jsonb format version (expected 1)".into()),
            (false, _) => bytes,
        };
        Ok(Self(std::str::from_utf8(text)?.to_owned()))
    }
}

/// The sqlx query of `stmt`, every argument bound the PostgreSQL way.
fn query(stmt: Stmt<'_>) -> PgQuery<'static> {
    let (sql, args) = stmt.into_parts();
    let mut query = sqlx::query(AssertSqlSafe(sql));
    for arg in args {
        query = match arg {
            Arg::Text(text) => query.bind(text.as_deref()),
            Arg::Json(text) => query.bind(Jsonb(text)),
            Arg::Int(int) => query.bind(int),
            Arg::Bool(flag) => query.bind(flag),
            Arg::Bytes(bytes) => query.bind(bytes),
            Arg::Time(at) | Arg::Instant(at) => query.bind(at),
            // PostgreSQL compares `timestamptz` columns directly: no twin column to write.
            Arg::Twin(_) => query,
            Arg::TextList(items) => query.bind(items),
        };
    }
    query
}

impl Dialect for PgDialect {
    type Db = Postgres;
    type Lease = PgLease;
    type Row = PgRow;
    const KIND: Kind = Kind::Postgres;
    const WRITES_SERIALIZED: bool = false;
    const DATA_MODIFYING_CTE: bool = true;

    fn map_err(err: sqlx::Error) -> StoreError {
        map_err(err)
    }

    fn execute<'a>(
        conn: &'a mut PgConnection,
        stmt: Stmt<'a>,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send + 'a {
        let query = query(stmt);
        async move {
            let done = query.execute(conn).await.map_err(map_err)?;
            Ok(done.rows_affected())
        }
    }

    fn fetch_optional<'a>(
        conn: &'a mut PgConnection,
        stmt: Stmt<'a>,
    ) -> impl Future<Output = Result<Option<PgRow>, StoreError>> + Send + 'a {
        let query = query(stmt);
        async move { query.fetch_optional(conn).await.map_err(map_err) }
    }

    fn fetch_all<'a>(
        conn: &'a mut PgConnection,
        stmt: Stmt<'a>,
    ) -> impl Future<Output = Result<Vec<PgRow>, StoreError>> + Send + 'a {
        let query = query(stmt);
        async move { query.fetch_all(conn).await.map_err(map_err) }
    }

    fn text(row: &PgRow, column: &str) -> Result<Option<String>, sqlx::Error> {
        row.try_get(column)
    }

    fn json(row: &PgRow, column: &str) -> Result<Option<String>, sqlx::Error> {
        let json: Option<Jsonb> = row.try_get(column)?;
        Ok(json.map(|j| j.0))
    }

    fn int(row: &PgRow, column: &str) -> Result<Option<i64>, sqlx::Error> {
        // Counters are bigint; a few small columns (an HTTP status) are integer: read by the
        // column's own type, so neither is decoded twice.
        let int4 = row
            .try_column(column)
            .is_ok_and(|c| c.type_info().name() == "INT4");
        if int4 {
            let int: Option<i32> = row.try_get(column)?;
            return Ok(int.map(i64::from));
        }
        row.try_get(column)
    }

    fn boolean(row: &PgRow, column: &str) -> Result<Option<bool>, sqlx::Error> {
        row.try_get(column)
    }

    fn bytes(row: &PgRow, column: &str) -> Result<Option<Vec<u8>>, sqlx::Error> {
        row.try_get(column)
    }

    fn time(row: &PgRow, column: &str) -> Result<Option<OffsetDateTime>, sqlx::Error> {
        row.try_get(column)
    }

    fn instant(row: &PgRow, column: &str) -> Result<Option<OffsetDateTime>, sqlx::Error> {
        row.try_get(column)
    }
}
