//! `[ciba]`: client-initiated backchannel authentication (OpenID CIBA Core, poll mode) — whether
//! it is served, and how long requests live and how often clients poll.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Backchannel authentication.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CibaConfig {
    /// Serve `POST /bc-authorize`, the approval page `/auth/ciba` (and the mail pointing to it)
    /// and the `urn:openid:params:grant-type:ciba` grant (poll mode, confidential clients
    /// registered with it). When false none of them exists and discovery advertises none.
    /// Default: false.
    pub enabled: bool,
    /// Seconds a request lives when the client sends no `requested_expiry`. Default: 300.
    /// Allowed range: 30..=600.
    pub request_expiry_secs: u32,
    /// The longest `requested_expiry` honoured, in seconds (longer ones are capped). Default:
    /// 600. Allowed range: 30..=3600.
    pub max_requested_expiry_secs: u32,
    /// Seconds a client waits between polls at first (each poll that comes sooner answers
    /// `slow_down` and adds 5 s). Default: 5. Allowed range: 1..=60.
    pub interval_secs: u32,
}

impl Default for CibaConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            request_expiry_secs: 300,
            max_requested_expiry_secs: 600,
            interval_secs: 5,
        }
    }
}
