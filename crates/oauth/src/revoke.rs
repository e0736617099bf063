//! Token revocation (RFC 7009).
//!
//! Rules enforced here:
//! - The client authenticates as at the token endpoint (RFC 7009 §2.1); public clients identify
//!   themselves with `client_id`.
//! - `token` is required; `token_type_hint` is only a hint (§2.1): both kinds are tried.
//! - A refresh token of the caller revokes its whole family (§2.1: "SHOULD also invalidate all
//!   access tokens based on the same authorization grant"; the family is the grant).
//! - An access token issued to the caller is remembered as revoked until it expires, so
//!   introspection and UserInfo refuse it.
//! - Unknown, malformed, expired or other clients' tokens answer 200 like success (§2.2): the
//!   endpoint is no oracle for token validity.

use crate::access_token::verified_claims;
use crate::client_auth;
use crate::context::ProtocolContext;
use crate::error::OAuthError;
use crate::token::request::ClientRequest;
use svc_domain::{EventData, RevocationReason, RevokedTokenKind, SecretHash, Tenant};
use time::OffsetDateTime;

/// The revocation engine.
pub struct Revoker {
    ctx: ProtocolContext,
}

impl Revoker {
    /// A revocation engine over `ctx`; clients registered with a `jwks_uri` authenticate when
    /// `ctx` has a fetcher.
    pub fn new(ctx: ProtocolContext) -> Self {
        Self { ctx }
    }

    /// Handles a revocation request; `Ok(())` is answered 200 with an empty body.
    pub async fn handle(
        &self,
        tenant: &Tenant,
        issuer: &str,
        form: &[(String, String)],
        authorization: Option<&str>,
    ) -> Result<(), OAuthError> {
        let request = ClientRequest::parse(form, authorization)?;
        let auth = self.ctx.client_auth(&tenant.id, issuer);
        let client = client_auth::authenticate(&auth, request.client()).await?;
        let token = request.param("token").ok_or_else(|| {
            OAuthError::invalid_request("the `token` parameter is required (RFC 7009 §2.1)")
        })?;
        let now = self.ctx.clock.now();
        let app = &client.application;
        // Refresh tokens first: a hash lookup, cheaper than a signature check.
        let mut tx = self.ctx.store.write().await?;
        if let Some((_, family)) = tx.refresh_token(&tenant.id, &SecretHash::of(token)).await? {
            if family.client_id == app.id
                && tx
                    .revoke_refresh_family(&tenant.id, &family.id, now, "revoked")
                    .await?
            {
                let data = EventData::TokensRevoked {
                    client_id: app.id.clone(),
                    token_kind: RevokedTokenKind::RefreshToken,
                    access_token_id: None,
                    refresh_family_id: Some(family.id.clone()),
                    reason: RevocationReason::ClientRequest,
                };
                self.record_event(tx.as_mut(), tenant, data).await?;
                tracing::info!(tenant = %tenant.id, client_id = %app.id, family = %family.id,
                    "refresh token family revoked");
            }
            tx.commit().await?;
            return Ok(());
        }
        // Never hold the write transaction across the key service (it may need the database).
        drop(tx);
        let Some(claims) = verified_claims(&self.ctx.keys, tenant, issuer, token).await? else {
            return Ok(());
        };
        let (Some(jti), Some(exp)) = (claims["jti"].as_str(), claims["exp"].as_i64()) else {
            return Ok(());
        };
        let expired = exp <= now.unix_timestamp();
        if claims["client_id"].as_str() != Some(app.wire_client_id()) || expired {
            return Ok(());
        }
        let expires_at = OffsetDateTime::from_unix_timestamp(exp).unwrap_or(now);
        let mut tx = self.ctx.store.write().await?;
        if !tx.access_token_revoked(&tenant.id, jti).await? {
            tx.revoke_access_token(&tenant.id, jti, expires_at).await?;
            let data = EventData::TokensRevoked {
                client_id: app.id.clone(),
                token_kind: RevokedTokenKind::AccessToken,
                access_token_id: Some(jti.to_owned()),
                refresh_family_id: None,
                reason: RevocationReason::ClientRequest,
            };
            self.record_event(tx.as_mut(), tenant, data).await?;
        }
        tx.commit().await?;
        tracing::info!(tenant = %tenant.id, client_id = %app.id, jti, "access token revoked");
        Ok(())
    }
}

impl Revoker {
    /// Records `auth.token.revoked` in `tx`, committed with the revocation.
    async fn record_event(
        &self,
        tx: &mut dyn svc_store::WriteTx,
        tenant: &Tenant,
        data: EventData,
    ) -> Result<(), OAuthError> {
        let event = svc_domain::Event::new(
            self.ctx.clock.as_ref(),
            self.ctx.rng.as_ref(),
            &tenant.id,
            svc_domain::EventType::TokenRevoked,
            data,
        );
        tx.insert_event(&event).await?;
        Ok(())
    }
}
