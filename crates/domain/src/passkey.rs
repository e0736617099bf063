//! Passkeys and WebAuthn ceremonies (CONTRACTS.md "Assurance, factors and step-up"): the
//! discoverable, user-verified WebAuthn credentials a person signs in with instead of a
//! password, and the server-side state of a registration or authentication in progress.
//!
//! The credential itself (public key, signature counter, flags) is the WebAuthn library's
//! serialised form, opaque here: only `svc-authn`'s wrapper reads or writes it. A ceremony's
//! state never leaves the server; the browser holds only a random cookie whose hash finds it,
//! and a ceremony completes once.

use crate::{SecretHash, TenantId, UserId};
use time::OffsetDateTime;

/// `amr` (RFC 8176 §2) of a hardware-bound key: a WebAuthn credential that cannot leave its
/// authenticator (not backup eligible).
pub const AMR_HWK: &str = "hwk";
/// `amr` of a software-bound key: a synced passkey (backup eligible).
pub const AMR_SWK: &str = "swk";
/// `amr` of user verification (a PIN or biometric on the authenticator).
pub const AMR_USER: &str = "user";

/// Longest passkey name, in characters.
pub const MAX_PASSKEY_NAME_CHARS: usize = 64;
/// Longest credential id WebAuthn allows (Level 3 §5.1: at most 1023 bytes).
pub const MAX_CREDENTIAL_ID_BYTES: usize = 1023;

/// A person's passkey: a discoverable WebAuthn credential registered with user verification,
/// a first factor on its own (aal2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passkey {
    /// `pky_…`, time-ordered.
    pub id: crate::PasskeyId,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// Whose passkey.
    pub user_id: UserId,
    /// The person's name for it ("Laptop"), 1 to [`MAX_PASSKEY_NAME_CHARS`] characters.
    pub name: String,
    /// The WebAuthn credential id (raw bytes, 1 to [`MAX_CREDENTIAL_ID_BYTES`]); unique within
    /// a tenant.
    pub credential_id: Vec<u8>,
    /// The WebAuthn library's serialised credential (JSON): public key, counter, flags.
    pub credential: String,
    /// Whether the authenticator may sync it to other devices (backup eligible): `swk` then,
    /// `hwk` otherwise.
    pub backup_eligible: bool,
    /// When it was registered.
    pub created_at: OffsetDateTime,
    /// When it last signed the person in.
    pub last_used_at: Option<OffsetDateTime>,
}

impl Passkey {
    /// The `amr` value of the key's binding: `swk` for a synced passkey, `hwk` otherwise.
    #[must_use]
    pub fn binding_amr(&self) -> &'static str {
        if self.backup_eligible {
            AMR_SWK
        } else {
            AMR_HWK
        }
    }
}

/// What a WebAuthn ceremony is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CeremonyPurpose {
    /// A signed-in person registers a passkey.
    PasskeyRegistration,
    /// Somebody signs in with a passkey (no person known until the assertion names one).
    PasskeySignIn,
    /// A signed-in person registers a security key as a second factor.
    SecurityKeyRegistration,
    /// A person proves their security key as the second factor of a sign-in or a step-up.
    SecurityKeyVerification,
}

impl CeremonyPurpose {
    /// The storage spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PasskeyRegistration => "passkey_registration",
            Self::PasskeySignIn => "passkey_sign_in",
            Self::SecurityKeyRegistration => "security_key_registration",
            Self::SecurityKeyVerification => "security_key_verification",
        }
    }

    /// Parses [`CeremonyPurpose::as_str`]'s spelling.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::PasskeyRegistration,
            Self::PasskeySignIn,
            Self::SecurityKeyRegistration,
            Self::SecurityKeyVerification,
        ]
        .into_iter()
        .find(|p| p.as_str() == s)
    }
}

/// A WebAuthn ceremony in progress: the challenge and what the library needs to check the
/// browser's answer, kept server-side under the hash of a random cookie value.
#[derive(Clone, PartialEq, Eq)]
pub struct WebauthnCeremony {
    /// Hash of the cookie value.
    pub hash: SecretHash,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// Who it is for: the signed-in person registering, or the person owing a second factor;
    /// `None` for a passkey sign-in, where the assertion names the person.
    pub user_id: Option<UserId>,
    /// What it is for; a ceremony answers only the purpose it was started for.
    pub purpose: CeremonyPurpose,
    /// The WebAuthn library's serialised ceremony state (JSON).
    pub state: String,
    /// When it started.
    pub created_at: OffsetDateTime,
    /// After this the browser must start again.
    pub expires_at: OffsetDateTime,
    /// Set when an answer was checked against it (single use, right or wrong).
    pub used_at: Option<OffsetDateTime>,
}

impl std::fmt::Debug for WebauthnCeremony {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebauthnCeremony")
            .field("tenant_id", &self.tenant_id)
            .field("user_id", &self.user_id)
            .field("purpose", &self.purpose)
            .field("created_at", &self.created_at)
            .field("expires_at", &self.expires_at)
            .field("used_at", &self.used_at)
            .finish_non_exhaustive()
    }
}

/// A passkey name as typed: trimmed, control characters refused, 1 to
/// [`MAX_PASSKEY_NAME_CHARS`] characters. `None` when it cannot be one.
#[must_use]
pub fn clean_passkey_name(raw: &str) -> Option<String> {
    let name = raw.trim();
    let chars = name.chars().count();
    ((1..=MAX_PASSKEY_NAME_CHARS).contains(&chars) && !name.chars().any(char::is_control))
        .then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn purposes_round_trip_and_unknown_ones_are_refused() {
        for purpose in [
            CeremonyPurpose::PasskeyRegistration,
            CeremonyPurpose::PasskeySignIn,
            CeremonyPurpose::SecurityKeyRegistration,
            CeremonyPurpose::SecurityKeyVerification,
        ] {
            assert_eq!(CeremonyPurpose::parse(purpose.as_str()), Some(purpose));
        }
        assert_eq!(CeremonyPurpose::parse("sign_in"), None);
    }

    #[test]
    fn names_are_trimmed_bounded_and_printable() {
        assert_eq!(clean_passkey_name("  Laptop ").as_deref(), Some("Laptop"));
        assert_eq!(clean_passkey_name("   "), None);
        assert_eq!(clean_passkey_name("a\u{0}b"), None);
        assert_eq!(
            clean_passkey_name(&"é".repeat(64)).map(|n| n.chars().count()),
            Some(64)
        );
        assert_eq!(clean_passkey_name(&"é".repeat(65)), None);
    }
}
