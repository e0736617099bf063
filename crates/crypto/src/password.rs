//! Argon2id for human passwords (RFC 9106), as pure computation: hash with a given salt, verify
//! a PHC string, and form the dummy hash unknown accounts are checked against.
//!
//! Each hash takes `memory_kib` of memory and tens of milliseconds of CPU, so callers must not
//! run these functions on an async executor thread. The process's `svc_domain::PasswordHasher`
//! (in `svc-runtime`) runs them off the runtime behind a semaphore; this module stays free of
//! any runtime so both engines can share the computation without sharing a crate with tokio.
//!
//! Hashes are PHC strings (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`), so a hash made under older
//! parameters still verifies after the configuration changes.

use argon2::{Algorithm, Argon2, Params, PasswordHasher as _, PasswordVerifier as _, Version};
use base64::Engine;
use base64::engine::general_purpose::STANDARD_NO_PAD;
use std::fmt;
use svc_domain::{HasherError, Password, PasswordHash, Rng};

/// Bytes of random salt per hash (RFC 9106 §3.1 recommends 16).
pub const SALT_LEN: usize = 16;

/// Bytes of the digest in a dummy hash (Argon2's default output length).
const DIGEST_LEN: usize = 32;

/// Argon2id under fixed cost parameters.
#[derive(Clone)]
pub struct Argon2id {
    params: Params,
}

impl fmt::Debug for Argon2id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Argon2id")
            .field("memory_kib", &self.params.m_cost())
            .field("iterations", &self.params.t_cost())
            .field("parallelism", &self.params.p_cost())
            .finish()
    }
}

impl Argon2id {
    /// Argon2id costing `memory_kib` KiB, `iterations` passes and `parallelism` lanes.
    ///
    /// Errors: [`HasherError::InvalidParams`] when Argon2 does not accept them.
    pub fn new(memory_kib: u32, iterations: u32, parallelism: u32) -> Result<Self, HasherError> {
        let params = Params::new(memory_kib, iterations, parallelism, None)
            .map_err(|e| HasherError::InvalidParams(e.to_string()))?;
        Ok(Self { params })
    }

    /// A fresh salt drawn from `rng`.
    pub fn salt(rng: &dyn Rng) -> [u8; SALT_LEN] {
        let mut salt = [0u8; SALT_LEN];
        rng.fill(&mut salt);
        salt
    }

    /// The PHC hash of `password` with `salt` under these parameters. Slow by design.
    ///
    /// Errors: [`HasherError::Failed`] when Argon2 refuses the input.
    pub fn hash(
        &self,
        password: &Password,
        salt: &[u8; SALT_LEN],
    ) -> Result<PasswordHash, HasherError> {
        Argon2::new(Algorithm::Argon2id, Version::V0x13, self.params.clone())
            .hash_password_with_salt(password.expose().as_bytes(), salt)
            .map(|h| PasswordHash::new(h.to_string()))
            .map_err(|e| HasherError::Failed(e.to_string()))
    }

    /// A well-formed Argon2id hash of these parameters with a random salt and a random digest,
    /// drawn from `rng`. Verifying against it costs exactly one hash computation and can never
    /// succeed (no password is known to produce the digest), and forming it costs none, so it
    /// can be made at startup and stand in for accounts without a password.
    pub fn dummy_hash(&self, rng: &dyn Rng) -> PasswordHash {
        let mut salt = [0u8; SALT_LEN];
        let mut digest = [0u8; DIGEST_LEN];
        rng.fill(&mut salt);
        rng.fill(&mut digest);
        PasswordHash::new(format!(
            "$argon2id$v=19$m={},t={},p={}${}${}",
            self.params.m_cost(),
            self.params.t_cost(),
            self.params.p_cost(),
            STANDARD_NO_PAD.encode(salt),
            STANDARD_NO_PAD.encode(digest)
        ))
    }
}

