//! `[device_authorization]`: the device authorization grant (RFC 8628) — whether it is served,
//! how long its codes live, how often devices poll, and how many wrong user codes one address
//! may type.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The device authorization grant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DeviceAuthorizationConfig {
    /// Serve `POST /oauth/device/code`, the verification page `/oauth/device/verify` and the
    /// `urn:ietf:params:oauth:grant-type:device_code` grant (only for applications registered
    /// with it). When false none of them exists and discovery advertises none. Default: true.
    pub enabled: bool,
    /// Seconds a device code and its user code live. Default: 600. Allowed range: 60..=1800.
    pub code_lifetime_secs: u32,
    /// Seconds a device waits between polls at first (each poll that comes sooner answers
    /// `slow_down` and adds 5 s). Default: 5. Allowed range: 1..=60.
    pub interval_secs: u32,
    /// Wrong user codes one client address may type on the verification page in 15 minutes;
    /// after that even a right one is refused until the window ends. Default: 10. Allowed
    /// range: 1..=100.
    pub max_user_code_attempts: u32,
}

impl Default for DeviceAuthorizationConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            code_lifetime_secs: 600,
            interval_secs: 5,
            max_user_code_attempts: 10,
        }
    }
}
