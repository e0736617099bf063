//! Envelope encryption under the master key: the wrapped-key format, the keyring that holds the
//! active master key (and any retired ones still able to unwrap), and the wrap/unwrap operations.
//!
//! Wrapped-key format, version 1 (all lengths in bytes):
//!
//! ```text
//! version (1) = 0x01 | master key id (8) | nonce (24) | XChaCha20-Poly1305 ciphertext + tag (16)
//! ```
//!
//! The associated data is `"svc-kms wrap v1\0" || version || master key id || context`, so a
//! wrapped key only unwraps under the exact `context` it was wrapped with (a data key copied to
//! another tenant or key id fails), and the header cannot be edited either. XChaCha20-Poly1305 is
//! used because its 192-bit nonces can be drawn at random for any number of wraps without a
//! collision budget (AES-GCM's 96-bit random nonces would cap a key at ~2^32 wraps), and because
//! `snow` already brings the same primitive into the binary.
//!
//! The master key id is the first 8 bytes of BLAKE2s-256 over a fixed label and the key: stable,
//! derived (so a key file cannot carry a wrong id), and revealing nothing usable about the key. It
//! lets the daemon rotate master keys later: new wraps use the active key, unwraps pick the key
//! the ciphertext names.

use blake2::{Blake2s256, Digest};
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};

use std::fmt;
use zeroize::Zeroizing;

/// The format version this KMS writes (and the only one it reads).
pub const FORMAT_V1: u8 = 1;
/// Largest plaintext the KMS wraps: data keys are 32 bytes, so 4 KiB leaves room for small
/// key bundles without turning the KMS into a bulk encryption service.
pub const MAX_PLAINTEXT_LEN: usize = 4096;
/// Largest context (associated data) accepted.
pub const MAX_CONTEXT_LEN: usize = 1024;

const KEY_ID_LEN: usize = 8;
const NONCE_LEN: usize = 24;
const TAG_LEN: usize = 16;
const HEADER_LEN: usize = 1 + KEY_ID_LEN;
/// Largest wrapped key: the header, a nonce, the largest plaintext and the tag.
pub const MAX_CIPHERTEXT_LEN: usize = HEADER_LEN + NONCE_LEN + MAX_PLAINTEXT_LEN + TAG_LEN;
const AAD_LABEL: &[u8] = b"svc-kms wrap v1\0";
const KEY_ID_LABEL: &[u8] = b"svc-kms master key id v1\0";

/// The public, derived identifier of a master key (shown in hex).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct MasterKeyId([u8; KEY_ID_LEN]);

impl fmt::Display for MasterKeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for MasterKeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MasterKeyId({self})")
    }
}

/// A 256-bit master key. Zeroed on drop; `Debug` shows only its id.
#[derive(Clone)]
pub struct MasterKey {
    id: MasterKeyId,
    key: Zeroizing<[u8; 32]>,
    // Built once: the cipher zeroes its own copy of the key on drop.
    cipher: XChaCha20Poly1305,
}

impl MasterKey {
    /// Wraps raw key bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        let key = Zeroizing::new(bytes);
        let mut hasher = Blake2s256::new();
        hasher.update(KEY_ID_LABEL);
        hasher.update(key.as_slice());
        let digest = hasher.finalize();
        let mut id = [0u8; KEY_ID_LEN];
        id.copy_from_slice(&digest[..KEY_ID_LEN]);
        let cipher = XChaCha20Poly1305::new(<&Key>::from(&*key));
        Self {
            id: MasterKeyId(id),
            key,
            cipher,
        }
    }

    /// Draws a fresh key from the operating system's random source.
    pub fn generate() -> Result<Self, getrandom::Error> {
        let mut bytes = Zeroizing::new([0u8; 32]);
        getrandom::fill(bytes.as_mut_slice())?;
        Ok(Self::from_bytes(*bytes))
    }

    /// The key's public identifier.
    pub fn id(&self) -> MasterKeyId {
        self.id
    }

    pub(crate) fn expose(&self) -> &[u8; 32] {
        &self.key
    }

    fn cipher(&self) -> &XChaCha20Poly1305 {
        &self.cipher
    }
}

impl fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MasterKey(id {})", self.id)
    }
}

