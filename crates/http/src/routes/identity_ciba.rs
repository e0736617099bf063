//! `/api/v1/identity/ciba/requests*`: the signed-in person's pending backchannel authentication
//! requests (OpenID CIBA, poll mode) as JSON, and their approval or denial — the API behind any
//! approval screen the tenant builds itself, beside the hosted page `/auth/ciba`. Thin handlers
//! over the same engine as that page ([`AuthorizeEndpoint::backchannel_requests`] and
//! [`AuthorizeEndpoint::decide_backchannel`]), so both follow one set of rules.
//!
//! Who calls: the person of a live sign-in session of this tenant, through either credential
//! (ADR 0010):
//! - **the hosted session cookie** of a browser;
//! - **a token for them**: `Authorization: Bearer` (or `DPoP`) with an access token that passes
//!   the management API's validation contract with the audience `{issuer}/api/v1`, the scope
//!   [`CIBA_APPROVE_SCOPE`] and `subject_type` `human`, undelegated and not revoked, whose `sub`
//!   is the person's own id (a first-party application) and whose `sid` names a session of that
//!   person that is still live. A person's banking app, signed in through the code flow, can so
//!   approve what a terminal asks without a browser, and loses that power when the person signs
//!   out, is suspended, or the session expires. The approval carries the session's
//!   authentication (`auth_time`, `acr`, `amr`) either way.
//!
//! Rules:
//! - With an `Authorization` header the token alone counts (a cookie beside it is ignored):
//!   the contract's refusals (`401 invalid_token`, `403 insufficient_scope`); an API key,
//!   a delegated token or a pairwise `sub` (a third-party application) is `403 forbidden`; a
//!   token issued outside a session (token exchange) is `403`; an ended session, or a person
//!   who may no longer sign in, is `401 invalid_token`.
//! - Without one, no live session of this host's tenant (no cookie, an ended or expired session,
//!   a suspended person): `401 unauthorized`. A session of another tenant is not one here.
//! - A cookie-authenticated decision must come from the tenant's own origin: `POST` without an
//!   `Origin` header equal to the issuer's origin is `403 forbidden`. The cookie is `SameSite=Lax`
//!   already; the origin check also stops a same-site page (another tenant's subdomain) from
//!   deciding for the person. A token is no ambient credential, so it needs no origin.
//! - The person sees and decides only their own pending, unexpired requests; an unknown id,
//!   another person's, a decoy, an expired or an already decided one are one answer:
//!   `404 not_found`.
//! - Served only while `[ciba].enabled` (the runtime merges the routes then).
//!
//! [`AuthorizeEndpoint::backchannel_requests`]: svc_oauth::authorize::AuthorizeEndpoint::backchannel_requests
//! [`AuthorizeEndpoint::decide_backchannel`]: svc_oauth::authorize::AuthorizeEndpoint::decide_backchannel

use crate::Problem;
use crate::api::{ApiState, validated_access_token};
use crate::error::bearer::{api_refused, api_session_ended};
use crate::hosted::cookies::CookiePolicy;
use crate::openapi::tags;
use crate::tenancy::{CurrentTenant, TenantResolver};
use axum::extract::{FromRef, FromRequestParts, Path, State};
use axum::{Json, Router};
use http::request::Parts;
use serde::Serialize;
use std::sync::Arc;
use svc_domain::{BackchannelRequestId, CIBA_APPROVE_SCOPE, Session, SessionId, UserId};
use svc_oauth::authorize::{AuthorizeEndpoint, BackchannelDecision};
use time::OffsetDateTime;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The routes' state: the management API's, and the authorization endpoint that decides.
#[derive(Clone)]
pub struct IdentityState {
    /// Tenants, sign-in engine (sessions).
    pub api: ApiState,
    /// Lists and decides backchannel requests.
    pub authorize: Arc<AuthorizeEndpoint>,
}

impl FromRef<IdentityState> for TenantResolver {
    fn from_ref(state: &IdentityState) -> Self {
        state.api.tenants.clone()
    }
}

fn api() -> OpenApiRouter<IdentityState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(approve))
        .routes(routes!(deny))
}

/// The routes, state applied.
pub fn router(state: IdentityState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// The OpenAPI operations of these routes.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    api().into_openapi()
}

