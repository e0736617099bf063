//! Numeric ranges of every bounded key, in one table so the bounds in the doc comments (and thus
//! in `svc.example.toml`) can be checked against the bounds enforced.

use crate::model::Config;
use crate::validate::Report;

/// One bounded key.
pub(crate) struct Bound {
    pub(crate) key: &'static str,
    get: fn(&Config) -> Option<u64>,
    pub(crate) min: u64,
    pub(crate) max: u64,
}

const fn bound(key: &'static str, get: fn(&Config) -> Option<u64>, min: u64, max: u64) -> Bound {
    Bound { key, get, min, max }
}

/// Every bounded key. `get` returns `None` when the key is unset (optional overrides).
pub(crate) const BOUNDS: &[Bound] = &[
    // Spec "Limits": token lifetimes.
    bound(
        "jwt.access_token_lifetime_human_secs",
        |c| Some(c.jwt.access_token_lifetime_human_secs.into()),
        60,
        86_400,
    ),
    bound(
        "jwt.access_token_lifetime_agent_secs",
        |c| Some(c.jwt.access_token_lifetime_agent_secs.into()),
        60,
        86_400,
    ),
    bound(
        "jwt.refresh_token_lifetime_human_secs",
        |c| Some(c.jwt.refresh_token_lifetime_human_secs.into()),
        3_600,
        7_776_000,
    ),
    bound(
        "jwt.refresh_token_idle_secs",
        |c| Some(c.jwt.refresh_token_idle_secs.into()),
        3_600,
        7_776_000,
    ),
    bound(
        "jwt.id_token_lifetime_secs",
        |c| Some(c.jwt.id_token_lifetime_secs.into()),
        60,
        3_600,
    ),
    bound(
        "jwt.key_rotation_days",
        |c| Some(c.jwt.key_rotation_days.into()),
        1,
        365,
    ),
    bound(
        "oidc.authorization_code_lifetime_secs",
        |c| Some(c.oidc.authorization_code_lifetime_secs.into()),
        10,
        600,
    ),
    bound("redis.pool_size", |c| Some(c.redis.pool_size.into()), 1, 64),
    bound(
        "redis.command_timeout_ms",
        |c| Some(c.redis.command_timeout_ms.into()),
        50,
        10_000,
    ),
    bound(
        "memcached.pool_size",
        |c| Some(c.memcached.pool_size.into()),
        1,
        64,
    ),
    bound(
        "memcached.command_timeout_ms",
        |c| Some(c.memcached.command_timeout_ms.into()),
        50,
        10_000,
    ),
    bound(
        "oidc.client_cache_secs",
        |c| Some(c.oidc.client_cache_secs.into()),
        0,
        300,
    ),
    // Password hashing and abuse limits.
    bound(
        "auth.argon2_memory_kib",
        |c| Some(c.auth.argon2_memory_kib.into()),
        8_192,
        4_194_304,
    ),
    bound(
        "auth.argon2_iterations",
        |c| Some(c.auth.argon2_iterations.into()),
        1,
        16,
    ),
    bound(
        "auth.argon2_parallelism",
        |c| Some(c.auth.argon2_parallelism.into()),
        1,
        16,
    ),
    bound(
        "auth.argon2_max_concurrent",
        |c| Some(c.auth.argon2_max_concurrent.into()),
        1,
        1_024,
    ),
    bound(
        "auth.brute_force_max_attempts",
        |c| Some(c.auth.brute_force_max_attempts.into()),
        1,
        1_000,
    ),
    bound(
        "auth.login_history_retention_days",
        |c| Some(c.auth.login_history_retention_days.into()),
        1,
        3_650,
    ),
    bound(
        "auth.brute_force_lockout_secs",
        |c| Some(c.auth.brute_force_lockout_secs.into()),
        1,
        86_400,
    ),
    bound(
        "auth.password_verify_ip_max_attempts",
        |c| Some(c.auth.password_verify_ip_max_attempts.into()),
        1,
        1_000,
    ),
    bound(
        "auth.password_verify_ip_window_secs",
        |c| Some(c.auth.password_verify_ip_window_secs.into()),
        1,
        86_400,
    ),
    bound(
        "auth.registration_rate_limit_max",
        |c| Some(c.auth.registration_rate_limit_max.into()),
        1,
        1_000,
    ),
    bound(
        "auth.registration_rate_limit_window_secs",
        |c| Some(c.auth.registration_rate_limit_window_secs.into()),
        1,
        86_400,
    ),
    // Listener.
    bound(
        "server.request_timeout_secs",
        |c| Some(c.server.request_timeout_secs.into()),
        0,
        3_600,
    ),
    bound(
        "server.shutdown_deadline_secs",
        |c| Some(c.server.shutdown_deadline_secs.into()),
        0,
        3_600,
    ),
    bound(
        "server.max_request_body_bytes",
        |c| Some(c.server.max_request_body_bytes),
        1_024,
        67_108_864,
    ),
    bound(
        "server.endpoint_throttle.requests_per_second",
        |c| Some(c.server.endpoint_throttle.requests_per_second.into()),
        1,
        1_000_000,
    ),
    bound(
        "server.endpoint_throttle.burst",
        |c| Some(c.server.endpoint_throttle.burst.into()),
        1,
        1_000_000,
    ),
    // Database pools and timeouts.
    bound(
        "database.max_connections",
        |c| Some(c.database.max_connections.into()),
        1,
        1_000,
    ),
    bound(
        "database.min_connections",
        |c| Some(c.database.min_connections.into()),
        0,
        1_000,
    ),
    bound(
        "database.connect_timeout_secs",
        |c| Some(c.database.connect_timeout_secs.into()),
        1,
        300,
    ),
    bound(
        "database.idle_timeout_secs",
        |c| Some(c.database.idle_timeout_secs.into()),
        0,
        86_400,
    ),
    bound(
        "database.max_lifetime_secs",
        |c| Some(c.database.max_lifetime_secs.into()),
        0,
        86_400,
    ),
    bound(
        "database.statement_cache_capacity",
        |c| Some(c.database.statement_cache_capacity.into()),
        1,
        10_000,
    ),
    bound(
        "database.statement_timeout_secs",
        |c| Some(c.database.statement_timeout_secs.into()),
        0,
        86_400,
    ),
    bound(
        "database.idle_in_transaction_timeout_secs",
        |c| Some(c.database.idle_in_transaction_timeout_secs.into()),
        0,
        86_400,
    ),
    bound(
        "database.maintenance_statement_timeout_secs",
        |c| Some(c.database.maintenance_statement_timeout_secs.into()),
        0,
        86_400,
    ),
    bound(
        "database.auth_pool.max_connections",
        |c| c.database.auth_pool.max_connections.map(u64::from),
        1,
        1_000,
    ),
    bound(
        "database.auth_pool.min_connections",
        |c| c.database.auth_pool.min_connections.map(u64::from),
        0,
        1_000,
    ),
    bound(
        "database.control_pool.max_connections",
        |c| c.database.control_pool.max_connections.map(u64::from),
        1,
        1_000,
    ),
    bound(
        "database.control_pool.min_connections",
        |c| c.database.control_pool.min_connections.map(u64::from),
        0,
        1_000,
    ),
    bound(
        "database.async_pool.max_connections",
        |c| c.database.async_pool.max_connections.map(u64::from),
        1,
        1_000,
    ),
    bound(
        "database.async_pool.min_connections",
        |c| c.database.async_pool.min_connections.map(u64::from),
        0,
        1_000,
    ),
    // Delivery.
    bound(
        "email.smtp.port",
        |c| Some(c.email.smtp.port.into()),
        1,
        65_535,
    ),
    bound(
        "captcha.after_failed_sign_ins",
        |c| Some(c.captcha.after_failed_sign_ins.into()),
        0,
        1_000,
    ),
    bound(
        "captcha.timeout_ms",
        |c| Some(c.captcha.timeout_ms.into()),
        100,
        30_000,
    ),
    bound(
        "passkey.ceremony_lifetime_secs",
        |c| Some(c.passkey.ceremony_lifetime_secs.into()),
        30,
        600,
    ),
    bound(
        "two_factor.challenge_lifetime_secs",
        |c| Some(c.two_factor.challenge_lifetime_secs.into()),
        60,
        1_800,
    ),
    bound(
        "two_factor.backup_codes_warn_below",
        |c| Some(c.two_factor.backup_codes_warn_below.into()),
        0,
        10,
    ),
    bound(
        "two_factor.trusted_device_days",
        |c| Some(c.two_factor.trusted_device_days.into()),
        0,
        365,
    ),
    bound(
        "recovery.approvals_required",
        |c| Some(c.recovery.approvals_required.into()),
        1,
        10,
    ),
    bound(
        "recovery.max_guardians",
        |c| Some(c.recovery.max_guardians.into()),
        1,
        20,
    ),
    bound(
        "recovery.waiting_period_secs",
        |c| Some(c.recovery.waiting_period_secs.into()),
        0,
        2_592_000,
    ),
    bound(
        "recovery.request_lifetime_secs",
        |c| Some(c.recovery.request_lifetime_secs.into()),
        600,
        2_592_000,
    ),
    bound(
        "adaptive_mfa.threshold",
        |c| Some(c.adaptive_mfa.threshold.into()),
        1,
        1_000,
    ),
    bound(
        "adaptive_mfa.new_ip_score",
        |c| Some(c.adaptive_mfa.new_ip_score.into()),
        0,
        1_000,
    ),
    bound(
        "adaptive_mfa.failure_burst_score",
        |c| Some(c.adaptive_mfa.failure_burst_score.into()),
        0,
        1_000,
    ),
    bound(
        "adaptive_mfa.failure_burst",
        |c| Some(c.adaptive_mfa.failure_burst.into()),
        1,
        100,
    ),
    bound(
        "webhooks.request_timeout_secs",
        |c| Some(c.webhooks.request_timeout_secs.into()),
        1,
        120,
    ),
    bound(
        "webhooks.signature_max_age_secs",
        |c| Some(c.webhooks.signature_max_age_secs.into()),
        30,
        3_600,
    ),
    bound(
        "webhooks.max_concurrent_deliveries",
        |c| Some(c.webhooks.max_concurrent_deliveries.into()),
        1,
        256,
    ),
    bound(
        "webhooks.poll_interval_ms",
        |c| Some(c.webhooks.poll_interval_ms.into()),
        20,
        60_000,
    ),
    bound(
        "webhooks.lease_secs",
        |c| Some(c.webhooks.lease_secs.into()),
        5,
        3_600,
    ),
    bound(
        "enterprise_sso.attempt_lifetime_secs",
        |c| Some(c.enterprise_sso.attempt_lifetime_secs.into()),
        60,
        3_600,
    ),
    bound(
        "social.attempt_lifetime_secs",
        |c| Some(c.social.attempt_lifetime_secs.into()),
        60,
        3_600,
    ),
    bound(
        "verified_domains.timeout_ms",
        |c| Some(c.verified_domains.timeout_ms.into()),
        100,
        30_000,
    ),
    bound(
        "device_authorization.code_lifetime_secs",
        |c| Some(c.device_authorization.code_lifetime_secs.into()),
        60,
        1_800,
    ),
    bound(
        "device_authorization.interval_secs",
        |c| Some(c.device_authorization.interval_secs.into()),
        1,
        60,
    ),
    bound(
        "device_authorization.max_user_code_attempts",
        |c| Some(c.device_authorization.max_user_code_attempts.into()),
        1,
        100,
    ),
    bound(
        "dynamic_registration.max_registrations_per_hour",
        |c| Some(c.dynamic_registration.max_registrations_per_hour.into()),
        1,
        10_000,
    ),
    bound(
        "dynamic_registration.max_document_fetches_per_hour",
        |c| Some(c.dynamic_registration.max_document_fetches_per_hour.into()),
        1,
        100_000,
    ),
    bound(
        "scim.max_results",
        |c| Some(c.scim.max_results.into()),
        1,
        1_000,
    ),
    bound(
        "scim.max_body_bytes",
        |c| Some(c.scim.max_body_bytes),
        1_024,
        16_777_216,
    ),
    bound(
        "api_keys.max_per_tenant",
        |c| Some(c.api_keys.max_per_tenant.into()),
        1,
        10_000,
    ),
    bound(
        "api_keys.max_lifetime_days",
        |c| c.api_keys.max_lifetime_days.map(u64::from),
        1,
        3_650,
    ),
    bound(
        "dpop.proof_window_secs",
        |c| Some(c.dpop.proof_window_secs.into()),
        5,
        300,
    ),
    bound(
        "challenge.challenge_lifetime_secs",
        |c| Some(c.challenge.challenge_lifetime_secs.into()),
        10,
        600,
    ),
    bound(
        "delegation.max_chain_depth",
        |c| Some(c.delegation.max_chain_depth.into()),
        1,
        8,
    ),
    bound(
        "dpop.nonce_lifetime_secs",
        |c| Some(c.dpop.nonce_lifetime_secs.into()),
        30,
        3_600,
    ),
    bound(
        "logout.backchannel_timeout_secs",
        |c| Some(c.logout.backchannel_timeout_secs.into()),
        1,
        30,
    ),
    bound(
        "logout.backchannel_max_attempts",
        |c| Some(c.logout.backchannel_max_attempts.into()),
        1,
        8,
    ),
    bound(
        "ciba.request_expiry_secs",
        |c| Some(c.ciba.request_expiry_secs.into()),
        30,
        600,
    ),
    bound(
        "ciba.max_requested_expiry_secs",
        |c| Some(c.ciba.max_requested_expiry_secs.into()),
        30,
        3_600,
    ),
    bound(
        "ciba.interval_secs",
        |c| Some(c.ciba.interval_secs.into()),
        1,
        60,
    ),
    bound(
        "webhooks.max_subscriptions_per_tenant",
        |c| Some(c.webhooks.max_subscriptions_per_tenant.into()),
        1,
        1_000,
    ),
    bound(
        "webhooks.history_retention_days",
        |c| Some(c.webhooks.history_retention_days.into()),
        1,
        365,
    ),
];

