//! How timestamps are stored: RFC 3339 text in UTC (what sqlx's `time` support encodes and
//! decodes back to an identical `OffsetDateTime`).
//!
//! The text has a variable number of fractional digits (trailing zeros are trimmed, and a whole
//! second has none), so comparing or ordering the stored text is not chronological below one
//! second; repositories order by timestamp in Rust after decoding.

use time::{OffsetDateTime, UtcOffset};

/// Normalises to UTC before binding: one spelling per instant.
pub(crate) fn utc(at: OffsetDateTime) -> OffsetDateTime {
    at.to_offset(UtcOffset::UTC)
}
