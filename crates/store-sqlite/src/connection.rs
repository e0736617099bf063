//! [`SqliteConn`]: one connection to the database file, and how a shared repository's [`Stmt`]
//! runs on it: on the calling thread, start to finish, with no hop to another thread.
//!
//! Why not sqlx's SQLite driver, which the migrations still use: it runs every connection on a
//! thread of its own, so each statement is a message to that thread and a wake-up back. A grant
//! is a dozen statements under the process's single write lock; on two cores those thread hops,
//! not SQLite, were most of a refresh rotation's CPU and kept the write lock held while the
//! woken task waited for a core (`bench/results/2026-11-27-index-layout.md`). SQLite itself
//! answers an indexed statement in microseconds from the page cache, so a transaction now runs
//! inline on the task that holds it.
//!
//! What can block the calling thread: another *process* holding the write lock (the busy
//! handler waits up to `busy_timeout`; this process's own writers queue on its write turn
//! first) and reading pages the operating system has not cached. Checkpoints, which `fsync`,
//! run on their own thread (`crate::pool`).
//!
//! Values are bound and read exactly as sqlx's driver did, so files written before and after
//! read the same: timestamps RFC 3339 text, booleans integers, JSON text, `$n` placeholders.

use crate::error::map_sqlite_err;
use crate::timestamps::{nanos, utc};
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use svc_store::StoreError;
use svc_store_sql::{Arg, Stmt, encode_strings};
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{OffsetDateTime, PrimitiveDateTime};

/// One open connection, its statements prepared once and cached.
#[derive(Debug)]
pub struct SqliteConn {
    inner: Connection,
}

/// How every connection is set up.
#[derive(Debug, Clone)]
pub(crate) struct ConnSettings {
    /// How long a statement waits for another process's write lock.
    pub busy_timeout: Duration,
    /// Prepared statements kept per connection.
    pub statement_cache_capacity: usize,
}

impl SqliteConn {
    /// Opens the existing-or-new database file at `path`: WAL, `synchronous=NORMAL`, foreign
    /// keys enforced, `busy_timeout`, no automatic checkpoint (the pool's checkpoint thread
    /// does it, off the request path), and a WAL truncated to 64 MiB when it starts again.
    pub(crate) fn open(path: &Path, settings: &ConnSettings) -> Result<Self, StoreError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let inner = Connection::open_with_flags(path, flags).map_err(map_sqlite_err)?;
        Self::configure(inner, settings)
    }

    fn configure(inner: Connection, settings: &ConnSettings) -> Result<Self, StoreError> {
        inner
            .busy_timeout(settings.busy_timeout)
            .map_err(map_sqlite_err)?;
        // Reports the mode it set; a file that cannot be WAL (a read-only directory) says so.
        let mode: String = inner
            .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
            .map_err(map_sqlite_err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(crate::error::config_error(format!(
                "the SQLite database could not be put in WAL mode (it is in {mode} mode)"
            )));
        }
        // NORMAL is durable against application crashes in WAL mode and skips an fsync per
        // commit; only a power loss can drop the last transactions.
        inner
            .execute_batch(
                "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; \
                 PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = 67108864;",
            )
            .map_err(map_sqlite_err)?;
        inner.set_prepared_statement_cache_capacity(settings.statement_cache_capacity.max(1));
        Ok(Self { inner })
    }

    /// Runs SQL without arguments or results (`BEGIN`, `COMMIT`, pragmas).
    pub(crate) fn batch(&self, sql: &str) -> Result<(), StoreError> {
        self.inner.execute_batch(sql).map_err(map_sqlite_err)
    }

    /// `PRAGMA wal_checkpoint(PASSIVE)`: copies what it can of the WAL into the database
    /// without waiting for, or blocking, anyone.
    pub(crate) fn checkpoint_passive(&self) -> Result<Checkpoint, StoreError> {
        self.checkpoint("PRAGMA wal_checkpoint(PASSIVE)")
    }

    /// `PRAGMA wal_checkpoint(RESTART)`: copies the whole WAL, then waits (up to
    /// `busy_timeout`) until no reader still reads from it, so the next writer starts it again
    /// from its beginning. It would also wait for writers: run it holding the write turn.
    pub(crate) fn checkpoint_restart(&self) -> Result<Checkpoint, StoreError> {
        self.checkpoint("PRAGMA wal_checkpoint(RESTART)")
    }

    fn checkpoint(&self, pragma: &str) -> Result<Checkpoint, StoreError> {
        self.inner
            .query_row(pragma, [], |row| {
                Ok(Checkpoint {
                    frames: row.get(1)?,
                    copied: row.get(2)?,
                })
            })
            .map_err(map_sqlite_err)
    }

    /// Whether the connection is outside any transaction (autocommit mode).
    pub(crate) fn is_autocommit(&self) -> bool {
        self.inner.is_autocommit()
    }

    /// The underlying connection, for diagnostics and this crate's tests; engines use the
    /// store's transactions.
    #[doc(hidden)]
    pub fn raw(&self) -> &Connection {
        &self.inner
    }

    /// Runs `stmt`; returns how many rows it changed. Rows it returns are stepped through (so
    /// every change is made) and dropped.
    pub fn execute(&mut self, stmt: Stmt<'_>) -> Result<u64, StoreError> {
        self.run(stmt, Keep::Nothing)?;
        Ok(self.inner.changes())
    }

    /// Runs `stmt`; returns its first row, if any, without stepping further.
    pub fn fetch_optional(&mut self, stmt: Stmt<'_>) -> Result<Option<SqliteRecord>, StoreError> {
        Ok(self.run(stmt, Keep::First)?.pop())
    }

    /// Runs `stmt`; returns every row.
    pub fn fetch_all(&mut self, stmt: Stmt<'_>) -> Result<Vec<SqliteRecord>, StoreError> {
        self.run(stmt, Keep::All)
    }

    /// Prepares (or takes from the cache), binds and steps `stmt`.
    fn run(&self, stmt: Stmt<'_>, keep: Keep) -> Result<Vec<SqliteRecord>, StoreError> {
        let (sql, args) = stmt.into_parts();
        let mut prepared = self.inner.prepare_cached(&sql).map_err(map_sqlite_err)?;
        bind(&mut prepared, &args)?;
        let columns: Arc<[String]> = prepared
            .column_names()
            .into_iter()
            .map(str::to_owned)
            .collect();
        let mut rows = prepared.raw_query();
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(map_sqlite_err)? {
            if keep == Keep::Nothing {
                continue;
            }
            let mut values = Vec::with_capacity(columns.len());
            for i in 0..columns.len() {
                values.push(row.get::<_, SqlValue>(i).map_err(map_sqlite_err)?);
            }
            out.push(SqliteRecord {
                columns: Arc::clone(&columns),
                values,
            });
            // A statement with RETURNING made all its changes at its first step.
            if keep == Keep::First {
                break;
            }
        }
        Ok(out)
    }
}

