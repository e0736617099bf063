//! Digests and MACs the protocol needs beyond signatures: PKCE's S256 (RFC 7636 §4.2), the
//! `at_hash` of ID tokens (OIDC Core §3.1.3.6), and keyed hashes (pairwise subjects), all on
//! aws-lc-rs so there is one cryptographic library in the process.

use aws_lc_rs::{digest, hmac};
use svc_domain::SigningAlg;

/// SHA-256 of `data`.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    let d = digest::digest(&digest::SHA256, data);
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// HMAC-SHA256 of `data` under `key`.
pub fn hmac_sha256(key: &[u8], data: &[u8]) -> [u8; 32] {
    let key = hmac::Key::new(hmac::HMAC_SHA256, key);
    let tag = hmac::sign(&key, data);
    let mut out = [0u8; 32];
    out.copy_from_slice(tag.as_ref());
    out
}

/// The left half of the hash of `token` that a token-hash claim (`at_hash`, `c_hash`) carries
/// for a JWS signed with `alg` (OIDC Core §3.1.3.6): SHA-256 for RS256/ES256, SHA-512 for EdDSA
/// with Ed25519 (the hash the curve itself uses, as the OpenID Foundation's registry settles it).
pub fn left_half_hash(alg: SigningAlg, token: &str) -> Vec<u8> {
    let algorithm = match alg {
        SigningAlg::EdDsa => &digest::SHA512,
        SigningAlg::Es256 | SigningAlg::Rs256 => &digest::SHA256,
    };
    let d = digest::digest(algorithm, token.as_bytes());
    let bytes = d.as_ref();
    bytes[..bytes.len() / 2].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn sha256_matches_the_fips_vector() {
        assert_eq!(
            hex(&sha256(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        assert_eq!(
            hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn left_half_is_half_of_the_algorithms_hash() {
        assert_eq!(left_half_hash(SigningAlg::Rs256, "x").len(), 16);
        assert_eq!(left_half_hash(SigningAlg::Es256, "x").len(), 16);
        assert_eq!(left_half_hash(SigningAlg::EdDsa, "x").len(), 32);
        assert_eq!(left_half_hash(SigningAlg::Rs256, "x"), sha256(b"x")[..16]);
    }
}
