//! The daemon coming and going: missing and stale sockets, restarts the client recovers from,
//! timeouts, idle connections, and refusals at startup.

use crate::support::{Daemon, Keys};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;
use svc_kms::{KmsError, ServeError, Server, ServerConfig};

#[tokio::test]
async fn a_missing_socket_is_reported_as_such() {
    let keys = Keys::new();
    let err = keys.client().ping().await.unwrap_err();
    assert_eq!(
        err,
        KmsError::SocketMissing {
            path: keys.socket()
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "kms.socket_path {} does not exist: is svc-kms serve running?",
            keys.socket().display()
        )
    );
    assert!(err.is_unavailable());
}

#[tokio::test]
async fn the_same_client_recovers_when_the_daemon_comes_back() {
    let keys = Keys::new();
    let client = keys.client();
    let daemon = Daemon::start(keys.config());
    let wrapped = client.wrap("ctx", b"dek").await.unwrap();
    daemon.stop().await;
    assert!(
        !keys.socket().exists(),
        "a graceful stop removes the socket"
    );
    assert_eq!(
        client.unwrap("ctx", &wrapped).await.unwrap_err(),
        KmsError::SocketMissing {
            path: keys.socket()
        }
    );
    let daemon = Daemon::start(keys.config());
    assert_eq!(&client.unwrap("ctx", &wrapped).await.unwrap()[..], b"dek");
    daemon.stop().await;
}

#[tokio::test]
async fn a_restart_between_two_calls_is_invisible_to_the_client() {
    let keys = Keys::new();
    let client = keys.client();
    let daemon = Daemon::start(keys.config());
    client.ping().await.unwrap(); // leaves an idle connection to the first daemon
    daemon.stop().await;
    let daemon = Daemon::start(keys.config());
    client.ping().await.unwrap(); // the dead connection is discarded and the call retried
    daemon.stop().await;
}

#[tokio::test]
async fn connections_closed_for_idleness_are_replaced() {
    let keys = Keys::new();
    let mut config = keys.config();
    config.idle_timeout = Duration::from_millis(100);
    let daemon = Daemon::start(config);
    let client = keys.client();
    client.ping().await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    client.ping().await.unwrap();
    daemon.stop().await;
}

#[tokio::test]
async fn a_stale_socket_is_unreachable_and_is_replaced_by_the_next_daemon() {
    let keys = Keys::new();
    // What a crashed daemon leaves behind: the socket file, with nobody listening.
    drop(std::os::unix::net::UnixListener::bind(keys.socket()).unwrap());
    let client = keys.client();
    let err = client.ping().await.unwrap_err();
    assert_eq!(
        err,
        KmsError::Unreachable {
            path: keys.socket(),
            detail: "nothing is listening on it (a stale socket: svc-kms serve is not running)"
                .into()
        }
    );
    assert!(err.is_unavailable());
    let daemon = Daemon::start(keys.config());
    let mode = std::fs::metadata(keys.socket())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    client.ping().await.unwrap();
    daemon.stop().await;
}

#[tokio::test]
async fn a_second_daemon_on_a_live_socket_is_refused() {
    let keys = Keys::new();
    let daemon = Daemon::start(keys.config());
    let err = Server::bind(keys.config()).unwrap_err();
    assert!(matches!(err, ServeError::InUse { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("another svc-kms is already serving on it")
    );
    keys.client().ping().await.unwrap();
    daemon.stop().await;
}

#[tokio::test]
async fn a_file_at_the_socket_path_is_left_alone() {
    let keys = Keys::new();
    std::fs::write(keys.socket(), "precious").unwrap();
    let err = Server::bind(keys.config()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "--socket ({}): exists and is not a socket; refusing to replace it",
            keys.socket().display()
        )
    );
    assert_eq!(std::fs::read_to_string(keys.socket()).unwrap(), "precious");
}

#[tokio::test]
async fn a_daemon_that_never_answers_times_out() {
    let keys = Keys::new();
    let listener = tokio::net::UnixListener::bind(keys.socket()).unwrap();
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let client = keys.client().with_timeout(Duration::from_millis(200));
    let err = client.ping().await.unwrap_err();
    assert_eq!(
        err,
        KmsError::Timeout {
            after: Duration::from_millis(200)
        }
    );
    assert_eq!(err.to_string(), "the KMS did not answer within 200 ms");
    hold.abort();
}

#[test]
fn a_readable_master_key_is_refused() {
    let keys = Keys::new();
    let master = keys.path("kms-master.key");
    std::fs::set_permissions(&master, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = ServerConfig::from_files(
        keys.socket(),
        &keys.path("kms-server.key"),
        &keys.path("kms-client.pub"),
        &master,
        &[],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "--master-key ({path}): holds a secret but is readable by group or others (mode \
             0644); run `chmod 600 {path}`",
            path = master.display()
        )
    );
    std::fs::set_permissions(&master, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(
        keys.path("kms-server.key"),
        std::fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    let err = keys_config_err(&keys);
    assert!(err.starts_with("--server-key ("), "{err}");
}

fn keys_config_err(keys: &Keys) -> String {
    ServerConfig::from_files(
        keys.socket(),
        &keys.path("kms-server.key"),
        &keys.path("kms-client.pub"),
        &keys.path("kms-master.key"),
        &[],
    )
    .unwrap_err()
    .to_string()
}

#[test]
fn a_missing_master_key_is_not_created() {
    let keys = Keys::new();
    std::fs::remove_file(keys.path("kms-master.key")).unwrap();
    let err = keys_config_err(&keys);
    assert!(err.starts_with("--master-key ("), "{err}");
    assert!(err.contains("cannot be opened"), "{err}");
    assert!(!keys.path("kms-master.key").exists());
}
