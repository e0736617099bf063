//! [`SqliteDialect`]: how the shared repositories of `svc-store-sql` run on SQLite.
//!
//! Timestamps are stored as RFC 3339 text in UTC (see [`crate::timestamps`]) with `_ns` integer
//! twins for comparison; JSON is text; booleans are integers. A write transaction holds the
//! database's single write lock from `BEGIN IMMEDIATE`, so per-aggregate locks are no-ops.
//! Statements run on this crate's own connections (`crate::connection`), not sqlx's.

use crate::connection::{SqliteConn, SqliteRecord};
use crate::error::map_err;
use crate::pool::SqliteLease;
use sqlx::Sqlite;
use std::future::{Future, ready};
use svc_store::StoreError;
use svc_store_sql::{Dialect, Kind, Stmt};
use time::OffsetDateTime;

/// The SQLite dialect.
#[derive(Debug, Clone, Copy)]
pub struct SqliteDialect;

/// Every statement runs to completion on the calling task's thread (see `crate::connection`),
/// so the futures are ready when made.
impl Dialect for SqliteDialect {
    type Db = Sqlite;
    type Lease = SqliteLease;
    type Row = SqliteRecord;
    const KIND: Kind = Kind::Sqlite;
    const WRITES_SERIALIZED: bool = true;
    const DATA_MODIFYING_CTE: bool = false;

    fn map_err(err: sqlx::Error) -> StoreError {
        map_err(err)
    }

    fn execute<'a>(
        conn: &'a mut SqliteConn,
        stmt: Stmt<'a>,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send + 'a {
        ready(conn.execute(stmt))
    }

    fn fetch_optional<'a>(
        conn: &'a mut SqliteConn,
        stmt: Stmt<'a>,
    ) -> impl Future<Output = Result<Option<SqliteRecord>, StoreError>> + Send + 'a {
        ready(conn.fetch_optional(stmt))
    }

    fn fetch_all<'a>(
        conn: &'a mut SqliteConn,
        stmt: Stmt<'a>,
    ) -> impl Future<Output = Result<Vec<SqliteRecord>, StoreError>> + Send + 'a {
        ready(conn.fetch_all(stmt))
    }

    fn text(row: &SqliteRecord, column: &str) -> Result<Option<String>, sqlx::Error> {
        row.text(column)
    }

    fn json(row: &SqliteRecord, column: &str) -> Result<Option<String>, sqlx::Error> {
        row.text(column)
    }

    fn int(row: &SqliteRecord, column: &str) -> Result<Option<i64>, sqlx::Error> {
        row.int(column)
    }

    fn boolean(row: &SqliteRecord, column: &str) -> Result<Option<bool>, sqlx::Error> {
        row.boolean(column)
    }

    fn bytes(row: &SqliteRecord, column: &str) -> Result<Option<Vec<u8>>, sqlx::Error> {
        row.bytes(column)
    }

    fn time(row: &SqliteRecord, column: &str) -> Result<Option<OffsetDateTime>, sqlx::Error> {
        row.time(column)
    }

    fn instant(row: &SqliteRecord, column: &str) -> Result<Option<OffsetDateTime>, sqlx::Error> {
        row.int(column)?
            .map(|ns| {
                OffsetDateTime::from_unix_timestamp_nanos(i128::from(ns))
                    .map_err(|e| sqlx::Error::Decode(Box::new(e)))
            })
            .transpose()
    }
}
