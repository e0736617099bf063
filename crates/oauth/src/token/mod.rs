//! The token endpoint (RFC 6749 §3.2), free of HTTP types: the HTTP layer hands over the
//! decoded form pairs and the `Authorization` header, and renders the [`TokenResponse`] or the
//! [`OAuthError`].
//!
//! The dispatcher is an ordered list:
//! 1. parse the request ([`request`]): repeats, `grant_type`, one authentication mechanism;
//! 2. authenticate the client by its registered method ([`crate::client_auth`]);
//! 3. check the (known) grant is allowed on the application (`unauthorized_client`);
//! 4. run the grant ([`crate::grants`]);
//! 5. issue the token ([`issue`]).
//!
//! `authorization_code` and `refresh_token` run in [`human`], one write transaction each.

mod human;
pub mod issue;
pub mod request;

pub use issue::{
    ACCESS_TOKEN_TYP, AccessTokenIssuer, AccessTokenStamp, IssuedAccessToken, NewAccessToken,
    SubjectType, TOKEN_TYPE_BEARER, TokenResponse, TokenSettings,
};
pub use request::{ClientCredentials, Credential, JWT_BEARER_ASSERTION_TYPE, TokenRequest};

use crate::client_auth::{self, AuthenticatedClient, ClientAuthContext, JwksFetcher};
use crate::error::OAuthError;
use crate::grants::client_credentials::client_credentials;
use crate::keys::KeyService;
use std::sync::Arc;
use svc_domain::{Clock, GrantType, Rng, Tenant};
use svc_store::Store;

/// The client a token request claims to come from, for per-client rate limiting only (never
/// validated; see [`request::client_id_hint`]).
pub fn client_id_hint(form: &[(String, String)], authorization: Option<&str>) -> Option<String> {
    request::client_id_hint(form, authorization)
}

/// The token endpoint of every tenant.
pub struct TokenEndpoint {
    store: Arc<dyn Store>,
    keys: Arc<KeyService>,
    clock: Arc<dyn Clock>,
    rng: Arc<dyn Rng>,
    settings: TokenSettings,
    jwks_fetcher: Option<Arc<dyn JwksFetcher>>,
    clients: Option<Arc<crate::client_auth::ClientCache>>,
}

impl TokenEndpoint {
    /// A token endpoint without `jwks_uri` support (see [`TokenEndpoint::with_jwks_fetcher`]).
    pub fn new(
        store: Arc<dyn Store>,
        keys: Arc<KeyService>,
        clock: Arc<dyn Clock>,
        rng: Arc<dyn Rng>,
        settings: TokenSettings,
    ) -> Self {
        Self {
            store,
            keys,
            clock,
            rng,
            settings,
            jwks_fetcher: None,
            clients: None,
        }
    }

    /// Lets `private_key_jwt` clients register a `jwks_uri`, fetched through `fetcher`.
    pub fn with_jwks_fetcher(mut self, fetcher: Arc<dyn JwksFetcher>) -> Self {
        self.jwks_fetcher = Some(fetcher);
        self
    }

    /// Reads applications through `cache` (see [`crate::client_auth::ClientCache`]).
    #[must_use]
    pub fn with_client_cache(mut self, cache: Arc<crate::client_auth::ClientCache>) -> Self {
        self.clients = Some(cache);
        self
    }

    /// The lifetimes in force.
    pub fn settings(&self) -> &TokenSettings {
        &self.settings
    }

    /// Handles one token request for `tenant`, whose issuer is `issuer`.
    pub async fn handle(
        &self,
        tenant: &Tenant,
        issuer: &str,
        form: &[(String, String)],
        authorization: Option<&str>,
    ) -> Result<TokenResponse, OAuthError> {
        // 1.
        let request = TokenRequest::parse(form, authorization)?;
        // 2.
        let ctx = ClientAuthContext {
            store: self.store.as_ref(),
            clock: self.clock.as_ref(),
            tenant: &tenant.id,
            issuer,
            jwks_fetcher: self.jwks_fetcher.as_deref(),
            clients: self.clients.as_deref(),
        };
        let client = client_auth::authenticate(&ctx, request.client()).await?;
        // 3.
        grant_allowed(&client, request.grant_type())?;
        // 4–5.
        match request.grant_type() {
            GrantType::ClientCredentials => {
                self.client_credentials(tenant, issuer, &client, &request)
                    .await
            }
            GrantType::AuthorizationCode => {
                self.authorization_code(tenant, issuer, &client, &request)
                    .await
            }
            GrantType::RefreshToken => self.refresh_token(tenant, issuer, &client, &request).await,
        }
    }

    async fn client_credentials(
        &self,
        tenant: &Tenant,
        issuer: &str,
        client: &AuthenticatedClient,
        request: &TokenRequest,
    ) -> Result<TokenResponse, OAuthError> {
        let app = &client.application;
        let grant = client_credentials(app, issuer, request)?;
        let access = self
            .issuer()
            .issue(
                &tenant.id,
                issuer,
                &NewAccessToken {
                    // A system principal: the application is its own subject.
                    subject: app.id.as_str(),
                    subject_type: SubjectType::System,
                    client_id: &app.id,
                    audience: &grant.audience,
                    scope: &grant.scope,
                },
            )
            .await?;
        tracing::info!(
            tenant = %tenant.id,
            client_id = %app.id,
            grant_type = "client_credentials",
            jti = %access.jti,
            scope = %grant.scope,
            "access token issued"
        );
        // RFC 6749 §4.4.3: "A refresh token SHOULD NOT be included"; the spec says never.
        Ok(TokenResponse::bearer(access, &grant.scope))
    }

    fn issuer(&self) -> AccessTokenIssuer<'_> {
        AccessTokenIssuer {
            keys: &self.keys,
            clock: self.clock.as_ref(),
            rng: self.rng.as_ref(),
            settings: &self.settings,
        }
    }
}

/// Step 3: spec "Every grant must be allowed on the application"; a known grant the client may
/// not use is `unauthorized_client` (spec "Token endpoint errors", RFC 6749 §5.2).
fn grant_allowed(client: &AuthenticatedClient, grant: GrantType) -> Result<(), OAuthError> {
    if client.application.allows_grant(grant) {
        Ok(())
    } else {
        Err(OAuthError::unauthorized_client(format!(
            "this client may not use the {grant} grant"
        )))
    }
}

#[cfg(test)]
mod tests;
