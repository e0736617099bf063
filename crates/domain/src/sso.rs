//! Enterprise single sign-on (issue 20 item 2): an organization's upstream OpenID provider (its
//! connection), a sign-in in flight to that provider (an attempt), the link between an upstream
//! subject and a person, what we read from the provider's discovery document, and the port
//! through which the runtime reaches the provider (SSRF-guarded, no redirects).
//!
//! A connection's client secret is kept only sealed (the runtime's data key, bound to the
//! tenant and organization); nothing here ever holds it in the clear.

use crate::{InteractionId, OrganizationId, SecretHash, TenantId, UserId};
use async_trait::async_trait;
use serde_json::Value;
use time::OffsetDateTime;

/// Where providers send people back, after the tenant's issuer.
pub const SSO_CALLBACK_PATH: &str = "/auth/sso/callback";

/// The redirect URI registered at providers for a tenant whose issuer is `issuer`.
#[must_use]
pub fn sso_redirect_uri(issuer: &str) -> String {
    format!("{}{SSO_CALLBACK_PATH}", issuer.trim_end_matches('/'))
}

/// Most scopes a connection asks the upstream for.
pub const MAX_SSO_SCOPES: usize = 16;
/// Longest issuer, endpoint or client id accepted, in bytes.
pub const MAX_SSO_URL_BYTES: usize = 2048;
/// Longest upstream client secret accepted, in bytes.
pub const MAX_SSO_SECRET_BYTES: usize = 512;
/// Longest upstream `sub` kept on a link (OpenID Connect Core §2: at most 255 ASCII characters).
pub const MAX_SSO_SUBJECT_BYTES: usize = 255;

/// An organization's upstream OpenID provider.
#[derive(Clone, PartialEq, Eq)]
pub struct SsoConnection {
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// The organization signing in through it (one connection per organization).
    pub organization_id: OrganizationId,
    /// The provider's endpoints, read from its discovery document when configured.
    pub provider: UpstreamMetadata,
    /// Our client id at the provider.
    pub client_id: String,
    /// How we authenticate at its token endpoint.
    pub client_auth: SsoClientAuth,
    /// Scopes asked for; always includes `openid`.
    pub scopes: Vec<String>,
    /// Password sign-in is refused for addresses at the organization's verified domains.
    pub enforced: bool,
    /// When configured first.
    pub created_at: OffsetDateTime,
    /// When last changed.
    pub updated_at: OffsetDateTime,
}

impl std::fmt::Debug for SsoConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SsoConnection")
            .field("tenant_id", &self.tenant_id)
            .field("organization_id", &self.organization_id)
            .field("issuer", &self.provider.issuer)
            .field("client_id", &self.client_id)
            .field("client_auth", &self.client_auth.method())
            .field("enforced", &self.enforced)
            .finish_non_exhaustive()
    }
}

/// How we authenticate at a provider's token endpoint (OpenID Connect Core §9).
#[derive(Clone, PartialEq, Eq)]
pub enum SsoClientAuth {
    /// `client_secret_basic`: our client secret, kept sealed.
    SecretBasic {
        /// The sealed secret.
        sealed_secret: Vec<u8>,
    },
    /// `private_key_jwt` (RFC 7523 §2.2): an assertion signed with the tenant's own signing
    /// key, which the provider reads from the tenant's published key set. No secret exists.
    PrivateKeyJwt,
}

impl SsoClientAuth {
    /// `client_secret_basic`.
    pub const SECRET_BASIC: &'static str = "client_secret_basic";
    /// `private_key_jwt`.
    pub const PRIVATE_KEY_JWT: &'static str = "private_key_jwt";

    /// The method's registered name (RFC 7591 §2).
    #[must_use]
    pub fn method(&self) -> &'static str {
        match self {
            Self::SecretBasic { .. } => Self::SECRET_BASIC,
            Self::PrivateKeyJwt => Self::PRIVATE_KEY_JWT,
        }
    }
}

impl std::fmt::Debug for SsoClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.method())
    }
}

