//! The process's [`PasswordHasher`]: Argon2id ([`svc_crypto::Argon2id`]) off the async runtime,
//! with bounded concurrency.
//!
//! Each hash takes `memory_kib` of memory and tens of milliseconds of CPU, so it runs on
//! `spawn_blocking` behind a semaphore of `max_concurrent` permits (ARCHITECTURE.md "Argon2id
//! runs off the async runtime with bounded concurrency"): a burst of sign-ins queues instead of
//! exhausting memory. The permit travels into the blocking task and is released only when the
//! hash is done, so a caller that gives up (client disconnect) does not free a permit while its
//! hash still runs.
//!
//! It lives here, not in an engine, because it needs tokio (which `svc-crypto` must not reach)
//! and both engines that handle passwords use it (which neither may import from the other): the
//! runtime builds one and hands it to both as `Arc<dyn PasswordHasher>`, so one semaphore bounds
//! hashing across every surface of the process.
//!
//! The dummy hash that unknown accounts are checked against is formed when the hasher is built
//! ([`BoundedHasher::new`]) from random bytes, never computed on a request: the first sign-in
//! of an unknown address would otherwise cost two hashes and stand out by its timing.

use async_trait::async_trait;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use svc_crypto::Argon2id;
use svc_domain::{HasherError, Password, PasswordHash, PasswordHasher, Rng};
use tokio::sync::Semaphore;

/// Argon2id cost parameters and how many hashes may run at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Argon2Settings {
    /// Memory cost in KiB (`[auth].argon2_memory_kib`).
    pub(crate) memory_kib: u32,
    /// Passes over memory (`[auth].argon2_iterations`).
    pub(crate) iterations: u32,
    /// Lanes (`[auth].argon2_parallelism`).
    pub(crate) parallelism: u32,
    /// Hashes computed at once per process (`[auth].argon2_max_concurrent`).
    pub(crate) max_concurrent: u32,
}

/// What the hasher has done so far.
#[cfg(test)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct HasherStats {
    /// Hashes computed (the dummy hash is formed, not computed, so it never counts).
    pub(crate) hashes: u64,
    /// Verifications run.
    pub(crate) verifications: u64,
    /// Most Argon2 computations, of either kind, that ran at the same moment.
    pub(crate) peak_concurrent: usize,
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

/// Hashes and verifies passwords with Argon2id on the blocking pool, at most `max_concurrent`
/// at once. Build one per process and share it.
pub(crate) struct BoundedHasher {
    argon: Argon2id,
    permits: Arc<Semaphore>,
    rng: Arc<dyn Rng>,
    /// Hash of nothing anyone knows under the current parameters, formed at construction:
    /// verifying against it makes an unknown account cost what a known one costs.
    dummy: PasswordHash,
    counters: Arc<Counters>,
}

impl fmt::Debug for BoundedHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoundedHasher")
            .field("argon", &self.argon)
            .finish_non_exhaustive()
    }
}

impl BoundedHasher {
    /// A hasher with `settings`, drawing salts from `rng`. The dummy hash costs no hash
    /// computation ([`Argon2id::dummy_hash`]), so startup stays fast.
    ///
    /// Errors: [`HasherError::InvalidParams`] when Argon2 does not accept the costs.
    pub(crate) fn new(settings: &Argon2Settings, rng: Arc<dyn Rng>) -> Result<Self, HasherError> {
        let argon = Argon2id::new(
            settings.memory_kib,
            settings.iterations,
            settings.parallelism,
        )?;
        let permits = usize::try_from(settings.max_concurrent.max(1)).unwrap_or(1);
        let dummy = argon.dummy_hash(rng.as_ref());
        Ok(Self {
            argon,
            permits: Arc::new(Semaphore::new(permits)),
            rng,
            dummy,
            counters: Arc::new(Counters::default()),
        })
    }

