//! The transport between the runtime and the daemon: length-prefixed frames on a Unix stream
//! socket, a Noise `KK` handshake that authenticates both static keys, and the encrypted channel
//! that follows.
//!
//! A frame is a big-endian `u16` length followed by that many bytes (1..=65535, the Noise message
//! limit). The initiator (client) sends handshake message 1 (`-> e, es, ss`), the responder
//! (daemon) answers with message 2 (`<- e, ee, se`); after that every frame is one Noise transport
//! message carrying one request or one response. Both handshake payloads are empty: message 1's
//! payload would be 0-RTT data that an eavesdropper can replay, so nothing is ever sent there.
//!
//! Replay, reordering and tampering are refused by Noise itself: each transport message is sealed
//! with ChaChaPoly under a per-direction key and an implicit counter nonce, so a frame re-sent,
//! sent out of order, or modified fails to decrypt, and the receiver then drops the connection
//! (the counter cannot be resynchronised, by design). Frames recorded from one connection are
//! useless on another, whose keys derive from fresh ephemeral keys.

use crate::keys::{PrivateKey, PublicKey};
use std::io;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use zeroize::Zeroizing;

/// The Noise protocol name: KK pattern, X25519, ChaChaPoly, BLAKE2s.
pub const NOISE_PARAMS: &str = "Noise_KK_25519_ChaChaPoly_BLAKE2s";
/// The Noise prologue. Both ends mix it into the handshake, so a peer speaking another version of
/// this protocol fails the handshake instead of misreading messages.
pub const PROLOGUE: &[u8] = b"svc-kms/1";
/// Largest frame body (the Noise message limit).
pub const MAX_FRAME_LEN: usize = 65535;
/// Bytes a Noise transport message adds to its payload (the AEAD tag).
const TAG_LEN: usize = 16;

/// Why a handshake did not produce a channel.
#[derive(Debug)]
pub(crate) enum HandshakeError {
    /// The peer's message did not decrypt: its static key (or its view of ours) is not the one
    /// configured, or the prologue differs.
    Authentication,
    /// The peer closed the connection before the handshake finished.
    Closed,
    /// The peer sent something that is not a handshake message of this protocol.
    Malformed(&'static str),
    /// The socket failed.
    Io(io::Error),
    /// `snow` refused its own inputs (a key of the wrong length); a bug, not a peer's fault.
    Noise(snow::Error),
}

/// Why a message could not be sent or received on an established channel.
#[derive(Debug)]
pub(crate) enum ChannelError {
    /// A frame failed AEAD authentication: replayed, reordered or modified.
    Authentication,
    /// The peer closed the connection in the middle of a frame.
    Truncated,
    /// A zero-length frame, or a payload too large for one Noise message.
    Malformed(&'static str),
    /// The socket failed.
    Io(io::Error),
}

/// An authenticated, encrypted, ordered message channel over one Unix stream connection.
pub(crate) struct Channel {
    stream: UnixStream,
    noise: snow::TransportState,
    frame: Vec<u8>,
}

impl Channel {
    /// Seals `payload` into one frame and writes it.
    pub(crate) async fn send(&mut self, payload: &[u8]) -> Result<(), ChannelError> {
        if payload.len() + TAG_LEN > MAX_FRAME_LEN {
            return Err(ChannelError::Malformed("message too large for one frame"));
        }
        let len = self
            .noise
            .write_message(payload, &mut self.frame)
            .map_err(|_| ChannelError::Malformed("message too large for one frame"))?;
        write_frame(&mut self.stream, &self.frame[..len])
            .await
            .map_err(ChannelError::Io)
    }

