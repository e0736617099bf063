//! Unit tests of the rules in `general.rs`, one or more per rule.

use std::io::Write;

use super::*;
use crate::model::PoolOverride;
use crate::secret::DatabaseUrl;
use crate::validate::run;

fn messages(report: &Report) -> Vec<String> {
    report.errors.iter().map(ToString::to_string).collect()
}

#[test]
fn public_bind_without_production_is_refused() {
    let mut config = Config::default();
    config.server.host = "0.0.0.0".into();
    let report = run(public_indicators_need_production, &config);
    let text = messages(&report);
    assert_eq!(text.len(), 1);
    assert!(text[0].contains("security.production must be true"));
    assert!(text[0].contains("server.host = \"0.0.0.0\""));
    assert_eq!(report.errors[0].key(), Some("server.host"));
}

#[test]
fn each_public_indicator_is_named() {
    let mut config = Config::default();
    config.server.host = "192.168.1.20".into();
    config.server.base_domain = Some("auth.example.com".into());
    config.oidc.issuer_url = Some("https://auth.example.com".into());
    let text = messages(&run(public_indicators_need_production, &config));
    assert_eq!(text.len(), 3, "{text:?}");
    for key in ["server.host", "server.base_domain", "oidc.issuer_url"] {
        assert!(
            text.iter().any(|t| t.contains(key)),
            "{key} not named: {text:?}"
        );
    }
}

#[test]
fn local_names_are_not_public_indicators() {
    let mut config = Config::default();
    config.server.host = "localhost".into();
    config.server.base_domain = Some("localhost".into());
    config.oidc.issuer_url = Some("http://acme.localhost:8080".into());
    assert!(
        run(public_indicators_need_production, &config)
            .errors
            .is_empty()
    );
}

#[test]
fn escape_hatch_turns_public_indicators_into_warnings() {
    let mut config = Config::default();
    config.server.host = "0.0.0.0".into();
    config.security.allow_public_without_production = true;
    let report = run(public_indicators_need_production, &config);
    assert!(report.errors.is_empty());
    assert_eq!(report.warnings.len(), 1);
    assert!(report.warnings[0].starts_with("DEVELOPMENT ONLY:"));
    assert!(report.warnings[0].contains("server.host"));
}

#[test]
fn production_skips_the_public_indicator_check() {
    let mut config = Config::default();
    config.server.host = "0.0.0.0".into();
    config.security.production = true;
    assert!(
        run(public_indicators_need_production, &config)
            .errors
            .is_empty()
    );
}

#[test]
fn refresh_shorter_than_access_is_refused() {
    let mut config = Config::default();
    config.jwt.access_token_lifetime_human_secs = 7200;
    config.jwt.refresh_token_lifetime_human_secs = 3600;
    let text = messages(&run(jwt_refresh_covers_access, &config));
    assert_eq!(text.len(), 1);
    assert!(text[0].contains("jwt.refresh_token_lifetime_human_secs = 3600"));
    assert!(text[0].contains("jwt.access_token_lifetime_human_secs = 7200"));
    assert!(
        run(jwt_refresh_covers_access, &Config::default())
            .errors
            .is_empty()
    );
}

#[test]
fn pool_min_above_max_is_refused() {
    let mut config = Config::default();
    config.database.min_connections = 11;
    let text = messages(&run(pool_min_within_max, &config));
    assert_eq!(text.len(), 1);
    assert!(text[0].contains("database.min_connections = 11"));

    let mut config = Config::default();
    config.database.control_pool = PoolOverride {
        max_connections: Some(2),
        min_connections: Some(3),
    };
    let text = messages(&run(pool_min_within_max, &config));
    assert_eq!(text.len(), 1);
    assert!(text[0].contains("database.control_pool") && text[0].contains("control pool"));
}

#[test]
fn plane_all_needs_all_in_one_mode() {
    let mut config = Config::default();
    config.deployment.allow_all_in_one_runtime_plane = false;
    let text = messages(&run(runtime_plane_allowed, &config));
    assert_eq!(text.len(), 1);
    assert!(text[0].contains("SVC_RUNTIME_PLANE"));
    assert!(text[0].contains("deployment.allow_all_in_one_runtime_plane"));
    assert!(text[0].contains("auth|control|async"));
    config.deployment.runtime_plane = RuntimePlane::Auth;
    assert!(run(runtime_plane_allowed, &config).errors.is_empty());
}

#[test]
fn tls_transport_needs_cert_and_key() {
    let mut config = Config::default();
    config.server.transport = Transport::TlsH2Only;
    let text = messages(&run(tls_files_configured_and_readable, &config));
    assert_eq!(text.len(), 2);
    assert!(text[0].contains("server.tls.cert_pem_path is required"));
    assert!(text[1].contains("server.tls.key_pem_path is required"));
}