/// The person of the request's live session, in the host's tenant.
pub struct SignedInPerson {
    tenant: CurrentTenant,
    session: Session,
}

fn unavailable(e: svc_store::StoreError) -> Problem {
    svc_manage::ManageError::from(e).into()
}

impl FromRequestParts<IdentityState> for SignedInPerson {
    type Rejection = Problem;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &IdentityState,
    ) -> Result<Self, Self::Rejection> {
        let tenant = CurrentTenant::from_request_parts(parts, state).await?;
        let session = if parts.headers.contains_key(http::header::AUTHORIZATION) {
            by_token(parts, state, &tenant).await?
        } else {
            by_cookie(parts, state, &tenant).await?
        };
        Ok(Self { tenant, session })
    }
}

/// The live session behind the browser's cookie; decisions only from the tenant's origin.
async fn by_cookie(
    parts: &Parts,
    state: &IdentityState,
    tenant: &CurrentTenant,
) -> Result<Session, Problem> {
    if parts.method != http::Method::GET && !same_origin(parts, &tenant.issuer) {
        return Err(Problem::forbidden(
            "a decision must come from a page of this tenant's own origin (Origin header)",
        ));
    }
    let cookies = CookiePolicy::for_issuer(&tenant.issuer);
    let signed_in = match cookies.session(&parts.headers) {
        Some(cookie) => state.api.authn.session(&tenant.tenant, &cookie).await?,
        None => None,
    };
    signed_in.map(|(session, _person)| session).ok_or_else(|| {
        Problem::unauthorized(
            "sign in first: this API acts for the person of the browser's session",
        )
    })
}

/// The live session a person's token was issued in (see the module documentation).
async fn by_token(
    parts: &Parts,
    state: &IdentityState,
    tenant: &CurrentTenant,
) -> Result<Session, Problem> {
    let header = parts
        .headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let (scheme, token) = svc_sdk::authorization_token(header).map_err(|e| api_refused(&e))?;
    if token.starts_with(svc_domain::API_KEY_PREFIX) {
        return Err(Problem::forbidden(
            "an API key acts for no person: present a person's access token or the session cookie",
        ));
    }
    let claims = validated_access_token(
        &state.api,
        parts,
        tenant,
        (scheme, token),
        CIBA_APPROVE_SCOPE,
        vec![svc_sdk::SubjectType::Human],
    )
    .await?;
    // A pairwise subject (third-party application) names nobody this API can check.
    let Ok(person) = UserId::parse(&claims.sub) else {
        return Err(Problem::forbidden(
            "a person's token reaches this API only through a first-party application",
        ));
    };
    let Some(sid) = claims.sid.as_deref().and_then(|s| SessionId::parse(s).ok()) else {
        return Err(Problem::forbidden(
            "this token was not issued in a sign-in session (code flow), so it acts for nobody here",
        ));
    };
    state
        .api
        .authn
        .live_session(&tenant.tenant, &sid, &person)
        .await?
        .ok_or_else(api_session_ended)
}

/// Whether the request's `Origin` is the issuer's origin (scheme, host and port).
fn same_origin(parts: &Parts, issuer: &str) -> bool {
    let Some(origin) = parts
        .headers
        .get(http::header::ORIGIN)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let ours = url::Url::parse(issuer).map(|u| u.origin().ascii_serialization());
    let theirs = url::Url::parse(origin).map(|u| u.origin().ascii_serialization());
    matches!((ours, theirs), (Ok(a), Ok(b)) if a == b)
}

