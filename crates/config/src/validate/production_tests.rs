//! Unit tests of the rules in `production.rs`: each fires in production, stays quiet once fixed,
//! and stays quiet outside production.

use super::*;
use crate::model::{KmsConfig, RuntimePlane};
use crate::secret::{DatabaseUrl, Secret};
use crate::tests::support::production_config;
use crate::validate::run;

fn production() -> Config {
    let mut config = Config::default();
    config.security.production = true;
    config
}

/// Asserts `rule` reports exactly one error containing `needle` for `broken`, none for `fixed`,
/// and none for `broken` outside production.
fn check(rule: fn(&Config, &mut Report), broken: &Config, fixed: &Config, needle: &str) {
    let report = run(rule, broken);
    assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
    let text = report.errors[0].to_string();
    assert!(text.contains(needle), "`{needle}` not in `{text}`");
    assert!(
        run(rule, fixed).errors.is_empty(),
        "{:?}",
        run(rule, fixed).errors
    );
    let mut dev = broken.clone();
    dev.security.production = false;
    assert!(run(rule, &dev).errors.is_empty());
}

#[test]
fn kms_must_be_configured() {
    let mut fixed = production();
    fixed.kms = Some(KmsConfig {
        socket_path: "/run/kms.sock".into(),
        server_public_key_path: "/etc/kms.pub".into(),
        client_private_key_path: "/etc/client.key".into(),
    });
    check(
        production_kms_configured,
        &production(),
        &fixed,
        "kms must be configured",
    );
}

#[test]
fn transport_must_not_be_plain_http() {
    let mut fixed = production();
    fixed.server.transport = Transport::TlsH2Only;
    check(
        production_transport_not_plain_http,
        &production(),
        &fixed,
        "server.transport = plain_http",
    );
}

#[test]
fn allowed_hosts_must_be_populated() {
    let mut fixed = production();
    fixed.server.allowed_hosts = vec!["auth.example.com".into()];
    check(
        production_allowed_hosts_populated,
        &production(),
        &fixed,
        "server.allowed_hosts",
    );
}

#[test]
fn proxy_trust_must_be_explicit() {
    let mut fixed = production();
    fixed.server.direct_client_exposure = true;
    check(
        production_proxy_trust_explicit,
        &production(),
        &fixed,
        "trusted_proxies",
    );
    let mut proxies = production();
    proxies.server.trusted_proxies = vec!["10.0.0.0/8".parse().unwrap()];
    assert!(
        run(production_proxy_trust_explicit, &proxies)
            .errors
            .is_empty()
    );
}

#[test]
fn timeouts_must_be_positive() {
    let mut broken = production();
    broken.server.request_timeout_secs = 0;
    check(
        production_timeouts_positive,
        &broken,
        &production(),
        "server.request_timeout_secs must be greater than 0",
    );
    let mut broken = production();
    broken.server.shutdown_deadline_secs = 0;
    check(
        production_timeouts_positive,
        &broken,
        &production(),
        "server.shutdown_deadline_secs",
    );
}

#[test]
fn database_url_is_required() {
    let mut fixed = production();
    fixed.database.url = Some(DatabaseUrl::parse("postgres://db/svc").unwrap());
    check(
        production_database_url_present,
        &production(),
        &fixed,
        "database URL is required",
    );
}

#[test]
fn split_planes_need_their_url_or_the_base() {
    let mut config = production();
    config.deployment.database_topology = crate::model::DatabaseTopology::SplitByPlane;
    config.deployment.runtime_plane = RuntimePlane::Auth;
    config.database.control_url = Some(DatabaseUrl::parse("postgres://control/svc").unwrap());
    let report = run(production_database_url_present, &config);
    assert_eq!(report.errors.len(), 1);
    assert!(report.errors[0].to_string().contains("plane auth"));
    config.database.auth_url = Some(DatabaseUrl::parse("postgres://auth/svc").unwrap());
    assert!(
        run(production_database_url_present, &config)
            .errors
            .is_empty()
    );
}

#[test]
fn sqlite_is_refused_in_production() {
    let mut broken = production();
    broken.database.identity_url = Some(DatabaseUrl::parse("sqlite:data/svc.db").unwrap());
    let mut fixed = production();
    fixed.database.identity_url = Some(DatabaseUrl::parse("postgres://db/svc").unwrap());
    check(
        production_database_is_postgres,
        &broken,
        &fixed,
        "database.identity_url is an SQLite URL but production needs PostgreSQL",
    );
}

