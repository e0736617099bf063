//! The client side of the SDK: what a Rust backend needs to sign people in with svc and to call
//! it, against one tenant's issuer.
//!
//! - [`OAuthClient::discover`] reads the issuer's OpenID Connect Discovery document and uses it
//!   only when it names that same issuer (Discovery 1.0 §4.3).
//! - The authorization code flow: [`OAuthClient::authorization_request`] builds the URL (PKCE
//!   S256, `state`, `nonce`) and the [`PendingAuthorization`] to keep;
//!   [`OAuthClient::handle_callback`] checks the callback (`state`, RFC 9207 `iss`), redeems the
//!   code and validates the ID token ([`id_token`] rules, nonce included).
//! - [`OAuthClient::refresh`], [`OAuthClient::client_credentials`] and a cached machine token
//!   that renews itself before it expires ([`TokenSource`]), [`OAuthClient::userinfo`] (checked
//!   against the ID token's `sub`), [`OAuthClient::end_session_url`] for RP-initiated logout.
//! - [`ManagementApi`]: the tenant's `/api/v1` with a [`TokenSource`], problems as typed errors.
//!
//! Clients authenticate with `client_secret_basic` when they have a secret (RFC 6749 §2.3.1,
//! with the form-encoding of id and secret the RFC requires) and as public clients (`client_id`
//! in the body) otherwise. Tokens, codes and secrets never appear in an error or a `Debug`
//! output. Time is a parameter of the `_at` variants; the others read the clock once.

mod authorization;
mod error;
pub mod id_token;
mod management;

pub use authorization::{PendingAuthorization, pkce_challenge};
pub use error::{ClientError, IdTokenError};
pub use id_token::IdTokenClaims;
pub use management::{ApplicationSummary, ManagementApi, NewTenantUser, TenantUser};

use crate::validator::Validator;
use error::network;
use jsonwebtoken::Algorithm;
use reqwest::Url;
use serde::Deserialize;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;

/// Largest answer read from svc, in bytes.
const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// Who this client is at svc.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientConfig {
    client_id: String,
    client_secret: Option<String>,
    redirect_uri: Option<String>,
    id_token_alg: Algorithm,
}

impl fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientConfig")
            .field("client_id", &self.client_id)
            .field("confidential", &self.client_secret.is_some())
            .field("redirect_uri", &self.redirect_uri)
            .field("id_token_alg", &self.id_token_alg)
            .finish()
    }
}

impl ClientConfig {
    /// A confidential client (`client_secret_basic`).
    pub fn confidential(client_id: &str, client_secret: &str) -> Self {
        Self {
            client_id: client_id.to_owned(),
            client_secret: Some(client_secret.to_owned()),
            redirect_uri: None,
            id_token_alg: Algorithm::RS256,
        }
    }

    /// A public client (no secret; PKCE protects its codes).
    pub fn public(client_id: &str) -> Self {
        Self {
            client_id: client_id.to_owned(),
            client_secret: None,
            redirect_uri: None,
            id_token_alg: Algorithm::RS256,
        }
    }

    /// The registered redirect URI the authorization code flow uses.
    #[must_use]
    pub fn with_redirect_uri(mut self, uri: &str) -> Self {
        self.redirect_uri = Some(uri.to_owned());
        self
    }

    /// The application's registered `id_token_signed_response_alg` (RS256, ES256 or EdDSA;
    /// default RS256, svc's default). ID tokens signed otherwise are refused.
    #[must_use]
    pub fn with_id_token_algorithm(mut self, alg: Algorithm) -> Self {
        self.id_token_alg = alg;
        self
    }

    /// The client id.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }
}

/// The endpoints and capabilities of the issuer, from its discovery document.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ProviderMetadata {
    /// The issuer, identical to the one configured.
    pub issuer: String,
    /// Where the browser goes.
    pub authorization_endpoint: String,
    /// Where codes, refresh tokens and client credentials are exchanged.
    pub token_endpoint: String,
    /// The issuer's keys.
    pub jwks_uri: String,
    /// UserInfo, when offered.
    #[serde(default)]
    pub userinfo_endpoint: Option<String>,
    /// RP-initiated logout, when enabled.
    #[serde(default)]
    pub end_session_endpoint: Option<String>,
    /// Token revocation (RFC 7009), when enabled.
    #[serde(default)]
    pub revocation_endpoint: Option<String>,
}

/// A token endpoint answer (RFC 6749 §5.1), with the ID token's checked claims.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenSet {
    /// The access token.
    pub access_token: String,
    /// `Bearer` (or `DPoP`).
    pub token_type: String,
    /// Lifetime of the access token in seconds, when given.
    pub expires_in: Option<u64>,
    /// The refresh token, when issued (`offline_access`).
    pub refresh_token: Option<String>,
    /// The granted scope, when given.
    pub scope: Option<String>,
    /// The ID token as issued, when present.
    pub id_token: Option<String>,
    /// The ID token's claims, validated.
    pub id_token_claims: Option<IdTokenClaims>,
}

