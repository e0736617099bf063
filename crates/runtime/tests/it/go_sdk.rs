//! The Go SDK (`sdks/go`, issue 22 item 4) against the real service, on SQLite and PostgreSQL:
//! the service runs single-tenant (issuer `http://127.0.0.1:<port>`), this test hands the Go
//! tests the tenant's management credentials, and `go test` runs the SDK's unit tests and its
//! live test (`TestLive`: discovery, the management API, the code flow through the hosted pages
//! with hostile callbacks and ID tokens, UserInfo, refresh, the token-validating middleware and
//! logout). Go comes from `bash scripts/interop-setup.sh` (Debian's golang-go); the SDK uses the
//! standard library only, so nothing is downloaded.

use crate::common::{default_tenant, operator_token};
use crate::interop::{repo_root, run_command};
use std::path::PathBuf;
use std::time::Duration;
use svc_testkit::{BACKENDS, TestApp};

/// `go` on `PATH`, or a failure that says how to get it.
fn go() -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join("go"))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| {
            panic!(
                "go is not on PATH: run `bash scripts/interop-setup.sh` (installs Debian's \
                 golang-go), then run the tests again"
            )
        })
}

#[tokio::test]
async fn the_go_sdk_passes_its_tests_against_the_service() {
    let go = go();
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
        let cache = std::env::temp_dir().join("svc-go-build-cache");
        let cache = cache.display().to_string();
        let env = [
            ("SVC_E2E_ISSUER", app.url.as_str()),
            ("SVC_E2E_TENANT_ID", tenant.id.as_str()),
            ("SVC_E2E_MANAGEMENT_ID", tenant.client_id.as_str()),
            ("SVC_E2E_MANAGEMENT_SECRET", tenant.client_secret.as_str()),
            // Offline: the module has no dependencies, and nothing may be fetched.
            ("GOFLAGS", "-mod=mod"),
            ("GOPROXY", "off"),
            ("GOCACHE", cache.as_str()),
        ];
        let run = run_command(
            &go,
            &["test", "-count=1", "-v", "./..."],
            &repo_root().join("sdks/go"),
            &env,
            Duration::from_secs(300),
        )
        .await;
        assert_eq!(
            run.code,
            Some(0),
            "{backend:?}: go test failed\n{}\n{}",
            run.stdout,
            run.stderr
        );
        // The live test ran: it skips only without the environment given above.
        assert!(
            run.stdout.contains("--- PASS: TestLive"),
            "{backend:?}: TestLive did not pass\n{}",
            run.stdout
        );
        app.shutdown().await;
    }
}
