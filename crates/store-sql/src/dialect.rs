//! [`Dialect`]: the little that differs between the SQL backends, as one trait a backend crate
//! implements on a marker type, and [`PerDialect`] for the few statements whose text must differ.
//!
//! Everything else (statements, binding order, row decoding, transactions) is written once in
//! this crate, generic over `D: Dialect`, and monomorphised in each backend crate, so each
//! backend's code is as direct as if it had been written for it alone.

use crate::stmt::Stmt;
use std::future::Future;
use svc_store::StoreError;
use time::OffsetDateTime;

/// The connection type the repositories of dialect `D` run statements on (`PgConnection`; the
/// SQLite store's own connection).
pub type Conn<D> = <<D as Dialect>::Lease as Lease>::Conn;

/// The row type of dialect `D` (`PgRow`; the SQLite store's own row).
pub type Row<D> = <D as Dialect>::Row;

/// What a [`crate::SqlTx`] holds: a connection in a transaction, or in autocommit for one
/// statement. The backend decides how a transaction begins (it hands the lease out begun) and
/// how it ends; dropping a lease that was neither committed nor finished rolls it back.
pub trait Lease: Send + 'static {
    /// The connection the statements run on.
    type Conn: Send;

    /// The connection.
    fn conn(&mut self) -> &mut Self::Conn;

    /// Commits a transaction (an autocommit lease has nothing left to commit).
    fn commit(self) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Ends a read: a transaction is rolled back, as it changed nothing.
    fn finish(self) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// Which dialect a [`PerDialect`] text is for; also says which backend a generic test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// SQLite: text timestamps with `_ns` integer twins, JSON as text, one writer at a time.
    Sqlite,
    /// PostgreSQL: `timestamptz`, `jsonb`, row locks and `SKIP LOCKED`.
    Postgres,
}

/// A statement whose text must differ by dialect, both spellings side by side so a reader (and
/// a reviewer) sees exactly how they differ. Most statements are one `&'static str` for both.
#[derive(Debug, Clone, Copy)]
pub struct PerDialect {
    /// The SQLite text.
    pub sqlite: &'static str,
    /// The PostgreSQL text.
    pub postgres: &'static str,
}

impl PerDialect {
    /// This dialect's text.
    pub fn pick<D: Dialect>(&self) -> &'static str {
        match D::KIND {
            Kind::Sqlite => self.sqlite,
            Kind::Postgres => self.postgres,
        }
    }
}

