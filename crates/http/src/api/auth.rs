//! The extractors behind every management route.
//!
//! Who may call `/api/v1/*`: machines (`system` and `agent` tokens), and human administrators:
//! a person's token (`human`) whose `sub` is their own id (first-party applications), checked
//! on every call against the store: the person must still be able to sign in and still hold
//! the role that put the management scopes in the token (`svc_oauth`'s `administrators`
//! rules): `tenant_admin`, which reaches the whole tenant, or — only on the routes whose
//! extractor is [`OrgAuthorized`] — `owner`/`admin` of the organization the token was issued
//! for, which reaches that organization alone ([`Reach`]). A role taken away, a membership
//! ended or a person suspended stops a token already issued at once. The audit log records
//! them as `user:usr_…`.
//!
//! A route opts in to organization administrators by its extractor's type, so a route that
//! says nothing serves the whole tenant's callers only: forgetting the opt-in refuses a caller,
//! it never widens one.
//!
//! Tokens come as `Authorization: Bearer`, or `Authorization: DPoP` with a `DPoP` proof for this
//! request (method, URL, `ath`) when DPoP is on; a DPoP-bound token is refused as a bearer token.
//!
//! An API key (`Authorization: Bearer svck_…`, `svc_manage::api_keys`) is accepted on every
//! route in place of a token while `[api_keys].enabled`: it must be a live key of the host's
//! tenant holding the route's scope, and reaches the whole tenant (never as an organization's
//! administrator); the audit log records `api_key:apik_…`.
//!
//! Beyond the spec's stateless validation contract, a token revoked at `/oauth/revoke` is refused
//! (one indexed read per call), since svc is both the issuer and this resource server.

use super::ApiState;
use crate::error::bearer::{
    api_dpop_refused, api_key_refused, api_person_gone, api_refused, api_token_revoked,
    operator_unauthorized,
};
use crate::tenancy::CurrentTenant;
use crate::{ClientContext, Problem, RequestId};
use axum::extract::FromRequestParts;
use http::header::AUTHORIZATION;
use http::request::Parts;
use std::marker::PhantomData;
use svc_manage::caller::Standing;
use svc_manage::{Actor, Reach, RequestMeta};
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
    /// `agents:read`
    AgentsRead,
    "agents:read"
);
permission!(
    /// `agents:write`
    AgentsWrite,
    "agents:write"
);
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

/// Which callers a route serves, by reach (see the module documentation).
pub trait Reachable: Send + Sync + 'static {
    /// Whether an organization's owners and admins are served (limited to it).
    const ORGANIZATION_ADMINISTRATORS: bool;
}

/// Routes of the whole tenant: machines and tenant administrators only.
#[derive(Debug)]
pub struct TenantWide;
impl Reachable for TenantWide {
    const ORGANIZATION_ADMINISTRATORS: bool = false;
}

/// Routes about one organization: also its owners and admins, limited to it.
#[derive(Debug)]
pub struct WithinOrganization;
impl Reachable for WithinOrganization {
    const ORGANIZATION_ADMINISTRATORS: bool = true;
}

/// A caller whose access token passed the whole validation contract for permission `P`, on a
/// route serving the callers `R`.
pub struct Authorized<P: Permission, R: Reachable = TenantWide> {
    /// The tenant owning the resources of this request (the host's tenant).
    pub tenant: CurrentTenant,
    /// What the caller presented.
    pub credential: Credential,
    /// The scopes the credential holds (a key's creator can give it no more).
    pub scopes: Vec<String>,
    /// Who acts, for the audit log.
    pub actor: Actor,
    /// How far the caller reaches: always [`Reach::Tenant`] on a [`TenantWide`] route.
    pub reach: Reach,
    /// Request id and client address, for the audit log.
    pub meta: RequestMeta,
    _permission: PhantomData<(P, R)>,
}

/// The credential a management caller presented.
#[derive(Debug)]
pub enum Credential {
    /// An access token (RFC 9068) that passed the validation contract.
    AccessToken(Box<AccessTokenClaims>),
    /// A live API key of the tenant (`svck_…`).
    ApiKey(svc_domain::ApiKeyId),
}

/// A caller of a route that an organization's owners and admins may call too, limited to their
/// organization by [`Reach`]: the handler passes `reach` to the use case, or checks the path's
/// organization with [`Authorized::within`].
pub type OrgAuthorized<P> = Authorized<P, WithinOrganization>;

