//! Invitations: an administrator asks a person, by email address, to join the tenant (with
//! tenant roles) or one of its organizations (with organization roles). The person follows the
//! mailed link (`/auth/join?token=…`), signs in or creates their account there, and accepts.
//!
//! An invitation is stored with its status (`pending`, `accepted`, `revoked`); "expired" is not
//! stored but derived ([`Invitation::state`]): a pending invitation whose deadline passed. The
//! link's secret is 256 random bits stored only as its SHA-256 ([`SecretHash`]), like every
//! other one-time link; a resend replaces it, so the older link stops working.
//!
//! This is not the older `invite: true` of tenant-user creation (an `invited` account waiting
//! for its password): an invitation creates nothing until it is accepted.

use crate::{Email, InvitationId, OrganizationId, RoleKey, SecretHash, TenantId, UserId};
use std::collections::BTreeSet;
use time::OffsetDateTime;

/// Prefix of an invitation link's secret (`join_…`); not `inv_`, which the ids use.
pub const INVITATION_TOKEN_PREFIX: &str = "join_";

/// What is stored about where an invitation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InvitationStatus {
    /// Waiting for the person (or expired, once its deadline passed).
    Pending,
    /// The person accepted it: final.
    Accepted,
    /// An administrator withdrew it: final.
    Revoked,
}

impl InvitationStatus {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Accepted => "accepted",
            Self::Revoked => "revoked",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(Self::Pending),
            "accepted" => Some(Self::Accepted),
            "revoked" => Some(Self::Revoked),
            _ => None,
        }
    }
}

/// Where an invitation stands at a given time: its status, with `Expired` derived from a pending
/// one's deadline. The API shows this one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InvitationState {
    /// Pending, before its deadline: the link works.
    Pending,
    /// Pending, at or after its deadline: the link is refused; a resend revives it.
    Expired,
    /// Accepted.
    Accepted,
    /// Revoked.
    Revoked,
}

impl InvitationState {
    /// Every state, in the order the API documents them.
    pub const ALL: [Self; 4] = [Self::Pending, Self::Expired, Self::Accepted, Self::Revoked];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Expired => "expired",
            Self::Accepted => "accepted",
            Self::Revoked => "revoked",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|state| state.as_str() == s)
    }
}

/// An invitation of a tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invitation {
    /// Durable id (`inv_…`).
    pub id: InvitationId,
    /// Owner.
    pub tenant_id: TenantId,
    /// The address invited, normalised as user addresses are; only a person with this address
    /// may accept.
    pub email: Email,
    /// The organization to join; `None` for the tenant itself.
    pub organization_id: Option<OrganizationId>,
    /// The roles given on acceptance: organization roles with an organization (never empty),
    /// tenant roles without (possibly none).
    pub roles: BTreeSet<RoleKey>,
    /// What is stored about where it stands (see [`Invitation::state`]).
    pub status: InvitationStatus,
    /// SHA-256 of the link's secret.
    pub token_hash: SecretHash,
    /// After this the link is refused (until a resend).
    pub expires_at: OffsetDateTime,
    /// Who invited, as the audit log writes actors (`client:app_…`, `user:usr_…`).
    pub invited_by: String,
    /// Who accepted it.
    pub accepted_by: Option<UserId>,
    /// When it was accepted.
    pub accepted_at: Option<OffsetDateTime>,
    /// Creation time.
    pub created_at: OffsetDateTime,
    /// Last change; the revision `ETag` names and changes are conditional on.
    pub updated_at: OffsetDateTime,
}

impl Invitation {
    /// Where it stands at `now`.
    pub fn state(&self, now: OffsetDateTime) -> InvitationState {
        match self.status {
            InvitationStatus::Pending if self.expires_at <= now => InvitationState::Expired,
            InvitationStatus::Pending => InvitationState::Pending,
            InvitationStatus::Accepted => InvitationState::Accepted,
            InvitationStatus::Revoked => InvitationState::Revoked,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Clock, ManualClock, SeededRandom};
    use time::Duration;

    #[test]
    fn expiry_is_derived_from_a_pending_invitations_deadline() {
        let clock = ManualClock::new(OffsetDateTime::UNIX_EPOCH + Duration::days(20_000));
        let rng = SeededRandom::new(3);
        let now = clock.now();
        let mut invitation = Invitation {
            id: InvitationId::generate(&clock, &rng),
            tenant_id: TenantId::generate(&clock, &rng),
            email: Email::parse("Ada@Example.com").unwrap(),
            organization_id: None,
            roles: BTreeSet::new(),
            status: InvitationStatus::Pending,
            token_hash: SecretHash::of("join_x"),
            expires_at: now + Duration::minutes(5),
            invited_by: "client:app_x".into(),
            accepted_by: None,
            accepted_at: None,
            created_at: now,
            updated_at: now,
        };
        assert_eq!(invitation.email.as_str(), "ada@example.com");
        assert_eq!(invitation.state(now), InvitationState::Pending);
        let deadline = invitation.expires_at;
        assert_eq!(invitation.state(deadline), InvitationState::Expired);
        invitation.status = InvitationStatus::Revoked;
        assert_eq!(invitation.state(deadline), InvitationState::Revoked);
        invitation.status = InvitationStatus::Accepted;
        assert_eq!(invitation.state(now), InvitationState::Accepted);
    }

    #[test]
    fn spellings_round_trip() {
        for status in [
            InvitationStatus::Pending,
            InvitationStatus::Accepted,
            InvitationStatus::Revoked,
        ] {
            assert_eq!(InvitationStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(InvitationStatus::parse("expired"), None, "never stored");
        for state in InvitationState::ALL {
            assert_eq!(InvitationState::parse(state.as_str()), Some(state));
        }
        assert_eq!(InvitationState::parse("Pending"), None);
    }
}
