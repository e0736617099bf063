//! `[enterprise_sso]`: sign-in through an organization's own OpenID provider.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Enterprise single sign-on per organization: when enabled, a tenant administrator connects
/// an organization to its OpenID provider (`PUT /api/v1/organizations/{id}/sso`: issuer,
/// client id and secret; the provider's discovery document is read then), and a person whose
/// address is at a domain the organization verified signs in there from the sign-in page
/// ("Sign in with SSO"): authorization code flow with PKCE, `state` and `nonce`, the ID token
/// checked against the provider's keys. A person is linked to an existing account, or created,
/// only on an upstream-verified address at a verified domain of that organization. Upstream
/// client secrets are sealed at rest with the deployment's data key (wrapped by `[kms]`;
/// without it, development only, connections configured now stop working when the process
/// restarts).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EnterpriseSsoConfig {
    /// Offer enterprise single sign-on. Default: false.
    pub enabled: bool,
    /// Seconds a person has to come back from the provider before starting again. Default:
    /// 600. Allowed range: 60..=3600.
    pub attempt_lifetime_secs: u32,
}

impl Default for EnterpriseSsoConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            attempt_lifetime_secs: 600,
        }
    }
}