impl<P: Permission, R: Reachable> Authorized<P, R> {
    /// `org` is within the caller's reach: else the route answers not found, as for an unknown
    /// id (`Reach` rule 1).
    pub fn within(&self, org: &svc_domain::OrganizationId) -> Result<(), Problem> {
        self.reach.within(Some(org)).map_err(Problem::from)
    }
}

/// Who acts, and how far, for a token that passed validation: the client of a machine's token,
/// reaching the tenant; for a person's token the person, who must still be able to sign in and
/// still hold a role that reaches this route (see the module documentation). `scope` is the
/// route's: a person who lost the role no longer holds it, whatever the token says.
async fn actor(
    state: &ApiState,
    tenant: &CurrentTenant,
    claims: &AccessTokenClaims,
    scope: &str,
    organization_administrators: bool,
) -> Result<(Actor, Reach), Problem> {
    // An agent's token never reaches the management API (the token endpoint issues none for
    // it); one that somehow names it is refused here too, not mistaken for a client's.
    if claims.subject_type == SubjectType::Agent {
        return Err(Problem::forbidden(
            "an agent's token does not reach the management API",
        ));
    }
    if claims.subject_type != SubjectType::Human {
        return match svc_domain::ClientId::parse(&claims.client_id) {
            Ok(client) => Ok((Actor::Client(client), Reach::Tenant)),
            Err(_) => Err(Problem::unauthorized("the token names no valid client")),
        };
    }
    // A pairwise subject (third-party application) names nobody this API can check.
    let Ok(user) = svc_domain::UserId::parse(&claims.sub) else {
        return Err(Problem::forbidden(
            "a person's token reaches the management API only through a first-party application",
        ));
    };
    // The organization the token was issued for counts only where the route serves its
    // administrators; elsewhere only `tenant_admin` does.
    let organization = claims
        .org
        .as_deref()
        .filter(|_| organization_administrators)
        .and_then(|raw| svc_domain::OrganizationId::parse(raw).ok());
    match svc_manage::caller::standing(
        &state.manage,
        &tenant.tenant.id,
        &user,
        organization.as_ref(),
    )
    .await?
    {
        Standing::Gone => Err(api_person_gone()),
        Standing::Reaches(reach) => Ok((Actor::User(user), reach)),
        Standing::Powerless => Err(api_refused(&svc_sdk::ValidationError::InsufficientScope {
            required: scope.to_owned(),
        })),
    }
}

/// The URL a request reached, for a DPoP proof's `htu`: the issuer's origin and the request's
/// path (the management API is served on the tenant's host).
fn request_url(issuer: &str, path: &str) -> String {
    match url::Url::parse(issuer) {
        Ok(mut url) => {
            url.set_path(path);
            url.set_query(None);
            url.to_string()
        }
        Err(_) => format!("{issuer}{path}"),
    }
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

impl<P: Permission, R: Reachable> FromRequestParts<ApiState> for Authorized<P, R> {
    type Rejection = Problem;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &ApiState,
    ) -> Result<Self, Self::Rejection> {
        // The host's tenant first: an unknown host is 404 and a suspended tenant 403 on every
        // surface, whatever the credentials.
        let tenant = CurrentTenant::from_request_parts(parts, state).await?;
        // Rule 1: the token comes from `Authorization: Bearer`, or `DPoP` with a proof of the
        // token's key for this very request (RFC 9449 §7.1).
        let header = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        let (scheme, token) = svc_sdk::authorization_token(header).map_err(|e| api_refused(&e))?;
        if token.starts_with(svc_domain::API_KEY_PREFIX) {
            let bearer = scheme == svc_sdk::AuthScheme::Bearer;
            return api_key_caller::<P, R>(state, tenant, token, bearer, meta(parts)).await;
        }
        let claims = validated_access_token(
            state,
            parts,
            &tenant,
            (scheme, token),
            P::SCOPE,
            // People pass validation; `actor` then checks them against the store.
            vec![SubjectType::System, SubjectType::Human, SubjectType::Agent],
        )
        .await?;
        let (actor, reach) = actor(
            state,
            &tenant,
            &claims,
            P::SCOPE,
            R::ORGANIZATION_ADMINISTRATORS,
        )
        .await?;
        Ok(Self {
            tenant,
            scopes: claims.scope.clone(),
            credential: Credential::AccessToken(Box::new(claims)),
            actor,
            reach,
            meta: meta(parts),
            _permission: PhantomData,
        })
    }
}

