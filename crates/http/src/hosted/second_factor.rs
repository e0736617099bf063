//! `/auth/second-factor`: the second step of a sign-in, and step-up of a live session.
//!
//! Two ways in, told apart by the cookies the browser carries:
//! - after a correct password for a person with a second factor, the challenge cookie (set by
//!   the sign-in form) names the pending sign-in; a right code creates the session (aal2) and
//!   clears the challenge;
//! - with a live session that an authorization request needs at a higher `acr` (the engine
//!   answered step-up), a right code replaces the session with a new aal2 one: a new cookie,
//!   the old session revoked, so an old cookie replayed afterwards signs nobody in.
//!
//! Either way the browser then continues the pending authorization request (`interaction`), or
//! goes to the account page. Wrong codes show the form again with one message; the engine
//! counts and locks them.

use super::csrf::{self, CsrfToken};
use super::form::{self, Fields};
use super::sign_in::signed_in_response;
use super::view::{Button, Field, Form, Page, PasskeyForm};
use super::{Ctx, HostedState, cookies, interaction_param, path_with, redirect_target, see_other};
use crate::error::page::{self as error, Refusal};
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use base64::Engine;
use svc_authn::{ClientInfo, DEVICE_COOKIE_PREFIX, KeyStep, PendingFactor, SecondProof};
use svc_domain::InteractionId;

/// Which second step the browser is at.
enum Step {
    /// After a password: the challenge cookie's value.
    SignIn(String),
    /// A live session to raise.
    StepUp(Box<svc_domain::Session>),
}

/// The second step of this browser, or the page to show instead.
async fn step(state: &HostedState, ctx: &Ctx, interaction: Option<&str>) -> Result<Step, Response> {
    if let Some(cookie) = ctx.cookies.challenge(&ctx.headers) {
        return match state
            .authn
            .challenge_pending(&ctx.current.tenant, &cookie)
            .await
        {
            Ok(true) => Ok(Step::SignIn(cookie)),
            Ok(false) => Err(expired(ctx, interaction)),
            Err(e) => Err(error::fatal(ctx, e)),
        };
    }
    match ctx.signed_in(&state.authn).await? {
        Some((session, _)) => Ok(Step::StepUp(Box::new(session))),
        None => Err(see_other(&path_with(
            "/auth/sign-in",
            &[("interaction", interaction)],
        ))),
    }
}

/// The challenge is gone: say so, and drop its cookie.
fn expired(ctx: &Ctx, interaction: Option<&str>) -> Response {
    let mut response = error::challenge_expired(ctx, interaction);
    cookies::append(&mut response, ctx.cookies.clear_challenge());
    response
}

/// Whether the person at `step` has a security key to offer (errors: no key form).
async fn key_offered(state: &HostedState, ctx: &Ctx, step: &Step) -> bool {
    let key_step = match step {
        Step::SignIn(cookie) => KeyStep::SignIn(cookie),
        Step::StepUp(session) => KeyStep::StepUp(session),
    };
    state
        .authn
        .security_key_offered(&ctx.current.tenant, key_step)
        .await
        .unwrap_or(false)
}

async fn code_page(
    state: &HostedState,
    ctx: &Ctx,
    (step_up, key): (bool, bool),
    interaction: Option<&str>,
    refusal: Option<&Refusal>,
) -> Response {
    let s = ctx.s();
    let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
    let mut page = Page::new(s.second_factor_title).text(if step_up {
        s.step_up_intro
    } else {
        s.second_factor_intro
    });
    let pending = interaction.and_then(|raw| InteractionId::parse(raw).ok());
    if let Some(target) = redirect_target(state, ctx, pending.as_ref()).await {
        page = page.form_target(&target);
    }
    let mut field = Field::one_time_code(s);
    if let Some(refusal) = refusal {
        if let Some(alert) = refusal.alert() {
            page = page.alert(alert);
        }
        if let Some(message) = refusal.on("code") {
            field = field.error(message);
        }
    }
    let mut form = Form::new("/auth/second-factor", csrf.value())
        .hidden("interaction", interaction)
        .field(field);
    // Trust is offered where a sign-in happens, not when an existing session steps up.
    if let Some(lifetime) = state.authn.trusted_device_lifetime()
        && !step_up
    {
        let days = lifetime.as_secs() / 86_400;
        page = page.line(s.trust_device_days, Some(days.to_string()), "");
        let mut trust = Field::checkbox("trust", s.trust_device_label);
        trust.hint = Some(s.trust_device_hint);
        form = form.field(trust);
    }
    let form = form.button(Button::primary(s.verify_submit));
    if state.authn.two_factor().is_some() {
        page = page.form(form);
    }
    if key {
        page = page.passkey(PasskeyForm::security_key_check(
            s,
            csrf.value(),
            interaction,
        ));
    }
    // Signing in again with a passkey raises a session too (it replaces it at aal2).
    if step_up && !key && state.authn.passkeys_enabled() {
        page = page.passkey(PasskeyForm::sign_in(s, csrf.value(), interaction));
    }
    let mut response = page.render(&ctx.chrome);
    csrf.attach(&mut response, ctx.cookies);
    match refusal {
        Some(refusal) => refusal.finish(response),
        None => response,
    }
}

