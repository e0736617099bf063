//! Production mode end to end: every unmet rule is reported at once, and a complete production
//! configuration loads with no errors.

use super::support::{
    PRODUCTION_ENV, errors_of, production_config, sources, write_production_files,
};
use crate::{DatabaseTarget, RuntimePlane, Transport, load};

#[test]
fn production_switch_alone_lists_every_unmet_rule() {
    let errors = errors_of(None, &[("SVC_SECURITY__PRODUCTION", "true")]);
    let expected = [
        "kms must be configured",
        "server.transport = plain_http",
        "server.allowed_hosts",
        "trusted_proxies",
        "database URL is required",
        "database.require_ssl",
        "oidc.issuer_url or server.base_domain must be set",
        "captcha.enabled",
        "captcha.provider",
        "captcha.site_key",
        "captcha.secret_key",
        "hibp.enabled",
        "email.provider = log",
    ];
    for needle in expected {
        assert!(
            errors.iter().any(|e| e.contains(needle)),
            "missing `{needle}` in:\n{}",
            errors.join("\n")
        );
    }
    assert_eq!(errors.len(), expected.len(), "{}", errors.join("\n"));
    assert!(errors.iter().all(|e| !e.contains('\n')));
}

#[test]
fn a_complete_production_configuration_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    write_production_files(dir.path());
    let loaded = match load(&sources(dir.path(), PRODUCTION_ENV)) {
        Ok(loaded) => loaded,
        Err(errors) => panic!("expected a valid configuration:\n{errors}"),
    };
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let config = loaded.config;
    assert!(config.is_production());
    assert_eq!(config.server.transport, Transport::TlsH2Only);
    assert!(matches!(
        config.database_url_for(RuntimePlane::Auth),
        DatabaseTarget::Url(url) if url.sslmode().as_deref() == Some("require")
    ));
    assert_eq!(config.validate(), Ok(Vec::new()));
}

#[test]
fn production_violations_in_a_good_file_are_each_named() {
    let dir = tempfile::tempdir().unwrap();
    write_production_files(dir.path());
    let mut env = PRODUCTION_ENV.to_vec();
    env.extend([
        ("SVC_SECURITY__WEBHOOK_ALLOW_NON_STANDARD_PORTS", "true"),
        ("SVC_HIBP__FAIL_MODE", "fail-open"),
        ("SVC_CAPTCHA__FAIL_MODE", "fail-open"),
        ("SVC_EMAIL__SMTP__STARTTLS", "false"),
        ("SVC_AUTH__ARGON2_MEMORY_KIB", "19456"),
        ("SVC_AUTH__ARGON2_PARALLELISM", "2"),
        ("SVC_SERVER__REQUEST_TIMEOUT_SECS", "0"),
        ("SVC_SERVER__SHUTDOWN_DEADLINE_SECS", "0"),
        ("SVC_OIDC__ISSUER_URL", "http://auth.example.com"),
        ("SVC_SECURITY__ALLOW_PUBLIC_WITHOUT_PRODUCTION", "true"),
    ]);
    let errors = load(&sources(dir.path(), &env)).unwrap_err();
    for needle in [
        "security.webhook_allow_non_standard_ports must be false",
        "hibp.fail_mode = fail-open",
        "captcha.fail_mode = fail-open",
        "email.smtp.starttls must be true",
        "auth.argon2_memory_kib = 19456",
        "auth.argon2_parallelism = 2",
        "server.request_timeout_secs must be greater than 0",
        "server.shutdown_deadline_secs must be greater than 0",
        "oidc.issuer_url = \"http://auth.example.com\" must use https",
        "security.allow_public_without_production must be false",
    ] {
        assert!(errors.contains(needle), "missing `{needle}` in:\n{errors}");
    }
    assert_eq!(errors.errors().len(), 10, "{errors}");
}

#[test]
fn sqlite_is_refused_in_production() {
    let dir = tempfile::tempdir().unwrap();
    write_production_files(dir.path());
    let mut env = PRODUCTION_ENV.to_vec();
    env.push(("SVC_DATABASE__URL", "sqlite:data/svc.db"));
    let errors = load(&sources(dir.path(), &env)).unwrap_err();
    assert!(
        errors.contains("database.url is an SQLite URL but production needs PostgreSQL"),
        "{errors}"
    );
}

