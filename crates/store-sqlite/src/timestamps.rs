//! How timestamps are stored: RFC 3339 text in UTC (what sqlx's `time` support encodes and
//! decodes back to an identical `OffsetDateTime`).
//!
//! The text has a variable number of fractional digits (trailing zeros are trimmed, and a whole
//! second has none), so comparing or ordering the stored text is not chronological below one
//! second. Where a query must compare instants in SQL (audit-log time filters, expiry of
//! idempotency keys and assertion ids), the table has an integer `_ns` twin of the column, written
//! by [`nanos`] from the same value, and the query compares that; elsewhere repositories order by
//! timestamp in Rust after decoding.

use time::{OffsetDateTime, UtcOffset};

/// Normalises to UTC before binding: one spelling per instant.
pub(crate) fn utc(at: OffsetDateTime) -> OffsetDateTime {
    at.to_offset(UtcOffset::UTC)
}

/// The instant as nanoseconds since the Unix epoch, for the `_ns` comparison columns.
///
/// Exact (and so ordered exactly like the instants) from 1677-09-21 to 2262-04-11, the range of
/// an `i64`; instants outside it saturate to the nearest end, which keeps the order monotonic
/// (never reversed) for any value an engine could plausibly store.
pub(crate) fn nanos(at: OffsetDateTime) -> i64 {
    let nanos = at.unix_timestamp_nanos();
    i64::try_from(nanos).unwrap_or(if nanos < 0 { i64::MIN } else { i64::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::Duration;

    #[test]
    fn nanos_are_exact_in_range_and_saturate_outside() {
        let base = OffsetDateTime::UNIX_EPOCH + Duration::days(20_000);
        assert_eq!(nanos(OffsetDateTime::UNIX_EPOCH), 0);
        assert_eq!(
            nanos(base + Duration::nanoseconds(1)) - nanos(base),
            1,
            "nanosecond resolution"
        );
        let offset = base.to_offset(UtcOffset::from_hms(5, 30, 0).unwrap_or(UtcOffset::UTC));
        assert_eq!(
            nanos(offset),
            nanos(base),
            "an instant, whatever its offset"
        );
        let far_future = OffsetDateTime::UNIX_EPOCH + Duration::days(365 * 500);
        let far_past = OffsetDateTime::UNIX_EPOCH - Duration::days(365 * 500);
        assert_eq!(nanos(far_future), i64::MAX);
        assert_eq!(nanos(far_past), i64::MIN);
    }
}
