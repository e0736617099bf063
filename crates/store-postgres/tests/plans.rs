//! Every index answers its own lookup: an equality on all of an index's columns (within its
//! predicate, for a partial index), planned the way a pooled prepared statement is planned after
//! its fifth run (a generic plan), on a database that has never been analysed, is an index scan
//! with no filter.
//!
//! Why it matters: the session lookup by cookie hash was planned on `(tenant_id, user_id)` with a
//! filter on the hash, a tie PostgreSQL broke the wrong way on an unanalysed table; the generic
//! plan stayed cached while the table grew, so each lookup read every session of the tenant
//! (migration 20261127000049 explains the layout that removed such ties).

use sqlx::{AssertSqlSafe, PgConnection};
use svc_store_postgres::testing::{fresh_store, migrate_to, migrated_store, test_settings};

/// One index of the schema: its table, its columns with their types, and its predicate.
struct Index {
    table: String,
    name: String,
    columns: Vec<(String, String)>,
    predicate: Option<String>,
}

/// Every index of the public schema whose columns are plain columns (expression indexes are
/// looked up by their expression, which no generic rule can write).
#[allow(clippy::expect_used, clippy::panic)] // a test helper: failing loudly is the point
async fn indexes(conn: &mut PgConnection) -> Vec<Index> {
    let rows: Vec<(String, String, String, Option<String>)> = sqlx::query_as(
        "SELECT t.relname::text, i.relname::text, \
           (SELECT string_agg(a.attname || ':' || format_type(a.atttypid, a.atttypmod), ',' \
                   ORDER BY k.ord) \
              FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(att, ord) \
              JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.att), \
           pg_get_expr(x.indpred, x.indrelid) \
         FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid \
         JOIN pg_class t ON t.oid = x.indrelid \
         JOIN pg_namespace n ON n.oid = t.relnamespace \
         WHERE n.nspname = 'public' AND t.relname NOT LIKE '\\_sqlx%' \
           AND 0 <> ALL (x.indkey::int2[]) \
         ORDER BY 1, 2",
    )
    .fetch_all(&mut *conn)
    .await
    .expect("the catalogue");
    rows.into_iter()
        .map(|(table, name, columns, predicate)| Index {
            table,
            name,
            columns: columns
                .split(',')
                .map(|column| {
                    let (name, ty) = column.split_once(':').expect("name:type");
                    (name.to_owned(), ty.to_owned())
                })
                .collect(),
            predicate,
        })
        .collect()
}

/// The generic plan of the index's own lookup, one line per plan node.
#[allow(clippy::expect_used, clippy::panic)] // a test helper: failing loudly is the point
async fn generic_plan(conn: &mut PgConnection, index: &Index) -> String {
    let types: Vec<&str> = index.columns.iter().map(|(_, ty)| ty.as_str()).collect();
    let conditions: Vec<String> = index
        .columns
        .iter()
        .enumerate()
        .map(|(n, (column, _))| format!("{column} = ${}", n + 1))
        .collect();
    let predicate = index.predicate.as_deref().unwrap_or("true");
    // Names come from the catalogue of a database this test created.
    sqlx::raw_sql(AssertSqlSafe(format!(
        "PREPARE lookup ({}) AS SELECT * FROM {} WHERE {} AND ({predicate})",
        types.join(", "),
        index.table,
        conditions.join(" AND ")
    )))
    .execute(&mut *conn)
    .await
    .unwrap_or_else(|e| panic!("prepare the lookup of {}: {e}", index.name));
    let nulls = vec!["NULL"; index.columns.len()].join(", ");
    let lines: Vec<String> =
        sqlx::query_scalar(AssertSqlSafe(format!("EXPLAIN EXECUTE lookup ({nulls})")))
            .fetch_all(&mut *conn)
            .await
            .unwrap_or_else(|e| panic!("explain the lookup of {}: {e}", index.name));
    sqlx::raw_sql("DEALLOCATE lookup")
        .execute(&mut *conn)
        .await
        .expect("deallocate");
    lines.join("\n")
}

/// The lookups whose generic plan scans the table or filters rows an index did not select.
#[allow(clippy::expect_used, clippy::panic)] // a test helper: failing loudly is the point
async fn lookups_with_a_filter(conn: &mut PgConnection) -> (usize, Vec<String>) {
    sqlx::query("SET plan_cache_mode = force_generic_plan")
        .execute(&mut *conn)
        .await
        .expect("generic plans");
    let all = indexes(conn).await;
    let mut wrong = Vec::new();
    for index in &all {
        let plan = generic_plan(conn, index).await;
        if !plan.contains("Index") || plan.contains("Filter:") || plan.contains("Seq Scan") {
            wrong.push(format!("{}.{}:\n{plan}", index.table, index.name));
        }
    }
    (all.len(), wrong)
}

#[tokio::test]
async fn every_index_answers_its_own_lookup_without_a_filter() {
    let store = migrated_store().await.expect("store");
    let mut conn = store.pool().acquire().await.expect("connection");
    let (checked, wrong) = lookups_with_a_filter(&mut conn).await;
    // The schema has well over a hundred indexes; far fewer means the catalogue query broke.
    assert!(checked > 100, "only {checked} indexes found");
    assert!(
        wrong.is_empty(),
        "{} of {checked} lookups are planned with a filter:\n\n{}",
        wrong.len(),
        wrong.join("\n\n")
    );
}

/// The check sees the defect it exists for: on the schema before 20261127000049 the session
/// lookup by cookie hash is planned on the user index with a filter on the hash. (Should a later
/// PostgreSQL break the tie the other way, this fails and says so; the check above still holds.)
#[tokio::test]
async fn the_layout_before_the_fix_plans_the_session_lookup_with_a_filter() {
    let store = fresh_store(&test_settings()).await.expect("store");
    migrate_to(&store, 20261127000048)
        .await
        .expect("migrate to the version before");
    let mut conn = store.pool().acquire().await.expect("connection");
    let (_, wrong) = lookups_with_a_filter(&mut conn).await;
    let session = wrong
        .iter()
        .find(|lookup| lookup.starts_with("sessions.sessions_tenant_id_secret_hash_key:"))
        .unwrap_or_else(|| panic!("the old session lookup was planned well: {wrong:#?}"));
    assert!(
        session.contains("sessions_tenant_id_user_id_idx") && session.contains("secret_hash = $2"),
        "{session}"
    );
}
