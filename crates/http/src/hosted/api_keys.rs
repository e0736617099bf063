//! The API keys page (`/auth/account/api-keys`, issue 19 item 5): the person's keys that act as
//! them at the tenant's APIs — listed newest first, revoked with a button — and a creation form
//! per API the tenant's policy offers, with a checkbox per permission the person holds there.
//! A new key is shown once on the answer to the POST (hosted pages are `no-store`); only its
//! keyed hash is kept. Thin handlers over `svc_manage::api_keys::own`, which holds the rules.
//!
//! Served while the deployment allows keys acting as a person (`[api_keys].enabled` and
//! `.subject_keys`); a tenant whose policy is off (or a person who may not sign in) gets the
//! 404 page, and the account page shows no link. Every POST carries the CSRF token; a form may
//! repeat only `permission`.

use super::csrf::{self, CsrfToken};
use super::form::{self, Fields};
use super::view::{ApiKeyCreatedView, ApiKeyRow, ApiKeysView, OfferedApiView};
use super::{Ctx, HostedState, see_other};
use crate::RequestId;
use crate::error::page::{self as error, message};
use axum::body::Body;
use axum::extract::{Extension, RawQuery, State};
use axum::response::Response;
use http::StatusCode;
use std::collections::HashSet;
use std::sync::Arc;
use svc_domain::Agent;
use svc_domain::UserId;
use svc_manage::api_keys::ApiKeys;
use svc_manage::api_keys::own::{self, NewOwnKey, OfferedApi, OwnKey, OwnKeyCreated, OwnKeyOffer};
use svc_manage::{ManageContext, ManageError, RequestMeta};
use time::format_description::well_known::Rfc3339;

/// The page's path.
pub(crate) const PATH: &str = "/auth/account/api-keys";

/// What the page needs: the use cases' context and the deployment's key service.
#[derive(Clone)]
pub struct OwnKeys {
    /// Store, clock, randomness, change hooks.
    pub manage: ManageContext,
    /// Hashing, limits, the positive cache.
    pub keys: Arc<ApiKeys>,
}

/// The only field a form may repeat.
const PERMISSION_FIELD: &str = "permission";

/// Reads a POSTed form and checks its CSRF token; only `permission` may repeat.
async fn checked_form(ctx: &Ctx, body: Body) -> Result<Fields, Response> {
    let fields = form::read(&ctx.headers, body, false)
        .await
        .map_err(|e| error::form(ctx, e))?;
    let mut seen = HashSet::new();
    let repeated = fields
        .pairs()
        .iter()
        .any(|(n, _)| n != PERMISSION_FIELD && !seen.insert(n.as_str()));
    if repeated {
        return Err(error::form(ctx, form::FormError::Malformed));
    }
    if !csrf::verify(&ctx.headers, ctx.cookies, fields.get("csrf")) {
        return Err(error::csrf(ctx));
    }
    Ok(fields)
}

/// 503 (store) or 500; the cause is logged, never shown.
fn fault(ctx: &Ctx, e: &ManageError) -> Response {
    let status = if matches!(e, ManageError::Unavailable(_)) {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    };
    tracing::error!(error = %e, status = status.as_u16(), "API keys page failed");
    let s = ctx.s();
    message(ctx, status, s.server_error_title, s.server_error)
}

fn meta(ctx: &Ctx, request_id: Option<Extension<RequestId>>) -> RequestMeta {
    RequestMeta {
        request_id: request_id.map(|Extension(id)| id.to_string()),
        client_ip: ctx.client.ip.map(|ip| ip.to_string()),
    }
}

/// The service and the signed-in person; otherwise the response to send instead (404 while
/// the deployment does not serve the page, the sign-in page without a session).
async fn signed_in<'s>(
    state: &'s HostedState,
    ctx: &Ctx,
) -> Result<(&'s OwnKeys, UserId), Response> {
    let Some(service) = state.own_keys.as_ref() else {
        return Err(error::not_found(ctx));
    };
    match ctx.signed_in(&state.authn).await? {
        Some((_, user)) => Ok((service, user.id)),
        None => Err(see_other("/auth/sign-in")),
    }
}