/// `GET /auth/second-factor[?interaction=…]`.
pub(crate) async fn page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    // Passkeys alone also step a session up (a passkey sign-in is aal2).
    if state.authn.two_factor().is_none() && !state.authn.passkeys_enabled() {
        return error::not_found(&ctx);
    }
    let query = Fields::from_query(query.as_deref());
    let Ok(interaction) = interaction_param(query.get("interaction")) else {
        return error::interaction_expired(&ctx);
    };
    let interaction = interaction.as_ref().map(InteractionId::as_str);
    match step(&state, &ctx, interaction).await {
        Ok(step) => {
            let key = key_offered(&state, &ctx, &step).await;
            code_page(
                &state,
                &ctx,
                (matches!(step, Step::StepUp(_)), key),
                interaction,
                None,
            )
            .await
        }
        Err(page) => page,
    }
}

/// `POST /auth/second-factor/key-options`: starts proving a security key at this step.
pub(crate) async fn key_options(
    State(state): State<HostedState>,
    ctx: Ctx,
    body: Body,
) -> Response {
    if state.authn.two_factor().is_none() {
        return error::not_found(&ctx);
    }
    let fields = match form::read(&ctx.headers, body, true).await {
        Ok(fields) => fields,
        Err(e) => return error::form(&ctx, e),
    };
    if !csrf::verify(&ctx.headers, ctx.cookies, fields.get("csrf")) {
        return error::csrf(&ctx);
    }
    let found = match step(&state, &ctx, None).await {
        Ok(found) => found,
        Err(page) => return page,
    };
    let key_step = match &found {
        Step::SignIn(cookie) => KeyStep::SignIn(cookie),
        Step::StepUp(session) => KeyStep::StepUp(session),
    };
    let started = state
        .authn
        .begin_security_key_check(&ctx.current.tenant, &ctx.current.issuer, key_step)
        .await;
    super::passkeys::options_or_problem(&state, &ctx, started)
}

/// `POST /auth/second-factor`.
pub(crate) async fn submit(State(state): State<HostedState>, ctx: Ctx, body: Body) -> Response {
    if state.authn.two_factor().is_none() {
        return error::not_found(&ctx);
    }
    let fields = match form::read(&ctx.headers, body, true).await {
        Ok(fields) => fields,
        Err(e) => return error::form(&ctx, e),
    };
    if !csrf::verify(&ctx.headers, ctx.cookies, fields.get("csrf")) {
        return error::csrf(&ctx);
    }
    let Ok(interaction) = interaction_param(fields.get("interaction")) else {
        return error::interaction_expired(&ctx);
    };
    let shown = interaction.as_ref().map(InteractionId::as_str);
    let code = fields.get("code").unwrap_or_default();
    let trust = fields.get("trust") == Some("yes");
    let tenant = &ctx.current.tenant;
    let (client, new_device) = with_device(&state, &ctx);
    // A security key's answer (the glue's `credential`), or a typed code.
    let ceremony = ctx.cookies.ceremony(&ctx.headers).unwrap_or_default();
    let answer = fields.non_empty("credential");
    let proof = match answer {
        Some(answer) => SecondProof::Key {
            issuer: &ctx.current.issuer,
            ceremony: &ceremony,
            answer,
        },
        None => SecondProof::Code(code),
    };
    let found = match step(&state, &ctx, shown).await {
        Ok(found) => found,
        Err(page) => return page,
    };
    let (result, step_up) = match &found {
        Step::SignIn(cookie) => (
            state
                .authn
                .complete_second_factor_with(tenant, cookie, proof, &client, trust)
                .await,
            false,
        ),
        Step::StepUp(session) => (
            state
                .authn
                .step_up_with(tenant, session, proof, &ctx.client)
                .await,
            true,
        ),
    };
    let mut response = match result {
        Ok(signed_in) => {
            let mut response =
                signed_in_response(&state, &ctx, signed_in, interaction.as_ref()).await;
            if !step_up {
                cookies::append(&mut response, ctx.cookies.clear_challenge());
            }
            if let Some(device) = new_device {
                cookies::append(&mut response, ctx.cookies.set_device(&device));
            }
            response
        }
        Err(svc_authn::AuthnError::ChallengeExpired) => expired(&ctx, shown),
        Err(e) => match error::refusal(&ctx, e) {
            Ok(refusal) => {
                let key = key_offered(&state, &ctx, &found).await;
                code_page(&state, &ctx, (step_up, key), shown, Some(&refusal)).await
            }
            Err(page) => page,
        },
    };
    if answer.is_some() {
        cookies::append(&mut response, ctx.cookies.clear_ceremony());
    }
    response
}

/// The request's client with its device cookie, and the new cookie value to set when the
/// browser brought none of ours (256 random bits, `dvc_…`).
pub(crate) fn with_device(state: &HostedState, ctx: &Ctx) -> (ClientInfo, Option<String>) {
    let mut client = ctx.client.clone();
    let ours = client
        .device
        .as_deref()
        .is_some_and(|d| d.starts_with(DEVICE_COOKIE_PREFIX));
    if ours || state.authn.two_factor().is_none() {
        return (client, None);
    }
    let mut bytes = [0u8; 32];
    state.rng.fill(&mut bytes);
    let value = format!(
        "{DEVICE_COOKIE_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    );
    client.device = Some(value.clone());
    (client, Some(value))
}

/// After a correct password of a person with a second factor: set the challenge cookie and go
/// to the second step.
pub(crate) fn challenge_response(
    state: &HostedState,
    ctx: &Ctx,
    pending: &PendingFactor,
    interaction: Option<&InteractionId>,
) -> Response {
    let mut response = see_other(&path_with(
        "/auth/second-factor",
        &[("interaction", interaction.map(InteractionId::as_str))],
    ));
    let max_age = state
        .authn
        .two_factor()
        .map(|t| t.challenge_lifetime)
        .unwrap_or_default();
    cookies::append(
        &mut response,
        ctx.cookies.set_challenge(&pending.cookie_value, max_age),
    );
    response
}
