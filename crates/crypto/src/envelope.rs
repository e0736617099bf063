//! Envelope encryption of private signing keys at rest.
//!
//! The KMS wraps only small data keys, so each private key is sealed under its own fresh
//! 256-bit data-encryption key (DEK) with AES-256-GCM; the caller then asks svc-kms to wrap the
//! DEK and stores `wrapped_dek` beside the ciphertext. This module never talks to the KMS.
//!
//! Ciphertext format, version 1 (all offsets in bytes):
//!
//! ```text
//! 0      version  = 0x01
//! 1      alg      = 0x01 ES256 | 0x02 EdDSA | 0x03 RS256
//! 2..14  nonce    96 random bits (NIST SP 800-38D §8.2.2; a fresh DEK per seal makes reuse moot)
//! 14..   AES-256-GCM(PKCS#8 v1 DER) || 16-byte tag
//! ```
//!
//! The GCM additional data is `version || alg || aad`, so the header cannot be altered and a key
//! sealed for one tenant, kid or algorithm does not open under another's `aad`.

use crate::{CryptoError, SigningKey};
use aws_lc_rs::aead::{AES_256_GCM, Aad, NONCE_LEN, Nonce, RandomizedNonceKey};
use std::fmt;
use svc_domain::{SigningAlg, TenantId};
use zeroize::Zeroizing;

/// The only format version this build writes and reads.
const VERSION_1: u8 = 1;
/// Version and algorithm bytes.
const HEADER_LEN: usize = 2;
/// AES-GCM tag length.
const TAG_LEN: usize = 16;

fn alg_byte(alg: SigningAlg) -> u8 {
    match alg {
        SigningAlg::Es256 => 1,
        SigningAlg::EdDsa => 2,
        SigningAlg::Rs256 => 3,
    }
}

fn alg_from_byte(byte: u8) -> Option<SigningAlg> {
    SigningAlg::ALL
        .into_iter()
        .find(|alg| alg_byte(*alg) == byte)
}

/// A private key sealed under a fresh data key. The caller wraps `dek` with the KMS, stores the
/// wrapped DEK and `ciphertext`, and drops this value (which wipes `dek`).
pub struct SealedKey {
    /// The plaintext 256-bit data-encryption key; wiped on drop. Never store it unwrapped.
    pub dek: Zeroizing<[u8; 32]>,
    /// The versioned ciphertext (format in the module documentation).
    pub ciphertext: Vec<u8>,
}

impl fmt::Debug for SealedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SealedKey(dek: [redacted], {} bytes)",
            self.ciphertext.len()
        )
    }
}

/// The conventional additional data for a tenant's signing key: `tenant_id|kid|alg`. Binding
/// all three means a sealed key copied onto another tenant's or another key's row fails to open.
pub fn sealed_key_aad(tenant: &TenantId, kid: &str, alg: SigningAlg) -> String {
    format!("{}|{kid}|{}", tenant.as_str(), alg.as_str())
}

fn gcm_aad(alg: SigningAlg, aad: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER_LEN + aad.len());
    bytes.push(VERSION_1);
    bytes.push(alg_byte(alg));
    bytes.extend_from_slice(aad.as_bytes());
    bytes
}

/// Seals `key`'s PKCS#8 under a fresh random data key with AES-256-GCM, binding `aad`
/// (see [`sealed_key_aad`]).
pub fn seal_private_key(key: &SigningKey, aad: &str) -> Result<SealedKey, CryptoError> {
    let mut dek = Zeroizing::new([0u8; 32]);
    aws_lc_rs::rand::fill(dek.as_mut()).map_err(|_| CryptoError::Generation)?;
    let sealing =
        RandomizedNonceKey::new(&AES_256_GCM, dek.as_ref()).map_err(|_| CryptoError::Seal)?;

    let pkcs8 = key.to_pkcs8()?;
    // Reserve room for the tag so appending it cannot reallocate and strand a copy.
    let mut buf = Zeroizing::new(Vec::with_capacity(pkcs8.len() + TAG_LEN));
    buf.extend_from_slice(&pkcs8);
    let nonce = sealing
        .seal_in_place_append_tag(Aad::from(gcm_aad(key.alg(), aad)), &mut *buf)
        .map_err(|_| CryptoError::Seal)?;

    let mut ciphertext = Vec::with_capacity(HEADER_LEN + NONCE_LEN + buf.len());
    ciphertext.push(VERSION_1);
    ciphertext.push(alg_byte(key.alg()));
    ciphertext.extend_from_slice(nonce.as_ref());
    ciphertext.extend_from_slice(&buf);
    Ok(SealedKey { dek, ciphertext })
}