#[test]
fn production_needs_sslmode_or_require_ssl() {
    let dir = tempfile::tempdir().unwrap();
    write_production_files(dir.path());
    let mut env = PRODUCTION_ENV.to_vec();
    env.push(("DATABASE_URL", "postgres://svc:pw@db.internal/svc"));
    let errors = load(&sources(dir.path(), &env)).unwrap_err();
    assert_eq!(errors.errors().len(), 1, "{errors}");
    assert!(errors.contains("database.require_ssl"));
    assert!(errors.contains("database.url has no sslmode="));

    env.push(("SVC_DATABASE__REQUIRE_SSL", "true"));
    assert!(
        load(&sources(dir.path(), &env)).is_ok(),
        "require_ssl = true assures TLS without sslmode="
    );
    env.push((
        "MIGRATION_DATABASE_URL",
        "postgres://owner:pw@db.internal/svc?sslmode=disable",
    ));
    let errors = load(&sources(dir.path(), &env)).unwrap_err();
    assert!(
        errors.contains("database.migration_url says sslmode=disable"),
        "{errors}"
    );
}

#[test]
fn production_fixture_is_reusable() {
    let dir = tempfile::tempdir().unwrap();
    let config = production_config(dir.path());
    assert_eq!(config.server.allowed_hosts.len(), 2);
}

#[test]
fn captcha_enabled_without_its_keys_refuses_to_start_naming_each() {
    let errors = errors_of(None, &[("SVC_CAPTCHA__ENABLED", "true")]);
    for key in ["captcha.provider", "captcha.site_key", "captcha.secret_key"] {
        assert!(
            errors
                .iter()
                .any(|e| e.contains(&format!("{key} is required when captcha.enabled = true"))),
            "{key} not named in:\n{}",
            errors.join("\n")
        );
    }
    assert_eq!(errors.len(), 3, "{}", errors.join("\n"));
}

#[test]
fn captcha_keys_load_from_the_environment() {
    let loaded = super::support::load_with(
        None,
        &[
            ("SVC_CAPTCHA__ENABLED", "true"),
            ("SVC_CAPTCHA__PROVIDER", "recaptcha"),
            ("SVC_CAPTCHA__SITE_KEY", "site-key"),
            ("SVC_CAPTCHA__SECRET_KEY", "captcha-secret-value"),
            (
                "SVC_CAPTCHA__VERIFY_URL",
                "http://127.0.0.1:9000/siteverify",
            ),
            ("SVC_CAPTCHA__MIN_SCORE", "0.7"),
            ("SVC_CAPTCHA__AFTER_FAILED_SIGN_INS", "5"),
            ("SVC_CAPTCHA__TIMEOUT_MS", "1500"),
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let captcha = loaded.config.captcha;
    assert_eq!(captcha.provider, Some(crate::CaptchaProvider::Recaptcha));
    assert_eq!(captcha.site_key.as_deref(), Some("site-key"));
    assert!(
        (captcha.min_score - 0.7).abs() < 1e-6,
        "{}",
        captcha.min_score
    );
    assert_eq!(captcha.score_threshold().to_bits(), 0.7_f64.to_bits());
    assert_eq!(captcha.after_failed_sign_ins, 5);
    assert_eq!(captcha.timeout_ms, 1500);
    assert_eq!(
        captcha.effective_verify_url().as_deref(),
        Some("http://127.0.0.1:9000/siteverify")
    );
    let mut defaulted = crate::CaptchaConfig {
        provider: Some(crate::CaptchaProvider::Hcaptcha),
        ..crate::CaptchaConfig::default()
    };
    assert_eq!(
        defaulted.effective_verify_url().as_deref(),
        Some("https://api.hcaptcha.com/siteverify")
    );
    defaulted.provider = None;
    assert_eq!(defaulted.effective_verify_url(), None);
}

#[test]
fn an_unknown_captcha_provider_is_refused_naming_the_key() {
    let errors = errors_of(None, &[("SVC_CAPTCHA__PROVIDER", "friendly-captcha")]);
    assert!(
        errors.iter().any(|e| e.contains("captcha.provider")),
        "{}",
        errors.join("\n")
    );
}