#[test]
fn tls_files_must_be_readable() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.pem");
    std::fs::File::create(&cert)
        .unwrap()
        .write_all(b"-----BEGIN CERTIFICATE-----")
        .unwrap();
    let missing = dir.path().join("missing-key.pem");
    let mut config = Config::default();
    config.server.transport = Transport::TlsH2Only;
    config.server.tls.cert_pem_path = Some(cert);
    config.server.tls.key_pem_path = Some(missing.clone());
    config.server.tls.ca_pem_path = Some(dir.path().to_owned());
    let text = messages(&run(tls_files_configured_and_readable, &config));
    assert_eq!(text.len(), 2, "{text:?}");
    assert!(text[0].contains("server.tls.key_pem_path"));
    assert!(text[0].contains(&missing.display().to_string()));
    assert!(text[1].contains("server.tls.ca_pem_path") && text[1].contains("not a regular file"));
}

#[test]
fn relative_tls_paths_are_checked_from_the_working_dir() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cert.pem"), "x").unwrap();
    let mut config = Config::default().with_working_dir(dir.path());
    config.server.tls.cert_pem_path = Some("cert.pem".into());
    assert!(
        run(tls_files_configured_and_readable, &config)
            .errors
            .is_empty()
    );
}

#[test]
fn require_ssl_refuses_plaintext_sslmodes() {
    let mut config = Config::default();
    config.database.require_ssl = true;
    config.database.url = Some(DatabaseUrl::parse("postgres://db/svc?sslmode=prefer").unwrap());
    config.database.migration_url =
        Some(DatabaseUrl::parse("postgres://db/svc?sslmode=verify-full").unwrap());
    let text = messages(&run(database_sslmode_consistent, &config));
    assert_eq!(text.len(), 1);
    assert!(text[0].contains("database.require_ssl") && text[0].contains("sslmode=prefer"));
    assert!(text[0].contains("database.url"));
    config.database.require_ssl = false;
    assert!(run(database_sslmode_consistent, &config).errors.is_empty());
}

#[test]
fn a_listen_url_needs_postgresql_on_both_ends() {
    let mut config = Config::default();
    let url = |s: &str| Some(DatabaseUrl::parse(s).unwrap());
    config.database.listen_url = url("postgres://direct/svc");
    // The embedded SQLite default has no change feed.
    let text = messages(&run(listen_url_needs_postgres, &config));
    assert_eq!(text.len(), 1);
    assert!(text[0].contains("database.listen_url") && text[0].contains("SQLite"));
    config.database.url = url("sqlite://data/svc.db");
    assert_eq!(messages(&run(listen_url_needs_postgres, &config)).len(), 1);
    config.database.url = url("postgres://pgbouncer:6432/svc");
    assert!(run(listen_url_needs_postgres, &config).errors.is_empty());
    // A plane on SQLite under split_by_plane is refused too.
    config.deployment.database_topology = DatabaseTopology::SplitByPlane;
    config.database.async_url = url("sqlite://data/async.db");
    assert_eq!(messages(&run(listen_url_needs_postgres, &config)).len(), 1);
    config.database.async_url = None;
    // And the listen URL itself must be PostgreSQL.
    config.database.listen_url = url("sqlite://data/svc.db");
    let text = messages(&run(listen_url_needs_postgres, &config));
    assert_eq!(text.len(), 1);
    assert!(text[0].contains("must be a PostgreSQL URL"));
}

#[test]
fn plane_urls_under_shared_topology_warn() {
    let mut config = Config::default();
    config.database.auth_url = Some(DatabaseUrl::parse("postgres://auth/db").unwrap());
    let report = run(plane_urls_need_split_topology, &config);
    assert!(report.errors.is_empty());
    assert_eq!(report.warnings.len(), 1);
    assert!(report.warnings[0].contains("database.auth_url"));
    config.deployment.database_topology = DatabaseTopology::SplitByPlane;
    assert!(
        run(plane_urls_need_split_topology, &config)
            .warnings
            .is_empty()
    );
}

#[test]
fn tenant_slug_must_be_a_dns_label() {
    let mut config = Config::default();
    config.tenant.default_tenant_slug = Some("Acme Corp".into());
    let text = messages(&run(tenant_slug_is_dns_label, &config));
    assert!(text.len() == 1 && text[0].contains("tenant.default_tenant_slug = \"Acme Corp\""));
    config.tenant.default_tenant_slug = Some("acme".into());
    assert!(run(tenant_slug_is_dns_label, &config).errors.is_empty());
}

