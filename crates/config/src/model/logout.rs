//! `[logout]`: logout propagation to applications (OpenID Connect Back-Channel Logout 1.0 and
//! Front-Channel Logout 1.0) — whether each channel runs, and how back-channel notices are sent.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Logout propagation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LogoutConfig {
    /// Back-channel logout: applications may register `backchannel_logout_uri`, and when a
    /// session that signed into one ends (sign-out, RP-initiated logout, a session revoked by
    /// the person or an administrator, a suspended person, a password reset) a signed logout
    /// token is POSTed to it, retried with growing delays. Targets follow the webhook egress
    /// policy (`[webhooks].allow_internal_targets`). Discovery advertises
    /// `backchannel_logout_supported` only while true. Default: false.
    pub backchannel: bool,
    /// Front-channel logout: applications may register `frontchannel_logout_uri`, loaded in an
    /// iframe of the signed-out page for each application the ended session signed into.
    /// Discovery advertises `frontchannel_logout_supported` only while true. Default: false.
    pub frontchannel: bool,
    /// Seconds one POST to a `backchannel_logout_uri` may take. Default: 5. Allowed range:
    /// 1..=30.
    pub backchannel_timeout_secs: u32,
    /// Attempts before a back-channel notice is given up (delays 5 s, 20 s, 80 s, … between
    /// them). Default: 5. Allowed range: 1..=8.
    pub backchannel_max_attempts: u32,
}

impl Default for LogoutConfig {
    fn default() -> Self {
        Self {
            backchannel: false,
            frontchannel: false,
            backchannel_timeout_secs: 5,
            backchannel_max_attempts: 5,
        }
    }
}
