//! The seam to the key-management service: wrap and unwrap small data keys. The runtime adapts
//! the svc-kms client to it; engines never see sockets or key files.

use async_trait::async_trait;

/// Wraps data-encryption keys under a master key this process never holds.
#[async_trait]
pub trait KeyWrapper: Send + Sync {
    /// Encrypts `plaintext` (a data key) bound to `context`.
    async fn wrap(&self, context: &str, plaintext: &[u8]) -> Result<Vec<u8>, String>;

    /// Decrypts what [`KeyWrapper::wrap`] produced for the same `context`.
    async fn unwrap(
        &self,
        context: &str,
        ciphertext: &[u8],
    ) -> Result<zeroize::Zeroizing<Vec<u8>>, String>;

    /// A round trip proving the service is reachable and accepts this client.
    async fn ping(&self) -> Result<(), String>;
}
