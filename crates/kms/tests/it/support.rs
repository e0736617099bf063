//! Test support: key directories made by the real `keygen`, an in-process daemon on a socket in a
//! temporary directory, and a raw Noise client that records, replays and corrupts frames.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use std::path::{Path, PathBuf};
use std::time::Duration;
use svc_kms::{KmsClient, NOISE_PARAMS, PROLOGUE, Server, ServerConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A temporary directory holding one key set written by `svc_kms::keygen`, plus room for sockets.
pub(crate) struct Keys {
    pub(crate) dir: tempfile::TempDir,
}

impl Keys {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        svc_kms::keygen(dir.path(), false).unwrap();
        Self { dir }
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub(crate) fn socket(&self) -> PathBuf {
        self.path("kms.sock")
    }

    /// A client of this key set's daemon, with the key files as the runtime would configure them.
    pub(crate) fn client(&self) -> KmsClient {
        KmsClient::new(
            self.socket(),
            self.path("kms-server.pub"),
            self.path("kms-client.key"),
        )
        .unwrap()
    }

    /// Raw key bytes, parsed from the file independently of the library.
    pub(crate) fn raw(&self, name: &str) -> [u8; 32] {
        let text = std::fs::read_to_string(self.path(name)).unwrap();
        let (_, b64) = text.trim().rsplit_once(':').unwrap();
        BASE64.decode(b64).unwrap().try_into().unwrap()
    }

    pub(crate) fn config(&self) -> ServerConfig {
        ServerConfig::from_files(
            self.socket(),
            &self.path("kms-server.key"),
            &self.path("kms-client.pub"),
            &self.path("kms-master.key"),
            &[],
        )
        .unwrap()
    }
}

/// A daemon served on a background task of the test's runtime.
pub(crate) struct Daemon {
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl Daemon {
    pub(crate) fn start(config: ServerConfig) -> Self {
        let server = Server::bind(config).unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.serve(async move {
            let _ = stopped.await;
        }));
        Self {
            stop: Some(stop),
            task,
        }
    }

    /// Graceful stop, as on SIGTERM: the socket is removed.
    pub(crate) async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(Duration::from_secs(10), &mut self.task)
            .await
            .expect("daemon stops within 10 s")
            .unwrap();
    }
}

/// A client that speaks the protocol by hand (snow directly, not the library's channel) so a
/// test can re-send, reorder or corrupt exactly the bytes it chooses.
pub(crate) struct RawClient {
    pub(crate) stream: UnixStream,
    noise: snow::TransportState,
    /// Handshake message 1 as sent, for replays on another connection.
    pub(crate) handshake: Vec<u8>,
}

impl RawClient {
    pub(crate) async fn connect(
        socket: &Path,
        client_private: &[u8; 32],
        server_public: &[u8; 32],
    ) -> Self {
        let mut stream = UnixStream::connect(socket).await.unwrap();
        let mut hs = snow::Builder::new(NOISE_PARAMS.parse().unwrap())
            .prologue(PROLOGUE)
            .unwrap()
            .local_private_key(client_private)
            .unwrap()
            .remote_public_key(server_public)
            .unwrap()
            .build_initiator()
            .unwrap();
        let mut buf = vec![0u8; 65535];
        let n = hs.write_message(&[], &mut buf).unwrap();
        let handshake = buf[..n].to_vec();
        write_frame(&mut stream, &handshake).await;
        let reply = read_frame(&mut stream).await.expect("handshake message 2");
        let mut payload = vec![0u8; 65535];
        hs.read_message(&reply, &mut payload).unwrap();
        Self {
            stream,
            noise: hs.into_transport_mode().unwrap(),
            handshake,
        }
    }

    /// Encrypts one request into a frame body without sending it.
    pub(crate) fn seal(&mut self, json: &str) -> Vec<u8> {
        let mut buf = vec![0u8; 65535];
        let n = self.noise.write_message(json.as_bytes(), &mut buf).unwrap();
        buf.truncate(n);
        buf
    }

    pub(crate) async fn send(&mut self, body: &[u8]) {
        write_frame(&mut self.stream, body).await;
    }

    /// The next response, or `None` once the daemon has closed the connection.
    pub(crate) async fn recv(&mut self) -> Option<String> {
        let body = read_frame(&mut self.stream).await?;
        let mut buf = vec![0u8; 65535];
        let n = self.noise.read_message(&body, &mut buf).unwrap();
        Some(String::from_utf8(buf[..n].to_vec()).unwrap())
    }

    pub(crate) async fn request(&mut self, json: &str) -> Option<String> {
        let body = self.seal(json);
        self.send(&body).await;
        self.recv().await
    }
}

pub(crate) async fn write_frame(stream: &mut UnixStream, body: &[u8]) {
    let mut out = u16::try_from(body.len()).unwrap().to_be_bytes().to_vec();
    out.extend_from_slice(body);
    // The daemon may already have hung up; the test then observes that on the read side.
    let _ = stream.write_all(&out).await;
}

/// Reads one frame; `None` on end of stream or a reset (the daemon dropped the connection).
pub(crate) async fn read_frame(stream: &mut UnixStream) -> Option<Vec<u8>> {
    let read = async {
        let mut len = [0u8; 2];
        stream.read_exact(&mut len).await.ok()?;
        let mut body = vec![0u8; usize::from(u16::from_be_bytes(len))];
        stream.read_exact(&mut body).await.ok()?;
        Some(body)
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("the daemon neither answered nor closed within 10 s")
}

/// Polls `check` every 20 ms for up to 10 s.
pub(crate) async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..500 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for {what}");
}
