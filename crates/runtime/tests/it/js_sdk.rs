//! The TypeScript SDK (`sdks/js`: `@svc/client`, issue 22 item 1, and the framework packages
//! `@svc/react`, `@svc/vue`, `@svc/svelte`, `@svc/solid`, item 2) against the real service, on
//! SQLite and PostgreSQL: the service runs single-tenant (issuer `http://127.0.0.1:<port>`), this
//! test hands the package's tests the tenant's management credentials, and `npm test` compiles
//! the package (`tsc`) and runs its unit tests and its live test (`test/live.test.mjs`: the
//! management API, the code flow with PKCE through the hosted pages with hostile callbacks and
//! ID tokens, the shared rotating refresh, UserInfo, logout) and, with Chromium, its browser test
//! (`test/browser.test.mjs`: `login()` and `handleCallback()` in a real page), and each framework
//! package's example app, built with Vite and the framework's plugin, signed in, refreshed,
//! calling UserInfo and signed out in Chromium (`sdks/js/examples/*/test/browser.test.mjs`), and
//! the server-side packages' examples, `@svc/next`'s built with `next build` and served by `next
//! start`, `@svc/sveltekit`'s built with Vite and adapter-node and served by `node build`:
//! sign-in with a sealed session cookie, hostile callbacks, a forced refresh in a route, the
//! protected path's returnTo, logout ending the svc session. Node and
//! `sdks/js/node_modules` (TypeScript, publint, playwright-core, exactly as locked) come from
//! `bash scripts/interop-setup.sh`; nothing is downloaded here.

use crate::common::{default_tenant, operator_token};
use crate::interop::{
    ONE_AT_A_TIME, Prerequisite, chromium_path, repo_root, require_prerequisites, run_command,
};
use std::path::PathBuf;
use std::time::Duration;
use svc_testkit::{BACKENDS, TestApp};

/// `npm` on `PATH` and the workspace's installed packages, or a failure that says how to get them.
fn npm() -> PathBuf {
    let installed = repo_root().join("sdks/js/node_modules/typescript/package.json");
    assert!(
        installed.is_file(),
        "{} is missing: run `bash scripts/interop-setup.sh` (runs `npm ci` in sdks/js), then run \
         the tests again",
        installed.display()
    );
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join("npm"))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| panic!("npm (Node.js 20+) is not on PATH"))
}

#[tokio::test]
async fn the_js_sdk_passes_its_tests_against_the_service() {
    let npm = npm();
    require_prerequisites(&[Prerequisite::Chromium]);
    let chromium = chromium_path();
    let chromium = chromium.display().to_string();
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
            ("CHROMIUM_PATH", chromium.as_str()),
            // Offline: the tests need nothing from the registry.
            ("npm_config_update_notifier", "false"),
            ("npm_config_audit", "false"),
            ("npm_config_fund", "false"),
        ];
        // The browser test runs Chromium: one heavy script at a time on the machine.
        let turn = ONE_AT_A_TIME.lock().await;
        let run = run_command(
            &npm,
            &["test"],
            &repo_root().join("sdks/js"),
            &env,
            // A hang guard, not a speed target: one run builds and drives ten example apps.
            Duration::from_secs(600),
        )
        .await;
        drop(turn);
        assert_eq!(
            run.code,
            Some(0),
            "{backend:?}: npm test failed\n{}\n{}",
            run.stdout,
            run.stderr
        );
        // The live tests ran: they skip only without the environment given above.
        assert!(
            run.stdout.contains("svc-js live test: passed"),
            "{backend:?}: the live test did not pass\n{}",
            run.stdout
        );
        // `@svc/client`'s browser test and each framework package's example app in Chromium
        // (`next`, `sveltekit`, `solidstart`: the server-side examples under their production servers).
        for browser in [
            "",
            "react ",
            "vue ",
            "svelte ",
            "solid ",
            "next ",
            "sveltekit ",
            "solidstart ",
        ] {
            assert!(
                run.stdout
                    .contains(&format!("svc-js {browser}browser test: passed")),
                "{backend:?}: the {browser}browser test did not pass\n{}",
                run.stdout
            );
        }
        // `@svc/electron`: the system browser (Chromium) back to its RFC 8252 loopback server.
        assert!(
            run.stdout.contains("svc-js electron loopback test: passed"),
            "{backend:?}: the electron loopback test did not pass\n{}",
            run.stdout
        );
        app.shutdown().await;
    }
}
