//! The README's walk-throughs run as written: a shell block is taken from `README.md` itself,
//! pointed at a service this test started (its URL for `http://127.0.0.1:8080`, the real binary
//! for `cargo run -p svc-runtime --`, the test's database), and run with `bash -euo pipefail`
//! (`curl`, `openssl` 3 and `python3`, as the README says). A change to the README that breaks a
//! command, or a change to the service that breaks the README, fails here.

use crate::binary;
use serde_json::Value;
use svc_testkit::{BACKENDS, Process, TestApp};

/// The first fenced `sh` block after the heading line `heading` in the README.
fn shell_block_after(heading: &str) -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md at the workspace root");
    let rest = readme
        .split_once(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("README has no heading {heading:?}"))
        .1;
    let block = rest
        .split_once("```sh\n")
        .unwrap_or_else(|| panic!("no sh block after {heading:?}"))
        .1;
    block
        .split_once("\n```")
        .unwrap_or_else(|| panic!("the sh block after {heading:?} is not closed"))
        .0
        .to_owned()
}

/// `block` aimed at `app`: the line starting the service (the test started it) is left out,
/// the CLI is the binary under test on the app's database, the base URL the app's.
fn aimed_at(block: &str, app: &TestApp) -> String {
    let database = match &app.database_url {
        Some(url) => url.clone(),
        None => format!("sqlite://{}", app.sqlite_path().display()),
    };
    let body: Vec<&str> = block
        .lines()
        .filter(|line| !line.trim_end().ends_with("cargo run -p svc-runtime &"))
        .collect();
    let body = body
        .join("\n")
        .replace(
            "cargo run -q -p svc-runtime --",
            &format!("env DATABASE_URL='{database}' '{}'", binary().display()),
        )
        .replace("http://127.0.0.1:8080", &app.url);
    assert!(
        !body.contains("cargo run") && !body.contains(":8080"),
        "the walk-through still names a command or address the test cannot aim: {body}"
    );
    body
}

#[tokio::test]
async fn agents_in_five_minutes_runs_as_written() {
    let block =
        shell_block_after("#### Agents in five minutes: challenge-response (`[challenge]`)");
    assert!(
        block.starts_with("SVC_CHALLENGE__ENABLED=true cargo run -p svc-runtime &"),
        "the walk-through starts the service with the switch this test sets: {block}"
    );
    for backend in BACKENDS {
        let app = TestApp::spawn_with(
            backend,
            &[
                ("SVC_TENANT__DEFAULT_TENANT_SLUG", "default"),
                ("SVC_CHALLENGE__ENABLED", "true"),
            ],
        )
        .await;
        let work = tempfile::tempdir().unwrap();
        let script = format!("set -euo pipefail\n{}\n", aimed_at(&block, &app));
        let exit = Process::run(
            std::path::Path::new("bash"),
            work.path(),
            &["-c", &script],
            &[],
        )
        .await;
        assert_eq!(
            exit.code,
            Some(0),
            "{backend:?}: the walk-through failed\n--- stdout\n{}\n--- stderr\n{}",
            exit.stdout,
            exit.stderr
        );
        // The last thing printed is the agent's token response (curl adds no newline, so it
        // shares a line with the API resource printed before it).
        let last = exit
            .stdout
            .rfind("{\"access_token\"")
            .map(|at| exit.stdout[at..].trim());
        let answer: Value = last
            .and_then(|l| serde_json::from_str(l).ok())
            .unwrap_or_else(|| panic!("{backend:?}: no JSON answer at the end: {}", exit.stdout));
        assert_eq!(answer["token_type"], "Bearer", "{answer}");
        assert_eq!(answer["scope"], "bookings:read", "{answer}");
        let token = answer["access_token"].as_str().expect("an access token");
        let jwks: Value = app
            .request(reqwest::Method::GET, "/.well-known/jwks.json")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let jwks: svc_sdk::jsonwebtoken::jwk::JwkSet = serde_json::from_value(jwks).unwrap();
        let now = svc_domain::Clock::now(&svc_domain::SystemClock).unix_timestamp();
        let tenant = answer_tenant(token);
        let route =
            svc_sdk::Requirements::new(&app.url, "https://api.example.com/bookings", &tenant)
                .with_scope("bookings:read");
        let claims = svc_sdk::validate_with_jwks(token, &jwks, &route, now)
            .unwrap_or_else(|e| panic!("{backend:?}: the walk-through's token: {e}"));
        assert!(
            claims.sub.starts_with("agt_"),
            "{backend:?}: {}",
            claims.sub
        );
        assert_eq!(claims.client_id, claims.sub);
        app.shutdown().await;
    }
}

/// The `tenant_id` claim of `token` (read without verification; the SDK then verifies it).
fn answer_tenant(token: &str) -> String {
    use base64::Engine;
    let payload = token.split('.').nth(1).expect("a JWT");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    let claims: Value = serde_json::from_slice(&bytes).unwrap();
    claims["tenant_id"].as_str().expect("tenant_id").to_owned()
}
