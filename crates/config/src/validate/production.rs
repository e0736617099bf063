//! Production guards: the spec's "Production mode requirements" and the matching "Startup errors"
//! rows. Each rule does nothing unless `security.production = true`; rules marked "auth plane" in
//! the spec apply only when this process serves the auth plane.

use crate::model::{Config, EmailProvider, FailMode, Transport};
use crate::targets::DatabaseTarget;
use crate::validate::Report;

/// The spec's Argon2 memory floor for the auth plane in production (64 MiB).
pub(crate) const PRODUCTION_ARGON2_MIN_MEMORY_KIB: u32 = 65_536;

const IN_PRODUCTION: &str = "when security.production = true";

/// Key management: `[kms]` configured.
pub(super) fn production_kms_configured(config: &Config, report: &mut Report) {
    if config.is_production() && config.kms.is_none() {
        report.error(
            "kms",
            format!(
                "kms must be configured {IN_PRODUCTION}: add [kms] with socket_path, \
                 server_public_key_path and client_private_key_path, and run svc-kms"
            ),
        );
    }
}

/// Transport: not `plain_http`.
pub(super) fn production_transport_not_plain_http(config: &Config, report: &mut Report) {
    if config.is_production() && config.server.transport == Transport::PlainHttp {
        report.error(
            "server.transport",
            format!(
                "server.transport = plain_http is not allowed {IN_PRODUCTION}: set \
                 server.transport = \"tls_h2_only\" with server.tls.cert_pem_path and \
                 server.tls.key_pem_path"
            ),
        );
    }
}

/// Host validation: `server.allowed_hosts` populated.
pub(super) fn production_allowed_hosts_populated(config: &Config, report: &mut Report) {
    if config.is_production() && config.server.allowed_hosts.is_empty() {
        report.error(
            "server.allowed_hosts",
            format!(
                "server.allowed_hosts is empty {IN_PRODUCTION}: list the host names clients use \
                 (exact names or \"*.suffix\")"
            ),
        );
    }
}

/// Proxy trust: trusted proxies listed, or direct exposure declared.
pub(super) fn production_proxy_trust_explicit(config: &Config, report: &mut Report) {
    let server = &config.server;
    if config.is_production() && server.trusted_proxies.is_empty() && !server.direct_client_exposure
    {
        report.error(
            "server.trusted_proxies",
            format!(
                "server.trusted_proxies is empty and server.direct_client_exposure = false \
                 {IN_PRODUCTION}: list your proxy networks in trusted_proxies, or set \
                 direct_client_exposure = true if clients connect directly"
            ),
        );
    }
}

/// Timeouts: request and shutdown timeouts above 0.
pub(super) fn production_timeouts_positive(config: &Config, report: &mut Report) {
    if !config.is_production() {
        return;
    }
    for (key, value) in [
        (
            "server.request_timeout_secs",
            config.server.request_timeout_secs,
        ),
        (
            "server.shutdown_deadline_secs",
            config.server.shutdown_deadline_secs,
        ),
    ] {
        if value == 0 {
            report.error(
                key,
                format!("{key} must be greater than 0 {IN_PRODUCTION}: set it, e.g. to 30"),
            );
        }
    }
}

/// Database: a runtime URL for every plane this process serves (no embedded SQLite).
pub(super) fn production_database_url_present(config: &Config, report: &mut Report) {
    if !config.is_production() {
        return;
    }
    let missing: Vec<&str> = config
        .deployment
        .runtime_plane
        .served()
        .iter()
        .filter(|plane| {
            matches!(
                config.database_url_for(**plane),
                DatabaseTarget::EmbeddedSqlite(_)
            )
        })
        .map(|plane| plane.as_str())
        .collect();
    if !missing.is_empty() {
        report.error(
            "database.url",
            format!(
                "database URL is required {IN_PRODUCTION} (none for plane {}): set DATABASE_URL, \
                 SVC_DATABASE__URL or the plane URLs; the embedded SQLite default is for \
                 development only",
                missing.join(", ")
            ),
        );
    }
}

/// Database: PostgreSQL, never SQLite.
pub(super) fn production_database_is_postgres(config: &Config, report: &mut Report) {
    if !config.is_production() {
        return;
    }
    for (key, url) in config.database.configured_urls() {
        if url.is_sqlite() {
            report.error(
                key,
                format!(
                    "{key} is an SQLite URL but production needs PostgreSQL {IN_PRODUCTION}: use \
                     a postgres:// URL"
                ),
            );
        }
    }
}