/// Why a wrap or unwrap was refused. The message goes back to the client as-is, so it never
/// contains key material or plaintext.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WrapError {
    /// The plaintext exceeds [`MAX_PLAINTEXT_LEN`].
    #[error("plaintext is {len} bytes; the KMS wraps at most {MAX_PLAINTEXT_LEN} bytes")]
    PlaintextTooLarge {
        /// Its length.
        len: usize,
    },
    /// The context is empty or exceeds [`MAX_CONTEXT_LEN`].
    #[error("context must be 1 to {MAX_CONTEXT_LEN} bytes (got {len})")]
    Context {
        /// Its length.
        len: usize,
    },
    /// Shorter than any ciphertext this KMS writes.
    #[error("ciphertext is too short ({len} bytes) to be an svc-kms wrapped key")]
    Truncated {
        /// Its length.
        len: usize,
    },
    /// Longer than any ciphertext this KMS writes.
    #[error("ciphertext is {len} bytes; no svc-kms wrapped key exceeds {MAX_CIPHERTEXT_LEN}")]
    Oversized {
        /// Its length.
        len: usize,
    },
    /// An unknown format version.
    #[error("ciphertext format version {0} is not supported (this KMS reads version {FORMAT_V1})")]
    UnsupportedVersion(u8),
    /// Wrapped under a master key this keyring does not hold.
    #[error("ciphertext was wrapped under master key {0}, which this KMS does not hold")]
    UnknownMasterKey(MasterKeyId),
    /// The AEAD tag did not verify.
    #[error(
        "ciphertext failed authentication: it was modified, or wrapped under a different context"
    )]
    Authentication,
    /// The same master key was configured twice.
    #[error("master key {0} is configured more than once")]
    DuplicateMasterKey(MasterKeyId),
    /// The operating system's random source failed.
    #[error("the random number generator failed")]
    Random,
}

/// The master keys a daemon holds: one active key that wraps, plus retired keys that still
/// unwrap what they wrapped before a rotation.
#[derive(Debug, Clone)]
pub struct Keyring {
    active: MasterKey,
    retired: Vec<MasterKey>,
}

impl Keyring {
    /// Builds a keyring; refuses the same key (by id) twice.
    pub fn new(active: MasterKey, retired: Vec<MasterKey>) -> Result<Self, WrapError> {
        let mut seen = vec![active.id()];
        for key in &retired {
            if seen.contains(&key.id()) {
                return Err(WrapError::DuplicateMasterKey(key.id()));
            }
            seen.push(key.id());
        }
        Ok(Self { active, retired })
    }

    /// The id new wraps are made under.
    pub fn active_id(&self) -> MasterKeyId {
        self.active.id()
    }

    /// The ids that can still unwrap but no longer wrap.
    pub fn retired_ids(&self) -> Vec<MasterKeyId> {
        self.retired.iter().map(MasterKey::id).collect()
    }

