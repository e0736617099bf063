//! The client the runtime uses: it connects to the daemon's socket, authenticates with the Noise
//! KK handshake, and wraps and unwraps data keys.
//!
//! It keeps a few idle authenticated connections for reuse. A reused connection that turns out to
//! be dead (the daemon restarted, or closed it for being idle) is discarded and the call is retried
//! once on a fresh connection; retrying is safe because wrap and unwrap have no side effects. So a
//! client recovers by itself when the daemon comes back, and every call is bounded by one timeout
//! covering connect, handshake, request and response.

use crate::envelope::{MAX_CIPHERTEXT_LEN, MAX_CONTEXT_LEN, MAX_PLAINTEXT_LEN, WrapError};
use crate::error::KmsError;
use crate::keys::{PrivateKey, PublicKey, read_client_private_key, read_server_public_key};
use crate::message::{self, Bytes, Request, Response};
use crate::wire::{self, Channel, ChannelError, HandshakeError};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::net::UnixStream;
use zeroize::Zeroizing;

/// How long a call may take unless [`KmsClient::with_timeout`] says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
/// Idle connections kept for reuse; more concurrent calls open more connections, and the extra
/// ones are closed when they finish.
const MAX_IDLE: usize = 4;

/// A handle on the KMS daemon. Cheap to clone; clones share their idle connections.
#[derive(Clone)]
pub struct KmsClient {
    inner: Arc<Inner>,
}

struct Inner {
    socket_path: PathBuf,
    server_public_key: PublicKey,
    client_private_key: PrivateKey,
    timeout: Duration,
    idle: Mutex<Vec<Channel>>,
}

impl fmt::Debug for KmsClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KmsClient")
            .field("socket_path", &self.inner.socket_path)
            .field("server_public_key", &self.inner.server_public_key)
            .field("timeout", &self.inner.timeout)
            .finish_non_exhaustive()
    }
}

/// A failed exchange on one connection: either the connection was dead (worth one retry on a
/// fresh one), or the failure is final.
enum Failure {
    Stale(String),
    Fatal(KmsError),
}

impl KmsClient {
    /// Reads and validates both key files (errors name the setting and the file). Does not
    /// connect: the runtime may start before the daemon, and readiness reports the difference.
    pub fn new(
        socket_path: impl Into<PathBuf>,
        server_public_key_path: impl AsRef<Path>,
        client_private_key_path: impl AsRef<Path>,
    ) -> Result<Self, KmsError> {
        let server_public_key = read_server_public_key(server_public_key_path)?;
        let client_private_key = read_client_private_key(client_private_key_path)?;
        Ok(Self::from_keys(
            socket_path,
            server_public_key,
            client_private_key,
        ))
    }

