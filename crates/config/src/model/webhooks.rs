//! `[webhooks]`: where deliveries may go, how long an attempt may take, the retry schedule, and
//! the delivery workers' pace (CONTRACTS.md "Webhooks (`svc-webhook-v1`)").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Webhook delivery.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct WebhooksConfig {
    /// Let receivers use plain `http` and loopback, private, link-local or otherwise internal
    /// addresses, so a receiver on the same machine works. Unset: allowed outside production,
    /// refused in production (where setting it to true is a startup error).
    pub allow_internal_targets: Option<bool>,
    /// Seconds one delivery attempt may take (connect, send, answer). Default: 15. Allowed
    /// range: 1..=120.
    pub request_timeout_secs: u32,
    /// The replay window announced in `X-SVC-Signature-Max-Age`, in seconds. Default: 300.
    /// Allowed range: 30..=3600.
    pub signature_max_age_secs: u32,
    /// Delays before the 2nd, 3rd, … attempt of a failed delivery, in seconds, each with ±10 %
    /// jitter; after the last one the delivery is exhausted. Default: [5, 300, 1800, 7200, 18000,
    /// 36000, 36000] (8 attempts over about 28 hours). 1 to 20 entries, each 1..=172800.
    pub retry_schedule_secs: Vec<u32>,
    /// Attempts one async-plane process sends at once. Default: 16. Allowed range: 1..=256.
    pub max_concurrent_deliveries: u32,
    /// How often an idle relay or delivery worker looks for work, in milliseconds. Default:
    /// 1000. Allowed range: 20..=60000.
    pub poll_interval_ms: u32,
    /// Seconds a worker holds a claimed delivery; a worker that stops (crash, kill) releases it
    /// when this runs out and the delivery is retried. Must exceed `request_timeout_secs`.
    /// Default: 60. Allowed range: 5..=3600.
    pub lease_secs: u32,
    /// Subscriptions one tenant may have. Default: 50. Allowed range: 1..=1000.
    pub max_subscriptions_per_tenant: u32,
    /// Days finished deliveries and their events are kept for inspection and redelivery.
    /// Default: 30. Allowed range: 1..=365.
    pub history_retention_days: u32,
}

impl Default for WebhooksConfig {
    fn default() -> Self {
        Self {
            allow_internal_targets: None,
            request_timeout_secs: 15,
            signature_max_age_secs: 300,
            retry_schedule_secs: vec![5, 300, 1_800, 7_200, 18_000, 36_000, 36_000],
            max_concurrent_deliveries: 16,
            poll_interval_ms: 1_000,
            lease_secs: 60,
            max_subscriptions_per_tenant: 50,
            history_retention_days: 30,
        }
    }
}

impl WebhooksConfig {
    /// Whether internal targets and plain http are allowed, given the production switch.
    #[must_use]
    pub fn internal_targets_allowed(&self, production: bool) -> bool {
        self.allow_internal_targets.unwrap_or(!production) && !production
    }
}
