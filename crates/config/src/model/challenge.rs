//! `[challenge]`: agent challenge-response — a registered agent asks for a single-use
//! challenge, signs it with a key it registered, and receives an access token: no shared secret
//! ever crosses the wire.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Agent challenge-response at `/oauth/agent/challenge` and the token endpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ChallengeConfig {
    /// Serve `POST /oauth/agent/challenge` and accept signed agent assertions
    /// (`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`, RFC 7523 §2.1) at the token
    /// endpoint, and advertise both in discovery. When false neither exists. Default: false.
    pub enabled: bool,
    /// How long a challenge may be answered, in seconds; each is answered once. Default: 60.
    /// Allowed range: 10..=600.
    pub challenge_lifetime_secs: u32,
}

impl Default for ChallengeConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            challenge_lifetime_secs: 60,
        }
    }
}