impl fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSet")
            .field("token_type", &self.token_type)
            .field("expires_in", &self.expires_in)
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "…"))
            .field("scope", &self.scope)
            .field("id_token_claims", &self.id_token_claims)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct RawTokens {
    access_token: String,
    token_type: String,
    #[serde(default)]
    expires_in: Option<u64>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    id_token: Option<String>,
}

/// An OAuth 2.0 / OpenID Connect client of one svc issuer. Cheap to share (`Arc`).
pub struct OAuthClient {
    http: reqwest::Client,
    config: ClientConfig,
    metadata: ProviderMetadata,
    keys: Validator,
}

impl fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthClient")
            .field("config", &self.config)
            .field("issuer", &self.metadata.issuer)
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// Discovers `issuer` (e.g. `https://acme.id.example`) with an HTTP client of sane timeouts
    /// (5 s to connect, 10 s in all) that follows no redirects.
    pub async fn discover(issuer: &str, config: ClientConfig) -> Result<Self, ClientError> {
        let http = crate::validator::default_http_client().map_err(network)?;
        Self::discover_with(issuer, config, http).await
    }

    /// [`OAuthClient::discover`] with the caller's HTTP client (give it timeouts).
    pub async fn discover_with(
        issuer: &str,
        config: ClientConfig,
        http: reqwest::Client,
    ) -> Result<Self, ClientError> {
        let base = Url::parse(issuer).map_err(|_| ClientError::InvalidIssuer)?;
        if !matches!(base.scheme(), "https" | "http") {
            return Err(ClientError::InvalidIssuer);
        }
        let url = format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        );
        let response = http.get(&url).send().await.map_err(network)?;
        if !response.status().is_success() {
            return Err(ClientError::Discovery(format!(
                "{url} answered {}",
                response.status().as_u16()
            )));
        }
        let document = read_json(response).await?;
        let metadata: ProviderMetadata = serde_json::from_value(document)
            .map_err(|e| ClientError::Discovery(format!("{url}: {e}")))?;
        // Discovery 1.0 §4.3: a document naming another issuer MUST NOT be used.
        if metadata.issuer != issuer {
            return Err(ClientError::Discovery(format!(
                "{url} names another issuer"
            )));
        }
        let keys = Validator::with_http_client(issuer, http.clone());
        Ok(Self {
            http,
            config,
            metadata,
            keys,
        })
    }

    /// The issuer's metadata.
    pub fn metadata(&self) -> &ProviderMetadata {
        &self.metadata
    }

    /// The client's configuration.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The URL to send the browser to for `scope` (space-separated), with `extra` parameters
    /// (e.g. `organization`, `prompt`, `resource`), and what to keep until the callback.
    pub fn authorization_request(
        &self,
        scope: &str,
        extra: &[(&str, &str)],
    ) -> Result<(String, PendingAuthorization), ClientError> {
        let redirect_uri = self
            .config
            .redirect_uri
            .as_deref()
            .ok_or(ClientError::Configuration("a redirect_uri is required"))?;
        authorization::request(
            &self.metadata.authorization_endpoint,
            &self.config.client_id,
            redirect_uri,
            scope,
            extra,
        )
    }

    /// Checks the `callback` (its full URL or query) against `pending`, redeems the code and
    /// validates the ID token, at the current time.
    pub async fn handle_callback(
        &self,
        pending: &PendingAuthorization,
        callback: &str,
    ) -> Result<TokenSet, ClientError> {
        self.handle_callback_at(pending, callback, crate::validator::system_now_unix())
            .await
    }

    /// [`OAuthClient::handle_callback`] at `now_unix`.
    pub async fn handle_callback_at(
        &self,
        pending: &PendingAuthorization,
        callback: &str,
        now_unix: i64,
    ) -> Result<TokenSet, ClientError> {
        let code = authorization::code_from_callback(callback, pending, &self.metadata.issuer)?;
        let tokens = self
            .token(&[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", &pending.redirect_uri),
                ("code_verifier", &pending.code_verifier),
            ])
            .await?;
        match (&pending.nonce, tokens.id_token.as_deref()) {
            // An OpenID Connect request must come back with an ID token (Core §3.1.3.3).
            (Some(_), None) => Err(ClientError::InvalidResponse("no id_token")),
            (nonce, Some(id_token)) => {
                let claims = self
                    .validate_id_token_at(id_token, nonce.as_deref(), now_unix)
                    .await?;
                Ok(TokenSet {
                    id_token_claims: Some(claims),
                    ..tokens
                })
            }
            (None, None) => Ok(tokens),
        }
    }

    /// Redeems `refresh_token` (rotating: keep the new one), optionally narrowing `scope`. A new
    /// ID token, when issued, is validated (without a nonce: Core §12.2).
    pub async fn refresh(
        &self,
        refresh_token: &str,
        scope: Option<&str>,
    ) -> Result<TokenSet, ClientError> {
        let mut form = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
        ];
        if let Some(scope) = scope {
            form.push(("scope", scope));
        }
        let tokens = self.token(&form).await?;
        match tokens.id_token.as_deref() {
            Some(id_token) => {
                let claims = self.validate_id_token(id_token, None).await?;
                Ok(TokenSet {
                    id_token_claims: Some(claims),
                    ..tokens
                })
            }
            None => Ok(tokens),
        }
    }

    /// A machine token (`client_credentials`, confidential clients only) for `scope` and,
    /// optionally, the API `resource` (RFC 8707).
    pub async fn client_credentials(
        &self,
        scope: Option<&str>,
        resource: Option<&str>,
    ) -> Result<TokenSet, ClientError> {
        let mut form = vec![("grant_type", "client_credentials")];
        if let Some(scope) = scope {
            form.push(("scope", scope));
        }
        if let Some(resource) = resource {
            form.push(("resource", resource));
        }
        self.token(&form).await
    }

    /// The person's claims from UserInfo with `access_token`, refused when they describe
    /// another subject than `expected_sub` (the ID token's; Core §5.3.4).
    pub async fn userinfo(
        &self,
        access_token: &str,
        expected_sub: &str,
    ) -> Result<Value, ClientError> {
        let endpoint = self
            .metadata
            .userinfo_endpoint
            .as_deref()
            .ok_or(ClientError::Configuration("the issuer offers no UserInfo"))?;
        let response = self
            .http
            .get(endpoint)
            .bearer_auth(access_token)
            .send()
            .await
            .map_err(network)?;
        let status = response.status().as_u16();
        let body = read_json(response).await.unwrap_or(Value::Null);
        if status != 200 {
            return Err(refused("userinfo", status, &body));
        }
        if body.get("sub").and_then(Value::as_str) != Some(expected_sub) {
            return Err(ClientError::SubjectMismatch);
        }
        Ok(body)
    }

    /// The RP-initiated logout URL (OpenID Connect RP-Initiated Logout 1.0 §2).
    pub fn end_session_url(
        &self,
        id_token_hint: &str,
        post_logout_redirect_uri: Option<&str>,
        state: Option<&str>,
    ) -> Result<String, ClientError> {
        let endpoint =
            self.metadata
                .end_session_endpoint
                .as_deref()
                .ok_or(ClientError::Configuration(
                    "the issuer offers no end_session_endpoint",
                ))?;
        let mut url = Url::parse(endpoint)
            .map_err(|_| ClientError::InvalidResponse("end_session_endpoint is not a URL"))?;
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("id_token_hint", id_token_hint)
                .append_pair("client_id", &self.config.client_id);
            if let Some(uri) = post_logout_redirect_uri {
                query.append_pair("post_logout_redirect_uri", uri);
            }
            if let Some(state) = state {
                query.append_pair("state", state);
            }
        }
        Ok(url.into())
    }

    /// Validates an ID token issued to this client ([`id_token`] rules), at the current time.
    pub async fn validate_id_token(
        &self,
        token: &str,
        nonce: Option<&str>,
    ) -> Result<IdTokenClaims, ClientError> {
        self.validate_id_token_at(token, nonce, crate::validator::system_now_unix())
            .await
    }

    /// [`OAuthClient::validate_id_token`] at `now_unix`.
    pub async fn validate_id_token_at(
        &self,
        token: &str,
        nonce: Option<&str>,
        now_unix: i64,
    ) -> Result<IdTokenClaims, ClientError> {
        let expected = id_token::Expected {
            issuer: &self.metadata.issuer,
            client_id: &self.config.client_id,
            alg: self.config.id_token_alg,
            nonce,
            now_unix,
        };
        let kid = id_token::header(token, expected.alg)?;
        let jwks = self
            .keys
            .keys_for(&kid)
            .await
            .map_err(|_| IdTokenError::KeysUnavailable)?;
        Ok(id_token::verify(token, &kid, &jwks, &expected)?)
    }

    /// POSTs `form` to the token endpoint with this client's authentication.
    async fn token(&self, form: &[(&str, &str)]) -> Result<TokenSet, ClientError> {
        let mut request = self.http.post(&self.metadata.token_endpoint);
        let mut body: Vec<(&str, &str)> = form.to_vec();
        match &self.config.client_secret {
            // RFC 6749 §2.3.1: id and secret are form-encoded before the Basic encoding.
            Some(secret) => {
                request = request.basic_auth(
                    form_encode(&self.config.client_id),
                    Some(form_encode(secret)),
                );
            }
            None => body.push(("client_id", &self.config.client_id)),
        }
        let response = request.form(&body).send().await.map_err(network)?;
        let status = response.status().as_u16();
        let json = read_json(response).await.unwrap_or(Value::Null);
        if status != 200 {
            return Err(refused("token", status, &json));
        }
        let raw: RawTokens = serde_json::from_value(json)
            .map_err(|_| ClientError::InvalidResponse("not a token response (RFC 6749 §5.1)"))?;
        Ok(TokenSet {
            access_token: raw.access_token,
            token_type: raw.token_type,
            expires_in: raw.expires_in,
            refresh_token: raw.refresh_token,
            scope: raw.scope,
            id_token: raw.id_token,
            id_token_claims: None,
        })
    }
}