/// Database: `require_ssl` true unless every PostgreSQL URL says `sslmode=`.
pub(super) fn production_database_tls_assured(config: &Config, report: &mut Report) {
    if !config.is_production() || config.database.require_ssl {
        return;
    }
    let urls = config.database.configured_urls();
    let without: Vec<&str> = urls
        .iter()
        .filter(|(_, url)| url.is_postgres() && url.sslmode().is_none())
        .map(|(key, _)| *key)
        .collect();
    let reason = if urls.is_empty() {
        "no database URL is configured".to_owned()
    } else if without.is_empty() {
        return;
    } else {
        format!("{} has no sslmode=", without.join(", "))
    };
    report.error(
        "database.require_ssl",
        format!(
            "database.require_ssl must be true {IN_PRODUCTION} unless every database URL sets \
             sslmode= ({reason}): set database.require_ssl = true or add ?sslmode=verify-full"
        ),
    );
}

/// OIDC: a fixed issuer, over HTTPS.
pub(super) fn production_issuer_is_https(config: &Config, report: &mut Report) {
    if !config.is_production() {
        return;
    }
    match &config.oidc.issuer_url {
        Some(issuer)
            if !issuer
                .trim_start()
                .to_ascii_lowercase()
                .starts_with("https://") =>
        {
            report.error(
                "oidc.issuer_url",
                format!(
                    "oidc.issuer_url = \"{issuer}\" must use https {IN_PRODUCTION}: write \
                     https://…"
                ),
            );
        }
        Some(_) => {}
        None if config.server.base_domain.is_none() => report.error(
            "oidc.issuer_url",
            format!(
                "oidc.issuer_url or server.base_domain must be set {IN_PRODUCTION}: the issuer \
                 must be fixed (https://…), not derived from request headers"
            ),
        ),
        None => {}
    }
}

/// OpenAPI: off. Loading refuses `true` while the OpenAPI document is not built; this guard is
/// what remains once it is.
pub(super) fn production_openapi_disabled(config: &Config, report: &mut Report) {
    if config.is_production() && config.openapi.enabled {
        report.error(
            "openapi.enabled",
            format!("openapi.enabled must be false {IN_PRODUCTION}: disable it"),
        );
    }
}

/// Webhooks: only port 443.
pub(super) fn production_webhook_ports_standard(config: &Config, report: &mut Report) {
    if config.is_production() && config.security.webhook_allow_non_standard_ports {
        report.error(
            "security.webhook_allow_non_standard_ports",
            format!(
                "security.webhook_allow_non_standard_ports must be false {IN_PRODUCTION}: \
                 webhook targets use https on port 443"
            ),
        );
    }
}

/// Whether the auth plane's production rules apply (production mode, serving the auth plane).
pub(super) fn production_auth_plane(config: &Config) -> bool {
    config.is_production() && config.deployment.runtime_plane.serves_auth()
}

/// Abuse controls (auth plane): CAPTCHA on with a provider, its site key and secret, verified
/// over https, failing closed. Each missing piece is named on its own line (the every-mode rule
/// `general::captcha_is_complete` stays quiet here, so nothing is said twice).
pub(super) fn production_captcha_enforced(config: &Config, report: &mut Report) {
    if !production_auth_plane(config) {
        return;
    }
    let captcha = &config.captcha;
    if !captcha.enabled {
        report.error(
            "captcha.enabled",
            format!(
                "captcha.enabled must be true {IN_PRODUCTION} on the auth plane: enable it with \
                 captcha.provider, captcha.site_key, captcha.secret_key and captcha.fail_mode = \
                 \"fail-closed\""
            ),
        );
    }
    if captcha.provider.is_none() {
        report.error(
            "captcha.provider",
            format!(
                "captcha.provider must be set {IN_PRODUCTION} on the auth plane: set it to \
                 \"turnstile\", \"hcaptcha\" or \"recaptcha\""
            ),
        );
    }
    if captcha
        .site_key
        .as_deref()
        .is_none_or(|k| k.trim().is_empty())
    {
        report.error(
            "captcha.site_key",
            format!(
                "captcha.site_key must be set {IN_PRODUCTION} on the auth plane: set the \
                 provider's public site key"
            ),
        );
    }
    if captcha
        .secret_key
        .as_ref()
        .is_none_or(|k| k.expose_secret().trim().is_empty())
    {
        report.error(
            "captcha.secret_key",
            format!(
                "captcha.secret_key must be set {IN_PRODUCTION} on the auth plane (the server \
                 verifies every token with it): set SVC_CAPTCHA__SECRET_KEY"
            ),
        );
    }
    if captcha.fail_mode == FailMode::FailOpen {
        report.error(
            "captcha.fail_mode",
            format!(
                "captcha.fail_mode = fail-open is not allowed {IN_PRODUCTION}: set \
                 captcha.fail_mode = \"fail-closed\""
            ),
        );
    }
    if let Some(url) = &captcha.verify_url
        && !url
            .trim_start()
            .to_ascii_lowercase()
            .starts_with("https://")
    {
        report.error(
            "captcha.verify_url",
            format!(
                "captcha.verify_url = \"{url}\" must use https {IN_PRODUCTION}: remove it to use \
                 the provider's endpoint, or write https://…"
            ),
        );
    }
}

