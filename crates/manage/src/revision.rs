//! Revisions of mutable management resources (applications, webhooks, users), the optimistic
//! concurrency token behind `ETag` / `If-Match` (RFC 9110 §8.8.3, §13.1.1).
//!
//! A revision is the resource's `updated_at` to the nanosecond: every update sets it from the
//! clock, so two writes that both read revision `r` cannot both commit as "the change after
//! `r`" (the store's conditional update refuses the second, see each aggregate's
//! `update_*_if_unchanged`). The wire form is an opaque strong entity tag; callers must not
//! read meaning into it.

use time::OffsetDateTime;

/// The version of a resource a caller last saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Revision(i128);

impl Revision {
    /// The revision of a resource last changed at `updated_at`.
    pub fn of(updated_at: OffsetDateTime) -> Self {
        Self(updated_at.unix_timestamp_nanos())
    }

    /// The strong entity tag, quotes included: `"r1a2b3c"`.
    pub fn etag(self) -> String {
        format!("\"r{:x}\"", self.0)
    }

    /// Parses one entity tag as [`Revision::etag`] writes it. A weak tag (`W/"…"`) never matches
    /// for `If-Match` (RFC 9110 §13.1.1 uses the strong comparison), so it is refused here.
    pub fn parse_etag(raw: &str) -> Option<Self> {
        let inner = raw.trim().strip_prefix("\"r")?.strip_suffix('"')?;
        if inner.is_empty() || inner.len() > 32 || !inner.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        i128::from_str_radix(inner, 16).ok().map(Self)
    }
}

/// What an update demands of the stored resource before it applies (`If-Match`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Precondition {
    /// No `If-Match`: apply to whatever is stored (still refused if it changes underneath).
    #[default]
    None,
    /// `If-Match: *`: the resource must exist (it always does once found).
    Exists,
    /// `If-Match: "…", "…"`: the stored revision must be one of these. Tags that are not ours
    /// are kept as `None` entries: they match nothing, so the request fails with 412.
    OneOf(Vec<Option<Revision>>),
}

impl Precondition {
    /// Whether a resource at `current` satisfies the precondition.
    pub fn holds_for(&self, current: Revision) -> bool {
        match self {
            Self::None | Self::Exists => true,
            Self::OneOf(tags) => tags.contains(&Some(current)),
        }
    }

    /// [`ManageError::PreconditionFailed`](crate::ManageError::PreconditionFailed) unless the
    /// resource at `updated_at` satisfies the precondition.
    pub fn check(&self, updated_at: OffsetDateTime) -> Result<(), crate::ManageError> {
        if self.holds_for(Revision::of(updated_at)) {
            Ok(())
        } else {
            Err(crate::ManageError::PreconditionFailed)
        }
    }
}

/// The `updated_at` of a change made at `now` to a resource read at revision `read`: `now`, or
/// one microsecond (what PostgreSQL keeps) after `read` when the clock has not moved past it, so
/// every change is a new revision even under a clock that stands still or steps back.
pub(crate) fn next_update_time(read: OffsetDateTime, now: OffsetDateTime) -> OffsetDateTime {
    now.max(read + time::Duration::microseconds(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_always_moves_the_revision_forward() {
        let read = OffsetDateTime::from_unix_timestamp(1_790_000_000).unwrap();
        let later = read + time::Duration::milliseconds(3);
        let tick = time::Duration::microseconds(1);
        assert_eq!(next_update_time(read, later), later);
        assert_eq!(next_update_time(read, read), read + tick);
        let earlier = read - time::Duration::seconds(1);
        assert_eq!(next_update_time(read, earlier), read + tick);
    }

    #[test]
    fn etags_round_trip_and_foreign_tags_do_not_parse() {
        let at = OffsetDateTime::from_unix_timestamp_nanos(1_790_000_000_123_456_789).unwrap();
        let rev = Revision::of(at);
        assert_eq!(Revision::parse_etag(&rev.etag()), Some(rev));
        for foreign in [
            "", "\"\"", "W/\"r1\"", "\"x1\"", "r1", "\"r1", "\"rzz\"", "\"r-1\"",
        ] {
            assert_eq!(Revision::parse_etag(foreign), None, "{foreign}");
        }
        let huge = format!("\"r{}\"", "f".repeat(40));
        assert_eq!(Revision::parse_etag(&huge), None);
    }

    #[test]
    fn preconditions_hold_only_for_a_listed_revision() {
        let now = OffsetDateTime::from_unix_timestamp(1_790_000_000).unwrap();
        let later = now + time::Duration::nanoseconds(1);
        let current = Revision::of(now);
        assert!(Precondition::None.holds_for(current));
        assert!(Precondition::Exists.holds_for(current));
        assert!(Precondition::OneOf(vec![None, Some(current)]).holds_for(current));
        assert!(!Precondition::OneOf(vec![Some(Revision::of(later))]).holds_for(current));
        assert!(!Precondition::OneOf(vec![None]).holds_for(current));
        assert!(matches!(
            Precondition::OneOf(vec![]).check(now),
            Err(crate::ManageError::PreconditionFailed)
        ));
    }
}
