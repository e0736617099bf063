//! The real `svc-runtime` binary as a child process: a clean environment (only what the test
//! passes, plus PATH), its own working directory, and its output captured line by line.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// A running (or finished) `svc-runtime` process.
pub struct Process {
    child: Child,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<Vec<String>>>,
}

/// How a finished process ended.
#[derive(Debug)]
pub struct Exit {
    /// Exit code (None when killed by a signal).
    pub code: Option<i32>,
    /// Everything written to stdout.
    pub stdout: String,
    /// Everything written to stderr.
    pub stderr: String,
}

impl Process {
    /// Starts `binary` with `args` in `cwd`, with ONLY `env` (plus PATH) in its environment.
    pub fn spawn(binary: &Path, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(binary);
        command
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("spawn svc-runtime");
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let out = child.stdout.take().expect("stdout");
        let err = child.stderr.take().expect("stderr");
        for (pipe, sink) in [
            (
                Box::new(out) as Box<dyn tokio::io::AsyncRead + Unpin + Send>,
                stdout.clone(),
            ),
            (Box::new(err), stderr.clone()),
        ] {
            tokio::spawn(async move {
                let mut lines = BufReader::new(pipe).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    sink.lock().unwrap().push(line);
                }
            });
        }
        Self {
            child,
            stdout,
            stderr,
        }
    }

    /// Runs to completion (at most 60 s) and returns how it ended.
    pub async fn run(binary: &Path, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Exit {
        Self::spawn(binary, cwd, args, env)
            .wait(Duration::from_secs(60))
            .await
    }

    /// Waits for the `listening` log line and returns the URL it names.
    pub async fn wait_for_url(&self, within: Duration) -> String {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            for line in self.stdout.lock().unwrap().iter() {
                let value = serde_json::from_str::<serde_json::Value>(line).ok();
                if let Some(url) = value
                    .as_ref()
                    .and_then(|v| v.get("url"))
                    .and_then(|u| u.as_str())
                {
                    return url.to_owned();
                }
            }
            if tokio::time::Instant::now() > deadline {
                panic!(
                    "svc-runtime did not report its URL in time\nstdout:\n{}\nstderr:\n{}",
                    self.stdout_text(),
                    self.stderr_text()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Sends SIGTERM (graceful shutdown).
    pub fn terminate(&self) {
        let pid = self.child.id().expect("pid").to_string();
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill");
        assert!(status.success());
    }

    /// Sends SIGKILL: the process dies at once, mid-work, with no chance to clean up.
    pub fn kill_now(&mut self) {
        self.child.start_kill().expect("SIGKILL");
    }

    /// Waits for the process to end (killing it after `within`).
    pub async fn wait(mut self, within: Duration) -> Exit {
        let code = match tokio::time::timeout(within, self.child.wait()).await {
            Ok(status) => status.expect("wait").code(),
            Err(_) => {
                let _ = self.child.kill().await;
                panic!(
                    "svc-runtime did not exit within {within:?}\nstdout:\n{}\nstderr:\n{}",
                    self.stdout_text(),
                    self.stderr_text()
                );
            }
        };
        // Let the readers drain the pipes.
        tokio::time::sleep(Duration::from_millis(100)).await;
        Exit {
            code,
            stdout: self.stdout_text(),
            stderr: self.stderr_text(),
        }
    }

    /// Everything on stdout so far.
    pub fn stdout_text(&self) -> String {
        self.stdout.lock().unwrap().join("\n")
    }

    /// Everything on stderr so far.
    pub fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }
}
