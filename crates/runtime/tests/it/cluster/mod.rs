//! The cluster test (issue 21 item 4): four `svc-runtime` processes — one per plane (`auth`,
//! `control`, `async`) and one `all` — on one PostgreSQL database and one Redis, behind HAProxy
//! on loopback, so every plane is served by two processes. Under a light load (the bench's flow
//! driver plus the test's own probes) it shows the cross-node guarantees (checks 1–6, see
//! [`checks`] and [`ledger`]) and survives, one after the other, a `kill -9` of the `all` node,
//! the PostgreSQL path severed for 3 s and Redis killed and restarted: failures only inside each
//! fault window, no lost writes, recovery without restarting anything. It prints a table
//! (`--nocapture`) and then fails on any row that failed. See docs/cluster-test.md.

mod checks;
mod ledger;
mod probes;
mod topology;

use crate::common::{management_token_at, operator_token_at};
use crate::coordination_redis::sample;
use crate::hosted::support::REDIRECT;
use crate::webhooks::support::Receiver;
use ledger::Phase;
use probes::{Driver, DriverArgs, Probes, Target};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use topology::{ALL, Cluster};

/// The password of every person here (also `crate::hosted::support::PASSWORD`, which the
/// browser helpers sign in with).
pub(super) const PASSWORD: &str = crate::hosted::support::PASSWORD;
/// How long the webhook receiver takes to answer: with about five events a second, two or three
/// attempts are in flight at any time, so a fault catches some.
const RECEIVER_DELAY: Duration = Duration::from_millis(500);
/// The driver's redirect URI (never fetched).
pub(super) const DRIVER_REDIRECT: &str = "http://127.0.0.1/cb";

/// The whole test, setup and teardown included, must end within this (3 minutes on a 2-core
/// machine; everything is killed when it does not).
const TEST_LIMIT: Duration = Duration::from_secs(180);
/// The measured load: long enough for three faults with their windows and steady stretches
/// between them.
const LOAD_FOR: Duration = Duration::from_secs(62);
/// When the faults start (from the start of the load), after the checks.
const KILL_AT: Duration = Duration::from_secs(14);
const CUT_AT: Duration = Duration::from_secs(28);
const REDIS_AT: Duration = Duration::from_secs(44);
/// How long PostgreSQL and Redis stay away.
const OUTAGE: Duration = Duration::from_secs(3);
/// HAProxy marks a dead node down after 2 failed checks 500 ms apart (≤ 1.5 s with the check in
/// flight).
const DETECTION: Duration = Duration::from_millis(1500);
/// Failures allowed after a fault is over (the node marked down, the path restored, Redis
/// restarted), for requests already in flight and reconnections.
const GRACE: Duration = Duration::from_secs(5);
/// After PostgreSQL returns, a node's readiness follows its database watchdog (a ping every
/// 5 s in the shipped binary) and HAProxy wants two good checks (1 s): failures allowed for
/// that on top of [`GRACE`].
const READINESS_LAG: Duration = Duration::from_secs(6);
/// Redis's client reconnects with a back-off of at most 2 s (`crate::coordination`).
const REDIS_RECONNECT: Duration = Duration::from_secs(3);

/// One line of the report.
pub(super) struct Row {
    what: String,
    measured: String,
    bound: String,
    ok: bool,
}

impl Row {
    pub(super) fn new(what: &str, measured: String, bound: String, ok: bool) -> Self {
        Self {
            what: what.to_owned(),
            measured,
            bound,
            ok,
        }
    }
}

fn print_table(rows: &[Row], bench: &[String]) {
    println!("\n| check / fault | measured | bound | result |\n|---|---|---|---|");
    for row in rows {
        let result = if row.ok { "ok" } else { "FAILED" };
        println!(
            "| {} | {} | {} | {result} |",
            row.what, row.measured, row.bound
        );
    }
    for line in bench {
        println!("{line}");
    }
}

