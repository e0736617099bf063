//! The binary as a user runs it: startup refusals, zero-config start, config check, migrations,
//! signals.

use crate::binary;
use std::time::Duration;
use svc_testkit::{Process, tls};

fn no_panic(text: &str) {
    assert!(
        !text.contains("panicked") && !text.contains("RUST_BACKTRACE"),
        "a startup error must not panic:\n{text}"
    );
}

#[tokio::test]
async fn production_without_configuration_lists_every_unmet_rule_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let exit = Process::run(
        binary(),
        dir.path(),
        &[],
        &[("SVC_SECURITY__PRODUCTION", "true")],
    )
    .await;
    assert_ne!(exit.code, Some(0));
    no_panic(&exit.stderr);
    for rule in [
        "server.transport = plain_http",
        "server.allowed_hosts",
        "trusted_proxies",
        "database URL is required",
        "kms must be configured",
        "captcha.enabled",
        "captcha.provider",
        "captcha.site_key",
        "captcha.secret_key",
        "hibp.enabled",
        "oidc.issuer_url",
        "email.provider",
    ] {
        assert!(
            exit.stderr.contains(rule),
            "missing rule `{rule}` in:\n{}",
            exit.stderr
        );
    }
    assert!(
        !dir.path().join("data").exists(),
        "a refused start must not create the embedded database"
    );
}

#[tokio::test]
async fn an_enabled_captcha_without_provider_or_keys_refuses_to_start_naming_each_key() {
    let dir = tempfile::tempdir().unwrap();
    let exit = Process::run(
        binary(),
        dir.path(),
        &[],
        &[
            ("SVC_CAPTCHA__ENABLED", "true"),
            ("SVC_CAPTCHA__SECRET_KEY", "captcha-secret-never-printed"),
        ],
    )
    .await;
    assert_ne!(exit.code, Some(0));
    no_panic(&exit.stderr);
    for key in ["captcha.provider", "captcha.site_key"] {
        assert!(
            exit.stderr
                .contains(&format!("{key} is required when captcha.enabled = true")),
            "{key} not named in:\n{}",
            exit.stderr
        );
    }
    assert!(!exit.stderr.contains("captcha.secret_key is required"));
    assert!(!exit.stderr.contains("captcha-secret-never-printed"));
    assert!(!dir.path().join("data").exists());
}

#[tokio::test]
async fn out_of_range_jwt_lifetime_names_the_key_and_range() {
    let dir = tempfile::tempdir().unwrap();
    let exit = Process::run(
        binary(),
        dir.path(),
        &[],
        &[("SVC_JWT__ACCESS_TOKEN_LIFETIME_HUMAN_SECS", "10")],
    )
    .await;
    assert_ne!(exit.code, Some(0));
    no_panic(&exit.stderr);
    assert!(
        exit.stderr.contains("jwt.access_token_lifetime_human_secs"),
        "{}",
        exit.stderr
    );
    assert!(exit.stderr.contains("60..=86400"), "{}", exit.stderr);
}

#[tokio::test]
async fn malformed_toml_and_unknown_keys_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("svc.toml"), "[server\nport = 1").unwrap();
    let exit = Process::run(binary(), dir.path(), &[], &[]).await;
    assert_ne!(exit.code, Some(0));
    no_panic(&exit.stderr);
    assert!(exit.stderr.contains("svc.toml"), "{}", exit.stderr);

    std::fs::write(dir.path().join("svc.toml"), "[server]\nprot = 8080\n").unwrap();
    let exit = Process::run(binary(), dir.path(), &[], &[]).await;
    assert_ne!(exit.code, Some(0));
    assert!(
        exit.stderr.contains("server.prot") && exit.stderr.contains("svc.toml"),
        "{}",
        exit.stderr
    );
}

#[tokio::test]
async fn public_bind_without_production_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let exit = Process::run(
        binary(),
        dir.path(),
        &[],
        &[("SVC_SERVER__HOST", "0.0.0.0")],
    )
    .await;
    assert_ne!(exit.code, Some(0));
    assert!(
        exit.stderr.contains("security.production must be true"),
        "{}",
        exit.stderr
    );
}

