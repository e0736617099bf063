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
//!
//! The dummy hash that unknown accounts are checked against is formed when the hasher is built
//! ([`PasswordHasher::new`]) from random bytes, never computed on a request: the first sign-in
//! of an unknown address would otherwise cost two hashes and stand out by its timing.

use crate::password::Password;
use argon2::{Algorithm, Argon2, Params, PasswordHasher as _, PasswordVerifier as _, Version};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use svc_domain::{PasswordHash, Rng};
use tokio::sync::Semaphore;

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

/// What the hasher has done so far (for tests and metrics).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HasherStats {
    /// Hashes computed (the dummy hash included).
    pub hashes: u64,
    /// Verifications run.
    pub verifications: u64,
    /// Most Argon2 computations, of either kind, that ran at the same moment.
    pub peak_concurrent: usize,
}

/// Counters updated inside the blocking tasks, where the work really runs.
#[derive(Debug, Default)]
struct Counters {
    hashes: AtomicU64,
    verifications: AtomicU64,
    running: AtomicUsize,
    peak: AtomicUsize,
}

/// One Argon2 computation in progress; counted out when dropped.
struct Running<'a>(&'a Counters);

impl<'a> Running<'a> {
    fn start(counters: &'a Counters) -> Self {
        let now = counters.running.fetch_add(1, Ordering::SeqCst) + 1;
        counters.peak.fetch_max(now, Ordering::SeqCst);
        Self(counters)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Hashes and verifies passwords with Argon2id. Build one per process and share it.
pub struct PasswordHasher {
    params: Params,
    permits: Arc<Semaphore>,
    rng: Arc<dyn Rng>,
    /// Hash of a random password under the current parameters, made at construction:
    /// verifying against it makes an unknown account cost what a known one costs.
    dummy: String,
    counters: Arc<Counters>,
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
    /// A hasher with `settings`, drawing salts from `rng`. The dummy hash is a well-formed
    /// Argon2id hash of the same parameters with a random salt and a random digest: verifying
    /// against it costs exactly one hash computation (nothing can match it), and building it
    /// costs none, so startup stays fast.
    pub async fn new(settings: &Argon2Settings, rng: Arc<dyn Rng>) -> Result<Self, HasherError> {
        let params = Params::new(
            settings.memory_kib,
            settings.iterations,
            settings.parallelism,
            None,
        )
        .map_err(|e| HasherError::InvalidParams(e.to_string()))?;
        let permits = usize::try_from(settings.max_concurrent.max(1)).unwrap_or(1);
        let mut hasher = Self {
            params,
            permits: Arc::new(Semaphore::new(permits)),
            rng,
            dummy: String::new(),
            counters: Arc::new(Counters::default()),
        };
        hasher.dummy = hasher.dummy_hash();
        Ok(hasher)
    }

    /// `$argon2id$v=19$m=…,t=…,p=…$<salt>$<digest>` with random salt and digest (PHC string
    /// format: base64 without padding).
    fn dummy_hash(&self) -> String {
        use base64::Engine;
        use base64::engine::general_purpose::STANDARD_NO_PAD;
        let mut salt = [0u8; SALT_LEN];
        let mut digest = [0u8; 32];
        self.rng.fill(&mut salt);
        self.rng.fill(&mut digest);
        format!(
            "$argon2id$v=19$m={},t={},p={}${}${}",
            self.params.m_cost(),
            self.params.t_cost(),
            self.params.p_cost(),
            STANDARD_NO_PAD.encode(salt),
            STANDARD_NO_PAD.encode(digest)
        )
    }

    /// Counters of the work done so far.
    pub fn stats(&self) -> HasherStats {
        HasherStats {
            hashes: self.counters.hashes.load(Ordering::SeqCst),
            verifications: self.counters.verifications.load(Ordering::SeqCst),
            peak_concurrent: self.counters.peak.load(Ordering::SeqCst),
        }
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
            None => (self.dummy.clone(), false),
        };
        let Ok(permit) = self.permits.clone().acquire_owned().await else {
            return false;
        };
        let candidate = password.expose().to_owned();
        let counters = self.counters.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let _running = Running::start(&counters);
            counters.verifications.fetch_add(1, Ordering::SeqCst);
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
        let counters = self.counters.clone();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let _running = Running::start(&counters);
            counters.hashes.fetch_add(1, Ordering::SeqCst);
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

    async fn hasher_with(max_concurrent: u32) -> PasswordHasher {
        let settings = Argon2Settings {
            memory_kib: 8192,
            iterations: 1,
            parallelism: 1,
            max_concurrent,
        };
        PasswordHasher::new(&settings, Arc::new(SeededRandom::new(5)))
            .await
            .unwrap()
    }

    async fn hasher() -> PasswordHasher {
        hasher_with(2).await
    }

    #[tokio::test]
    async fn hashes_are_argon2id_phc_and_verify_only_their_password() {
        let h = hasher().await;
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
        let h = hasher().await;
        let pw = Password::parse("correct horse battery").unwrap();
        assert!(!h.verify(&pw, None).await);
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
        .await
        .unwrap();
        let pw = Password::parse("correct horse battery").unwrap();
        let hash = older.hash(&pw).await.unwrap();
        assert!(hasher().await.verify(&pw, Some(&hash)).await);
    }

    #[tokio::test]
    async fn the_dummy_hash_exists_once_built_so_unknown_accounts_cost_one_verification() {
        let h = hasher().await;
        assert!(h.dummy.starts_with("$argon2id$v=19$m=8192,t=1,p=1$"));
        // It parses as a real hash of the current parameters (so verifying against it runs
        // the whole computation and fails only at the comparison).
        let parsed = argon2::password_hash::phc::PasswordHash::new(&h.dummy).unwrap();
        assert_eq!(parsed.algorithm.as_str(), "argon2id");
        let read = Params::try_from(&parsed).unwrap();
        assert_eq!(
            (read.m_cost(), read.t_cost(), read.p_cost()),
            (h.params.m_cost(), h.params.t_cost(), h.params.p_cost())
        );
        let built = h.stats();
        assert_eq!(
            (built.hashes, built.verifications),
            (0, 0),
            "building it computes no hash"
        );
        let pw = Password::parse("correct horse battery").unwrap();
        assert!(!h.verify(&pw, None).await);
        assert!(!h.verify(&pw, None).await);
        let after = h.stats();
        assert_eq!(
            after.hashes, 0,
            "verifying an unknown account builds nothing"
        );
        assert_eq!(after.verifications, 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn argon2_max_concurrent_bounds_the_hashes_running_at_once() {
        for max in [1_u32, 2, 3] {
            let h = Arc::new(hasher_with(max).await);
            let pw = Password::parse("correct horse battery").unwrap();
            let hash = h.hash(&pw).await.unwrap();
            let tasks: Vec<_> = (0..8)
                .map(|i| {
                    let (h, pw, hash) = (h.clone(), pw.clone(), hash.clone());
                    tokio::spawn(async move {
                        if i % 2 == 0 {
                            h.verify(&pw, Some(&hash)).await
                        } else {
                            h.hash(&pw).await.is_ok()
                        }
                    })
                })
                .collect();
            for task in tasks {
                assert!(task.await.unwrap());
            }
            let stats = h.stats();
            assert_eq!(stats.hashes, 1 + 4);
            assert_eq!(stats.verifications, 4);
            assert!(
                stats.peak_concurrent <= max as usize,
                "max {max}: {} ran at once",
                stats.peak_concurrent
            );
            // The gauge does see overlap when it is allowed (so the bound above means something).
            if max > 1 {
                assert!(stats.peak_concurrent > 1, "max {max}: {stats:?}");
            }
        }
    }

    #[tokio::test]
    async fn impossible_parameters_are_refused() {
        let bad = Argon2Settings {
            memory_kib: 1,
            ..Argon2Settings::default()
        };
        assert!(matches!(
            PasswordHasher::new(&bad, Arc::new(SeededRandom::new(1))).await,
            Err(HasherError::InvalidParams(_))
        ));
    }
}
