//! The mailed recovery links: a guardian's approval (`/auth/recovery/approve`) and the owner's
//! way to stop a recovery they did not ask for (`/auth/recovery/cancel`).
//!
//! As with every emailed link, the GET only shows a form and the POST spends the token. The
//! approval page names the account and warns the guardian, before they can approve, to do so
//! only when its owner asked them in person: approving is what hands the account over. The
//! cancel page does not look the token up (a GET must not tell a prefetching scanner anything);
//! its POST does.

use super::settings;
use crate::error::page as error;
use crate::hosted::form::Fields;
use crate::hosted::links::{checked_form, token_of, with_csrf};
use crate::hosted::view::{Button, Form, Page};
use crate::hosted::{Ctx, HostedState};
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use http::StatusCode;
use svc_authn::AuthnError;

const APPROVE: &str = "/auth/recovery/approve";
const CANCEL: &str = "/auth/recovery/cancel";

/// `GET /auth/recovery/approve?token=…`: whose account, the warning, and the button.
pub(crate) async fn approve_page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    if let Err(page) = settings(&state, &ctx) {
        return page;
    }
    let query = Fields::from_query(query.as_deref());
    let Some(token) = token_of(&query) else {
        return error::invalid_link(&ctx);
    };
    let request = match state
        .authn
        .recovery_approval(&ctx.current.tenant, token)
        .await
    {
        Ok(request) => request,
        Err(e) => return error::fatal(&ctx, e),
    };
    let owner = match &request.owner_name {
        Some(name) => format!("{name} <{}>", request.owner.as_str()),
        None => request.owner.as_str().to_owned(),
    };
    let r = ctx.s().recovery;
    with_csrf(&state, &ctx, |csrf| {
        Page::new(r.approve_title)
            .line(r.approve_owner, Some(owner), "")
            .text(r.approve_intro)
            .alert(r.approve_warning)
            .form(
                Form::new(APPROVE, csrf)
                    .hidden("token", Some(token))
                    .button(Button::primary(r.approve_submit)),
            )
    })
}

/// `POST /auth/recovery/approve`: records the approval. The browser's session, if any, goes
/// along: the owner of the account cannot approve their own recovery.
pub(crate) async fn approve_submit(
    State(state): State<HostedState>,
    ctx: Ctx,
    body: Body,
) -> Response {
    if let Err(page) = settings(&state, &ctx) {
        return page;
    }
    let fields = match checked_form(&ctx, body).await {
        Ok(fields) => fields,
        Err(page) => return page,
    };
    let Some(token) = token_of(&fields) else {
        return error::invalid_link(&ctx);
    };
    let signed_in = match ctx.signed_in(&state.authn).await {
        Ok(found) => found,
        Err(page) => return page,
    };
    let r = ctx.s().recovery;
    match state
        .authn
        .approve_recovery(
            (&ctx.current.tenant, &ctx.current.issuer),
            token,
            signed_in.as_ref().map(|(_, user)| &user.id),
            &ctx.client,
        )
        .await
    {
        Ok(()) => Page::new(r.approve_title)
            .text(r.approved)
            .render(&ctx.chrome),
        Err(AuthnError::OwnRecovery) => {
            error::message(&ctx, StatusCode::FORBIDDEN, r.approve_title, r.own_recovery)
        }
        Err(e) => error::fatal(&ctx, e),
    }
}

/// `GET /auth/recovery/cancel?token=…`: the button that stops the recovery.
pub(crate) async fn cancel_page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    if let Err(page) = settings(&state, &ctx) {
        return page;
    }
    let query = Fields::from_query(query.as_deref());
    let Some(token) = token_of(&query) else {
        return error::invalid_link(&ctx);
    };
    let r = ctx.s().recovery;
    with_csrf(&state, &ctx, |csrf| {
        Page::new(r.stop_title).text(r.stop_intro).form(
            Form::new(CANCEL, csrf)
                .hidden("token", Some(token))
                .button(Button::primary(r.stop_submit)),
        )
    })
}

/// `POST /auth/recovery/cancel`: stops the recovery the token belongs to.
pub(crate) async fn cancel_submit(
    State(state): State<HostedState>,
    ctx: Ctx,
    body: Body,
) -> Response {
    if let Err(page) = settings(&state, &ctx) {
        return page;
    }
    let fields = match checked_form(&ctx, body).await {
        Ok(fields) => fields,
        Err(page) => return page,
    };
    let Some(token) = token_of(&fields) else {
        return error::invalid_link(&ctx);
    };
    match state
        .authn
        .cancel_recovery(&ctx.current.tenant, token, &ctx.client)
        .await
    {
        Ok(()) => {
            let r = ctx.s().recovery;
            Page::new(r.stop_title).text(r.stopped).render(&ctx.chrome)
        }
        Err(e) => error::fatal(&ctx, e),
    }
}