/// What the page offers `person`; the 404 page when the tenant's policy offers nothing.
async fn offer_for(ctx: &Ctx, service: &OwnKeys, person: &UserId) -> Result<OwnKeyOffer, Response> {
    let tenant = &ctx.current.tenant.id;
    match own::offer(&service.manage, &service.keys, tenant, person).await {
        Ok(Some(offer)) => Ok(offer),
        Ok(None) => Err(error::not_found(ctx)),
        Err(e) => Err(fault(ctx, &e)),
    }
}

/// The service, the signed-in person and what the page offers them; otherwise the response to
/// send instead.
async fn signed_in_offer<'s>(
    state: &'s HostedState,
    ctx: &Ctx,
) -> Result<(&'s OwnKeys, UserId, OwnKeyOffer), Response> {
    let (service, person) = signed_in(state, ctx).await?;
    let offer = offer_for(ctx, service, &person).await?;
    Ok((service, person, offer))
}

/// Whether the account page links here: the page is served and the tenant's policy offers
/// keys (one read of the policy; the page itself works out the rest).
pub(crate) async fn offered(state: &HostedState, ctx: &Ctx) -> Result<bool, Response> {
    let Some(service) = state.own_keys.as_ref() else {
        return Ok(false);
    };
    own::is_offered(&service.manage, &service.keys, &ctx.current.tenant.id)
        .await
        .map_err(|e| fault(ctx, &e))
}

/// One creation form per API for the person, then per API for each of their agents.
fn offered_views(offer: &OwnKeyOffer) -> Vec<OfferedApiView> {
    let max = u64::from(offer.max_per_person);
    let view = |o: &OfferedApi, agent: Option<&Agent>, live: u64| OfferedApiView {
        form_id: match agent {
            Some(a) => format!("{}-{}", a.id, o.api.id),
            None => o.api.id.to_string(),
        },
        id: o.api.id.to_string(),
        name: o.api.name.clone(),
        agent: agent.map(|a| (a.id.to_string(), a.name.clone())),
        permissions: o
            .held
            .iter()
            .map(|p| (p.name.as_str().to_owned(), p.description.clone()))
            .collect(),
        at_limit: live >= max,
    };
    let own = offer.apis.iter().map(|o| view(o, None, offer.live));
    let agents = offer
        .agents
        .iter()
        .flat_map(|a| a.apis.iter().map(|o| view(o, Some(&a.agent), a.live)));
    own.chain(agents).collect()
}

fn rows(ctx: &Ctx, listed: &[OwnKey]) -> Vec<ApiKeyRow> {
    let s = ctx.s();
    let t = s.api_keys;
    listed
        .iter()
        .map(|k| {
            let expires_at = k.view.expires_at;
            ApiKeyRow {
                id: k.view.id.clone(),
                name: k.view.name.clone(),
                api: k.api_name.clone().unwrap_or_default(),
                agent: k.agent_name.clone(),
                permissions: k.view.scopes.join(" "),
                live: k.live,
                expires: expires_at
                    .map(|at| super::account::human_time(at, s.utc))
                    .unwrap_or_default(),
                expires_iso: expires_at
                    .and_then(|at| at.format(&Rfc3339).ok())
                    .unwrap_or_default(),
                used: k.view.last_used_at.map_or_else(
                    || t.never_used.to_owned(),
                    |at| super::account::human_time(at, s.utc),
                ),
            }
        })
        .collect()
}

/// The list and the forms, with `status`, a notice or an alert.
async fn render(
    state: &HostedState,
    ctx: &Ctx,
    (service, person, offer): (&OwnKeys, UserId, OwnKeyOffer),
    status: StatusCode,
    notice: Option<&'static str>,
    alert: Option<String>,
) -> Response {
    let listed = match own::keys_of(&service.manage, &ctx.current.tenant.id, &person).await {
        Ok(listed) => listed,
        Err(e) => return fault(ctx, &e),
    };
    let t = ctx.s().api_keys;
    let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
    let view = ApiKeysView {
        chrome: &ctx.chrome,
        t,
        title: t.title,
        path: PATH,
        notice,
        alert,
        csrf: csrf.value(),
        rows: rows(ctx, &listed),
        apis: offered_views(&offer),
        max_days: offer.max_lifetime_days,
    };
    let mut response = view.respond(status);
    csrf.attach(&mut response, ctx.cookies);
    response
}

