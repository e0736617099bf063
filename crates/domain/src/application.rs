//! Applications (OAuth clients) of a tenant, with the spec's "Application configuration values"
//! and the registration rules that are properties of the record itself.

use crate::{ClientId, RedirectUri, ScopeSet, SecretHash, SigningAlg, TenantId};
use std::fmt;
use time::OffsetDateTime;

/// The wire name of the device authorization grant (RFC 8628 §3.4).
pub const DEVICE_CODE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// The wire name of the CIBA grant (OpenID CIBA Core §10.1).
pub const CIBA_GRANT: &str = "urn:openid:params:grant-type:ciba";

/// The wire name of the token exchange grant (RFC 8693 §2.1).
pub const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";

/// An OAuth grant an application may use (RFC 6749 §4, RFC 8628, RFC 8693, CIBA).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GrantType {
    /// `authorization_code` (RFC 6749 §4.1).
    AuthorizationCode,
    /// `refresh_token` (RFC 6749 §6).
    RefreshToken,
    /// `client_credentials` (RFC 6749 §4.4): confidential clients only.
    ClientCredentials,
    /// `urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4).
    DeviceCode,
    /// `urn:openid:params:grant-type:ciba` (OpenID CIBA Core §10.1): poll mode, confidential
    /// clients only.
    Ciba,
    /// `urn:ietf:params:oauth:grant-type:token-exchange` (RFC 8693 §2.1): confidential clients
    /// only.
    TokenExchange,
}

impl GrantType {
    /// Wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AuthorizationCode => "authorization_code",
            Self::RefreshToken => "refresh_token",
            Self::ClientCredentials => "client_credentials",
            Self::DeviceCode => DEVICE_CODE_GRANT,
            Self::Ciba => CIBA_GRANT,
            Self::TokenExchange => TOKEN_EXCHANGE_GRANT,
        }
    }

    /// Parses a wire spelling this deployment knows.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "authorization_code" => Some(Self::AuthorizationCode),
            "refresh_token" => Some(Self::RefreshToken),
            "client_credentials" => Some(Self::ClientCredentials),
            DEVICE_CODE_GRANT => Some(Self::DeviceCode),
            CIBA_GRANT => Some(Self::Ciba),
            TOKEN_EXCHANGE_GRANT => Some(Self::TokenExchange),
            _ => None,
        }
    }
}

impl fmt::Display for GrantType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How an application authenticates at the token endpoint; the registered one must be used
/// exactly, never inferred (spec "Client authentication").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenEndpointAuthMethod {
    /// Public client: `client_id` only.
    None,
    /// HTTP Basic with client id and secret (RFC 6749 §2.3.1).
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the form body.
    ClientSecretPost,
    /// A signed JWT assertion (RFC 7523 §2.2, OIDC Core §9).
    PrivateKeyJwt,
}

impl TokenEndpointAuthMethod {
    /// Wire spelling (RFC 7591 §2).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
            Self::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// Parses a wire spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "none" => Some(Self::None),
            "client_secret_basic" => Some(Self::ClientSecretBasic),
            "client_secret_post" => Some(Self::ClientSecretPost),
            "private_key_jwt" => Some(Self::PrivateKeyJwt),
            _ => None,
        }
    }

    /// Whether the method authenticates with a shared secret.
    pub fn uses_secret(self) -> bool {
        matches!(self, Self::ClientSecretBasic | Self::ClientSecretPost)
    }

    /// Whether clients using it are confidential (RFC 6749 §2.1).
    pub fn is_confidential(self) -> bool {
        !matches!(self, Self::None)
    }
}

