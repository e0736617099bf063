//! `[scim]`: SCIM 2.0 provisioning (RFC 7643, RFC 7644) — whether the deployment serves
//! `{issuer}/scim/v2`, and its limits. Each tenant then issues SCIM tokens to its directories
//! through the management API (`/api/v1/scim/tokens`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// SCIM 2.0 provisioning.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ScimConfig {
    /// Serve `/scim/v2` (ServiceProviderConfig, Schemas, ResourceTypes, Users) on every
    /// tenant's host, for holders of the tenant's SCIM tokens. When false none of it exists
    /// (tokens can still be issued). Default: false.
    pub enabled: bool,
    /// Most resources one list answers (`filter.maxResults` of ServiceProviderConfig); a larger
    /// `count` is capped to it. Default: 100. Allowed range: 1..=1000.
    pub max_results: u32,
    /// Largest SCIM request body, in bytes; larger ones get 413 with a SCIM error body
    /// (`server.max_request_body_bytes` applies first). Default: 262144 (256 KiB). Allowed
    /// range: 1024..=16777216.
    pub max_body_bytes: u64,
}

impl Default for ScimConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            max_results: 100,
            max_body_bytes: 256 * 1024,
        }
    }
}
