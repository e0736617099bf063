//! Fixed-window counters in SQL, on one connection (always inside a transaction opened by
//! [`crate::tx`]).
//!
//! A hit is one upsert that either grows the count of an unexpired window or starts a new window
//! at 1, and returns the result, so no read-then-write can interleave with another instance's
//! hit: concurrent hits on one key queue on its row lock (or on the unique index for the first
//! insert) and each sees the count the previous one left.

use crate::error::{Columns, map_err};
use sqlx::PgConnection;
use sqlx::postgres::PgRow;
use svc_store::rows::CounterRow;
use svc_store::{CounterState, StoreError};
use time::OffsetDateTime;

// In an UPDATE every right-hand side sees the row as it was, so the two CASEs agree.
const HIT: &str = "INSERT INTO counters (key, count, window_ends_at) \
     VALUES ($1, 1, $2) ON CONFLICT (key) DO UPDATE SET \
     count = CASE WHEN counters.window_ends_at > $3 THEN counters.count + 1 ELSE 1 END, \
     window_ends_at = CASE WHEN counters.window_ends_at > $3 \
         THEN counters.window_ends_at ELSE excluded.window_ends_at END \
     RETURNING key, count, window_ends_at";
const SELECT_LIVE: &str =
    "SELECT key, count, window_ends_at FROM counters WHERE key = $1 AND window_ends_at > $2";
const CLEAR: &str = "DELETE FROM counters WHERE key = $1";

pub(crate) async fn hit(
    conn: &mut PgConnection,
    key: &str,
    now: OffsetDateTime,
    window: time::Duration,
) -> Result<CounterState, StoreError> {
    let ends = now + window;
    let row = sqlx::query(HIT)
        .bind(key)
        .bind(ends)
        .bind(now)
        .fetch_one(conn)
        .await
        .map_err(map_err)?;
    decode(&row)
}

pub(crate) async fn live(
    conn: &mut PgConnection,
    key: &str,
    now: OffsetDateTime,
) -> Result<Option<CounterState>, StoreError> {
    let row = sqlx::query(SELECT_LIVE)
        .bind(key)
        .bind(now)
        .fetch_optional(conn)
        .await
        .map_err(map_err)?;
    row.as_ref().map(decode).transpose()
}

pub(crate) async fn clear(conn: &mut PgConnection, key: &str) -> Result<(), StoreError> {
    sqlx::query(CLEAR)
        .bind(key)
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(())
}

fn decode(row: &PgRow) -> Result<CounterState, StoreError> {
    let c = Columns::new(row, "counters");
    CounterRow {
        key: c.get("key")?,
        count: c.get("count")?,
        window_ends_at: c.get("window_ends_at")?,
    }
    .decode()
}
