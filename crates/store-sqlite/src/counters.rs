//! Fixed-window counters in SQL, on one connection (always inside a transaction opened by
//! [`crate::tx`]).
//!
//! A hit is one upsert that either grows the count of an unexpired window or starts a new window
//! at 1, and returns the result, so no read-then-write can interleave with another instance's
//! hit. Window ends are compared on the `window_ends_at_ns` twin (see [`crate::timestamps`]).

use crate::error::{Columns, map_err};
use crate::timestamps::{nanos, utc};
use sqlx::SqliteConnection;
use sqlx::sqlite::SqliteRow;
use svc_store::rows::CounterRow;
use svc_store::{CounterState, StoreError};
use time::OffsetDateTime;

// In an UPDATE every right-hand side sees the row as it was, so the three CASEs agree.
const HIT: &str = "INSERT INTO counters (key, count, window_ends_at, window_ends_at_ns) \
     VALUES ($1, 1, $2, $3) ON CONFLICT (key) DO UPDATE SET \
     count = CASE WHEN counters.window_ends_at_ns > $4 THEN counters.count + 1 ELSE 1 END, \
     window_ends_at = CASE WHEN counters.window_ends_at_ns > $4 \
         THEN counters.window_ends_at ELSE excluded.window_ends_at END, \
     window_ends_at_ns = CASE WHEN counters.window_ends_at_ns > $4 \
         THEN counters.window_ends_at_ns ELSE excluded.window_ends_at_ns END \
     RETURNING key, count, window_ends_at";
const SELECT_LIVE: &str =
    "SELECT key, count, window_ends_at FROM counters WHERE key = $1 AND window_ends_at_ns > $2";
const CLEAR: &str = "DELETE FROM counters WHERE key = $1";

pub(crate) async fn hit(
    conn: &mut SqliteConnection,
    key: &str,
    now: OffsetDateTime,
    window: time::Duration,
) -> Result<CounterState, StoreError> {
    let ends = now + window;
    let row = sqlx::query(HIT)
        .bind(key)
        .bind(utc(ends))
        .bind(nanos(ends))
        .bind(nanos(now))
        .fetch_one(conn)
        .await
        .map_err(map_err)?;
    decode(&row)
}

pub(crate) async fn live(
    conn: &mut SqliteConnection,
    key: &str,
    now: OffsetDateTime,
) -> Result<Option<CounterState>, StoreError> {
    let row = sqlx::query(SELECT_LIVE)
        .bind(key)
        .bind(nanos(now))
        .fetch_optional(conn)
        .await
        .map_err(map_err)?;
    row.as_ref().map(decode).transpose()
}

pub(crate) async fn clear(conn: &mut SqliteConnection, key: &str) -> Result<(), StoreError> {
    sqlx::query(CLEAR)
        .bind(key)
        .execute(conn)
        .await
        .map_err(map_err)?;
    Ok(())
}

fn decode(row: &SqliteRow) -> Result<CounterState, StoreError> {
    let c = Columns::new(row, "counters");
    CounterRow {
        key: c.get("key")?,
        count: c.get("count")?,
        window_ends_at: c.get("window_ends_at")?,
    }
    .decode()
}
