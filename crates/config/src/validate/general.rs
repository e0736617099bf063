//! Rules that hold in every mode: consistency between keys, files that must exist, well-formed
//! names and URLs, and the refusal to look public without production mode.

use std::path::Path;

use crate::model::{Config, DatabaseTopology, EmailProvider, RuntimePlane, Transport};
use crate::secret::DatabaseUrl;
use crate::validate::Report;
use crate::validate::hosts;

/// Spec "Startup errors": public or non-local indicators without production mode. The escape
/// hatch `security.allow_public_without_production` downgrades each to a loud warning.
pub(super) fn public_indicators_need_production(config: &Config, report: &mut Report) {
    if config.is_production() {
        return;
    }
    let mut findings: Vec<(&str, String)> = Vec::new();
    let host = &config.server.host;
    if !hosts::is_loopback_bind(host) {
        findings.push((
            "server.host",
            format!("server.host = \"{host}\" is not a loopback address"),
        ));
    }
    if let Some(domain) = &config.server.base_domain
        && !hosts::is_local_host(domain)
    {
        findings.push((
            "server.base_domain",
            format!("server.base_domain = \"{domain}\" is a public domain"),
        ));
    }
    if let Some(raw) = &config.oidc.issuer_url
        && let Ok(url) = hosts::parse_http_url(raw)
        && let Some(host) = url.host_str()
        && !hosts::is_local_host(host)
    {
        findings.push((
            "oidc.issuer_url",
            format!("oidc.issuer_url = \"{raw}\" has the public host {host}"),
        ));
    }
    for (key, finding) in findings {
        if config.security.allow_public_without_production {
            report.warn(format!(
                "DEVELOPMENT ONLY: {finding} while security.production = false; \
                 security.allow_public_without_production = true lets it start with every \
                 production guard off. Never expose this instance to real users."
            ));
        } else {
            report.error(
                key,
                format!(
                    "security.production must be true: {finding}; set security.production = \
                     true and satisfy the production rules, use a local host (127.0.0.1, \
                     localhost, *.localhost, *.test), or for development only set \
                     security.allow_public_without_production = true"
                ),
            );
        }
    }
}

/// Spec "Limits": a refresh lifetime is at least the matching access lifetime. Only people
/// receive refresh tokens in this version, so the human pair is the one to check.
pub(super) fn jwt_refresh_covers_access(config: &Config, report: &mut Report) {
    let jwt = &config.jwt;
    let (refresh, access) = (
        jwt.refresh_token_lifetime_human_secs,
        jwt.access_token_lifetime_human_secs,
    );
    if refresh < access {
        report.error(
            "jwt.refresh_token_lifetime_human_secs",
            format!(
                "jwt.refresh_token_lifetime_human_secs = {refresh} is shorter than \
                 jwt.access_token_lifetime_human_secs = {access}: a refresh lifetime must be at \
                 least the matching access lifetime"
            ),
        );
    }
}

/// `min_connections` never exceeds `max_connections`, for the base pool and each plane's
/// effective pool.
pub(super) fn pool_min_within_max(config: &Config, report: &mut Report) {
    let db = &config.database;
    if db.min_connections > db.max_connections {
        report.error(
            "database.min_connections",
            format!(
                "database.min_connections = {} is greater than database.max_connections = {}: \
                 lower min_connections or raise max_connections",
                db.min_connections, db.max_connections
            ),
        );
    }
    let planes = [
        (RuntimePlane::Auth, "auth_pool", &db.auth_pool),
        (RuntimePlane::Control, "control_pool", &db.control_pool),
        (RuntimePlane::Async, "async_pool", &db.async_pool),
    ];
    for (plane, name, pool) in planes {
        if pool.max_connections.is_none() && pool.min_connections.is_none() {
            continue;
        }
        let (max, min) = config.pool_sizing_for(plane);
        if min > max {
            report.error(
                &format!("database.{name}.min_connections"),
                format!(
                    "database.{name} sizes the {plane} pool with min_connections = {min} above \
                     max_connections = {max}: lower database.{name}.min_connections or raise \
                     database.{name}.max_connections"
                ),
            );
        }
    }
}