/// `GET /auth/account/api-keys[?revoked=1]`.
pub(crate) async fn page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let found = match signed_in_offer(&state, &ctx).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let revoked = Fields::from_query(query.as_deref()).get("revoked") == Some("1");
    let notice = revoked.then_some(ctx.s().api_keys.revoked);
    render(&state, &ctx, found, StatusCode::OK, notice, None).await
}

/// `POST /auth/account/api-keys`: `action=create` (`resource`, `name`, `permission`…, `days`)
/// or `action=revoke` (`key`).
pub(crate) async fn submit(
    State(state): State<HostedState>,
    ctx: Ctx,
    request_id: Option<Extension<RequestId>>,
    body: Body,
) -> Response {
    let fields = match checked_form(&ctx, body).await {
        Ok(fields) => fields,
        Err(page) => return page,
    };
    let meta = meta(&ctx, request_id);
    match fields.get("action") {
        Some("create") => create(&state, &ctx, &fields, &meta).await,
        Some("revoke") => revoke(&state, &ctx, &fields, &meta).await,
        _ => error::form(&ctx, form::FormError::Malformed),
    }
}

async fn create(state: &HostedState, ctx: &Ctx, fields: &Fields, meta: &RequestMeta) -> Response {
    let (service, person) = match signed_in(state, ctx).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let input = NewOwnKey {
        name: fields.get("name").unwrap_or_default().to_owned(),
        resource: fields.get("resource").unwrap_or_default().to_owned(),
        permissions: fields
            .pairs()
            .iter()
            .filter(|(n, _)| n == PERMISSION_FIELD)
            .map(|(_, v)| v.clone())
            .collect(),
        // Not a number is refused like zero: out of range.
        lifetime_days: fields
            .get("days")
            .and_then(|d| d.trim().parse().ok())
            .unwrap_or(0),
        agent: fields.non_empty("agent").map(str::to_owned),
    };
    let tenant = &ctx.current.tenant.id;
    let (status, alert) =
        match own::create_own(&service.manage, &service.keys, tenant, &person, meta, input).await {
            Ok(OwnKeyCreated { created, api_name }) => {
                let t = ctx.s().api_keys;
                return ApiKeyCreatedView {
                    chrome: &ctx.chrome,
                    t,
                    title: t.created_title,
                    path: PATH,
                    key: &created.key,
                    name: &created.view.name,
                    api: &api_name,
                    permissions: created.view.scopes.join(" "),
                }
                .respond();
            }
            Err(ManageError::Invalid { field, message }) => {
                (StatusCode::BAD_REQUEST, format!("{field}: {message}"))
            }
            Err(ManageError::Conflict(message)) => (StatusCode::CONFLICT, message),
            Err(ManageError::NotFound) => return error::not_found(ctx),
            Err(e) => return fault(ctx, &e),
        };
    // Refused: the page again, with the reason (the offer is read only now, on this path).
    match offer_for(ctx, service, &person).await {
        Ok(offer) => {
            render(
                state,
                ctx,
                (service, person, offer),
                status,
                None,
                Some(alert),
            )
            .await
        }
        Err(response) => response,
    }
}

async fn revoke(state: &HostedState, ctx: &Ctx, fields: &Fields, meta: &RequestMeta) -> Response {
    // Revoking works even when the policy went off since: a person may always take back a
    // credential in their name.
    let (service, person) = match signed_in(state, ctx).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let Some(id) = fields.non_empty("key") else {
        return error::form(ctx, form::FormError::Malformed);
    };
    let tenant = &ctx.current.tenant.id;
    match own::revoke_own(&service.manage, &service.keys, tenant, &person, meta, id).await {
        // Another person's, unknown or already ended: the same list, without the notice.
        Ok(true) => see_other(&format!("{PATH}?revoked=1")),
        Ok(false) => see_other(PATH),
        Err(e) => fault(ctx, &e),
    }
}
