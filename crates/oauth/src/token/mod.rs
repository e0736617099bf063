//! The token endpoint (RFC 6749 §3.2), free of HTTP types: the HTTP layer hands over the
//! decoded form pairs and the `Authorization` header, and renders the [`TokenResponse`] or the
//! [`OAuthError`].
//!
//! The dispatcher is an ordered list:
//! 1. parse the request ([`request`]): repeats, `grant_type`, one authentication mechanism;
//!    then check the DPoP proof, if any ([`crate::dpop`]): every grant then binds its tokens;
//! 2. authenticate the client by its registered method ([`crate::client_auth`]), and only
//!    then record the proof's `jti` as used;
//! 3. check the (known) grant is allowed on the application (`unauthorized_client`), and that
//!    an application registered with `dpop_bound_access_tokens` sent a proof;
//! 4. run the grant ([`crate::grants`]);
//! 5. issue the token ([`issue`]).
//!
//! Token exchange (RFC 8693) runs in [`exchange`], on the rules of
//! [`crate::grants::token_exchange`].
//!
//! The agent grant ([`agent`], `[challenge]`) has no client to authenticate: an agent proves
//! itself with a signed answer to a challenge, so it leaves the list before step 1's client
//! parsing and runs its own ordered checks; so does an agent's CIBA poll for a use of a
//! delegation its person approves each time ([`agent_use`]).
//!
//! `authorization_code` and `refresh_token` run in [`human`], one write transaction each; the
//! polls of the device and CIBA grants ([`polled`]) end in the same redemption as
//! `authorization_code`.

pub mod agent;
mod agent_use;
mod exchange;
mod human;
pub mod issue;
mod polled;

use polled::PolledGrant;
pub mod request;

pub use issue::{
    ACCESS_TOKEN_TYP, AccessTokenIssuer, AccessTokenStamp, IssuedAccessToken, NewAccessToken,
    OrgClaims, SubjectType, TOKEN_TYPE_BEARER, TokenResponse, TokenSettings, token_type,
};
pub use request::{ClientCredentials, Credential, JWT_BEARER_ASSERTION_TYPE, TokenRequest};

use crate::client_auth::{self, AuthenticatedClient};
use crate::context::ProtocolContext;
use crate::error::OAuthError;
use crate::grants::client_credentials::{client_credentials, for_api, names_other_api};
use std::collections::BTreeSet;
use svc_domain::{ApiResource, Application, GrantType, PermissionName, Tenant};

/// The client a token request claims to come from, for per-client rate limiting only (never
/// validated; see [`request::client_id_hint`]).
pub fn client_id_hint(form: &[(String, String)], authorization: Option<&str>) -> Option<String> {
    request::client_id_hint(form, authorization)
}

/// One token request as the HTTP layer received it.
pub struct TokenCall<'a> {
    /// The host's tenant.
    pub tenant: &'a Tenant,
    /// Its issuer.
    pub issuer: &'a str,
    /// The form pairs, in order, repeats kept.
    pub form: &'a [(String, String)],
    /// The `Authorization` header.
    pub authorization: Option<&'a str>,
    /// The client address the HTTP layer saw.
    pub peer: Option<std::net::IpAddr>,
    /// The `DPoP` header (RFC 9449 §4.1), or why it could not be read.
    pub dpop: crate::dpop::ProofHeader<'a>,
}

/// The token endpoint of every tenant.
pub struct TokenEndpoint {
    ctx: ProtocolContext,
    settings: TokenSettings,
}

impl TokenEndpoint {
    /// A token endpoint over `ctx` issuing tokens with the lifetimes of `settings`; `jwks_uri`
    /// support and the application cache come with `ctx`.
    pub fn new(ctx: ProtocolContext, settings: TokenSettings) -> Self {
        Self { ctx, settings }
    }

    /// The lifetimes in force.
    pub fn settings(&self) -> &TokenSettings {
        &self.settings
    }

    /// The DPoP nonce (RFC 9449 §8) clients of `tenant` must use now, when nonces are required.
    pub fn dpop_nonce(&self, tenant: &Tenant) -> Option<String> {
        self.ctx.dpop().and_then(|d| d.current_nonce(tenant))
    }

    /// Handles one token request for `tenant`, whose issuer is `issuer`, from an address
    /// nobody could tell (an access policy naming networks refuses a public client's grant).
    pub async fn handle(
        &self,
        tenant: &Tenant,
        issuer: &str,
        form: &[(String, String)],
        authorization: Option<&str>,
    ) -> Result<TokenResponse, OAuthError> {
        self.handle_from(tenant, issuer, form, authorization, None)
            .await
    }

    /// [`Self::handle`] for a request from `peer` (the client address the HTTP layer saw).
    pub async fn handle_from(
        &self,
        tenant: &Tenant,
        issuer: &str,
        form: &[(String, String)],
        authorization: Option<&str>,
        peer: Option<std::net::IpAddr>,
    ) -> Result<TokenResponse, OAuthError> {
        self.handle_call(&TokenCall {
            tenant,
            issuer,
            form,
            authorization,
            peer,
            dpop: Ok(None),
        })
        .await
    }