/// Spec "Runtime planes": `all` only when all-in-one mode is allowed.
pub(super) fn runtime_plane_allowed(config: &Config, report: &mut Report) {
    let deployment = &config.deployment;
    if deployment.runtime_plane == RuntimePlane::All && !deployment.allow_all_in_one_runtime_plane {
        report.error(
            "deployment.runtime_plane",
            "deployment.runtime_plane = all (SVC_RUNTIME_PLANE) is not allowed because \
             deployment.allow_all_in_one_runtime_plane = false: set SVC_RUNTIME_PLANE to one of \
             auth|control|async, or allow all-in-one mode",
        );
    }
}

/// `tls_h2_only` needs a certificate and key, and every TLS file named must be readable.
pub(super) fn tls_files_configured_and_readable(config: &Config, report: &mut Report) {
    let tls = &config.server.tls;
    if config.server.transport == Transport::TlsH2Only {
        for (key, path, what) in [
            (
                "server.tls.cert_pem_path",
                &tls.cert_pem_path,
                "the PEM certificate chain",
            ),
            (
                "server.tls.key_pem_path",
                &tls.key_pem_path,
                "the PEM private key",
            ),
        ] {
            if path.is_none() {
                report.error(
                    key,
                    format!(
                        "{key} is required when server.transport = tls_h2_only: set it to {what}"
                    ),
                );
            }
        }
    }
    let files = [
        ("server.tls.cert_pem_path", &tls.cert_pem_path),
        ("server.tls.key_pem_path", &tls.key_pem_path),
        ("server.tls.ca_pem_path", &tls.ca_pem_path),
    ];
    for (key, path) in files {
        if let Some(path) = path {
            let path = config.working_dir().join(path);
            if let Err(problem) = readable_file(&path) {
                report.error(
                    key,
                    format!(
                        "{key} = {} cannot be read ({problem}): fix the path or the file permissions",
                        path.display()
                    ),
                );
            }
        }
    }
}

fn readable_file(path: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".to_owned());
    }
    std::fs::File::open(path)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// With `require_ssl = true`, no URL may ask for a mode that allows plaintext.
pub(super) fn database_sslmode_consistent(config: &Config, report: &mut Report) {
    if !config.database.require_ssl {
        return;
    }
    for (key, url) in config.database.configured_urls() {
        if let Some(mode) = url.sslmode()
            && matches!(mode.as_str(), "disable" | "allow" | "prefer")
        {
            report.error(
                "database.require_ssl",
                format!(
                    "database.require_ssl = true but {key} says sslmode={mode}, which allows \
                     plaintext: use sslmode=require, verify-ca or verify-full"
                ),
            );
        }
    }
}

/// `database.listen_url` serves PostgreSQL's change feed: refused when the runtime store it
/// would serve is SQLite (which has no feed) or when it is not a PostgreSQL URL itself.
pub(super) fn listen_url_needs_postgres(config: &Config, report: &mut Report) {
    let Some(listen) = &config.database.listen_url else {
        return;
    };
    if listen.is_sqlite() {
        report.error(
            "database.listen_url",
            "database.listen_url must be a PostgreSQL URL: it is where the change feed \
             LISTENs"
                .to_owned(),
        );
        return;
    }
    for plane in RuntimePlane::All.served() {
        if config
            .database_url_for(*plane)
            .url()
            .is_none_or(DatabaseUrl::is_sqlite)
        {
            report.error(
                "database.listen_url",
                "database.listen_url is set but the runtime database is SQLite, which has no \
                 change feed to listen to: remove it, or set database.url to PostgreSQL"
                    .to_owned(),
            );
            return;
        }
    }
}

/// Plane URLs only take effect with `split_by_plane`; say so rather than ignore them silently.
pub(super) fn plane_urls_need_split_topology(config: &Config, report: &mut Report) {
    if config.deployment.database_topology == DatabaseTopology::SplitByPlane {
        return;
    }
    let db = &config.database;
    for (key, url) in [
        ("database.auth_url", &db.auth_url),
        ("database.control_url", &db.control_url),
        ("database.async_url", &db.async_url),
    ] {
        if url.is_some() {
            report.warn(format!(
                "{key} is set but deployment.database_topology = shared, so it is ignored; set \
                 deployment.database_topology = \"split_by_plane\" to use it"
            ));
        }
    }
}