/// The claims of an access token of the host's tenant presented for `scope`, after the whole
/// validation contract (rules 1–10, the audience being the tenant's API `{issuer}/api/v1`) and
/// our rule 11 (not revoked at `/oauth/revoke`): what every `/api/v1/*` route that takes a
/// token starts from. `subject_types` are the callers the route serves (rule 8).
pub(crate) async fn validated_access_token(
    state: &ApiState,
    parts: &Parts,
    tenant: &CurrentTenant,
    (scheme, token): (svc_sdk::AuthScheme, &str),
    scope: &str,
    subject_types: Vec<SubjectType>,
) -> Result<AccessTokenClaims, Problem> {
    let dpop_scheme = scheme == svc_sdk::AuthScheme::DPoP;
    let proof = match (&state.dpop, dpop_scheme) {
        (Some(dpop), true) => {
            let url = request_url(&tenant.issuer, parts.uri.path());
            dpop.verify(
                &tenant.tenant,
                svc_oauth::dpop::proof_header(&parts.headers),
                parts.method.as_str(),
                &url,
                Some(token),
            )
            .await
            .map_err(|e| api_dpop_refused(&e))?
        }
        _ => None,
    };

    // Rule 2: the signature verifies with this tenant's own published keys, with the
    // access-token algorithm and the RFC 9068 type.
    let published = state.keys.published_jwks(&tenant.tenant).await?;
    let jwks = &published.jwk_set;
    let requirements = Requirements {
        issuer: tenant.issuer.clone(),
        audience: management_api_resource(&tenant.issuer),
        tenant_id: tenant.tenant.id.to_string(),
        organization: None,
        required_scope: Some(scope.to_owned()),
        subject_types,
        allow_delegation: false,
        max_delegation_depth: 0,
        trusted_actors: Vec::new(),
        // Rule 10: a bound token needs the DPoP scheme and its key's proof; with `Bearer`
        // no thumbprint is given, so a bound token is refused (RFC 9449 §7.2).
        dpop_jkt: proof.map(|p| p.jkt),
        leeway_secs: 0,
    };
    // Rules 2–10, in the spec's order.
    let now = state.clock.now().unix_timestamp();
    let claims = svc_sdk::validate_with_jwks(token, jwks, &requirements, now)
        .map_err(|e| api_refused(&e))?;
    // The DPoP scheme is for DPoP-bound tokens only (RFC 9449 §7.1).
    if dpop_scheme && claims.cnf.is_none() {
        return Err(api_refused(&svc_sdk::ValidationError::DpopTokenNotBound));
    }
    // Rule 11 (ours): not revoked at /oauth/revoke since it was issued.
    if svc_manage::caller::access_token_revoked(&state.manage, &tenant.tenant.id, &claims.jti)
        .await?
    {
        return Err(api_token_revoked());
    }
    Ok(claims)
}

/// The caller behind an API key presented for permission `P`: a live key of the host's tenant
/// (only as `Bearer`, only while `[api_keys].enabled`) holding `P`'s scope, reaching the whole
/// tenant. Every refusal of the key itself is the same 401 ([`api_key_refused`]).
async fn api_key_caller<P: Permission, R: Reachable>(
    state: &ApiState,
    tenant: CurrentTenant,
    presented: &str,
    bearer: bool,
    meta: RequestMeta,
) -> Result<Authorized<P, R>, Problem> {
    let Some(keys) = state.api_keys.as_ref().filter(|_| bearer) else {
        return Err(api_key_refused());
    };
    let key = keys
        .authenticate(&state.manage, &tenant.tenant.id, presented)
        .await?
        .ok_or_else(api_key_refused)?;
    if !key.scopes.contains(P::SCOPE) {
        return Err(api_refused(&svc_sdk::ValidationError::InsufficientScope {
            required: P::SCOPE.to_owned(),
        }));
    }
    Ok(Authorized {
        tenant,
        scopes: key.scopes.iter().map(|s| s.as_str().to_owned()).collect(),
        credential: Credential::ApiKey(key.id.clone()),
        actor: Actor::ApiKey(key.id),
        reach: Reach::Tenant,
        meta,
        _permission: PhantomData,
    })
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
            max_delegation_depth: 0,
            trusted_actors: Vec::new(),
            dpop_jkt: None,
            leeway_secs: 0,
        };
        let now = self.0.clock.now().unix_timestamp();
        svc_sdk::validate_with_jwks(token, jwks, &requirements, now)
            .map(|_| ())
            .map_err(|e| api_refused(&e))
    }
}
