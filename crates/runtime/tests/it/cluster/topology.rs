//! The cluster itself: one fresh PostgreSQL database reached through a [`FaultyProxy`], a private
//! `redis-server` the test can kill and restart on the same port, one svc-kms daemon for the
//! shared signing keys, four `svc-runtime` processes (`auth`, `control`, `async`, `all`) on fixed
//! loopback ports, and HAProxy in front of them. Everything is a child of the test (killed on
//! drop), bound to 127.0.0.1 only.

use crate::binary;
use crate::shared_caches::SCRAPE;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use svc_store_postgres::testing::{TestDbGuard, fresh_database};
use svc_testkit::{FaultyProxy, KmsDaemon, Process};
use tokio::process::{Child, Command};

/// Sustained rate of the token-endpoint throttle, per client and per client IP: above what one
/// driver worker or a probe sends from one client on this 2-core machine (so the load is not
/// throttled), below half of what the throttle check sends from one client (so it can tell one
/// shared bucket from one per process).
pub(super) const THROTTLE_RATE: u32 = 200;
/// Its burst.
pub(super) const THROTTLE_BURST: u32 = 200;
/// Webhook attempts one async-capable node has in flight at most
/// (`webhooks.max_concurrent_deliveries`): the duplicates a kill can cause per node.
pub(super) const DELIVERY_SLOTS: usize = 4;
/// HAProxy's health check: every 500 ms, down after 2 failures, up after 2 successes.
const CHECK: &str = "inter 500ms fall 2 rise 2";

/// Ports handed out by [`free_port`] in this test process, never handed out twice.
static HANDED_OUT: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());

