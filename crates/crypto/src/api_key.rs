//! The keyed hash of API keys (`svck_…`, CONTRACTS.md "Organizations, roles, keys, SCIM":
//! "stored hashed (keyed hash, constant-time compare)").
//!
//! A key is stored as `HMAC-SHA-256(K, tenant_id "|" key)`, where `K` is derived (HMAC-SHA-256
//! with its own label) from the deployment's data key: the same 32-byte key the second factors
//! use, generated once, wrapped by `svc-kms` and stored only wrapped, unwrapped into memory at
//! start (`svc-runtime`'s data-key custody). Why this key and not another that exists:
//!
//! - The tenant's pairwise secret (and the DPoP nonce key derived from it) sits in the
//!   `tenants` table in the clear: a copy of the database would carry the key beside the
//!   hashes, and the keyed hash would add nothing over SHA-256.
//! - The KMS itself cannot be asked on every request (a round trip per management call); the
//!   unwrapped data key is in memory already, and a stolen database (or backup) holds only its
//!   wrapped form, which opens nowhere but at the KMS.
//! - A separate deployment secret in the configuration would be one more secret to manage and
//!   rotate, for the same property.
//!
//! The tenant id in the input binds a hash to its tenant: the same key presented at another
//! tenant hashes differently, on top of the lookup being scoped to the addressed tenant. The
//! hash is the lookup key (the key has 256 bits, so an index reveals nothing by its speed), and
//! the stored hash is compared again in constant time after the lookup. Without `[kms]`
//! (development only) the data key lives in memory: keys issued then stop working on restart,
//! as enrolled authenticators do.

use crate::CryptoError;
use aws_lc_rs::{constant_time, hmac};
use std::fmt;
use svc_domain::{API_KEY_PREFIX, GeneratedSecret, Rng, SecretHash, TenantId, base32_secret};
use zeroize::Zeroizing;

/// Hashes API keys for storage and lookup under the deployment's key.
pub struct ApiKeyHasher {
    key: hmac::Key,
}

impl fmt::Debug for ApiKeyHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKeyHasher(<redacted>)")
    }
}

impl ApiKeyHasher {
    /// The hasher of the deployment data key `master` (32 bytes).
    ///
    /// # Errors
    /// [`CryptoError::InvalidDataKey`] unless exactly 32 bytes.
    pub fn new(master: &[u8]) -> Result<Self, CryptoError> {
        if master.len() != 32 {
            return Err(CryptoError::InvalidDataKey);
        }
        // A label of its own: the data key never serves two algorithms directly.
        let tag = hmac::sign(
            &hmac::Key::new(hmac::HMAC_SHA256, master),
            b"svc api keys hash v1",
        );
        let derived = Zeroizing::new(tag.as_ref().to_vec());
        Ok(Self {
            key: hmac::Key::new(hmac::HMAC_SHA256, &derived),
        })
    }

    /// The stored form of `key` presented at `tenant`.
    #[must_use]
    pub fn hash(&self, tenant: &TenantId, key: &str) -> SecretHash {
        let mut ctx = hmac::Context::with_key(&self.key);
        ctx.update(tenant.as_str().as_bytes());
        ctx.update(b"|");
        ctx.update(key.as_bytes());
        let tag = ctx.sign();
        // HMAC-SHA-256 is 32 bytes, the size of a stored hash.
        SecretHash::from_bytes(tag.as_ref()).unwrap_or_else(|| SecretHash::of(key))
    }

    /// Whether `presented` at `tenant` is the key `stored` was made from, compared in constant
    /// time.
    #[must_use]
    pub fn verify(&self, tenant: &TenantId, presented: &str, stored: &SecretHash) -> bool {
        let hash = self.hash(tenant, presented);
        constant_time::verify_slices_are_equal(hash.as_bytes(), stored.as_bytes()).is_ok()
    }

    /// A fresh key of `tenant` (`svck_` and 256 random bits in base32) with its stored form.
    #[must_use]
    pub fn generate(&self, tenant: &TenantId, rng: &dyn Rng) -> GeneratedSecret {
        let plaintext = base32_secret(API_KEY_PREFIX, rng);
        let hash = self.hash(tenant, &plaintext);
        GeneratedSecret { plaintext, hash }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::{ManualClock, SeededRandom, looks_like_api_key};
    use time::OffsetDateTime;

    fn tenant(seed: u64) -> TenantId {
        TenantId::generate(
            &ManualClock::new(OffsetDateTime::UNIX_EPOCH),
            &SeededRandom::new(seed),
        )
    }

    #[test]
    fn keys_verify_only_at_their_tenant_under_their_deployment_key() {
        let hasher = ApiKeyHasher::new(&[7; 32]).unwrap();
        let (acme, other) = (tenant(1), tenant(2));
        let key = hasher.generate(&acme, &SeededRandom::new(3));
        assert!(looks_like_api_key(&key.plaintext));
        assert!(hasher.verify(&acme, &key.plaintext, &key.hash));
        assert!(!hasher.verify(&other, &key.plaintext, &key.hash));
        assert_ne!(hasher.hash(&other, &key.plaintext), key.hash);
        // Not a plain SHA-256: the database alone cannot check a guess.
        assert_ne!(SecretHash::of(&key.plaintext), key.hash);
        let elsewhere = ApiKeyHasher::new(&[8; 32]).unwrap();
        assert!(!elsewhere.verify(&acme, &key.plaintext, &key.hash));
        assert!(ApiKeyHasher::new(&[0; 31]).is_err());
        assert_eq!(format!("{hasher:?}"), "ApiKeyHasher(<redacted>)");
    }
}
