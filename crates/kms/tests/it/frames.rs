//! Frame-level attacks: a replayed, reordered or modified frame ends the connection; the daemon
//! keeps serving everyone else. Also a corrupted response, as the client sees it.

use crate::support::{Daemon, Keys, RawClient, read_frame, write_frame};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use std::time::Duration;
use svc_kms::{KmsClient, KmsError};
use tokio::net::{UnixListener, UnixStream};

async fn raw(keys: &Keys) -> RawClient {
    RawClient::connect(
        &keys.socket(),
        &keys.raw("kms-client.key"),
        &keys.raw("kms-server.pub"),
    )
    .await
}

#[tokio::test]
async fn the_raw_protocol_works_as_documented() {
    let keys = Keys::new();
    let daemon = Daemon::start(keys.config());
    let mut client = raw(&keys).await;
    assert_eq!(client.request(r#""ping""#).await.unwrap(), r#""pong""#);
    let wrapped = client
        .request(r#"{"wrap":{"context":"c","plaintext":"AAEC"}}"#)
        .await
        .unwrap();
    assert!(
        wrapped.starts_with(r#"{"wrapped":{"ciphertext":""#),
        "{wrapped}"
    );
    daemon.stop().await;
}

#[tokio::test]
async fn a_replayed_frame_drops_the_connection() {
    let keys = Keys::new();
    let daemon = Daemon::start(keys.config());
    let mut client = raw(&keys).await;
    let frame = client.seal(r#""ping""#);
    client.send(&frame).await;
    assert_eq!(client.recv().await.as_deref(), Some(r#""pong""#));
    client.send(&frame).await;
    assert_eq!(
        client.recv().await,
        None,
        "the daemon must hang up, not answer"
    );
    keys.client().ping().await.unwrap();
    daemon.stop().await;
}

#[tokio::test]
async fn a_modified_frame_drops_the_connection() {
    let keys = Keys::new();
    let daemon = Daemon::start(keys.config());
    let mut client = raw(&keys).await;
    assert_eq!(
        client.request(r#""ping""#).await.as_deref(),
        Some(r#""pong""#)
    );
    let mut frame = client.seal(r#"{"unwrap":{"context":"c","ciphertext":"AAEC"}}"#);
    frame[3] ^= 0x01;
    client.send(&frame).await;
    assert_eq!(client.recv().await, None);
    // A flipped tag byte is just as fatal.
    let mut client = raw(&keys).await;
    let mut frame = client.seal(r#""ping""#);
    let last = frame.len() - 1;
    frame[last] ^= 0x80;
    client.send(&frame).await;
    assert_eq!(client.recv().await, None);
    keys.client().ping().await.unwrap();
    daemon.stop().await;
}

#[tokio::test]
async fn reordered_frames_drop_the_connection() {
    let keys = Keys::new();
    let daemon = Daemon::start(keys.config());
    let mut client = raw(&keys).await;
    let first = client.seal(r#""ping""#);
    let second = client.seal(r#""ping""#);
    client.send(&second).await;
    assert_eq!(client.recv().await, None);
    drop(first);
    keys.client().ping().await.unwrap();
    daemon.stop().await;
}

#[tokio::test]
async fn a_recorded_session_replayed_on_a_new_connection_gets_nothing() {
    let keys = Keys::new();
    let daemon = Daemon::start(keys.config());
    let mut original = raw(&keys).await;
    let request = original.seal(r#"{"wrap":{"context":"c","plaintext":"AAEC"}}"#);
    original.send(&request).await;
    assert!(original.recv().await.unwrap().starts_with(r#"{"wrapped""#));
    // An eavesdropper re-sends handshake message 1 and the request on a fresh connection. KK's
    // first message is replayable, so the daemon answers message 2, but the request was sealed
    // under the old session's keys and fails.
    let mut stream = UnixStream::connect(keys.socket()).await.unwrap();
    write_frame(&mut stream, &original.handshake).await;
    assert!(
        read_frame(&mut stream).await.is_some(),
        "handshake message 2"
    );
    write_frame(&mut stream, &request).await;
    assert_eq!(read_frame(&mut stream).await, None);
    keys.client().ping().await.unwrap();
    daemon.stop().await;
}

#[tokio::test]
async fn the_daemon_enforces_limits_itself_and_closes_on_garbage() {
    let keys = Keys::new();
    let daemon = Daemon::start(keys.config());
    let mut client = raw(&keys).await;
    // The library refuses this before sending; a hand-made request must meet the same answer.
    let big = BASE64.encode(vec![0u8; 5000]);
    let answer = client
        .request(&format!(
            r#"{{"wrap":{{"context":"c","plaintext":"{big}"}}}}"#
        ))
        .await
        .unwrap();
    assert_eq!(
        answer,
        r#"{"error":{"message":"plaintext is 5000 bytes; the KMS wraps at most 4096 bytes"}}"#
    );
    // Still the same connection, still in step.
    assert_eq!(
        client.request(r#""ping""#).await.as_deref(),
        Some(r#""pong""#)
    );
    // An authenticated but unintelligible request is answered, then the connection is closed.
    let answer = client.request(r#"{"sign":{}}"#).await.unwrap();
    assert!(answer.contains("malformed request"), "{answer}");
    assert_eq!(client.recv().await, None);
    daemon.stop().await;
}

#[tokio::test]
async fn a_corrupted_response_is_a_protocol_error_for_the_client() {
    let keys = Keys::new();
    let daemon = Daemon::start(keys.config());
    // A proxy between client and daemon that flips one byte of the first response (the frame
    // after handshake message 2).
    let proxy_path = keys.path("proxy.sock");
    let proxy = UnixListener::bind(&proxy_path).unwrap();
    let upstream = keys.socket();
    tokio::spawn(async move {
        loop {
            let Ok((client_side, _)) = proxy.accept().await else {
                return;
            };
            let server_side = UnixStream::connect(&upstream).await.unwrap();
            tokio::spawn(async move {
                let (mut client_read, mut client_write) = client_side.into_split();
                let (mut server_read, mut server_write) = server_side.into_split();
                tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
                });
                let mut n = 0;
                loop {
                    use tokio::io::{AsyncReadExt, AsyncWriteExt};
                    let mut len = [0u8; 2];
                    if server_read.read_exact(&mut len).await.is_err() {
                        return;
                    }
                    let mut body = vec![0u8; usize::from(u16::from_be_bytes(len))];
                    if server_read.read_exact(&mut body).await.is_err() {
                        return;
                    }
                    n += 1;
                    if n == 2 {
                        body[0] ^= 0x01;
                    }
                    let _ = client_write.write_all(&len).await;
                    let _ = client_write.write_all(&body).await;
                }
            });
        }
    });
    let client = KmsClient::new(
        &proxy_path,
        keys.path("kms-server.pub"),
        keys.path("kms-client.key"),
    )
    .unwrap()
    .with_timeout(Duration::from_secs(5));
    let err = client.ping().await.unwrap_err();
    assert_eq!(
        err,
        KmsError::Protocol(
            "a response failed authentication (replayed or modified); connection dropped".into()
        )
    );
    daemon.stop().await;
}
