//! Delegations (issue 19 item 2): a person lets a registered agent act for them, within
//! bounds they chose on the hosted consent page — which permissions, at which APIs, until when.
//!
//! A delegation only narrows: what the agent obtains for the person is within the delegation,
//! within the agent's own `allowed_scopes`/`allowed_resources`, and within what the person
//! holds at that API now (their roles). It ends at `expires_at` or when the person (or an
//! administrator) revokes it; a revoked delegation is kept, so the audit log and the `act`
//! claims of tokens already issued keep naming something.

use crate::{AgentId, DelegationId, EventData, ScopeSet, TenantId, UserId};
use time::OffsetDateTime;

/// Longest a person may delegate for at once, in days.
pub const MAX_DELEGATION_LIFETIME_DAYS: i64 = 365;

/// A person's grant to an agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Delegation {
    /// Durable id (`dlg_…`).
    pub id: DelegationId,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// Who delegates.
    pub user_id: UserId,
    /// Who may act for them.
    pub agent_id: AgentId,
    /// The permissions the agent may use for the person (API permission names).
    pub scopes: ScopeSet,
    /// The APIs (their identifiers) it may use them at.
    pub resources: Vec<String>,
    /// The RAR details (RFC 9396) the person approved, of the agent's registered types; the
    /// agent's tokens on it carry them (or fewer).
    pub authorization_details: Option<crate::AuthorizationDetails>,
    /// When it ends by itself.
    pub expires_at: OffsetDateTime,
    /// Whether the person approves each use (a token for them) when the agent asks, through
    /// the backchannel approval (`BackchannelRequester::Agent`), instead of once on the consent page.
    pub per_use_approval: bool,
    /// When the person granted it.
    pub created_at: OffsetDateTime,
    /// When it was revoked, if it was.
    pub revoked_at: Option<OffsetDateTime>,
}

impl Delegation {
    /// Whether the agent may act on it at `now`.
    pub fn is_live(&self, now: OffsetDateTime) -> bool {
        self.revoked_at.is_none() && self.expires_at > now
    }

    /// The `admin.delegation.revoked` payload of this delegation, revoked by `actor`
    /// (`user:usr_…` for the person, the administrator's audit spelling otherwise).
    pub fn revoked_event(&self, actor: String) -> EventData {
        EventData::Delegation {
            delegation_id: self.id.clone(),
            user_id: self.user_id.clone(),
            agent_id: self.agent_id.clone(),
            scopes: self.scopes.iter().map(|s| s.as_str().to_owned()).collect(),
            resources: self.resources.clone(),
            actor,
        }
    }

    /// Whether it covers `scope` at `resource`.
    pub fn covers(&self, resource: &str, scope: &str) -> bool {
        self.resources.iter().any(|r| r == resource) && self.scopes.contains(scope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ManualClock, SeededRandom};
    use time::Duration;

    fn delegation(now: OffsetDateTime) -> Delegation {
        let clock = ManualClock::new(now);
        let rng = SeededRandom::new(1);
        Delegation {
            id: DelegationId::generate(&clock, &rng),
            tenant_id: TenantId::generate(&clock, &rng),
            user_id: UserId::generate(&clock, &rng),
            agent_id: AgentId::generate(&clock, &rng),
            scopes: ScopeSet::parse("bookings:read").unwrap(),
            resources: vec!["https://api.example.com/bookings".into()],
            authorization_details: None,
            expires_at: now + Duration::days(1),
            per_use_approval: false,
            created_at: now,
            revoked_at: None,
        }
    }

    #[test]
    fn live_until_it_expires_or_is_revoked() {
        let now = OffsetDateTime::UNIX_EPOCH + Duration::days(10_000);
        let d = delegation(now);
        assert!(d.is_live(now));
        assert!(!d.is_live(now + Duration::days(1)));
        let revoked = Delegation {
            revoked_at: Some(now),
            ..d
        };
        assert!(!revoked.is_live(now));
    }

    #[test]
    fn covers_only_its_scopes_at_its_resources() {
        let now = OffsetDateTime::UNIX_EPOCH;
        let d = delegation(now);
        assert!(d.covers("https://api.example.com/bookings", "bookings:read"));
        assert!(!d.covers("https://api.example.com/bookings", "bookings:write"));
        assert!(!d.covers("https://api.example.com/hotels", "bookings:read"));
    }
}
