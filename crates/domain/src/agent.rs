//! Agents (issue 19): software that acts — for itself or for people who delegate to it — and
//! proves who it is with a key it registered, never a shared secret. An agent belongs to a
//! tenant and has an owner (a person of the tenant, or an application), a public key set, the
//! scopes and API resources it may ever be granted, free metadata, and a status.
//!
//! Status moves `active` ⇄ `suspended`, and either → `revoked`, which is final: a revoked
//! agent's tokens stop working and it can never be reactivated (a new agent is registered
//! instead), so a leaked key cannot be brought back to life by a status flip.

use crate::{AgentId, ClientId, ScopeSet, TenantId, UserId};
use std::fmt;
use time::OffsetDateTime;

/// Longest accepted key set (JSON text), in bytes: a handful of RSA-4096 keys fits.
pub const MAX_AGENT_JWKS_BYTES: usize = 16 * 1024;

/// Longest accepted metadata object (JSON text), in bytes.
pub const MAX_AGENT_METADATA_BYTES: usize = 4 * 1024;

/// Why an agent value was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AgentValueError {
    /// Not `usr_…` or `app_…`.
    #[error("an agent's owner is a person (usr_…) or an application (app_…)")]
    Owner,
}

/// Who answers for an agent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AgentOwner {
    /// A person of the tenant.
    User(UserId),
    /// An application of the tenant.
    Application(ClientId),
}

impl AgentOwner {
    /// Parses an owner from its id, whose prefix says its kind.
    pub fn parse(s: &str) -> Result<Self, AgentValueError> {
        if let Ok(user) = UserId::parse(s) {
            return Ok(Self::User(user));
        }
        ClientId::parse(s)
            .map(Self::Application)
            .map_err(|_| AgentValueError::Owner)
    }

    /// The owner's id, as stored and on the wire.
    pub fn as_str(&self) -> &str {
        match self {
            Self::User(id) => id.as_str(),
            Self::Application(id) => id.as_str(),
        }
    }
}

impl fmt::Display for AgentOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether an agent may obtain and use tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AgentStatus {
    /// It may.
    Active,
    /// Not until it is reactivated; its tokens are refused meanwhile.
    Suspended,
    /// Never again (final).
    Revoked,
}

impl AgentStatus {
    /// The stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Suspended => "suspended",
            Self::Revoked => "revoked",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "active" => Some(Self::Active),
            "suspended" => Some(Self::Suspended),
            "revoked" => Some(Self::Revoked),
            _ => None,
        }
    }

    /// Whether moving to `next` is allowed: never out of `revoked`, and a move to the same
    /// status is no move.
    pub fn may_become(self, next: Self) -> bool {
        self != Self::Revoked && self != next
    }
}

/// A registered agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Agent {
    /// Durable id (`agt_…`): the `sub` of its tokens.
    pub id: AgentId,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// Display name.
    pub name: String,
    /// Who answers for it.
    pub owner: AgentOwner,
    /// Its public keys: a JWK set (JSON text, public members only, checked on registration).
    pub jwks: String,
    /// The most it may ever be granted.
    pub allowed_scopes: ScopeSet,
    /// The API resources (their identifiers) it may obtain tokens for.
    pub allowed_resources: Vec<String>,
    /// The RAR detail types (RFC 9396) it may ask a person to delegate, as an application
    /// registers its own.
    pub authorization_details_types: Vec<crate::DetailType>,
    /// Free JSON object the tenant keeps with it.
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// Whether it may act.
    pub status: AgentStatus,
    /// Registration time.
    pub created_at: OffsetDateTime,
    /// Last change; the revision `If-Match` checks.
    pub updated_at: OffsetDateTime,
    /// When it was revoked.
    pub revoked_at: Option<OffsetDateTime>,
}

impl Agent {
    /// Whether it may obtain and use tokens now.
    pub fn is_active(&self) -> bool {
        self.status == AgentStatus::Active
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_are_people_or_applications_by_prefix() {
        let user = "usr_01jd0000000000000000000000";
        let app = "app_01jd0000000000000000000000";
        assert!(matches!(AgentOwner::parse(user), Ok(AgentOwner::User(_))));
        assert!(matches!(
            AgentOwner::parse(app),
            Ok(AgentOwner::Application(_))
        ));
        assert_eq!(AgentOwner::parse(app).unwrap().as_str(), app);
        for bad in ["", "org_01jd0000000000000000000000", "usr_", "app_x"] {
            assert_eq!(AgentOwner::parse(bad), Err(AgentValueError::Owner), "{bad}");
        }
    }

    #[test]
    fn statuses_round_trip_and_revocation_is_final() {
        for s in [
            AgentStatus::Active,
            AgentStatus::Suspended,
            AgentStatus::Revoked,
        ] {
            assert_eq!(AgentStatus::parse(s.as_str()), Some(s));
            assert!(!AgentStatus::Revoked.may_become(s), "{s:?}");
            assert!(!s.may_become(s), "{s:?}");
        }
        assert!(AgentStatus::Active.may_become(AgentStatus::Suspended));
        assert!(AgentStatus::Suspended.may_become(AgentStatus::Active));
        assert!(AgentStatus::Active.may_become(AgentStatus::Revoked));
        assert!(AgentStatus::Suspended.may_become(AgentStatus::Revoked));
        assert_eq!(AgentStatus::parse("Active"), None);
    }
}
