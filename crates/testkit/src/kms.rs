//! A real svc-kms daemon for tests: keys generated with `svc-kms keygen`'s library function, the
//! daemon served in-process on a Unix socket, and stoppable / restartable to show how the
//! runtime behaves when the KMS disappears and returns.

use std::path::{Path, PathBuf};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running (or stopped) svc-kms daemon with its key files.
pub struct KmsDaemon {
    /// Directory holding every key file.
    pub dir: PathBuf,
    /// The daemon's socket.
    pub socket: PathBuf,
    running: Option<(oneshot::Sender<()>, JoinHandle<()>)>,
}

impl KmsDaemon {
    /// Generates keys under `dir` (unless present) and starts the daemon.
    pub async fn start(dir: &Path) -> Self {
        svc_kms::keygen(dir, false).expect("svc-kms keygen");
        let mut daemon = Self {
            dir: dir.to_path_buf(),
            socket: dir.join("kms.sock"),
            running: None,
        };
        daemon.restart().await;
        daemon
    }

    /// The `SVC_KMS__*` variables a runtime needs to use this daemon.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            (
                "SVC_KMS__SOCKET_PATH".into(),
                self.socket.display().to_string(),
            ),
            (
                "SVC_KMS__SERVER_PUBLIC_KEY_PATH".into(),
                self.dir.join("kms-server.pub").display().to_string(),
            ),
            (
                "SVC_KMS__CLIENT_PRIVATE_KEY_PATH".into(),
                self.dir.join("kms-client.key").display().to_string(),
            ),
        ]
    }

    /// Stops the daemon (its socket disappears).
    pub async fn stop(&mut self) {
        if let Some((stop, task)) = self.running.take() {
            let _ = stop.send(());
            task.await.expect("kms daemon task");
        }
    }

    /// Starts the daemon again on the same socket with the same keys.
    pub async fn restart(&mut self) {
        self.stop().await;
        let config = svc_kms::ServerConfig::from_files(
            self.socket.clone(),
            &self.dir.join("kms-server.key"),
            &self.dir.join("kms-client.pub"),
            &self.dir.join("kms-master.key"),
            &[],
        )
        .expect("kms config");
        let server = svc_kms::Server::bind(config).expect("kms bind");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.serve(async move {
            let _ = stopped.await;
        }));
        self.running = Some((stop, task));
    }
}
