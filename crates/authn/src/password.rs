//! What a person types as a password, after the policy every password passes: Unicode NFKC
//! normalisation, then a length of 8 to 256 characters (NIST SP 800-63B §5.1.1.2: at least 8,
//! accept at least 64, no composition rules, normalise Unicode before hashing).
//!
//! Normalising means the same password typed on two keyboards (a composed `é` on one, `e` plus
//! a combining accent on the other) hashes the same. The breached-password check is separate
//! (`crate::breached`) because it needs the network.

use std::fmt;
use unicode_normalization::UnicodeNormalization;

/// Fewest characters a password may have.
pub const MIN_PASSWORD_CHARS: usize = 8;
/// Most characters a password may have (bounds hashing work and request size).
pub const MAX_PASSWORD_CHARS: usize = 256;

/// Which rule a candidate password broke. The text is safe to show to the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    /// Fewer than [`MIN_PASSWORD_CHARS`] characters after normalisation.
    #[error("a password needs at least {MIN_PASSWORD_CHARS} characters")]
    TooShort,
    /// More than [`MAX_PASSWORD_CHARS`] characters after normalisation.
    #[error("a password may have at most {MAX_PASSWORD_CHARS} characters")]
    TooLong,
}

/// A password that passed the policy, NFKC-normalised. `Debug` never shows it; there is no
/// `Display` and no serialisation, so it cannot end up in a log line or a response by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    /// Normalises `raw` (NFKC) and applies the length rule to the result.
    pub fn parse(raw: &str) -> Result<Self, PasswordError> {
        let normalised: String = raw.nfkc().collect();
        let chars = normalised.chars().count();
        if chars < MIN_PASSWORD_CHARS {
            return Err(PasswordError::TooShort);
        }
        if chars > MAX_PASSWORD_CHARS {
            return Err(PasswordError::TooLong);
        }
        Ok(Self(normalised))
    }

    /// The normalised password, for hashing and the breach check only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn composed_and_decomposed_spellings_are_one_password() {
        let composed = Password::parse("caf\u{e9}-au-lait").unwrap();
        let decomposed = Password::parse("cafe\u{301}-au-lait").unwrap();
        assert_eq!(composed, decomposed);
        // Compatibility forms fold too (fullwidth letters, ligatures).
        assert_eq!(
            Password::parse("\u{ff41}bcdefgh").unwrap(),
            Password::parse("abcdefgh").unwrap()
        );
    }

    #[test]
    fn length_is_counted_in_characters_after_normalisation() {
        assert_eq!(Password::parse("1234567"), Err(PasswordError::TooShort));
        assert!(Password::parse("12345678").is_ok());
        // Eight two-byte characters are eight characters, not sixteen bytes.
        assert!(Password::parse(&"é".repeat(8)).is_ok());
        assert_eq!(
            Password::parse(&"é".repeat(7)),
            Err(PasswordError::TooShort)
        );
        assert!(Password::parse(&"x".repeat(256)).is_ok());
        assert_eq!(
            Password::parse(&"x".repeat(257)),
            Err(PasswordError::TooLong)
        );
        assert!(PasswordError::TooShort.to_string().contains("at least 8"));
        assert!(PasswordError::TooLong.to_string().contains("at most 256"));
    }

    #[test]
    fn debug_is_redacted() {
        let p = Password::parse("correct horse battery").unwrap();
        assert!(!format!("{p:?}").contains("horse"));
    }
}
