//! Human passwords: the policy every new password passes, and the two seams through which the
//! engines hash and breach-check them without knowing who does the work.
//!
//! - [`Password`]: what a person types, after Unicode NFKC normalisation and a length of 8 to
//!   256 characters (NIST SP 800-63B §5.1.1.2: at least 8, accept at least 64, no composition
//!   rules, normalise Unicode before hashing). Normalising means the same password typed on two
//!   keyboards (a composed `é` on one, `e` plus a combining accent on the other) hashes the same.
//! - [`PasswordHasher`]: Argon2id hash and verify. The implementation runs the work off the
//!   async runtime with bounded concurrency, so it lives where the runtime is (`svc-runtime`);
//!   the pure computation is `svc_crypto::Argon2id`.
//! - [`BreachedPasswords`]: is a new password in a known breach corpus (needs the network).
//! - [`Passwords`]: the three together, as both the sign-in engine (sign-up, reset, invitation)
//!   and the management API (creating and changing users) apply them. Both engines take the
//!   same [`Passwords`] from the runtime, so neither depends on the other and one semaphore
//!   bounds hashing across every surface of a process.
//!
//! The seams are ports in the sense of `Clock` and `Rng`: async (through `async-trait`, so they
//! can be held as `Arc<dyn …>`) but tied to no runtime.

use crate::PasswordHash;
use async_trait::async_trait;
use std::fmt;
use std::sync::Arc;
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

    /// The normalised password, for hashing and the breach check only: it is public because
    /// those live in other crates (`svc-crypto`, `svc-authn`), not so it can be shown.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(<redacted>)")
    }
}

/// Why a hash could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HasherError {
    /// The configured parameters are outside what Argon2 accepts.
    #[error("invalid Argon2 parameters: {0}")]
    InvalidParams(String),
    /// Hashing failed or its task died.
    #[error("password hashing failed: {0}")]
    Failed(String),
}

/// Hashes and verifies passwords (Argon2id, PHC strings). One per process, shared by every
/// engine that handles passwords, so its concurrency bound holds for the whole process.
#[async_trait]
pub trait PasswordHasher: fmt::Debug + Send + Sync + 'static {
    /// The PHC hash of `password` under the current parameters, with a fresh salt.
    async fn hash(&self, password: &Password) -> Result<PasswordHash, HasherError>;

    /// Whether `password` matches `hash`. With `None` (unknown account, or one without a
    /// password) it verifies against a dummy hash and answers false, taking as long as a real
    /// check, so the answer's timing never tells whether an account exists. A malformed stored
    /// hash also answers false.
    async fn verify(&self, password: &Password, hash: Option<&PasswordHash>) -> bool;
}

/// The breached-password check could not be made and the deployment fails closed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the breached-password check is unavailable")]
pub struct BreachCheckUnavailable;

/// Decides whether a password appears in a breach corpus.
#[async_trait]
pub trait BreachedPasswords: Send + Sync + 'static {
    /// `Ok(true)` when `password` is known to be breached, `Ok(false)` when it is not (or the
    /// check is unavailable and the deployment fails open), `Err` when it is unavailable and the
    /// deployment fails closed.
    async fn is_breached(&self, password: &Password) -> Result<bool, BreachCheckUnavailable>;
}

/// Why a new password was refused. The texts are safe to show to the person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NewPasswordError {
    /// It breaks the policy; the text says which rule.
    #[error(transparent)]
    Weak(#[from] PasswordError),
    /// It appears in a known data breach.
    #[error("this password appears in a known data breach; choose another")]
    Breached,
    /// The breached-password check is unavailable and the deployment fails closed.
    #[error("passwords cannot be checked right now; try again later")]
    CheckUnavailable,
}

/// The password rules and hasher of a process, shared by the engines that handle passwords.
/// Cheap to clone.
#[derive(Clone)]
pub struct Passwords {
    hasher: Arc<dyn PasswordHasher>,
    breached: Option<Arc<dyn BreachedPasswords>>,
}

impl fmt::Debug for Passwords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Passwords")
            .field("hasher", &self.hasher)
            .field("breach_check", &self.breached.is_some())
            .finish()
    }
}

impl Passwords {
    /// Rules hashing with `hasher`; without `breached`, new passwords are not checked against
    /// breach corpora.
    pub fn new(
        hasher: Arc<dyn PasswordHasher>,
        breached: Option<Arc<dyn BreachedPasswords>>,
    ) -> Self {
        Self { hasher, breached }
    }