/// A sign-in sent to an upstream provider and not yet back: found again by the hash of the
/// browser's cookie, single use, short-lived. The state, nonce and PKCE verifier derive from
/// the cookie value (which only the browser holds), so nothing secret is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SsoAttempt {
    /// Hash of the cookie value.
    pub hash: SecretHash,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// The organization whose provider was asked.
    pub organization_id: OrganizationId,
    /// The authorization request to continue afterwards, if any.
    pub interaction_id: Option<InteractionId>,
    /// When it started.
    pub created_at: OffsetDateTime,
    /// After this the browser must start again.
    pub expires_at: OffsetDateTime,
    /// Set when the callback spent it (right or wrong).
    pub used_at: Option<OffsetDateTime>,
}

/// An upstream subject known as a person of the tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SsoLink {
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// The organization whose provider asserted the subject.
    pub organization_id: OrganizationId,
    /// The provider's `sub`.
    pub subject: String,
    /// The person.
    pub user_id: UserId,
    /// When linked.
    pub created_at: OffsetDateTime,
}

/// What we use of an OpenID provider's metadata (OpenID Connect Discovery 1.0 §3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamMetadata {
    /// The issuer, exactly as configured and as the document states it (§4.3).
    pub issuer: String,
    /// Where browsers are sent.
    pub authorization_endpoint: String,
    /// Where codes are redeemed.
    pub token_endpoint: String,
    /// The provider's signing keys.
    pub jwks_uri: String,
    /// Where the person's claims are read when the ID token does not carry them (OpenID
    /// Connect Core §5.4: with the code flow, a provider may return them only here).
    pub userinfo_endpoint: Option<String>,
    /// RFC 9207: the provider puts `iss` in authorization responses, so a response without
    /// it (or with another) is a mix-up.
    pub iss_parameter: bool,
}

impl UpstreamMetadata {
    /// The discovery document's URL for `issuer` (§4: path appended after the issuer's).
    #[must_use]
    pub fn discovery_url(issuer: &str) -> String {
        format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        )
    }

    /// Reads a discovery document fetched for `issuer`.
    ///
    /// # Errors
    /// A sentence fit for an API error: not JSON, another `issuer` (§4.3, the mix-up defence
    /// at configuration time), a missing endpoint, an endpoint that is not an absolute
    /// http(s) URL, or no `code` response type.
    pub fn from_document(issuer: &str, body: &[u8]) -> Result<Self, String> {
        let document: Value = serde_json::from_slice(body)
            .map_err(|_| "the discovery document is not JSON".to_owned())?;
        let text = |name: &str| -> Result<String, String> {
            let value = document
                .get(name)
                .and_then(Value::as_str)
                .ok_or_else(|| format!("the discovery document has no {name}"))?;
            if value.len() > MAX_SSO_URL_BYTES {
                return Err(format!("the discovery document's {name} is too long"));
            }
            Ok(value.to_owned())
        };
        let stated = text("issuer")?;
        if stated != issuer {
            return Err(format!(
                "the discovery document names issuer {stated:?}, not {issuer:?}"
            ));
        }
        let endpoint = |name: &str| -> Result<String, String> {
            let value = text(name)?;
            match url::Url::parse(&value) {
                Ok(url) if matches!(url.scheme(), "https" | "http") && url.fragment().is_none() => {
                    Ok(value)
                }
                _ => Err(format!(
                    "the discovery document's {name} is not an http(s) URL"
                )),
            }
        };
        if let Some(types) = document
            .get("response_types_supported")
            .and_then(Value::as_array)
            && !types.iter().any(|t| t.as_str() == Some("code"))
        {
            return Err("the provider does not offer the code flow".to_owned());
        }
        Ok(Self {
            issuer: stated,
            authorization_endpoint: endpoint("authorization_endpoint")?,
            token_endpoint: endpoint("token_endpoint")?,
            jwks_uri: endpoint("jwks_uri")?,
            userinfo_endpoint: match document.get("userinfo_endpoint") {
                None | Some(Value::Null) => None,
                Some(_) => Some(endpoint("userinfo_endpoint")?),
            },
            iss_parameter: document
                .get("authorization_response_iss_parameter_supported")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }
}

/// Signs client assertions (RFC 7523) with a tenant's current signing key, the one its
/// published key set (`/.well-known/jwks.json`) lets a provider check.
#[async_trait]
pub trait AssertionSigner: Send + Sync {
    /// `claims` signed as a JWT by `tenant`'s key; the error is for logs.
    async fn sign(&self, tenant: &TenantId, claims: &Value) -> Result<String, String>;
}

/// What an upstream answered over HTTP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressAnswer {
    /// The status code.
    pub status: u16,
    /// The body, bounded by the port.
    pub body: Vec<u8>,
}

