//! The client-side error type: every way a call to the KMS (or reading the key files that set one
//! up) can fail, each rendered as one line that names the cause and, where there is one, the fix.
//! No variant ever carries key material or a plaintext.

use std::path::PathBuf;
use std::time::Duration;

/// Why a [`crate::KmsClient`] could not be built, or a call to the KMS did not succeed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KmsError {
    /// Nothing exists at the socket path: the daemon is not running (a graceful stop removes it)
    /// or the path is wrong.
    #[error("kms.socket_path {} does not exist: is svc-kms serve running?", path.display())]
    SocketMissing {
        /// The configured socket path.
        path: PathBuf,
    },
    /// The socket exists but the daemon could not be reached over it (nobody listening on a stale
    /// socket left by a crash, permission denied, the connection dropped mid-call, ...).
    #[error("the KMS at {} is unreachable: {detail}", path.display())]
    Unreachable {
        /// The configured socket path.
        path: PathBuf,
        /// What the operating system or the connection said.
        detail: String,
    },
    /// The Noise KK handshake failed: one side does not hold the static key the other expects.
    #[error(
        "the KMS refused this client's key (kms.client_private_key_path) or presented a different \
         server key (kms.server_public_key_path)"
    )]
    AuthenticationFailed,
    /// A key file is missing, unreadable, malformed, of the wrong kind, or too widely readable.
    #[error("{key} ({}): {detail}", path.display())]
    KeyFile {
        /// The setting (or command-line flag) that names the file.
        key: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong with it and how to fix it.
        detail: String,
    },
    /// The KMS understood the request and refused it (context mismatch, tampered ciphertext,
    /// plaintext too large, ...); the connection stays usable.
    #[error("the KMS refused the request: {0}")]
    Refused(String),
    /// The KMS answered something this client cannot accept (a response that fails
    /// authentication, does not parse, or does not match the request).
    #[error("KMS protocol error: {0}")]
    Protocol(String),
    /// The call (connect, handshake, request and response) took longer than the client's timeout.
    #[error("the KMS did not answer within {} ms", after.as_millis())]
    Timeout {
        /// The timeout that elapsed.
        after: Duration,
    },
}

impl KmsError {
    /// Whether the KMS itself is unavailable (not running, not reachable or not answering), as
    /// opposed to a misconfiguration or a refused request. Readiness probes and retry loops use
    /// this to tell "wait for the daemon" from "fix the setup".
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            Self::SocketMissing { .. } | Self::Unreachable { .. } | Self::Timeout { .. }
        )
    }
}