    /// Applies the policy to a new password, then the breached-password check.
    ///
    /// Errors: [`NewPasswordError::Weak`] naming the broken rule, [`NewPasswordError::Breached`],
    /// [`NewPasswordError::CheckUnavailable`].
    pub async fn check_new(&self, raw: &str) -> Result<Password, NewPasswordError> {
        let password = Password::parse(raw)?;
        if let Some(breached) = &self.breached {
            match breached.is_breached(&password).await {
                Ok(false) => {}
                Ok(true) => return Err(NewPasswordError::Breached),
                Err(BreachCheckUnavailable) => return Err(NewPasswordError::CheckUnavailable),
            }
        }
        Ok(password)
    }

    /// The hash of a password that passed [`Passwords::check_new`].
    pub async fn hash(&self, password: &Password) -> Result<PasswordHash, HasherError> {
        self.hasher.hash(password).await
    }

    /// Whether `password` matches `hash` (see [`PasswordHasher::verify`]).
    pub async fn verify(&self, password: &Password, hash: Option<&PasswordHash>) -> bool {
        self.hasher.verify(password, hash).await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    /// Runs a future whose every await is ready at once (the fakes below never wait), so this
    /// crate needs no async runtime even in its tests.
    fn ready<F: Future>(future: F) -> F::Output {
        match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(output) => output,
            Poll::Pending => panic!("the fakes never wait"),
        }
    }

    /// Hashes to `hash:<password>`; verifies by comparison.
    #[derive(Debug)]
    struct Plain;

    #[async_trait]
    impl PasswordHasher for Plain {
        async fn hash(&self, password: &Password) -> Result<PasswordHash, HasherError> {
            Ok(PasswordHash::new(format!("hash:{}", password.expose())))
        }
        async fn verify(&self, password: &Password, hash: Option<&PasswordHash>) -> bool {
            hash.is_some_and(|h| h.as_str() == format!("hash:{}", password.expose()))
        }
    }

    /// Knows one breached password, or is unavailable.
    struct Corpus(Option<&'static str>);

    #[async_trait]
    impl BreachedPasswords for Corpus {
        async fn is_breached(&self, password: &Password) -> Result<bool, BreachCheckUnavailable> {
            match self.0 {
                Some(known) => Ok(password.expose() == known),
                None => Err(BreachCheckUnavailable),
            }
        }
    }

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

    #[test]
    fn new_passwords_pass_the_policy_then_the_breach_check() {
        let open = Passwords::new(Arc::new(Plain), None);
        assert_eq!(
            ready(open.check_new("short")),
            Err(NewPasswordError::Weak(PasswordError::TooShort))
        );
        assert_eq!(
            ready(open.check_new("short")).unwrap_err().to_string(),
            PasswordError::TooShort.to_string(),
            "the rule's own text reaches the person"
        );
        assert!(
            ready(open.check_new("password1")).is_ok(),
            "no breach check"
        );

        let checked = Passwords::new(Arc::new(Plain), Some(Arc::new(Corpus(Some("password1")))));
        assert_eq!(
            ready(checked.check_new("password1")),
            Err(NewPasswordError::Breached)
        );
        // The check sees the normalised password.
        assert_eq!(
            ready(checked.check_new("\u{ff50}assword1")),
            Err(NewPasswordError::Breached)
        );
        assert!(ready(checked.check_new("a long and unusual passphrase")).is_ok());
        // The policy comes first: a short password never reaches the network.
        let down = Passwords::new(Arc::new(Plain), Some(Arc::new(Corpus(None))));
        assert_eq!(
            ready(down.check_new("short")),
            Err(NewPasswordError::Weak(PasswordError::TooShort))
        );
        assert_eq!(
            ready(down.check_new("a long and unusual passphrase")),
            Err(NewPasswordError::CheckUnavailable)
        );
    }

    #[test]
    fn hashing_and_verification_go_to_the_hasher() {
        let passwords = Passwords::new(Arc::new(Plain), None);
        let pw = Password::parse("correct horse battery").unwrap();
        let hash = ready(passwords.hash(&pw)).unwrap();
        assert!(ready(passwords.verify(&pw, Some(&hash))));
        assert!(!ready(passwords.verify(&pw, None)));
        assert!(!format!("{passwords:?}").contains("horse"));
    }
}
