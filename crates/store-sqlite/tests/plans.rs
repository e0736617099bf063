//! Every index answers its own lookup. An equality on all of an index's columns (within its
//! predicate, for a partial index) is checked with `EXPLAIN QUERY PLAN` on a freshly migrated
//! database, which holds only the seeded planner statistics (`planner.rs`). The plan must be a
//! search whose conditions cover every column of the lookup, or else every column of a unique
//! key (at most one row either way), never a key prefix such as `tenant_id` alone. The
//! PostgreSQL twin of this test, and migration 20261127000049, say why a lookup answered by
//! another key's index matters.

use sqlx::{AssertSqlSafe, SqliteConnection};
use std::collections::BTreeSet;
use svc_store_sqlite::testing::temp_store;

struct Index {
    table: String,
    name: String,
    columns: Vec<String>,
    unique: bool,
    primary: bool,
    predicate: Option<String>,
}

#[allow(clippy::expect_used)] // a test helper: failing loudly is the point
async fn indexes(conn: &mut SqliteConnection) -> Vec<Index> {
    let listed: Vec<(String, String, bool, String, bool)> = sqlx::query_as(
        "SELECT t.name, i.name, i.\"unique\", i.origin, i.partial \
         FROM sqlite_schema t, pragma_index_list(t.name) i \
         WHERE t.type = 'table' AND t.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' \
         AND t.name NOT LIKE '\\_sqlx%' ESCAPE '\\' ORDER BY t.name, i.name",
    )
    .fetch_all(&mut *conn)
    .await
    .expect("index list");
    let mut all = Vec::new();
    for (table, name, unique, origin, partial) in listed {
        // `name` is NULL for an expression column, which no generic lookup can name.
        let columns: Vec<Option<String>> =
            sqlx::query_scalar("SELECT name FROM pragma_index_info(?) ORDER BY seqno")
                .bind(&name)
                .fetch_all(&mut *conn)
                .await
                .expect("index columns");
        let Some(columns) = columns.into_iter().collect::<Option<Vec<_>>>() else {
            continue;
        };
        let predicate = if partial {
            let sql: String = sqlx::query_scalar("SELECT sql FROM sqlite_schema WHERE name = ?")
                .bind(&name)
                .fetch_one(&mut *conn)
                .await
                .expect("index sql");
            let (_, predicate) = sql.split_once(" WHERE ").expect("a partial index's WHERE");
            Some(predicate.to_owned())
        } else {
            None
        };
        all.push(Index {
            table,
            name,
            columns,
            unique,
            primary: origin == "pk",
            predicate,
        });
    }
    all
}

#[allow(clippy::expect_used, clippy::panic)] // a test helper: failing loudly is the point
async fn plan(conn: &mut SqliteConnection, index: &Index) -> String {
    let conditions: Vec<String> = index.columns.iter().map(|c| format!("{c} = ?")).collect();
    // Names come from the schema of a database this test created.
    let mut query = sqlx::query_as::<_, (i64, i64, i64, String)>(AssertSqlSafe(format!(
        "EXPLAIN QUERY PLAN SELECT * FROM {} WHERE {} AND ({})",
        index.table,
        conditions.join(" AND "),
        index.predicate.as_deref().unwrap_or("1")
    )));
    for _ in &index.columns {
        query = query.bind(None::<String>);
    }
    let details: Vec<String> = query
        .fetch_all(&mut *conn)
        .await
        .unwrap_or_else(|e| panic!("plan the lookup of {}: {e}", index.name))
        .into_iter()
        .map(|(_, _, _, detail)| detail)
        .collect();
    details.join(" | ")
}

/// Whether `plan` (one search of `index.table`) narrows the lookup of `index` to its rows.
fn searches_well(plan: &str, index: &Index, all: &[Index]) -> bool {
    let Some(rest) = plan.strip_prefix(&format!("SEARCH {} USING ", index.table)) else {
        return false;
    };
    let (used, conditions) = rest.split_once(" (").unwrap_or((rest, ""));
    let matched: BTreeSet<&str> = conditions
        .trim_end_matches(')')
        .split(" AND ")
        .filter_map(|c| c.strip_suffix("=?"))
        .collect();
    if index.columns.iter().all(|c| matched.contains(c.as_str())) {
        return true;
    }
    let chosen = all.iter().find(|other| {
        other.table == index.table
            && if used == "PRIMARY KEY" {
                other.primary
            } else {
                used.ends_with(&format!("INDEX {}", other.name))
            }
    });
    chosen.is_some_and(|key| {
        key.unique
            && key.predicate.is_none()
            && key.columns.iter().all(|c| matched.contains(c.as_str()))
    })
}

#[tokio::test]
async fn every_index_answers_its_own_lookup() {
    let store = temp_store().await.expect("store");
    let mut conn = store.pool().acquire().await.expect("connection");
    let all = indexes(&mut conn).await;
    // The schema has well over a hundred indexes; far fewer means the catalogue query broke.
    assert!(all.len() > 100, "only {} indexes found", all.len());
    let mut wrong = Vec::new();
    for index in &all {
        let plan = plan(&mut conn, index).await;
        if !searches_well(&plan, index, &all) {
            wrong.push(format!("{}.{}: {plan}", index.table, index.name));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} lookups are not narrowed by an index:\n{}",
        wrong.len(),
        all.len(),
        wrong.join("\n")
    );
}