/// One pending request.
#[derive(Serialize, ToSchema)]
#[schema(as = BackchannelRequest, example = json!({
    "id": "cib_01jd3xk1q7e8ccbz6r9v0w2y4m",
    "client_name": "Bank terminal",
    "scopes": ["openid", "profile"],
    "binding_message": "W4SCT",
    "authorization_details": [{"type": "payment_initiation", "instructedAmount":
        {"currency": "EUR", "amount": "123.50"}, "creditorName": "Merchant A"}],
    "details": [{"description": "Make a payment from your account", "lines": [
        {"label": "Amount", "value": "currency: EUR, amount: 123.50"},
        {"label": "To", "value": "Merchant A"}]}],
    "expires_at": "2026-11-24T20:05:00Z"
}))]
pub struct BackchannelRequestView {
    /// The request's id, for approve and deny.
    pub id: String,
    /// The display name of the application that asked (tenant-written: escape it).
    pub client_name: String,
    /// The scopes asked for.
    pub scopes: Vec<String>,
    /// What the client's device shows, for the person to compare (client-written: escape it).
    pub binding_message: Option<String>,
    /// The RAR details asked for (RFC 9396), as the application sent them; absent without.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub authorization_details: Option<serde_json::Value>,
    /// The same details in words, each under its type's description with its values under
    /// their schema titles (client- and tenant-written: escape them); empty without.
    pub details: Vec<DetailWords>,
    /// When it expires (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
    /// Present when an agent asks to use a delegation the person approves each time
    /// (`client_name` is then the agent's name); absent for an application's request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentUseView>,
}

/// What an agent asks to do for the person.
#[derive(Serialize, ToSchema)]
#[schema(as = BackchannelAgentUse, example = json!({
    "agent_id": "agt_01jd3k2m4n5p6q7r8s9t0v1w2x",
    "delegation_id": "dlg_01jd3k2m4n5p6q7r8s9t0v1w2x",
    "resource": "https://api.example.com/bookings", "resource_name": "Bookings",
    "permissions": [{"name": "bookings:write", "description": "Book and cancel trips"}]
}))]
pub struct AgentUseView {
    /// The agent asking.
    pub agent_id: String,
    /// The delegation it would act on.
    pub delegation_id: String,
    /// The API's identifier (the token's audience).
    pub resource: String,
    /// The API's name (tenant-written: escape it).
    pub resource_name: String,
    /// Each permission asked, with the API's description of it.
    pub permissions: Vec<PermissionWords>,
}

/// A permission and its description.
#[derive(Serialize, ToSchema)]
pub struct PermissionWords {
    /// The permission (`bookings:write`).
    pub name: String,
    /// The API's description of it; absent when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One requested detail object in words.
#[derive(Serialize, ToSchema)]
pub struct DetailWords {
    /// The type's description ("Make a payment from your account").
    pub description: String,
    /// Each value under its label, in the object's order.
    pub lines: Vec<DetailLine>,
}

/// One labelled value of a detail object.
#[derive(Serialize, ToSchema)]
pub struct DetailLine {
    /// The schema's `title` for the value (its key otherwise).
    pub label: String,
    /// The value in words.
    pub value: String,
}

/// The list.
#[derive(Serialize, ToSchema)]
#[schema(as = BackchannelRequestList)]
pub struct BackchannelRequestList {
    /// Pending, unexpired requests for the person, oldest first.
    pub requests: Vec<BackchannelRequestView>,
}

/// A decision taken.
#[derive(Serialize, ToSchema)]
#[schema(as = BackchannelRequestDecision, example = json!({
    "id": "cib_01jd3xk1q7e8ccbz6r9v0w2y4m", "status": "approved"
}))]
pub struct DecisionView {
    /// The request decided.
    pub id: String,
    /// `approved` (the client's next poll gets tokens) or `denied` (`access_denied`).
    pub status: &'static str,
}

