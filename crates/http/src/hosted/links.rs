//! The pages behind emailed one-time links and the request for one: email verification,
//! forgot/reset password, invitation acceptance.
//!
//! A link's GET only shows a form; the token is spent by its POST, so mail scanners that
//! prefetch links cannot consume it. The forgot-password answer is the same page whether or not
//! the account exists. With a CAPTCHA configured, the forgot-password form always carries the
//! provider's widget and the engine verifies its token before anything else (a missing,
//! refused or replayed one shows the form again, and nothing is written or mailed).

use super::csrf::{self, CsrfToken};
use super::form::{self, Fields};
use super::sign_in::{captcha_answer, captcha_widget, page_host, signed_in_response};
use super::view::{Button, Field, Form, Page};
use super::{Ctx, HostedState, cookies, interaction_param, path_with, see_other};
use crate::error::page::{self as error, Refusal};
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use svc_authn::CaptchaAction;

/// Longest link token accepted (ours are far shorter); longer ones are not worth a lookup.
const MAX_TOKEN: usize = 512;

pub(super) fn token_of(fields: &Fields) -> Option<&str> {
    fields.non_empty("token").filter(|t| t.len() <= MAX_TOKEN)
}

/// Reads a POSTed form and checks its CSRF token: the fields, or the refusal page.
pub(super) async fn checked_form(ctx: &Ctx, body: Body) -> Result<Fields, Response> {
    let fields = form::read(&ctx.headers, body, true)
        .await
        .map_err(|e| error::form(ctx, e))?;
    if !csrf::verify(&ctx.headers, ctx.cookies, fields.get("csrf")) {
        return Err(error::csrf(ctx));
    }
    Ok(fields)
}

pub(super) fn with_csrf(
    state: &HostedState,
    ctx: &Ctx,
    build: impl FnOnce(&str) -> Page,
) -> Response {
    let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
    let mut response = build(csrf.value()).render(&ctx.chrome);
    csrf.attach(&mut response, ctx.cookies);
    response
}

/// `GET /auth/verify-email?token=…`: a button that confirms (or, after it, `?verified=1`, the
/// confirmation).
pub(crate) async fn verify_page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let s = ctx.s();
    let query = Fields::from_query(query.as_deref());
    if query.get("verified") == Some("1") {
        return Page::new(s.verify_email_title)
            .text(s.email_verified)
            .link(None, s.continue_link, "/auth/account".to_owned())
            .render(&ctx.chrome);
    }
    let Some(token) = token_of(&query) else {
        return error::invalid_link(&ctx);
    };
    with_csrf(&state, &ctx, |csrf| {
        Page::new(s.verify_email_title)
            .text(s.verify_email_intro)
            .form(
                Form::new("/auth/verify-email", csrf)
                    .hidden("token", Some(token))
                    .button(Button::primary(s.verify_email_submit)),
            )
    })
}

/// `POST /auth/verify-email`.
pub(crate) async fn verify_submit(
    State(state): State<HostedState>,
    ctx: Ctx,
    body: Body,
) -> Response {
    let fields = match checked_form(&ctx, body).await {
        Ok(fields) => fields,
        Err(page) => return page,
    };
    let Some(token) = token_of(&fields) else {
        return error::invalid_link(&ctx);
    };
    match state.authn.verify_email(&ctx.current.tenant, token).await {
        Ok(_) => see_other("/auth/verify-email?verified=1"),
        Err(e) => error::fatal(&ctx, e),
    }
}

fn forgot_form(
    state: &HostedState,
    ctx: &Ctx,
    interaction: Option<&str>,
    email: &str,
    refusal: Option<&Refusal>,
) -> Response {
    let s = ctx.s();
    let response = with_csrf(state, ctx, |csrf| {
        let mut field = Field::email(s, email);
        let mut page = Page::new(s.forgot_password_title).text(s.forgot_password_intro);
        if let Some(refusal) = refusal {
            if let Some(alert) = refusal.alert() {
                page = page.alert(alert);
            }
            if let Some(message) = refusal.on("email") {
                field = field.error(message);
            }
        }
        page.form(
            Form::new("/auth/forgot-password", csrf)
                .hidden("interaction", interaction)
                .field(field)
                .captcha(captcha_widget(
                    state,
                    ctx,
                    CaptchaAction::ForgotPassword,
                    refusal,
                ))
                .button(Button::primary(s.forgot_password_submit)),
        )
        .link(
            None,
            s.sign_in_link,
            path_with("/auth/sign-in", &[("interaction", interaction)]),
        )
    });
    match refusal {
        Some(refusal) => refusal.finish(response),
        None => response,
    }
}

/// `GET /auth/forgot-password[?interaction=…]` (or, with `?sent=1`, the uniform answer).
pub(crate) async fn forgot_page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let s = ctx.s();
    let query = Fields::from_query(query.as_deref());
    // A malformed interaction is dropped, not echoed: this page does not need it.
    let interaction = interaction_param(query.get("interaction")).ok().flatten();
    let interaction = interaction.as_ref().map(|i| i.as_str());
    if query.get("sent") == Some("1") {
        return Page::new(s.check_inbox_title)
            .text(s.reset_link_sent)
            .link(
                None,
                s.sign_in_link,
                path_with("/auth/sign-in", &[("interaction", interaction)]),
            )
            .render(&ctx.chrome);
    }
    forgot_form(&state, &ctx, interaction, "", None)
}

