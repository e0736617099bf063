//! `[passkey]`: passkeys (WebAuthn) on the hosted pages — registering them from the account
//! page and signing in with them instead of a password.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Passkeys: when enabled, a signed-in person may register passkeys on
/// `/auth/account/passkeys` (discoverable WebAuthn credentials with user verification), and the
/// sign-in page offers "Sign in with a passkey" (and passkeys in the address field's autofill
/// where the browser supports it). A passkey sign-in reaches `acr` `urn:svc:aal2` with `amr`
/// `["hwk"|"swk","user","mfa"]` on its own.
///
/// The relying party is the tenant: its RP ID is the host of the tenant's issuer and the only
/// origin accepted is the issuer itself, so the origin browsers visit must be the issuer (put
/// the service behind the same host name people use). A passkey is bound to its RP ID for
/// good: changing a tenant's host makes its passkeys unusable.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PasskeyConfig {
    /// Offer passkeys. Default: false.
    pub enabled: bool,
    /// Single-tenant deployments only: the RP ID to use instead of the issuer's host, a
    /// registrable parent of it (issuer `https://id.example.com`, `rp_id = "example.com"`),
    /// so passkeys also work on `origins`. Default: unset (the issuer's host).
    pub rp_id: Option<String>,
    /// Single-tenant deployments only: origins accepted besides the issuer, each
    /// `https://host[:port]` (or `http://localhost…` outside production) whose host is
    /// `rp_id` or below it. Default: none.
    pub origins: Vec<String>,
    /// Seconds a browser has to complete a passkey ceremony. Default: 300. Allowed range:
    /// 30..=600.
    pub ceremony_lifetime_secs: u32,
}

impl Default for PasskeyConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            rp_id: None,
            origins: Vec::new(),
            ceremony_lifetime_secs: 300,
        }
    }
}