/// What a checkpoint found: frames in the WAL, and how many of them are in the database now.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Checkpoint {
    frames: i64,
    copied: i64,
}

impl Checkpoint {
    /// The WAL holds no frame: it started again and nothing was written since.
    pub(crate) fn wal_is_empty(self) -> bool {
        self.frames <= 0
    }

    /// Every frame is copied into the database.
    pub(crate) fn complete(self) -> bool {
        self.copied >= self.frames
    }
}

/// Which rows [`SqliteConn::run`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    Nothing,
    First,
    All,
}

/// Binds `args` the way sqlx's driver did: a `$n` (or `?n`) placeholder takes argument `n`; a
/// placeholder beyond the arguments is left `NULL`.
fn bind(stmt: &mut rusqlite::Statement<'_>, args: &[Arg<'_>]) -> Result<(), StoreError> {
    stmt.clear_bindings();
    let mut next = 0;
    for index in 1..=stmt.parameter_count() {
        let n = match stmt.parameter_name(index) {
            Some(name) => name
                .strip_prefix('$')
                .or_else(|| name.strip_prefix('?'))
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| {
                    StoreError::Corrupt(format!("unsupported SQL parameter name {name}"))
                })?,
            None => {
                next += 1;
                next
            }
        };
        let Some(arg) = n.checked_sub(1).and_then(|i| args.get(i)) else {
            continue;
        };
        let result = match arg {
            Arg::Text(text) => stmt.raw_bind_parameter(index, text.as_deref()),
            Arg::Json(text) => stmt.raw_bind_parameter(index, text.as_str()),
            Arg::Int(int) => stmt.raw_bind_parameter(index, int),
            Arg::Bool(flag) => stmt.raw_bind_parameter(index, i64::from(*flag)),
            Arg::Bytes(bytes) => stmt.raw_bind_parameter(index, bytes),
            Arg::Time(at) => stmt.raw_bind_parameter(index, at.map(format_time).transpose()?),
            Arg::Instant(at) | Arg::Twin(at) => stmt.raw_bind_parameter(index, at.map(nanos)),
            Arg::TextList(items) => {
                stmt.raw_bind_parameter(index, encode_strings(items.iter().copied())?)
            }
        };
        result.map_err(map_sqlite_err)?;
    }
    Ok(())
}

/// A timestamp as stored: RFC 3339 in UTC.
fn format_time(at: OffsetDateTime) -> Result<String, StoreError> {
    utc(at)
        .format(&Rfc3339)
        .map_err(|e| StoreError::Corrupt(format!("timestamp out of range: {e}")))
}

