//! `[delegation]`: token exchange (RFC 8693) — whether the grant is served, and how long an
//! actor chain (`act`) may grow.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Delegated access through token exchange.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DelegationConfig {
    /// Serve the token exchange grant (`urn:ietf:params:oauth:grant-type:token-exchange`) to
    /// confidential applications registered for it, and advertise it in discovery. When false
    /// the grant is `unsupported_grant_type`. Default: true.
    pub enabled: bool,
    /// Most actors an exchanged token's `act` chain may name (the newest actor and the ones it
    /// acts through); an exchange that would make it longer is refused. Default: 3 (CONTRACTS.md).
    /// Allowed range: 1..=8.
    pub max_chain_depth: u8,
}

impl Default for DelegationConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            max_chain_depth: 3,
        }
    }
}