/// Whether `password` matches `hash`, under the parameters `hash` names (so hashes made under
/// older parameters still verify). Slow by design.
///
/// Errors: [`HasherError::Failed`] when `hash` is not a PHC string Argon2 can check; a
/// mismatch is `Ok(false)`, not an error.
pub fn verify_password(password: &Password, hash: &PasswordHash) -> Result<bool, HasherError> {
    match Argon2::default().verify_password(password.expose().as_bytes(), hash.as_str()) {
        Ok(()) => Ok(true),
        Err(argon2::password_hash::Error::PasswordInvalid) => Ok(false),
        Err(e) => Err(HasherError::Failed(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use svc_domain::SeededRandom;

    fn cheap() -> Argon2id {
        Argon2id::new(8192, 1, 1).unwrap()
    }

    fn pw(raw: &str) -> Password {
        Password::parse(raw).unwrap()
    }

    #[test]
    fn hashes_are_argon2id_phc_and_verify_only_their_password() {
        let argon = cheap();
        let rng = SeededRandom::new(5);
        let hash = argon
            .hash(&pw("correct horse battery"), &Argon2id::salt(&rng))
            .unwrap();
        assert!(
            hash.as_str().starts_with("$argon2id$v=19$m=8192,t=1,p=1$"),
            "{}",
            hash.as_str()
        );
        assert_eq!(
            verify_password(&pw("correct horse battery"), &hash),
            Ok(true)
        );
        assert_eq!(
            verify_password(&pw("correct horse battery!"), &hash),
            Ok(false)
        );
        // Another salt, another hash; both verify.
        let again = argon
            .hash(&pw("correct horse battery"), &Argon2id::salt(&rng))
            .unwrap();
        assert_ne!(again, hash);
        assert_eq!(
            verify_password(&pw("correct horse battery"), &again),
            Ok(true)
        );
    }

    #[test]
    fn the_same_salt_gives_the_same_hash() {
        // Pinned: the same input, parameters and salt give this PHC string, as they did before
        // hashing moved here from svc-authn (the value was taken from that implementation).
        let salt = [7u8; SALT_LEN];
        let a = cheap().hash(&pw("correct horse battery"), &salt).unwrap();
        let b = cheap().hash(&pw("correct horse battery"), &salt).unwrap();
        assert_eq!(a, b);
        assert_eq!(
            a.as_str(),
            "$argon2id$v=19$m=8192,t=1,p=1$BwcHBwcHBwcHBwcHBwcHBw$\
             HvUW8YJgIGTuBoO90Ui16tuJ8JOOjSfhH47uPEwbF6Y"
        );
        // The dummy hash keeps its shape too: salt, then digest, drawn in that order.
        assert_eq!(
            cheap().dummy_hash(&Sevens).as_str(),
            "$argon2id$v=19$m=8192,t=1,p=1$BwcHBwcHBwcHBwcHBwcHBw$\
             BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc"
        );
    }

    /// Every byte 7: salts and dummy digests that are easy to recognise.
    struct Sevens;

    impl Rng for Sevens {
        fn fill(&self, buf: &mut [u8]) {
            buf.fill(7);
        }
    }

    #[test]
    fn hashes_made_under_older_parameters_still_verify() {
        let older = Argon2id::new(9216, 2, 1).unwrap();
        let hash = older
            .hash(&pw("correct horse battery"), &[1u8; SALT_LEN])
            .unwrap();
        assert_eq!(
            verify_password(&pw("correct horse battery"), &hash),
            Ok(true)
        );
    }

    #[test]
    fn garbage_hashes_are_errors_not_matches() {
        let garbage = PasswordHash::new("$argon2id$nonsense".to_owned());
        assert!(matches!(
            verify_password(&pw("correct horse battery"), &garbage),
            Err(HasherError::Failed(_))
        ));
    }

    #[test]
    fn the_dummy_hash_is_a_real_hash_of_the_current_parameters_that_never_matches() {
        let argon = cheap();
        let dummy = argon.dummy_hash(&SeededRandom::new(5));
        assert!(dummy.as_str().starts_with("$argon2id$v=19$m=8192,t=1,p=1$"));
        // It parses as a real hash of the current parameters (so verifying against it runs
        // the whole computation and fails only at the comparison).
        let parsed = argon2::password_hash::phc::PasswordHash::new(dummy.as_str()).unwrap();
        assert_eq!(parsed.algorithm.as_str(), "argon2id");
        let read = Params::try_from(&parsed).unwrap();
        assert_eq!((read.m_cost(), read.t_cost(), read.p_cost()), (8192, 1, 1));
        assert_eq!(
            verify_password(&pw("correct horse battery"), &dummy),
            Ok(false)
        );
    }

    #[test]
    fn impossible_parameters_are_refused() {
        assert!(matches!(
            Argon2id::new(1, 3, 1),
            Err(HasherError::InvalidParams(_))
        ));
    }
}