/// The single-tenant slug is a DNS label, so it can also be a subdomain.
pub(super) fn tenant_slug_is_dns_label(config: &Config, report: &mut Report) {
    if let Some(slug) = &config.tenant.default_tenant_slug
        && !hosts::is_dns_label(slug)
    {
        report.error(
            "tenant.default_tenant_slug",
            format!(
                "tenant.default_tenant_slug = \"{slug}\" is not a DNS label: use 1 to 63 of a-z, \
                 0-9 and -, not starting or ending with -"
            ),
        );
    }
}

/// Every URL-valued key parses as an absolute http(s) URL.
pub(super) fn urls_are_valid(config: &Config, report: &mut Report) {
    let mut bad = |key: &str, raw: &str, problem: String, example: &str| {
        report.error(
            key,
            format!("{key} = \"{raw}\" is not valid ({problem}): write e.g. {example}"),
        );
    };
    if let Some(raw) = &config.oidc.issuer_url {
        match hosts::parse_http_url(raw) {
            Ok(url) if url.query().is_some() || url.fragment().is_some() => bad(
                "oidc.issuer_url",
                raw,
                "an issuer has no query or fragment".to_owned(),
                "https://auth.example.com",
            ),
            Ok(_) => {}
            Err(problem) => bad("oidc.issuer_url", raw, problem, "https://auth.example.com"),
        }
    }
    if let Some(raw) = &config.server.error_type_base
        && let Err(problem) = hosts::parse_http_url(raw)
    {
        bad(
            "server.error_type_base",
            raw,
            problem,
            "https://docs.example.com/problems",
        );
    }
    if let Some(raw) = &config.captcha.verify_url
        && let Err(problem) = hosts::parse_http_url(raw)
    {
        bad(
            "captcha.verify_url",
            raw,
            problem,
            "https://challenges.cloudflare.com/turnstile/v0/siteverify",
        );
    }
    if let Err(problem) = hosts::parse_http_url(&config.hibp.base_url) {
        bad(
            "hibp.base_url",
            &config.hibp.base_url,
            problem,
            "https://api.pwnedpasswords.com",
        );
    }
}

/// Host-valued keys hold host names (or patterns) without scheme, port or path.
pub(super) fn host_names_are_valid(config: &Config, report: &mut Report) {
    let host = &config.server.host;
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if !hosts::is_host_name(host) && bare.parse::<std::net::IpAddr>().is_err() {
        report.error(
            "server.host",
            format!(
                "server.host = \"{host}\" is not an IP address or host name: write e.g. 127.0.0.1"
            ),
        );
    }
    if let Some(domain) = &config.server.base_domain
        && !hosts::is_host_name(domain)
    {
        report.error(
            "server.base_domain",
            format!(
                "server.base_domain = \"{domain}\" is not a bare host name: write e.g. \
                 auth.example.com (no scheme, port or path)"
            ),
        );
    }
    for entry in &config.server.allowed_hosts {
        if !hosts::is_allowed_host_pattern(entry) {
            report.error(
                "server.allowed_hosts",
                format!(
                    "server.allowed_hosts entry \"{entry}\" is not a host name or *.suffix \
                     pattern: write e.g. auth.example.com or *.auth.example.com (no scheme or port)"
                ),
            );
        }
    }
}

/// The SMTP provider has somewhere to send from and through.
pub(super) fn smtp_is_complete(config: &Config, report: &mut Report) {
    let email = &config.email;
    if email.provider != EmailProvider::Smtp {
        return;
    }
    if email
        .smtp
        .host
        .as_deref()
        .is_none_or(|h| h.trim().is_empty())
    {
        report.error(
            "email.smtp.host",
            "email.smtp.host is required when email.provider = smtp: set the relay host name",
        );
    }
    if email.from.as_deref().is_none_or(|f| !f.contains('@')) {
        report.error(
            "email.from",
            "email.from is required when email.provider = smtp: set a sender address such as \
             no-reply@example.com",
        );
    }
}