/// A partial index answers a scan of its own predicate in its own order, the way the queues
/// read (events not yet relayed, oldest first; deliveries and logout notices by due time),
/// never a scan of the whole table's primary key that skips the rows outside the predicate.
#[tokio::test]
async fn every_partial_index_answers_a_scan_of_its_predicate() {
    let store = temp_store().await.expect("store");
    let mut conn = store.pool().acquire().await.expect("connection");
    let partial: Vec<Index> = indexes(&mut conn)
        .await
        .into_iter()
        .filter(|index| index.predicate.is_some())
        .collect();
    // The queues' indexes among them: their loss would leave nothing to check.
    for queue in [
        "events_unrelayed_idx",
        "webhook_deliveries_due_idx",
        "logout_notices_due_idx",
    ] {
        assert!(
            partial.iter().any(|index| index.name == queue),
            "{queue} is not a partial index any more"
        );
    }
    let mut wrong = Vec::new();
    for index in &partial {
        // Names and the predicate come from the schema of a database this test created.
        let sql = format!(
            "EXPLAIN QUERY PLAN SELECT * FROM {} WHERE {} ORDER BY {} LIMIT 100",
            index.table,
            index.predicate.as_deref().unwrap_or("1"),
            index.columns.join(", ")
        );
        let details: Vec<String> = sqlx::query_as::<_, (i64, i64, i64, String)>(AssertSqlSafe(sql))
            .fetch_all(&mut *conn)
            .await
            .unwrap_or_else(|e| panic!("plan the scan of {}: {e}", index.name))
            .into_iter()
            .map(|(_, _, _, detail)| detail)
            .collect();
        let plan = details.join(" | ");
        // The index itself, scanned or searched (a predicate `x IS NOT NULL` on its column is
        // searched as `x > NULL`), and nothing else.
        let named = format!("INDEX {}", index.name);
        let uses_it = plan.ends_with(&named) || plan.contains(&format!("{named} ("));
        if !(uses_it && details.len() == 1) {
            wrong.push(format!("{}.{}: {plan}", index.table, index.name));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} partial indexes do not answer their scan:\n{}",
        wrong.len(),
        partial.len(),
        wrong.join("\n")
    );
}

/// A partial index's row that still holds the whole table's count, as earlier versions seeded
/// it, is seeded again by the next migration; statistics a real `ANALYZE` wrote stay.
#[tokio::test]
async fn a_migration_reseeds_partial_indexes_seeded_with_the_table_count() {
    use svc_store::Store;
    let store = temp_store().await.expect("store");
    let stat = |index: &'static str| {
        let pool = store.pool().clone();
        async move {
            sqlx::query_scalar::<_, String>("SELECT stat FROM sqlite_stat1 WHERE idx = ?")
                .bind(index)
                .fetch_one(&pool)
                .await
                .expect("stat")
        }
    };
    assert_eq!(stat("events_unrelayed_idx").await, "1000 10");
    for (index, value) in [
        ("events_unrelayed_idx", "1000000 10"),
        ("webhook_deliveries_due_idx", "17 2"),
    ] {
        sqlx::query("UPDATE sqlite_stat1 SET stat = ? WHERE idx = ?")
            .bind(value)
            .bind(index)
            .execute(store.pool())
            .await
            .expect("update");
    }
    store.migrate().await.expect("migrate again");
    assert_eq!(
        stat("events_unrelayed_idx").await,
        "1000 10",
        "seeded again"
    );
    assert_eq!(stat("webhook_deliveries_due_idx").await, "17 2", "kept");
}

/// The seeded statistics reach every connection transactions run on, including those that had
/// loaded the schema before the migration: each plans the lookup of consents by pairwise
/// subject on its index (without statistics, SQLite walks the tenant through the primary key).
#[tokio::test]
async fn every_pooled_connection_plans_with_the_seeded_statistics() {
    use svc_store::Store;
    let settings = svc_store_sqlite::testing::test_settings();
    let store = svc_store_sqlite::testing::temp_store_unmigrated(&settings)
        .await
        .expect("store");
    let hold = |n: usize| {
        let store = &store;
        async move {
            let mut held = Vec::new();
            for _ in 0..n {
                let conn = store.connection().await.expect("connection");
                conn.raw()
                    .query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))
                    .expect("schema loaded");
                held.push(conn);
            }
            held
        }
    };
    let before = hold(4).await;
    drop(before);
    let writer = store.write_connection().await.expect("writer");
    writer
        .raw()
        .query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))
        .expect("schema loaded");
    drop(writer);
    store.migrate().await.expect("migrate");
    let mut conns = hold(4).await;
    conns.push(store.write_connection().await.expect("writer"));
    for conn in conns {
        let mut explain = conn
            .raw()
            .prepare(
                "EXPLAIN QUERY PLAN SELECT * FROM consents \
                 WHERE tenant_id = ?1 AND client_id = ?2 AND subject = ?3",
            )
            .expect("prepare");
        let plan: Vec<String> = explain
            .query_map(["t", "c", "s"], |row| row.get::<_, String>(3))
            .expect("plan")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert_eq!(
            plan,
            [
                "SEARCH consents USING INDEX consents_subject_idx (subject=? AND tenant_id=? AND client_id=?)"
            ],
        );
    }
}