    /// Encrypts `plaintext` under the active master key, bound to `context`.
    pub fn wrap(&self, context: &str, plaintext: &[u8]) -> Result<Vec<u8>, WrapError> {
        check_context(context)?;
        if plaintext.len() > MAX_PLAINTEXT_LEN {
            return Err(WrapError::PlaintextTooLarge {
                len: plaintext.len(),
            });
        }
        let mut header = [0u8; HEADER_LEN];
        header[0] = FORMAT_V1;
        header[1..].copy_from_slice(&self.active.id().0);
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|_| WrapError::Random)?;
        let aad = associated_data(&header, context);
        let sealed = self
            .active
            .cipher()
            .encrypt(
                &XNonce::from(nonce),
                Payload {
                    msg: plaintext,
                    aad: &aad,
                },
            )
            // Encryption only fails for inputs far beyond MAX_PLAINTEXT_LEN.
            .map_err(|_| WrapError::PlaintextTooLarge {
                len: plaintext.len(),
            })?;
        let mut out = Vec::with_capacity(HEADER_LEN + NONCE_LEN + sealed.len());
        out.extend_from_slice(&header);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    /// Decrypts a wrapped key, provided it was wrapped under `context` by a key of this keyring
    /// and not modified since.
    pub fn unwrap(
        &self,
        context: &str,
        ciphertext: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>, WrapError> {
        check_context(context)?;
        if ciphertext.len() < HEADER_LEN + NONCE_LEN + TAG_LEN {
            return Err(WrapError::Truncated {
                len: ciphertext.len(),
            });
        }
        if ciphertext.len() > MAX_CIPHERTEXT_LEN {
            return Err(WrapError::Oversized {
                len: ciphertext.len(),
            });
        }
        let (header, rest) = ciphertext.split_at(HEADER_LEN);
        if header[0] != FORMAT_V1 {
            return Err(WrapError::UnsupportedVersion(header[0]));
        }
        let mut id = [0u8; KEY_ID_LEN];
        id.copy_from_slice(&header[1..]);
        let id = MasterKeyId(id);
        let key = std::iter::once(&self.active)
            .chain(&self.retired)
            .find(|k| k.id() == id)
            .ok_or(WrapError::UnknownMasterKey(id))?;
        let (nonce, sealed) = rest.split_at(NONCE_LEN);
        let mut nonce_bytes = [0u8; NONCE_LEN];
        nonce_bytes.copy_from_slice(nonce);
        let aad = associated_data(header, context);
        key.cipher()
            .decrypt(
                &XNonce::from(nonce_bytes),
                Payload {
                    msg: sealed,
                    aad: &aad,
                },
            )
            .map(Zeroizing::new)
            .map_err(|_| WrapError::Authentication)
    }
}

fn check_context(context: &str) -> Result<(), WrapError> {
    if context.is_empty() || context.len() > MAX_CONTEXT_LEN {
        return Err(WrapError::Context { len: context.len() });
    }
    Ok(())
}

fn associated_data(header: &[u8], context: &str) -> Vec<u8> {
    // The header has a fixed length and the context comes last, so the concatenation is
    // unambiguous without a length prefix.
    let mut aad = Vec::with_capacity(AAD_LABEL.len() + header.len() + context.len());
    aad.extend_from_slice(AAD_LABEL);
    aad.extend_from_slice(header);
    aad.extend_from_slice(context.as_bytes());
    aad
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring() -> Keyring {
        Keyring::new(MasterKey::from_bytes([1; 32]), vec![]).unwrap()
    }

    #[test]
    fn round_trip_and_layout() {
        let ring = ring();
        let ct = ring.wrap("tenant:a/key:1", b"data key").unwrap();
        assert_eq!(ct.len(), 1 + 8 + 24 + 8 + 16);
        assert_eq!(ct[0], FORMAT_V1);
        assert_eq!(&ct[1..9], &ring.active_id().0);
        assert_eq!(&*ring.unwrap("tenant:a/key:1", &ct).unwrap(), b"data key");
        // Random nonces: the same input never wraps to the same bytes.
        assert_ne!(ct, ring.wrap("tenant:a/key:1", b"data key").unwrap());
    }

    #[test]
    fn context_header_and_body_are_all_authenticated() {
        let ring = ring();
        let ct = ring.wrap("tenant:a", &[5; 32]).unwrap();
        assert_eq!(
            ring.unwrap("tenant:b", &ct).unwrap_err(),
            WrapError::Authentication
        );
        for i in [9, 20, 33, ct.len() - 1] {
            let mut bad = ct.clone();
            bad[i] ^= 0x01;
            assert_eq!(
                ring.unwrap("tenant:a", &bad).unwrap_err(),
                WrapError::Authentication,
                "byte {i}"
            );
        }
        let mut bad = ct.clone();
        bad[0] = 2;
        assert_eq!(
            ring.unwrap("tenant:a", &bad).unwrap_err(),
            WrapError::UnsupportedVersion(2)
        );
        let mut bad = ct.clone();
        bad[3] ^= 0xFF;
        assert!(matches!(
            ring.unwrap("tenant:a", &bad).unwrap_err(),
            WrapError::UnknownMasterKey(_)
        ));
        assert_eq!(
            ring.unwrap("tenant:a", &ct[..40]).unwrap_err(),
            WrapError::Truncated { len: 40 }
        );
    }

    #[test]
    fn limits_are_enforced() {
        let ring = ring();
        assert!(ring.wrap("c", &[0; MAX_PLAINTEXT_LEN]).is_ok());
        assert_eq!(
            ring.wrap("c", &[0; MAX_PLAINTEXT_LEN + 1]).unwrap_err(),
            WrapError::PlaintextTooLarge {
                len: MAX_PLAINTEXT_LEN + 1
            }
        );
        assert_eq!(
            ring.wrap("", b"k").unwrap_err(),
            WrapError::Context { len: 0 }
        );
        let long = "x".repeat(MAX_CONTEXT_LEN + 1);
        assert_eq!(
            ring.wrap(&long, b"k").unwrap_err(),
            WrapError::Context {
                len: MAX_CONTEXT_LEN + 1
            }
        );
        assert_eq!(
            ring.unwrap("c", &vec![1; MAX_CIPHERTEXT_LEN + 1])
                .unwrap_err(),
            WrapError::Oversized {
                len: MAX_CIPHERTEXT_LEN + 1
            }
        );
    }

    #[test]
    fn a_retired_key_still_unwraps_after_rotation() {
        let old = MasterKey::from_bytes([1; 32]);
        let new = MasterKey::from_bytes([2; 32]);
        let ct = Keyring::new(old.clone(), vec![])
            .unwrap()
            .wrap("c", b"k")
            .unwrap();
        let rotated = Keyring::new(new.clone(), vec![old.clone()]).unwrap();
        assert_eq!(&*rotated.unwrap("c", &ct).unwrap(), b"k");
        assert_eq!(rotated.wrap("c", b"k").unwrap()[1..9], new.id().0);
        let without_old = Keyring::new(new, vec![]).unwrap();
        assert_eq!(
            without_old.unwrap("c", &ct).unwrap_err(),
            WrapError::UnknownMasterKey(old.id())
        );
        assert_eq!(
            Keyring::new(old.clone(), vec![old.clone()]).unwrap_err(),
            WrapError::DuplicateMasterKey(old.id())
        );
    }

    #[test]
    fn ids_are_stable_distinct_and_debug_hides_the_key() {
        let a = MasterKey::from_bytes([1; 32]);
        assert_eq!(a.id(), MasterKey::from_bytes([1; 32]).id());
        assert_ne!(a.id(), MasterKey::from_bytes([2; 32]).id());
        assert_eq!(a.id().to_string().len(), 16);
        assert_eq!(format!("{a:?}"), format!("MasterKey(id {})", a.id()));
        assert_ne!(
            MasterKey::generate().unwrap().id(),
            MasterKey::generate().unwrap().id()
        );
    }
}
