//! The cryptography of second factors (CONTRACTS.md "Assurance, factors and step-up"):
//!
//! - TOTP (RFC 6238: HMAC-SHA-1, 6 digits, 30 s steps, ±1 step of skew) through `totp-rs`,
//!   wrapped so the rest of the service sees a secret, a code check that returns the matched
//!   step (replay refusal is the caller's: RFC 6238 §5.2), and the `otpauth://` URI apps scan;
//! - sealing TOTP secrets at rest with AES-256-GCM, bound to tenant, person and factor through
//!   the additional data, so a sealed secret copied onto another row fails to open;
//! - the keyed hash of backup codes (HMAC-SHA-256 bound to tenant and person): 50-bit codes are
//!   too short for a plain hash to survive a leaked database.
//!
//! Both keys derive from the one `[two_factor]` key (HMAC-SHA-256 with a label per use), so one
//! configured secret never serves two algorithms directly.

use crate::CryptoError;
use aws_lc_rs::aead::NONCE_LEN;
use aws_lc_rs::hmac;
use std::fmt;
use svc_domain::{FactorId, Rng, SecretHash, TenantId, UserId};
use totp_rs::{Algorithm, Builder, Totp};
use zeroize::Zeroizing;

/// TOTP secret length in bytes (RFC 4226 §4 recommends 160 bits).
pub const TOTP_SECRET_BYTES: usize = 20;
/// TOTP step length in seconds.
pub const TOTP_STEP_SECS: u64 = 30;
use crate::sealing::{SEALED_V1, TAG_LEN};

/// The `[two_factor]` key: seals TOTP secrets and keys backup-code hashes.
pub struct FactorKey {
    seal: Zeroizing<[u8; 32]>,
    codes: hmac::Key,
}

impl fmt::Debug for FactorKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FactorKey(<redacted>)")
    }
}

impl FactorKey {
    /// The key from its 32 configured bytes.
    ///
    /// # Errors
    /// [`CryptoError::InvalidDataKey`] unless exactly 32 bytes.
    pub fn new(master: &[u8]) -> Result<Self, CryptoError> {
        if master.len() != 32 {
            return Err(CryptoError::InvalidDataKey);
        }
        let derive = |label: &[u8]| {
            let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, master), label);
            let mut out = Zeroizing::new([0u8; 32]);
            out.copy_from_slice(tag.as_ref());
            out
        };
        let seal = derive(b"svc two_factor totp seal v1");
        let codes = derive(b"svc two_factor backup codes v1");
        Ok(Self {
            seal,
            codes: hmac::Key::new(hmac::HMAC_SHA256, codes.as_ref()),
        })
    }

    /// Seals a TOTP secret of `factor` (of `user` in `tenant`).
    ///
    /// # Errors
    /// [`CryptoError::Seal`] if the cipher cannot be set up.
    pub fn seal(
        &self,
        secret: &TotpSecret,
        tenant: &TenantId,
        user: &UserId,
        factor: &FactorId,
    ) -> Result<Vec<u8>, CryptoError> {
        self.seal_bytes(&secret.0, tenant, user, factor)
    }

    /// Seals any bytes of `factor` (a security key's credential): bound to the row like a TOTP
    /// secret, so a value copied to another factor, person or tenant does not open, and a
    /// public key swapped in the database is refused rather than trusted.
    ///
    /// # Errors
    /// [`CryptoError::Seal`] if the cipher cannot be set up.
    pub fn seal_bytes(
        &self,
        plain: &[u8],
        tenant: &TenantId,
        user: &UserId,
        factor: &FactorId,
    ) -> Result<Vec<u8>, CryptoError> {
        crate::sealing::seal(&self.seal, &aad(tenant, user, factor), plain)
    }

    /// Opens what [`FactorKey::seal`] sealed for the same tenant, person and factor.
    ///
    /// # Errors
    /// [`CryptoError::Open`] for another key, another row's secret or any alteration;
    /// [`CryptoError::MalformedSealedKey`] for bytes of another shape.
    pub fn open(
        &self,
        sealed: &[u8],
        tenant: &TenantId,
        user: &UserId,
        factor: &FactorId,
    ) -> Result<TotpSecret, CryptoError> {
        if sealed.len() != 1 + NONCE_LEN + TOTP_SECRET_BYTES + TAG_LEN {
            return match sealed.first() {
                Some(&version) if version != SEALED_V1 => {
                    Err(CryptoError::UnsupportedSealedKeyVersion(version))
                }
                _ => Err(CryptoError::MalformedSealedKey),
            };
        }
        let plain = self.open_bytes(sealed, tenant, user, factor)?;
        TotpSecret::from_bytes(&plain).ok_or(CryptoError::MalformedSealedKey)
    }

    /// Opens what [`FactorKey::seal_bytes`] sealed for the same tenant, person and factor.
    ///
    /// # Errors
    /// As [`FactorKey::open`].
    pub fn open_bytes(
        &self,
        sealed: &[u8],
        tenant: &TenantId,
        user: &UserId,
        factor: &FactorId,
    ) -> Result<Zeroizing<Vec<u8>>, CryptoError> {
        crate::sealing::open(&self.seal, &aad(tenant, user, factor), sealed)
    }

    /// The stored form of a backup code (already normalised) of `user` in `tenant`.
    #[must_use]
    pub fn backup_code_hash(&self, tenant: &TenantId, user: &UserId, code: &str) -> SecretHash {
        let input = format!("{}|{}|{code}", tenant.as_str(), user.as_str());
        let tag = hmac::sign(&self.codes, input.as_bytes());
        // HMAC-SHA-256 is 32 bytes, the size of a stored hash.
        SecretHash::from_bytes(tag.as_ref()).unwrap_or_else(|| SecretHash::of(code))
    }
}

