//! Wrap and unwrap through the client library against an in-process daemon.

use crate::support::{Daemon, Keys};
use svc_kms::{KmsError, MAX_PLAINTEXT_LEN};

#[tokio::test]
async fn wrap_then_unwrap_returns_the_plaintext() {
    let keys = Keys::new();
    let daemon = Daemon::start(keys.config());
    let client = keys.client();
    client.ping().await.unwrap();
    let dek = [0x42u8; 32];
    let wrapped = client.wrap("tenant:t1/key:k1", &dek).await.unwrap();
    assert_eq!(wrapped[0], 1, "format version");
    assert!(
        !wrapped.windows(32).any(|w| w == dek),
        "the plaintext is not in the ciphertext"
    );
    let unwrapped = client.unwrap("tenant:t1/key:k1", &wrapped).await.unwrap();
    assert_eq!(&unwrapped[..], &dek[..]);
    // Several requests share one connection, and the largest plaintext fits.
    let big = vec![7u8; MAX_PLAINTEXT_LEN];
    let wrapped_big = client.wrap("c", &big).await.unwrap();
    assert_eq!(
        &client.unwrap("c", &wrapped_big).await.unwrap()[..],
        &big[..]
    );
    daemon.stop().await;
}

#[tokio::test]
async fn a_wrapped_key_moved_to_another_context_is_refused() {
    let keys = Keys::new();
    let daemon = Daemon::start(keys.config());
    let client = keys.client();
    let wrapped = client.wrap("tenant:t1/key:k1", b"dek").await.unwrap();
    let err = client
        .unwrap("tenant:t2/key:k1", &wrapped)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        KmsError::Refused(
            "ciphertext failed authentication: it was modified, or wrapped under a different context"
                .into()
        )
    );
    assert_eq!(
        err.to_string(),
        "the KMS refused the request: ciphertext failed authentication: it was modified, or \
         wrapped under a different context"
    );
    // A refusal leaves the connection (and the daemon) usable.
    assert_eq!(
        &client.unwrap("tenant:t1/key:k1", &wrapped).await.unwrap()[..],
        b"dek"
    );
    daemon.stop().await;
}

#[tokio::test]
async fn tampered_ciphertexts_are_refused() {
    let keys = Keys::new();
    let daemon = Daemon::start(keys.config());
    let client = keys.client();
    let wrapped = client.wrap("ctx", &[1u8; 32]).await.unwrap();
    for i in [10, 40, wrapped.len() - 1] {
        let mut bad = wrapped.clone();
        bad[i] ^= 0x80;
        let err = client.unwrap("ctx", &bad).await.unwrap_err();
        assert!(
            matches!(&err, KmsError::Refused(m) if m.starts_with("ciphertext failed authentication")),
            "byte {i}: {err}"
        );
    }
    let mut other_version = wrapped.clone();
    other_version[0] = 9;
    assert_eq!(
        client.unwrap("ctx", &other_version).await.unwrap_err(),
        KmsError::Refused(
            "ciphertext format version 9 is not supported (this KMS reads version 1)".into()
        )
    );
    let err = client.unwrap("ctx", &wrapped[..20]).await.unwrap_err();
    assert!(
        matches!(&err, KmsError::Refused(m) if m.contains("too short")),
        "{err}"
    );
    let err = client.unwrap("ctx", b"").await.unwrap_err();
    assert!(matches!(&err, KmsError::Refused(_)), "{err}");
    daemon.stop().await;
}

#[tokio::test]
async fn oversized_plaintexts_and_bad_contexts_are_refused() {
    let keys = Keys::new();
    let daemon = Daemon::start(keys.config());
    let client = keys.client();
    let err = client
        .wrap("ctx", &vec![0u8; MAX_PLAINTEXT_LEN + 1])
        .await
        .unwrap_err();
    assert_eq!(
        err,
        KmsError::Refused("plaintext is 4097 bytes; the KMS wraps at most 4096 bytes".into())
    );
    assert_eq!(
        client.wrap("", b"k").await.unwrap_err(),
        KmsError::Refused("context must be 1 to 1024 bytes (got 0)".into())
    );
    let err = client.wrap(&"x".repeat(1025), b"k").await.unwrap_err();
    assert_eq!(
        err,
        KmsError::Refused("context must be 1 to 1024 bytes (got 1025)".into())
    );
    client.ping().await.unwrap();
    daemon.stop().await;
}

#[tokio::test]
async fn concurrent_calls_from_clones_all_succeed() {
    let keys = Keys::new();
    let daemon = Daemon::start(keys.config());
    let client = keys.client();
    let mut tasks = Vec::new();
    for i in 0..24u8 {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let ctx = format!("tenant:{i}");
            let wrapped = client.wrap(&ctx, &[i; 32]).await.unwrap();
            assert_eq!(&client.unwrap(&ctx, &wrapped).await.unwrap()[..], &[i; 32]);
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    daemon.stop().await;
}

#[tokio::test]
async fn a_rotated_daemon_still_unwraps_with_its_retired_key() {
    let keys = Keys::new();
    let daemon = Daemon::start(keys.config());
    let client = keys.client();
    let old = client.wrap("ctx", b"old dek").await.unwrap();
    daemon.stop().await;
    // Rotate: the old master key becomes retired, a new one is generated by keygen.
    std::fs::rename(keys.path("kms-master.key"), keys.path("kms-master-old.key")).unwrap();
    svc_kms::keygen(keys.dir.path(), false).unwrap();
    let config = svc_kms::ServerConfig::from_files(
        keys.socket(),
        &keys.path("kms-server.key"),
        &keys.path("kms-client.pub"),
        &keys.path("kms-master.key"),
        &[keys.path("kms-master-old.key")],
    )
    .unwrap();
    let daemon = Daemon::start(config);
    assert_eq!(&client.unwrap("ctx", &old).await.unwrap()[..], b"old dek");
    let new = client.wrap("ctx", b"new dek").await.unwrap();
    assert_ne!(new[1..9], old[1..9], "new wraps name the new master key");
    daemon.stop().await;
}