/// Abuse controls (auth plane): breached-password check on, failing closed.
pub(super) fn production_hibp_enforced(config: &Config, report: &mut Report) {
    if !production_auth_plane(config) {
        return;
    }
    if !config.hibp.enabled {
        report.error(
            "hibp.enabled",
            format!(
                "hibp.enabled must be true {IN_PRODUCTION} on the auth plane: enable it with \
                 hibp.fail_mode = \"fail-closed\""
            ),
        );
    }
    if config.hibp.fail_mode == FailMode::FailOpen {
        report.error(
            "hibp.fail_mode",
            format!(
                "hibp.fail_mode = fail-open is not allowed {IN_PRODUCTION}: set hibp.fail_mode = \
                 \"fail-closed\""
            ),
        );
    }
}

/// Delivery providers (auth plane): email not `log`; SMTP uses STARTTLS. Nothing sends SMS in
/// this version, so `[phone]` is refused at load and there is no SMS provider to check.
pub(super) fn production_delivery_providers_real(config: &Config, report: &mut Report) {
    if !production_auth_plane(config) {
        return;
    }
    match config.email.provider {
        EmailProvider::Log => report.error(
            "email.provider",
            format!(
                "email.provider = log is not allowed {IN_PRODUCTION} on the auth plane: set \
                 email.provider = \"smtp\" and configure [email.smtp]"
            ),
        ),
        EmailProvider::Smtp if !config.email.smtp.starttls => report.error(
            "email.smtp.starttls",
            format!(
                "email.smtp.starttls must be true when email.provider = smtp {IN_PRODUCTION}: \
                 turn it back on"
            ),
        ),
        EmailProvider::Smtp => {}
    }
}

/// Spec "Other constants and rules": Argon2 with 64 MiB and one lane on the auth plane.
pub(super) fn production_argon2_strength(config: &Config, report: &mut Report) {
    if !production_auth_plane(config) {
        return;
    }
    let auth = &config.auth;
    if auth.argon2_memory_kib < PRODUCTION_ARGON2_MIN_MEMORY_KIB {
        report.error(
            "auth.argon2_memory_kib",
            format!(
                "auth.argon2_memory_kib = {} is below {PRODUCTION_ARGON2_MIN_MEMORY_KIB} (64 MiB), \
                 the minimum {IN_PRODUCTION} on the auth plane: raise it",
                auth.argon2_memory_kib
            ),
        );
    }
    if auth.argon2_parallelism != 1 {
        report.error(
            "auth.argon2_parallelism",
            format!(
                "auth.argon2_parallelism = {} must be 1 {IN_PRODUCTION} on the auth plane: set it \
                 to 1",
                auth.argon2_parallelism
            ),
        );
    }
}

/// The development escape hatch is refused in production, where it would mean nothing good.
pub(super) fn production_escape_hatch_off(config: &Config, report: &mut Report) {
    if config.is_production() && config.security.allow_public_without_production {
        report.error(
            "security.allow_public_without_production",
            format!(
                "security.allow_public_without_production must be false {IN_PRODUCTION}: it is a \
                 development escape hatch; remove it"
            ),
        );
    }
}

#[cfg(test)]
#[path = "production_tests.rs"]
mod tests;

/// Webhooks: no internal targets or plain http in production (CONTRACTS.md "Webhooks").
pub(super) fn production_webhook_targets_public(config: &Config, report: &mut Report) {
    if config.is_production() && config.webhooks.allow_internal_targets == Some(true) {
        report.error(
            "webhooks.allow_internal_targets",
            format!(
                "webhooks.allow_internal_targets must be false {IN_PRODUCTION}: receivers are \
                 reached over https at public addresses only; remove the key"
            ),
        );
    }
}
