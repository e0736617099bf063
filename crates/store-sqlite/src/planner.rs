//! Planner statistics for indexes SQLite has never analysed.
//!
//! Without `sqlite_stat1`, SQLite assumes that an equality on an index's first column already
//! narrows a table to about ten rows. Every key here leads with `tenant_id`, the one column that
//! narrows least, and the tables are `WITHOUT ROWID`, so their primary key is the table itself.
//! Taken together, those defaults make SQLite answer "the consents of a pairwise subject" or "a
//! person's refresh families" by walking the whole tenant through the primary key's
//! `tenant_id` prefix instead of searching the index made for the lookup.
//!
//! SQLite's documentation allows an application to write `sqlite_stat1` itself, so it can
//! describe the data it expects. [`seed`] does that after each migration, and only for an index
//! that has no row yet, so statistics from a real `ANALYZE` (or `PRAGMA optimize`) are kept.
//! The rows describe a representative multi-tenant database:
//! - a million rows;
//! - a tenant holds 10,000 of them;
//! - the first other column narrows them to ten, and each further one to a third of that;
//! - a whole unique key narrows them to one.
//!
//! `tests/plans.rs` checks that every index then answers its own lookup.

use crate::error::map_err;
use sqlx::{Connection, SqlitePool};
use svc_store::StoreError;

/// Rows of the representative table.
const TABLE_ROWS: u64 = 1_000_000;
/// Rows of one tenant.
const TENANT_ROWS: u64 = 10_000;
/// Rows left by an equality on the first column that is not `tenant_id`.
const FIRST_NARROWING: u64 = 10;

/// The `stat` column for an index on `columns` (`unique` when its whole key is): the table's
/// rows, then the rows an equality on each longer prefix leaves on average.
fn stat(columns: &[String], unique: bool) -> String {
    let mut out = TABLE_ROWS.to_string();
    let mut rows = TABLE_ROWS;
    for (n, column) in columns.iter().enumerate() {
        rows = if unique && n + 1 == columns.len() {
            1
        } else if column == "tenant_id" {
            rows.min(TENANT_ROWS)
        } else if rows > FIRST_NARROWING {
            FIRST_NARROWING
        } else {
            (rows / 3).max(1)
        };
        out.push(' ');
        out.push_str(&rows.to_string());
    }
    out
}

/// Writes `sqlite_stat1` rows for every index of the schema that has none, then reloads the
/// statistics. Runs in one write transaction.
pub(crate) async fn seed(pool: &SqlitePool) -> Result<(), StoreError> {
    let mut conn = pool.acquire().await.map_err(map_err)?;
    // `sqlite_stat1` cannot be created by name; analysing the (index-less) schema table creates
    // it, empty, and costs nothing.
    sqlx::raw_sql("ANALYZE sqlite_schema")
        .execute(&mut *conn)
        .await
        .map_err(map_err)?;
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await.map_err(map_err)?;
    let indexes: Vec<(String, String, bool)> = sqlx::query_as(
        "SELECT t.name, i.name, i.\"unique\" FROM sqlite_schema t, pragma_index_list(t.name) i \
         WHERE t.type = 'table' AND t.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' \
         AND NOT EXISTS (SELECT 1 FROM sqlite_stat1 s WHERE s.tbl = t.name AND s.idx = i.name) \
         ORDER BY t.name, i.name",
    )
    .fetch_all(&mut *tx)
    .await
    .map_err(map_err)?;
    for (table, index, unique) in &indexes {
        // An expression column has no name; its position still counts.
        let columns: Vec<Option<String>> =
            sqlx::query_scalar("SELECT name FROM pragma_index_info(?) ORDER BY seqno")
                .bind(index)
                .fetch_all(&mut *tx)
                .await
                .map_err(map_err)?;
        let columns: Vec<String> = columns.into_iter().map(Option::unwrap_or_default).collect();
        sqlx::query("INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)")
            .bind(table)
            .bind(index)
            .bind(stat(&columns, *unique))
            .execute(&mut *tx)
            .await
            .map_err(map_err)?;
    }
    tx.commit().await.map_err(map_err)?;
    // Loads the new rows into this connection; the others load them with the schema, which the
    // migrations just changed.
    sqlx::raw_sql("ANALYZE sqlite_schema")
        .execute(&mut *conn)
        .await
        .map_err(map_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::stat;

    fn columns(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn a_tenant_narrows_least_and_a_whole_unique_key_to_one_row() {
        assert_eq!(
            stat(&columns(&["tenant_id", "id"]), true),
            "1000000 10000 1"
        );
        assert_eq!(
            stat(&columns(&["user_id", "tenant_id"]), false),
            "1000000 10 10"
        );
        assert_eq!(
            stat(&columns(&["tenant_id", "user_id", "client_ip"]), false),
            "1000000 10000 10 3"
        );
        assert_eq!(stat(&columns(&["expires_at"]), false), "1000000 10");
        assert_eq!(stat(&columns(&["hash"]), true), "1000000 1");
    }
}
