//! The daemon: owns the listening socket (created 0600, a stale one replaced, removed again on
//! stop), authenticates every connection with the Noise KK handshake, answers requests with the
//! keyring, and drops any connection whose frames fail authentication.
//!
//! Logs carry connection numbers, operations, contexts and refusal reasons; never key material,
//! plaintexts or ciphertexts.

use crate::envelope::{Keyring, WrapError};
use crate::error::KmsError;
use crate::keys::{
    PrivateKey, PublicKey, read_client_public_key, read_master_key, read_server_private_key,
};
use crate::message::{self, Bytes, Request, Response};
use crate::wire::{self, ChannelError, HandshakeError};
use std::future::Future;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use zeroize::Zeroizing;

/// Everything the daemon needs; build it with [`ServerConfig::new`] or
/// [`ServerConfig::from_files`], then adjust the public limits if needed.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Where to listen.
    pub socket_path: PathBuf,
    /// The daemon's static key (`kms-server.key`).
    pub server_private_key: PrivateKey,
    /// The only client key accepted (`kms-client.pub`).
    pub client_public_key: PublicKey,
    /// The master keys.
    pub keyring: Keyring,
    /// How long a new connection may take to complete the handshake.
    pub handshake_timeout: Duration,
    /// How long an established connection may stay silent before the daemon closes it (clients
    /// reconnect transparently).
    pub idle_timeout: Duration,
    /// Connections served at once; further ones wait in the socket's backlog.
    pub max_connections: usize,
}

impl ServerConfig {
    /// A configuration with default limits (5 s handshake, 5 min idle, 256 connections).
    pub fn new(
        socket_path: impl Into<PathBuf>,
        server_private_key: PrivateKey,
        client_public_key: PublicKey,
        keyring: Keyring,
    ) -> Self {
        Self {
            socket_path: socket_path.into(),
            server_private_key,
            client_public_key,
            keyring,
            handshake_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_secs(300),
            max_connections: 256,
        }
    }

