//! Tenants: the isolation boundary. A tenant is addressed by its slug, a DNS label that becomes
//! the first label of its host (`{slug}.{base_domain}`), per CONTRACTS.md "Tenancy and issuers".

use crate::TenantId;
use std::fmt;
use time::OffsetDateTime;

/// Why a string is not a valid tenant slug.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a tenant slug is a DNS label: 1 to 63 characters of a-z, 0-9 and '-', not starting or ending with '-'"
)]
pub struct TenantSlugError;

/// A tenant's slug: a lowercase DNS label (RFC 1035 §2.3.1 with RFC 1123 §2.1's leading digits).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct TenantSlug(String);

impl TenantSlug {
    /// Parses a slug; uppercase is refused rather than folded so a slug has exactly one spelling.
    pub fn parse(s: &str) -> Result<Self, TenantSlugError> {
        let ok = (1..=63).contains(&s.len())
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !s.starts_with('-')
            && !s.ends_with('-');
        if ok {
            Ok(Self(s.to_owned()))
        } else {
            Err(TenantSlugError)
        }
    }

    /// The slug as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TenantSlug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for TenantSlug {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// Whether a tenant's hosts serve traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TenantStatus {
    /// Serving normally.
    Active,
    /// Every surface of the tenant answers 403 until it is reactivated.
    Suspended,
}

impl TenantStatus {
    /// The stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Suspended => "suspended",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "active" => Some(Self::Active),
            "suspended" => Some(Self::Suspended),
            _ => None,
        }
    }
}

/// A tenant's own second-factor policy, set through the control plane; `Default` follows the
/// deployment's `[two_factor].policy`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MfaPolicy {
    /// Whatever `[two_factor].policy` says.
    #[default]
    Default,
    /// Second factors are not offered: nobody enrols one and no request is stepped up. A factor
    /// a person already has is still asked for at sign-in, so turning the policy off never
    /// weakens an account its owner protected.
    Off,
    /// People choose; applications may ask for `urn:svc:aal2`.
    Optional,
    /// Every authorization needs `urn:svc:aal2`; a person without a factor sets one up first.
    Required,
}

impl MfaPolicy {
    /// The stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::Off => "off",
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        [Self::Default, Self::Off, Self::Optional, Self::Required]
            .into_iter()
            .find(|p| p.as_str() == s)
    }
}

/// A tenant's key for pairwise subject identifiers (CONTRACTS.md "Identifiers"): 256 random
/// bits fixed at creation. `Debug` hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct PairwiseSecret([u8; 32]);

impl PairwiseSecret {
    /// A fresh secret.
    pub fn generate(rng: &dyn crate::Rng) -> Self {
        let mut bytes = [0u8; 32];
        rng.fill(&mut bytes);
        Self(bytes)
    }

    /// Rebuilds a stored secret; `None` when it is not 32 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok().map(Self)
    }

    /// The key bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Debug for PairwiseSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PairwiseSecret(<redacted>)")
    }
}

/// A tenant record.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Tenant {
    /// Stable public id.
    pub id: TenantId,
    /// Host label and human handle; unique across the deployment.
    pub slug: TenantSlug,
    /// Name shown on hosted pages.
    pub display_name: String,
    /// Whether the tenant serves traffic.
    pub status: TenantStatus,
    /// Whether people may create their own account on the hosted sign-up page.
    pub signup_enabled: bool,
    /// Its second-factor policy.
    pub mfa_policy: MfaPolicy,
    /// Key of the pairwise subject identifiers third-party applications see; never leaves the
    /// server.
    #[serde(skip)]
    pub pairwise_secret: PairwiseSecret,
    /// When the tenant was created.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// When the tenant was last changed.
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_dns_labels() {
        for good in ["a", "acme", "acme-2", "0day", &"x".repeat(63)] {
            assert!(TenantSlug::parse(good).is_ok(), "{good} should be accepted");
        }
        for bad in [
            "",
            "-acme",
            "acme-",
            "Acme",
            "ac_me",
            "ac.me",
            "ac me",
            "é",
            &"x".repeat(64),
        ] {
            assert_eq!(
                TenantSlug::parse(bad),
                Err(TenantSlugError),
                "{bad:?} should be refused"
            );
        }
    }

    #[test]
    fn status_round_trips() {
        for s in [TenantStatus::Active, TenantStatus::Suspended] {
            assert_eq!(TenantStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(TenantStatus::parse("deleted"), None);
    }

    #[test]
    fn mfa_policy_round_trips() {
        for p in [
            MfaPolicy::Default,
            MfaPolicy::Off,
            MfaPolicy::Optional,
            MfaPolicy::Required,
        ] {
            assert_eq!(MfaPolicy::parse(p.as_str()), Some(p));
        }
        assert_eq!(MfaPolicy::parse("admins"), None);
    }
}
