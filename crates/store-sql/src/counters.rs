//! Fixed-window counters (the `CounterWrites` port for [`SqlTx`]) and their row form.
//!
//! A hit is one upsert that either grows the count of an unexpired window or starts a new window
//! at 1, and returns the result, so no read-then-write can interleave with another instance's
//! hit. On PostgreSQL concurrent hits on one key queue on its row lock (or on the unique index for
//! the first insert) and each sees the count the previous one left; on SQLite writers are
//! serialised. Window ends are compared on `window_ends_at` itself on PostgreSQL and on its
//! `window_ends_at_ns` integer twin on SQLite (whose stored text does not order chronologically
//! below one second), so those statements are [`PerDialect`].

use crate::dialect::{Dialect, PerDialect};
use crate::record::Record;
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_store::{CounterState, CounterWrites, StoreError};
use time::OffsetDateTime;

// In an UPDATE every right-hand side sees the row as it was, so the CASEs agree (SQLite has a
// third one, keeping the twin in step).
const HIT: PerDialect = PerDialect {
    sqlite: "INSERT INTO counters (key, count, window_ends_at, window_ends_at_ns) \
     VALUES ($1, 1, $2, $3) ON CONFLICT (key) DO UPDATE SET \
     count = CASE WHEN counters.window_ends_at_ns > $4 THEN counters.count + 1 ELSE 1 END, \
     window_ends_at = CASE WHEN counters.window_ends_at_ns > $4 \
         THEN counters.window_ends_at ELSE excluded.window_ends_at END, \
     window_ends_at_ns = CASE WHEN counters.window_ends_at_ns > $4 \
         THEN counters.window_ends_at_ns ELSE excluded.window_ends_at_ns END \
     RETURNING key, count, window_ends_at",
    postgres: "INSERT INTO counters (key, count, window_ends_at) \
     VALUES ($1, 1, $2) ON CONFLICT (key) DO UPDATE SET \
     count = CASE WHEN counters.window_ends_at > $3 THEN counters.count + 1 ELSE 1 END, \
     window_ends_at = CASE WHEN counters.window_ends_at > $3 \
         THEN counters.window_ends_at ELSE excluded.window_ends_at END \
     RETURNING key, count, window_ends_at",
};
const SELECT_LIVE: PerDialect = PerDialect {
    sqlite: "SELECT key, count, window_ends_at FROM counters \
     WHERE key = $1 AND window_ends_at_ns > $2",
    postgres: "SELECT key, count, window_ends_at FROM counters \
     WHERE key = $1 AND window_ends_at > $2",
};
const CLEAR: &str = "DELETE FROM counters WHERE key = $1";

#[async_trait]
impl<D: Dialect> CounterWrites for SqlTx<D> {
    async fn hit_counter(
        &mut self,
        key: &str,
        now: OffsetDateTime,
        window: time::Duration,
    ) -> Result<CounterState, StoreError> {
        let ends = now + window;
        let row = Stmt::new(HIT.pick::<D>())
            .bind(key)
            .bind(ends)
            .bind_twin(ends)
            .bind_instant(now)
            .fetch_one::<D>(self.conn())
            .await?;
        decode::<D>(&row)
    }

    async fn counter(
        &mut self,
        key: &str,
        now: OffsetDateTime,
    ) -> Result<Option<CounterState>, StoreError> {
        Stmt::new(SELECT_LIVE.pick::<D>())
            .bind(key)
            .bind_instant(now)
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn clear_counter(&mut self, key: &str) -> Result<(), StoreError> {
        Stmt::new(CLEAR).bind(key).execute::<D>(self.conn()).await?;
        Ok(())
    }
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<CounterState, StoreError> {
    let c = Columns::<D>::new(row, "counters");
    CounterRow {
        key: c.get("key")?,
        count: c.get("count")?,
        window_ends_at: c.get("window_ends_at")?,
    }
    .decode()
}

/// A `counters` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct CounterRow {
    /// `key`.
    pub key: String,
    /// `count`.
    pub count: i64,
    /// `window_ends_at`.
    pub window_ends_at: OffsetDateTime,
}

impl CounterRow {
    /// The counter state this row stores.
    pub(crate) fn decode(self) -> Result<CounterState, StoreError> {
        let r = Record {
            table: "counters",
            name: &self.key,
        };
        Ok(CounterState {
            count: u32::try_from(self.count).map_err(|e| r.corrupt("count", &self.count, &e))?,
            window_ends_at: self.window_ends_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_row_decodes_and_a_bad_count_is_named() {
        let good = CounterRow {
            key: "k".into(),
            count: 1,
            window_ends_at: OffsetDateTime::UNIX_EPOCH,
        };
        assert_eq!(good.clone().decode().unwrap().count, 1);
        let mut bad = good;
        bad.count = -1;
        match bad.decode() {
            Err(StoreError::Corrupt(message)) => {
                assert!(message.contains("counters.count"), "{message}")
            }
            other => panic!("expected Corrupt, got {other:?}"),
        }
    }
}