#[test]
fn urls_must_parse() {
    let mut config = Config::default();
    config.oidc.issuer_url = Some("auth.example.com".into());
    config.server.error_type_base = Some("/problems".into());
    config.hibp.base_url = "ftp://x.test".into();
    let text = messages(&run(urls_are_valid, &config));
    assert_eq!(text.len(), 3, "{text:?}");
    for key in ["oidc.issuer_url", "server.error_type_base", "hibp.base_url"] {
        assert!(text.iter().any(|t| t.contains(key)), "{key}: {text:?}");
    }
    assert!(run(urls_are_valid, &Config::default()).errors.is_empty());
}

#[test]
fn host_names_must_be_bare_hosts() {
    let mut config = Config::default();
    config.server.host = "http://0.0.0.0".into();
    config.server.base_domain = Some("https://auth.example.com".into());
    config.server.allowed_hosts = vec![
        "auth.example.com".into(),
        "*.example.com".into(),
        "x.com:80".into(),
    ];
    let text = messages(&run(host_names_are_valid, &config));
    assert_eq!(text.len(), 3, "{text:?}");
    assert!(text[0].contains("server.host"));
    assert!(text[1].contains("server.base_domain"));
    assert!(text[2].contains("server.allowed_hosts entry \"x.com:80\""));
    config.server.host = "::".into();
    assert!(!messages(&run(host_names_are_valid, &config))[0].contains("server.host"));
}

#[test]
fn smtp_needs_host_and_sender() {
    let mut config = Config::default();
    config.email.provider = EmailProvider::Smtp;
    let text = messages(&run(smtp_is_complete, &config));
    assert_eq!(text.len(), 2);
    assert!(text[0].contains("email.smtp.host is required"));
    assert!(text[1].contains("email.from is required"));
    config.email.smtp.host = Some("smtp.example.com".into());
    config.email.from = Some("no-reply@example.com".into());
    assert!(run(smtp_is_complete, &config).errors.is_empty());
}

#[test]
fn enabled_captcha_needs_provider_site_key_and_secret() {
    let mut config = Config::default();
    assert!(run(captcha_is_complete, &config).errors.is_empty());
    config.captcha.enabled = true;
    let report = run(captcha_is_complete, &config);
    let keys: Vec<Option<&str>> = report.errors.iter().map(|e| e.key()).collect();
    assert_eq!(
        keys,
        [
            Some("captcha.provider"),
            Some("captcha.site_key"),
            Some("captcha.secret_key")
        ]
    );
    assert!(messages(&report)[0].contains("captcha.provider is required when captcha.enabled"));
    config.captcha.provider = Some(crate::model::CaptchaProvider::Hcaptcha);
    config.captcha.site_key = Some("site".into());
    config.captcha.secret_key = Some(crate::secret::Secret::new("secret"));
    assert!(run(captcha_is_complete, &config).errors.is_empty());
    // In production on the auth plane the production guard names them instead.
    let mut production = Config::default();
    production.security.production = true;
    production.captcha.enabled = true;
    assert!(run(captcha_is_complete, &production).errors.is_empty());
}

#[test]
fn captcha_score_threshold_is_a_fraction() {
    for bad in [-0.1, 1.5, f64::NAN] {
        let mut config = Config::default();
        config.captcha.min_score = bad;
        let text = messages(&run(captcha_is_complete, &config));
        assert_eq!(text.len(), 1, "{bad}: {text:?}");
        assert!(text[0].contains("captcha.min_score"), "{text:?}");
    }
    let mut config = Config::default();
    config.captcha.min_score = 1.0;
    assert!(run(captcha_is_complete, &config).errors.is_empty());
}

#[test]
fn captcha_verify_url_must_be_a_url() {
    let mut config = Config::default();
    config.captcha.verify_url = Some("not a url".into());
    let text = messages(&run(urls_are_valid, &config));
    assert_eq!(text.len(), 1, "{text:?}");
    assert!(text[0].contains("captcha.verify_url = \"not a url\""));
    config.captcha.verify_url = Some("http://127.0.0.1:4000/siteverify".into());
    assert!(run(urls_are_valid, &config).errors.is_empty());
}

#[test]
fn webhook_schedule_and_lease_are_consistent() {
    assert!(
        run(webhook_schedule_and_lease_consistent, &Config::default())
            .errors
            .is_empty()
    );
    let mut config = Config::default();
    config.webhooks.retry_schedule_secs = vec![];
    config.webhooks.lease_secs = 15;
    let text: Vec<String> = run(webhook_schedule_and_lease_consistent, &config)
        .errors
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(text.len(), 2, "{text:?}");
    assert!(text[0].contains("has 0 entries"), "{text:?}");
    assert!(
        text[1].contains("webhooks.lease_secs = 15 must exceed"),
        "{text:?}"
    );
    config.webhooks.retry_schedule_secs = vec![5, 0];
    config.webhooks.lease_secs = 60;
    let text: Vec<String> = run(webhook_schedule_and_lease_consistent, &config)
        .errors
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(text.len(), 1, "{text:?}");
    assert!(text[0].contains("contains 0"), "{text:?}");
}

