//! Server-generated bearer secrets (client secrets, operator tokens) and their stored form.
//!
//! A secret is 256 random bits, encoded base64url with a type prefix so a leaked string says what
//! it is (`cs_…` client secret, `svcop_…` operator token). Only its SHA-256 is stored: the secret
//! has full entropy, so a slow KDF would add nothing but latency on every token request
//! (ARCHITECTURE.md "Performance principles"); comparison is constant-time.

use crate::Rng;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use std::fmt;
use subtle::ConstantTimeEq;

/// A freshly generated secret, shown to its owner exactly once.
pub struct GeneratedSecret {
    /// The secret as handed out (prefix + base64url of 32 random bytes).
    pub plaintext: String,
    /// What is stored.
    pub hash: SecretHash,
}

impl fmt::Debug for GeneratedSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GeneratedSecret(<redacted>)")
    }
}

impl GeneratedSecret {
    /// 256 random bits with `prefix` (e.g. `cs_`).
    pub fn generate(prefix: &str, rng: &dyn Rng) -> Self {
        let mut bytes = [0u8; 32];
        rng.fill(&mut bytes);
        let plaintext = format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes));
        let hash = SecretHash::of(&plaintext);
        Self { plaintext, hash }
    }
}

/// RFC 4648 base32 alphabet, lowercase: SCIM tokens and API keys are pasted into consoles and
/// configuration files, where a case-insensitive, symbol-free string survives every copy.
pub(crate) const BASE32: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// Characters of 32 bytes in unpadded base32.
pub(crate) const BASE32_SECRET_CHARS: usize = 52;

/// `prefix` and 256 random bits in unpadded lowercase base32 (52 characters): the shape shared
/// by SCIM tokens (`svcscim_`) and API keys (`svck_`). How it is stored is the caller's choice
/// (plain SHA-256 for SCIM tokens, a keyed hash for API keys).
pub fn base32_secret(prefix: &str, rng: &dyn Rng) -> String {
    let mut bytes = [0u8; 32];
    rng.fill(&mut bytes);
    let mut text = String::with_capacity(prefix.len() + BASE32_SECRET_CHARS);
    text.push_str(prefix);
    let (mut buffer, mut bits) = (0u32, 0u32);
    for byte in bytes {
        buffer = (buffer << 8) | u32::from(byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            text.push(char::from(BASE32[((buffer >> bits) & 31) as usize]));
        }
    }
    if bits > 0 {
        text.push(char::from(BASE32[((buffer << (5 - bits)) & 31) as usize]));
    }
    text
}

/// Whether `body` could be what [`base32_secret`] put after its prefix: exactly 52 characters of
/// the alphabet. A cheap shape check before any lookup.
pub(crate) fn is_base32_secret_body(body: &str) -> bool {
    body.len() == BASE32_SECRET_CHARS && body.bytes().all(|c| BASE32.contains(&c))
}

/// SHA-256 of a secret, as stored.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct SecretHash([u8; 32]);

impl SecretHash {
    /// The hash of a presented secret.
    pub fn of(secret: &str) -> Self {
        Self(Sha256::digest(secret.as_bytes()).into())
    }

    /// Rebuilds a stored hash; `None` when it is not 32 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok().map(Self)
    }

    /// The stored bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Whether `presented` is the secret this hash was made from, in constant time.
    pub fn verify(&self, presented: &str) -> bool {
        Self::of(presented).0.ct_eq(&self.0).into()
    }
}

impl fmt::Debug for SecretHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretHash(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::OsRandom;

    #[test]
    fn generated_secrets_verify_only_themselves() {
        let a = GeneratedSecret::generate("cs_", &OsRandom);
        let b = GeneratedSecret::generate("cs_", &OsRandom);
        assert!(a.plaintext.starts_with("cs_"));
        assert_eq!(a.plaintext.len(), 3 + 43, "32 bytes in unpadded base64url");
        assert!(a.hash.verify(&a.plaintext));
        assert!(!a.hash.verify(&b.plaintext));
        assert!(!a.hash.verify(""));
        assert!(!a.hash.verify(&a.plaintext[..a.plaintext.len() - 1]));
        assert_eq!(
            SecretHash::from_bytes(a.hash.as_bytes()),
            Some(a.hash.clone())
        );
        assert_eq!(SecretHash::from_bytes(&[0; 31]), None);
        assert!(!format!("{a:?}{:?}", a.hash).contains(&a.plaintext[3..10]));
    }
}
