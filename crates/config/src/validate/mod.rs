//! Validation: every rule is a small named function over [`Config`]; all of them run and every
//! failure is reported together, so an operator fixes the configuration in one pass.
//!
//! `general` holds the rules for every mode, `production` the spec's "Production mode
//! requirements" and "Startup errors" guards, `ranges` the numeric bounds.

mod coordination;
mod general;
pub(crate) mod hosts;
mod production;
pub(crate) mod ranges;

use crate::error::{ConfigError, ConfigErrors};
use crate::model::Config;

/// Findings of the rules run so far.
#[derive(Debug, Default)]
pub(crate) struct Report {
    pub(crate) errors: Vec<ConfigError>,
    pub(crate) warnings: Vec<String>,
}

impl Report {
    /// Records a failed rule about `key`; `message` is the whole line (key, problem, fix).
    pub(crate) fn error(&mut self, key: &str, message: impl Into<String>) {
        self.errors.push(ConfigError::Rule {
            key: key.to_owned(),
            message: message.into(),
        });
    }

    /// Records a non-fatal finding.
    pub(crate) fn warn(&mut self, message: impl Into<String>) {
        self.warnings.push(message.into());
    }
}

type Rule = fn(&Config, &mut Report);

/// Every rule, in the order their messages are printed.
const RULES: &[Rule] = &[
    production::production_kms_configured,
    production::production_transport_not_plain_http,
    production::production_allowed_hosts_populated,
    production::production_proxy_trust_explicit,
    production::production_timeouts_positive,
    production::production_database_url_present,
    production::production_database_is_postgres,
    production::production_database_tls_assured,
    production::production_issuer_is_https,
    production::production_openapi_disabled,
    production::production_webhook_ports_standard,
    production::production_webhook_targets_public,
    production::production_captcha_enforced,
    production::production_hibp_enforced,
    production::production_delivery_providers_real,
    production::production_argon2_strength,
    production::production_escape_hatch_off,
    general::public_indicators_need_production,
    ranges::numeric_ranges,
    general::jwt_refresh_covers_access,
    general::pool_min_within_max,
    general::runtime_plane_allowed,
    general::tls_files_configured_and_readable,
    general::database_sslmode_consistent,
    general::plane_urls_need_split_topology,
    general::listen_url_needs_postgres,
    general::tenant_slug_is_dns_label,
    general::urls_are_valid,
    general::host_names_are_valid,
    general::smtp_is_complete,
    general::captcha_is_complete,
    general::two_factor_policy_needs_enabled,
    general::adaptive_mfa_needs_two_factor,
    general::recovery_is_consistent,
    general::generic_oauth_needs_social,
    general::passkey_relying_party_is_consistent,
    general::webhook_schedule_and_lease_consistent,
    coordination::coordination_backend_is_complete,
];

impl Config {
    /// Runs every rule. `Ok` carries the warnings to print at startup; `Err` every failure.
    pub fn validate(&self) -> Result<Vec<String>, ConfigErrors> {
        let mut report = Report::default();
        for rule in RULES {
            rule(self, &mut report);
        }
        if report.errors.is_empty() {
            Ok(report.warnings)
        } else {
            Err(ConfigErrors(report.errors))
        }
    }
}

/// Runs one rule on its own (unit tests of the rules).
#[cfg(test)]
pub(crate) fn run(rule: Rule, config: &Config) -> Report {
    let mut report = Report::default();
    rule(config, &mut report);
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_without_warnings() {
        assert_eq!(Config::default().validate(), Ok(Vec::new()));
    }
}
