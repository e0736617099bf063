//! The asking browser's side of a recovery: `/auth/recovery` asks for one, and
//! `/auth/recovery/status` follows it and, once guardians approved and the waiting period is
//! over, sets the new password.
//!
//! Asking always answers the same way: the engine returns a secret (a decoy when nothing
//! started), which goes into the recovery cookie, and the browser is sent to the status page.
//! The cookie lives as long as a recovery can (collecting approvals, then waiting), and is
//! cleared when the recovery is over or completed. With a CAPTCHA configured, the request form
//! carries the widget of the forgot-password action, whose budget the engine shares.

use super::settings;
use crate::error::page::{self as error, Refusal};
use crate::hosted::account::human_time;
use crate::hosted::links::{checked_form, with_csrf};
use crate::hosted::sign_in::{captcha_answer, captcha_widget, page_host};
use crate::hosted::view::{Button, Field, Form, Page};
use crate::hosted::{Ctx, HostedState, cookies, see_other};
use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use svc_authn::{AuthnError, CaptchaAction, RecoveryProgress};

const START: &str = "/auth/recovery";
const STATUS: &str = "/auth/recovery/status";

/// The request form, with what was typed and why it was refused, if it was.
fn start_form(state: &HostedState, ctx: &Ctx, email: &str, refusal: Option<&Refusal>) -> Response {
    let s = ctx.s();
    let response = with_csrf(state, ctx, |csrf| {
        let mut field = Field::email(s, email);
        let mut page = Page::new(s.recovery.title).text(s.recovery.start_intro);
        if let Some(refusal) = refusal {
            if let Some(alert) = refusal.alert() {
                page = page.alert(alert);
            }
            if let Some(message) = refusal.on("email") {
                field = field.error(message);
            }
        }
        page.form(
            Form::new(START, csrf)
                .field(field)
                .captcha(captcha_widget(
                    state,
                    ctx,
                    CaptchaAction::ForgotPassword,
                    refusal,
                ))
                .button(Button::primary(s.recovery.start_submit)),
        )
        .link(None, s.sign_in_link, "/auth/sign-in".to_owned())
    });
    match refusal {
        Some(refusal) => refusal.finish(response),
        None => response,
    }
}

/// `GET /auth/recovery`.
pub(crate) async fn start_page(State(state): State<HostedState>, ctx: Ctx) -> Response {
    if let Err(page) = settings(&state, &ctx) {
        return page;
    }
    start_form(&state, &ctx, "", None)
}

/// `POST /auth/recovery`: asks the engine, keeps its secret in the recovery cookie and goes on
/// to the status page (the same answer whether the account exists).
pub(crate) async fn start_submit(
    State(state): State<HostedState>,
    ctx: Ctx,
    body: Body,
) -> Response {
    let lifetime = match settings(&state, &ctx) {
        Ok(settings) => settings.request_lifetime + settings.waiting_period,
        Err(page) => return page,
    };
    let fields = match checked_form(&ctx, body).await {
        Ok(fields) => fields,
        Err(page) => return page,
    };
    let email = fields.get("email").unwrap_or_default();
    let host = page_host(&ctx);
    let answer = captcha_answer(&state, &fields, host.as_deref());
    match state
        .authn
        .start_recovery(
            &ctx.current.tenant,
            &ctx.current.issuer,
            email,
            &ctx.client,
            answer,
        )
        .await
    {
        Ok(secret) => {
            let mut response = see_other(STATUS);
            cookies::append(&mut response, ctx.cookies.set_recovery(&secret, lifetime));
            response
        }
        Err(e) => match error::refusal(&ctx, e) {
            Ok(refusal) => start_form(&state, &ctx, email, Some(&refusal)),
            Err(page) => page,
        },
    }
}

/// The form that sets the new password, once the recovery is ready.
fn ready_form(state: &HostedState, ctx: &Ctx, refusal: Option<&Refusal>) -> Response {
    let s = ctx.s();
    let response = with_csrf(state, ctx, |csrf| {
        let mut page = Page::new(s.recovery.title).text(s.recovery.ready);
        let mut password = Field::new_password(s);
        if let Some(refusal) = refusal {
            if let Some(alert) = refusal.alert() {
                page = page.alert(alert);
            }
            if let Some(message) = refusal.on("password") {
                password = password.error(message);
            }
        }
        page.form(
            Form::new(STATUS, csrf)
                .field(password)
                .button(Button::primary(s.recovery.ready_submit)),
        )
    });
    match refusal {
        Some(refusal) => refusal.finish(response),
        None => response,
    }
}

/// The page of a recovery that is over; the cookie goes with it.
fn closed(ctx: &Ctx) -> Response {
    let s = ctx.s();
    let mut response = Page::new(s.recovery.title)
        .text(s.recovery.closed)
        .link(None, s.recovery.start_again_link, START.to_owned())
        .render(&ctx.chrome);
    cookies::append(&mut response, ctx.cookies.clear_recovery());
    response
}

/// `GET /auth/recovery/status`: where the recovery this browser asked for stands.
pub(crate) async fn status_page(State(state): State<HostedState>, ctx: Ctx) -> Response {
    if let Err(page) = settings(&state, &ctx) {
        return page;
    }
    let Some(secret) = ctx.cookies.recovery(&ctx.headers) else {
        return see_other(START);
    };
    let progress = match state
        .authn
        .recovery_progress(&ctx.current.tenant, &secret)
        .await
    {
        Ok(progress) => progress,
        Err(e) => return error::fatal(&ctx, e),
    };
    let s = ctx.s();
    let r = s.recovery;
    match progress {
        RecoveryProgress::Collecting { approvals, needed } => Page::new(r.title)
            .line(
                r.collecting,
                Some(format!("{approvals} {} {needed}", r.count_of)),
                "",
            )
            .text(r.collecting_hint)
            .render(&ctx.chrome),
        RecoveryProgress::Waiting { ready_at } => Page::new(r.title)
            .line(r.waiting, Some(human_time(ready_at, s.utc)), "")
            .text(r.waiting_hint)
            .render(&ctx.chrome),
        RecoveryProgress::Ready => ready_form(&state, &ctx, None),
        RecoveryProgress::Closed => closed(&ctx),
    }
}

/// `POST /auth/recovery/status`: sets the new password; the engine removes the lost factors and
/// ends every session of the person, and the browser goes on to sign in.
pub(crate) async fn status_submit(
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
    let Some(secret) = ctx.cookies.recovery(&ctx.headers) else {
        return see_other(START);
    };
    let password = fields.get("password").unwrap_or_default();
    match state
        .authn
        .complete_recovery(&ctx.current.tenant, &secret, password, &ctx.client)
        .await
    {
        Ok(_) => {
            let mut response = see_other("/auth/sign-in?recovered=1");
            cookies::append(&mut response, ctx.cookies.clear_recovery());
            // Every session of the person ended; this browser's cookie goes too.
            cookies::append(&mut response, ctx.cookies.clear_session());
            response
        }
        // Still collecting or waiting (a stale tab): the status page says which.
        Err(AuthnError::RecoveryNotReady) => see_other(STATUS),
        Err(AuthnError::InvalidLink) => {
            let mut response = error::invalid_link(&ctx);
            cookies::append(&mut response, ctx.cookies.clear_recovery());
            response
        }
        Err(e) => match error::refusal(&ctx, e) {
            Ok(refusal) => ready_form(&state, &ctx, Some(&refusal)),
            Err(page) => page,
        },
    }
}
