//! Signing-key records: which keys a tenant publishes and signs with, and where each stands in
//! its rotation (CONTRACTS.md "Tokens": retired keys stay published for the longest token
//! lifetime + 1 day). The private half is stored only sealed (envelope-encrypted, its data key
//! wrapped by svc-kms); this crate never sees it in the clear.

use crate::TenantId;
use std::fmt;
use time::OffsetDateTime;

/// A JWS algorithm a tenant signs with (RFC 7518 §3.1, RFC 8037 §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SigningAlg {
    /// ECDSA P-256 SHA-256; the default access-token algorithm.
    Es256,
    /// Ed25519; the alternative access-token algorithm.
    EdDsa,
    /// RSASSA-PKCS1-v1_5 SHA-256; mandatory to implement for OpenID Connect ID tokens.
    Rs256,
}

impl SigningAlg {
    /// Every algorithm a tenant keeps a key for.
    pub const ALL: [SigningAlg; 3] = [SigningAlg::Es256, SigningAlg::EdDsa, SigningAlg::Rs256];

    /// The JOSE `alg` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Es256 => "ES256",
            Self::EdDsa => "EdDSA",
            Self::Rs256 => "RS256",
        }
    }

    /// Parses a JOSE `alg` value (case-sensitive, as JOSE is).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "ES256" => Some(Self::Es256),
            "EdDSA" => Some(Self::EdDsa),
            "RS256" => Some(Self::Rs256),
            _ => None,
        }
    }
}

impl fmt::Display for SigningAlg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a key stands in its rotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyState {
    /// Published in JWKS so caches learn it, not signing yet.
    Next,
    /// Signing (exactly one per tenant and algorithm).
    Active,
    /// No longer signing; published until every token it signed has expired.
    Retired,
}

impl KeyState {
    /// Stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Next => "next",
            Self::Active => "active",
            Self::Retired => "retired",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "next" => Some(Self::Next),
            "active" => Some(Self::Active),
            "retired" => Some(Self::Retired),
            _ => None,
        }
    }
}

/// A private key as stored: encrypted under a data key that only svc-kms can unwrap.
#[derive(Clone, PartialEq, Eq)]
pub struct SealedPrivateKey {
    /// The data-encryption key, wrapped by the KMS master key.
    pub wrapped_dek: Vec<u8>,
    /// The PKCS#8 private key, AEAD-encrypted under the data key.
    pub ciphertext: Vec<u8>,
}

impl fmt::Debug for SealedPrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SealedPrivateKey({} + {} bytes)",
            self.wrapped_dek.len(),
            self.ciphertext.len()
        )
    }
}

/// One signing key of one tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningKeyRecord {
    /// Owner.
    pub tenant_id: TenantId,
    /// JWK `kid` (the RFC 7638 thumbprint); unique per tenant.
    pub kid: String,
    /// Algorithm.
    pub alg: SigningAlg,
    /// Rotation state.
    pub state: KeyState,
    /// The public JWK as JSON text, published in JWKS.
    pub public_jwk: String,
    /// The sealed private key.
    pub sealed: SealedPrivateKey,
    /// When the key was created (and first published).
    pub created_at: OffsetDateTime,
    /// When the key starts (or started) signing.
    pub activates_at: OffsetDateTime,
    /// When it stopped signing, once retired.
    pub retired_at: Option<OffsetDateTime>,
    /// When it leaves JWKS, once retired.
    pub remove_after: Option<OffsetDateTime>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algorithm_and_state_spellings_round_trip() {
        for alg in SigningAlg::ALL {
            assert_eq!(SigningAlg::parse(alg.as_str()), Some(alg));
        }
        assert_eq!(
            SigningAlg::parse("es256"),
            None,
            "JOSE alg values are case-sensitive"
        );
        assert_eq!(SigningAlg::parse("none"), None);
        for state in [KeyState::Next, KeyState::Active, KeyState::Retired] {
            assert_eq!(KeyState::parse(state.as_str()), Some(state));
        }
    }

    #[test]
    fn sealed_keys_never_print_their_bytes() {
        let sealed = SealedPrivateKey {
            wrapped_dek: vec![0xAB; 60],
            ciphertext: vec![0xCD; 150],
        };
        let shown = format!("{sealed:?}");
        assert_eq!(shown, "SealedPrivateKey(60 + 150 bytes)");
    }
}
