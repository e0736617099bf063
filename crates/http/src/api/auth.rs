//! The extractors behind every management route.
//!
//! Who may call `/api/v1/*`: machines (`system` and `agent` tokens), and human administrators:
//! a person's token (`human`) whose `sub` is their own id (first-party applications), checked
//! on every call against the store: the person must still be able to sign in and still hold
//! `tenant_admin`, the role that put the management scopes in the token
//! (`svc_oauth`'s `administrators` rules). A role taken away, or a person suspended, stops a
//! token already issued at once. The audit log records them as `user:usr_…`.
//!
//! Beyond the spec's stateless validation contract, a token revoked at `/oauth/revoke` is refused
//! (one indexed read per call), since svc is both the issuer and this resource server.

use super::ApiState;
use crate::error::bearer::{
    api_person_gone, api_refused, api_token_revoked, operator_unauthorized,
};
use crate::tenancy::CurrentTenant;
use crate::{ClientContext, Problem, RequestId};
use axum::extract::FromRequestParts;
use http::header::AUTHORIZATION;
use http::request::Parts;
use std::marker::PhantomData;
use svc_manage::{Actor, RequestMeta};
use svc_oauth::discovery::management_api_resource;
use svc_sdk::{AccessTokenClaims, Requirements, SubjectType};

/// A scope a route requires (CONTRACTS.md "Tenant API scopes and audience").
pub trait Permission: Send + Sync + 'static {
    /// The scope.
    const SCOPE: &'static str;
}

