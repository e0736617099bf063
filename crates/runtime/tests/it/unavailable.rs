//! The binary refuses to start with a section or key this version does not have: one line per
//! entry naming it, every entry at once, exit status non-zero, nothing created. The generated
//! `svc.example.toml`, which lists only what works, passes `config check`.

use crate::binary;
use svc_testkit::Process;

/// Every refused section and key of `svc-config`'s list, each set to a value this version does
/// not accept, with the label its refusal line starts with.
const EVERYTHING_REFUSED: &str = r#"
[sms]
enabled = true
[email_otp]
enabled = true
[magic_link]
enabled = true
[anonymous]
enabled = true
[siwe]
enabled = true
[session_cookie]
name = "sid"
[refresh_family_cache]
enabled = true
[jwt]
refresh_token_lifetime_agent_secs = 86400
[admin]
enabled = true
[access_control]
default_policy = "deny"
[organizations]
enabled = true
[invitations]
lifetime_days = 7
[vault]
enabled = true
[billing]
provider = "stripe"
[commerce]
enabled = true
[wallet]
enabled = true
[[chains]]
name = "mainnet"
[user_self_service]
enabled = true
[i18n]
default_locale = "fr"
[server]
identity_app_origin = "http://id.localhost:3000"
dashboard_app_origin = "http://dashboard.localhost:3000"
[oauth_proxy]
enabled = true
[deployment]
embedded_chain_monitor = true
[database]
maintenance_url = "postgres://maint:never-echoed-secret@127.0.0.1/svc"
[phone]
provider = "disabled"
[proxy]
url = "http://proxy.internal:3128"
[telemetry]
otlp_endpoint = "http://otel.internal:4317"
"#;

const LABELS: &[&str] = &[
    "[sms]",
    "[email_otp]",
    "[magic_link]",
    "[anonymous]",
    "[siwe]",
    "[session_cookie]",
    "[refresh_family_cache]",
    "jwt.refresh_token_lifetime_agent_secs",
    "[admin]",
    "[access_control]",
    "[organizations]",
    "[invitations]",
    "[vault]",
    "[billing]",
    "[commerce]",
    "[wallet]",
    "[[chains]]",
    "[user_self_service]",
    "[i18n]",
    "server.identity_app_origin",
    "server.dashboard_app_origin",
    "oauth_proxy.enabled",
    "deployment.embedded_chain_monitor",
    "database.maintenance_url",
    "[phone]",
    "[proxy]",
    "[telemetry]",
];

const NOT_AVAILABLE: &str = " is not available in this version (";

#[tokio::test]
async fn every_section_not_available_in_this_version_stops_the_binary_with_a_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("svc.toml");
    std::fs::write(&file, EVERYTHING_REFUSED).unwrap();
    for args in [&[][..], &["config", "check"][..]] {
        let exit = Process::run(binary(), dir.path(), args, &[]).await;
        assert_ne!(exit.code, Some(0), "{args:?}");
        assert!(!exit.stderr.contains("panicked"), "{}", exit.stderr);
        assert!(
            !exit.stderr.contains("never-echoed-secret"),
            "{}",
            exit.stderr
        );
        for label in LABELS {
            let line = exit
                .stderr
                .lines()
                .find(|l| l.starts_with(&format!("{label}{NOT_AVAILABLE}")))
                .unwrap_or_else(|| panic!("{args:?}: no line for {label} in:\n{}", exit.stderr));
            assert!(
                line.contains(&format!("(set in file {})", file.display())),
                "{line}"
            );
        }
        let refusals = exit
            .stderr
            .lines()
            .filter(|l| l.contains(NOT_AVAILABLE))
            .count();
        assert_eq!(refusals, LABELS.len(), "{}", exit.stderr);
    }
    assert!(
        !dir.path().join("data").exists(),
        "a refused start must not create the embedded database"
    );
}

#[tokio::test]
async fn a_refused_section_set_by_a_variable_names_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let exit = Process::run(
        binary(),
        dir.path(),
        &[],
        &[
            ("SVC_VAULT__ENABLED", "true"),
            ("SVC_OAUTH_PROXY__ENABLED", "true"),
            (
                "MAINTENANCE_DATABASE_URL",
                "postgres://m:never-echoed-secret@db/svc",
            ),
        ],
    )
    .await;
    assert_ne!(exit.code, Some(0));
    for expected in [
        "[vault] is not available in this version (set by environment variable \
         SVC_VAULT__ENABLED): the credential vault is not built yet; remove the section",
        "oauth_proxy.enabled is not available in this version (set by environment variable \
         SVC_OAUTH_PROXY__ENABLED)",
        "database.maintenance_url is not available in this version (set by environment variable \
         MAINTENANCE_DATABASE_URL)",
    ] {
        assert!(
            exit.stderr.contains(expected),
            "{expected}\n{}",
            exit.stderr
        );
    }
    assert!(
        !exit.stderr.contains("never-echoed-secret"),
        "{}",
        exit.stderr
    );
}

#[tokio::test]
async fn the_generated_example_lists_only_what_works_and_passes_config_check() {
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../svc.example.toml");
    let dir = tempfile::tempdir().unwrap();
    let exit = Process::run(
        binary(),
        dir.path(),
        &["config", "check", "--config", example.to_str().unwrap()],
        &[],
    )
    .await;
    assert_eq!(exit.code, Some(0), "{}\n{}", exit.stdout, exit.stderr);
    let text = std::fs::read_to_string(&example).unwrap();
    for label in LABELS {
        assert!(
            text.contains(label),
            "the example's header names the refused {label}"
        );
    }
    // Whole lines: the wrapped header may start a line with a refused label.
    for setting in ["\n[vault]\n", "\n# [vault]\n", "\n[phone]\n"] {
        assert!(!text.contains(setting), "{setting} is written as a setting");
    }
}

#[tokio::test]
async fn a_coordination_backend_without_what_it_needs_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    for (env, said) in [
        (
            &[("SVC_DEPLOYMENT__COORDINATION_BACKEND", "memcached")][..],
            "needs memcached.url",
        ),
        (
            &[
                ("SVC_DEPLOYMENT__COORDINATION_BACKEND", "memcached"),
                ("SVC_MEMCACHED__URL", "127.0.0.1:11211"),
            ][..],
            "memcached.url = \"127.0.0.1:11211\" must be memcache://host[:port]",
        ),
        (
            &[("SVC_MEMCACHED__URL", "memcache://127.0.0.1:11211")][..],
            "memcached.url is set but deployment.coordination_backend = \"postgres\" never reads it",
        ),
        (
            &[("SVC_DEPLOYMENT__COORDINATION_BACKEND", "redis")][..],
            "needs redis.url",
        ),
        (
            &[(
                "SVC_REDIS__URL",
                "redis://:never-echoed-secret@127.0.0.1:6379/0",
            )][..],
            "never reads it",
        ),
    ] {
        let exit = Process::run(binary(), dir.path(), &["config", "check"], env).await;
        assert_ne!(exit.code, Some(0), "{env:?}");
        let output = format!("{}{}", exit.stdout, exit.stderr);
        assert!(output.contains(said), "{env:?}: {output}");
        assert!(!output.contains("never-echoed-secret"), "{output}");
    }
}
