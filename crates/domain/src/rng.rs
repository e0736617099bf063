//! Randomness as a parameter: ids, secrets and jitter draw from `&dyn Rng` so tests can make them
//! reproducible while production uses the operating system's CSPRNG.

use rand::{RngCore, SeedableRng, rngs::StdRng};
use std::sync::Mutex;

/// A source of random bytes.
pub trait Rng: Send + Sync + 'static {
    /// Fills `buf` with random bytes.
    fn fill(&self, buf: &mut [u8]);

    /// A random `u128`, e.g. for the random part of an id.
    fn next_u128(&self) -> u128 {
        let mut bytes = [0u8; 16];
        self.fill(&mut bytes);
        u128::from_le_bytes(bytes)
    }
}

/// The production generator: the operating system's entropy, drawn through `rand`'s
/// thread-local ChaCha12 generator (seeded from the operating system and reseeded as it goes),
/// which is cryptographically secure and costs no system call per id or secret.
#[derive(Debug, Clone, Copy, Default)]
pub struct OsRandom;

impl Rng for OsRandom {
    fn fill(&self, buf: &mut [u8]) {
        rand::rng().fill_bytes(buf);
    }
}

/// A deterministic generator for tests. Never use it for secrets.
#[derive(Debug)]
pub struct SeededRandom(Mutex<StdRng>);

impl SeededRandom {
    /// A generator that yields the same sequence for the same seed.
    pub fn new(seed: u64) -> Self {
        Self(Mutex::new(StdRng::seed_from_u64(seed)))
    }
}

impl Rng for SeededRandom {
    fn fill(&self, buf: &mut [u8]) {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .fill_bytes(buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_random_is_reproducible_and_os_random_varies() {
        assert_eq!(
            SeededRandom::new(7).next_u128(),
            SeededRandom::new(7).next_u128()
        );
        assert_ne!(
            SeededRandom::new(7).next_u128(),
            SeededRandom::new(8).next_u128()
        );
        assert_ne!(OsRandom.next_u128(), OsRandom.next_u128());
    }
}