/// What a SQL backend supplies to the shared repositories: how to run a [`Stmt`] on its driver,
/// how to bind each kind of [`crate::Arg`], how to read each kind of column, and how its errors
/// become [`StoreError`]s.
///
/// The getters return `None` for SQL `NULL`; [`crate::Columns`] turns an unexpected `NULL`
/// into [`StoreError::Corrupt`].
pub trait Dialect: Send + Sync + Sized + 'static {
    /// The sqlx driver of the migrations (and, on PostgreSQL, of every statement).
    type Db: sqlx::Database;

    /// What a transaction holds.
    type Lease: Lease;

    /// A row as the statements return it.
    type Row: Send + Sync;

    /// Which dialect this is (picks [`PerDialect`] texts).
    const KIND: Kind;

    /// True when a write transaction already excludes every other writer (SQLite's
    /// `BEGIN IMMEDIATE`), so the per-aggregate locks some writes take are no-ops.
    const WRITES_SERIALIZED: bool;

    /// True when an `UPDATE ... RETURNING` may stand in a `WITH` clause (PostgreSQL), so a
    /// change and the read of its context can be one round trip.
    const DATA_MODIFYING_CTE: bool;

    /// Maps a driver error (or a column getter's) onto the port's error: the one place that
    /// decides which failures are conflicts (and what the violated constraint is called),
    /// outages or bad stored data.
    fn map_err(err: sqlx::Error) -> StoreError;

    /// Runs `stmt`, returning how many rows it changed.
    fn execute<'a>(
        conn: &'a mut Conn<Self>,
        stmt: Stmt<'a>,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send + 'a;

    /// Runs `stmt`, returning its first row if any.
    fn fetch_optional<'a>(
        conn: &'a mut Conn<Self>,
        stmt: Stmt<'a>,
    ) -> impl Future<Output = Result<Option<Row<Self>>, StoreError>> + Send + 'a;

    /// Runs `stmt`, returning every row.
    fn fetch_all<'a>(
        conn: &'a mut Conn<Self>,
        stmt: Stmt<'a>,
    ) -> impl Future<Output = Result<Vec<Row<Self>>, StoreError>> + Send + 'a;

    /// A text column.
    fn text(row: &Row<Self>, column: &str) -> Result<Option<String>, sqlx::Error>;

    /// A JSON column, as its text (SQLite stores text; PostgreSQL `jsonb`).
    fn json(row: &Row<Self>, column: &str) -> Result<Option<String>, sqlx::Error>;

    /// An integer column (any width).
    fn int(row: &Row<Self>, column: &str) -> Result<Option<i64>, sqlx::Error>;

    /// A boolean column.
    fn boolean(row: &Row<Self>, column: &str) -> Result<Option<bool>, sqlx::Error>;

    /// A binary column.
    fn bytes(row: &Row<Self>, column: &str) -> Result<Option<Vec<u8>>, sqlx::Error>;

    /// A stored timestamp column (SQLite RFC 3339 text; PostgreSQL `timestamptz`).
    fn time(row: &Row<Self>, column: &str) -> Result<Option<OffsetDateTime>, sqlx::Error>;

    /// An instant computed in SQL for comparison (SQLite: nanoseconds since the epoch, from an
    /// `_ns` twin; PostgreSQL: `timestamptz`). See [`crate::Arg::Instant`].
    fn instant(row: &Row<Self>, column: &str) -> Result<Option<OffsetDateTime>, sqlx::Error>;
}

/// Running a statement: the shared repositories say `stmt.fetch_optional::<D>(conn)`.
impl<'a> Stmt<'a> {
    /// Runs the statement on `conn`, returning how many rows it changed.
    pub async fn execute<D: Dialect>(self, conn: &'a mut Conn<D>) -> Result<u64, StoreError> {
        D::execute(conn, self).await
    }

    /// Runs the statement on `conn`, returning its first row if any.
    pub async fn fetch_optional<D: Dialect>(
        self,
        conn: &'a mut Conn<D>,
    ) -> Result<Option<Row<D>>, StoreError> {
        D::fetch_optional(conn, self).await
    }

    /// Runs the statement on `conn`, returning its one row; no row is [`StoreError::NotFound`].
    pub async fn fetch_one<D: Dialect>(self, conn: &'a mut Conn<D>) -> Result<Row<D>, StoreError> {
        D::fetch_optional(conn, self)
            .await?
            .ok_or(StoreError::NotFound)
    }

    /// Runs the statement on `conn`, returning every row.
    pub async fn fetch_all<D: Dialect>(
        self,
        conn: &'a mut Conn<D>,
    ) -> Result<Vec<Row<D>>, StoreError> {
        D::fetch_all(conn, self).await
    }

    /// Runs the statement on `conn` and decodes its first row, if any, with `decode`.
    pub async fn fetch_optional_with<D: Dialect, T>(
        self,
        conn: &'a mut Conn<D>,
        decode: impl Fn(&Row<D>) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        D::fetch_optional(conn, self)
            .await?
            .as_ref()
            .map(decode)
            .transpose()
    }

    /// Runs the statement on `conn` and decodes every row with `decode`.
    pub async fn fetch_all_with<D: Dialect, T>(
        self,
        conn: &'a mut Conn<D>,
        decode: impl Fn(&Row<D>) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        D::fetch_all(conn, self).await?.iter().map(decode).collect()
    }
}
