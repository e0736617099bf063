//! `[api_keys]`: API keys (`svck_…`), the long-lived machine credentials each tenant creates
//! through its management API (`/api/v1/api-keys`) — whether they exist, their limits, and
//! whether a key may act as a person or an agent at one of the tenant's APIs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// API keys for the management API.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ApiKeysConfig {
    /// Serve `/api/v1/api-keys` and accept `Authorization: Bearer svck_…` on the management API
    /// and at token introspection. When false the routes do not exist and every key is refused
    /// like an invalid token (keys already created come back when switched on again). Default:
    /// true.
    pub enabled: bool,
    /// Most live (unrevoked, unexpired) keys one tenant may hold; creating one more is refused
    /// (409). Default: 100. Allowed range: 1..=10000.
    pub max_per_tenant: u32,
    /// Longest lifetime of a key, in days: a key must expire within it, and a key created
    /// without `expires_at` expires at it. No default (keys may never expire). Allowed range:
    /// 1..=3650.
    #[schemars(example = 365)]
    pub max_lifetime_days: Option<u32>,
    /// Let administrators create keys that act as a person (with `users:write`) or an agent
    /// (with `agents:write`) at one of the tenant's API resources (`subject` and `resource` on
    /// `POST /api/v1/api-keys`); that API's resource servers accept them through token
    /// introspection. Also lets a tenant offer its people keys of their own on the account page
    /// (`/auth/account/api-keys`, per the tenant's `/api/v1/api-key-policy`). When false such a
    /// request is refused (400), the page is not served, and keys already created stay valid.
    /// Default: false.
    pub subject_keys: bool,
}

impl Default for ApiKeysConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            max_per_tenant: 100,
            max_lifetime_days: None,
            subject_keys: false,
        }
    }
}