/// A machine access token from `client_credentials`, fetched on first use and again shortly
/// before it expires; concurrent callers share one fetch.
pub struct TokenSource {
    client: Arc<OAuthClient>,
    scope: Option<String>,
    resource: Option<String>,
    cached: Mutex<Option<(String, Instant)>>,
}

impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSource")
            .field("scope", &self.scope)
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

/// How long before its expiry a cached machine token is replaced.
pub const RENEW_BEFORE: Duration = Duration::from_secs(30);

impl TokenSource {
    /// Tokens of `client` for `scope` (all the client may have when `None`) and `resource`.
    pub fn new(client: Arc<OAuthClient>, scope: Option<&str>, resource: Option<&str>) -> Self {
        Self {
            client,
            scope: scope.map(str::to_owned),
            resource: resource.map(str::to_owned),
            cached: Mutex::new(None),
        }
    }

    /// A token valid for at least [`RENEW_BEFORE`] more (or a fresh one).
    pub async fn access_token(&self) -> Result<String, ClientError> {
        let mut cached = self.cached.lock().await;
        if let Some((token, renew_at)) = cached.as_ref()
            && Instant::now() < *renew_at
        {
            return Ok(token.clone());
        }
        let tokens = self
            .client
            .client_credentials(self.scope.as_deref(), self.resource.as_deref())
            .await?;
        let lifetime = Duration::from_secs(tokens.expires_in.unwrap_or(0));
        let renew_at = Instant::now() + lifetime.saturating_sub(RENEW_BEFORE);
        *cached = Some((tokens.access_token.clone(), renew_at));
        Ok(tokens.access_token)
    }

