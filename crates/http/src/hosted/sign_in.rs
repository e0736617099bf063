//! `GET/POST /auth/sign-in` and `GET/POST /auth/sign-up`: password sign-in and self-service
//! sign-up, optionally on behalf of a pending authorization request (`interaction`).
//!
//! A failed sign-in shows one message for every cause (unknown account, wrong password, account
//! that may not sign in) with status 401, so the page never tells whether an account exists.
//! Success replaces any previous session of the browser (a fresh session id at every sign-in),
//! sets the session cookie and answers 303: to the authorization request's resume URL, or to
//! the account page.
//!
//! A sign-up that passes the checks answers the same 303 to `/auth/sign-up?sent=1` whether the
//! address was new or already had an account (the engine mails a verification link or a
//! notice), and signs nobody in: the answer says nothing about existing accounts.
//!
//! With a CAPTCHA configured, the sign-up form always carries the provider's widget, and the
//! sign-in form once the engine says the account (or, before an address is typed, the client
//! address) has had enough recent failures. The token comes back in the provider's own field
//! (`cf-turnstile-response`, `h-captcha-response`, `g-recaptcha-response`) and the engine
//! verifies it before anything else; a missing, refused or replayed one shows the form again
//! with the error under the widget, and nothing is written.
//!
//! With social recovery on, the sign-in page links to `/auth/recovery` (a lost second factor),
//! and after a completed recovery (`recovered=1`) tells the person what comes next.

use super::csrf::{self, CsrfToken};
use super::form::{self, Fields};
use super::view::{Button, CaptchaWidget, Field, Form, Page, PasskeyForm, SocialForm, SsoForm};
use super::{Ctx, HostedState, cookies, interaction_param, path_with, see_other};
use crate::error::page::{self as error, Refusal};
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use svc_authn::{CaptchaAction, CaptchaAnswer, SignInStep, SignUpFields, SignedIn};
use svc_domain::{InteractionId, LogoutReason};

/// What a sign-in or sign-up page shows besides its fields.
pub(crate) struct Pending {
    pub(crate) interaction: Option<InteractionId>,
    client_name: Option<String>,
    login_hint: Option<String>,
    redirect_uri: Option<String>,
    /// The browser just recovered the account (`recovered=1`): the page says what comes next.
    recovered: bool,
    /// The tenant's enabled social providers (slug, name), offered as buttons.
    social: Vec<(String, String)>,
}

/// The pending request named by `raw`, or the page to show instead (malformed, unknown or
/// expired interaction).
pub(crate) async fn pending(
    state: &HostedState,
    ctx: &Ctx,
    raw: Option<&str>,
) -> Result<Pending, Response> {
    let Ok(interaction) = interaction_param(raw) else {
        return Err(error::interaction_expired(ctx));
    };
    // A page without the buttons beats no page: the engine logged why it could not read them.
    let social = match state.authn.social_buttons(&ctx.current.tenant).await {
        Ok(buttons) => buttons
            .into_iter()
            .map(|b| (b.slug, b.display_name))
            .collect(),
        Err(e) => {
            tracing::warn!(error = %e, "could not read the social providers");
            Vec::new()
        }
    };
    let Some(id) = interaction else {
        return Ok(Pending {
            interaction: None,
            client_name: None,
            login_hint: None,
            redirect_uri: None,
            recovered: false,
            social,
        });
    };
    match state
        .authorize
        .login_context(&ctx.current.tenant, &id)
        .await
    {
        Some(context) => Ok(Pending {
            interaction: Some(id),
            client_name: Some(context.client_name),
            login_hint: context.login_hint,
            redirect_uri: Some(context.redirect_uri),
            recovered: false,
            social,
        }),
        None => Err(error::interaction_expired(ctx)),
    }
}

/// The CAPTCHA widget of a form protecting `action`, when the deployment has a CAPTCHA; the
/// refusal's CAPTCHA message (if any) goes under it.
pub(crate) fn captcha_widget(
    state: &HostedState,
    ctx: &Ctx,
    action: CaptchaAction,
    refusal: Option<&Refusal>,
) -> Option<CaptchaWidget> {
    let settings = state.authn.captcha()?;
    let widget = CaptchaWidget::new(
        ctx.s(),
        settings.provider,
        &settings.site_key,
        action.as_str(),
    );
    Some(widget.error(refusal.and_then(|r| r.on("captcha"))))
}

