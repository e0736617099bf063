//! `grant_type=refresh_token` (RFC 6749 §6): one rotation per request, in one write transaction.
//!
//! The rules are the parent module's (reuse revokes the family, expiry is checked before
//! anything is committed, a bound family needs a proof of its key, an organization grant is
//! checked again); this file holds the refresh grant alone so each grant reads on its own.

use super::{
    Grant, ORGANIZATION_ACCESS_ENDED, active_person, check_key, organization_access,
    revoked_family, security_entry,
};
use crate::claims::{ROLES_SCOPE, role_claims};
use crate::client_auth::AuthenticatedClient;
use crate::error::OAuthError;
use crate::grants::refresh_token::{check_alive, check_client, narrow_scope};
use crate::policies::{GrantSignIn, token_denial};
use crate::resources::{Held, regrant};
use crate::token::issue::{SubjectType, TokenResponse};
use crate::token::{TokenEndpoint, TokenRequest};
use serde_json::Map;
use svc_domain::{EventData, EventType, PolicyRule, RevocationReason, SecretHash, Tenant};
use svc_store::RefreshRotation;

impl TokenEndpoint {
    /// `grant_type=refresh_token` (RFC 6749 §6) with rotation.
    pub(in crate::token) async fn refresh_token(
        &self,
        tenant: &Tenant,
        issuer: &str,
        client: &AuthenticatedClient,
        request: &TokenRequest,
    ) -> Result<TokenResponse, OAuthError> {
        let app = &client.application;
        let presented = request
            .param("refresh_token")
            .ok_or_else(|| OAuthError::invalid_request("refresh_token is required"))?;
        let signers = self.signers(tenant, app).await?;
        let now = self.ctx.clock.now();
        let mut tx = self.ctx.store.write().await?;
        let (token, family) = match tx
            .rotate_refresh_token(&tenant.id, &SecretHash::of(presented), now)
            .await?
        {
            RefreshRotation::Unknown => {
                return Err(OAuthError::invalid_grant("the refresh token is invalid"));
            }
            RefreshRotation::Reused(_, family) => {
                // Another client's token is simply not valid here; only its owner's reuse
                // revokes the family.
                check_client(&family, &app.id)?;
                // A family past its absolute end has nothing left to protect: a stale token
                // of it is just expired, not an alarm.
                if now >= family.expires_at {
                    return Err(OAuthError::invalid_grant("the refresh token has expired"));
                }
                if tx
                    .revoke_refresh_family(&tenant.id, &family.id, now, "reuse")
                    .await?
                {
                    let entry = security_entry(
                        self,
                        tenant,
                        &app.id,
                        "security.refresh_token.reuse",
                        family.id.as_str(),
                    );
                    tx.insert_audit(&entry).await?;
                    let data = EventData::RefreshTokenReused {
                        client_id: app.id.clone(),
                        user_id: family.user_id.clone(),
                        refresh_family_id: family.id.clone(),
                    };
                    self.record_event(
                        tx.as_mut(),
                        tenant,
                        EventType::SecurityRefreshTokenReuse,
                        data,
                    )
                    .await?;
                    let data =
                        revoked_family(&app.id, &family.id, RevocationReason::RefreshTokenReuse);
                    self.record_event(tx.as_mut(), tenant, EventType::TokenRevoked, data)
                        .await?;
                    tracing::warn!(tenant = %tenant.id, client_id = %app.id,
                            family = %family.id, "refresh token reuse: family revoked");
                }
                tx.commit().await?;
                return Err(OAuthError::invalid_grant(
                    "the refresh token was already used; its family is revoked",
                ));
            }
            RefreshRotation::Rotated(token, family) => (token, family),
        };
        // On a wrong client, an expired or revoked token, or a scope beyond the grant, the
        // transaction is dropped and the rotation rolls back: the token stays as it was, so
        // presenting it again is never mistaken for reuse (and another client cannot burn it).
        check_client(&family, &app.id)?;
        check_alive(&token, &family, now)?;
        check_key(family.dpop_jkt.as_deref(), request.proof_jkt())?;
        // An application that became third-party since the grant keeps no person API scope.
        let mut scope = crate::administrators::for_persons_application(
            narrow_scope(&token.scope, request.scope())?,
            app,
        );
        let details = crate::details::from_grant(
            app,
            family.authorization_details.as_ref(),
            request.param("authorization_details"),
            self.ctx.authorization_details(),
        )?;
        // Management scopes last only as long as the role behind them.
        if crate::administrators::for_management_api(app, issuer)
            && crate::administrators::asks_management_scopes(&scope)
        {
            let held = crate::administrators::management_roles(
                tx.as_mut(),
                &tenant.id,
                &family.user_id,
                family.organization_id.as_ref(),
            )
            .await?;
            scope = crate::administrators::permitted(&scope, app, issuer, &held);
        }
        if active_person(tx.as_mut(), tenant, &family.user_id)
            .await?
            .is_none()
        {
            tx.commit().await?;
            return Err(OAuthError::invalid_grant(
                "the person can no longer sign in",
            ));
        }
        let organization = match &family.organization_id {
            None => None,
            Some(org) => {
                match organization_access(tx.as_mut(), tenant, org, &family.user_id).await? {
                    Some(org) => Some(org),
                    None => {
                        if tx
                            .revoke_refresh_family(
                                &tenant.id,
                                &family.id,
                                now,
                                "organization_access_ended",
                            )
                            .await?
                        {
                            let data = revoked_family(
                                &app.id,
                                &family.id,
                                RevocationReason::OrganizationAccessEnded,
                            );
                            self.record_event(tx.as_mut(), tenant, EventType::TokenRevoked, data)
                                .await?;
                        }
                        tx.commit().await?;
                        return Err(OAuthError::invalid_grant(ORGANIZATION_ACCESS_ENDED));
                    }
                }
            }
        };
        // The tenant's access policies, against how the person signed in. A policy that
        // refuses it now always will (the family's sign-in never changes): the family is
        // revoked. Only the network rule depends on the request: that refusal drops the
        // transaction, so the token is not rotated and works again from an allowed network.
        let sign_in = GrantSignIn {
            user: &family.user_id,
            organization: family.organization_id.as_ref(),
            acr: family.acr.as_deref(),
            amr: &family.amr,
            auth_time: family.auth_time,
        };
        if let Some(denial) =
            token_denial(tx.as_mut(), &tenant.id, app, &sign_in, request.peer(), now).await?
        {
            if denial.rule == PolicyRule::Network {
                drop(tx);
                let mut tx = self.ctx.store.write().await?;
                self.record_denial(tx.as_mut(), tenant, &family.user_id, &denial, request)
                    .await?;
                tx.commit().await?;
                return Err(OAuthError::invalid_grant(denial.describe()));
            }
            if tx
                .revoke_refresh_family(&tenant.id, &family.id, now, "policy_denied")
                .await?
            {
                let data = revoked_family(&app.id, &family.id, RevocationReason::PolicyDenied);
                self.record_event(tx.as_mut(), tenant, EventType::TokenRevoked, data)
                    .await?;
            }
            self.record_denial(tx.as_mut(), tenant, &family.user_id, &denial, request)
                .await?;
            tx.commit().await?;
            return Err(OAuthError::invalid_grant(denial.describe()));
        }
        // An API's permissions last only as long as the roles behind them. A refusal drops
        // the transaction: the token is not rotated by it.
        let held = Held {
            user: &family.user_id,
            organization: family.organization_id.as_ref(),
            resource: family.resource_id.as_ref(),
            scope: &scope,
        };
        let (resource, scope) =
            regrant(tx.as_mut(), &tenant.id, app, request.resources(), held).await??;
        // RFC 6749 §6 / OIDC Core §11: refresh tokens are for offline access; a refresh that
        // drops `offline_access` gets none, and the family it ends cannot be refreshed again.
        let next = if scope.contains("offline_access") {
            let (token, plaintext) = self.next_token(&family, &scope, now);
            tx.insert_refresh_token(&token).await?;
            Some(plaintext)
        } else {
            tx.revoke_refresh_family(&tenant.id, &family.id, now, "offline_access_dropped")
                .await?;
            None
        };
        let grant = Grant {
            user: &family.user_id,
            subject: &family.subject,
            scope: &scope,
            auth_time: family.auth_time,
            acr: family.acr.as_deref(),
            amr: &family.amr,
            session: family.session_id.as_ref(),
            nonce: None,
            person: if scope.contains(ROLES_SCOPE) {
                role_claims(
                    tx.as_mut(),
                    &tenant.id,
                    &family.user_id,
                    family.organization_id.as_ref(),
                )
                .await?
            } else {
                Map::new()
            },
            organization,
            resource,
            proof: request.proof_jkt(),
            details,
            granted_details: family.authorization_details.as_ref(),
        };
        let stamp = self.issuer().stamp(SubjectType::Human);
        let data = EventData::TokensIssued {
            client_id: app.id.clone(),
            user_id: family.user_id.clone(),
            grant_type: "refresh_token".into(),
            scope: scope.to_string(),
            access_token_id: stamp.jti.clone(),
            refresh_family_id: next.is_some().then(|| family.id.clone()),
            id_token: grant.wants_id_token(),
        };
        self.record_event(tx.as_mut(), tenant, EventType::TokenIssued, data)
            .await?;
        tx.commit().await?;
        let (response, access) = self.respond(tenant, issuer, app, &signers, &grant, stamp, now)?;
        tracing::info!(tenant = %tenant.id, client_id = %app.id, grant_type = "refresh_token",
            jti = %access.jti, family = %family.id, "tokens issued");
        Ok(TokenResponse {
            refresh_token: next,
            ..response
        })
    }
}