/// A free loopback port (bound and released: a node restarted later gets the same one), taken
/// below the kernel's ephemeral range. A port the kernel may give an outgoing connection (a
/// node's to PostgreSQL or Redis) could be taken between this check and the node's bind, or
/// while a killed node is down: CI once saw "Address already in use" that way.
pub(super) fn free_port() -> u16 {
    use std::hash::{BuildHasher, Hasher};
    const FLOOR: u16 = 10_000;
    let ephemeral_from = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    let mut handed_out = HANDED_OUT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if ephemeral_from > FLOOR {
        let span = u64::from(ephemeral_from - FLOOR);
        // A random start, so test processes running at once rarely probe the same ports.
        let start = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        for step in 0..span {
            let port = FLOOR + u16::try_from((start.wrapping_add(step)) % span).unwrap();
            if !handed_out.contains(&port)
                && std::net::TcpListener::bind(("127.0.0.1", port)).is_ok()
            {
                handed_out.push(port);
                return port;
            }
        }
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    handed_out.push(port);
    port
}

/// One `svc-runtime` process of the cluster, restartable on its port.
pub(super) struct Node {
    pub(super) name: &'static str,
    pub(super) port: u16,
    env: Vec<(String, String)>,
    dir: PathBuf,
    process: Option<Process>,
}

impl Node {
    /// `http://127.0.0.1:{port}`.
    pub(super) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn spawn(&mut self) {
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        self.process = Some(Process::spawn(binary(), &self.dir, &[], &env));
    }

    /// Waits until the node answers `/health/ready` with 200 (panicking with its output after
    /// 30 s).
    pub(super) async fn wait_ready(&self) {
        let process = self.process.as_ref().expect("running");
        process.wait_for_url(Duration::from_secs(30)).await;
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = client
                .get(format!("{}/health/ready", self.url()))
                .send()
                .await
                .is_ok_and(|r| r.status() == 200);
            if ready {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "node {} never became ready\nstdout:\n{}\nstderr:\n{}",
                self.name,
                process.stdout_text(),
                process.stderr_text()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// SIGKILL: the node dies mid-request, its leases and connections left as they are.
    pub(super) async fn kill_now(&mut self) {
        let mut process = self.process.take().expect("running");
        process.kill_now();
        let exit = process.wait(Duration::from_secs(10)).await;
        assert_eq!(exit.code, None, "node {} was killed by a signal", self.name);
    }

    /// Starts the node again on its port, as it was configured.
    pub(super) async fn restart(&mut self) {
        self.spawn();
        self.wait_ready().await;
    }
}

/// A `redis-server` of the test's own, so it can be killed without disturbing the shared one.
pub(super) struct PrivateRedis {
    pub(super) port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

impl PrivateRedis {
    async fn start(dir: &Path) -> Self {
        let mut redis = Self {
            port: free_port(),
            dir: dir.to_path_buf(),
            child: None,
        };
        redis.restart().await;
        redis
    }

    /// `redis://127.0.0.1:{port}/0`.
    pub(super) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// SIGKILL, and waits for the process to be gone.
    pub(super) async fn kill(&mut self) {
        let mut child = self.child.take().expect("running");
        child.start_kill().unwrap();
        child.wait().await.unwrap();
    }

    /// Starts it (again) on the same port, empty, and waits until it answers PING.
    pub(super) async fn restart(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("redis-server cannot be started ({e}): run `bash scripts/services.sh`")
            });
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let client = redis::Client::open(self.url()).unwrap();
            if let Ok(mut connection) = client.get_multiplexed_async_connection().await
                && redis::cmd("PING")
                    .query_async::<String>(&mut connection)
                    .await
                    .is_ok()
            {
                return;
            }
            assert!(Instant::now() < deadline, "redis-server did not answer");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// HAProxy in the foreground (`-db`), on a free loopback port.
pub(super) struct Balancer {
    pub(super) port: u16,
    _child: Child,
}

impl Balancer {
    /// Management paths (`/api/`, `/scim/`, `/openapi.json`: the control plane's routes) go to
    /// {control, all}, everything else (the auth plane) to {auth, all}; a server leaves the
    /// rotation when `/health/ready` fails twice. Every request gets a random client address in
    /// `X-Forwarded-For` (the nodes trust 127.0.0.1): the test's traffic stands for many people
    /// behind the balancer, so the per-address bucket of the throttle does not turn all of it
    /// into one client.
    async fn start(dir: &Path, auth: u16, control: u16, all: u16) -> Self {
        let port = free_port();
        let config = format!(
            "global
  maxconn 1024
defaults
  mode http
  timeout connect 1s
  timeout client 30s
  timeout server 30s
  # Only a connection that never opened is retried elsewhere: a request a node may have
  # acted on is never sent twice.
  retries 2
  option redispatch
  retry-on conn-failure
frontend cluster
  bind 127.0.0.1:{port}
  http-request set-header X-Forwarded-For 10.%[rand(250)].%[rand(250)].%[rand(250)]
  acl management path_beg /api/ /scim/ /openapi.json
  use_backend control if management
  default_backend auth
backend auth
  balance roundrobin
  option httpchk
  http-check send meth GET uri /health/ready ver HTTP/1.1 hdr Host localhost
  server auth 127.0.0.1:{auth} check {CHECK}
  server all 127.0.0.1:{all} check {CHECK}
backend control
  balance roundrobin
  option httpchk
  http-check send meth GET uri /health/ready ver HTTP/1.1 hdr Host localhost
  server control 127.0.0.1:{control} check {CHECK}
  server all 127.0.0.1:{all} check {CHECK}
"
        );
        let path = dir.join("haproxy.cfg");
        std::fs::write(&path, config).unwrap();
        let child = Command::new("haproxy")
            .arg("-f")
            .arg(&path)
            .arg("-db")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("haproxy cannot be started ({e}): run `bash scripts/services.sh`")
            });
        let balancer = Self {
            port,
            _child: child,
        };
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        // Both backends have a server up once readiness and a management path answer with
        // something other than HAProxy's own 503.
        loop {
            let auth_up = client
                .get(format!("{}/health/ready", balancer.url()))
                .send()
                .await
                .is_ok_and(|r| r.status() == 200);
            let control_up = client
                .get(format!("{}/api/v1/control-plane/tenants", balancer.url()))
                .send()
                .await
                .is_ok_and(|r| r.status() != 503);
            if auth_up && control_up {
                return balancer;
            }
            assert!(
                Instant::now() < deadline,
                "HAProxy never routed to the nodes"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// `http://127.0.0.1:{port}`.
    pub(super) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// Everything the test runs.
pub(super) struct Cluster {
    /// `auth`, `control`, `async`, `all`, in that order.
    pub(super) nodes: Vec<Node>,
    pub(super) balancer: Balancer,
    pub(super) redis: PrivateRedis,
    /// The nodes' path to PostgreSQL.
    pub(super) postgres: FaultyProxy,
    /// The database, direct (for the CLI).
    pub(super) database: String,
    _kms: KmsDaemon,
    guard: Option<TestDbGuard>,
    _dir: tempfile::TempDir,
}

/// Index of each node in [`Cluster::nodes`].
pub(super) const AUTH: usize = 0;
pub(super) const CONTROL: usize = 1;
pub(super) const ALL: usize = 3;

impl Cluster {
    pub(super) async fn start() -> Self {
        for tool in ["haproxy", "redis-server"] {
            let found = std::process::Command::new("sh")
                .args(["-c", &format!("command -v {tool}")])
                .output()
                .is_ok_and(|o| o.status.success());
            assert!(
                found,
                "{tool} is not installed: run `bash scripts/services.sh` (it installs it)"
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let kms = KmsDaemon::start(dir.path()).await;
        let redis = PrivateRedis::start(dir.path()).await;
        let (database, guard) = fresh_database().await.expect("fresh PostgreSQL database");
        let mut url = reqwest::Url::parse(&database).unwrap();
        let upstream = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap_or(5432));
        let upstream = tokio::net::lookup_host(upstream)
            .await
            .unwrap()
            .next()
            .unwrap();
        let postgres = FaultyProxy::start(upstream).await;
        url.set_host(Some("127.0.0.1")).unwrap();
        url.set_port(Some(postgres.addr().port())).unwrap();
        let through_proxy = url.to_string();

        let migrated = Process::run(
            binary(),
            dir.path(),
            &["--migrate-only"],
            &[("DATABASE_URL", database.as_str())],
        )
        .await;
        assert_eq!(migrated.code, Some(0), "{}", migrated.stderr);

        let mut common: Vec<(String, String)> = kms.env();
        let prefix = crate::coordination_redis::prefix();
        let shared = [
            ("DATABASE_URL", through_proxy.as_str()),
            // The listening line (the URL) only; no access log for thousands of requests.
            ("RUST_LOG", "warn,svc_runtime=info"),
            ("SVC_DEPLOYMENT__ALLOW_ALL_IN_ONE_RUNTIME_PLANE", "true"),
            ("SVC_DEPLOYMENT__COORDINATION_BACKEND", "redis"),
            ("SVC_REDIS__URL", &redis.url()),
            ("SVC_REDIS__KEY_PREFIX", &prefix),
            ("SVC_DPOP__ENABLED", "true"),
            ("SVC_SERVER__BASE_DOMAIN", "localhost"),
            ("SVC_SERVER__TRUSTED_PROXIES", r#"["127.0.0.1"]"#),
            ("SVC_SERVER__METRICS_BEARER_TOKEN", SCRAPE),
            ("SVC_SERVER__ENDPOINT_THROTTLE__ENABLED", "true"),
            (
                "SVC_SERVER__ENDPOINT_THROTTLE__REQUESTS_PER_SECOND",
                &THROTTLE_RATE.to_string(),
            ),
            (
                "SVC_SERVER__ENDPOINT_THROTTLE__BURST",
                &THROTTLE_BURST.to_string(),
            ),
            ("SVC_DATABASE__CONNECT_TIMEOUT_SECS", "1"),
            // Cheap password hashing: sign-ins and user creations under load on 2 cores.
            ("SVC_AUTH__ARGON2_MEMORY_KIB", "8192"),
            ("SVC_AUTH__ARGON2_ITERATIONS", "1"),
            ("SVC_WEBHOOKS__POLL_INTERVAL_MS", "50"),
            ("SVC_WEBHOOKS__RETRY_SCHEDULE_SECS", "[1, 1, 1, 1, 1, 1]"),
            ("SVC_WEBHOOKS__REQUEST_TIMEOUT_SECS", "2"),
            // An attempt left in flight by a killed node is sent again after 5 s (the least allowed).
            ("SVC_WEBHOOKS__LEASE_SECS", "5"),
            (
                "SVC_WEBHOOKS__MAX_CONCURRENT_DELIVERIES",
                &DELIVERY_SLOTS.to_string(),
            ),
        ];
        common.extend(shared.map(|(k, v)| (k.to_owned(), v.to_owned())));

        let mut nodes: Vec<Node> = ["auth", "control", "async", "all"]
            .into_iter()
            .map(|plane| {
                let port = free_port();
                let dir = dir.path().join(plane);
                std::fs::create_dir_all(&dir).unwrap();
                let mut env = common.clone();
                env.push(("SVC_RUNTIME_PLANE".into(), plane.into()));
                env.push(("SVC_SERVER__PORT".into(), port.to_string()));
                Node {
                    name: plane,
                    port,
                    env,
                    dir,
                    process: None,
                }
            })
            .collect();
        for node in &mut nodes {
            node.spawn();
        }
        for node in &nodes {
            node.wait_ready().await;
        }
        let balancer = Balancer::start(
            dir.path(),
            nodes[AUTH].port,
            nodes[CONTROL].port,
            nodes[ALL].port,
        )
        .await;
        Self {
            nodes,
            balancer,
            redis,
            postgres,
            database,
            _kms: kms,
            guard: Some(guard),
            _dir: dir,
        }
    }

    /// The nodes serving the auth plane (`auth`, `all`): where the races and the bounds are
    /// measured, bypassing the balancer.
    pub(super) fn auth_nodes(&self) -> [String; 2] {
        [self.nodes[AUTH].url(), self.nodes[ALL].url()]
    }

    /// Stops every node (SIGTERM, then waits), then drops the database.
    pub(super) async fn stop(mut self) {
        for node in &mut self.nodes {
            if let Some(process) = node.process.take() {
                process.terminate();
                process.wait(Duration::from_secs(20)).await;
            }
        }
        drop(self.balancer);
        if let Some(guard) = self.guard.take() {
            guard.drop_database().await.expect("drop test database");
        }
    }
}