#[test]
fn a_required_second_factor_needs_second_factors_enabled() {
    let mut config = Config::default();
    config.two_factor.policy = crate::model::TwoFactorPolicy::Required;
    let text = messages(&run(two_factor_policy_needs_enabled, &config));
    assert_eq!(text.len(), 1);
    assert!(text[0].contains("two_factor.policy"), "{text:?}");
    config.two_factor.enabled = true;
    assert!(
        run(two_factor_policy_needs_enabled, &config)
            .errors
            .is_empty()
    );
}

#[test]
fn adaptive_step_up_needs_second_factors() {
    let mut config = Config::default();
    config.adaptive_mfa.enabled = true;
    let text = messages(&run(adaptive_mfa_needs_two_factor, &config));
    assert_eq!(text.len(), 1);
    assert!(text[0].contains("adaptive_mfa.enabled"), "{text:?}");
    config.two_factor.enabled = true;
    assert!(
        run(adaptive_mfa_needs_two_factor, &config)
            .errors
            .is_empty()
    );
}

#[test]
fn passkey_relying_party_settings_stay_within_one_issuer() {
    let mut config = Config::default();
    assert!(
        run(passkey_relying_party_is_consistent, &config)
            .errors
            .is_empty()
    );
    // Multi-tenant: every tenant is its own RP.
    config.server.base_domain = Some("example.com".into());
    config.passkey.rp_id = Some("example.com".into());
    let text = messages(&run(passkey_relying_party_is_consistent, &config));
    assert!(text[0].contains("single-tenant"), "{text:?}");
    // Single tenant: the RP ID must contain the issuer, the origins must be within it.
    config.tenant.default_tenant_slug = Some("acme".into());
    config.oidc.issuer_url = Some("https://id.example.com".into());
    config.passkey.origins = vec!["https://app.example.com".into()];
    assert!(
        run(passkey_relying_party_is_consistent, &config)
            .errors
            .is_empty()
    );
    config.passkey.origins = vec![
        "https://evil.example.net".into(),
        "http://app.example.com".into(),
        "https://app.example.com/path".into(),
    ];
    let text = messages(&run(passkey_relying_party_is_consistent, &config));
    assert_eq!(text.len(), 3, "{text:?}");
    config.passkey.origins.clear();
    config.passkey.rp_id = Some("other.com".into());
    let text = messages(&run(passkey_relying_party_is_consistent, &config));
    assert!(text[0].contains("parent"), "{text:?}");
    config.passkey.rp_id = Some("https://example.com".into());
    let text = messages(&run(passkey_relying_party_is_consistent, &config));
    assert!(text[0].contains("lowercase host"), "{text:?}");
}

#[test]
fn generic_providers_need_social_sign_in() {
    let mut config = Config::default();
    config.generic_oauth.enabled = true;
    let text = messages(&run(generic_oauth_needs_social, &config));
    assert_eq!(text.len(), 1);
    assert!(text[0].contains("generic_oauth.enabled"), "{text:?}");
    config.social.enabled = true;
    assert!(run(generic_oauth_needs_social, &config).errors.is_empty());
    config.generic_oauth.enabled = false;
    assert!(run(generic_oauth_needs_social, &config).errors.is_empty());
}

#[test]
fn social_recovery_needs_second_factors_m_of_n_and_time_to_cancel_in_production() {
    let mut config = Config::default();
    config.recovery.enabled = true;
    let text = messages(&run(recovery_is_consistent, &config));
    assert_eq!(text.len(), 1, "{text:?}");
    assert!(text[0].contains("recovery.enabled"), "{text:?}");
    config.two_factor.enabled = true;
    assert!(run(recovery_is_consistent, &config).errors.is_empty());
    config.recovery.approvals_required = 6;
    let text = messages(&run(recovery_is_consistent, &config));
    assert!(text[0].contains("approvals_required"), "{text:?}");
    config.recovery.approvals_required = 2;
    config.recovery.waiting_period_secs = 60;
    assert!(run(recovery_is_consistent, &config).errors.is_empty());
    config.security.production = true;
    let text = messages(&run(recovery_is_consistent, &config));
    assert!(text[0].contains("waiting_period_secs"), "{text:?}");
}