/// `POST /auth/forgot-password`: mails a reset link when the account exists; the answer is
/// the same either way.
pub(crate) async fn forgot_submit(
    State(state): State<HostedState>,
    ctx: Ctx,
    body: Body,
) -> Response {
    let fields = match checked_form(&ctx, body).await {
        Ok(fields) => fields,
        Err(page) => return page,
    };
    let interaction = interaction_param(fields.get("interaction")).ok().flatten();
    let interaction = interaction.as_ref().map(|i| i.as_str());
    let email = fields.get("email").unwrap_or_default();
    let host = page_host(&ctx);
    let answer = captcha_answer(&state, &fields, host.as_deref());
    match state
        .authn
        .request_password_reset_with_captcha(
            &ctx.current.tenant,
            &ctx.current.issuer,
            email,
            &ctx.client,
            answer,
        )
        .await
    {
        Ok(()) => see_other(&path_with(
            "/auth/forgot-password",
            &[("sent", Some("1")), ("interaction", interaction)],
        )),
        Err(e) => match error::refusal(&ctx, e) {
            Ok(refusal) => forgot_form(&state, &ctx, interaction, email, Some(&refusal)),
            Err(page) => page,
        },
    }
}

fn password_form(
    state: &HostedState,
    ctx: &Ctx,
    kind: LinkKind,
    token: &str,
    name: &str,
    refusal: Option<&Refusal>,
) -> Response {
    let s = ctx.s();
    let response = with_csrf(state, ctx, |csrf| {
        let (title, intro, action, submit) = match kind {
            LinkKind::Reset => (
                s.reset_password_title,
                None,
                "/auth/reset-password",
                s.reset_password_submit,
            ),
            LinkKind::Invitation => (
                s.invitation_title,
                Some(s.invitation_intro),
                "/auth/accept-invitation",
                s.invitation_submit,
            ),
        };
        let mut page = Page::new(title);
        if let Some(intro) = intro {
            page = page.text(intro);
        }
        let mut form = Form::new(action, csrf).hidden("token", Some(token));
        if kind == LinkKind::Invitation {
            let mut field = Field::name(s, name);
            field.required = false;
            form = form.field(field);
        }
        let mut password = Field::new_password(s);
        if let Some(refusal) = refusal {
            if let Some(alert) = refusal.alert() {
                page = page.alert(alert);
            }
            if let Some(message) = refusal.on("password") {
                password = password.error(message);
            }
        }
        page.form(form.field(password).button(Button::primary(submit)))
    });
    match refusal {
        Some(refusal) => refusal.finish(response),
        None => response,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LinkKind {
    Reset,
    Invitation,
}

/// `GET /auth/reset-password?token=…` (or, with `?done=1`, the confirmation).
pub(crate) async fn reset_page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let s = ctx.s();
    let query = Fields::from_query(query.as_deref());
    if query.get("done") == Some("1") {
        return Page::new(s.reset_password_title)
            .text(s.password_changed)
            .link(None, s.sign_in_link, "/auth/sign-in".to_owned())
            .render(&ctx.chrome);
    }
    match token_of(&query) {
        Some(token) => password_form(&state, &ctx, LinkKind::Reset, token, "", None),
        None => error::invalid_link(&ctx),
    }
}

/// `POST /auth/reset-password`: sets the password; the engine ends every session of the
/// person, and this browser's cookie is cleared too.
pub(crate) async fn reset_submit(
    State(state): State<HostedState>,
    ctx: Ctx,
    body: Body,
) -> Response {
    let fields = match checked_form(&ctx, body).await {
        Ok(fields) => fields,
        Err(page) => return page,
    };
    let Some(token) = token_of(&fields) else {
        return error::invalid_link(&ctx);
    };
    let password = fields.get("password").unwrap_or_default();
    match state
        .authn
        .reset_password(&ctx.current.tenant, token, password)
        .await
    {
        Ok(_) => {
            let mut response = see_other("/auth/reset-password?done=1");
            cookies::append(&mut response, ctx.cookies.clear_session());
            response
        }
        Err(e) => match error::refusal(&ctx, e) {
            Ok(refusal) => password_form(&state, &ctx, LinkKind::Reset, token, "", Some(&refusal)),
            Err(page) => page,
        },
    }
}

/// `GET /auth/accept-invitation?token=…`.
pub(crate) async fn invitation_page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let query = Fields::from_query(query.as_deref());
    match token_of(&query) {
        Some(token) => password_form(&state, &ctx, LinkKind::Invitation, token, "", None),
        None => error::invalid_link(&ctx),
    }
}

/// `POST /auth/accept-invitation`: activates the account with the chosen password and signs
/// the person in.
pub(crate) async fn invitation_submit(
    State(state): State<HostedState>,
    ctx: Ctx,
    body: Body,
) -> Response {
    let fields = match checked_form(&ctx, body).await {
        Ok(fields) => fields,
        Err(page) => return page,
    };
    let Some(token) = token_of(&fields) else {
        return error::invalid_link(&ctx);
    };
    let password = fields.get("password").unwrap_or_default();
    let name = fields.get("name").unwrap_or_default();
    match state
        .authn
        .accept_invitation(
            &ctx.current.tenant,
            token,
            password,
            fields.non_empty("name"),
            &ctx.client,
        )
        .await
    {
        Ok(signed_in) => signed_in_response(&state, &ctx, signed_in, None).await,
        Err(e) => match error::refusal(&ctx, e) {
            Ok(refusal) => password_form(
                &state,
                &ctx,
                LinkKind::Invitation,
                token,
                name,
                Some(&refusal),
            ),
            Err(page) => page,
        },
    }
}
