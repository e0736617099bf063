//! The typed configuration: [`Config`] with one field per spec section that works in this
//! version (the others are refused at load, see `crate::unavailable`).
//!
//! Every field's `///` doc is user documentation: it becomes the comment above the key in the
//! generated `svc.example.toml`, so it states the default and the allowed range.

mod api_keys;
mod auth;
mod challenge;
mod ciba;
mod database;
mod delegation;
mod delivery;
mod deployment;
mod device_authorization;
mod dpop;
mod dynamic_registration;
mod enterprise_sso;
mod logout;
mod memcached;
mod passkey;
mod redis;
mod scim;
mod security;
mod server;
mod social;
mod two_factor;
mod verified_domains;
mod webhooks;

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use api_keys::ApiKeysConfig;
pub use auth::{
    AuthConfig, JwtAlgorithm, JwtConfig, OidcConfig, PushedAuthorizationRequests,
    RequestObjectPolicy,
};
pub use challenge::ChallengeConfig;
pub use ciba::CibaConfig;
pub use database::{DatabaseConfig, KmsConfig, PoolOverride};
pub use delegation::DelegationConfig;
pub use delivery::{
    CaptchaConfig, CaptchaProvider, EmailConfig, EmailProvider, FailMode, HibpConfig, LogDelivery,
    SmtpConfig,
};
pub use deployment::{CoordinationBackend, DatabaseTopology, DeploymentConfig, RuntimePlane};
pub use device_authorization::DeviceAuthorizationConfig;
pub use dpop::DpopConfig;
pub use dynamic_registration::{DynamicRegistrationConfig, SoftwareStatementIssuer};
pub use enterprise_sso::EnterpriseSsoConfig;
pub use logout::LogoutConfig;
pub use memcached::MemcachedConfig;
pub use passkey::PasskeyConfig;
pub use redis::{RedisConfig, ThrottleFailMode};
pub use scim::ScimConfig;
pub use security::{OpenApiConfig, SecurityConfig, TenantConfig};
pub use server::{EndpointThrottle, ServerConfig, TlsConfig, Transport};
pub use social::{GenericOauthConfig, SocialConfig};
pub use two_factor::{AdaptiveMfaConfig, RecoveryConfig, TwoFactorConfig, TwoFactorPolicy};
pub use verified_domains::VerifiedDomainsConfig;
pub use webhooks::WebhooksConfig;

/// The whole service configuration: the sections that work in this version. Sections and keys
/// the specification names for features not built yet are refused at load
/// (`crate::unavailable`), never kept here as settings that do nothing. Build it with
/// [`crate::load`]; check it with [`Config::validate`].
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Deployment layout: runtime planes and database topology.
    pub deployment: DeploymentConfig,
    /// HTTP listener, host allowlist, proxy trust and timeouts.
    pub server: ServerConfig,
    /// Database connections and pools.
    pub database: DatabaseConfig,
    /// The Redis coordination backend (with `deployment.coordination_backend = "redis"`).
    pub redis: RedisConfig,
    /// The Memcached coordination backend (with `deployment.coordination_backend =
    /// "memcached"`).
    pub memcached: MemcachedConfig,
    /// Key management service (`svc-kms`); required in production.
    pub kms: Option<KmsConfig>,
    /// Password hashing and credential abuse limits.
    pub auth: AuthConfig,
    /// Outgoing email.
    pub email: EmailConfig,
    /// CAPTCHA (auth-plane abuse control).
    pub captcha: CaptchaConfig,
    /// Breached-password check (auth-plane abuse control).
    pub hibp: HibpConfig,
    /// Second factors (TOTP, security keys, backup codes) and step-up.
    pub two_factor: TwoFactorConfig,
    /// Risk-based step-up on trusted browsers.
    pub adaptive_mfa: AdaptiveMfaConfig,
    /// Account recovery with guardians when second factors are lost.
    pub recovery: RecoveryConfig,
    /// Passkeys (WebAuthn) as a sign-in method.
    pub passkey: PasskeyConfig,
    /// Sign-in through an organization's own OpenID provider.
    pub enterprise_sso: EnterpriseSsoConfig,
    /// Sign-in through a tenant's social providers ("Continue with Google"; also Microsoft,
    /// Apple, GitHub, GitLab), each configured by a tenant administrator with
    /// `PUT /api/v1/social-providers/{slug}`.
    pub social: SocialConfig,
    /// Any OpenID provider (preset `oidc`) or OAuth 2.0 server (preset `oauth2`) as a social
    /// provider. Needs social.enabled = true.
    pub generic_oauth: GenericOauthConfig,
    /// Token lifetimes and signing.
    pub jwt: JwtConfig,
    /// OpenID Connect issuer and authorization codes.
    pub oidc: OidcConfig,
    /// Production mode and security switches.
    pub security: SecurityConfig,
    /// The API reference (OpenAPI document, UI, problem-type pages) on the control plane.
    pub openapi: OpenApiConfig,
    /// Tenant resolution and single-tenant mode.
    pub tenant: TenantConfig,
    /// Webhook delivery: targets, timeouts, retries and workers.
    pub webhooks: WebhooksConfig,
    /// How the domains organizations claim are verified (DNS TXT lookups, the HTTPS method).
    pub verified_domains: VerifiedDomainsConfig,
    /// The device authorization grant (RFC 8628).
    pub device_authorization: DeviceAuthorizationConfig,
    /// Dynamic client registration (RFC 7591, RFC 7592).
    pub dynamic_registration: DynamicRegistrationConfig,
    /// Client-initiated backchannel authentication (OpenID CIBA, poll mode).
    pub ciba: CibaConfig,
    /// Logout propagation to applications (back-channel and front-channel).
    pub logout: LogoutConfig,
    /// Sender-constrained tokens (DPoP, RFC 9449).
    pub dpop: DpopConfig,
    /// Delegated access: token exchange (RFC 8693) and its actor chains.
    pub delegation: DelegationConfig,
    /// SCIM 2.0 provisioning (RFC 7643, RFC 7644) at `/scim/v2`.
    pub scim: ScimConfig,
    /// API keys (`svck_…`) for the management API.
    pub api_keys: ApiKeysConfig,
    /// Agent challenge-response: agents prove their registered key for an access token.
    pub challenge: ChallengeConfig,

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
        if let crate::values::LogSink::File(path) = &mut self.email.log.sink {
            anchor(path);
        }
    }
}