#[test]
fn database_tls_must_be_assured() {
    let mut broken = production();
    broken.database.url = Some(DatabaseUrl::parse("postgres://db/svc").unwrap());
    let mut with_sslmode = production();
    with_sslmode.database.url =
        Some(DatabaseUrl::parse("postgres://db/svc?sslmode=require").unwrap());
    check(
        production_database_tls_assured,
        &broken,
        &with_sslmode,
        "database.require_ssl",
    );
    let mut required = broken.clone();
    required.database.require_ssl = true;
    assert!(
        run(production_database_tls_assured, &required)
            .errors
            .is_empty()
    );
    let text = run(production_database_tls_assured, &production()).errors[0].to_string();
    assert!(text.contains("no database URL is configured"), "{text}");
}

#[test]
fn issuer_must_be_https() {
    let mut broken = production();
    broken.oidc.issuer_url = Some("http://auth.example.com".into());
    let mut fixed = production();
    fixed.oidc.issuer_url = Some("https://auth.example.com".into());
    check(
        production_issuer_is_https,
        &broken,
        &fixed,
        "must use https",
    );
    let mut subdomains = production();
    subdomains.server.base_domain = Some("auth.example.com".into());
    assert!(
        run(production_issuer_is_https, &subdomains)
            .errors
            .is_empty()
    );
    let text = run(production_issuer_is_https, &production()).errors[0].to_string();
    assert!(
        text.contains("oidc.issuer_url or server.base_domain must be set"),
        "{text}"
    );
}

#[test]
fn openapi_must_be_off() {
    let mut broken = production();
    broken.openapi.enabled = true;
    check(
        production_openapi_disabled,
        &broken,
        &production(),
        "openapi.enabled must be false",
    );
}

#[test]
fn webhook_ports_must_be_standard() {
    let mut broken = production();
    broken.security.webhook_allow_non_standard_ports = true;
    check(
        production_webhook_ports_standard,
        &broken,
        &production(),
        "security.webhook_allow_non_standard_ports must be false",
    );
}

fn captcha_fixed() -> Config {
    let mut fixed = production();
    fixed.captcha.enabled = true;
    fixed.captcha.provider = Some(crate::model::CaptchaProvider::Turnstile);
    fixed.captcha.site_key = Some("site".into());
    fixed.captcha.secret_key = Some(Secret::new("k"));
    fixed
}

#[test]
fn captcha_must_be_enforced() {
    let fixed = captcha_fixed();
    let mut broken = fixed.clone();
    broken.captcha.enabled = false;
    check(
        production_captcha_enforced,
        &broken,
        &fixed,
        "captcha.enabled must be true",
    );
    let mut broken = fixed.clone();
    broken.captcha.secret_key = None;
    check(
        production_captcha_enforced,
        &broken,
        &fixed,
        "captcha.secret_key must be set",
    );
    let mut broken = fixed.clone();
    broken.captcha.fail_mode = FailMode::FailOpen;
    check(
        production_captcha_enforced,
        &broken,
        &fixed,
        "captcha.fail_mode = fail-open",
    );
}

#[test]
fn captcha_needs_a_provider_and_its_keys_not_just_the_switch() {
    let fixed = captcha_fixed();
    let mut broken = fixed.clone();
    broken.captcha.provider = None;
    check(
        production_captcha_enforced,
        &broken,
        &fixed,
        "captcha.provider must be set",
    );
    let mut broken = fixed.clone();
    broken.captcha.site_key = Some("  ".into());
    check(
        production_captcha_enforced,
        &broken,
        &fixed,
        "captcha.site_key must be set",
    );
    let mut broken = fixed.clone();
    broken.captcha.secret_key = Some(Secret::new(""));
    check(
        production_captcha_enforced,
        &broken,
        &fixed,
        "captcha.secret_key must be set",
    );
    // The switch and a secret alone (what used to pass) no longer do.
    let mut switch_only = production();
    switch_only.captcha.enabled = true;
    switch_only.captcha.secret_key = Some(Secret::new("k"));
    let report = run(production_captcha_enforced, &switch_only);
    let keys: Vec<Option<&str>> = report.errors.iter().map(|e| e.key()).collect();
    assert_eq!(
        keys,
        [Some("captcha.provider"), Some("captcha.site_key")],
        "{:?}",
        report.errors
    );
}