#[tokio::test]
async fn help_documents_every_command_and_flag() {
    let dir = tempfile::tempdir().unwrap();
    let exit = Process::run(binary(), dir.path(), &["--help"], &[]).await;
    assert_eq!(exit.code, Some(0));
    for needle in [
        "--migrate-only",
        "--config",
        "--log-format",
        "serve",
        "config",
    ] {
        assert!(
            exit.stdout.contains(needle),
            "--help lacks {needle}:\n{}",
            exit.stdout
        );
    }
    let exit = Process::run(binary(), dir.path(), &["config", "--help"], &[]).await;
    assert!(
        exit.stdout.contains("check") && exit.stdout.contains("example"),
        "{}",
        exit.stdout
    );
}

#[tokio::test]
async fn config_check_prints_effective_configuration_without_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let exit = Process::run(
        binary(),
        dir.path(),
        &["config", "check"],
        &[
            ("SVC_SERVER__METRICS_BEARER_TOKEN", "metrics-token-s3cr3t"),
            (
                "DATABASE_URL",
                "postgres://svc:db-pa55word@127.0.0.1:5432/svc",
            ),
            ("SVC_SERVER__PORT", "9123"),
        ],
    )
    .await;
    assert_eq!(exit.code, Some(0), "{}", exit.stderr);
    assert!(
        exit.stdout.contains("9123"),
        "effective values are printed:\n{}",
        exit.stdout
    );
    assert!(
        !exit.stdout.contains("metrics-token-s3cr3t") && !exit.stdout.contains("db-pa55word"),
        "{}",
        exit.stdout
    );
    assert!(exit.stdout.contains("redacted"), "{}", exit.stdout);
    assert!(
        !dir.path().join("data").exists(),
        "config check must not touch the database"
    );
}

#[tokio::test]
async fn config_example_is_the_committed_example_file() {
    let dir = tempfile::tempdir().unwrap();
    let exit = Process::run(binary(), dir.path(), &["config", "example"], &[]).await;
    assert_eq!(exit.code, Some(0));
    let committed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../svc.example.toml"
    ))
    .unwrap();
    assert_eq!(exit.stdout.trim_end(), committed.trim_end());
}

#[tokio::test]
async fn zero_config_start_is_ready_and_drains_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let process = Process::spawn(
        binary(),
        dir.path(),
        &["--log-format", "json"],
        &[("SVC_SERVER__PORT", "0")],
    );
    let url = process.wait_for_url(Duration::from_secs(30)).await;
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let client = reqwest::Client::new();
    let ready = client
        .get(format!("{url}/health/ready"))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    assert_eq!(ready.text().await.unwrap(), r#"{"status":"ok"}"#);
    assert!(
        dir.path().join("data/svc.db").exists(),
        "embedded SQLite under ./data/"
    );
    let log = process.stdout_text();
    assert!(
        log.contains(r#""plane":"all""#),
        "startup log names the plane:\n{log}"
    );
    assert!(
        log.contains("development mode"),
        "startup log says what is development-only:\n{log}"
    );
    assert!(
        log.contains("svc.db"),
        "startup log names the database:\n{log}"
    );

    process.terminate();
    let exit = process.wait(Duration::from_secs(30)).await;
    assert_eq!(exit.code, Some(0), "graceful stop exits 0\n{}", exit.stderr);
    assert!(exit.stdout.contains("stopped"));
}

#[tokio::test]
async fn a_busy_port_is_one_clear_line() {
    let holder = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let exit = Process::run(binary(), dir.path(), &[], &[("SVC_SERVER__PORT", &port)]).await;
    assert_ne!(exit.code, Some(0));
    no_panic(&exit.stderr);
    assert!(
        exit.stderr.contains(&format!("127.0.0.1:{port}")),
        "{}",
        exit.stderr
    );
}

#[tokio::test]
async fn an_unreachable_database_is_one_clear_line_without_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let exit = Process::run(
        binary(),
        dir.path(),
        &[],
        &[
            ("DATABASE_URL", "postgres://svc:hunter2-pw@127.0.0.1:1/svc"),
            ("SVC_DATABASE__CONNECT_TIMEOUT_SECS", "1"),
        ],
    )
    .await;
    assert_ne!(exit.code, Some(0));
    no_panic(&exit.stderr);
    assert!(
        exit.stderr.contains("cannot reach the database"),
        "{}",
        exit.stderr
    );
    assert!(
        exit.stderr.contains("127.0.0.1:1"),
        "names where it tried: {}",
        exit.stderr
    );
    assert!(
        !exit.stderr.contains("hunter2-pw") && !exit.stdout.contains("hunter2-pw"),
        "{}",
        exit.stderr
    );
}

