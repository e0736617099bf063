//! Argon2id password hashing off the async runtime, with bounded concurrency.
//!
//! Each hash takes `memory_kib` of memory and tens of milliseconds of CPU, so it runs on
//! `spawn_blocking` behind a semaphore of `max_concurrent` permits (ARCHITECTURE.md "Argon2id
//! runs off the async runtime with bounded concurrency"): a burst of sign-ins queues instead of
//! exhausting memory. The permit travels into the blocking task and is released only when the
//! hash is done, so a caller that gives up (client disconnect) does not free a permit while its
//! hash still runs.
//!
//! Hashes are PHC strings (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`), so a hash made under older
//! parameters still verifies after the configuration changes.

use crate::password::Password;
use argon2::{Algorithm, Argon2, Params, PasswordHasher as _, PasswordVerifier as _, Version};
use std::fmt;
use std::sync::Arc;
use svc_domain::{PasswordHash, Rng};
use tokio::sync::{OnceCell, Semaphore};

/// Bytes of random salt per hash (RFC 9106 §3.1 recommends 16).
const SALT_LEN: usize = 16;

/// Argon2id cost parameters and how many hashes may run at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Argon2Settings {
    /// Memory cost in KiB (`[auth].argon2_memory_kib`).
    pub memory_kib: u32,
    /// Passes over memory (`[auth].argon2_iterations`).
    pub iterations: u32,
    /// Lanes (`[auth].argon2_parallelism`).
    pub parallelism: u32,
    /// Hashes computed at once per process (`[auth].argon2_max_concurrent`).
    pub max_concurrent: u32,
}

impl Default for Argon2Settings {
    /// The `[auth]` defaults: 64 MiB, 3 passes, 1 lane, 4 at once.
    fn default() -> Self {
        Self {
            memory_kib: 65_536,
            iterations: 3,
            parallelism: 1,
            max_concurrent: 4,
        }
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

/// Hashes and verifies passwords with Argon2id. Build one per process and share it.
pub struct PasswordHasher {
    params: Params,
    permits: Arc<Semaphore>,
    rng: Arc<dyn Rng>,
    /// Hash of a random password under the current parameters, made on first need: verifying
    /// against it makes an unknown account cost what a known one costs.
    dummy: OnceCell<String>,
}

impl fmt::Debug for PasswordHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PasswordHasher")
            .field("memory_kib", &self.params.m_cost())
            .field("iterations", &self.params.t_cost())
            .field("parallelism", &self.params.p_cost())
            .finish_non_exhaustive()
    }
}

impl PasswordHasher {
    /// A hasher with `settings`, drawing salts from `rng`.
    pub fn new(settings: &Argon2Settings, rng: Arc<dyn Rng>) -> Result<Self, HasherError> {
        let params = Params::new(
            settings.memory_kib,
            settings.iterations,
            settings.parallelism,
            None,
        )
        .map_err(|e| HasherError::InvalidParams(e.to_string()))?;
        let permits = usize::try_from(settings.max_concurrent.max(1)).unwrap_or(1);
        Ok(Self {
            params,
            permits: Arc::new(Semaphore::new(permits)),
            rng,
            dummy: OnceCell::new(),
        })
    }

    /// The PHC hash of `password` under the current parameters, with a fresh salt.
    pub async fn hash(&self, password: &Password) -> Result<PasswordHash, HasherError> {
        let phc = self.hash_text(password.expose().to_owned()).await?;
        Ok(PasswordHash::new(phc))
    }