    /// Reads and opens the next frame. `Ok(None)` means the peer closed the connection cleanly,
    /// between frames.
    pub(crate) async fn recv(&mut self) -> Result<Option<Zeroizing<Vec<u8>>>, ChannelError> {
        let len = match read_frame(&mut self.stream, &mut self.frame).await {
            Ok(Some(len)) => len,
            Ok(None) => return Ok(None),
            Err(FrameError::Truncated) => return Err(ChannelError::Truncated),
            Err(FrameError::Empty) => return Err(ChannelError::Malformed("empty frame")),
            Err(FrameError::Io(e)) => return Err(ChannelError::Io(e)),
        };
        let mut payload = Zeroizing::new(vec![0u8; len]);
        let n = self
            .noise
            .read_message(&self.frame[..len], &mut payload)
            .map_err(|_| ChannelError::Authentication)?;
        payload.truncate(n);
        Ok(Some(payload))
    }
}

fn builder<'a>(
    local: &'a PrivateKey,
    remote: &'a PublicKey,
) -> Result<snow::Builder<'a>, snow::Error> {
    let params: snow::params::NoiseParams = NOISE_PARAMS.parse()?;
    snow::Builder::new(params)
        .prologue(PROLOGUE)?
        .local_private_key(local.expose())?
        .remote_public_key(remote.as_bytes())
}

/// Runs the initiator side of the handshake (the client).
pub(crate) async fn initiate(
    mut stream: UnixStream,
    local: &PrivateKey,
    remote: &PublicKey,
) -> Result<Channel, HandshakeError> {
    let mut noise = builder(local, remote)
        .and_then(snow::Builder::build_initiator)
        .map_err(HandshakeError::Noise)?;
    let mut frame = vec![0u8; MAX_FRAME_LEN];
    let len = noise
        .write_message(&[], &mut frame)
        .map_err(HandshakeError::Noise)?;
    write_frame(&mut stream, &frame[..len])
        .await
        .map_err(HandshakeError::Io)?;
    let len = match read_frame(&mut stream, &mut frame).await {
        Ok(Some(len)) => len,
        // The daemon hangs up without a word when message 1 fails to authenticate.
        Ok(None) | Err(FrameError::Truncated) => return Err(HandshakeError::Closed),
        Err(FrameError::Io(e)) if e.kind() == io::ErrorKind::ConnectionReset => {
            return Err(HandshakeError::Closed);
        }
        Err(FrameError::Io(e)) => return Err(HandshakeError::Io(e)),
        Err(FrameError::Empty) => return Err(HandshakeError::Malformed("empty frame")),
    };
    let mut payload = vec![0u8; MAX_FRAME_LEN];
    let n = noise
        .read_message(&frame[..len], &mut payload)
        .map_err(|_| HandshakeError::Authentication)?;
    if n != 0 {
        return Err(HandshakeError::Malformed(
            "handshake message 2 carries a payload",
        ));
    }
    let noise = noise.into_transport_mode().map_err(HandshakeError::Noise)?;
    Ok(Channel {
        stream,
        noise,
        frame,
    })
}

/// Runs the responder side of the handshake (the daemon).
pub(crate) async fn accept(
    mut stream: UnixStream,
    local: &PrivateKey,
    remote: &PublicKey,
) -> Result<Channel, HandshakeError> {
    let mut noise = builder(local, remote)
        .and_then(snow::Builder::build_responder)
        .map_err(HandshakeError::Noise)?;
    let mut frame = vec![0u8; MAX_FRAME_LEN];
    let len = match read_frame(&mut stream, &mut frame).await {
        Ok(Some(len)) => len,
        Ok(None) | Err(FrameError::Truncated) => return Err(HandshakeError::Closed),
        Err(FrameError::Empty) => return Err(HandshakeError::Malformed("empty frame")),
        Err(FrameError::Io(e)) => return Err(HandshakeError::Io(e)),
    };
    let mut payload = vec![0u8; MAX_FRAME_LEN];
    let n = noise
        .read_message(&frame[..len], &mut payload)
        .map_err(|e| match e {
            snow::Error::Decrypt | snow::Error::Dh => HandshakeError::Authentication,
            _ => HandshakeError::Malformed("not a Noise KK handshake message"),
        })?;
    if n != 0 {
        // A payload here is replayable 0-RTT data; this protocol never sends any.
        return Err(HandshakeError::Malformed(
            "handshake message 1 carries a payload",
        ));
    }
    let len = noise
        .write_message(&[], &mut frame)
        .map_err(HandshakeError::Noise)?;
    write_frame(&mut stream, &frame[..len])
        .await
        .map_err(HandshakeError::Io)?;
    let noise = noise.into_transport_mode().map_err(HandshakeError::Noise)?;
    Ok(Channel {
        stream,
        noise,
        frame,
    })
}