/// Every bounded key is within its range.
pub(crate) fn numeric_ranges(config: &Config, report: &mut Report) {
    for bound in BOUNDS {
        if let Some(value) = (bound.get)(config)
            && !(bound.min..=bound.max).contains(&value)
        {
            report.error(
                bound.key,
                format!(
                    "{} = {value} is out of range {}..={}: choose a value in that range",
                    bound.key, bound.min, bound.max
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys;
    use crate::validate::run;

    #[test]
    fn defaults_are_in_range() {
        assert!(run(numeric_ranges, &Config::default()).errors.is_empty());
    }

    #[test]
    fn out_of_range_names_key_and_range() {
        let mut config = Config::default();
        config.jwt.access_token_lifetime_human_secs = 10;
        config.auth.argon2_iterations = 0;
        config.database.auth_pool.max_connections = Some(0);
        let report = run(numeric_ranges, &config);
        let text: Vec<String> = report.errors.iter().map(ToString::to_string).collect();
        assert_eq!(text.len(), 3, "{text:?}");
        assert!(
            text[0]
                .contains("jwt.access_token_lifetime_human_secs = 10 is out of range 60..=86400")
        );
        assert!(text[1].contains("auth.argon2_iterations = 0 is out of range 1..=16"));
        assert!(
            text[2].contains("database.auth_pool.max_connections = 0 is out of range 1..=1000")
        );
    }

    #[test]
    fn a_disabled_statement_cache_is_refused() {
        let mut config = Config::default();
        config.database.statement_cache_capacity = 0;
        let report = run(numeric_ranges, &config);
        let text: Vec<String> = report.errors.iter().map(ToString::to_string).collect();
        assert_eq!(text.len(), 1, "{text:?}");
        assert!(
            text[0].contains("database.statement_cache_capacity = 0 is out of range 1..=10000"),
            "{text:?}"
        );
    }

    #[test]
    fn documented_ranges_match_enforced_ranges() {
        let tree = keys::key_tree();
        for bound in BOUNDS {
            let node = keys::find(&tree, bound.key)
                .unwrap_or_else(|| panic!("{} is not a key", bound.key));
            let doc = node.doc.as_deref().unwrap_or_default();
            let range = format!("{}..={}", bound.min, bound.max);
            assert!(
                doc.contains(&range),
                "the doc of {} should say `Allowed range: {range}`: {doc}",
                bound.key
            );
        }
    }
}
