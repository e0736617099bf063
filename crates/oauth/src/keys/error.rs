//! Errors of the key service, in its own terms; `svc-http` maps them to responses.

use svc_store::StoreError;

/// Why keys could not be loaded, created or rotated.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The database failed.
    #[error("signing keys: {0}")]
    Store(#[from] StoreError),
    /// The key-management service failed or refused.
    #[error("key-management service: {0}")]
    Kms(String),
    /// A stored key could not be opened or a new one not created.
    #[error("signing key cryptography: {0}")]
    Crypto(#[from] svc_crypto::CryptoError),
}

impl KeyError {
    /// Whether retrying later may succeed (database or KMS unavailable).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::Kms(_) | Self::Store(StoreError::Unavailable(_)))
    }
}