    /// Counters of the work done so far.
    #[cfg(test)]
    pub(crate) fn stats(&self) -> HasherStats {
        HasherStats {
            hashes: self.counters.hashes.load(Ordering::SeqCst),
            verifications: self.counters.verifications.load(Ordering::SeqCst),
            peak_concurrent: self.counters.peak.load(Ordering::SeqCst),
        }
    }
}

#[async_trait]
impl PasswordHasher for BoundedHasher {
    async fn hash(&self, password: &Password) -> Result<PasswordHash, HasherError> {
        // The salt is drawn before queueing, as before the move, so a seeded generator gives
        // the same hashes.
        let salt = Argon2id::salt(self.rng.as_ref());
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| HasherError::Failed(e.to_string()))?;
        let (argon, password, counters) =
            (self.argon.clone(), password.clone(), self.counters.clone());
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let _running = Running::start(&counters);
            counters.hashes.fetch_add(1, Ordering::SeqCst);
            argon.hash(&password, &salt)
        })
        .await
        .map_err(|e| HasherError::Failed(e.to_string()))?
    }

    /// A malformed stored hash or a failed task answers false, logged without any secret.
    async fn verify(&self, password: &Password, hash: Option<&PasswordHash>) -> bool {
        let (hash, real) = match hash {
            Some(hash) => (hash.clone(), true),
            None => (self.dummy.clone(), false),
        };
        let Ok(permit) = self.permits.clone().acquire_owned().await else {
            return false;
        };
        let (candidate, counters) = (password.clone(), self.counters.clone());
        let outcome = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let _running = Running::start(&counters);
            counters.verifications.fetch_add(1, Ordering::SeqCst);
            svc_crypto::verify_password(&candidate, &hash)
        })
        .await;
        match outcome {
            Ok(Ok(matched)) => matched && real,
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
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use svc_domain::SeededRandom;

    fn hasher_with(max_concurrent: u32) -> BoundedHasher {
        let settings = Argon2Settings {
            memory_kib: 8192,
            iterations: 1,
            parallelism: 1,
            max_concurrent,
        };
        BoundedHasher::new(&settings, Arc::new(SeededRandom::new(5))).unwrap()
    }

    fn hasher() -> BoundedHasher {
        hasher_with(2)
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
        assert!(!h.verify(&pw, None).await);
        let garbage = PasswordHash::new("$argon2id$nonsense".to_owned());
        assert!(!h.verify(&pw, Some(&garbage)).await);
    }

    #[tokio::test]
    async fn hashes_made_under_older_parameters_still_verify() {
        let older = BoundedHasher::new(
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

    #[tokio::test]
    async fn the_dummy_hash_exists_once_built_so_unknown_accounts_cost_one_verification() {
        let h = hasher();
        assert!(
            h.dummy
                .as_str()
                .starts_with("$argon2id$v=19$m=8192,t=1,p=1$")
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
            let h = Arc::new(hasher_with(max));
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
            iterations: 3,
            parallelism: 1,
            max_concurrent: 4,
        };
        assert!(matches!(
            BoundedHasher::new(&bad, Arc::new(SeededRandom::new(1))),
            Err(HasherError::InvalidParams(_))
        ));
    }

    #[tokio::test]
    async fn a_seeded_generator_gives_the_hashes_it_gave_before_the_move() {
        // Same draws in the same order as the hasher in svc-authn had (dummy salt and digest at
        // construction, then one salt per hash), so stored hashes and tests stay reproducible.
        let rng = Arc::new(SeededRandom::new(5));
        let h = BoundedHasher::new(
            &Argon2Settings {
                memory_kib: 8192,
                iterations: 1,
                parallelism: 1,
                max_concurrent: 1,
            },
            rng,
        )
        .unwrap();
        let replay = SeededRandom::new(5);
        let argon = Argon2id::new(8192, 1, 1).unwrap();
        assert_eq!(h.dummy, argon.dummy_hash(&replay));
        let pw = Password::parse("correct horse battery").unwrap();
        assert_eq!(
            h.hash(&pw).await.unwrap(),
            argon.hash(&pw, &Argon2id::salt(&replay)).unwrap()
        );
    }
}
