//! AES-256-GCM sealing of small secrets at rest, bound to their row through the additional
//! data, in one format for every use (TOTP secrets, security-key credentials, upstream client
//! secrets):
//!
//! ```text
//! 0       version = 0x01
//! 1..13   nonce   96 random bits (NIST SP 800-38D §8.2.2)
//! 13..    AES-256-GCM(plain) || 16-byte tag
//! ```

use crate::CryptoError;
use aws_lc_rs::aead::{AES_256_GCM, Aad, NONCE_LEN, Nonce, RandomizedNonceKey};
use zeroize::Zeroizing;

/// Format version of a sealed secret.
pub(crate) const SEALED_V1: u8 = 1;
/// AES-GCM tag length.
pub(crate) const TAG_LEN: usize = 16;

/// Seals `plain` under `key`, bound to `aad`.
pub(crate) fn seal(key: &[u8; 32], aad: &[u8], plain: &[u8]) -> Result<Vec<u8>, CryptoError> {
    let key = RandomizedNonceKey::new(&AES_256_GCM, key).map_err(|_| CryptoError::Seal)?;
    let mut buf = Vec::with_capacity(plain.len() + TAG_LEN);
    buf.extend_from_slice(plain);
    let nonce = key
        .seal_in_place_append_tag(Aad::from(aad), &mut buf)
        .map_err(|_| CryptoError::Seal)?;
    let mut out = Vec::with_capacity(1 + NONCE_LEN + buf.len());
    out.push(SEALED_V1);
    out.extend_from_slice(nonce.as_ref());
    out.extend_from_slice(&buf);
    Ok(out)
}

/// Opens what [`seal`] sealed under `key` for the same `aad`.
pub(crate) fn open(
    key: &[u8; 32],
    aad: &[u8],
    sealed: &[u8],
) -> Result<Zeroizing<Vec<u8>>, CryptoError> {
    let (&version, rest) = sealed
        .split_first()
        .ok_or(CryptoError::MalformedSealedKey)?;
    if version != SEALED_V1 {
        return Err(CryptoError::UnsupportedSealedKeyVersion(version));
    }
    let (nonce, body) = rest
        .split_first_chunk::<NONCE_LEN>()
        .ok_or(CryptoError::MalformedSealedKey)?;
    if body.len() < TAG_LEN {
        return Err(CryptoError::MalformedSealedKey);
    }
    let key = RandomizedNonceKey::new(&AES_256_GCM, key).map_err(|_| CryptoError::Open)?;
    let mut buf = Zeroizing::new(body.to_vec());
    let len = key
        .open_in_place(
            Nonce::assume_unique_for_key(*nonce),
            Aad::from(aad),
            &mut buf,
        )
        .map_err(|_| CryptoError::Open)?
        .len();
    buf.truncate(len);
    Ok(buf)
}
