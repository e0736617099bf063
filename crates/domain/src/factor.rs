//! Second factors and assurance (CONTRACTS.md "Assurance, factors and step-up"): the factors a
//! person enrols (a TOTP authenticator, a WebAuthn security key), their single-use backup
//! codes, and the `acr` / `amr` values a sign-in reaches.
//!
//! The secret of a TOTP factor is kept only sealed (AES-256-GCM under the `[two_factor]` key);
//! backup codes only as a keyed hash. Nothing here can open or compute either: that is
//! `svc-crypto`'s, with the key the runtime holds.

use crate::{SecretHash, TenantId, UserId};
use std::fmt;
use time::OffsetDateTime;

/// `acr` of one factor (NIST SP 800-63B AAL1): a password alone.
pub const ACR_AAL1: &str = "urn:svc:aal1";
/// `acr` of two factors (AAL2): a password and a one-time code, or a user-verified passkey.
pub const ACR_AAL2: &str = "urn:svc:aal2";

/// `amr` (RFC 8176 §2) of a password.
pub const AMR_PASSWORD: &str = "pwd";
/// `amr` of a one-time code: a TOTP code or a backup code.
pub const AMR_OTP: &str = "otp";
/// `amr` of two or more factors.
pub const AMR_MFA: &str = "mfa";

/// The assurance levels this service knows, weakest first; `acr` values outside it are
/// somebody else's and never met.
pub const ACR_LEVELS: [&str; 2] = [ACR_AAL1, ACR_AAL2];

/// The rank of an `acr` value among [`ACR_LEVELS`] (higher is stronger), `None` for a value
/// this service does not issue.
#[must_use]
pub fn acr_rank(acr: &str) -> Option<usize> {
    ACR_LEVELS.iter().position(|level| *level == acr)
}

/// How many backup codes one set holds (CONTRACTS.md).
pub const BACKUP_CODES_PER_SET: usize = 10;
/// Characters of one backup code (Crockford base32, 50 bits).
pub const BACKUP_CODE_CHARS: usize = 10;

/// The kinds of second factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FactorKind {
    /// RFC 6238 TOTP: SHA-1, 6 digits, 30 s steps.
    Totp,
    /// A WebAuthn security key; its sealed secret is the sealed WebAuthn credential (public
    /// key and signature counter), confirmed by the registration ceremony itself.
    SecurityKey,
}

impl FactorKind {
    /// The storage and wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Totp => "totp",
            Self::SecurityKey => "security_key",
        }
    }

    /// Parses [`FactorKind::as_str`]'s spelling.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "totp" => Some(Self::Totp),
            "security_key" => Some(Self::SecurityKey),
            _ => None,
        }
    }
}

/// An enrolled (or enrolling) second factor of a person.
#[derive(Clone, PartialEq, Eq)]
pub struct SecondFactor {
    /// `mfa_…`, time-ordered.
    pub id: crate::FactorId,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// Whose factor.
    pub user_id: UserId,
    /// What it is.
    pub kind: FactorKind,
    /// The person's name for it ("Phone"), at most [`MAX_FACTOR_LABEL_CHARS`] characters.
    pub label: String,
    /// The sealed secret (TOTP key), opened only with the `[two_factor]` key.
    pub sealed_secret: Vec<u8>,
    /// When the person proved the factor works (a correct code); until then it counts for
    /// nothing and expires with its enrolment.
    pub confirmed_at: Option<OffsetDateTime>,
    /// The last TOTP time step accepted: a code of this step or an earlier one is a replay.
    pub last_used_step: Option<i64>,
    /// When it was enrolled.
    pub created_at: OffsetDateTime,
}

impl fmt::Debug for SecondFactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecondFactor")
            .field("id", &self.id)
            .field("tenant_id", &self.tenant_id)
            .field("user_id", &self.user_id)
            .field("kind", &self.kind)
            .field("label", &self.label)
            .field("sealed_secret", &"<sealed>")
            .field("confirmed_at", &self.confirmed_at)
            .field("last_used_step", &self.last_used_step)
            .field("created_at", &self.created_at)
            .finish()
    }
}

impl SecondFactor {
    /// Whether the factor counts at sign-in.
    #[must_use]
    pub fn is_confirmed(&self) -> bool {
        self.confirmed_at.is_some()
    }
}

/// Longest factor label, in characters.
pub const MAX_FACTOR_LABEL_CHARS: usize = 64;

/// One backup code of a person, as stored: only its keyed hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupCode {
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// Whose code.
    pub user_id: UserId,
    /// Keyed hash of the normalised code.
    pub hash: SecretHash,
    /// When its set was generated.
    pub created_at: OffsetDateTime,
    /// Set when used (single use).
    pub used_at: Option<OffsetDateTime>,
}