    /// Handles one token request as the HTTP layer received it, `DPoP` header included.
    pub async fn handle_call(&self, call: &TokenCall<'_>) -> Result<TokenResponse, OAuthError> {
        let (tenant, issuer) = (call.tenant, call.issuer);
        if self.settings.agent_assertions && agent::is_agent_grant(call.form) {
            return self.agent_assertion(call).await;
        }
        if self.settings.agent_assertions
            && self.settings.serves(GrantType::Ciba)
            && let Some(assertion) = agent_use::agent_poll(call.form)
        {
            return self.agent_poll(call, assertion).await;
        }
        // 1.
        let request = TokenRequest::parse(call.form, call.authorization)?.from_peer(call.peer);
        if !self.settings.serves(request.grant_type()) {
            return Err(OAuthError::unsupported_grant_type(format!(
                "the {} grant is not enabled on this deployment",
                request.grant_type()
            )));
        }
        // 1, continued. RFC 9449 §5: the proof is for this endpoint, whatever the grant.
        let checked = self.check_proof(call)?;
        // 2.
        let auth = self.ctx.client_auth(&tenant.id, issuer);
        let client = client_auth::authenticate(&auth, request.client()).await?;
        // 1, end: the proof's `jti` is spent only by an authenticated client.
        let proof = self.record_proof(tenant, checked).await?;
        let request = request.with_proof(proof);
        // 3.
        grant_allowed(&client, request.grant_type())?;
        proof_required(&client, &request)?;
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
            GrantType::DeviceCode => {
                self.polled(tenant, issuer, &client, &request, PolledGrant::Device)
                    .await
            }
            GrantType::Ciba => {
                self.polled(tenant, issuer, &client, &request, PolledGrant::Backchannel)
                    .await
            }
            GrantType::TokenExchange => {
                self.token_exchange(tenant, issuer, &client, &request).await
            }
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
        let grant = match self.machine_access(tenant, issuer, app, request).await? {
            Some((api, held)) => for_api(app, request, &api, &held)?,
            None => client_credentials(app, issuer, request)?,
        };
        let details = crate::details::direct(
            app,
            request.param("authorization_details"),
            self.ctx.authorization_details(),
        )?;
        let access = self
            .issuer()
            .issue(
                &tenant.id,
                issuer,
                &NewAccessToken {
                    // A system principal: the application is its own subject.
                    subject: app.id.as_str(),
                    subject_type: SubjectType::System,
                    client_id: app.id.as_str(),
                    audience: &grant.audience,
                    scope: &grant.scope,
                    // Nobody signed in: no authentication to repeat.
                    authentication: None,
                    organization: None,
                    confirmation: request.proof_jkt(),
                    actor: None,
                    not_after: None,
                    details: details.as_ref(),
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
        Ok(TokenResponse {
            authorization_details: details.map(|d| d.to_value()),
            ..TokenResponse::access_only(access, &grant.scope, request.proof().is_some())
        })
    }

    /// The API resource a client_credentials request names, other than the application's own
    /// audience, with the permissions of it the application's roles hold; `None` when it names
    /// no registered API (the grant's check 4 then answers).
    async fn machine_access(
        &self,
        tenant: &Tenant,
        issuer: &str,
        app: &Application,
        request: &TokenRequest,
    ) -> Result<Option<(ApiResource, BTreeSet<PermissionName>)>, OAuthError> {
        let Some(named) = names_other_api(app, issuer, request) else {
            return Ok(None);
        };
        let mut tx = self.ctx.store.read().await?;
        let Some(api) = tx.api_resource_by_identifier(&tenant.id, named).await? else {
            tx.finish().await?;
            return Ok(None);
        };
        let held =
            crate::resources::application_permissions(tx.as_mut(), &tenant.id, &app.id, &api.id)
                .await?;
        tx.finish().await?;
        Ok(Some((api, held)))
    }

    /// RFC 9449 §4.3 steps 1–4 for the call's `DPoP` header at this endpoint, whatever the
    /// grant: the checked proof, not yet recorded (`None` without a header or with DPoP off).
    fn check_proof(
        &self,
        call: &TokenCall<'_>,
    ) -> Result<Option<crate::dpop::CheckedProof>, OAuthError> {
        match self.ctx.dpop() {
            Some(dpop) => {
                let url = crate::discovery::token_endpoint(call.issuer);
                dpop.check(call.tenant, call.dpop.clone(), "POST", &url, None)
            }
            None => Ok(None),
        }
    }

    /// Step 5: spends the proof's `jti` once whoever presents it is authenticated; the proof
    /// tokens are bound to.
    async fn record_proof(
        &self,
        tenant: &Tenant,
        checked: Option<crate::dpop::CheckedProof>,
    ) -> Result<Option<crate::dpop::Proof>, OAuthError> {
        match (self.ctx.dpop(), checked) {
            (Some(dpop), Some(checked)) => Ok(Some(dpop.record(tenant, checked).await?)),
            _ => Ok(None),
        }
    }

    fn issuer(&self) -> AccessTokenIssuer<'_> {
        AccessTokenIssuer {
            keys: &self.ctx.keys,
            clock: self.ctx.clock.as_ref(),
            rng: self.ctx.rng.as_ref(),
            settings: &self.settings,
        }
    }
}

/// Step 3, RFC 9449 §5.2: an application registered with `dpop_bound_access_tokens` gets
/// bound tokens only, so a request without a proof is refused.
fn proof_required(client: &AuthenticatedClient, request: &TokenRequest) -> Result<(), OAuthError> {
    if client.application.dpop_bound_access_tokens && request.proof().is_none() {
        Err(OAuthError::new(
            crate::error::ErrorCode::InvalidDpopProof,
            "this application must send a DPoP proof with every token request",
        ))
    } else {
        Ok(())
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