#[test]
fn captcha_verification_goes_over_https_in_production() {
    let mut broken = captcha_fixed();
    broken.captcha.verify_url = Some("http://127.0.0.1:9/siteverify".into());
    let mut fixed = captcha_fixed();
    fixed.captcha.verify_url = Some("https://verify.example.com/siteverify".into());
    check(
        production_captcha_enforced,
        &broken,
        &fixed,
        "captcha.verify_url = \"http://127.0.0.1:9/siteverify\" must use https",
    );
}

#[test]
fn hibp_must_be_enforced() {
    let mut fixed = production();
    fixed.hibp.enabled = true;
    check(
        production_hibp_enforced,
        &production(),
        &fixed,
        "hibp.enabled",
    );
    let mut broken = fixed.clone();
    broken.hibp.fail_mode = FailMode::FailOpen;
    check(
        production_hibp_enforced,
        &broken,
        &fixed,
        "hibp.fail_mode = fail-open",
    );
}

#[test]
fn abuse_controls_apply_to_the_auth_plane_only() {
    let mut control = production();
    control.deployment.runtime_plane = RuntimePlane::Control;
    assert!(run(production_captcha_enforced, &control).errors.is_empty());
    assert!(run(production_hibp_enforced, &control).errors.is_empty());
    assert!(
        run(production_delivery_providers_real, &control)
            .errors
            .is_empty()
    );
    assert!(run(production_argon2_strength, &control).errors.is_empty());
}

#[test]
fn delivery_providers_must_be_real() {
    let mut fixed = production();
    fixed.email.provider = EmailProvider::Smtp;
    let mut broken = fixed.clone();
    broken.email.provider = EmailProvider::Log;
    check(
        production_delivery_providers_real,
        &broken,
        &fixed,
        "email.provider = log",
    );
    let mut broken = fixed.clone();
    broken.email.smtp.starttls = false;
    check(
        production_delivery_providers_real,
        &broken,
        &fixed,
        "email.smtp.starttls must be true",
    );
}

#[test]
fn argon2_must_meet_the_production_floor() {
    let mut broken = production();
    broken.auth.argon2_memory_kib = 32_768;
    check(
        production_argon2_strength,
        &broken,
        &production(),
        "auth.argon2_memory_kib = 32768 is below 65536",
    );
    let mut broken = production();
    broken.auth.argon2_parallelism = 4;
    check(
        production_argon2_strength,
        &broken,
        &production(),
        "auth.argon2_parallelism = 4 must be 1",
    );
}

#[test]
fn internal_webhook_targets_are_refused_in_production() {
    let mut broken = production();
    broken.webhooks.allow_internal_targets = Some(true);
    check(
        production_webhook_targets_public,
        &broken,
        &production(),
        "webhooks.allow_internal_targets must be false",
    );
    assert!(!broken.webhooks.internal_targets_allowed(true));
    assert!(Config::default().webhooks.internal_targets_allowed(false));
    let mut closed = Config::default();
    closed.webhooks.allow_internal_targets = Some(false);
    assert!(!closed.webhooks.internal_targets_allowed(false));
}

#[test]
fn escape_hatch_is_refused_in_production() {
    let mut broken = production();
    broken.security.allow_public_without_production = true;
    check(
        production_escape_hatch_off,
        &broken,
        &production(),
        "security.allow_public_without_production must be false",
    );
}

#[test]
fn a_complete_production_configuration_passes_every_production_rule() {
    let dir = tempfile::tempdir().unwrap();
    let config = production_config(dir.path());
    for rule in [
        production_kms_configured,
        production_transport_not_plain_http,
        production_allowed_hosts_populated,
        production_proxy_trust_explicit,
        production_timeouts_positive,
        production_database_url_present,
        production_database_is_postgres,
        production_database_tls_assured,
        production_issuer_is_https,
        production_openapi_disabled,
        production_webhook_ports_standard,
        production_captcha_enforced,
        production_hibp_enforced,
        production_delivery_providers_real,
        production_argon2_strength,
        production_escape_hatch_off,
        production_webhook_targets_public,
    ] {
        let report = run(rule, &config);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
    }
}
