//! The load on the cluster while the faults happen: the bench's flow driver (`svc-bench-flows`,
//! closed loop, its `BENCH` line) and the test's own timestamped probes through the balancer — a
//! client_credentials grant, a DPoP-bound grant, an introspection, a management read and a
//! management write (a user creation, whose `admin.user.created` event the webhook check
//! follows) — each recording when it finished and with what status, so that failures can be
//! placed inside or outside a fault window.

use crate::dpop::{Claims, Prover};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use svc_domain::SigningAlg;
use tokio::process::{Child, Command};
use tokio::task::JoinSet;

/// Pause between two requests of one probe: about 10 requests a second each, light enough for
/// a 2-core machine that also runs four nodes, HAProxy, PostgreSQL and Redis.
const PROBE_PAUSE: Duration = Duration::from_millis(100);
/// Pause between two user creations (each hashes a password).
const WRITE_PAUSE: Duration = Duration::from_millis(200);
/// A probe request that takes longer counts as a transport failure (status 0).
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// One probe request: when it ended (since the load started), which probe, what status (0: no
/// HTTP answer).
#[derive(Clone, Debug)]
pub(super) struct Sample {
    pub(super) at: Duration,
    pub(super) kind: &'static str,
    pub(super) status: u16,
}

/// One user creation and its answer.
#[derive(Clone, Debug)]
pub(super) struct Write {
    pub(super) email: String,
    pub(super) status: u16,
    pub(super) id: Option<String>,
}

/// Where and as whom the probes talk.
#[derive(Clone)]
pub(super) struct Target {
    /// The balancer, `http://127.0.0.1:{port}`.
    pub(super) lb: String,
    /// The tenant's host as clients name it (`acme.localhost:{balancer port}`).
    pub(super) host: String,
    /// A machine application for the grant, DPoP and introspection probes.
    pub(super) probe: (String, String),
    /// A management token (users:read, users:write).
    pub(super) management: String,
}

/// The running probes and what they recorded.
pub(super) struct Probes {
    pub(super) samples: Arc<Mutex<Vec<Sample>>>,
    pub(super) writes: Arc<Mutex<Vec<Write>>>,
    stop: Arc<AtomicBool>,
    tasks: JoinSet<()>,
}

fn status_of(result: reqwest::Result<reqwest::Response>) -> u16 {
    result.map_or(0, |r| r.status().as_u16())
}

impl Probes {
    /// Starts every probe; `t0` is the start of the load.
    pub(super) fn start(target: &Target, t0: Instant) -> Self {
        let samples = Arc::new(Mutex::new(Vec::new()));
        let writes = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let client = reqwest::Client::builder()
            .timeout(PROBE_TIMEOUT)
            .build()
            .unwrap();
        let mut tasks = JoinSet::new();
        let token_url = format!("{}/oauth/token", target.lb);
        let kinds: [&'static str; 4] = ["token", "dpop", "introspect", "read"];
        for kind in kinds {
            let (client, target, samples, stop) = (
                client.clone(),
                target.clone(),
                samples.clone(),
                stop.clone(),
            );
            let token_url = token_url.clone();
            tasks.spawn(async move {
                let prover = Prover::new(SigningAlg::Es256);
                let htu = format!("http://{}/oauth/token", target.host);
                let (id, secret) = &target.probe;
                // The introspection probe's token, taken by its first round.
                let mut introspected: Option<String> = None;
                while !stop.load(Ordering::SeqCst) {
                    let status = match kind {
                        "token" | "dpop" => {
                            let mut request = client
                                .post(&token_url)
                                .header("host", &target.host)
                                .basic_auth(id, Some(secret))
                                .form(&[("grant_type", "client_credentials")]);
                            if kind == "dpop" {
                                request = request
                                    .header("dpop", prover.proof(&Claims::post(htu.clone())));
                            }
                            status_of(request.send().await)
                        }
                        "introspect" => {
                            if introspected.is_none() {
                                let answer = client
                                    .post(&token_url)
                                    .header("host", &target.host)
                                    .basic_auth(id, Some(secret))
                                    .form(&[("grant_type", "client_credentials")])
                                    .send()
                                    .await;
                                if let Ok(answer) = answer
                                    && let Ok(body) = answer.json::<Value>().await
                                {
                                    introspected = body["access_token"].as_str().map(str::to_owned);
                                }
                            }
                            match &introspected {
                                Some(token) => status_of(
                                    client
                                        .post(format!("{}/oauth/introspect", target.lb))
                                        .header("host", &target.host)
                                        .basic_auth(id, Some(secret))
                                        .form(&[("token", token.as_str())])
                                        .send()
                                        .await,
                                ),
                                None => 0,
                            }
                        }
                        _ => status_of(
                            client
                                .get(format!("{}/api/v1/tenant-users?limit=1", target.lb))
                                .header("host", &target.host)
                                .bearer_auth(&target.management)
                                .send()
                                .await,
                        ),
                    };
                    samples.lock().unwrap().push(Sample {
                        at: t0.elapsed(),
                        kind,
                        status,
                    });
                    tokio::time::sleep(PROBE_PAUSE).await;
                }
            });
        }
        let (w_client, w_target, w_samples, w_writes, w_stop) = (
            client,
            target.clone(),
            samples.clone(),
            writes.clone(),
            stop.clone(),
        );
        tasks.spawn(async move {
            let counter = AtomicUsize::new(0);
            while !w_stop.load(Ordering::SeqCst) {
                let n = counter.fetch_add(1, Ordering::SeqCst);
                let email = format!("written-{n}@cluster.example");
                let answer = w_client
                    .post(format!("{}/api/v1/tenant-users", w_target.lb))
                    .header("host", &w_target.host)
                    .bearer_auth(&w_target.management)
                    .json(&json!({"email": email, "name": "Written", "password": super::PASSWORD}))
                    .send()
                    .await;
                let (status, id) = match answer {
                    Ok(answer) => {
                        let status = answer.status().as_u16();
                        let body: Value = answer.json().await.unwrap_or(Value::Null);
                        (status, body["id"].as_str().map(str::to_owned))
                    }
                    Err(_) => (0, None),
                };
                w_samples.lock().unwrap().push(Sample {
                    at: t0.elapsed(),
                    kind: "write",
                    status,
                });
                w_writes.lock().unwrap().push(Write { email, status, id });
                tokio::time::sleep(WRITE_PAUSE).await;
            }
        });
        Self {
            samples,
            writes,
            stop,
            tasks,
        }
    }

    /// Stops the probes after their current request.
    pub(super) async fn stop(mut self) -> (Vec<Sample>, Vec<Write>) {
        self.stop.store(true, Ordering::SeqCst);
        while let Some(joined) = self.tasks.join_next().await {
            joined.unwrap();
        }
        let samples = self.samples.lock().unwrap().clone();
        let writes = self.writes.lock().unwrap().clone();
        (samples, writes)
    }
}

/// The flow driver next to `svc-runtime` in the target directory; fails (never skips) when it
/// was not built.
pub(super) fn driver_binary() -> PathBuf {
    let path = crate::binary()
        .parent()
        .expect("target directory")
        .join("svc-bench-flows");
    assert!(
        path.exists(),
        "{} is missing: build the load driver first with `cargo build -p svc-bench-flows` \
         (scripts/test-all.sh does)",
        path.display()
    );
    path
}

/// One run of the flow driver, set up and waiting at its gate.
pub(super) struct Driver {
    pub(super) what: String,
    gate: PathBuf,
    child: Child,
}

/// What the driver needs to know.
pub(super) struct DriverArgs<'a> {
    pub(super) subcommand: &'static str,
    pub(super) concurrency: usize,
    pub(super) duration: Duration,
    pub(super) client: (&'a str, &'a str),
    pub(super) users: usize,
}

