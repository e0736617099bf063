//! Scopes (RFC 6749 §3.3): a `scope-token` is 1*( %x21 / %x23-5B / %x5D-7E ), a scope value is
//! tokens separated by single spaces. Parsed once at the edge; engines work with [`ScopeSet`].

use std::collections::BTreeSet;
use std::fmt;

/// Longest scope token we accept; far above any real one, well below abuse.
const MAX_SCOPE_LEN: usize = 128;
/// Most scopes in one request or registration.
const MAX_SCOPES: usize = 64;

/// Why a scope value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    /// A token holds a character RFC 6749 §3.3 does not allow, or is empty (doubled space).
    #[error(
        "malformed scope: tokens are separated by single spaces and use printable ASCII except '\"' and '\\\\'"
    )]
    Malformed,
    /// Too many tokens, or one too long.
    #[error("too many or too long scopes (at most {MAX_SCOPES} of {MAX_SCOPE_LEN} characters)")]
    TooLarge,
}

/// One scope token.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Scope(String);

impl Scope {
    /// Parses one scope token.
    pub fn parse(s: &str) -> Result<Self, ScopeError> {
        if s.len() > MAX_SCOPE_LEN {
            return Err(ScopeError::TooLarge);
        }
        let valid = !s.is_empty()
            && s.bytes()
                .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b));
        if valid {
            Ok(Self(s.to_owned()))
        } else {
            Err(ScopeError::Malformed)
        }
    }

    /// The token.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A set of scopes (order-free, duplicates collapse).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ScopeSet(BTreeSet<Scope>);

impl ScopeSet {
    /// Parses a space-delimited scope value; the empty string is the empty set.
    pub fn parse(s: &str) -> Result<Self, ScopeError> {
        if s.is_empty() {
            return Ok(Self::default());
        }
        let tokens: Vec<&str> = s.split(' ').collect();
        if tokens.len() > MAX_SCOPES {
            return Err(ScopeError::TooLarge);
        }
        tokens
            .into_iter()
            .map(Scope::parse)
            .collect::<Result<BTreeSet<_>, _>>()
            .map(Self)
    }

    /// Builds a set from tokens.
    pub fn from_scopes(scopes: impl IntoIterator<Item = Scope>) -> Self {
        Self(scopes.into_iter().collect())
    }

    /// Whether `scope` is in the set.
    pub fn contains(&self, scope: &str) -> bool {
        self.0.iter().any(|s| s.as_str() == scope)
    }

    /// Whether every scope of `self` is in `other`.
    pub fn is_subset(&self, other: &ScopeSet) -> bool {
        self.0.is_subset(&other.0)
    }

    /// Scopes of `self` that are not in `allowed`.
    pub fn not_in<'a>(&'a self, allowed: &'a ScopeSet) -> impl Iterator<Item = &'a Scope> {
        self.0.difference(&allowed.0)
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The scopes, sorted.
    pub fn iter(&self) -> impl Iterator<Item = &Scope> {
        self.0.iter()
    }
}

impl fmt::Display for ScopeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for scope in &self.0 {
            if !first {
                f.write_str(" ")?;
            }
            f.write_str(scope.as_str())?;
            first = false;
        }
        Ok(())
    }
}

impl serde::Serialize for ScopeSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter())
    }
}

impl<'de> serde::Deserialize<'de> for ScopeSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items = Vec::<String>::deserialize(d)?;
        if items.len() > MAX_SCOPES {
            return Err(serde::de::Error::custom(ScopeError::TooLarge));
        }
        items
            .iter()
            .map(|s| Scope::parse(s))
            .collect::<Result<BTreeSet<_>, _>>()
            .map(Self)
            .map_err(serde::de::Error::custom)
    }
}

/// The management API scopes a served route requires (CONTRACTS.md "Tenant API scopes and
/// audience"): applications (and the API resources they call), tenant users, organizations,
/// policies (roles and their permissions), the audit log and webhooks. A tenant's management
/// application may be granted exactly these, and the RFC 9728 metadata advertises exactly these.
/// The contract's billing scopes join when their routes do; until then a token carrying them
/// would promise APIs that answer 404.
pub const MANAGEMENT_API_SCOPES: [&str; 13] = [
    "applications:read",
    "applications:write",
    "users:read",
    "users:write",
    "organizations:read",
    "organizations:write",
    "policies:read",
    "policies:write",
    "agents:read",
    "agents:write",
    "audit:read",
    "webhooks:read",
    "webhooks:write",
];

/// The scope of a person's token that lists, approves and denies their pending CIBA requests
/// at `/api/v1/identity/ciba/requests*` (ADR 0010): meaningful only in a token of a first-party
/// application whose audience is the tenant's API (`{issuer}/api/v1`), issued in a sign-in
/// session (`sid`) that is still live when the token is used.
pub const CIBA_APPROVE_SCOPE: &str = "ciba:approve";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_values_follow_rfc6749_section_3_3() {
        let set = ScopeSet::parse("openid applications:read users:write").unwrap();
        assert!(set.contains("applications:read") && set.contains("openid"));
        assert_eq!(set.to_string(), "applications:read openid users:write");
        assert_eq!(ScopeSet::parse("").unwrap(), ScopeSet::default());
        assert_eq!(
            ScopeSet::parse("a a").unwrap().iter().count(),
            1,
            "duplicates collapse"
        );
        for bad in ["a  b", " a", "a ", "a\tb", "a\"b", "a\\b", "é", "a\nb"] {
            assert_eq!(ScopeSet::parse(bad), Err(ScopeError::Malformed), "{bad:?}");
        }
        assert_eq!(Scope::parse(&"x".repeat(129)), Err(ScopeError::TooLarge));
        assert_eq!(
            ScopeSet::parse(&vec!["s"; 65].join(" ")),
            Err(ScopeError::TooLarge)
        );
    }

    #[test]
    fn subset_and_difference() {
        let allowed = ScopeSet::parse("a b c").unwrap();
        let asked = ScopeSet::parse("a d").unwrap();
        assert!(!asked.is_subset(&allowed));
        assert_eq!(
            asked
                .not_in(&allowed)
                .map(Scope::as_str)
                .collect::<Vec<_>>(),
            vec!["d"]
        );
        assert!(ScopeSet::parse("b").unwrap().is_subset(&allowed));
    }
}