    /// Reads every key file, naming the flag and file of the first one that is unusable. The
    /// master key is never created here: a daemon started with a mistyped path must not quietly
    /// begin wrapping under a new key that nothing else has a backup of.
    pub fn from_files(
        socket_path: impl Into<PathBuf>,
        server_key: &Path,
        client_public_key: &Path,
        master_key: &Path,
        retired_master_keys: &[PathBuf],
    ) -> Result<Self, ServeError> {
        let server_private_key = read_server_private_key("--server-key", server_key)?;
        let client_public_key = read_client_public_key("--client-public-key", client_public_key)?;
        let active = read_master_key("--master-key", master_key)?;
        let retired = retired_master_keys
            .iter()
            .map(|path| read_master_key("--retired-master-key", path))
            .collect::<Result<Vec<_>, _>>()?;
        let keyring = Keyring::new(active, retired)?;
        Ok(Self::new(
            socket_path,
            server_private_key,
            client_public_key,
            keyring,
        ))
    }
}

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A key file is unusable.
    #[error(transparent)]
    KeyFile(#[from] KmsError),
    /// The master keys do not form a keyring.
    #[error("--master-key / --retired-master-key: {0}")]
    Keyring(#[from] WrapError),
    /// A live daemon already listens on the socket.
    #[error("--socket ({}): another svc-kms is already serving on it; stop that one first", path.display())]
    InUse {
        /// The socket path.
        path: PathBuf,
    },
    /// Something other than a socket is at the path; it is not ours to delete.
    #[error("--socket ({}): exists and is not a socket; refusing to replace it", path.display())]
    NotASocket {
        /// The socket path.
        path: PathBuf,
    },
    /// The socket could not be created.
    #[error("--socket ({}): {detail}", path.display())]
    Socket {
        /// The socket path.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },
}

/// A bound daemon, ready to [`Server::serve`].
#[derive(Debug)]
pub struct Server {
    listener: UnixListener,
    socket: SocketFile,
    max_connections: usize,
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    server_private_key: PrivateKey,
    client_public_key: PublicKey,
    keyring: Keyring,
    handshake_timeout: Duration,
    idle_timeout: Duration,
}

impl Server {
    /// Creates the socket (mode 0600), first removing a stale one left by a daemon that died;
    /// refuses when a live daemon answers on it or when the path is not a socket. Must be called
    /// from within a Tokio runtime.
    pub fn bind(config: ServerConfig) -> Result<Self, ServeError> {
        let path = config.socket_path;
        let socket_error = |detail: String| ServeError::Socket {
            path: path.clone(),
            detail,
        };
        remove_stale_socket(&path)?;
        let listener =
            UnixListener::bind(&path).map_err(|e| socket_error(format!("cannot bind: {e}")))?;
        let meta = std::fs::symlink_metadata(&path)
            .map_err(|e| socket_error(format!("cannot be inspected after bind: {e}")))?;
        // From here on, any early return removes the socket again.
        let socket = SocketFile {
            path: path.clone(),
            dev: meta.dev(),
            ino: meta.ino(),
        };
        // bind() applied the umask; tighten to 0600 at once. A client that connects in between
        // still has to pass the KK handshake, which is the real access control.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| socket_error(format!("cannot set mode 0600: {e}")))?;
        Ok(Self {
            listener,
            socket,
            max_connections: config.max_connections.max(1),
            shared: Arc::new(Shared {
                server_private_key: config.server_private_key,
                client_public_key: config.client_public_key,
                keyring: config.keyring,
                handshake_timeout: config.handshake_timeout,
                idle_timeout: config.idle_timeout,
            }),
        })
    }

    /// The socket this daemon listens on.
    pub fn socket_path(&self) -> &Path {
        &self.socket.path
    }

    /// Serves connections concurrently until `shutdown` completes; then removes the socket,
    /// ends every connection between two requests and waits (at most 5 s) for them. Dropping the
    /// returned future has the same effect, without the wait.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) {
        let Self {
            listener,
            socket,
            max_connections,
            shared,
        } = self;
        let stop = CancellationToken::new();
        let _stop_on_drop = stop.clone().drop_guard();
        let tracker = TaskTracker::new();
        let limit = Arc::new(Semaphore::new(max_connections));
        tokio::pin!(shutdown);
        let mut next_conn: u64 = 0;
        loop {
            let permit = tokio::select! {
                () = &mut shutdown => break,
                permit = Arc::clone(&limit).acquire_owned() => match permit {
                    Ok(permit) => permit,
                    Err(_) => break, // never closed; nothing left to serve if it were
                },
            };
            let accepted = tokio::select! {
                () = &mut shutdown => break,
                accepted = listener.accept() => accepted,
            };
            match accepted {
                Ok((stream, _)) => {
                    next_conn += 1;
                    let conn = next_conn;
                    let shared = Arc::clone(&shared);
                    let stop = stop.clone();
                    tracker.spawn(async move {
                        connection(conn, stream, &shared, &stop).await;
                        drop(permit);
                    });
                }
                Err(e) => {
                    // Usually descriptor exhaustion; back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed; retrying in 100 ms");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
        // Remove the socket first, so new clients are told "not running" instead of queueing.
        drop(listener);
        drop(socket);
        stop.cancel();
        tracker.close();
        if tokio::time::timeout(Duration::from_secs(5), tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!("connections still open after 5 s; closing them");
        }
    }
}

/// The socket file this daemon created; dropping it removes the file, unless it has been replaced
/// by someone else's since (same path, different inode).
#[derive(Debug)]
struct SocketFile {
    path: PathBuf,
    dev: u64,
    ino: u64,
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        if let Ok(meta) = std::fs::symlink_metadata(&self.path)
            && meta.dev() == self.dev
            && meta.ino() == self.ino
        {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn remove_stale_socket(path: &Path) -> Result<(), ServeError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(ServeError::Socket {
                path: path.to_path_buf(),
                detail: format!("cannot be inspected: {e}"),
            });
        }
    };
    if !meta.file_type().is_socket() {
        return Err(ServeError::NotASocket {
            path: path.to_path_buf(),
        });
    }
    match std::os::unix::net::UnixStream::connect(path) {
        Ok(_) => Err(ServeError::InUse {
            path: path.to_path_buf(),
        }),
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
            std::fs::remove_file(path).map_err(|e| ServeError::Socket {
                path: path.to_path_buf(),
                detail: format!("a stale socket is in the way and cannot be removed: {e}"),
            })?;
            tracing::info!(socket = %path.display(), "removed a stale socket left by a previous run");
            Ok(())
        }
        Err(e) => Err(ServeError::Socket {
            path: path.to_path_buf(),
            detail: format!("exists and cannot be probed: {e}"),
        }),
    }
}

async fn connection(conn: u64, stream: UnixStream, shared: &Shared, stop: &CancellationToken) {
    if let Ok(cred) = stream.peer_cred() {
        tracing::debug!(
            conn,
            peer_uid = cred.uid(),
            peer_pid = cred.pid(),
            "connection accepted"
        );
    }
    let handshake = tokio::time::timeout(
        shared.handshake_timeout,
        wire::accept(
            stream,
            &shared.server_private_key,
            &shared.client_public_key,
        ),
    );
    // The handshake is not cut short by a stop (its own timeout bounds it): a client dropped
    // mid-handshake could not tell a stopping daemon from one that refused its key.
    let mut channel = match handshake.await {
        Ok(Ok(channel)) => channel,
        Ok(Err(HandshakeError::Authentication)) => {
            tracing::warn!(
                conn,
                "client authentication failed: the client's static key is not --client-public-key, \
                     or it expects a different server key; connection closed"
            );
            return;
        }
        Ok(Err(HandshakeError::Closed)) => {
            tracing::debug!(conn, "client closed the connection before the handshake");
            return;
        }
        Ok(Err(HandshakeError::Malformed(what))) => {
            tracing::warn!(conn, reason = what, "handshake refused; connection closed");
            return;
        }
        Ok(Err(HandshakeError::Io(e))) => {
            tracing::debug!(conn, error = %e, "connection failed during the handshake");
            return;
        }
        Ok(Err(HandshakeError::Noise(e))) => {
            tracing::error!(conn, error = ?e, "the Noise library refused the configured keys");
            return;
        }
        Err(_) => {
            tracing::warn!(conn, "handshake timed out; connection closed");
            return;
        }
    };
    tracing::debug!(conn, "client authenticated");
    loop {
        let received = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            received = tokio::time::timeout(shared.idle_timeout, channel.recv()) => received,
        };
        let frame = match received {
            Ok(Ok(Some(frame))) => frame,
            Ok(Ok(None)) => {
                tracing::debug!(conn, "client closed the connection");
                return;
            }
            Ok(Err(ChannelError::Authentication)) => {
                tracing::warn!(
                    conn,
                    "dropping connection: a frame failed authentication (replayed, reordered or modified)"
                );
                return;
            }
            Ok(Err(ChannelError::Malformed(what))) => {
                tracing::warn!(conn, reason = what, "dropping connection: malformed frame");
                return;
            }
            Ok(Err(ChannelError::Truncated)) => {
                tracing::debug!(conn, "client closed the connection mid-frame");
                return;
            }
            Ok(Err(ChannelError::Io(e))) => {
                tracing::debug!(conn, error = %e, "connection failed");
                return;
            }
            Err(_) => {
                tracing::debug!(conn, "idle connection closed");
                return;
            }
        };
        let (response, keep_open) = match message::decode::<Request>(&frame) {
            Ok(request) => (answer(conn, &shared.keyring, request), true),
            Err(_) => {
                // Authenticated yet unintelligible: a client bug or version skew. Say so, then
                // close, since its later frames cannot be trusted to be in step either.
                tracing::warn!(
                    conn,
                    "malformed request from an authenticated client; closing"
                );
                let message = "malformed request (this daemon speaks svc-kms/1)".to_owned();
                (Response::Error { message }, false)
            }
        };
        drop(frame);
        let encoded = match message::encode(&response) {
            Ok(encoded) => encoded,
            Err(e) => {
                tracing::error!(conn, error = %e, "cannot encode a response; closing");
                return;
            }
        };
        drop(response);
        if let Err(e) = channel.send(&encoded).await {
            tracing::debug!(conn, error = ?e, "cannot send the response");
            return;
        }
        if !keep_open {
            return;
        }
    }
}

fn answer(conn: u64, keyring: &Keyring, request: Request) -> Response {
    let op = request.op();
    let result = match request {
        Request::Ping => return Response::Pong,
        Request::Wrap { context, plaintext } => keyring
            .wrap(&context, &plaintext.0)
            .map(|ct| Response::Wrapped {
                ciphertext: Bytes(Zeroizing::new(ct)),
            })
            .map_err(|e| (context, e)),
        Request::Unwrap {
            context,
            ciphertext,
        } => keyring
            .unwrap(&context, &ciphertext.0)
            .map(|plaintext| Response::Unwrapped {
                plaintext: Bytes(plaintext),
            })
            .map_err(|e| (context, e)),
    };
    match result {
        Ok(response) => {
            tracing::debug!(conn, op, "request served");
            response
        }
        Err((context, e)) => {
            tracing::warn!(conn, op, context = %context, reason = %e, "request refused");
            Response::Error {
                message: e.to_string(),
            }
        }
    }
}