impl Driver {
    /// Starts `svc-bench-flows {subcommand}` against the balancer; it sets up its workers and
    /// waits at its gate.
    pub(super) fn spawn(dir: &Path, target: &Target, args: &DriverArgs<'_>) -> Self {
        let gate = dir.join(format!("gate-{}", args.subcommand));
        let child = Command::new(driver_binary())
            .arg(args.subcommand)
            .args(["--server", "ours", "--base-url", &target.lb])
            .args(["--host", &target.host])
            .args(["--concurrency", &args.concurrency.to_string()])
            .args(["--duration", &args.duration.as_secs_f64().to_string()])
            .args(["--client-id", args.client.0])
            .args(["--users", &args.users.to_string()])
            .args(["--email", "bench-user-{i}@cluster.example"])
            .args(["--redirect-uri", super::DRIVER_REDIRECT])
            .args(["--timeout", "10"])
            .arg("--gate")
            .arg(&gate)
            .env("BENCH_CLIENT_SECRET", args.client.1)
            .env("BENCH_USER_PASSWORD", super::PASSWORD)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn svc-bench-flows");
        Self {
            what: format!(
                "{} ×{} for {:?}",
                args.subcommand, args.concurrency, args.duration
            ),
            gate,
            child,
        }
    }

    fn with_suffix(&self, suffix: &str) -> PathBuf {
        let mut name = self.gate.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    }

    /// Waits (at most 60 s) until the driver's workers are set up.
    pub(super) async fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.with_suffix(".ready").exists() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "svc-bench-flows {} ended during its setup: {status}",
                    self.what
                );
            }
            assert!(
                Instant::now() < deadline,
                "svc-bench-flows {} never finished its setup",
                self.what
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Opens the gate: the measured load starts.
    pub(super) fn go(&self) {
        std::fs::write(self.with_suffix(".go"), b"").unwrap();
    }

    /// Waits for the end of the run (at most `within`): its `BENCH` line, and its stderr.
    pub(super) async fn finish(self, within: Duration) -> (String, String) {
        let what = self.what.clone();
        let output = tokio::time::timeout(within, self.child.wait_with_output())
            .await
            .unwrap_or_else(|_| panic!("svc-bench-flows {what} did not end in time"))
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let line = stdout
            .lines()
            .find(|l| l.starts_with("BENCH "))
            .unwrap_or_else(|| {
                panic!(
                    "svc-bench-flows {what} printed no BENCH line ({}):\n{stdout}\n{stderr}",
                    output.status
                )
            })
            .to_owned();
        (line, stderr)
    }
}

/// The value of `key=` in a `BENCH` line.
pub(super) fn bench_value(line: &str, key: &str) -> u64 {
    line.split_whitespace()
        .find_map(|part| part.strip_prefix(key)?.strip_prefix('='))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {line}"))
}
