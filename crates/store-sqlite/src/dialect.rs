//! [`SqliteDialect`]: how the shared repositories of `svc-store-sql` run on SQLite.
//!
//! Timestamps are stored as RFC 3339 text in UTC (see [`crate::timestamps`]) with `_ns` integer
//! twins for comparison; JSON is text; booleans are integers. A write transaction holds the
//! database's single write lock from `BEGIN IMMEDIATE`, so per-aggregate locks are no-ops.

use crate::error::map_err;
use crate::timestamps::{nanos, utc};
use sqlx::query::Query;
use sqlx::sqlite::{SqliteArguments, SqliteRow};
use sqlx::{AssertSqlSafe, Row as _, Sqlite, SqliteConnection};
use std::future::Future;
use svc_store::StoreError;
use svc_store_sql::{Arg, Dialect, Kind, Stmt, encode_strings};
use time::OffsetDateTime;

/// The SQLite dialect.
#[derive(Debug, Clone, Copy)]
pub struct SqliteDialect;

type SqliteQuery<'a> = Query<'a, Sqlite, SqliteArguments>;

/// The sqlx query of `stmt`, every argument bound the SQLite way.
fn query(stmt: Stmt<'_>) -> Result<SqliteQuery<'static>, StoreError> {
    let (sql, args) = stmt.into_parts();
    let mut query = sqlx::query(AssertSqlSafe(sql));
    for arg in args {
        query = match arg {
            Arg::Text(text) => query.bind(text.as_deref()),
            Arg::Json(text) => query.bind(text),
            Arg::Int(int) => query.bind(int),
            Arg::Bool(flag) => query.bind(flag),
            Arg::Bytes(bytes) => query.bind(bytes),
            Arg::Time(at) => query.bind(at.map(utc)),
            Arg::Instant(at) | Arg::Twin(at) => query.bind(at.map(nanos)),
            Arg::TextList(items) => query.bind(encode_strings(items)?),
        };
    }
    Ok(query)
}

impl Dialect for SqliteDialect {
    type Db = Sqlite;
    const KIND: Kind = Kind::Sqlite;
    const WRITES_SERIALIZED: bool = true;
    const DATA_MODIFYING_CTE: bool = false;

    fn map_err(err: sqlx::Error) -> StoreError {
        map_err(err)
    }

    fn execute<'a>(
        conn: &'a mut SqliteConnection,
        stmt: Stmt<'a>,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send + 'a {
        let query = query(stmt);
        async move {
            let done = query?.execute(conn).await.map_err(map_err)?;
            Ok(done.rows_affected())
        }
    }

    fn fetch_optional<'a>(
        conn: &'a mut SqliteConnection,
        stmt: Stmt<'a>,
    ) -> impl Future<Output = Result<Option<SqliteRow>, StoreError>> + Send + 'a {
        let query = query(stmt);
        async move { query?.fetch_optional(conn).await.map_err(map_err) }
    }

    fn fetch_all<'a>(
        conn: &'a mut SqliteConnection,
        stmt: Stmt<'a>,
    ) -> impl Future<Output = Result<Vec<SqliteRow>, StoreError>> + Send + 'a {
        let query = query(stmt);
        async move { query?.fetch_all(conn).await.map_err(map_err) }
    }

    fn text(row: &SqliteRow, column: &str) -> Result<Option<String>, sqlx::Error> {
        row.try_get(column)
    }

    fn json(row: &SqliteRow, column: &str) -> Result<Option<String>, sqlx::Error> {
        row.try_get(column)
    }

    fn int(row: &SqliteRow, column: &str) -> Result<Option<i64>, sqlx::Error> {
        row.try_get(column)
    }

    fn boolean(row: &SqliteRow, column: &str) -> Result<Option<bool>, sqlx::Error> {
        row.try_get(column)
    }

    fn bytes(row: &SqliteRow, column: &str) -> Result<Option<Vec<u8>>, sqlx::Error> {
        row.try_get(column)
    }

    fn time(row: &SqliteRow, column: &str) -> Result<Option<OffsetDateTime>, sqlx::Error> {
        row.try_get(column)
    }

    fn instant(row: &SqliteRow, column: &str) -> Result<Option<OffsetDateTime>, sqlx::Error> {
        let ns: Option<i64> = row.try_get(column)?;
        ns.map(|ns| {
            OffsetDateTime::from_unix_timestamp_nanos(i128::from(ns))
                .map_err(|e| sqlx::Error::Decode(Box::new(e)))
        })
        .transpose()
    }
}
