//! The device verification page, `/oauth/device/verify` (RFC 8628 §3.3): where a person types
//! the code a device shows (or arrives with it filled in from `verification_uri_complete`).
//!
//! Its GET only shows the form (a prefetched link approves nothing); its POST (CSRF-checked)
//! hands the typed code to the engine ([`AuthorizeEndpoint::enter_user_code`]), whose answer is
//! the authorization endpoint's: sign in, step up, consent (always, with the code shown again),
//! then back here with `?result=approved`, or with `?error=…` when the person declined or the
//! request was refused. Served only while `[device_authorization].enabled`.
//!
//! [`AuthorizeEndpoint::enter_user_code`]: svc_oauth::authorize::AuthorizeEndpoint::enter_user_code

use super::authorize::{origin, outcome};
use super::csrf::{self, CsrfToken};
use super::form::{self, Fields};
use super::view::{Button, Field, Form, Page};
use super::{Ctx, HostedState};
use crate::error::page as error;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use http::StatusCode;
use svc_oauth::authorize::DeviceEntry;
use svc_oauth::device::VERIFICATION_PATH;

/// `GET /oauth/device/verify[?user_code=…]`, or the outcome with `?result=approved` / `?error=…`.
pub(crate) async fn page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let s = ctx.s();
    let query = Fields::from_query(query.as_deref());
    if query.get("result") == Some("approved") {
        return Page::new(s.device.approved_title)
            .text(s.device.approved)
            .render(&ctx.chrome);
    }
    if let Some(code) = query.get("error") {
        // Only the code is read, never the description: this page is a redirect target
        // anyone can link to, and must not display what a link says.
        let text = if code == "access_denied" {
            s.device.declined
        } else {
            s.device.not_approved
        };
        return Page::new(s.device.refused_title)
            .status(StatusCode::FORBIDDEN)
            .text(text)
            .render(&ctx.chrome);
    }
    let typed = query.get("user_code").unwrap_or_default();
    code_form(&state, &ctx, typed, None, StatusCode::OK)
}

/// `POST /oauth/device/verify`: looks the code up and continues as the engine says.
pub(crate) async fn submit(State(state): State<HostedState>, ctx: Ctx, body: Body) -> Response {
    let fields = match form::read(&ctx.headers, body, true).await {
        Ok(fields) => fields,
        Err(e) => return error::form(&ctx, e),
    };
    if !csrf::verify(&ctx.headers, ctx.cookies, fields.get("csrf")) {
        return error::csrf(&ctx);
    }
    let Some(settings) = state.device.as_deref() else {
        return error::not_found(&ctx);
    };
    let typed = fields.get("user_code").unwrap_or_default();
    let session = match ctx.signed_in(&state.authn).await {
        Ok(found) => found.map(|(session, _)| session),
        Err(page) => return page,
    };
    let entry = state
        .authorize
        .enter_user_code(
            &ctx.current.tenant,
            &ctx.current.issuer,
            typed,
            (session.as_ref(), origin(&ctx)),
            settings,
        )
        .await;
    let s = ctx.s();
    match entry {
        DeviceEntry::Continue(next) => outcome(&ctx, next),
        DeviceEntry::Unknown => code_form(
            &state,
            &ctx,
            typed,
            Some(s.device.unknown),
            StatusCode::BAD_REQUEST,
        ),
        DeviceEntry::TooManyAttempts => code_form(
            &state,
            &ctx,
            "",
            Some(s.device.too_many),
            StatusCode::TOO_MANY_REQUESTS,
        ),
    }
}

/// The form, with `typed` filled in and `problem` on the field.
fn code_form(
    state: &HostedState,
    ctx: &Ctx,
    typed: &str,
    problem: Option<&'static str>,
    status: StatusCode,
) -> Response {
    let s = ctx.s();
    let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
    let mut field = Field::user_code(s, typed);
    if let Some(problem) = problem {
        field = field.error(problem);
    }
    let form = Form::new(VERIFICATION_PATH, csrf.value())
        .field(field)
        .button(Button::primary(s.device.submit));
    let mut response = Page::new(s.device.title)
        .status(status)
        .text(s.device.intro)
        .form(form)
        .render(&ctx.chrome);
    csrf.attach(&mut response, ctx.cookies);
    response
}
