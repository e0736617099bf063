//! The real `svc-kms` binary: keygen, serve, a client round trip, a refused key (and its log
//! line), a crash (SIGKILL), a restart the same client recovers from, and a graceful SIGTERM.

use crate::support::{RawClient, eventually};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use svc_kms::{KmsClient, KmsError};
use tokio::process::{Child, Command};

fn binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_svc-kms"))
}

async fn keygen(dir: &Path, force: bool) -> std::process::Output {
    let mut cmd = Command::new(binary());
    cmd.arg("keygen").arg("--dir").arg(dir);
    if force {
        cmd.arg("--force");
    }
    cmd.output().await.unwrap()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Starts `svc-kms serve` with its JSON logs going to `log`; the master key comes from the
/// environment to cover the `KMS_*` variables.
fn serve(keys: &Path, socket: &Path, log: &Path) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    Command::new(binary())
        .arg("serve")
        .arg("--socket")
        .arg(socket)
        .arg("--server-key")
        .arg(keys.join("kms-server.key"))
        .arg("--client-public-key")
        .arg(keys.join("kms-client.pub"))
        .env("KMS_MASTER_KEY", keys.join("kms-master.key"))
        .env("RUST_LOG", "debug")
        .stdout(Stdio::from(log))
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

async fn wait_until_serving(client: &KmsClient) {
    for _ in 0..500 {
        if client.ping().await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("svc-kms serve did not come up within 10 s");
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[tokio::test]
async fn keygen_serve_crash_restart_and_stop() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    let socket: PathBuf = tmp.path().join("kms.sock");
    let log = tmp.path().join("kms.log");

    // keygen: five files, secrets 0600, and instructions naming each side's settings.
    let out = keygen(&keys, false).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    for (name, side) in [
        ("kms-server.key", "daemon:  svc-kms serve --server-key"),
        ("kms-server.pub", "runtime: kms.server_public_key_path"),
        ("kms-client.key", "runtime: kms.client_private_key_path"),
        (
            "kms-client.pub",
            "daemon:  svc-kms serve --client-public-key",
        ),
        ("kms-master.key", "daemon:  svc-kms serve --master-key"),
    ] {
        assert!(
            stdout
                .lines()
                .any(|l| l.contains("created") && l.contains(name) && l.contains(side)),
            "{name}: {stdout}"
        );
    }
    for secret in ["kms-server.key", "kms-client.key", "kms-master.key"] {
        assert_eq!(mode(&keys.join(secret)), 0o600, "{secret}");
    }

    // keygen again: nothing is overwritten.
    let before: Vec<String> = std::fs::read_dir(&keys)
        .unwrap()
        .map(|e| read(&e.unwrap().path()))
        .collect();
    let out = keygen(&keys, false).await;
    assert!(out.status.success());
    assert!(String::from_utf8(out.stdout).unwrap().contains("kept"));
    let after: Vec<String> = std::fs::read_dir(&keys)
        .unwrap()
        .map(|e| read(&e.unwrap().path()))
        .collect();
    assert_eq!(before, after);

    // serve, then a round trip through the library.
    let mut daemon = serve(&keys, &socket, &log);
    let client = KmsClient::new(
        &socket,
        keys.join("kms-server.pub"),
        keys.join("kms-client.key"),
    )
    .unwrap();
    wait_until_serving(&client).await;
    assert_eq!(mode(&socket), 0o600);
    let secret = b"PLAINTEXT-MARKER-0123456789abcdef";
    let wrapped = client.wrap("tenant:t/key:k", secret).await.unwrap();
    assert_eq!(
        &client.unwrap("tenant:t/key:k", &wrapped).await.unwrap()[..],
        secret
    );

    // A client with another key: refused, and the daemon says why in its log.
    let other = tmp.path().join("other");
    assert!(keygen(&other, false).await.status.success());
    let intruder = KmsClient::new(
        &socket,
        keys.join("kms-server.pub"),
        other.join("kms-client.key"),
    )
    .unwrap();
    assert_eq!(
        intruder.ping().await.unwrap_err(),
        KmsError::AuthenticationFailed
    );
    eventually("the authentication failure in the log", || {
        read(&log).contains("client authentication failed")
    })
    .await;

    // A replayed frame: the daemon hangs up and logs why (without the frame's contents).
    let raw_key = |path: PathBuf| -> [u8; 32] {
        let text = read(&path);
        let (_, b64) = text.trim().rsplit_once(':').unwrap();
        BASE64.decode(b64).unwrap().try_into().unwrap()
    };
    let mut raw = RawClient::connect(
        &socket,
        &raw_key(keys.join("kms-client.key")),
        &raw_key(keys.join("kms-server.pub")),
    )
    .await;
    let frame = raw.seal(r#""ping""#);
    raw.send(&frame).await;
    assert_eq!(raw.recv().await.as_deref(), Some(r#""pong""#));
    raw.send(&frame).await;
    assert_eq!(raw.recv().await, None);
    eventually("the replay in the log", || {
        read(&log).contains("dropping connection: a frame failed authentication")
    })
    .await;
    client.ping().await.unwrap();

    // Crash: the socket stays behind with nobody listening.
    daemon.kill().await.unwrap();
    assert!(socket.exists());
    let err = client.ping().await.unwrap_err();
    assert!(matches!(err, KmsError::Unreachable { .. }), "{err}");

    // Restart on the same socket: the stale file is replaced and the same client recovers.
    let mut daemon = serve(&keys, &socket, &log);
    wait_until_serving(&client).await;
    assert_eq!(
        &client.unwrap("tenant:t/key:k", &wrapped).await.unwrap()[..],
        secret
    );
    assert!(read(&log).contains("removed a stale socket"));

    // SIGTERM: a clean exit that removes the socket.
    let pid = daemon.id().unwrap().to_string();
    let killed = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .await
        .unwrap();
    assert!(killed.success());
    let status = tokio::time::timeout(Duration::from_secs(10), daemon.wait())
        .await
        .expect("svc-kms stops within 10 s of SIGTERM")
        .unwrap();
    assert!(status.success(), "{status}");
    assert!(!socket.exists());
    assert_eq!(
        client.ping().await.unwrap_err(),
        KmsError::SocketMissing {
            path: socket.clone()
        }
    );

    // The logs are JSON lines and hold neither the plaintext nor any key.
    let logs = read(&log);
    assert!(logs.contains("svc-kms listening on"));
    for line in logs.lines() {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
    }
    assert!(!logs.contains("PLAINTEXT-MARKER"));
    for file in ["kms-server.key", "kms-client.key", "kms-master.key"] {
        let text = read(&keys.join(file));
        let (_, b64) = text.trim().rsplit_once(':').unwrap();
        assert!(!logs.contains(b64), "{file} leaked into the log");
    }
}

#[tokio::test]
async fn serve_refuses_a_readable_master_key_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    assert!(keygen(&keys, false).await.status.success());
    let master = keys.join("kms-master.key");
    std::fs::set_permissions(&master, std::fs::Permissions::from_mode(0o644)).unwrap();
    let socket = tmp.path().join("kms.sock");
    let out = serve(&keys, &socket, &tmp.path().join("kms.log"))
        .wait_with_output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr,
        format!(
            "svc-kms: --master-key ({path}): holds a secret but is readable by group or others \
             (mode 0644); run `chmod 600 {path}`\n",
            path = master.display()
        )
    );
    assert!(!socket.exists());
}

#[tokio::test]
async fn keygen_force_replaces_the_pairs_but_not_the_master_key() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    assert!(keygen(&keys, false).await.status.success());
    let server_key = read(&keys.join("kms-server.key"));
    let master = read(&keys.join("kms-master.key"));
    let out = keygen(&keys, true).await;
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("replaced kms-server.key"), "{stdout}");
    assert!(stdout.contains("kept     kms-master.key"), "{stdout}");
    assert_ne!(read(&keys.join("kms-server.key")), server_key);
    assert_eq!(read(&keys.join("kms-master.key")), master);
    // A half pair without --force: a one-line error and a non-zero exit.
    std::fs::remove_file(keys.join("kms-client.pub")).unwrap();
    let out = keygen(&keys, false).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("svc-kms: ") && stderr.contains("pass --force"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1);
}