/// `[captcha]`: once enabled, a provider, its site key and its secret (in production on the
/// auth plane the production guard names them instead, so nothing is said twice); the reCAPTCHA
/// score threshold is a fraction.
pub(super) fn captcha_is_complete(config: &Config, report: &mut Report) {
    let captcha = &config.captcha;
    if !(0.0..=1.0).contains(&captcha.min_score) {
        report.error(
            "captcha.min_score",
            format!(
                "captcha.min_score = {} is out of range 0.0 to 1.0: choose a value in that range, \
                 e.g. 0.5",
                captcha.min_score
            ),
        );
    }
    if !captcha.enabled || super::production::production_auth_plane(config) {
        return;
    }
    if captcha.provider.is_none() {
        report.error(
            "captcha.provider",
            "captcha.provider is required when captcha.enabled = true: set it to \"turnstile\", \
             \"hcaptcha\" or \"recaptcha\"",
        );
    }
    if captcha
        .site_key
        .as_deref()
        .is_none_or(|k| k.trim().is_empty())
    {
        report.error(
            "captcha.site_key",
            "captcha.site_key is required when captcha.enabled = true: set the provider's public \
             site key",
        );
    }
    if captcha
        .secret_key
        .as_ref()
        .is_none_or(|k| k.expose_secret().trim().is_empty())
    {
        report.error(
            "captcha.secret_key",
            "captcha.secret_key is required when captcha.enabled = true (the server verifies \
             every token with it): set SVC_CAPTCHA__SECRET_KEY",
        );
    }
}

/// `two_factor.policy = "required"` means nothing without second factors: refused rather than
/// a guard that does nothing.
pub(super) fn two_factor_policy_needs_enabled(config: &Config, report: &mut Report) {
    let two_factor = &config.two_factor;
    if two_factor.policy == crate::model::TwoFactorPolicy::Required && !two_factor.enabled {
        report.error(
            "two_factor.policy",
            "two_factor.policy = \"required\" needs two_factor.enabled = true: enable second \
             factors, or set the policy to \"optional\"",
        );
    }
}

/// `[adaptive_mfa]` steps up sign-ins that would skip the second factor on a trusted browser:
/// without second factors it would guard nothing.
pub(super) fn adaptive_mfa_needs_two_factor(config: &Config, report: &mut Report) {
    if config.adaptive_mfa.enabled && !config.two_factor.enabled {
        report.error(
            "adaptive_mfa.enabled",
            "adaptive_mfa.enabled = true needs two_factor.enabled = true: risk-based step-up \
             asks for a second factor, so second factors must be on",
        );
    }
}

/// `[generic_oauth]` only widens what `[social]` offers: on its own it would allow providers
/// nobody can configure.
pub(super) fn generic_oauth_needs_social(config: &Config, report: &mut Report) {
    if config.generic_oauth.enabled && !config.social.enabled {
        report.error(
            "generic_oauth.enabled",
            "generic_oauth.enabled = true needs social.enabled = true: the generic presets \
             oidc and oauth2 are social providers",
        );
    }
}

/// `[recovery]` replaces lost second factors, so it needs second factors; M of N needs
/// M <= N; and in production the owner gets at least an hour to notice and cancel.
pub(super) fn recovery_is_consistent(config: &Config, report: &mut Report) {
    let recovery = &config.recovery;
    if !recovery.enabled {
        return;
    }
    if !config.two_factor.enabled {
        report.error(
            "recovery.enabled",
            "recovery.enabled = true needs two_factor.enabled = true: recovery replaces \
             lost second factors and has the person set up a new one",
        );
    }
    if recovery.approvals_required > recovery.max_guardians {
        report.error(
            "recovery.approvals_required",
            format!(
                "recovery.approvals_required ({}) is more than max_guardians ({}): no \
                 recovery could ever be approved",
                recovery.approvals_required, recovery.max_guardians
            ),
        );
    }
    if config.security.production && recovery.waiting_period_secs < 3_600 {
        report.error(
            "recovery.waiting_period_secs",
            "recovery.waiting_period_secs must be at least 3600 in production: the \
             owner needs time to notice a recovery and cancel it",
        );
    }
}

