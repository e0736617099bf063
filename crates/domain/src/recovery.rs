//! Social recovery: the guardians a person names by email, and the requests that recover an
//! account whose second factors are lost. Recovery needs M of the person's N guardians to
//! approve through mailed single-use links, then a waiting period (during which the owner can
//! still cancel), and only then completes; afterwards the person owes a new factor.
//!
//! The secrets of a recovery (the initiator's secret, the owner's cancel token, each guardian's
//! approval token) are never in these values: the store keeps only their [`crate::SecretHash`],
//! handed to it beside the value, and finds records by it. The rules (who may start one, how
//! many approvals, how long to wait) are the engine's; these types only say what is stored.

use crate::{Email, GuardianId, RecoveryId, TenantId, UserId};
use time::OffsetDateTime;

/// A recovery guardian: somebody a person named, by email, to vouch for them if they lose their
/// second factors. A guardian needs no account of their own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guardian {
    /// `gdn_…`, time-ordered.
    pub id: GuardianId,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// Whose guardian.
    pub user_id: UserId,
    /// Where approval links are mailed; a person names an address once.
    pub email: Email,
    /// When the person named them.
    pub created_at: OffsetDateTime,
}

/// Where a recovery request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecoveryStatus {
    /// Collecting guardian approvals, until its `expires_at`.
    Pending,
    /// Enough approvals arrived; the waiting period runs until its `ready_at`.
    Waiting,
    /// The owner (or an administrator) called it off. Closed.
    Cancelled,
    /// The account was recovered. Closed.
    Completed,
    /// Not enough approvals before its `expires_at`. Closed.
    Expired,
}

impl RecoveryStatus {
    /// The storage spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Waiting => "waiting",
            Self::Cancelled => "cancelled",
            Self::Completed => "completed",
            Self::Expired => "expired",
        }
    }

    /// Parses [`RecoveryStatus::as_str`]'s spelling.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Pending,
            Self::Waiting,
            Self::Cancelled,
            Self::Completed,
            Self::Expired,
        ]
        .into_iter()
        .find(|status| status.as_str() == s)
    }

    /// Whether no transition leaves it (cancelled, completed, expired).
    #[must_use]
    pub fn is_closed(self) -> bool {
        !matches!(self, Self::Pending | Self::Waiting)
    }
}

/// One attempt to recover a person's account. At most one per person is open (pending or
/// waiting) at a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryRequest {
    /// `rcv_…`, time-ordered.
    pub id: RecoveryId,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// Whose account is being recovered.
    pub user_id: UserId,
    /// Where it stands.
    pub status: RecoveryStatus,
    /// How many distinct guardians must approve (M of N), at least one.
    pub approvals_needed: u32,
    /// When it was started.
    pub created_at: OffsetDateTime,
    /// Approvals must arrive before this; a pending request is dead from then on.
    pub expires_at: OffsetDateTime,
    /// Set when it enters [`RecoveryStatus::Waiting`]: when completion becomes possible.
    pub ready_at: Option<OffsetDateTime>,
    /// When it was cancelled, completed or expired; `None` while open.
    pub closed_at: Option<OffsetDateTime>,
    /// After completion, until the person enrols a new second factor.
    pub factor_due: bool,
}

impl RecoveryRequest {
    /// Whether it is still in progress at `now`: pending and unexpired, or waiting (the waiting
    /// period is not bounded by `expires_at`, which only limits the collection of approvals).
    #[must_use]
    pub fn is_open(&self, now: OffsetDateTime) -> bool {
        match self.status {
            RecoveryStatus::Pending => self.expires_at > now,
            RecoveryStatus::Waiting => true,
            RecoveryStatus::Cancelled | RecoveryStatus::Completed | RecoveryStatus::Expired => {
                false
            }
        }
    }
}

/// One guardian's say in one recovery request: a mailed single-use link, found by the hash of
/// its token. It keeps the guardian's id and address as they were when it was mailed, so
/// removing the guardian later does not undo or break a request in progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryApproval {
    /// The request it approves.
    pub request_id: RecoveryId,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// The guardian asked; one approval per guardian and request.
    pub guardian_id: GuardianId,
    /// Where the link was mailed.
    pub email: Email,
    /// The link works until then.
    pub expires_at: OffsetDateTime,
    /// When the guardian approved (the link is spent); `None` until then.
    pub approved_at: Option<OffsetDateTime>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::Duration;

    #[test]
    fn statuses_round_trip_and_unknown_ones_are_refused() {
        for status in [
            RecoveryStatus::Pending,
            RecoveryStatus::Waiting,
            RecoveryStatus::Cancelled,
            RecoveryStatus::Completed,
            RecoveryStatus::Expired,
        ] {
            assert_eq!(RecoveryStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(RecoveryStatus::parse("Pending"), None);
        assert_eq!(RecoveryStatus::parse("open"), None);
        assert!(!RecoveryStatus::Waiting.is_closed());
        assert!(RecoveryStatus::Expired.is_closed());
    }

    #[test]
    fn a_request_is_open_while_pending_and_unexpired_or_waiting() {
        let at = OffsetDateTime::UNIX_EPOCH + Duration::days(20_000);
        let pending = RecoveryRequest {
            id: RecoveryId::from_u128(1),
            tenant_id: TenantId::from_u128(2),
            user_id: UserId::from_u128(3),
            status: RecoveryStatus::Pending,
            approvals_needed: 2,
            created_at: at,
            expires_at: at + Duration::days(2),
            ready_at: None,
            closed_at: None,
            factor_due: false,
        };
        assert!(pending.is_open(at));
        assert!(pending.is_open(pending.expires_at - Duration::nanoseconds(1)));
        assert!(
            !pending.is_open(pending.expires_at),
            "expired at its expiry"
        );
        let waiting = RecoveryRequest {
            status: RecoveryStatus::Waiting,
            ready_at: Some(at + Duration::days(3)),
            ..pending.clone()
        };
        assert!(
            waiting.is_open(at + Duration::days(30)),
            "the expiry only bounds the approvals"
        );
        for status in [
            RecoveryStatus::Cancelled,
            RecoveryStatus::Completed,
            RecoveryStatus::Expired,
        ] {
            let closed = RecoveryRequest {
                status,
                closed_at: Some(at),
                ..pending.clone()
            };
            assert!(!closed.is_open(at), "{status:?}");
        }
    }
}
