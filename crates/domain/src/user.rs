//! Tenant users: the people who sign in on a tenant's hosted pages, and their lifecycle.
//!
//! The durable key of a person is their [`UserId`] within a tenant; the email address is an
//! attribute that can change (spec "Access token (JWT) claims": "Email is never the key"). Only an
//! `active` user may sign in; every other state refuses sign-in and, on entering it, ends the
//! user's sessions and refresh-token families (the engines do that in the same transaction).

use crate::{TenantId, UserId};
use std::fmt;
use time::OffsetDateTime;

/// Why a string is not an acceptable email address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmailError {
    /// Empty, too long (RFC 5321 §4.5.3.1.3: 254), or not `local@domain`.
    #[error("an email address is local@domain, at most 254 characters")]
    Malformed,
}

/// An email address, trimmed and lowercased so one mailbox has one spelling per tenant.
///
/// Lowercasing the local part is a deliberate simplification: RFC 5321 lets it be
/// case-sensitive, but no mainstream provider is, and two accounts differing only by case are a
/// takeover risk, not a feature.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Email(String);

impl Email {
    /// Longest address accepted (RFC 5321 path limit minus the angle brackets).
    pub const MAX_LEN: usize = 254;

    /// Parses and normalises an address.
    pub fn parse(s: &str) -> Result<Self, EmailError> {
        let s = s.trim().to_lowercase();
        let (local, domain) = s.rsplit_once('@').ok_or(EmailError::Malformed)?;
        let ok = s.len() <= Self::MAX_LEN
            && !local.is_empty()
            && local.len() <= 64
            && !domain.is_empty()
            && !domain.starts_with('.')
            && !domain.ends_with('.')
            && !s.chars().any(|c| c.is_whitespace() || c.is_control())
            && !local.contains('@')
            && !s.contains(['<', '>', '"', '(', ')', ',', ';', '\\', '[', ']']);
        if ok {
            Ok(Self(s))
        } else {
            Err(EmailError::Malformed)
        }
    }

    /// The normalised address.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a tenant user stands. The spec's event names (`invited`, `activated`, `suspended`,
/// `reactivated`, `removed`, `pre_provisioned`) are transitions between these states:
/// `activated` and `reactivated` both enter [`UserStatus::Active`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserStatus {
    /// Created by an administrator with an invitation; becomes active when the person accepts
    /// it and chooses a password.
    Invited,
    /// Created by provisioning (API or SCIM) without credentials or invitation; becomes active
    /// when the person claims the account through a password reset.
    PreProvisioned,
    /// May sign in.
    Active,
    /// Blocked by an administrator; may be reactivated.
    Suspended,
    /// Removed: kept only as a tombstone so ids are never reused; cannot come back.
    Removed,
}

impl UserStatus {
    /// Stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Invited => "invited",
            Self::PreProvisioned => "pre_provisioned",
            Self::Active => "active",
            Self::Suspended => "suspended",
            Self::Removed => "removed",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "invited" => Some(Self::Invited),
            "pre_provisioned" => Some(Self::PreProvisioned),
            "active" => Some(Self::Active),
            "suspended" => Some(Self::Suspended),
            "removed" => Some(Self::Removed),
            _ => None,
        }
    }

    /// Whether an administrator may move a user from `self` to `to`. Removal is final; a
    /// suspended user comes back only through reactivation: to `Active`, or to
    /// `PreProvisioned` when they never chose a password (they claim the account again).
    pub fn can_become(self, to: UserStatus) -> bool {
        use UserStatus::*;
        match (self, to) {
            (Removed, _) => false,
            (_, Removed) => true,
            (Active, Suspended) | (Suspended, Active) | (Suspended, PreProvisioned) => true,
            (Invited | PreProvisioned, Active) => true,
            (Invited | PreProvisioned, Suspended) => true,
            (PreProvisioned, Invited) => true,
            _ => false,
        }
    }
}

/// A PHC-format password hash (`$argon2id$v=19$...`), never the password. `Debug` hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct PasswordHash(String);

impl PasswordHash {
    /// Wraps a PHC string produced by the hasher or read from storage.
    pub fn new(phc: String) -> Self {
        Self(phc)
    }

    /// The PHC string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for PasswordHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PasswordHash(<redacted>)")
    }
}

/// A person of one tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// Durable id; first-party applications see it as `sub`.
    pub id: UserId,
    /// Owner.
    pub tenant_id: TenantId,
    /// Sign-in address, unique among the tenant's users that are not removed.
    pub email: Email,
    /// Whether the person proved they receive mail at `email`.
    pub email_verified: bool,
    /// Full name (`name` claim), when known.
    pub name: Option<String>,
    /// `given_name` claim.
    pub given_name: Option<String>,
    /// `family_name` claim.
    pub family_name: Option<String>,
    /// Lifecycle state.
    pub status: UserStatus,
    /// Argon2id hash; `None` until the person chooses a password.
    pub password_hash: Option<PasswordHash>,
    /// Creation time.
    pub created_at: OffsetDateTime,
    /// Last change of any field.
    pub updated_at: OffsetDateTime,
    /// Last successful sign-in.
    pub last_sign_in_at: Option<OffsetDateTime>,
}

impl User {
    /// Whether the person may sign in now.
    pub fn can_sign_in(&self) -> bool {
        self.status == UserStatus::Active
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_is_trimmed_and_lowercased() {
        let e = Email::parse("  Ada@Example.COM ").unwrap_or_else(|_| unreachable!());
        assert_eq!(e.as_str(), "ada@example.com");
    }

    #[test]
    fn malformed_emails_are_refused() {
        for bad in [
            "",
            "ada",
            "@example.com",
            "ada@",
            "ada@.com",
            "ada@example.com.",
            "a da@example.com",
            "ada@exa\u{0}mple.com",
            "<ada@example.com>",
            "a@b@c",
        ] {
            assert_eq!(Email::parse(bad), Err(EmailError::Malformed), "{bad:?}");
        }
        let long = format!("{}@example.com", "a".repeat(250));
        assert!(Email::parse(&long).is_err());
    }

    #[test]
    fn removal_is_final_and_suspension_returns_to_active_or_pre_provisioned() {
        use UserStatus::*;
        assert!(!Removed.can_become(Active));
        assert!(Active.can_become(Removed));
        assert!(Suspended.can_become(Active));
        assert!(Suspended.can_become(PreProvisioned));
        assert!(!Suspended.can_become(Invited));
        assert!(Invited.can_become(Active));
        assert!(!Active.can_become(Invited));
        for s in [Invited, PreProvisioned, Active, Suspended, Removed] {
            assert_eq!(UserStatus::parse(s.as_str()), Some(s));
        }
    }

    #[test]
    fn password_hash_debug_is_redacted() {
        let h = PasswordHash::new("$argon2id$secret".into());
        assert!(!format!("{h:?}").contains("secret"));
    }
}