/// `[passkey].rp_id` and `origins` widen the relying party beyond the issuer; only a
/// single-tenant deployment has one issuer to widen, and both must stay within the RP ID
/// (WebAuthn L3 §5.1.3: an origin's host is the RP ID or below it), or every ceremony fails.
pub(super) fn passkey_relying_party_is_consistent(config: &Config, report: &mut Report) {
    let passkey = &config.passkey;
    if passkey.rp_id.is_none() && passkey.origins.is_empty() {
        return;
    }
    let single_tenant =
        config.tenant.default_tenant_slug.is_some() || config.server.base_domain.is_none();
    if !single_tenant {
        report.error(
            "passkey.rp_id",
            "passkey.rp_id and passkey.origins apply to single-tenant deployments only              (tenant.default_tenant_slug): every tenant's RP ID is its own host",
        );
        return;
    }
    let issuer_host = config
        .oidc
        .issuer_url
        .as_deref()
        .and_then(|u| url::Url::parse(u).ok())
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
    let within = |host: &str, rp_id: &str| host == rp_id || host.ends_with(&format!(".{rp_id}"));
    let rp_id = match &passkey.rp_id {
        Some(rp_id) => {
            let valid = !rp_id.is_empty()
                && rp_id.split('.').all(|label| {
                    !label.is_empty()
                        && label.len() <= 63
                        && label
                            .bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                });
            if !valid {
                report.error(
                    "passkey.rp_id",
                    "passkey.rp_id must be a lowercase host name without scheme or port, e.g.                      \"example.com\"",
                );
                return;
            }
            match &issuer_host {
                Some(host) if within(host, rp_id) => rp_id.clone(),
                Some(host) => {
                    report.error(
                        "passkey.rp_id",
                        format!(
                            "passkey.rp_id {rp_id:?} must be the issuer's host {host:?} or a                              parent of it"
                        ),
                    );
                    return;
                }
                None => {
                    report.error(
                        "passkey.rp_id",
                        "passkey.rp_id needs oidc.issuer_url, so that the issuer can be checked                          to lie within it",
                    );
                    return;
                }
            }
        }
        None => match issuer_host {
            Some(host) => host,
            None => {
                report.error(
                    "passkey.origins",
                    "passkey.origins needs oidc.issuer_url (the RP ID is the issuer's host)",
                );
                return;
            }
        },
    };
    for origin in &passkey.origins {
        let parsed = url::Url::parse(origin).ok().filter(|u| {
            matches!(u.path(), "" | "/") && u.query().is_none() && u.fragment().is_none()
        });
        let Some(url) = parsed else {
            report.error(
                "passkey.origins",
                format!("passkey.origins: {origin:?} is not an origin (scheme://host[:port])"),
            );
            continue;
        };
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        let local = host == "localhost" || host.ends_with(".localhost");
        let secure = url.scheme() == "https" || (url.scheme() == "http" && local);
        if !secure || (url.scheme() == "http" && config.is_production()) {
            report.error(
                "passkey.origins",
                format!(
                    "passkey.origins: {origin:?} must be https (http only for localhost \
                     outside production)"
                ),
            );
        } else if !within(&host, &rp_id) {
            report.error(
                "passkey.origins",
                format!("passkey.origins: the host of {origin:?} is not {rp_id:?} or below it"),
            );
        }
    }
}

#[cfg(test)]
#[path = "general_tests.rs"]
mod tests;

/// The retry schedule has 1 to 20 delays of 1 s to 2 days, and a lease outlives an attempt.
pub(super) fn webhook_schedule_and_lease_consistent(config: &Config, report: &mut Report) {
    let webhooks = &config.webhooks;
    let schedule = &webhooks.retry_schedule_secs;
    if schedule.is_empty() || schedule.len() > 20 {
        report.error(
            "webhooks.retry_schedule_secs",
            format!(
                "webhooks.retry_schedule_secs has {} entries: give 1 to 20 delays in seconds",
                schedule.len()
            ),
        );
    }
    if let Some(bad) = schedule.iter().find(|d| !(1..=172_800).contains(*d)) {
        report.error(
            "webhooks.retry_schedule_secs",
            format!(
                "webhooks.retry_schedule_secs contains {bad}: every delay must be in 1..=172800 seconds"
            ),
        );
    }
    if webhooks.lease_secs <= webhooks.request_timeout_secs {
        report.error(
            "webhooks.lease_secs",
            format!(
                "webhooks.lease_secs = {} must exceed webhooks.request_timeout_secs = {}: a \
                 lease shorter than an attempt lets a second worker resend it",
                webhooks.lease_secs, webhooks.request_timeout_secs
            ),
        );
    }
}