/// The host name pages of this tenant are served on (the issuer's), which a provider reports
/// back for its token.
pub(crate) fn page_host(ctx: &Ctx) -> Option<String> {
    url::Url::parse(&ctx.current.issuer)
        .ok()
        .and_then(|url| url.host_str().map(str::to_ascii_lowercase))
}

/// The CAPTCHA answer of a submitted form: the token in the provider's own field.
pub(crate) fn captcha_answer<'a>(
    state: &HostedState,
    fields: &'a Fields,
    host: Option<&'a str>,
) -> CaptchaAnswer<'a> {
    CaptchaAnswer {
        token: state
            .authn
            .captcha()
            .and_then(|c| fields.get(c.provider.response_field())),
        hostname: host,
    }
}

/// Whether the sign-in form shows the CAPTCHA for `email` (or, without one, for the client
/// address alone). When the counters cannot be read the widget is shown: harmless if not
/// needed, and the engine decides on submission anyway.
pub(crate) async fn sign_in_captcha(state: &HostedState, ctx: &Ctx, email: Option<&str>) -> bool {
    if state.authn.captcha().is_none() {
        return false;
    }
    let email = email.map(str::trim).filter(|e| !e.is_empty());
    state
        .authn
        .sign_in_needs_captcha(&ctx.current.tenant, email, &ctx.client)
        .await
        .unwrap_or(true)
}

pub(crate) fn sign_in_page(
    state: &HostedState,
    ctx: &Ctx,
    pending: &Pending,
    (email, captcha): (&str, bool),
    refusal: Option<&Refusal>,
) -> Response {
    sign_in_page_with_sso(state, ctx, pending, (email, captcha), refusal, ("", None))
}

/// [`sign_in_page`] with the single sign-on form's address and error (`/auth/sso` refused).
pub(crate) fn sign_in_page_with_sso(
    state: &HostedState,
    ctx: &Ctx,
    pending: &Pending,
    (email, captcha): (&str, bool),
    refusal: Option<&Refusal>,
    sso: (&str, Option<&'static str>),
) -> Response {
    let s = ctx.s();
    let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
    let interaction = pending.interaction.as_ref().map(InteractionId::as_str);
    let mut page = Page::new(s.sign_in_title);
    if let Some(client) = &pending.client_name {
        page = page.line(s.sign_in_to_continue, Some(client.clone()), "");
    }
    if pending.recovered {
        page = page.text(s.recovery.recovered);
    }
    let mut email_field = Field::email(s, email);
    let mut password_field = Field::current_password(s);
    if let Some(refusal) = refusal {
        if let Some(alert) = refusal.alert() {
            page = page.alert(alert);
        }
        // A failed sign-in concerns both fields without saying which: both point at the alert.
        if refusal.status == http::StatusCode::UNAUTHORIZED && refusal.message == s.bad_credentials
        {
            email_field = email_field.invalid();
            password_field = password_field.invalid();
        }
    }
    // Sign-in → resume → the client's redirect URI is one redirect chain after this form's POST.
    if let Some(target) = &pending.redirect_uri {
        page = page.form_target(target);
    }
    let widget = captcha
        .then(|| captcha_widget(state, ctx, CaptchaAction::SignIn, refusal))
        .flatten();
    // With passkeys, the address field also offers them in its autofill (conditional UI).
    if state.authn.passkeys_enabled() {
        email_field.autocomplete = "username webauthn";
        page = page.passkey(PasskeyForm::sign_in(s, csrf.value(), interaction));
    }
    let form = Form::new("/auth/sign-in", csrf.value())
        .hidden("interaction", interaction)
        .field(email_field)
        .field(password_field)
        .captcha(widget)
        .button(Button::primary(s.sign_in_submit));
    page = page.form(form);
    if !pending.social.is_empty() {
        page = page.social(SocialForm::new(
            s,
            csrf.value(),
            interaction,
            &pending.social,
        ));
    }
    if state.authn.sso_enabled() {
        page = page.sso(SsoForm::new(s, csrf.value(), interaction, sso));
    }
    page = page.link(
        None,
        s.forgot_password_link,
        path_with("/auth/forgot-password", &[("interaction", interaction)]),
    );
    if state.authn.recovery().is_some() {
        page = page.link(
            None,
            s.recovery.lost_factor_link,
            "/auth/recovery".to_owned(),
        );
    }
    if ctx.current.tenant.signup_enabled {
        page = page.link(
            Some(s.no_account_yet),
            s.sign_up_link,
            path_with("/auth/sign-up", &[("interaction", interaction)]),
        );
    }
    let mut response = page.render(&ctx.chrome);
    csrf.attach(&mut response, ctx.cookies);
    match refusal {
        Some(refusal) => refusal.finish(response),
        None => response,
    }
}

/// `GET /auth/sign-in[?interaction=…]`.
pub(crate) async fn page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let query = Fields::from_query(query.as_deref());
    let mut pending = match pending(&state, &ctx, query.get("interaction")).await {
        Ok(pending) => pending,
        Err(page) => return page,
    };
    pending.recovered = query.get("recovered") == Some("1");
    let hint = pending.login_hint.clone().unwrap_or_default();
    let captcha = sign_in_captcha(&state, &ctx, Some(&hint)).await;
    sign_in_page(&state, &ctx, &pending, (&hint, captcha), None)
}

