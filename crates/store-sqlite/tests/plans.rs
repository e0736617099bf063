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
    store.migrate().await.expect("migrate");
    for conn in hold(4).await {
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