fn aad(tenant: &TenantId, user: &UserId, factor: &FactorId) -> Vec<u8> {
    format!(
        "totp|{}|{}|{}",
        tenant.as_str(),
        user.as_str(),
        factor.as_str()
    )
    .into_bytes()
}

/// A TOTP secret in the clear: only while enrolling (to show it) or checking a code.
pub struct TotpSecret(Zeroizing<Vec<u8>>);

impl fmt::Debug for TotpSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TotpSecret(<redacted>)")
    }
}

impl TotpSecret {
    /// 160 fresh random bits.
    #[must_use]
    pub fn generate(rng: &dyn Rng) -> Self {
        let mut bytes = Zeroizing::new(vec![0u8; TOTP_SECRET_BYTES]);
        rng.fill(&mut bytes);
        Self(bytes)
    }

    /// The secret an app was given as base32 (what [`TotpSecret::base32`] shows; spaces and
    /// case ignored), when it decodes to [`TOTP_SECRET_BYTES`] bytes.
    #[must_use]
    pub fn from_base32(text: &str) -> Option<Self> {
        let cleaned: String = text
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| c.to_ascii_uppercase())
            .collect();
        let secret = totp_rs::Secret::try_from_base32(cleaned).ok()?;
        Self::from_bytes(secret.as_ref())
    }

    /// A secret of exactly [`TOTP_SECRET_BYTES`] bytes.
    #[must_use]
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        (bytes.len() == TOTP_SECRET_BYTES).then(|| Self(Zeroizing::new(bytes.to_vec())))
    }

    fn totp(&self, issuer: Option<&str>, account: &str) -> Totp {
        Builder::new()
            .with_algorithm(Algorithm::SHA1)
            .with_digits(6)
            .with_skew(1)
            .with_step_duration(TOTP_STEP_SECS)
            .with_secret(self.0.as_slice())
            .with_issuer(issuer.map(label))
            .with_account_name(label(account))
            // Every parameter above is the RFC 6238 default and the secret is 160 bits: the
            // checks of `build` hold by construction, and `build_noncompliant` cannot panic.
            .build_noncompliant()
    }

    /// The secret in base32 (RFC 4648, no padding), for typing into an app by hand.
    #[must_use]
    pub fn base32(&self) -> String {
        self.totp(None, "x").secret().to_base32()
    }

    /// The `otpauth://totp/…` URI authenticator apps scan (Key Uri Format).
    #[must_use]
    pub fn otpauth_uri(&self, issuer: &str, account: &str) -> String {
        self.totp(Some(issuer), account)
            .to_url()
            .unwrap_or_default()
    }

    /// The time step whose code `code` is, within ±1 step of `unix_secs`; `None` when it is
    /// not a current code. Comparison is constant-time.
    #[must_use]
    pub fn verify(&self, code: &str, unix_secs: i64) -> Option<i64> {
        let now = u64::try_from(unix_secs).ok()?;
        let step = self.totp(None, "x").check(code, now)?;
        i64::try_from(step).ok()
    }

    /// The code of the step containing `unix_secs` (tests and benchmarks act as the app).
    #[must_use]
    pub fn code_at(&self, unix_secs: i64) -> String {
        let at = u64::try_from(unix_secs).unwrap_or(0);
        self.totp(None, "x").generate(at).to_string()
    }
}