/// `POST /auth/sign-in`.
pub(crate) async fn submit(State(state): State<HostedState>, ctx: Ctx, body: Body) -> Response {
    let fields = match form::read(&ctx.headers, body, true).await {
        Ok(fields) => fields,
        Err(e) => return error::form(&ctx, e),
    };
    if !csrf::verify(&ctx.headers, ctx.cookies, fields.get("csrf")) {
        return error::csrf(&ctx);
    }
    let pending = match pending(&state, &ctx, fields.get("interaction")).await {
        Ok(pending) => pending,
        Err(page) => return page,
    };
    let email = fields.get("email").unwrap_or_default();
    let password = fields.get("password").unwrap_or_default();
    let host = page_host(&ctx);
    let answer = captcha_answer(&state, &fields, host.as_deref());
    let (client, new_device) = super::second_factor::with_device(&state, &ctx);
    let outcome = state
        .authn
        .sign_in_with_captcha(&ctx.current.tenant, email, password, &client, answer)
        .await;
    let mut response = match outcome {
        Ok(SignInStep::Done(signed_in)) => {
            signed_in_response(&state, &ctx, *signed_in, pending.interaction.as_ref()).await
        }
        Ok(SignInStep::SecondFactor(factor)) => super::second_factor::challenge_response(
            &state,
            &ctx,
            &factor,
            pending.interaction.as_ref(),
        ),
        Err(e) => {
            // A CAPTCHA refusal shows the widget again; any other refusal shows it when this
            // failure (or earlier ones) reached the threshold.
            let captcha = e.is_captcha() || sign_in_captcha(&state, &ctx, Some(email)).await;
            return match error::refusal(&ctx, e) {
                Ok(refusal) => {
                    sign_in_page(&state, &ctx, &pending, (email, captcha), Some(&refusal))
                }
                Err(page) => page,
            };
        }
    };
    // A browser that signed in keeps a device cookie, so the next sign-in recognises it.
    if let Some(device) = new_device {
        cookies::append(&mut response, ctx.cookies.set_device(&device));
    }
    response
}

/// After a sign-in, sign-up or accepted invitation: ends the browser's previous session (a
/// session id is never carried across sign-ins), sets the new cookie and continues.
pub(crate) async fn signed_in_response(
    state: &HostedState,
    ctx: &Ctx,
    signed_in: SignedIn,
    interaction: Option<&InteractionId>,
) -> Response {
    if let Ok(Some((previous, _))) = ctx.signed_in(&state.authn).await
        && previous.id != signed_in.session.id
        && let Err(e) = state
            .authn
            .sign_out(&ctx.current.tenant, &previous, LogoutReason::SignOut)
            .await
    {
        // The new session stands either way; the old one still expires on its own.
        tracing::warn!(error = %e, "could not end the previous session at sign-in");
    }
    let mut forget_join = None;
    let next = match interaction {
        Some(id) => path_with(
            "/oauth/authorize/resume",
            &[("interaction", Some(id.as_str()))],
        ),
        None => match super::join::return_after_sign_in(ctx)
            .or_else(|| super::backchannel::return_after_sign_in(ctx))
            .or_else(|| super::delegate::return_after_sign_in(ctx))
            .or_else(|| super::social::return_after_sign_in(ctx))
        {
            Some((back, forget)) => {
                forget_join = forget;
                back
            }
            None => "/auth/account".to_owned(),
        },
    };
    let mut response = see_other(&next);
    cookies::append(&mut response, ctx.cookies.set_signed_in(&signed_in));
    cookies::append(&mut response, forget_join);
    response
}