macro_rules! permission {
    ($(#[$meta:meta])* $name:ident, $scope:literal) => {
        $(#[$meta])*
        #[derive(Debug)]
        pub struct $name;
        impl Permission for $name {
            const SCOPE: &'static str = $scope;
        }
    };
}

permission!(
    /// `applications:read`
    ApplicationsRead,
    "applications:read"
);
permission!(
    /// `applications:write`
    ApplicationsWrite,
    "applications:write"
);
permission!(
    /// `audit:read`
    AuditRead,
    "audit:read"
);
permission!(
    /// `organizations:read`
    OrganizationsRead,
    "organizations:read"
);
permission!(
    /// `organizations:write`
    OrganizationsWrite,
    "organizations:write"
);
permission!(
    /// `policies:read`
    PoliciesRead,
    "policies:read"
);
permission!(
    /// `policies:write`
    PoliciesWrite,
    "policies:write"
);
permission!(
    /// `users:read`
    UsersRead,
    "users:read"
);
permission!(
    /// `users:write`
    UsersWrite,
    "users:write"
);
permission!(
    /// `webhooks:read`
    WebhooksRead,
    "webhooks:read"
);
permission!(
    /// `webhooks:write`
    WebhooksWrite,
    "webhooks:write"
);

/// A caller whose access token passed the whole validation contract for permission `P`.
pub struct Authorized<P: Permission> {
    /// The tenant owning the resources of this request (the host's tenant).
    pub tenant: CurrentTenant,
    /// The validated claims.
    pub claims: AccessTokenClaims,
    /// Who acts, for the audit log.
    pub actor: Actor,
    /// Request id and client address, for the audit log.
    pub meta: RequestMeta,
    _permission: PhantomData<P>,
}

/// Who acts, for a token that passed validation: the client of a machine's token; for a
/// person's token the person, who must still be able to sign in and still hold `tenant_admin`
/// (see the module documentation).
/// `scope` is the route's: a person who lost the role no longer holds it, whatever the token says.
async fn actor(
    state: &ApiState,
    tenant: &CurrentTenant,
    claims: &AccessTokenClaims,
    scope: &str,
) -> Result<Actor, Problem> {
    if claims.subject_type != SubjectType::Human {
        return match svc_domain::ClientId::parse(&claims.client_id) {
            Ok(client) => Ok(Actor::Client(client)),
            Err(_) => Err(Problem::unauthorized("the token names no valid client")),
        };
    }
    // A pairwise subject (third-party application) names nobody this API can check.
    let Ok(user) = svc_domain::UserId::parse(&claims.sub) else {
        return Err(Problem::forbidden(
            "a person's token reaches the management API only through a first-party application",
        ));
    };
    let Some(roles) =
        svc_manage::caller::human_roles(&state.manage, &tenant.tenant.id, &user).await?
    else {
        return Err(api_person_gone());
    };
    if !roles.iter().any(|r| r.as_str() == svc_domain::TENANT_ADMIN) {
        return Err(api_refused(&svc_sdk::ValidationError::InsufficientScope {
            required: scope.to_owned(),
        }));
    }
    Ok(Actor::User(user))
}

fn meta(parts: &Parts) -> RequestMeta {
    let request_id = parts.extensions.get::<RequestId>().map(ToString::to_string);
    let client_ip = parts
        .extensions
        .get::<ClientContext>()
        .and_then(|c| c.ip)
        .map(|ip| ip.to_string());
    RequestMeta {
        request_id,
        client_ip,
    }
}

impl<P: Permission> FromRequestParts<ApiState> for Authorized<P> {
    type Rejection = Problem;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &ApiState,
    ) -> Result<Self, Self::Rejection> {
        // The host's tenant first: an unknown host is 404 and a suspended tenant 403 on every
        // surface, whatever the credentials.
        let tenant = CurrentTenant::from_request_parts(parts, state).await?;
        // Rule 1: the token comes from `Authorization: Bearer`.
        let header = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        let token = svc_sdk::bearer_token(header)
            .map_err(|e| api_refused(&e))?
            .to_owned();

        // Rule 2: the signature verifies with this tenant's own published keys, with the
        // access-token algorithm and the RFC 9068 type.
        let published = state.keys.published_jwks(&tenant.tenant).await?;
        let jwks = &published.jwk_set;
        let requirements = Requirements {
            issuer: tenant.issuer.clone(),
            audience: management_api_resource(&tenant.issuer),
            tenant_id: tenant.tenant.id.to_string(),
            organization: None,
            required_scope: Some(P::SCOPE.to_owned()),
            // People pass validation; `actor` then checks them against the store.
            subject_types: vec![SubjectType::System, SubjectType::Human, SubjectType::Agent],
            allow_delegation: false,
            dpop_jkt: None,
            leeway_secs: 0,
        };
        // Rules 2–10, in the spec's order.
        let now = state.clock.now().unix_timestamp();
        let claims = svc_sdk::validate_with_jwks(&token, jwks, &requirements, now)
            .map_err(|e| api_refused(&e))?;
        // Rule 11 (ours): not revoked at /oauth/revoke since it was issued.
        if svc_manage::caller::access_token_revoked(&state.manage, &tenant.tenant.id, &claims.jti)
            .await?
        {
            return Err(api_token_revoked());
        }
        let actor = actor(state, &tenant, &claims, P::SCOPE).await?;
        Ok(Self {
            tenant,
            claims,
            actor,
            meta: meta(parts),
            _permission: PhantomData,
        })
    }
}

/// A control-plane operator (spec "Credentials by surface": operator token).
pub struct OperatorCaller {
    /// Who acts.
    pub actor: Actor,
    /// Request id and client address.
    pub meta: RequestMeta,
}

impl FromRequestParts<ApiState> for OperatorCaller {
    type Rejection = Problem;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &ApiState,
    ) -> Result<Self, Self::Rejection> {
        let header = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        let token = svc_sdk::bearer_token(header)
            .map_err(|_| operator_unauthorized("an operator token is required"))?;
        let operator = svc_manage::control_plane::authenticate_operator(&state.manage, token)
            .await?
            .ok_or_else(|| operator_unauthorized("the operator token is not valid"))?;
        Ok(Self {
            actor: Actor::Operator(operator.id),
            meta: meta(parts),
        })
    }
}

/// `/metrics` without a static token (spec "Credentials by surface"): a service token of the
/// host's tenant with scope `metrics:read`, validated by the same contract as every API call.
pub struct MetricsReadAuthorizer(pub ApiState);

#[async_trait::async_trait]
impl crate::MetricsAuthorizer for MetricsReadAuthorizer {
    async fn authorize(
        &self,
        headers: &http::HeaderMap,
        client: &ClientContext,
    ) -> Result<(), Problem> {
        let header = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok());
        let token = svc_sdk::bearer_token(header).map_err(|e| api_refused(&e))?;
        let tenant = self.0.tenants.resolve(client).await?;
        let published = self.0.keys.published_jwks(&tenant.tenant).await?;
        let jwks = &published.jwk_set;
        let requirements = Requirements {
            issuer: tenant.issuer.clone(),
            audience: management_api_resource(&tenant.issuer),
            tenant_id: tenant.tenant.id.to_string(),
            organization: None,
            required_scope: Some("metrics:read".to_owned()),
            subject_types: vec![SubjectType::System],
            allow_delegation: false,
            dpop_jkt: None,
            leeway_secs: 0,
        };
        let now = self.0.clock.now().unix_timestamp();
        svc_sdk::validate_with_jwks(token, jwks, &requirements, now)
            .map(|_| ())
            .map_err(|e| api_refused(&e))
    }
}