    /// Forgets the cached token (e.g. after the API refused it as revoked).
    pub async fn invalidate(&self) {
        *self.cached.lock().await = None;
    }

    /// The client the tokens come from.
    pub fn client(&self) -> &OAuthClient {
        &self.client
    }
}

/// `application/x-www-form-urlencoded` encoding of one value.
fn form_encode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// An OAuth error answer (RFC 6749 §5.2) as a [`ClientError::Refused`].
fn refused(endpoint: &'static str, status: u16, body: &Value) -> ClientError {
    let text = |name: &str| body.get(name).and_then(Value::as_str).map(str::to_owned);
    ClientError::Refused {
        endpoint,
        status,
        error: text("error").unwrap_or_else(|| "server_error".to_owned()),
        description: text("error_description"),
    }
}

/// Reads a JSON body of at most [`MAX_ANSWER_BYTES`].
async fn read_json(mut response: reqwest::Response) -> Result<Value, ClientError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(network)? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(ClientError::InvalidResponse("the answer is too large"));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|_| ClientError::InvalidResponse("not JSON"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_stay_out_of_debug_output() {
        let config =
            ClientConfig::confidential("app_1", "s3cr3t-value").with_redirect_uri("https://a/cb");
        assert!(!format!("{config:?}").contains("s3cr3t"));
        let tokens = TokenSet {
            access_token: "at-secret".into(),
            token_type: "Bearer".into(),
            expires_in: Some(300),
            refresh_token: Some("rt-secret".into()),
            scope: None,
            id_token: Some("idt-secret".into()),
            id_token_claims: None,
        };
        let shown = format!("{tokens:?}");
        assert!(!shown.contains("secret"), "{shown}");
    }

    #[test]
    fn basic_credentials_are_form_encoded_first() {
        // RFC 6749 §2.3.1: a secret with reserved characters.
        assert_eq!(form_encode("a b+c:d%"), "a+b%2Bc%3Ad%25");
    }

    #[test]
    fn oauth_errors_keep_their_code_and_description() {
        let body = serde_json::json!({"error": "invalid_grant", "error_description": "used"});
        assert_eq!(
            refused("token", 400, &body),
            ClientError::Refused {
                endpoint: "token",
                status: 400,
                error: "invalid_grant".into(),
                description: Some("used".into()),
            }
        );
        assert!(matches!(
            refused("token", 502, &Value::Null),
            ClientError::Refused { error, .. } if error == "server_error"
        ));
    }
}
