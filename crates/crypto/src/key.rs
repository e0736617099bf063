//! Signing key pairs: generated or loaded from PKCS#8 once, then kept parsed for the life of the
//! key, so signing a token never re-parses DER (jsonwebtoken's `EncodingKey` re-parses per
//! signature, ~38 % of ES256 signing CPU; see research/performance-anchors.md).
//!
//! The private key leaves this type only through [`SigningKey::to_pkcs8`], which exists for
//! envelope encryption (see `envelope.rs`) and returns zeroizing memory.

use crate::CryptoError;
use crate::jwk::{MIN_RSA_MODULUS_BYTES, PublicJwk, PublicMaterial};
use aws_lc_rs::encoding::{AsDer, Pkcs8V1Der};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::rsa::KeySize;
use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair as _, RSA_PKCS1_SHA256,
    RsaKeyPair, RsaPublicKeyComponents,
};
use std::fmt;
use svc_domain::SigningAlg;
use zeroize::Zeroizing;

/// The parsed private key, one variant per algorithm.
enum KeyPair {
    Es256(EcdsaKeyPair),
    EdDsa(Ed25519KeyPair),
    Rs256(RsaKeyPair),
}

/// A private signing key with its algorithm, `kid` and public JWK.
///
/// `Debug` shows only the algorithm and `kid`.
pub struct SigningKey {
    pair: KeyPair,
    public: PublicJwk,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("alg", &self.alg())
            .field("kid", &self.kid())
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// Generates a new key pair: P-256 for ES256, Ed25519 for EdDSA, RSA-2048 for RS256.
    ///
    /// Randomness comes from aws-lc's own CSPRNG, not from an injected `Rng`: private keys must
    /// never be drawn from a seedable test generator.
    pub fn generate(alg: SigningAlg) -> Result<Self, CryptoError> {
        let pair = match alg {
            SigningAlg::Es256 => KeyPair::Es256(
                EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING)
                    .map_err(|_| CryptoError::Generation)?,
            ),
            SigningAlg::EdDsa => {
                KeyPair::EdDsa(Ed25519KeyPair::generate().map_err(|_| CryptoError::Generation)?)
            }
            // RFC 7518 §3.3: "A key of size 2048 bits or larger MUST be used".
            SigningAlg::Rs256 => KeyPair::Rs256(
                RsaKeyPair::generate(KeySize::Rsa2048).map_err(|_| CryptoError::Generation)?,
            ),
        };
        Self::from_pair(pair)
    }

    /// Loads a PKCS#8 private key (RFC 5208 v1 or RFC 5958 v2) for `alg`. The key type must
    /// match: a P-256 key for ES256, Ed25519 for EdDSA, RSA of at least 2048 bits for RS256.
    pub fn from_pkcs8(alg: SigningAlg, der: &[u8]) -> Result<Self, CryptoError> {
        let rejected = |_| CryptoError::InvalidPrivateKey { alg };
        let pair = match alg {
            SigningAlg::Es256 => KeyPair::Es256(
                EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der)
                    .map_err(rejected)?,
            ),
            // Accepts v1 (48 bytes, e.g. `openssl genpkey`) and v2 (83 bytes, what aws-lc's
            // `generate_pkcs8` writes); a v2 public key must match the private one.
            SigningAlg::EdDsa => KeyPair::EdDsa(Ed25519KeyPair::from_pkcs8(der).map_err(rejected)?),
            SigningAlg::Rs256 => {
                let pair = RsaKeyPair::from_pkcs8(der).map_err(rejected)?;
                if pair.public_modulus_len() < MIN_RSA_MODULUS_BYTES {
                    return Err(CryptoError::InvalidPrivateKey { alg });
                }
                KeyPair::Rs256(pair)
            }
        };
        Self::from_pair(pair)
    }

    /// Loads a PEM `-----BEGIN PRIVATE KEY-----` block (RFC 7468 §10: PKCS#8), as Apple hands
    /// out its `.p8` keys, for `alg` as [`SigningKey::from_pkcs8`] does.
    pub fn from_pkcs8_pem(alg: SigningAlg, pem: &str) -> Result<Self, CryptoError> {
        use base64::Engine;
        let rejected = || CryptoError::InvalidPrivateKey { alg };
        let body = pem
            .trim()
            .strip_prefix("-----BEGIN PRIVATE KEY-----")
            .and_then(|rest| rest.strip_suffix("-----END PRIVATE KEY-----"))
            .ok_or_else(rejected)?;
        let text: String = body.split_ascii_whitespace().collect();
        let der = Zeroizing::new(
            base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|_| rejected())?,
        );
        Self::from_pkcs8(alg, &der)
    }

    /// Exports the private key as unencrypted PKCS#8 v1 DER, in memory that is wiped on drop.
    /// Use it only to seal the key (see [`crate::seal_private_key`]).
    ///
    /// Ed25519 is exported as v1 (48 bytes), not aws-lc's default v2: v1 is what other
    /// libraries accept (jsonwebtoken's `EncodingKey::from_ed_der` refuses v2), and the public
    /// key is derivable from the seed anyway.
    pub fn to_pkcs8(&self) -> Result<Zeroizing<Vec<u8>>, CryptoError> {
        let der = match &self.pair {
            KeyPair::Es256(pair) => pair.to_pkcs8v1().map(|doc| doc.as_ref().to_vec()),
            KeyPair::EdDsa(pair) => pair.to_pkcs8v1().map(|doc| doc.as_ref().to_vec()),
            KeyPair::Rs256(pair) => {
                AsDer::<Pkcs8V1Der<'static>>::as_der(pair).map(|der| der.as_ref().to_vec())
            }
        };
        // aws-lc's `Document`/`Pkcs8V1Der` wipe themselves on drop; our copy is wiped too.
        der.map(Zeroizing::new)
            .map_err(|_| CryptoError::InvalidPrivateKey { alg: self.alg() })
    }

    /// The algorithm this key signs with.
    pub fn alg(&self) -> SigningAlg {
        match self.pair {
            KeyPair::Es256(_) => SigningAlg::Es256,
            KeyPair::EdDsa(_) => SigningAlg::EdDsa,
            KeyPair::Rs256(_) => SigningAlg::Rs256,
        }
    }

    /// The key id: the RFC 7638 SHA-256 thumbprint of the public key, base64url.
    pub fn kid(&self) -> &str {
        self.public.kid()
    }

    /// The public JWK (typed), for the JWKS and the store's `public_jwk` column.
    pub fn public_key(&self) -> &PublicJwk {
        &self.public
    }

    /// The public JWK as JSON: `kty`, `crv`/`x`/`y` or `n`/`e`, `kid`, `alg`, `use: "sig"`.
    pub fn public_jwk(&self) -> serde_json::Value {
        self.public.to_json()
    }

    /// Signs `message` and returns the JWS signature bytes (RFC 7518 §3): ES256 as the 64-byte
    /// `R || S` concatenation (not DER, §3.4), EdDSA as the 64-byte Ed25519 signature (RFC 8037
    /// §3.1), RS256 as a modulus-length PKCS#1 v1.5 signature (§3.3).
    pub(crate) fn sign_bytes(&self, message: &[u8]) -> Result<Vec<u8>, CryptoError> {
        match &self.pair {
            KeyPair::Es256(pair) => pair
                .sign(&SystemRandom::new(), message)
                .map(|sig| sig.as_ref().to_vec())
                .map_err(|_| CryptoError::Signing),
            KeyPair::EdDsa(pair) => Ok(pair.sign(message).as_ref().to_vec()),
            KeyPair::Rs256(pair) => {
                let mut sig = vec![0; pair.public_modulus_len()];
                pair.sign(&RSA_PKCS1_SHA256, &SystemRandom::new(), message, &mut sig)
                    .map_err(|_| CryptoError::Signing)?;
                Ok(sig)
            }
        }
    }

    fn from_pair(pair: KeyPair) -> Result<Self, CryptoError> {
        let (alg, material) = match &pair {
            KeyPair::Es256(pair) => {
                // SEC 1 §2.3.3 uncompressed point: 0x04 || X (32) || Y (32).
                let point = pair.public_key().as_ref();
                let (Some((&4, coords)), 65) = (point.split_first(), point.len()) else {
                    return Err(CryptoError::InvalidPrivateKey {
                        alg: SigningAlg::Es256,
                    });
                };
                let (x, y) = coords.split_at(32);
                let fixed = |c: &[u8]| {
                    <[u8; 32]>::try_from(c).map_err(|_| CryptoError::InvalidPrivateKey {
                        alg: SigningAlg::Es256,
                    })
                };
                (
                    SigningAlg::Es256,
                    PublicMaterial::Ec {
                        x: fixed(x)?,
                        y: fixed(y)?,
                    },
                )
            }
            KeyPair::EdDsa(pair) => {
                let x = <[u8; 32]>::try_from(pair.public_key().as_ref()).map_err(|_| {
                    CryptoError::InvalidPrivateKey {
                        alg: SigningAlg::EdDsa,
                    }
                })?;
                (SigningAlg::EdDsa, PublicMaterial::Okp { x })
            }
            KeyPair::Rs256(pair) => {
                // Big-endian without leading zeros, as RFC 7518 §6.3.1 requires.
                let RsaPublicKeyComponents { n, e } =
                    RsaPublicKeyComponents::<Vec<u8>>::from(pair.public_key());
                (SigningAlg::Rs256, PublicMaterial::Rsa { n, e })
            }
        };
        Ok(Self {
            pair,
            public: PublicJwk::from_material(alg, material),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn generated_keys_publish_only_public_members_with_fixed_lengths() {
        for alg in SigningAlg::ALL {
            let key = SigningKey::generate(alg).unwrap();
            let jwk = key.public_jwk();
            let members: Vec<&str> = jwk
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            let expected: &[&str] = match alg {
                SigningAlg::Es256 => &["alg", "crv", "kid", "kty", "use", "x", "y"],
                SigningAlg::EdDsa => &["alg", "crv", "kid", "kty", "use", "x"],
                SigningAlg::Rs256 => &["alg", "e", "kid", "kty", "n", "use"],
            };
            assert_eq!(members, expected, "{alg}");
            assert_eq!(jwk["alg"], alg.as_str());
            assert_eq!(jwk["kid"], key.kid());
            for coord in ["x", "y"] {
                if let Some(Value::String(c)) = jwk.get(coord) {
                    // 32 bytes → 43 base64url characters, never padded.
                    assert_eq!(c.len(), 43, "{alg} {coord}");
                }
            }
            if alg == SigningAlg::Rs256 {
                assert_eq!(jwk["e"], "AQAB");
                assert_eq!(jwk["n"].as_str().unwrap().len(), 342, "2048-bit modulus");
            }
            // The published JWK re-parses, which also re-checks kid == RFC 7638 thumbprint.
            assert_eq!(PublicJwk::from_json(&jwk).unwrap(), *key.public_key());
        }
    }

    #[test]
    fn pkcs8_round_trip_keeps_the_kid() {
        for alg in SigningAlg::ALL {
            let key = SigningKey::generate(alg).unwrap();
            let der = key.to_pkcs8().unwrap();
            let again = SigningKey::from_pkcs8(alg, &der).unwrap();
            assert_eq!(again.kid(), key.kid());
            assert_eq!(again.alg(), alg);
        }
    }

    #[test]
    fn pem_keys_load_only_as_their_own_type() {
        use base64::Engine;
        let key = SigningKey::generate(SigningAlg::Es256).unwrap();
        let der = key.to_pkcs8().unwrap();
        let body = base64::engine::general_purpose::STANDARD.encode(&*der);
        let lines: Vec<&str> = body
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            lines.join("\n")
        );
        let loaded = SigningKey::from_pkcs8_pem(SigningAlg::Es256, &pem).unwrap();
        assert_eq!(loaded.kid(), key.kid());
        assert!(SigningKey::from_pkcs8_pem(SigningAlg::EdDsa, &pem).is_err());
        let ec = pem.replace("PRIVATE KEY", "EC PRIVATE KEY");
        assert!(SigningKey::from_pkcs8_pem(SigningAlg::Es256, &ec).is_err());
        let broken = pem.replace('A', "*");
        assert!(SigningKey::from_pkcs8_pem(SigningAlg::Es256, &broken).is_err());
    }

    #[test]
    fn ed25519_exports_pkcs8_v1_and_accepts_v2() {
        let key = SigningKey::generate(SigningAlg::EdDsa).unwrap();
        assert_eq!(key.to_pkcs8().unwrap().len(), 48, "PKCS#8 v1");
        let v2 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        assert_eq!(v2.as_ref().len(), 83, "aws-lc writes v2");
        let loaded = SigningKey::from_pkcs8(SigningAlg::EdDsa, v2.as_ref()).unwrap();
        assert_eq!(loaded.to_pkcs8().unwrap().len(), 48);
    }

    #[test]
    fn refuses_a_key_of_another_algorithm() {
        let ec = SigningKey::generate(SigningAlg::Es256).unwrap();
        let der = ec.to_pkcs8().unwrap();
        for alg in [SigningAlg::EdDsa, SigningAlg::Rs256] {
            assert!(matches!(
                SigningKey::from_pkcs8(alg, &der),
                Err(CryptoError::InvalidPrivateKey { alg: a }) if a == alg
            ));
        }
        assert!(SigningKey::from_pkcs8(SigningAlg::Es256, b"garbage").is_err());
    }

    #[test]
    fn debug_shows_no_key_material() {
        let key = SigningKey::generate(SigningAlg::EdDsa).unwrap();
        let shown = format!("{key:?}");
        assert_eq!(
            shown,
            format!("SigningKey {{ alg: EdDsa, kid: {:?}, .. }}", key.kid())
        );
    }
}