fn sign_up_page(
    state: &HostedState,
    ctx: &Ctx,
    pending: &Pending,
    values: (&str, &str),
    refusal: Option<&Refusal>,
) -> Response {
    let s = ctx.s();
    let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
    let interaction = pending.interaction.as_ref().map(InteractionId::as_str);
    let (name, email) = values;
    let mut name_field = Field::name(s, name);
    name_field.required = false;
    let mut email_field = Field::email(s, email);
    let mut password_field = Field::new_password(s);
    let mut page = Page::new(s.sign_up_title);
    if let Some(target) = &pending.redirect_uri {
        page = page.form_target(target);
    }
    if let Some(refusal) = refusal {
        if let Some(alert) = refusal.alert() {
            page = page.alert(alert);
        }
        if let Some(message) = refusal.on("email") {
            email_field = email_field.error(message);
        }
        if let Some(message) = refusal.on("password") {
            password_field = password_field.error(message);
        }
    }
    let form = Form::new("/auth/sign-up", csrf.value())
        .hidden("interaction", interaction)
        .field(name_field)
        .field(email_field)
        .field(password_field)
        .captcha(captcha_widget(state, ctx, CaptchaAction::SignUp, refusal))
        .button(Button::primary(s.sign_up_submit));
    let page = page.form(form).link(
        Some(s.have_account),
        s.sign_in_link,
        path_with("/auth/sign-in", &[("interaction", interaction)]),
    );
    let mut response = page.render(&ctx.chrome);
    csrf.attach(&mut response, ctx.cookies);
    match refusal {
        Some(refusal) => refusal.finish(response),
        None => response,
    }
}

/// `GET /auth/sign-up[?interaction=…]`: 404 unless the tenant offers sign-up.
pub(crate) async fn sign_up_page_get(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    if !ctx.current.tenant.signup_enabled {
        return error::sign_up_closed(&ctx);
    }
    let query = Fields::from_query(query.as_deref());
    let pending = match pending(&state, &ctx, query.get("interaction")).await {
        Ok(pending) => pending,
        Err(page) => return page,
    };
    if query.get("sent") == Some("1") {
        return check_inbox(&ctx, &pending);
    }
    let hint = pending.login_hint.clone().unwrap_or_default();
    sign_up_page(&state, &ctx, &pending, ("", &hint), None)
}

/// The one answer to every accepted sign-up: check your inbox, then sign in (continuing the
/// pending authorization request, if any).
fn check_inbox(ctx: &Ctx, pending: &Pending) -> Response {
    let s = ctx.s();
    let interaction = pending.interaction.as_ref().map(InteractionId::as_str);
    Page::new(s.check_inbox_title)
        .text(s.verification_sent)
        .link(
            None,
            s.sign_in_link,
            path_with("/auth/sign-in", &[("interaction", interaction)]),
        )
        .render(&ctx.chrome)
}

/// `POST /auth/sign-up`: registers the address (see the module documentation) and answers
/// 303 to the check-your-inbox page.
pub(crate) async fn sign_up_submit(
    State(state): State<HostedState>,
    ctx: Ctx,
    body: Body,
) -> Response {
    if !ctx.current.tenant.signup_enabled {
        return error::sign_up_closed(&ctx);
    }
    let fields = match form::read(&ctx.headers, body, true).await {
        Ok(fields) => fields,
        Err(e) => return error::form(&ctx, e),
    };
    if !csrf::verify(&ctx.headers, ctx.cookies, fields.get("csrf")) {
        return error::csrf(&ctx);
    }
    let pending = match pending(&state, &ctx, fields.get("interaction")).await {
        Ok(pending) => pending,
        Err(page) => return page,
    };
    let email = fields.get("email").unwrap_or_default();
    let name = fields.get("name").unwrap_or_default();
    let password = fields.get("password").unwrap_or_default();
    let host = page_host(&ctx);
    let answer = captcha_answer(&state, &fields, host.as_deref());
    let typed = SignUpFields {
        email,
        password,
        name: fields.non_empty("name"),
    };
    match state
        .authn
        .sign_up_with_captcha(
            &ctx.current.tenant,
            &ctx.current.issuer,
            typed,
            &ctx.client,
            answer,
        )
        .await
    {
        Ok(()) => {
            let interaction = pending.interaction.as_ref().map(InteractionId::as_str);
            see_other(&path_with(
                "/auth/sign-up",
                &[("sent", Some("1")), ("interaction", interaction)],
            ))
        }
        Err(e) => match error::refusal(&ctx, e) {
            Ok(refusal) => sign_up_page(&state, &ctx, &pending, (name, email), Some(&refusal)),
            Err(page) => page,
        },
    }
}
