//! `[social]` and `[generic_oauth]`: sign-in through a tenant's social providers ("Continue
//! with Google"), and whether those may be any OpenID or OAuth 2.0 server.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Social sign-in per tenant: when enabled, a tenant administrator configures providers with
/// `PUT /api/v1/social-providers/{slug}` (`policies:write`) from a preset — `google`,
/// `microsoft`, `apple`, `github`, `gitlab` — with our client id and secret there, and the
/// sign-in page offers "Continue with …" for each enabled one. Register the `redirect_uri` the
/// API answers at the provider. An OpenID provider's discovery document is read when it is
/// configured. A person is created, or linked to an existing account after signing in to it
/// and confirming, only on an address the provider vouches for (`email_verified`; Microsoft
/// vouches only through its optional claim `xms_edov`, to be added to the application).
/// Client secrets and Apple's signing key are sealed at rest with the deployment's data key
/// (wrapped by `[kms]`; without it, development only, providers configured now stop working
/// when the process restarts).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SocialConfig {
    /// Offer social sign-in and its management API. Default: false.
    pub enabled: bool,
    /// Seconds a person has to come back from the provider before starting again. Default:
    /// 600. Allowed range: 60..=3600.
    pub attempt_lifetime_secs: u32,
}

impl Default for SocialConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            attempt_lifetime_secs: 600,
        }
    }
}

/// Generic upstream providers for social sign-in: when enabled (it needs `social.enabled =
/// true`), a tenant administrator may also configure the presets `oidc` (any OpenID provider,
/// by its issuer, discovery read when configured) and `oauth2` (any OAuth 2.0 server, by its
/// authorization, token and profile endpoints). Off, only the named presets are accepted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct GenericOauthConfig {
    /// Allow the generic presets `oidc` and `oauth2`. Default: false.
    pub enabled: bool,
}
