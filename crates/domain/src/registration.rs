//! Dynamic client registration (RFC 7591) as a tenant decides it: whether anyone may register
//! an application at `/oauth/register`, or only holders of one of its initial access tokens. The
//! deployment switch (`[dynamic_registration].enabled`) is the operator's; this policy is each
//! tenant's, and registration works only when both allow.

use std::fmt;

/// Who may register an application of a tenant through `/oauth/register`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RegistrationPolicy {
    /// Nobody: the endpoint refuses every registration of this tenant (the default).
    #[default]
    Disabled,
    /// Anyone who can reach the tenant's issuer (RFC 7591 §3: "open registration"), within the
    /// deployment's rate limit.
    Open,
    /// Only a caller presenting one of the tenant's initial access tokens (RFC 7591 §3), within
    /// the same rate limit.
    Protected,
}

impl RegistrationPolicy {
    /// Every policy, in wire spelling order.
    pub const ALL: [Self; 3] = [Self::Disabled, Self::Open, Self::Protected];

    /// The wire and storage spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Disabled => "disabled",
            Self::Open => "open",
            Self::Protected => "protected",
        }
    }

    /// Parses the wire spelling exactly.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == text)
    }

    /// Whether registrations are taken at all.
    pub fn accepts_registrations(self) -> bool {
        self != Self::Disabled
    }
}

impl fmt::Display for RegistrationPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Most software statement issuers one tenant may trust (beside the deployment's).
pub const MAX_TENANT_STATEMENT_ISSUERS: usize = 8;

/// An authority a tenant trusts to vouch for clients in software statements (RFC 7591 §2.3),
/// beside those the deployment trusts (`[dynamic_registration].software_statement_issuers`):
/// its `iss` and the JWK Set (JSON text, public keys only) its statements verify with. Only this
/// tenant's registrations accept its statements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementIssuer {
    /// The statements' `iss`, compared exactly.
    pub issuer: String,
    /// The JWK Set document, as checked and stored.
    pub jwks: String,
}

/// Prefix of initial access tokens (`iatok_…`, RFC 7591 §3), distinct from their ids (`iat_…`).
pub const INITIAL_ACCESS_TOKEN_PREFIX: &str = "iatok_";

/// An initial access token of a tenant (RFC 7591 §3): what a caller presents as
/// `Authorization: Bearer` to register while the tenant's policy is `protected`. Only its hash is
/// kept; each registration it allows spends one use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitialAccessToken {
    /// Its handle.
    pub id: crate::InitialAccessTokenId,
    /// The tenant it lets register in.
    pub tenant_id: crate::TenantId,
    /// SHA-256 of the token.
    pub hash: crate::SecretHash,
    /// When it stops working.
    pub expires_at: time::OffsetDateTime,
    /// How many registrations it allows; `None`: any number until it expires.
    pub max_uses: Option<u32>,
    /// How many registrations it allowed so far.
    pub uses: u32,
    /// When it was created.
    pub created_at: time::OffsetDateTime,
}

/// Prefix of registration access tokens (`rat_…`, RFC 7592 §1), so a leaked string says what
/// it is.
pub const REGISTRATION_TOKEN_PREFIX: &str = "rat_";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_round_trip_their_spelling_and_default_to_disabled() {
        for policy in RegistrationPolicy::ALL {
            assert_eq!(RegistrationPolicy::parse(policy.as_str()), Some(policy));
        }
        assert_eq!(RegistrationPolicy::parse("Open"), None);
        assert_eq!(
            RegistrationPolicy::parse("protected"),
            Some(RegistrationPolicy::Protected)
        );
        assert_eq!(RegistrationPolicy::default(), RegistrationPolicy::Disabled);
        assert!(!RegistrationPolicy::Disabled.accepts_registrations());
        assert!(RegistrationPolicy::Open.accepts_registrations());
        assert!(RegistrationPolicy::Protected.accepts_registrations());
    }
}
