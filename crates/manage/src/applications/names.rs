//! The closed sets of values some application fields take, as OpenAPI schemas only: the fields
//! stay strings (parsed by the registration rules, which name the offending field), but the
//! document tells clients and test generators which values exist.

use utoipa::ToSchema;

/// A grant an application may use.
#[derive(ToSchema)]
#[schema(as = ApplicationGrantType)]
#[expect(
    dead_code,
    reason = "a schema only: the wire value is a checked string"
)]
pub(crate) enum GrantTypeName {
    /// `authorization_code` (RFC 6749 §4.1); needs a redirect URI.
    #[schema(rename = "authorization_code")]
    AuthorizationCode,
    /// `refresh_token` (RFC 6749 §6); needs `authorization_code` or the device grant.
    #[schema(rename = "refresh_token")]
    RefreshToken,
    /// `client_credentials` (RFC 6749 §4.4); confidential clients only.
    #[schema(rename = "client_credentials")]
    ClientCredentials,
    /// The device authorization grant (RFC 8628): `/oauth/device/code`, approved by a person
    /// on another device, polled at the token endpoint.
    #[schema(rename = "urn:ietf:params:oauth:grant-type:device_code")]
    DeviceCode,
    /// Client-initiated backchannel authentication (OpenID CIBA, poll mode): `/bc-authorize`,
    /// approved by the person on the hosted page; confidential clients only.
    #[schema(rename = "urn:openid:params:grant-type:ciba")]
    Ciba,
    /// Token exchange (RFC 8693): a token of someone else, exchanged for one the application
    /// uses for them, with an `act` chain naming it; confidential clients only.
    #[schema(rename = "urn:ietf:params:oauth:grant-type:token-exchange")]
    TokenExchange,
}

/// How an application authenticates at the token endpoint (RFC 7591 §2).
#[derive(ToSchema)]
#[schema(as = ApplicationAuthMethod)]
#[expect(
    dead_code,
    reason = "a schema only: the wire value is a checked string"
)]
pub(crate) enum AuthMethodName {
    /// A public client: no authentication.
    #[schema(rename = "none")]
    None,
    /// Client id and secret in HTTP Basic (RFC 6749 §2.3.1).
    #[schema(rename = "client_secret_basic")]
    ClientSecretBasic,
    /// Client id and secret in the form body (RFC 6749 §2.3.1).
    #[schema(rename = "client_secret_post")]
    ClientSecretPost,
    /// A JWT signed with the application's key (RFC 7523).
    #[schema(rename = "private_key_jwt")]
    PrivateKeyJwt,
}

/// An assurance level an application may demand of every authorization (`acr`).
#[derive(ToSchema)]
#[schema(as = ApplicationMinimumAcr)]
#[expect(
    dead_code,
    reason = "a schema only: the wire value is a checked string"
)]
pub(crate) enum AcrName {
    /// One factor (NIST SP 800-63B AAL1): a password.
    #[schema(rename = "urn:svc:aal1")]
    Aal1,
    /// Two factors (AAL2): a password and a one-time code.
    #[schema(rename = "urn:svc:aal2")]
    Aal2,
}

/// Whether an application's sign-ins act in an organization.
#[derive(ToSchema)]
#[schema(as = OrganizationUsage)]
#[expect(
    dead_code,
    reason = "a schema only: the wire value is a checked string"
)]
pub(crate) enum OrganizationUsageName {
    /// A request may name an organization (`organization`); without one it acts in none.
    #[schema(rename = "allow")]
    Allow,
    /// Every sign-in acts in one: named by the request, or picked on the hosted page.
    #[schema(rename = "require")]
    Require,
}

/// How ID tokens issued to an application are signed.
#[derive(ToSchema)]
#[schema(as = ApplicationSigningAlg)]
#[expect(
    dead_code,
    reason = "a schema only: the wire value is a checked string"
)]
pub(crate) enum SigningAlgName {
    /// RSASSA-PKCS1-v1_5 with SHA-256 (the default).
    #[schema(rename = "RS256")]
    Rs256,
    /// ECDSA P-256 with SHA-256.
    #[schema(rename = "ES256")]
    Es256,
    /// Ed25519.
    #[schema(rename = "EdDSA")]
    EdDsa,
}
