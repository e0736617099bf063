//! `[auth]`, `[jwt]` and `[oidc]`: password hashing and abuse limits, token lifetimes and
//! signing, and the issuer.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Password hashing (Argon2id) and credential abuse limits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AuthConfig {
    /// Argon2 memory cost in KiB; production needs at least 65536 (64 MiB). Default: 65536.
    /// Allowed range: 8192..=4194304.
    pub argon2_memory_kib: u32,
    /// Argon2 passes over memory. Default: 3. Allowed range: 1..=16.
    pub argon2_iterations: u32,
    /// Argon2 lanes; production needs 1. Default: 1. Allowed range: 1..=16.
    pub argon2_parallelism: u32,
    /// Password hashes computed at once per process (bounds memory: this times
    /// `argon2_memory_kib`). Default: 4. Allowed range: 1..=1024.
    pub argon2_max_concurrent: u32,
    /// Failed logins for one account before it is locked. Default: 5. Allowed range: 1..=1000.
    pub brute_force_max_attempts: u32,
    /// Seconds an account stays locked after too many failures. Default: 900. Allowed range:
    /// 1..=86400.
    pub brute_force_lockout_secs: u32,
    /// Password checks one client IP may make per window. Default: 20. Allowed range: 1..=1000.
    pub password_verify_ip_max_attempts: u32,
    /// Window for `password_verify_ip_max_attempts`, in seconds. Default: 300. Allowed range:
    /// 1..=86400.
    pub password_verify_ip_window_secs: u32,
    /// Registrations one client IP may make per window. Default: 10. Allowed range: 1..=1000.
    pub registration_rate_limit_max: u32,
    /// Window for `registration_rate_limit_max`, in seconds. Default: 3600. Allowed range:
    /// 1..=86400.
    pub registration_rate_limit_window_secs: u32,
    /// Days a person's login history (each sign-in attempt: time, address, browser, method,
    /// result) is kept; older records are deleted by the housekeeping every ten minutes.
    /// Default: 365. Allowed range: 1..=3650.
    pub login_history_retention_days: u32,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            argon2_memory_kib: 65536,
            argon2_iterations: 3,
            argon2_parallelism: 1,
            argon2_max_concurrent: 4,
            brute_force_max_attempts: 5,
            brute_force_lockout_secs: 900,
            password_verify_ip_max_attempts: 20,
            password_verify_ip_window_secs: 300,
            registration_rate_limit_max: 10,
            registration_rate_limit_window_secs: 3600,
            login_history_retention_days: 365,
        }
    }
}

/// Signing algorithm for access tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum JwtAlgorithm {
    /// ECDSA P-256 with SHA-256.
    #[default]
    #[serde(rename = "ES256")]
    Es256,
    /// Ed25519.
    #[serde(rename = "EdDSA")]
    EdDsa,
}

/// Token lifetimes and signing (spec "Limits"). Out-of-range values fail startup, and a refresh
/// lifetime must be at least the matching access lifetime.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct JwtConfig {
    /// Access-token signing algorithm: "ES256" or "EdDSA". Default: "ES256".
    pub default_algorithm: JwtAlgorithm,
    /// Access-token lifetime for people, in seconds. Default: 900. Allowed range: 60..=86400.
    pub access_token_lifetime_human_secs: u32,
    /// Access-token lifetime for machines (agent and system subjects, such as client_credentials
    /// tokens), in seconds. Default: 300. Allowed range: 60..=86400.
    pub access_token_lifetime_agent_secs: u32,
    /// Refresh-token lifetime for people, in seconds; at least the human access lifetime.
    /// Default: 604800. Allowed range: 3600..=7776000.
    pub refresh_token_lifetime_human_secs: u32,
    /// Idle limit of a person's refresh token, in seconds: a token unused this long is dead even
    /// while its family's absolute lifetime (`refresh_token_lifetime_human_secs`) runs; each
    /// rotation starts the idle period again. Default: 604800. Allowed range: 3600..=7776000.
    pub refresh_token_idle_secs: u32,
    /// ID-token lifetime, in seconds. Default: 300. Allowed range: 60..=3600.
    pub id_token_lifetime_secs: u32,
    /// Days between signing-key rotations. Default: 30. Allowed range: 1..=365.
    pub key_rotation_days: u32,
}