/// Opens a sealed key with its (already unwrapped) data key and the same `aad` it was sealed
/// with, and parses it as an `alg` key. Any alteration of the ciphertext, a different `aad`
/// or a wrong data key fails with [`CryptoError::Open`].
pub fn open_private_key(
    alg: SigningAlg,
    dek: &[u8],
    ciphertext: &[u8],
    aad: &str,
) -> Result<SigningKey, CryptoError> {
    if dek.len() != 32 {
        return Err(CryptoError::InvalidDataKey);
    }
    let (&[version, alg_id], rest) = ciphertext
        .split_first_chunk::<HEADER_LEN>()
        .ok_or(CryptoError::MalformedSealedKey)?;
    if version != VERSION_1 {
        return Err(CryptoError::UnsupportedSealedKeyVersion(version));
    }
    let found = alg_from_byte(alg_id).ok_or(CryptoError::MalformedSealedKey)?;
    if found != alg {
        return Err(CryptoError::SealedKeyAlgorithmMismatch {
            expected: alg,
            found,
        });
    }
    let (nonce, sealed) = rest
        .split_first_chunk::<NONCE_LEN>()
        .ok_or(CryptoError::MalformedSealedKey)?;
    if sealed.len() < TAG_LEN {
        return Err(CryptoError::MalformedSealedKey);
    }
    let opening = RandomizedNonceKey::new(&AES_256_GCM, dek).map_err(|_| CryptoError::Open)?;
    let mut buf = Zeroizing::new(sealed.to_vec());
    let pkcs8 = opening
        .open_in_place(
            Nonce::assume_unique_for_key(*nonce),
            Aad::from(gcm_aad(alg, aad)),
            &mut buf,
        )
        .map_err(|_| CryptoError::Open)?;
    SigningKey::from_pkcs8(alg, pkcs8)
}

#[cfg(test)]
mod tests {
    use super::*;

    const AAD: &str = "ten_01jd0000000000000000000000|kid|ES256";

    #[test]
    fn seals_and_opens_every_algorithm() {
        for alg in SigningAlg::ALL {
            let key = SigningKey::generate(alg).unwrap();
            let sealed = seal_private_key(&key, AAD).unwrap();
            assert_eq!(sealed.ciphertext[0], VERSION_1);
            assert_eq!(sealed.ciphertext[1], alg_byte(alg));
            let opened =
                open_private_key(alg, sealed.dek.as_ref(), &sealed.ciphertext, AAD).unwrap();
            assert_eq!(opened.kid(), key.kid());
        }
    }

    #[test]
    fn fresh_data_key_and_nonce_per_seal() {
        let key = SigningKey::generate(SigningAlg::EdDsa).unwrap();
        let a = seal_private_key(&key, AAD).unwrap();
        let b = seal_private_key(&key, AAD).unwrap();
        assert_ne!(*a.dek, *b.dek);
        assert_ne!(a.ciphertext[2..14], b.ciphertext[2..14]);
        // Ed25519 PKCS#8 v1 is 48 bytes: header + nonce + 48 + tag.
        assert_eq!(a.ciphertext.len(), 2 + 12 + 48 + 16);
    }

    #[test]
    fn any_tampering_or_other_aad_fails() {
        let key = SigningKey::generate(SigningAlg::Es256).unwrap();
        let sealed = seal_private_key(&key, AAD).unwrap();
        let open = |ct: &[u8], aad: &str| {
            open_private_key(SigningAlg::Es256, sealed.dek.as_ref(), ct, aad)
        };

        assert!(matches!(
            open(&sealed.ciphertext, "ten_other|kid|ES256"),
            Err(CryptoError::Open)
        ));
        for i in 2..sealed.ciphertext.len() {
            let mut ct = sealed.ciphertext.clone();
            ct[i] ^= 0x01;
            assert!(matches!(open(&ct, AAD), Err(CryptoError::Open)), "byte {i}");
        }
        let mut wrong_dek = *sealed.dek;
        wrong_dek[0] ^= 1;
        assert!(matches!(
            open_private_key(SigningAlg::Es256, &wrong_dek, &sealed.ciphertext, AAD),
            Err(CryptoError::Open)
        ));
    }

    #[test]
    fn header_is_checked_before_decryption() {
        let key = SigningKey::generate(SigningAlg::Es256).unwrap();
        let sealed = seal_private_key(&key, AAD).unwrap();
        let dek = sealed.dek.as_ref();
        let mut v2 = sealed.ciphertext.clone();
        v2[0] = 2;
        assert!(matches!(
            open_private_key(SigningAlg::Es256, dek, &v2, AAD),
            Err(CryptoError::UnsupportedSealedKeyVersion(2))
        ));
        assert!(matches!(
            open_private_key(SigningAlg::EdDsa, dek, &sealed.ciphertext, AAD),
            Err(CryptoError::SealedKeyAlgorithmMismatch { .. })
        ));
        // Relabelling the algorithm byte is caught by the AEAD (the header is additional data).
        let mut relabelled = sealed.ciphertext.clone();
        relabelled[1] = alg_byte(SigningAlg::EdDsa);
        assert!(matches!(
            open_private_key(SigningAlg::EdDsa, dek, &relabelled, AAD),
            Err(CryptoError::Open)
        ));
        assert!(matches!(
            open_private_key(SigningAlg::Es256, dek, &sealed.ciphertext[..20], AAD),
            Err(CryptoError::MalformedSealedKey)
        ));
        assert!(matches!(
            open_private_key(SigningAlg::Es256, &dek[..16], &sealed.ciphertext, AAD),
            Err(CryptoError::InvalidDataKey)
        ));
    }

    #[test]
    fn debug_redacts_the_data_key_and_aad_has_the_documented_shape() {
        let key = SigningKey::generate(SigningAlg::EdDsa).unwrap();
        let sealed = seal_private_key(&key, AAD).unwrap();
        assert_eq!(
            format!("{sealed:?}"),
            "SealedKey(dek: [redacted], 78 bytes)"
        );
        let tenant = TenantId::parse("ten_01jd0000000000000000000000").unwrap();
        assert_eq!(
            sealed_key_aad(&tenant, "abc", SigningAlg::Rs256),
            "ten_01jd0000000000000000000000|abc|RS256"
        );
    }
}
