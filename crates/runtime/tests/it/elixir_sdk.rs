//! The Elixir SDK (`sdks/elixir`, issue 22 item 5) against the real service, on SQLite and
//! PostgreSQL: the service runs single-tenant (issuer `http://127.0.0.1:<port>`), this test hands
//! the SDK's tests the tenant's management credentials, and `mix test` runs the SDK's unit tests
//! and its live test (`test/svc/live_test.exs`: discovery, the management API, the code flow
//! through the hosted pages with hostile callbacks and ID tokens, UserInfo, refresh, client
//! credentials, the token-validating plug and logout). Elixir comes from
//! `bash scripts/interop-setup.sh` (Debian's elixir); the SDK uses Erlang/OTP only, so nothing is
//! downloaded from Hex.

use crate::common::{default_tenant, operator_token};
use crate::interop::{repo_root, run_command};
use std::path::PathBuf;
use std::time::Duration;
use svc_testkit::{BACKENDS, TestApp};

/// `mix` on `PATH`, or a failure that says how to get it.
fn mix() -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join("mix"))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| {
            panic!(
                "mix is not on PATH: run `bash scripts/interop-setup.sh` (installs Debian's \
                 elixir), then run the tests again"
            )
        })
}

#[tokio::test]
async fn the_elixir_sdk_passes_its_tests_against_the_service() {
    let mix = mix();
    // Build output and Mix's home outside the checkout, one per test process, so runs in
    // parallel (or next to a developer's `mix test`) never share a _build.
    let scratch = std::env::temp_dir().join(format!("svc-elixir-sdk-{}", std::process::id()));
    let build = scratch.join("_build/test").display().to_string();
    let mix_home = scratch.join("mix").display().to_string();
    for backend in BACKENDS {
        let app = TestApp::spawn_with(
            backend,
            &[
                ("SVC_TENANT__DEFAULT_TENANT_SLUG", "default"),
                ("SVC_AUTH__ARGON2_MEMORY_KIB", "8192"),
                ("SVC_AUTH__ARGON2_ITERATIONS", "1"),
            ],
        )
        .await;
        let tenant = default_tenant(&app, &operator_token(&app).await).await;
        let env = [
            ("SVC_E2E_ISSUER", app.url.as_str()),
            ("SVC_E2E_TENANT_ID", tenant.id.as_str()),
            ("SVC_E2E_MANAGEMENT_ID", tenant.client_id.as_str()),
            ("SVC_E2E_MANAGEMENT_SECRET", tenant.client_secret.as_str()),
            // Offline: the project has no dependencies, and nothing may be fetched.
            ("MIX_ENV", "test"),
            ("HEX_OFFLINE", "1"),
            ("MIX_HOME", mix_home.as_str()),
            ("MIX_BUILD_PATH", build.as_str()),
        ];
        let run = run_command(
            &mix,
            &["test", "--no-color", "--warnings-as-errors"],
            &repo_root().join("sdks/elixir"),
            &env,
            Duration::from_secs(300),
        )
        .await;
        assert_eq!(
            run.code,
            Some(0),
            "{backend:?}: mix test failed\n{}\n{}",
            run.stdout,
            run.stderr
        );
        // The live test ran: it is excluded only without the environment given above.
        assert!(
            run.stdout.contains("svc-elixir-live: passed"),
            "{backend:?}: the live test did not pass\n{}",
            run.stdout
        );
        app.shutdown().await;
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