    /// Whether `password` matches `hash`. With `None` (unknown account, or one without a
    /// password) it verifies against a dummy hash and answers false, taking as long as a real
    /// check. A malformed stored hash or a failed task also answers false, logged without any
    /// secret.
    pub async fn verify(&self, password: &Password, hash: Option<&PasswordHash>) -> bool {
        let (phc, real) = match hash {
            Some(hash) => (hash.as_str().to_owned(), true),
            None => match self.dummy_hash().await {
                Ok(dummy) => (dummy.to_owned(), false),
                Err(e) => {
                    tracing::error!(error = %e, "could not prepare the dummy password hash");
                    return false;
                }
            },
        };
        let Ok(permit) = self.permits.clone().acquire_owned().await else {
            return false;
        };
        let candidate = password.expose().to_owned();
        let outcome = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            Argon2::default().verify_password(candidate.as_bytes(), phc.as_str())
        })
        .await;
        match outcome {
            Ok(Ok(())) => real,
            Ok(Err(argon2::password_hash::Error::PasswordInvalid)) => false,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "a stored password hash could not be checked");
                false
            }
            Err(e) => {
                tracing::error!(error = %e, "the password verification task failed");
                false
            }
        }
    }

    async fn dummy_hash(&self) -> Result<&str, HasherError> {
        let dummy = self
            .dummy
            .get_or_try_init(|| async {
                let mut random = [0u8; 32];
                self.rng.fill(&mut random);
                let text: String = random.iter().map(|b| format!("{b:02x}")).collect();
                self.hash_text(text).await
            })
            .await?;
        Ok(dummy.as_str())
    }

    async fn hash_text(&self, text: String) -> Result<String, HasherError> {
        let mut salt = [0u8; SALT_LEN];
        self.rng.fill(&mut salt);
        let params = self.params.clone();
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| HasherError::Failed(e.to_string()))?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
                .hash_password_with_salt(text.as_bytes(), &salt)
                .map(|h| h.to_string())
                .map_err(|e| HasherError::Failed(e.to_string()))
        })
        .await
        .map_err(|e| HasherError::Failed(e.to_string()))?
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use svc_domain::SeededRandom;

    fn hasher() -> PasswordHasher {
        let settings = Argon2Settings {
            memory_kib: 8192,
            iterations: 1,
            parallelism: 1,
            max_concurrent: 2,
        };
        PasswordHasher::new(&settings, Arc::new(SeededRandom::new(5))).unwrap()
    }

    #[tokio::test]
    async fn hashes_are_argon2id_phc_and_verify_only_their_password() {
        let h = hasher();
        let pw = Password::parse("correct horse battery").unwrap();
        let hash = h.hash(&pw).await.unwrap();
        assert!(
            hash.as_str().starts_with("$argon2id$v=19$m=8192,t=1,p=1$"),
            "{}",
            hash.as_str()
        );
        assert!(h.verify(&pw, Some(&hash)).await);
        let other = Password::parse("correct horse battery!").unwrap();
        assert!(!h.verify(&other, Some(&hash)).await);
        // Two hashes of one password differ (fresh salt), both verify.
        let again = h.hash(&pw).await.unwrap();
        assert_ne!(again, hash);
        assert!(h.verify(&pw, Some(&again)).await);
    }

    #[tokio::test]
    async fn unknown_accounts_and_garbage_hashes_never_verify() {
        let h = hasher();
        let pw = Password::parse("correct horse battery").unwrap();
        assert!(!h.verify(&pw, None).await);
        assert!(h.dummy.get().is_some(), "the dummy hash is made once");
        assert!(!h.verify(&pw, None).await);
        let garbage = PasswordHash::new("$argon2id$nonsense".to_owned());
        assert!(!h.verify(&pw, Some(&garbage)).await);
    }

    #[tokio::test]
    async fn hashes_made_under_older_parameters_still_verify() {
        let older = PasswordHasher::new(
            &Argon2Settings {
                memory_kib: 9216,
                iterations: 2,
                parallelism: 1,
                max_concurrent: 1,
            },
            Arc::new(SeededRandom::new(6)),
        )
        .unwrap();
        let pw = Password::parse("correct horse battery").unwrap();
        let hash = older.hash(&pw).await.unwrap();
        assert!(hasher().verify(&pw, Some(&hash)).await);
    }

    #[test]
    fn impossible_parameters_are_refused() {
        let bad = Argon2Settings {
            memory_kib: 1,
            ..Argon2Settings::default()
        };
        assert!(matches!(
            PasswordHasher::new(&bad, Arc::new(SeededRandom::new(1))),
            Err(HasherError::InvalidParams(_))
        ));
    }
}