/// A production configuration that satisfies every rule, on the given PostgreSQL URL.
fn production_env(
    dir: &std::path::Path,
    database_url: &str,
    kms: &svc_testkit::KmsDaemon,
) -> Vec<(String, String)> {
    let fixture = tls::generate(dir);
    let mut env: Vec<(String, String)> = [
        ("SVC_SECURITY__PRODUCTION", "true".to_owned()),
        ("SVC_SERVER__PORT", "0".to_owned()),
        ("SVC_SERVER__TRANSPORT", "tls_h2_only".to_owned()),
        (
            "SVC_SERVER__TLS__CERT_PEM_PATH",
            fixture.cert_path.display().to_string(),
        ),
        (
            "SVC_SERVER__TLS__KEY_PEM_PATH",
            fixture.key_path.display().to_string(),
        ),
        ("SVC_SERVER__ALLOWED_HOSTS", r#"["localhost"]"#.to_owned()),
        ("SVC_SERVER__DIRECT_CLIENT_EXPOSURE", "true".to_owned()),
        ("DATABASE_URL", format!("{database_url}?sslmode=require")),
        ("SVC_OIDC__ISSUER_URL", "https://localhost".to_owned()),
        ("SVC_CAPTCHA__ENABLED", "true".to_owned()),
        ("SVC_CAPTCHA__PROVIDER", "turnstile".to_owned()),
        ("SVC_CAPTCHA__SITE_KEY", "site-key".to_owned()),
        ("SVC_CAPTCHA__SECRET_KEY", "captcha-secret".to_owned()),
        // Nothing is submitted here; a syntactically valid https endpoint is enough.
        (
            "SVC_CAPTCHA__VERIFY_URL",
            "https://localhost/siteverify".to_owned(),
        ),
        ("SVC_HIBP__ENABLED", "true".to_owned()),
        ("SVC_EMAIL__PROVIDER", "smtp".to_owned()),
        ("SVC_EMAIL__SMTP__HOST", "smtp.localhost".to_owned()),
        ("SVC_EMAIL__FROM", "no-reply@localhost".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    env.extend(kms.env());
    env
}

#[tokio::test]
async fn production_refuses_unmigrated_postgres_until_migrate_only_ran() {
    let (db_url, guard) = svc_store_postgres::testing::fresh_database().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kms = svc_testkit::KmsDaemon::start(&dir.path().join("kms")).await;
    let env = production_env(dir.path(), &db_url, &kms);
    let env_refs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();

    let refused = Process::run(binary(), dir.path(), &[], &env_refs).await;
    assert_ne!(refused.code, Some(0));
    no_panic(&refused.stderr);
    assert!(
        refused.stderr.contains("svc-runtime --migrate-only"),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("pending migration"),
        "{}",
        refused.stderr
    );

    let migrated = Process::run(binary(), dir.path(), &["--migrate-only"], &env_refs).await;
    assert_eq!(
        migrated.code,
        Some(0),
        "{}\n{}",
        migrated.stdout,
        migrated.stderr
    );

    let process = Process::spawn(binary(), dir.path(), &["--log-format", "json"], &env_refs);
    let url = process.wait_for_url(Duration::from_secs(30)).await;
    assert!(url.starts_with("https://"), "{url}");
    let fixture_ca = std::fs::read(dir.path().join("ca.pem")).unwrap();
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&fixture_ca).unwrap())
        .build()
        .unwrap();
    let port = url.rsplit(':').next().unwrap();
    let ready = client
        .get(format!("https://localhost:{port}/health/ready"))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.version(), reqwest::Version::HTTP_2);
    assert_eq!(ready.status(), 200);
    process.terminate();
    assert_eq!(process.wait(Duration::from_secs(30)).await.code, Some(0));
    guard.drop_database().await.unwrap();
}