/// `POST {lb}{path}` on the tenant's host with `token`: the answer's JSON, asserting `status`.
async fn api(
    client: &reqwest::Client,
    target: &Target,
    path: &str,
    body: Value,
    status: u16,
) -> Value {
    let answer = client
        .post(format!("{}{path}", target.lb))
        .header("host", &target.host)
        .bearer_auth(&target.management)
        .json(&body)
        .send()
        .await
        .unwrap();
    let got = answer.status().as_u16();
    let body: Value = answer.json().await.unwrap_or(Value::Null);
    assert_eq!(got, status, "{path}: {body}");
    body
}

/// A machine application (client_credentials, `applications:read` allowed): id and secret.
async fn machine_app(client: &reqwest::Client, target: &Target, name: &str) -> (String, String) {
    let body = api(
        client,
        target,
        "/api/v1/applications",
        json!({
            "name": name,
            "redirect_uris": [],
            "grant_types": ["client_credentials"],
            "token_endpoint_auth_method": "client_secret_basic",
            "allowed_scopes": ["applications:read"],
            "first_party": false,
        }),
        201,
    )
    .await;
    let text = |k: &str| body[k].as_str().unwrap().to_owned();
    (text("client_id"), text("client_secret"))
}

/// A first-party code-flow application (no consent) with both redirect URIs: id and secret.
async fn code_flow_app(client: &reqwest::Client, target: &Target, name: &str) -> (String, String) {
    let body = api(
        client,
        target,
        "/api/v1/applications",
        json!({
            "name": name,
            "redirect_uris": [REDIRECT, DRIVER_REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "client_secret_basic",
            "allowed_scopes": ["openid", "profile", "email", "offline_access"],
            "first_party": true,
        }),
        201,
    )
    .await;
    let text = |k: &str| body[k].as_str().unwrap().to_owned();
    (text("client_id"), text("client_secret"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_nodes_behind_haproxy_keep_their_guarantees_through_kill_cut_and_redis_restart() {
    let started = Instant::now();
    tokio::time::timeout(TEST_LIMIT, run())
        .await
        .unwrap_or_else(|_| {
            panic!("the cluster test ran over {TEST_LIMIT:?}; everything it started is killed")
        });
    println!(
        "cluster test: {:.1} s in all",
        started.elapsed().as_secs_f64()
    );
}

/// Records a steady phase up to `from` and the fault window `from..to`.
fn push_fault(
    phases: &mut Vec<Phase>,
    name: &str,
    from: Duration,
    to: Duration,
    steady: &mut Duration,
) {
    phases.push(Phase {
        name: format!("steady before {name}"),
        from: *steady,
        to: from,
        fault: false,
    });
    phases.push(Phase {
        name: name.to_owned(),
        from,
        to,
        fault: true,
    });
    *steady = to;
}

/// The node's `svc_change_feed_listening` and `svc_coordination_up` gauges (`None` when
/// `/metrics` does not answer).
async fn coordination_gauges(client: &reqwest::Client, url: &str) -> Option<(f64, f64)> {
    let text = client
        .get(format!("{url}/metrics"))
        .bearer_auth(crate::shared_caches::SCRAPE)
        .send()
        .await
        .ok()?
        .text()
        .await
        .ok()?;
    Some((
        sample(&text, "svc_change_feed_listening")?,
        sample(&text, "svc_coordination_up")?,
    ))
}

/// 200 once the node at `url` listens to Redis again and, when `commands` (a node that runs
/// throttle and DPoP commands: the auth plane), its last command succeeded; else 503. A node
/// that sends no command keeps the gauge of its last one.
async fn coordinating(client: reqwest::Client, url: String, commands: bool) -> u16 {
    match coordination_gauges(&client, &url).await {
        Some((listening, up)) if listening == 1.0 && (!commands || up == 1.0) => 200,
        _ => 503,
    }
}

async fn sleep_until(t0: Instant, at: Duration) {
    tokio::time::sleep_until((t0 + at).into()).await;
}

async fn run() {
    let setup_started = Instant::now();
    let mut cluster = Cluster::start().await;
    let client = reqwest::Client::new();
    let lb = cluster.balancer.url();
    let operator = operator_token_at(&cluster.database).await;
    let tenant: Value = client
        .post(format!("{lb}/api/v1/control-plane/tenants"))
        .bearer_auth(&operator)
        .json(&json!({"slug": "acme", "display_name": "ACME"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let host = format!("acme.localhost:{}", cluster.balancer.port);
    let management_app = &tenant["management_application"];
    let management = management_token_at(
        &client,
        &lb,
        &host,
        management_app["client_id"]
            .as_str()
            .expect("tenant created"),
        management_app["client_secret"].as_str().unwrap(),
    )
    .await;
    let mut target = Target {
        lb: lb.clone(),
        host: host.clone(),
        probe: (String::new(), String::new()),
        management,
    };
    target.probe = machine_app(&client, &target, "probe").await;
    let throttled = machine_app(&client, &target, "throttled").await;
    let revoker = machine_app(&client, &target, "revoker").await;
    let rotating = machine_app(&client, &target, "rotating").await;
    // The driver's code-flow applications (one per subcommand), and another for the races: no
    // two of them share a throttle bucket.
    let web = code_flow_app(&client, &target, "web").await;
    let web_codes = code_flow_app(&client, &target, "web codes").await;
    let racer = code_flow_app(&client, &target, "racer").await;
    for email in [
        "ada@cluster.example",
        "bench-user-1@cluster.example",
        "bench-user-2@cluster.example",
    ] {
        let person = json!({"email": email, "name": "Person", "password": PASSWORD});
        api(&client, &target, "/api/v1/tenant-users", person, 201).await;
    }
    let receiver = Receiver::default();
    // A slow receiver (half a second per delivery, with about five events a second: two or
    // three attempts in flight) keeps attempts in flight when a node dies or loses its database.
    *receiver.delay.lock().unwrap() = RECEIVER_DELAY;
    let hook = receiver.start().await;
    let subscription = api(
        &client,
        &target,
        "/api/v1/webhooks",
        json!({"url": hook, "event_types": ["admin.user.created"], "description": "cluster"}),
        201,
    )
    .await;
    receiver.verify_with(subscription["secret"].as_str().unwrap());

    // The driver: refresh rotations (two workers) and code flows with a browser session (one
    // worker), each with a code-flow application of its own, through the balancer. Closed loops, so light:
    // about 150 token requests a second together, under the throttle's rate per client (the
    // driver's `token-flows` alone, one worker, runs past it on this machine). Set up before the
    // gate opens.
    let dir = tempfile::tempdir().unwrap();
    let mut drivers = vec![
        Driver::spawn(
            dir.path(),
            &target,
            &DriverArgs {
                subcommand: "refresh",
                concurrency: 2,
                duration: LOAD_FOR,
                client: (&web.0, &web.1),
                users: 2,
            },
        ),
        Driver::spawn(
            dir.path(),
            &target,
            &DriverArgs {
                subcommand: "authcode",
                concurrency: 1,
                duration: LOAD_FOR,
                client: (&web_codes.0, &web_codes.1),
                users: 2,
            },
        ),
    ];
    for driver in &mut drivers {
        driver.wait_ready().await;
    }
    let setup = setup_started.elapsed();
    for driver in &drivers {
        driver.go();
    }
    let t0 = Instant::now();
    let probes = Probes::start(&target, t0);
    let mut rows = vec![Row::new(
        "setup: 4 nodes, HAProxy, Redis, tenant, driver ready",
        format!("{:.1} s", setup.as_secs_f64()),
        "-".into(),
        true,
    )];

    // Checks 1, 2, 5, 6 and 4, under the load, before any fault.
    let auth_nodes = cluster.auth_nodes();
    let ctx = checks::Ctx {
        client: &client,
        lb: &lb,
        host: &host,
        nodes: auth_nodes.clone(),
        web: (&racer.0, &racer.1),
        email: "ada@cluster.example",
    };
    rows.extend(checks::races(&ctx).await);
    rows.push(checks::revocation(&ctx, (&revoker.0, &revoker.1)).await);
    rows.push(checks::secret_rotation(&ctx, (&rotating.0, &rotating.1), &target.management).await);
    rows.extend(checks::throttle(&ctx, (&throttled.0, &throttled.1)).await);
    let checks_done = t0.elapsed();
    rows.push(Row::new(
        "checks 1, 2, 4, 5, 6 done (under load, before the faults)",
        format!("{:.1} s into the load", checks_done.as_secs_f64()),
        format!("< {KILL_AT:?} (the first fault)"),
        checks_done < KILL_AT,
    ));
    assert!(
        checks_done < KILL_AT,
        "the checks took {checks_done:?}, past the first fault"
    );

    let mut phases = Vec::new();
    let mut steady_from = Duration::ZERO;

    // Fault 1: kill -9 of the `all` node (auth, control and async at once). HAProxy routes
    // around it; its webhook attempts in flight are sent again by the async node.
    sleep_until(t0, KILL_AT).await;
    let kill_at = t0.elapsed();
    // What the `all` node delivered so far: it takes part in the async work it leaves behind.
    let delivered_by_all = client
        .get(format!("{}/metrics", cluster.nodes[ALL].url()))
        .bearer_auth(crate::shared_caches::SCRAPE)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(r#"svc_webhook_attempts_total{outcome="succeeded"} "#))
        .map(str::to_owned)
        .unwrap_or_else(|| "0".into());
    let killed = Instant::now();
    cluster.nodes[ALL].kill_now().await;
    rows.push(Row::new(
        "kill -9 all: webhook attempts it had completed before",
        delivered_by_all,
        "-".into(),
        true,
    ));
    sleep_until(t0, kill_at + DETECTION + GRACE).await;
    let kill_end = t0.elapsed();
    push_fault(
        &mut phases,
        "kill -9 all",
        kill_at,
        kill_end,
        &mut steady_from,
    );
    // It comes back on its port; joining the rotation must cost nothing (a steady phase).
    let rejoin = Instant::now();
    cluster.nodes[ALL].restart().await;
    rows.push(Row::new(
        "kill -9 all: restarted node ready",
        format!("{:.1} s", rejoin.elapsed().as_secs_f64()),
        "-".into(),
        true,
    ));

    // Fault 2: every node's path to PostgreSQL severed for OUTAGE, then restored.
    sleep_until(t0, CUT_AT).await;
    let cut_at = t0.elapsed();
    cluster.postgres.cut();
    tokio::time::sleep(OUTAGE).await;
    cluster.postgres.restore();
    let restored = Instant::now();
    let urls: Vec<String> = cluster.nodes.iter().map(topology::Node::url).collect();
    let ready_again = checks::all_until(&urls, READINESS_LAG + GRACE, |url| {
        let client = client.clone();
        async move {
            client
                .get(format!("{url}/health/ready"))
                .send()
                .await
                .map_or(0, |r| r.status().as_u16())
        }
    })
    .await;
    rows.push(Row::new(
        "PG cut 3 s: every node ready again, no restart",
        ready_again.map_or("never".into(), |d| {
            format!("{:.1} s after restore", d.as_secs_f64())
        }),
        format!("≤ {:?}", READINESS_LAG + GRACE),
        ready_again.is_some(),
    ));
    let cut_end = restored.elapsed() + cut_at + OUTAGE;
    let cut_end = cut_end.max(cut_at + OUTAGE + READINESS_LAG + GRACE);
    sleep_until(t0, cut_end).await;
    push_fault(
        &mut phases,
        "PostgreSQL cut",
        cut_at,
        cut_end,
        &mut steady_from,
    );

    // Fault 3: Redis killed, down for OUTAGE, restarted empty on the same port.
    sleep_until(t0, REDIS_AT).await;
    let redis_at = t0.elapsed();
    cluster.redis.kill().await;
    tokio::time::sleep(OUTAGE).await;
    cluster.redis.restart().await;
    let up_again = checks::all_until(&urls, REDIS_RECONNECT + GRACE, |url| {
        let commands = auth_nodes.contains(&url);
        coordinating(client.clone(), url, commands)
    })
    .await;
    let mut gauges = Vec::new();
    for node in &cluster.nodes {
        gauges.push((node.name, coordination_gauges(&client, &node.url()).await));
    }
    rows.push(Row::new(
        "Redis killed 3 s: every node listening again (auth+all: commands succeed), no restart",
        up_again.map_or_else(
            || format!("never; (listening, up) = {gauges:?}"),
            |d| format!("{:.1} s after restart", d.as_secs_f64()),
        ),
        format!("≤ {:?}", REDIS_RECONNECT + GRACE),
        up_again.is_some(),
    ));
    let redis_end = redis_at + OUTAGE + REDIS_RECONNECT + GRACE;
    sleep_until(t0, redis_end).await;
    push_fault(
        &mut phases,
        "Redis down",
        redis_at,
        redis_end,
        &mut steady_from,
    );

    sleep_until(t0, LOAD_FOR).await;
    let load_end = t0.elapsed();
    phases.push(Phase {
        name: "steady after the faults".into(),
        from: steady_from,
        to: load_end + Duration::from_secs(10),
        fault: false,
    });
    let (samples, writes) = probes.stop().await;
    let mut bench = Vec::new();
    for driver in drivers {
        let what = driver.what.clone();
        let (line, stderr) = driver.finish(Duration::from_secs(30)).await;
        let requests = probes::bench_value(&line, "requests");
        rows.push(Row::new(
            &format!("driver {what}: completed iterations"),
            format!(
                "{requests} ({} non2xx, {} sockerr)",
                probes::bench_value(&line, "non2xx"),
                probes::bench_value(&line, "sockerr")
            ),
            "> 0".into(),
            requests > 0,
        ));
        bench.push(format!("driver {what}: {line}"));
        let failures: Vec<&str> = stderr.lines().take(5).collect();
        if !failures.is_empty() {
            bench.push(format!("  first failures: {failures:?}"));
        }
    }

    // The Redis window refused DPoP proofs (fail closed) and nothing else.
    let dpop_refused = samples
        .iter()
        .filter(|s| s.kind == "dpop" && s.status == 503 && s.at >= redis_at && s.at < redis_end)
        .count();
    rows.push(Row::new(
        "Redis down: DPoP proofs refused (503) in its window",
        format!("{dpop_refused}"),
        "≥ 1 (fail closed)".into(),
        dpop_refused >= 1,
    ));
    // The throttle fails open (the default `redis.throttle_fail_mode`): plain grants go on.
    let grants_refused = samples
        .iter()
        .filter(|s| s.kind == "token" && s.status != 200 && s.at >= redis_at && s.at < redis_end)
        .count();
    rows.push(Row::new(
        "Redis down: plain grants refused in its window",
        format!("{grants_refused}"),
        "0 (throttle fails open)".into(),
        grants_refused == 0,
    ));
    let (phase_rows, leaks) = ledger::phases(&samples, &phases);
    rows.extend(phase_rows);
    let (write_rows, existing) =
        ledger::writes(&client, &lb, &host, &target.management, &writes).await;
    rows.extend(write_rows);
    // Deliveries that arrived within the receiver's delay before the kill were still being
    // answered: attempts in flight then (of either async-capable node).
    let in_flight = receiver
        .seen()
        .iter()
        .filter(|r| r.at <= killed && killed.duration_since(r.at) < RECEIVER_DELAY)
        .count();
    rows.push(Row::new(
        "kill -9 all: webhook attempts in flight at the receiver (either node)",
        format!("{in_flight}"),
        "-".into(),
        true,
    ));
    let history = ledger::History {
        client: &client,
        lb: &lb,
        host: &host,
        token: &target.management,
        webhook: subscription["id"].as_str().unwrap(),
    };
    rows.extend(ledger::webhooks(&receiver, &existing, &history).await);

    print_table(&rows, &bench);
    let failed: Vec<&str> = rows
        .iter()
        .filter(|r| !r.ok)
        .map(|r| r.what.as_str())
        .collect();
    cluster.stop().await;
    assert!(
        failed.is_empty(),
        "failed: {failed:?}; failures outside the fault windows: {leaks:#?}"
    );
}