/// Lists the person's pending requests.
#[utoipa::path(
    get, path = "/api/v1/identity/ciba/requests", tag = tags::IDENTITY,
    operation_id = "listCibaRequests",
    summary = "List the signed-in person's pending CIBA requests",
    description = "The backchannel authentication requests (OpenID CIBA, poll mode) that \
        applications made for the person of the browser's session and that still wait, oldest \
        first: the application's name, the scopes, the binding message to compare with what \
        the application's device shows, the RAR details (RFC 9396) as sent and in words, and \
        the expiry. Agents asking to use a delegation the person approves each time are \
        listed too, with an `agent` member (the agent, the delegation, the API and each \
        permission in words; approving lets the agent's next poll take one token). Requests \
        for unknown people (decoys) are never listed. Authenticated by the hosted session cookie, or by a person's token \
        with `ciba:approve` issued in a session that is still live; served while \
        `[ciba].enabled`.",
    responses(
        (status = 200, description = "The pending requests.", body = BackchannelRequestList),
    ),
    security(("session" = []), ("person_token" = ["ciba:approve"])),
)]
async fn list(
    State(state): State<IdentityState>,
    person: SignedInPerson,
) -> Result<Json<BackchannelRequestList>, Problem> {
    let pending = state
        .authorize
        .backchannel_requests(&person.tenant.tenant, &person.session)
        .await
        .map_err(unavailable)?;
    Ok(Json(BackchannelRequestList {
        requests: pending
            .into_iter()
            .map(|p| BackchannelRequestView {
                id: p.id.to_string(),
                client_name: p.client_name,
                scopes: p.scopes,
                binding_message: p.binding_message,
                authorization_details: p.authorization_details.map(|d| d.to_value()),
                details: p
                    .details
                    .into_iter()
                    .map(|d| DetailWords {
                        description: d.description,
                        lines: d
                            .lines
                            .into_iter()
                            .map(|(label, value)| DetailLine { label, value })
                            .collect(),
                    })
                    .collect(),
                expires_at: p.expires_at,
                agent: p.agent.map(|a| AgentUseView {
                    agent_id: a.agent_id.to_string(),
                    delegation_id: a.delegation_id.to_string(),
                    resource: a.resource,
                    resource_name: a.resource_name,
                    permissions: a
                        .permissions
                        .into_iter()
                        .map(|(name, description)| PermissionWords { name, description })
                        .collect(),
                }),
            })
            .collect(),
    }))
}

async fn decide(
    state: &IdentityState,
    person: &SignedInPerson,
    raw: &str,
    allow: bool,
) -> Result<Json<DecisionView>, Problem> {
    let gone = || Problem::not_found("no such pending request for you");
    let id = BackchannelRequestId::parse(raw).map_err(|_| gone())?;
    let decision = state
        .authorize
        .decide_backchannel(
            &person.tenant.tenant,
            &person.tenant.issuer,
            &person.session,
            &id,
            allow,
        )
        .await
        .map_err(unavailable)?;
    let status = match decision {
        BackchannelDecision::Approved => "approved",
        BackchannelDecision::Denied => "denied",
        BackchannelDecision::Gone => return Err(gone()),
    };
    Ok(Json(DecisionView {
        id: id.to_string(),
        status,
    }))
}

/// Approves a pending request.
#[utoipa::path(
    post, path = "/api/v1/identity/ciba/requests/{id}/approve", tag = tags::IDENTITY,
    operation_id = "approveCibaRequest",
    summary = "Approve a pending CIBA request",
    description = "The person of the session approves request `id`: the application's next \
        poll of the token endpoint gets the tokens, carrying this session's authentication \
        (`auth_time`, `acr`, `amr`); for an agent's request, the agent's next poll gets one \
        access token acting for the person on that delegation. Only the person's own pending, \
        unexpired requests can be approved; anything else is 404. With the session cookie, requires an `Origin` header \
        equal to the tenant's origin (403 otherwise); a person's token needs none.",
    params(("id" = String, Path, description = "The request's id (`cib_…`).")),
    responses(
        (status = 200, description = "Approved.", body = DecisionView),
    ),
    security(("session" = []), ("person_token" = ["ciba:approve"])),
)]
async fn approve(
    State(state): State<IdentityState>,
    person: SignedInPerson,
    Path(id): Path<String>,
) -> Result<Json<DecisionView>, Problem> {
    decide(&state, &person, &id, true).await
}

/// Denies a pending request.
#[utoipa::path(
    post, path = "/api/v1/identity/ciba/requests/{id}/deny", tag = tags::IDENTITY,
    operation_id = "denyCibaRequest",
    summary = "Deny a pending CIBA request",
    description = "The person of the session denies request `id`: the application's next poll \
        gets `access_denied`. Same rules as approval.",
    params(("id" = String, Path, description = "The request's id (`cib_…`).")),
    responses(
        (status = 200, description = "Denied.", body = DecisionView),
    ),
    security(("session" = []), ("person_token" = ["ciba:approve"])),
)]
async fn deny(
    State(state): State<IdentityState>,
    person: SignedInPerson,
    Path(id): Path<String>,
) -> Result<Json<DecisionView>, Problem> {
    decide(&state, &person, &id, false).await
}
