//! The backchannel approval page, `/auth/ciba` (OpenID CIBA, poll mode): where a person sees
//! the oldest sign-in request a client made for them (its name, the binding message to compare,
//! the scopes, RAR details in words) and approves or denies it; the mail a request sends points
//! here.
//!
//! Its GET only shows (nothing is decided by opening a link); its POST is CSRF-checked and
//! decides through the engine ([`AuthorizeEndpoint::decide_backchannel`]). Someone not signed
//! in is asked to sign in, and the sign-in comes back here (the return cookie, as for
//! invitations: `super::join`). Served only while `[ciba].enabled`.
//!
//! [`AuthorizeEndpoint::decide_backchannel`]: svc_oauth::authorize::AuthorizeEndpoint::decide_backchannel

use super::links::{checked_form, with_csrf};
use super::view::{Button, Form, Page};
use super::{Ctx, HostedState, cookies, see_other};
use crate::error::page as error;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use http::StatusCode;
use svc_domain::BackchannelRequestId;
use svc_oauth::authorize::BackchannelDecision;
use svc_oauth::backchannel::APPROVAL_PATH;

/// The return cookie's value that brings a sign-in back here.
pub(crate) const RETURN_VALUE: &str = "ciba";

/// How long a sign-in started here still comes back.
const RETURN_FOR: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// `GET /auth/ciba[?result=…]`.
pub(crate) async fn page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let s = ctx.s();
    let session = match ctx.signed_in(&state.authn).await {
        Ok(Some((session, _))) => session,
        Ok(None) => {
            let mut response = Page::new(s.ciba.title)
                .text(s.ciba.sign_in_first)
                .link(None, s.ciba.sign_in_link, "/auth/sign-in".to_owned())
                .render(&ctx.chrome);
            cookies::append(
                &mut response,
                ctx.cookies.set_join(RETURN_VALUE, RETURN_FOR),
            );
            return response;
        }
        Err(page) => return page,
    };
    let result = super::form::Fields::from_query(query.as_deref());
    let said = match result.get("result") {
        Some("approved") => Some(s.ciba.approved),
        Some("denied") => Some(s.ciba.denied),
        Some("gone") => Some(s.ciba.gone),
        _ => None,
    };
    let pending = match state
        .authorize
        .backchannel_requests(&ctx.current.tenant, &session)
        .await
    {
        Ok(pending) => pending,
        Err(e) => return unavailable(&ctx, &e),
    };
    let Some(first) = pending.into_iter().next() else {
        let mut page = Page::new(s.ciba.title);
        if let Some(said) = said {
            page = page.alert(said);
        }
        return page.text(s.ciba.none).render(&ctx.chrome);
    };
    with_csrf(&state, &ctx, |csrf| {
        let mut page = Page::new(s.ciba.title);
        if let Some(said) = said {
            page = page.alert(said);
        }
        let tail = match &first.agent {
            Some(_) => s.ciba.agent_asks_tail,
            None => s.ciba.asks_tail,
        };
        page = page.line(s.ciba.asks, Some(first.client_name.clone()), tail);
        if let Some(message) = &first.binding_message {
            page = page
                .detail(s.ciba.binding_label, message.clone())
                .text(s.ciba.binding_hint);
        }
        if let Some(agent) = &first.agent {
            page = page.detail(s.ciba.agent_at_label, agent.resource_name.clone());
            for (name, description) in &agent.permissions {
                page = page.item(
                    description.clone().unwrap_or_else(|| name.clone()),
                    Some(name.clone()),
                );
            }
        } else {
            for scope in &first.scopes {
                page = match s.scope(scope) {
                    Some(description) => page.item(description, None),
                    None => page.item(s.scope_unknown, Some(scope.clone())),
                };
            }
        }
        for detail in &first.details {
            page = page.item(super::authorize::detail_text(detail), None);
        }
        page.form(
            Form::new(APPROVAL_PATH, csrf)
                .hidden("request", Some(first.id.as_str()))
                .button(Button::choice("decision", "approve", s.ciba.approve, true))
                .button(Button::choice("decision", "deny", s.ciba.deny, false)),
        )
    })
}

/// `POST /auth/ciba`: approves or denies one request, then shows the next.
pub(crate) async fn submit(State(state): State<HostedState>, ctx: Ctx, body: Body) -> Response {
    let fields = match checked_form(&ctx, body).await {
        Ok(fields) => fields,
        Err(page) => return page,
    };
    let allow = match fields.get("decision") {
        Some("approve") => true,
        Some("deny") => false,
        _ => return error::form(&ctx, super::form::FormError::Malformed),
    };
    let Some(id) = fields
        .get("request")
        .and_then(|v| BackchannelRequestId::parse(v).ok())
    else {
        return error::form(&ctx, super::form::FormError::Malformed);
    };
    let session = match ctx.signed_in(&state.authn).await {
        Ok(Some((session, _))) => session,
        Ok(None) => {
            let s = ctx.s();
            return error::message(
                &ctx,
                StatusCode::UNAUTHORIZED,
                s.ciba.title,
                s.ciba.sign_in_first,
            );
        }
        Err(page) => return page,
    };
    let decided = state
        .authorize
        .decide_backchannel(
            &ctx.current.tenant,
            &ctx.current.issuer,
            &session,
            &id,
            allow,
        )
        .await;
    let result = match decided {
        Ok(BackchannelDecision::Approved) => "approved",
        Ok(BackchannelDecision::Denied) => "denied",
        Ok(BackchannelDecision::Gone) => "gone",
        Err(e) => return unavailable(&ctx, &e),
    };
    see_other(&format!("{APPROVAL_PATH}?result={result}"))
}

/// Where a sign-in without an authorization request continues when it started on this page:
/// back here, with the `Set-Cookie` that forgets the return cookie.
pub(crate) fn return_after_sign_in(ctx: &Ctx) -> Option<(String, Option<http::HeaderValue>)> {
    (ctx.cookies.join(&ctx.headers)? == RETURN_VALUE)
        .then(|| (APPROVAL_PATH.to_owned(), ctx.cookies.clear_join()))
}

/// 503: the store failed; nothing was decided.
fn unavailable(ctx: &Ctx, e: &svc_store::StoreError) -> Response {
    tracing::warn!(error = %e, "backchannel approval page failed on the store");
    error::authorize_page(
        ctx,
        svc_oauth::error::ErrorPageKind::Unavailable,
        "temporarily_unavailable".into(),
        "the store is unavailable".into(),
    )
}