    /// Builds a client from keys already in memory.
    pub fn from_keys(
        socket_path: impl Into<PathBuf>,
        server_public_key: PublicKey,
        client_private_key: PrivateKey,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                socket_path: socket_path.into(),
                server_public_key,
                client_private_key,
                timeout: DEFAULT_TIMEOUT,
                idle: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Replaces the per-call timeout (default [`DEFAULT_TIMEOUT`]). Call before cloning.
    #[must_use]
    pub fn with_timeout(self, timeout: Duration) -> Self {
        Self {
            inner: Arc::new(Inner {
                socket_path: self.inner.socket_path.clone(),
                server_public_key: self.inner.server_public_key,
                client_private_key: self.inner.client_private_key.clone(),
                timeout,
                idle: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The daemon's socket.
    pub fn socket_path(&self) -> &Path {
        &self.inner.socket_path
    }

    /// Checks that the daemon is up and that both ends hold the expected keys.
    pub async fn ping(&self) -> Result<(), KmsError> {
        match self.call(&Request::Ping).await? {
            Response::Pong => Ok(()),
            other => Err(unexpected("ping", &other)),
        }
    }

    /// Wraps `plaintext` (at most 4 KiB, normally a 32-byte data key) under the master key, bound
    /// to `context` (1 to 1024 bytes naming what the key belongs to, such as tenant and key id).
    pub async fn wrap(&self, context: &str, plaintext: &[u8]) -> Result<Vec<u8>, KmsError> {
        // Checked here too so an oversized input is refused with the daemon's own words instead
        // of failing as a frame that does not fit.
        if plaintext.len() > MAX_PLAINTEXT_LEN {
            let len = plaintext.len();
            return Err(KmsError::Refused(
                WrapError::PlaintextTooLarge { len }.to_string(),
            ));
        }
        check_context(context)?;
        let request = Request::Wrap {
            context: context.to_owned(),
            plaintext: Bytes::new(plaintext),
        };
        match self.call(&request).await? {
            Response::Wrapped { mut ciphertext } => Ok(std::mem::take(&mut *ciphertext.0)),
            other => Err(unexpected("wrap", &other)),
        }
    }

    /// Unwraps what [`KmsClient::wrap`] returned, provided `context` is the one it was wrapped
    /// under and the ciphertext is unmodified. The plaintext is zeroed when dropped.
    pub async fn unwrap(
        &self,
        context: &str,
        ciphertext: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>, KmsError> {
        if ciphertext.len() > MAX_CIPHERTEXT_LEN {
            let len = ciphertext.len();
            return Err(KmsError::Refused(WrapError::Oversized { len }.to_string()));
        }
        check_context(context)?;
        let request = Request::Unwrap {
            context: context.to_owned(),
            ciphertext: Bytes::new(ciphertext),
        };
        match self.call(&request).await? {
            Response::Unwrapped { plaintext } => Ok(plaintext.0),
            other => Err(unexpected("unwrap", &other)),
        }
    }

    async fn call(&self, request: &Request) -> Result<Response, KmsError> {
        let payload = message::encode(request)
            .map_err(|e| KmsError::Protocol(format!("cannot encode the request: {e}")))?;
        let after = self.inner.timeout;
        // A timed-out exchange is dropped with its connection, whose state is then unknown; it
        // never goes back to the idle pool.
        let response = tokio::time::timeout(after, self.exchange(&payload))
            .await
            .map_err(|_| KmsError::Timeout { after })??;
        match response {
            Response::Error { message } => Err(KmsError::Refused(message)),
            response => Ok(response),
        }
    }

    async fn exchange(&self, payload: &[u8]) -> Result<Response, KmsError> {
        while let Some(channel) = self.take_idle() {
            match self.round_trip(channel, payload).await {
                Ok(response) => return Ok(response),
                Err(Failure::Stale(_)) => continue,
                Err(Failure::Fatal(e)) => return Err(e),
            }
        }
        let channel = self.connect().await?;
        match self.round_trip(channel, payload).await {
            Ok(response) => Ok(response),
            Err(Failure::Stale(detail)) => Err(self.unreachable(detail)),
            Err(Failure::Fatal(e)) => Err(e),
        }
    }

    async fn round_trip(&self, mut channel: Channel, payload: &[u8]) -> Result<Response, Failure> {
        channel.send(payload).await.map_err(|e| match e {
            ChannelError::Malformed(what) => Failure::Fatal(KmsError::Protocol(what.to_owned())),
            other => Failure::Stale(format!("sending failed: {other:?}")),
        })?;
        let frame = match channel.recv().await {
            Ok(Some(frame)) => frame,
            Ok(None) | Err(ChannelError::Truncated) => {
                return Err(Failure::Stale(
                    "the daemon closed the connection without answering".to_owned(),
                ));
            }
            Err(ChannelError::Io(e)) => {
                return Err(Failure::Stale(format!("the connection failed: {e}")));
            }
            Err(ChannelError::Authentication) => {
                return Err(Failure::Fatal(KmsError::Protocol(
                    "a response failed authentication (replayed or modified); connection dropped"
                        .to_owned(),
                )));
            }
            Err(ChannelError::Malformed(what)) => {
                return Err(Failure::Fatal(KmsError::Protocol(what.to_owned())));
            }
        };
        let response = message::decode::<Response>(&frame).map_err(|e| {
            Failure::Fatal(KmsError::Protocol(format!(
                "the response does not parse: {e}"
            )))
        })?;
        // Only a connection that just completed a full exchange is known to be in step.
        self.put_idle(channel);
        Ok(response)
    }

    async fn connect(&self) -> Result<Channel, KmsError> {
        let path = &self.inner.socket_path;
        let stream = UnixStream::connect(path)
            .await
            .map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => KmsError::SocketMissing { path: path.clone() },
                io::ErrorKind::ConnectionRefused => self.unreachable(
                    "nothing is listening on it (a stale socket: svc-kms serve is not running)"
                        .into(),
                ),
                io::ErrorKind::PermissionDenied => self.unreachable(
                    "permission denied (the socket is mode 0600: run the runtime as the user that \
                 runs svc-kms serve)"
                        .into(),
                ),
                _ => self.unreachable(format!("cannot connect: {e}")),
            })?;
        wire::initiate(
            stream,
            &self.inner.client_private_key,
            &self.inner.server_public_key,
        )
        .await
        .map_err(|e| match e {
            // The daemon hangs up without a word when our key does not authenticate; a daemon
            // presenting another key fails to decrypt here. Both mean the key files disagree.
            HandshakeError::Authentication | HandshakeError::Closed => {
                KmsError::AuthenticationFailed
            }
            HandshakeError::Malformed(what) => KmsError::Protocol(what.to_owned()),
            HandshakeError::Io(e) => {
                self.unreachable(format!("the connection failed during the handshake: {e}"))
            }
            HandshakeError::Noise(e) => KmsError::Protocol(format!(
                "the Noise library refused the configured keys: {e}"
            )),
        })
    }

    fn unreachable(&self, detail: String) -> KmsError {
        KmsError::Unreachable {
            path: self.inner.socket_path.clone(),
            detail,
        }
    }

    fn take_idle(&self) -> Option<Channel> {
        self.inner
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
    }

    fn put_idle(&self, channel: Channel) {
        let mut idle = self
            .inner
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if idle.len() < MAX_IDLE {
            idle.push(channel);
        }
    }
}

fn check_context(context: &str) -> Result<(), KmsError> {
    if context.len() > MAX_CONTEXT_LEN {
        let len = context.len();
        return Err(KmsError::Refused(WrapError::Context { len }.to_string()));
    }
    Ok(())
}

fn unexpected(op: &str, response: &Response) -> KmsError {
    let got = match response {
        Response::Pong => "pong",
        Response::Wrapped { .. } => "wrapped",
        Response::Unwrapped { .. } => "unwrapped",
        Response::Error { .. } => "error",
    };
    KmsError::Protocol(format!("the daemon answered {op} with {got}"))
}
