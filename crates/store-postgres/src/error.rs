//! Translation of sqlx/PostgreSQL errors into [`StoreError`]: the one place that decides which
//! failures are conflicts, which are outages and which mean the stored data is bad.

use sqlx::error::DatabaseError;
use std::fmt;
use svc_store::StoreError;

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
        // Pool timeouts, IO (connection refused, reset), TLS, protocol: worth retrying later.
        // None of these carry the connection URL, so no password can leak through them.
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

fn map_database_error(db: Box<dyn DatabaseError>) -> StoreError {
    let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
    match code.as_str() {
        // unique_violation, foreign_key_violation, exclusion_violation: PostgreSQL names the rule.
        "23505" | "23503" | "23P01" => StoreError::Conflict {
            constraint: db.constraint().unwrap_or("unknown").to_owned(),
        },
        // check_violation, not_null_violation: the domain types should make these impossible,
        // so hitting one is a bug in what was written, never a reason to retry.
        "23514" | "23502" => {
            StoreError::Corrupt(format!("write refused by the schema: {}", db.message()))
        }
        // Everything else, including serialization failures (40001), deadlocks (40P01),
        // statement_timeout (57014) and an administrator's shutdown (57P01), is retryable.
        _ => StoreError::Unavailable(db.into_error()),
    }
}

/// A configuration problem found before talking to the database (a bad URL, an SSL mode that
/// contradicts `require_ssl`). Its text never contains the URL's password.
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