/// An application (OAuth client) of one tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Application {
    /// Also the OAuth `client_id`.
    pub id: ClientId,
    /// Owner.
    pub tenant_id: TenantId,
    /// Display name.
    pub name: String,
    /// Registered redirect URIs, matched exactly.
    pub redirect_uris: Vec<RedirectUri>,
    /// Registered `post_logout_redirect_uri`s (OpenID RP-Initiated Logout 1.0 §3), matched
    /// exactly like redirect URIs.
    pub post_logout_redirect_uris: Vec<RedirectUri>,
    /// Grants the application may use.
    pub grant_types: Vec<GrantType>,
    /// The registered client authentication method.
    pub token_endpoint_auth_method: TokenEndpointAuthMethod,
    /// Scopes it may be granted.
    pub allowed_scopes: ScopeSet,
    /// Hash of its secret (secret-based methods only).
    pub secret_hash: Option<SecretHash>,
    /// Audience of its access tokens; `None` means the tenant's management API (`{issuer}/api/v1`).
    pub api_audience: Option<String>,
    /// First-party applications skip consent.
    pub first_party: bool,
    /// Algorithm of its ID tokens (RS256 unless registered otherwise).
    pub id_token_signed_response_alg: SigningAlg,
    /// Inline public JWKS for `private_key_jwt` (JSON text).
    pub jwks: Option<String>,
    /// Where its public JWKS is published for `private_key_jwt`.
    pub jwks_uri: Option<String>,
    /// The tenant's management application, created with the tenant; it cannot be deleted.
    pub is_management: bool,
    /// The least assurance every authorization for it must reach: an `acr` of
    /// [`crate::ACR_LEVELS`] ([`crate::ACR_AAL1`] or [`crate::ACR_AAL2`], compared with
    /// [`crate::acr_rank`]); `None` demands nothing beyond the deployment's own policy.
    pub minimum_acr: Option<String>,
    /// Whether its sign-ins act in an organization.
    pub organization_usage: OrganizationUsage,
    /// RFC 9126 §6 `require_pushed_authorization_requests`: its authorization requests must
    /// come through `/oauth/par`; a plain one is refused.
    pub require_pushed_authorization_requests: bool,
    /// RFC 9449 §5.2 `dpop_bound_access_tokens`: it always gets DPoP-bound tokens, so a token
    /// request without a DPoP proof is refused.
    pub dpop_bound_access_tokens: bool,
    /// Where it hears of logouts (back- and front-channel).
    pub logout: crate::LogoutChannels,
    /// The RAR detail types (RFC 9396) the application may request, each with its schema; empty:
    /// `authorization_details` is refused for it.
    pub authorization_details_types: Vec<crate::DetailType>,
    /// Where the application's registration came from when it is a client ID metadata document
    /// (its `client_id` on the wire is then that URL); `None` for registered applications.
    pub metadata_document: Option<MetadataDocument>,
    /// Creation time.
    pub created_at: OffsetDateTime,
    /// Last change.
    pub updated_at: OffsetDateTime,
}

impl Application {
    /// Whether the application may use `grant`.
    pub fn allows_grant(&self, grant: GrantType) -> bool {
        self.grant_types.contains(&grant)
    }

    /// Whether it is a confidential client.
    pub fn is_confidential(&self) -> bool {
        self.token_endpoint_auth_method.is_confidential()
    }

    /// The `client_id` clients and resource servers see: the document's URL for a client
    /// identified by a metadata document, the record id otherwise. Tokens' `aud`/`client_id`
    /// and introspection use it; the stores key on [`Application::id`].
    pub fn wire_client_id(&self) -> &str {
        match &self.metadata_document {
            Some(document) => document.url.as_str(),
            None => self.id.as_str(),
        }
    }
}

/// The client ID metadata document an application was read from
/// (draft-ietf-oauth-client-id-metadata-document §4) and until when that reading stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataDocument {
    /// The URL that is the client's `client_id`.
    pub url: crate::ClientIdUrl,
    /// After this instant the document is fetched again before the application is used for a
    /// new authorization.
    pub fresh_until: OffsetDateTime,
}

/// Whether an application's sign-ins act in an organization (CONTRACTS.md "Organizations,
/// roles, keys, SCIM": chosen with the `organization` parameter or on the hosted picker).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum OrganizationUsage {
    /// A request may name an organization; without one the grant acts in none.
    #[default]
    Allow,
    /// Every grant acts in one: the request names it, or the person picks one of theirs on the
    /// hosted page (the only one is taken without asking); a person in none is refused.
    Require,
}

impl OrganizationUsage {
    /// Stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Require => "require",
        }
    }

    /// Parses the stored and wire spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "allow" => Some(Self::Allow),
            "require" => Some(Self::Require),
            _ => None,
        }
    }
}

/// A control-plane operator token's record; the token itself is shown once and never stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorToken {
    /// Public id.
    pub id: crate::OperatorTokenId,
    /// Who or what it is for.
    pub name: String,
    /// SHA-256 of the token.
    pub token_hash: SecretHash,
    /// Creation time.
    pub created_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_spellings_round_trip() {
        for grant in [
            GrantType::AuthorizationCode,
            GrantType::RefreshToken,
            GrantType::ClientCredentials,
            GrantType::DeviceCode,
            GrantType::Ciba,
            GrantType::TokenExchange,
        ] {
            assert_eq!(GrantType::parse(grant.as_str()), Some(grant));
        }
        assert_eq!(
            GrantType::parse("password"),
            None,
            "the resource-owner password grant is not offered (RFC 9700 §2.4)"
        );
        assert_eq!(
            GrantType::parse("implicit"),
            None,
            "the implicit grant is not offered (RFC 9700 §2.1.2)"
        );
        for method in [
            TokenEndpointAuthMethod::None,
            TokenEndpointAuthMethod::ClientSecretBasic,
            TokenEndpointAuthMethod::ClientSecretPost,
            TokenEndpointAuthMethod::PrivateKeyJwt,
        ] {
            assert_eq!(
                TokenEndpointAuthMethod::parse(method.as_str()),
                Some(method)
            );
        }
        assert!(!TokenEndpointAuthMethod::None.is_confidential());
        assert!(TokenEndpointAuthMethod::PrivateKeyJwt.is_confidential());
        assert!(!TokenEndpointAuthMethod::PrivateKeyJwt.uses_secret());
    }
}