/// The proof that a person passed a sign-in's first step (their password) and now owes a
/// second factor: a short-lived, single-use value in a cookie, stored only as its hash. It
/// never signs anybody in by itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactorChallenge {
    /// Hash of the cookie value.
    pub hash: SecretHash,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// Who proved the first step.
    pub user_id: UserId,
    /// The methods proved so far (`["pwd"]`), the start of the session's `amr`.
    pub amr: Vec<String>,
    /// When the first step succeeded.
    pub created_at: OffsetDateTime,
    /// After this the person starts again from the password.
    pub expires_at: OffsetDateTime,
    /// Set when a second factor completed it (single use).
    pub used_at: Option<OffsetDateTime>,
}

/// A browser a person signed in from, recognised by its device cookie (stored only as the
/// cookie value's SHA-256, per person: one browser shared by two people is two records).
/// A new one is announced to the person (mail and event); a trusted one skips the second
/// factor until `trusted_until`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownDevice {
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// Whose sign-ins it saw.
    pub user_id: UserId,
    /// SHA-256 of the device cookie value.
    pub secret_hash: SecretHash,
    /// The browser's `User-Agent` when first seen, at most 256 characters.
    pub user_agent: Option<String>,
    /// First successful sign-in from it.
    pub first_seen_at: OffsetDateTime,
    /// Latest successful sign-in from it.
    pub last_seen_at: OffsetDateTime,
    /// Until when the person said not to ask for a second factor on it; `None`: not trusted.
    pub trusted_until: Option<OffsetDateTime>,
}

impl KnownDevice {
    /// Whether it skips the second factor at `now`.
    #[must_use]
    pub fn is_trusted(&self, now: OffsetDateTime) -> bool {
        self.trusted_until.is_some_and(|until| now < until)
    }
}

/// A backup code as typed: Crockford base32 read leniently (case, `-` and spaces ignored,
/// `O` → `0`, `I`/`L` → `1`), exactly [`BACKUP_CODE_CHARS`] symbols. `None` when it cannot be
/// one, so a malformed code costs no lookup.
#[must_use]
pub fn normalize_backup_code(typed: &str) -> Option<String> {
    let mut out = String::with_capacity(BACKUP_CODE_CHARS);
    for c in typed.chars() {
        let c = match c.to_ascii_uppercase() {
            '-' | ' ' => continue,
            'O' => '0',
            'I' | 'L' => '1',
            c if c.is_ascii_digit() => c,
            c if c.is_ascii_uppercase() && c != 'U' => c,
            _ => return None,
        };
        if out.len() == BACKUP_CODE_CHARS {
            return None;
        }
        out.push(c);
    }
    (out.len() == BACKUP_CODE_CHARS).then_some(out)
}

/// A TOTP code as typed: six ASCII digits, spaces ignored.
#[must_use]
pub fn normalize_totp_code(typed: &str) -> Option<String> {
    let digits: String = typed.chars().filter(|c| *c != ' ').collect();
    (digits.len() == 6 && digits.bytes().all(|b| b.is_ascii_digit())).then_some(digits)
}

/// The `amr` of a sign-in that added a one-time code to `before` (RFC 8176): `otp` and `mfa`
/// joined to what was there, each once.
#[must_use]
pub fn amr_with_otp(before: &[String]) -> Vec<String> {
    let mut amr: Vec<String> = before.to_vec();
    for value in [AMR_OTP, AMR_MFA] {
        if !amr.iter().any(|v| v == value) {
            amr.push(value.to_owned());
        }
    }
    amr
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backup_codes_are_read_leniently_but_never_loosely() {
        assert_eq!(
            normalize_backup_code("abcde-fghjk").as_deref(),
            Some("ABCDEFGHJK")
        );
        assert_eq!(
            normalize_backup_code(" o1l2i 3456 7").as_deref(),
            Some("0112134567")
        );
        assert_eq!(normalize_backup_code("ABCDEFGHJ"), None, "too short");
        assert_eq!(normalize_backup_code("ABCDEFGHJKM"), None, "too long");
        assert_eq!(
            normalize_backup_code("ABCDEFGHJU"),
            None,
            "U is not Crockford"
        );
        assert_eq!(normalize_backup_code("ABCDE'GHJK"), None);
        assert_eq!(normalize_backup_code("ÄBCDEFGHJK"), None);
    }

    #[test]
    fn totp_codes_are_six_digits() {
        assert_eq!(normalize_totp_code("123 456").as_deref(), Some("123456"));
        assert_eq!(normalize_totp_code("12345"), None);
        assert_eq!(normalize_totp_code("1234567"), None);
        assert_eq!(normalize_totp_code("12345a"), None);
        assert_eq!(
            normalize_totp_code("１２３４５６"),
            None,
            "full-width digits"
        );
    }

    #[test]
    fn acr_levels_rank_and_amr_grows_once() {
        assert!(acr_rank(ACR_AAL2) > acr_rank(ACR_AAL1));
        assert_eq!(acr_rank("urn:other:gold"), None);
        let amr = amr_with_otp(&["pwd".to_owned()]);
        assert_eq!(amr, ["pwd", "otp", "mfa"]);
        assert_eq!(amr_with_otp(&amr), amr);
    }
}
