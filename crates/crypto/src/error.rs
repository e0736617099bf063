//! The one error type of this crate. Variants name what went wrong in cryptographic terms and
//! never carry key material; the HTTP layer decides what a client sees (usually a 500, or an
//! `invalid_token` for the verification variants).

use svc_domain::SigningAlg;

/// Everything that can fail in svc-crypto.
#[derive(Debug, thiserror::Error)]
pub enum CryptoError {
    /// The cryptographic library could not generate a key pair or random bytes (an operating
    /// system entropy failure). Clients see a 500.
    #[error("key or random-number generation failed")]
    Generation,

    /// A PKCS#8 document does not hold a usable private key of the expected algorithm (wrong key
    /// type, wrong curve, RSA smaller than 2048 bits, or corrupt DER).
    #[error("not a valid {alg} private key")]
    InvalidPrivateKey {
        /// The algorithm the key was meant for.
        alg: SigningAlg,
    },

    /// A stored or received JWK is not a public key we accept (RFC 7517 §4, RFC 7518 §6).
    #[error("invalid JWK: {0}")]
    InvalidJwk(&'static str),

    /// Two keys of one JWKS share a `kid` (RFC 7517 §4.5 requires distinct ids within a set).
    #[error("duplicate kid `{0}` in JWKS")]
    DuplicateKid(String),

    /// The JWT claims set is not a JSON object (RFC 7519 §7.1 step 1).
    #[error("JWT claims must be a JSON object")]
    ClaimsNotAnObject,

    /// The JOSE header `typ` is empty or not a printable token.
    #[error("invalid JOSE header `typ`")]
    InvalidTyp,

    /// The signing operation itself failed inside the cryptographic library.
    #[error("signing failed")]
    Signing,

    /// A JSON value could not be serialised.
    #[error("JSON serialisation failed: {0}")]
    Json(#[from] serde_json::Error),

    /// A compact JWS is not three base64url segments with a JSON header (RFC 7515 §7.1).
    #[error("malformed JWS")]
    MalformedJws,

    /// The JWS header names an algorithm other than the one the verifier expects
    /// (RFC 8725 §3.1: never let the token choose the algorithm).
    #[error("unexpected JWS algorithm")]
    AlgorithmMismatch,

    /// No key in the JWKS has the token's `kid`.
    #[error("no key with the token's kid")]
    UnknownKid,

    /// The signature does not verify.
    #[error("signature verification failed")]
    BadSignature,

    /// Sealing a private key under a data key failed.
    #[error("sealing the private key failed")]
    Seal,

    /// A sealed private key could not be opened: wrong data key, different additional data, or
    /// altered ciphertext. AES-GCM cannot tell these apart, by design.
    #[error("the sealed private key could not be opened")]
    Open,

    /// The sealed-key blob is too short or its header is not one we wrote.
    #[error("malformed sealed key")]
    MalformedSealedKey,

    /// The sealed-key blob has a format version this build does not know.
    #[error("unsupported sealed-key format version {0}")]
    UnsupportedSealedKeyVersion(u8),

    /// The sealed key was sealed for a different algorithm than the caller asked for.
    #[error("sealed key is for {found}, expected {expected}")]
    SealedKeyAlgorithmMismatch {
        /// What the caller expected.
        expected: SigningAlg,
        /// What the blob header says.
        found: SigningAlg,
    },

    /// A data-encryption key is not exactly 32 bytes (AES-256).
    #[error("data-encryption key must be 32 bytes")]
    InvalidDataKey,

    /// A rotation step names a key that is not in the set in the state the step expects
    /// (another instance applied its plan first). Internal; retry with a fresh read.
    #[error("rotation step names key `{0}`, which is not in the expected state")]
    UnknownKey(String),

    /// A rotation policy is self-contradictory (for example a publish lead as long as the
    /// rotation period, which would make every key replace itself at once).
    #[error("invalid rotation policy: {0}")]
    InvalidPolicy(&'static str),
}