/// How the engines reach upstream providers: the runtime's SSRF-guarded client (no redirects,
/// a timeout, bounded bodies). Errors are short sentences without secrets.
#[async_trait]
pub trait SsoEgress: Send + Sync {
    /// GETs a JSON document (discovery, key set), with `bearer` as the access token when
    /// given (UserInfo); a non-200 answer is an error.
    async fn get(
        &self,
        url: &str,
        what: &'static str,
        bearer: Option<&str>,
    ) -> Result<Vec<u8>, String>;

    /// POSTs a form, with HTTP Basic client authentication when `basic` is given (RFC 6749
    /// §2.3.1: both halves form-urlencoded first); any status is an answer.
    async fn post_form(
        &self,
        url: &str,
        form: &[(&str, &str)],
        basic: Option<(&str, &str)>,
    ) -> Result<EgressAnswer, String>;

    /// Fetches and reads `issuer`'s discovery document.
    async fn discover(&self, issuer: &str) -> Result<UpstreamMetadata, String> {
        let body = self
            .get(
                &UpstreamMetadata::discovery_url(issuer),
                "discovery document",
                None,
            )
            .await?;
        UpstreamMetadata::from_document(issuer, &body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(v: serde_json::Value) -> Vec<u8> {
        serde_json::to_vec(&v).unwrap()
    }

    #[test]
    fn discovery_documents_must_name_the_issuer_asked_for_and_offer_code() {
        let good = serde_json::json!({
            "issuer": "https://idp.example.com",
            "authorization_endpoint": "https://idp.example.com/authorize",
            "token_endpoint": "https://idp.example.com/token",
            "jwks_uri": "https://idp.example.com/jwks",
            "response_types_supported": ["code", "id_token"],
            "authorization_response_iss_parameter_supported": true,
        });
        let read =
            UpstreamMetadata::from_document("https://idp.example.com", &doc(good.clone())).unwrap();
        assert!(read.iss_parameter);
        assert_eq!(read.token_endpoint, "https://idp.example.com/token");
        assert_eq!(
            UpstreamMetadata::discovery_url("https://idp.example.com/"),
            "https://idp.example.com/.well-known/openid-configuration"
        );
        // Another issuer (a trailing slash counts), a missing endpoint, a non-URL, no code.
        let err = UpstreamMetadata::from_document("https://idp.example.com/", &doc(good.clone()))
            .unwrap_err();
        assert!(err.contains("names issuer"), "{err}");
        let mut missing = good.clone();
        missing.as_object_mut().unwrap().remove("jwks_uri");
        assert!(
            UpstreamMetadata::from_document("https://idp.example.com", &doc(missing))
                .unwrap_err()
                .contains("jwks_uri")
        );
        let mut bad = good.clone();
        bad["token_endpoint"] = "javascript:alert(1)".into();
        assert!(
            UpstreamMetadata::from_document("https://idp.example.com", &doc(bad))
                .unwrap_err()
                .contains("token_endpoint")
        );
        let mut implicit = good;
        implicit["response_types_supported"] = serde_json::json!(["id_token"]);
        assert!(
            UpstreamMetadata::from_document("https://idp.example.com", &doc(implicit)).is_err()
        );
        assert!(UpstreamMetadata::from_document("https://idp.example.com", b"<html>").is_err());
    }
}