#[derive(Debug)]
enum FrameError {
    Truncated,
    Empty,
    Io(io::Error),
}

/// Reads one frame into `buf` (which must hold [`MAX_FRAME_LEN`] bytes) and returns its length;
/// `None` when the peer closed the connection before the first byte of a frame.
async fn read_frame(stream: &mut UnixStream, buf: &mut [u8]) -> Result<Option<usize>, FrameError> {
    let mut prefix = [0u8; 2];
    let first = stream.read(&mut prefix).await.map_err(FrameError::Io)?;
    if first == 0 {
        return Ok(None);
    }
    if first == 1 {
        stream
            .read_exact(&mut prefix[1..])
            .await
            .map_err(eof_is_truncation)?;
    }
    let len = usize::from(u16::from_be_bytes(prefix));
    if len == 0 {
        return Err(FrameError::Empty);
    }
    let body = buf.get_mut(..len).ok_or(FrameError::Empty)?;
    stream.read_exact(body).await.map_err(eof_is_truncation)?;
    Ok(Some(len))
}

fn eof_is_truncation(e: io::Error) -> FrameError {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        FrameError::Truncated
    } else {
        FrameError::Io(e)
    }
}

/// Writes one frame (prefix and body in a single write, so a frame is never split across two
/// system calls when the socket buffer has room).
async fn write_frame(stream: &mut UnixStream, body: &[u8]) -> io::Result<()> {
    let len = u16::try_from(body.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame too large"))?;
    let mut out = Vec::with_capacity(2 + body.len());
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(body);
    stream.write_all(&out).await?;
    stream.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keypair() -> (PrivateKey, PublicKey) {
        let params: snow::params::NoiseParams = NOISE_PARAMS.parse().unwrap();
        let kp = snow::Builder::new(params).generate_keypair().unwrap();
        let mut private = [0u8; 32];
        private.copy_from_slice(&kp.private);
        let mut public = [0u8; 32];
        public.copy_from_slice(&kp.public);
        (
            PrivateKey::from_bytes(private),
            PublicKey::from_bytes(public),
        )
    }

    #[tokio::test]
    async fn handshake_then_messages_both_ways() {
        let (server_sk, server_pk) = keypair();
        let (client_sk, client_pk) = keypair();
        let (a, b) = UnixStream::pair().unwrap();
        let server = tokio::spawn(async move {
            let mut ch = accept(b, &server_sk, &client_pk).await.unwrap();
            let got = ch.recv().await.unwrap().unwrap();
            ch.send(&got.iter().rev().copied().collect::<Vec<u8>>())
                .await
                .unwrap();
            assert!(ch.recv().await.unwrap().is_none(), "client closed cleanly");
        });
        let mut ch = initiate(a, &client_sk, &server_pk).await.unwrap();
        ch.send(b"abc").await.unwrap();
        assert_eq!(&**ch.recv().await.unwrap().unwrap(), b"cba");
        drop(ch);
        server.await.unwrap();
    }

    #[tokio::test]
    async fn a_wrong_client_key_fails_on_the_server_and_closes_the_client() {
        let (server_sk, server_pk) = keypair();
        let (_, client_pk) = keypair();
        let (intruder_sk, _) = keypair();
        let (a, b) = UnixStream::pair().unwrap();
        let server = tokio::spawn(async move { accept(b, &server_sk, &client_pk).await.err() });
        let client = initiate(a, &intruder_sk, &server_pk).await.err();
        assert!(matches!(
            server.await.unwrap(),
            Some(HandshakeError::Authentication)
        ));
        assert!(matches!(client, Some(HandshakeError::Closed)));
    }

    #[tokio::test]
    async fn oversized_payloads_are_refused_before_sending() {
        let (server_sk, server_pk) = keypair();
        let (client_sk, client_pk) = keypair();
        let (a, b) = UnixStream::pair().unwrap();
        let server =
            tokio::spawn(async move { accept(b, &server_sk, &client_pk).await.map(|_| ()) });
        let mut ch = initiate(a, &client_sk, &server_pk).await.unwrap();
        server.await.unwrap().unwrap();
        let err = ch.send(&vec![0; MAX_FRAME_LEN]).await.unwrap_err();
        assert!(matches!(err, ChannelError::Malformed(_)));
    }
}