/// One row a statement returned: its values, read out before the statement is stepped again.
#[derive(Debug, Clone)]
pub struct SqliteRecord {
    columns: Arc<[String]>,
    values: Vec<SqlValue>,
}

impl SqliteRecord {
    /// The value of `column`.
    fn get(&self, column: &str) -> Result<ValueRef<'_>, sqlx::Error> {
        self.columns
            .iter()
            .position(|name| name == column)
            .and_then(|i| self.values.get(i))
            .map(ValueRef::from)
            .ok_or_else(|| sqlx::Error::ColumnNotFound(column.to_owned()))
    }

    /// A text column.
    pub(crate) fn text(&self, column: &str) -> Result<Option<String>, sqlx::Error> {
        match self.get(column)? {
            ValueRef::Null => Ok(None),
            ValueRef::Text(text) => std::str::from_utf8(text)
                .map(|s| Some(s.to_owned()))
                .map_err(|e| decode(column, e)),
            other => Err(mismatch(column, "text", other)),
        }
    }

    /// An integer column.
    pub(crate) fn int(&self, column: &str) -> Result<Option<i64>, sqlx::Error> {
        match self.get(column)? {
            ValueRef::Null => Ok(None),
            ValueRef::Integer(int) => Ok(Some(int)),
            other => Err(mismatch(column, "integer", other)),
        }
    }

    /// A boolean column (an integer, 0 is false).
    pub(crate) fn boolean(&self, column: &str) -> Result<Option<bool>, sqlx::Error> {
        Ok(self.int(column)?.map(|int| int != 0))
    }

    /// A binary column (text is taken as its bytes, as sqlx's driver did).
    pub(crate) fn bytes(&self, column: &str) -> Result<Option<Vec<u8>>, sqlx::Error> {
        match self.get(column)? {
            ValueRef::Null => Ok(None),
            ValueRef::Blob(bytes) | ValueRef::Text(bytes) => Ok(Some(bytes.to_vec())),
            other => Err(mismatch(column, "blob", other)),
        }
    }

    /// A stored timestamp: RFC 3339 text (what this store writes), SQLite's own
    /// `YYYY-MM-DD HH:MM:SS[.SSS]` (its date functions' output, taken as UTC), or Unix seconds.
    pub(crate) fn time(&self, column: &str) -> Result<Option<OffsetDateTime>, sqlx::Error> {
        let text = match self.get(column)? {
            ValueRef::Null => return Ok(None),
            ValueRef::Integer(secs) => {
                return OffsetDateTime::from_unix_timestamp(secs)
                    .map(Some)
                    .map_err(|e| decode(column, e));
            }
            ValueRef::Text(text) => std::str::from_utf8(text).map_err(|e| decode(column, e))?,
            other => return Err(mismatch(column, "timestamp", other)),
        };
        parse_time(text)
            .map(Some)
            .ok_or_else(|| decode(column, format!("invalid timestamp {text:?}")))
    }
}

/// The stored timestamp spellings [`SqliteRecord::time`] reads.
fn parse_time(text: &str) -> Option<OffsetDateTime> {
    if let Ok(at) = OffsetDateTime::parse(text, &Rfc3339) {
        return Some(at);
    }
    let with_fraction =
        format_description!("[year]-[month]-[day] [hour]:[minute]:[second].[subsecond]");
    let whole = format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    PrimitiveDateTime::parse(text, &with_fraction)
        .or_else(|_| PrimitiveDateTime::parse(text, &whole))
        .ok()
        .map(PrimitiveDateTime::assume_utc)
}

fn decode(column: &str, err: impl std::fmt::Display) -> sqlx::Error {
    sqlx::Error::Decode(format!("column {column}: {err}").into())
}

fn mismatch(column: &str, expected: &str, found: ValueRef<'_>) -> sqlx::Error {
    decode(
        column,
        format!("expected {expected}, found {}", found.data_type()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_read_every_spelling_sqlite_or_this_store_writes() {
        let at = OffsetDateTime::from_unix_timestamp(1_700_000_000).expect("instant");
        assert_eq!(parse_time("2023-11-14T22:13:20Z"), Some(at));
        assert_eq!(parse_time("2023-11-14T23:13:20+01:00"), Some(at));
        assert_eq!(parse_time("2023-11-14 22:13:20"), Some(at));
        assert_eq!(
            parse_time("2023-11-14 22:13:20.5"),
            Some(at + time::Duration::milliseconds(500))
        );
        assert_eq!(parse_time("yesterday"), None);
        let stored = format_time(at + time::Duration::nanoseconds(1_500)).expect("format");
        assert_eq!(stored, "2023-11-14T22:13:20.0000015Z");
        assert_eq!(
            parse_time(&stored),
            Some(at + time::Duration::nanoseconds(1_500))
        );
    }
}