/// `:` separates issuer and account in the URI label and is refused inside either.
fn label(s: &str) -> String {
    let cleaned: String = s.chars().filter(|c| *c != ':' && !c.is_control()).collect();
    if cleaned.trim().is_empty() {
        "account".to_owned()
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::{ManualClock, SeededRandom};

    fn ids() -> (TenantId, UserId, FactorId) {
        let clock = ManualClock::new(time::OffsetDateTime::UNIX_EPOCH);
        let rng = SeededRandom::new(7);
        (
            TenantId::generate(&clock, &rng),
            UserId::generate(&clock, &rng),
            FactorId::generate(&clock, &rng),
        )
    }

    #[test]
    fn rfc_6238_appendix_b_sha1_vectors() {
        // RFC 6238 Appendix B, SHA-1 seed "12345678901234567890" (the last 6 digits).
        let secret = TotpSecret::from_bytes(b"12345678901234567890").unwrap();
        for (t, code) in [
            (59, "287082"),
            (1_111_111_109, "081804"),
            (1_111_111_111, "050471"),
            (1_234_567_890, "005924"),
            (2_000_000_000, "279037"),
        ] {
            assert_eq!(secret.code_at(t), code, "t = {t}");
            assert_eq!(secret.verify(code, t), Some(t / 30));
        }
    }

    #[test]
    fn a_code_is_current_for_one_step_either_side_and_no_more() {
        let secret = TotpSecret::generate(&SeededRandom::new(1));
        let t = 1_800_000_000;
        let code = secret.code_at(t);
        assert_eq!(secret.verify(&code, t + 30), Some(t / 30));
        assert_eq!(secret.verify(&code, t - 30), Some(t / 30));
        assert_eq!(secret.verify(&code, t + 60), None);
        assert_eq!(secret.verify("12345", t), None);
        assert_eq!(secret.verify("abcdef", t), None);
        assert_eq!(secret.verify(&code, -5), None);
    }

    #[test]
    fn sealed_secrets_open_only_for_their_row_and_key() {
        let (tenant, user, factor) = ids();
        let key = FactorKey::new(&[9u8; 32]).unwrap();
        let secret = TotpSecret::generate(&SeededRandom::new(3));
        let sealed = key.seal(&secret, &tenant, &user, &factor).unwrap();
        let opened = key.open(&sealed, &tenant, &user, &factor).unwrap();
        assert_eq!(opened.0.as_slice(), secret.0.as_slice());
        let (other_tenant, other_user, other_factor) = {
            let clock = ManualClock::new(time::OffsetDateTime::UNIX_EPOCH);
            clock.advance(time::Duration::seconds(1));
            let rng = SeededRandom::new(8);
            (
                TenantId::generate(&clock, &rng),
                UserId::generate(&clock, &rng),
                FactorId::generate(&clock, &rng),
            )
        };
        assert!(key.open(&sealed, &other_tenant, &user, &factor).is_err());
        assert!(key.open(&sealed, &tenant, &other_user, &factor).is_err());
        assert!(key.open(&sealed, &tenant, &user, &other_factor).is_err());
        let other_key = FactorKey::new(&[8u8; 32]).unwrap();
        assert!(other_key.open(&sealed, &tenant, &user, &factor).is_err());
        for i in 0..sealed.len() {
            let mut bad = sealed.clone();
            bad[i] ^= 1;
            assert!(key.open(&bad, &tenant, &user, &factor).is_err(), "byte {i}");
        }
        assert!(key.open(&sealed[..10], &tenant, &user, &factor).is_err());
        assert!(FactorKey::new(&[1u8; 31]).is_err());
        assert!(!format!("{key:?}{secret:?}").contains("9"));
    }

    #[test]
    fn sealed_bytes_of_any_length_open_only_for_their_row() {
        let (tenant, user, factor) = ids();
        let key = FactorKey::new(&[9u8; 32]).unwrap();
        for plain in [&b""[..], b"{\"cred\":1}", &[7u8; 700]] {
            let sealed = key.seal_bytes(plain, &tenant, &user, &factor).unwrap();
            let opened = key.open_bytes(&sealed, &tenant, &user, &factor).unwrap();
            assert_eq!(opened.as_slice(), plain);
            let mut bad = sealed.clone();
            let last = bad.len() - 1;
            bad[last] ^= 1;
            assert!(key.open_bytes(&bad, &tenant, &user, &factor).is_err());
            // Another row's factor id does not open it, and it is no TOTP secret.
            let (_, _, other) = {
                let clock = ManualClock::new(time::OffsetDateTime::UNIX_EPOCH);
                let rng = SeededRandom::new(99);
                ids_from(&clock, &rng)
            };
            assert!(key.open_bytes(&sealed, &tenant, &user, &other).is_err());
            assert!(key.open(&sealed, &tenant, &user, &factor).is_err());
        }
    }

    fn ids_from(clock: &ManualClock, rng: &SeededRandom) -> (TenantId, UserId, FactorId) {
        (
            TenantId::generate(clock, rng),
            UserId::generate(clock, rng),
            FactorId::generate(clock, rng),
        )
    }

    #[test]
    fn backup_code_hashes_are_keyed_and_bound_to_the_person() {
        let (tenant, user, _) = ids();
        let key = FactorKey::new(&[9u8; 32]).unwrap();
        let other = FactorKey::new(&[7u8; 32]).unwrap();
        let a = key.backup_code_hash(&tenant, &user, "ABCDEFGHJK");
        assert_eq!(a, key.backup_code_hash(&tenant, &user, "ABCDEFGHJK"));
        assert_ne!(a, other.backup_code_hash(&tenant, &user, "ABCDEFGHJK"));
        assert_ne!(a, key.backup_code_hash(&tenant, &user, "ABCDEFGHJM"));
        assert_ne!(a, SecretHash::of("ABCDEFGHJK"));
    }

    #[test]
    fn the_otpauth_uri_carries_issuer_account_and_secret() {
        let secret = TotpSecret::from_bytes(&[0u8; 20]).unwrap();
        let uri = secret.otpauth_uri("Acme: Corp", "ada@example.com");
        assert!(uri.starts_with("otpauth://totp/"), "{uri}");
        assert!(
            uri.contains(&format!("secret={}", secret.base32())),
            "{uri}"
        );
        assert!(uri.contains("issuer=Acme"), "{uri}");
        assert!(uri.contains("ada%40example.com"), "{uri}");
        assert_eq!(secret.base32(), "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
        let again = TotpSecret::from_base32("aaaa aaaa AAAAAAAAAAAAAAAAAAAAAAAA").unwrap();
        assert_eq!(again.0.as_slice(), secret.0.as_slice());
        assert!(TotpSecret::from_base32("AAAA").is_none(), "too short");
        assert!(TotpSecret::from_base32("!!!!").is_none());
    }
}
