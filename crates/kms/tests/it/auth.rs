//! Both ends must hold the static keys the other expects.

use crate::support::{Daemon, Keys};
use svc_kms::{KmsClient, KmsError};

const AUTH_FAILED: &str = "the KMS refused this client's key (kms.client_private_key_path) or \
                           presented a different server key (kms.server_public_key_path)";

#[tokio::test]
async fn a_client_with_the_wrong_key_is_refused_and_others_keep_working() {
    let keys = Keys::new();
    let other = Keys::new();
    let daemon = Daemon::start(keys.config());
    let intruder = KmsClient::new(
        keys.socket(),
        keys.path("kms-server.pub"),
        other.path("kms-client.key"),
    )
    .unwrap();
    let err = intruder.ping().await.unwrap_err();
    assert_eq!(err, KmsError::AuthenticationFailed);
    assert_eq!(err.to_string(), AUTH_FAILED);
    let err = intruder.wrap("ctx", b"dek").await.unwrap_err();
    assert_eq!(err, KmsError::AuthenticationFailed);
    keys.client().ping().await.unwrap();
    daemon.stop().await;
}

#[tokio::test]
async fn a_client_expecting_another_server_key_is_refused() {
    let keys = Keys::new();
    let other = Keys::new();
    let daemon = Daemon::start(keys.config());
    let misconfigured = KmsClient::new(
        keys.socket(),
        other.path("kms-server.pub"),
        keys.path("kms-client.key"),
    )
    .unwrap();
    assert_eq!(
        misconfigured.ping().await.unwrap_err(),
        KmsError::AuthenticationFailed
    );
    keys.client().ping().await.unwrap();
    daemon.stop().await;
}

#[tokio::test]
async fn a_daemon_with_another_server_key_is_refused_by_the_client() {
    // The client holds the right server public key; the daemon answering presents another.
    let keys = Keys::new();
    let impostor = Keys::new();
    let config = svc_kms::ServerConfig::from_files(
        keys.socket(),
        &impostor.path("kms-server.key"),
        &keys.path("kms-client.pub"),
        &impostor.path("kms-master.key"),
        &[],
    )
    .unwrap();
    let daemon = Daemon::start(config);
    assert_eq!(
        keys.client().ping().await.unwrap_err(),
        KmsError::AuthenticationFailed
    );
    daemon.stop().await;
}

#[test]
fn swapped_or_missing_key_files_are_named_at_construction() {
    let keys = Keys::new();
    let err = KmsClient::new(
        keys.socket(),
        keys.path("kms-client.pub"),
        keys.path("kms-client.key"),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "kms.server_public_key_path ({}): holds the KMS client's public key, but the KMS \
             server's public key is needed (is this kms-client.pub instead of kms-server.pub?)",
            keys.path("kms-client.pub").display()
        )
    );
    let err = KmsClient::new(
        keys.socket(),
        keys.path("kms-server.pub"),
        keys.path("kms-server.key"),
    )
    .unwrap_err();
    assert!(
        matches!(&err, KmsError::KeyFile { key: "kms.client_private_key_path", detail, .. }
            if detail.contains("is this kms-server.key instead of kms-client.key?")),
        "{err}"
    );
    let err = KmsClient::new(
        keys.socket(),
        keys.path("kms-server.pub"),
        keys.path("nope.key"),
    )
    .unwrap_err();
    assert!(
        matches!(&err, KmsError::KeyFile { key: "kms.client_private_key_path", path, .. }
            if path.ends_with("nope.key")),
        "{err}"
    );
}