impl Default for JwtConfig {
    fn default() -> Self {
        Self {
            default_algorithm: JwtAlgorithm::Es256,
            access_token_lifetime_human_secs: 900,
            access_token_lifetime_agent_secs: 300,
            refresh_token_lifetime_human_secs: 604_800,
            refresh_token_idle_secs: 604_800,
            id_token_lifetime_secs: 300,
            key_rotation_days: 30,
        }
    }
}

/// OpenID Connect provider settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct OidcConfig {
    /// Issuer URL in single-tenant mode (absolute; https in production). Unset: each tenant's
    /// issuer is `{scheme}://{slug}.{server.base_domain}`. No default.
    #[schemars(example = &"https://auth.example.com")]
    pub issuer_url: Option<String>,
    /// Authorization-code lifetime in seconds. Default: 60. Allowed range: 10..=600.
    pub authorization_code_lifetime_secs: u32,
    /// Seconds an application read for client authentication is reused from memory. Changes
    /// made through this process apply at once; changes made by another instance within this
    /// time (a newly rotated secret works at once everywhere; a retired one may keep working
    /// on other instances until then). 0 reads the database every time. Default: 5. Allowed
    /// range: 0..=300.
    pub client_cache_secs: u32,
    /// Pushed authorization requests (RFC 9126): "enabled" serves `POST /oauth/par` and accepts
    /// its `request_uri`s at the authorization endpoint, beside plain requests (an application
    /// registered with `require_pushed_authorization_requests` must push); "required" refuses
    /// every plain authorization request; "disabled" serves no `/oauth/par` and advertises none.
    /// Default: "enabled".
    pub pushed_authorization_requests: PushedAuthorizationRequests,
    /// Signed request objects (RFC 9101): "enabled" accepts an authorization request as a JWT
    /// in the `request` parameter (at `/oauth/authorize` or pushed to `/oauth/par`), signed
    /// with a key the application registered (`jwks` or `jwks_uri`), beside plain requests;
    /// "required" refuses every unsigned authorization request; "disabled" answers
    /// `request_not_supported` and advertises none. Default: "enabled".
    pub request_objects: RequestObjectPolicy,
    /// Rich Authorization Requests (RFC 9396): `authorization_details` at the authorization
    /// endpoint (plain, pushed or signed), the token endpoint (code, refresh and client
    /// credentials grants), shown on the consent page, carried into access tokens, token
    /// responses and introspection. An application may request only the types it registered
    /// (`authorization_details_types`, each with a JSON Schema). Off: the parameter is refused
    /// and no application may register types. Default: false.
    pub authorization_details: bool,
}

impl Default for OidcConfig {
    fn default() -> Self {
        Self {
            issuer_url: None,
            authorization_code_lifetime_secs: 60,
            client_cache_secs: 5,
            pushed_authorization_requests: PushedAuthorizationRequests::Enabled,
            request_objects: RequestObjectPolicy::Enabled,
            authorization_details: false,
        }
    }
}

/// `[oidc].request_objects`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RequestObjectPolicy {
    /// Signed requests accepted beside plain ones.
    #[default]
    Enabled,
    /// Every authorization request must be signed.
    Required,
    /// No request objects.
    Disabled,
}

/// `[oidc].pushed_authorization_requests`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PushedAuthorizationRequests {
    /// `/oauth/par` served; plain requests accepted unless the application requires PAR.
    #[default]
    Enabled,
    /// Every authorization request must be pushed first.
    Required,
    /// No `/oauth/par`.
    Disabled,
}
