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
//! - a whole unique key narrows them to one;
//! - a partial index holds a thousand rows: its predicate picks a small part of the table
//!   (the events not yet relayed, the deliveries due, one key per state). Given the whole
//!   table's count, SQLite scanned the table's primary key instead of a queue's index (the
//!   relay's "events not yet relayed, oldest first" read every relayed event on each poll, a
//!   cost that grew with the table: `bench/results/2026-11-27-sqlite-one-writer.md`).
//!
//! A partial index whose row still starts with the table's count (what versions before this
//! rule seeded; a real `ANALYZE` counts the rows the predicate keeps) is seeded again.
//!
//! `tests/plans.rs` checks that every index then answers its own lookup, and every partial
//! index a scan of its predicate in its own order.

use crate::error::map_err;
use sqlx::{Connection, SqlitePool};
use svc_store::StoreError;

/// Rows of the representative table.
const TABLE_ROWS: u64 = 1_000_000;
/// Rows of one tenant.
const TENANT_ROWS: u64 = 10_000;
/// Rows of a partial index.
const PARTIAL_ROWS: u64 = 1_000;
/// Rows left by an equality on the first column that is not `tenant_id`.
const FIRST_NARROWING: u64 = 10;

/// The `stat` column for an index on `columns` (`unique` when its whole key is, `partial` when
/// it has a predicate): the index's rows, then the rows an equality on each longer prefix
/// leaves on average.
fn stat(columns: &[String], unique: bool, partial: bool) -> String {
    let total = if partial { PARTIAL_ROWS } else { TABLE_ROWS };
    let mut out = total.to_string();
    let mut rows = total;
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
    // `stat1` is bound: the first figure earlier versions seeded for every index.
    let indexes: Vec<(String, String, bool, bool)> = sqlx::query_as(
        "SELECT t.name, i.name, i.\"unique\", i.partial \
         FROM sqlite_schema t, pragma_index_list(t.name) i \
         WHERE t.type = 'table' AND t.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' \
         AND NOT EXISTS (SELECT 1 FROM sqlite_stat1 s WHERE s.tbl = t.name AND s.idx = i.name \
             AND NOT (i.partial AND s.stat LIKE ? || ' %')) \
         ORDER BY t.name, i.name",
    )
    .bind(TABLE_ROWS.to_string())
    .fetch_all(&mut *tx)
    .await
    .map_err(map_err)?;
    for (table, index, unique, partial) in &indexes {
        // An expression column has no name; its position still counts.
        let columns: Vec<Option<String>> =
            sqlx::query_scalar("SELECT name FROM pragma_index_info(?) ORDER BY seqno")
                .bind(index)
                .fetch_all(&mut *tx)
                .await
                .map_err(map_err)?;
        let columns: Vec<String> = columns.into_iter().map(Option::unwrap_or_default).collect();
        sqlx::query("DELETE FROM sqlite_stat1 WHERE tbl = ? AND idx = ?")
            .bind(table)
            .bind(index)
            .execute(&mut *tx)
            .await
            .map_err(map_err)?;
        sqlx::query("INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)")
            .bind(table)
            .bind(index)
            .bind(stat(&columns, *unique, *partial))
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
            stat(&columns(&["tenant_id", "id"]), true, false),
            "1000000 10000 1"
        );
        assert_eq!(
            stat(&columns(&["user_id", "tenant_id"]), false, false),
            "1000000 10 10"
        );
        assert_eq!(
            stat(
                &columns(&["tenant_id", "user_id", "client_ip"]),
                false,
                false
            ),
            "1000000 10000 10 3"
        );
        assert_eq!(stat(&columns(&["expires_at"]), false, false), "1000000 10");
        assert_eq!(stat(&columns(&["hash"]), true, false), "1000000 1");
    }

    #[test]
    fn a_partial_index_holds_a_small_part_of_its_table() {
        assert_eq!(stat(&columns(&["id"]), false, true), "1000 10");
        assert_eq!(
            stat(&columns(&["tenant_id", "alg"]), true, true),
            "1000 1000 1"
        );
    }
}
