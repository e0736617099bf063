//! The typed configuration: [`Config`] with one field per spec section.
//!
//! Every field's `///` doc is user documentation: it becomes the comment above the key in the
//! generated `svc.example.toml`, so it states the default and the allowed range.

mod auth;
mod database;
mod delivery;
mod deployment;
mod security;
mod server;
mod webhooks;

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use auth::{AuthConfig, JwtAlgorithm, JwtConfig, OidcConfig, PasskeyConfig};
pub use database::{DatabaseConfig, KmsConfig, PoolOverride};
pub use delivery::{
    CaptchaConfig, EmailConfig, EmailProvider, FailMode, HibpConfig, LogDelivery, PhoneConfig,
    PhoneProvider, SmtpConfig,
};
pub use deployment::{
    CoordinationBackend, DatabaseTopology, DeploymentConfig, MemcachedConfig, RedisConfig,
    RuntimePlane,
};
pub use security::{OauthProxyConfig, OpenApiConfig, SecurityConfig, TenantConfig};
pub use server::{EndpointThrottle, ServerConfig, TlsConfig, Transport};
pub use webhooks::WebhooksConfig;

use crate::values::FreeformTable;

/// The whole service configuration. Build it with [`crate::load`]; check it with
/// [`Config::validate`].
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Deployment layout: runtime planes, coordination backend and database topology.
    pub deployment: DeploymentConfig,
    /// Redis coordination backend (active when `deployment.coordination_backend = "redis"`).
    pub redis: RedisConfig,
    /// Memcached coordination backend (active when `deployment.coordination_backend =
    /// "memcached"`).
    pub memcached: MemcachedConfig,
    /// HTTP listener, host allowlist, proxy trust and timeouts.
    pub server: ServerConfig,
    /// Database connections and pools.
    pub database: DatabaseConfig,
    /// Key management service (`svc-kms`); required in production.
    pub kms: Option<KmsConfig>,
    /// Password hashing and credential abuse limits.
    pub auth: AuthConfig,
    /// Outgoing email.
    pub email: EmailConfig,
    /// Outgoing SMS.
    pub phone: PhoneConfig,
    /// CAPTCHA (auth-plane abuse control).
    pub captcha: CaptchaConfig,
    /// Breached-password check (auth-plane abuse control).
    pub hibp: HibpConfig,
    /// Token lifetimes and signing.
    pub jwt: JwtConfig,
    /// OpenID Connect issuer and authorization codes.
    pub oidc: OidcConfig,
    /// Passkeys (WebAuthn relying party).
    pub passkey: PasskeyConfig,
    /// Production mode and security switches.
    pub security: SecurityConfig,
    /// OpenAPI document on the control plane.
    pub openapi: OpenApiConfig,
    /// Development OAuth proxy.
    pub oauth_proxy: OauthProxyConfig,
    /// Tenant resolution and single-tenant mode.
    pub tenant: TenantConfig,
    /// Webhook delivery: targets, timeouts, retries and workers.
    pub webhooks: WebhooksConfig,

    /// Social login providers.
    pub social: Option<FreeformTable>,
    /// Enterprise single sign-on (SAML/OIDC federation).
    pub enterprise_sso: Option<FreeformTable>,
    /// Generic OAuth 2.0 upstream providers.
    pub generic_oauth: Option<FreeformTable>,
    /// SMS one-time codes.
    pub sms: Option<FreeformTable>,
    /// Email one-time codes.
    pub email_otp: Option<FreeformTable>,
    /// Magic sign-in links.
    pub magic_link: Option<FreeformTable>,
    /// Anonymous users.
    pub anonymous: Option<FreeformTable>,
    /// Two-factor authentication.
    pub two_factor: Option<FreeformTable>,
    /// Risk-based step-up authentication.
    pub adaptive_mfa: Option<FreeformTable>,
    /// Proof-of-work and interactive challenges.
    pub challenge: Option<FreeformTable>,
    /// OAuth device authorization grant.
    pub device_authorization: Option<FreeformTable>,
    /// Session cookie attributes.
    pub session_cookie: Option<FreeformTable>,
    /// Admin routes.
    pub admin: Option<FreeformTable>,
    /// Access-control policies.
    pub access_control: Option<FreeformTable>,
    /// Outbound proxy.
    pub proxy: Option<FreeformTable>,
    /// Wallets.
    pub wallet: Option<FreeformTable>,
    /// Blockchains, one `[[chains]]` table each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chains: Vec<FreeformTable>,
    /// Sign-In with Ethereum.
    pub siwe: Option<FreeformTable>,
    /// API keys.
    pub api_keys: Option<FreeformTable>,
    /// Localisation.
    pub i18n: Option<FreeformTable>,
    /// Billing.
    pub billing: Option<FreeformTable>,
    /// Commerce.
    pub commerce: Option<FreeformTable>,
    /// DPoP sender-constrained tokens.
    pub dpop: Option<FreeformTable>,
    /// Organizations.
    pub organizations: Option<FreeformTable>,
    /// Invitations.
    pub invitations: Option<FreeformTable>,
    /// Verified domains.
    pub verified_domains: Option<FreeformTable>,
    /// Credential vault.
    pub vault: Option<FreeformTable>,
    /// SCIM provisioning.
    pub scim: Option<FreeformTable>,
    /// Traces and metrics export.
    pub telemetry: Option<FreeformTable>,
    /// Refresh-token family cache.
    pub refresh_family_cache: Option<FreeformTable>,
    /// User self-service pages.
    pub user_self_service: Option<FreeformTable>,

    // Not configuration: where relative paths and the embedded database are anchored.
    #[serde(skip)]
    #[schemars(skip)]
    working_dir: PathBuf,
}

impl Config {
    /// Whether `security.production` is on.
    #[must_use]
    pub fn is_production(&self) -> bool {
        self.security.production
    }

    /// The directory relative paths and the embedded SQLite database are anchored to (the
    /// loader's working directory; empty for a `Config::default()`, i.e. the process's).
    #[must_use]
    pub fn working_dir(&self) -> &Path {
        &self.working_dir
    }

    /// Sets the working directory (the loader does this; useful for configurations built in
    /// code).
    #[must_use]
    pub fn with_working_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.working_dir = dir.into();
        self
    }

    /// Makes relative file paths absolute against the working directory, so the files the
    /// validator checks are the files the runtime opens.
    pub(crate) fn anchor_paths(&mut self) {
        let dir = self.working_dir.clone();
        let anchor = |path: &mut PathBuf| {
            if path.is_relative() {
                *path = dir.join(&*path);
            }
        };
        let tls = &mut self.server.tls;
        for path in [
            &mut tls.cert_pem_path,
            &mut tls.key_pem_path,
            &mut tls.ca_pem_path,
        ]
        .into_iter()
        .flatten()
        {
            anchor(path);
        }
        if let Some(kms) = &mut self.kms {
            anchor(&mut kms.socket_path);
            anchor(&mut kms.server_public_key_path);
            anchor(&mut kms.client_private_key_path);
        }
        for sink in [&mut self.email.log.sink, &mut self.phone.log.sink] {
            if let crate::values::LogSink::File(path) = sink {
                anchor(path);
            }
        }
    }
}
