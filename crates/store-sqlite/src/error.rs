//! Translation of SQLite errors (from the statements' connections, and from sqlx's driver for
//! the migrations) into [`StoreError`]: the one place that decides which failures are
//! conflicts, which are outages and which mean the stored data is bad.

use sqlx::error::{DatabaseError, ErrorKind};
use std::fmt;
use svc_store::StoreError;

/// SQLite's extended result code for a PRIMARY KEY violation (`SQLITE_CONSTRAINT_PRIMARYKEY`).
const SQLITE_CONSTRAINT_PRIMARYKEY: &str = "1555";

/// What [`constraint_name`] reports for a failed foreign key, which SQLite does not name.
const FOREIGN_KEY: &str = svc_store_sql::naming::UNNAMED_FOREIGN_KEY;

/// Maps any sqlx error from this backend onto the port's error type.
pub(crate) fn map_err(err: sqlx::Error) -> StoreError {
    match err {
        sqlx::Error::Database(db) => map_database_error(db),
        sqlx::Error::RowNotFound => StoreError::NotFound,
        // A row that does not decode means the stored data, not the connection, is wrong.
        sqlx::Error::ColumnDecode { .. }
        | sqlx::Error::Decode(_)
        | sqlx::Error::ColumnNotFound(_)
        | sqlx::Error::ColumnIndexOutOfBounds { .. }
        | sqlx::Error::TypeNotFound { .. } => StoreError::Corrupt(err.to_string()),
        // Pool timeouts, IO, a crashed worker thread, configuration: worth retrying later.
        other => StoreError::Unavailable(Box::new(other)),
    }
}

/// Maps an error of the migrator (whose SQL errors go through [`map_err`]).
pub(crate) fn map_migrate_err(err: sqlx::migrate::MigrateError) -> StoreError {
    match err {
        sqlx::migrate::MigrateError::Execute(e) => map_err(e),
        other => StoreError::Unavailable(Box::new(other)),
    }
}

/// Maps an error of the statements' connections onto the port's error type.
pub(crate) fn map_sqlite_err(err: rusqlite::Error) -> StoreError {
    use rusqlite::ffi;
    let rusqlite::Error::SqliteFailure(failure, message) = &err else {
        return match err {
            rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::InvalidColumnType(..)
            | rusqlite::Error::IntegralValueOutOfRange(..)
            | rusqlite::Error::Utf8Error(..) => StoreError::Corrupt(err.to_string()),
            other => StoreError::Unavailable(Box::new(other)),
        };
    };
    let message = message.as_deref().unwrap_or("");
    match failure.extended_code {
        ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => StoreError::Conflict {
            constraint: constraint_name(
                message,
                failure.extended_code == ffi::SQLITE_CONSTRAINT_PRIMARYKEY,
                false,
            ),
        },
        ffi::SQLITE_CONSTRAINT_FOREIGNKEY => StoreError::Conflict {
            constraint: constraint_name(message, false, true),
        },
        // The domain types should make these impossible, so hitting one is a bug in what was
        // written, never a reason to retry.
        ffi::SQLITE_CONSTRAINT_CHECK | ffi::SQLITE_CONSTRAINT_NOTNULL => {
            StoreError::Corrupt(format!("write refused by the schema: {message}"))
        }
        // SQLITE_BUSY after busy_timeout, IO errors, a full disk: the database failed.
        _ => StoreError::Unavailable(Box::new(err)),
    }
}

fn map_database_error(db: Box<dyn DatabaseError>) -> StoreError {
    match db.kind() {
        ErrorKind::UniqueViolation | ErrorKind::ForeignKeyViolation => StoreError::Conflict {
            constraint: constraint_name(
                db.message(),
                db.code().as_deref() == Some(SQLITE_CONSTRAINT_PRIMARYKEY),
                db.kind() == ErrorKind::ForeignKeyViolation,
            ),
        },
        // The domain types should make these impossible, so hitting one is a bug in what was
        // written, never a reason to retry.
        ErrorKind::CheckViolation | ErrorKind::NotNullViolation => {
            StoreError::Corrupt(format!("write refused by the schema: {}", db.message()))
        }
        // SQLITE_BUSY after busy_timeout, IO errors, a full disk: the database failed.
        _ => StoreError::Unavailable(db.into_error()),
    }
}

/// Derives a PostgreSQL-style constraint name from SQLite's message, which names columns rather
/// than constraints (`UNIQUE constraint failed: tenants.slug` → `tenants_slug_key`), so both
/// backends report the same name for the same rule.
fn constraint_name(message: &str, primary: bool, foreign_key: bool) -> String {
    let fallback = if foreign_key {
        FOREIGN_KEY
    } else if primary {
        "primary_key"
    } else {
        "unique"
    };
    let Some((_, detail)) = message.split_once(": ") else {
        // SQLite does not say which foreign key failed.
        return fallback.to_owned();
    };
    // A unique index on expressions is reported by its own name: `index 'name'`.
    if let Some(index) = detail
        .strip_prefix("index '")
        .and_then(|s| s.strip_suffix('\''))
    {
        return index.to_owned();
    }
    let mut table = None;
    let mut columns = Vec::new();
    for qualified in detail.split(", ") {
        if let Some((t, column)) = qualified.trim().split_once('.') {
            table.get_or_insert(t);
            columns.push(column);
        }
    }
    match table {
        Some(table) if primary => format!("{table}_pkey"),
        Some(table) => format!("{table}_{}_key", columns.join("_")),
        None => fallback.to_owned(),
    }
}

/// A configuration problem found before talking to the database (a bad URL or path).
#[derive(Debug)]
pub(crate) struct ConfigError(pub(crate) String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// A configuration error as the port reports it: the database cannot be used as configured.
pub(crate) fn config_error(message: impl Into<String>) -> StoreError {
    StoreError::Unavailable(Box::new(ConfigError(message.into())))
}
