//! Passkeys on the hosted pages: signing in with one (`/auth/passkey`), and a signed-in
//! person's passkeys (`/auth/account/passkeys`: list, add, rename, remove).
//!
//! A ceremony has two requests. The page's glue script first POSTs the CSRF token to an
//! `options` endpoint, which starts the ceremony in the engine, sets the ceremony cookie and
//! answers the options JSON for `navigator.credentials`; then the form posts the browser's
//! answer (`credential`) to the page's own endpoint, which hands it with the cookie to the
//! engine. The cookie is cleared by that answer, right or wrong. Renaming and removing are
//! plain forms and work without JavaScript; registering and signing in with a passkey need it
//! (WebAuthn is a script API), and the pages say so where it is missing.

use super::csrf::{self, CsrfToken};
use super::form::{self, Fields};
use super::sign_in::{pending, sign_in_captcha, sign_in_page, signed_in_response};
use super::view::{FormTargets, PasskeyForm, PasskeyRow, PasskeysView};
use super::{Ctx, HostedState, cookies, see_other};
use crate::Problem;
use crate::error::page::{self as error, Refusal};
use axum::Json;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::{IntoResponse, Response};
use std::time::Duration;
use svc_authn::{AuthnError, CeremonyStart};
use svc_domain::{PasskeyId, Session, User};

const PATH: &str = "/auth/account/passkeys";

/// The options answer: the JSON for `navigator.credentials`, with the ceremony cookie.
fn options_response(ctx: &Ctx, start: CeremonyStart, lifetime: Duration) -> Response {
    let mut response = Json(start.options).into_response();
    cookies::append(
        &mut response,
        ctx.cookies.set_ceremony(&start.cookie_value, lifetime),
    );
    response
}

/// The options answer of a ceremony the engine started, or its refusal as a problem.
pub(crate) fn options_or_problem(
    state: &HostedState,
    ctx: &Ctx,
    started: Result<CeremonyStart, AuthnError>,
) -> Response {
    match started {
        Ok(start) => options_response(ctx, start, lifetime(state)),
        Err(e) => Problem::from(e).into_response(),
    }
}

/// A form body with a valid CSRF token, or the answer to give instead.
async fn checked_form(ctx: &Ctx, body: Body) -> Result<Fields, Response> {
    let fields = form::read(&ctx.headers, body, true)
        .await
        .map_err(|e| error::form(ctx, e))?;
    if !csrf::verify(&ctx.headers, ctx.cookies, fields.get("csrf")) {
        return Err(error::csrf(ctx));
    }
    Ok(fields)
}

fn lifetime(state: &HostedState) -> Duration {
    state.authn.ceremony_lifetime().unwrap_or_default()
}

/// `POST /auth/passkey/options`: starts a passkey sign-in.
pub(crate) async fn sign_in_options(
    State(state): State<HostedState>,
    ctx: Ctx,
    body: Body,
) -> Response {
    if let Err(page) = checked_form(&ctx, body).await {
        return page;
    }
    match state
        .authn
        .begin_passkey_sign_in(&ctx.current.tenant, &ctx.current.issuer)
        .await
    {
        Ok(start) => options_response(&ctx, start, lifetime(&state)),
        Err(e) => Problem::from(e).into_response(),
    }
}

/// `POST /auth/passkey`: the browser's answer to a passkey sign-in.
pub(crate) async fn sign_in(State(state): State<HostedState>, ctx: Ctx, body: Body) -> Response {
    if !state.authn.passkeys_enabled() {
        return error::not_found(&ctx);
    }
    let fields = match checked_form(&ctx, body).await {
        Ok(fields) => fields,
        Err(page) => return page,
    };
    let pending = match pending(&state, &ctx, fields.get("interaction")).await {
        Ok(pending) => pending,
        Err(page) => return page,
    };
    let cookie = ctx.cookies.ceremony(&ctx.headers).unwrap_or_default();
    let answer = fields.get("credential").unwrap_or_default();
    let (client, new_device) = super::second_factor::with_device(&state, &ctx);
    let outcome = state
        .authn
        .finish_passkey_sign_in(
            &ctx.current.tenant,
            &ctx.current.issuer,
            &cookie,
            answer,
            &client,
        )
        .await;
    let mut response = match outcome {
        Ok(signed_in) => {
            let mut response =
                signed_in_response(&state, &ctx, signed_in, pending.interaction.as_ref()).await;
            if let Some(device) = new_device {
                cookies::append(&mut response, ctx.cookies.set_device(&device));
            }
            response
        }
        Err(e) => match error::refusal(&ctx, e) {
            Ok(refusal) => {
                let captcha = sign_in_captcha(&state, &ctx, None).await;
                sign_in_page(&state, &ctx, &pending, ("", captcha), Some(&refusal))
            }
            Err(page) => page,
        },
    };
    cookies::append(&mut response, ctx.cookies.clear_ceremony());
    response
}

/// The signed-in person, or the page to show instead.
async fn person(state: &HostedState, ctx: &Ctx) -> Result<(Session, User), Response> {
    if !state.authn.passkeys_enabled() {
        return Err(error::not_found(ctx));
    }
    match ctx.signed_in(&state.authn).await? {
        Some(found) => Ok(found),
        None => Err(see_other("/auth/sign-in")),
    }
}

/// What the page says besides the person's passkeys.
#[derive(Clone, Copy)]
enum Notice {
    Added,
    Renamed,
    Removed,
}

/// `GET /auth/account/passkeys[?done=added|renamed|removed]`.
pub(crate) async fn page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let (session, user) = match person(&state, &ctx).await {
        Ok(found) => found,
        Err(page) => return page,
    };
    let notice = match Fields::from_query(query.as_deref()).get("done") {
        Some("added") => Some(Notice::Added),
        Some("renamed") => Some(Notice::Renamed),
        Some("removed") => Some(Notice::Removed),
        _ => None,
    };
    overview(&state, &ctx, (&session, &user), notice, None).await
}

async fn overview(
    state: &HostedState,
    ctx: &Ctx,
    (session, user): (&Session, &User),
    notice: Option<Notice>,
    refusal: Option<&Refusal>,
) -> Response {
    let tenant = &ctx.current.tenant;
    let passkeys = match state.authn.passkeys(tenant, &user.id).await {
        Ok(passkeys) => passkeys,
        Err(e) => return error::fatal(ctx, e),
    };
    let may_add = match state.authn.may_add_passkey_now(tenant, session, user).await {
        Ok(may_add) => may_add,
        Err(e) => return error::fatal(ctx, e),
    };
    let s = ctx.s();
    let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
    let rows = passkeys
        .iter()
        .map(|p| PasskeyRow::new(s, p))
        .collect::<Vec<_>>();
    let view = PasskeysView {
        chrome: &ctx.chrome,
        title: s.passkeys_title,
        notice: notice.map(|n| match n {
            Notice::Added => s.passkey_added,
            Notice::Renamed => s.passkey_renamed,
            Notice::Removed => s.passkey_removed,
        }),
        alert: refusal.map(|r| r.message),
        csrf: csrf.value(),
        rows,
        webauthn: may_add.then(|| PasskeyForm::register(s, csrf.value())),
    };
    let mut response = view.respond();
    if may_add {
        response.extensions_mut().insert(FormTargets::webauthn());
    }
    csrf.attach(&mut response, ctx.cookies);
    match refusal {
        Some(refusal) => refusal.finish(response),
        None => response,
    }
}

/// `POST /auth/account/passkeys/options`: starts registering a passkey.
pub(crate) async fn register_options(
    State(state): State<HostedState>,
    ctx: Ctx,
    body: Body,
) -> Response {
    if let Err(page) = checked_form(&ctx, body).await {
        return page;
    }
    let (session, user) = match person(&state, &ctx).await {
        Ok(found) => found,
        Err(page) => return page,
    };
    match state
        .authn
        .begin_passkey_registration(&ctx.current.tenant, &ctx.current.issuer, &session, &user)
        .await
    {
        Ok(start) => options_response(&ctx, start, lifetime(&state)),
        Err(e) => Problem::from(e).into_response(),
    }
}

/// `POST /auth/account/passkeys`: `action=register|rename|remove`.
pub(crate) async fn submit(State(state): State<HostedState>, ctx: Ctx, body: Body) -> Response {
    let fields = match checked_form(&ctx, body).await {
        Ok(fields) => fields,
        Err(page) => return page,
    };
    let (session, user) = match person(&state, &ctx).await {
        Ok(found) => found,
        Err(page) => return page,
    };
    let tenant = &ctx.current.tenant;
    let name = fields.get("name").unwrap_or_default();
    let passkey = fields.get("passkey").and_then(|p| PasskeyId::parse(p).ok());
    let (outcome, done, registering) = match (fields.get("action"), passkey) {
        (Some("register"), _) => {
            let cookie = ctx.cookies.ceremony(&ctx.headers).unwrap_or_default();
            let answer = fields.get("credential").unwrap_or_default();
            let outcome = state
                .authn
                .finish_passkey_registration(
                    tenant,
                    &ctx.current.issuer,
                    (&session, &user),
                    &cookie,
                    answer,
                    name,
                )
                .await
                .map(drop);
            (outcome, "added", true)
        }
        (Some("rename"), Some(id)) => (
            state
                .authn
                .rename_passkey(tenant, &user.id, &id, name)
                .await,
            "renamed",
            false,
        ),
        (Some("remove"), Some(id)) => (
            state.authn.remove_passkey(tenant, &user.id, &id).await,
            "removed",
            false,
        ),
        (Some("rename" | "remove"), None) => (Err(AuthnError::UnknownPasskey), "", false),
        _ => return error::form(&ctx, form::FormError::Malformed),
    };
    let mut response = match outcome {
        Ok(()) => see_other(&format!("{PATH}?done={done}")),
        Err(e) => match error::refusal(&ctx, e) {
            Ok(refusal) => overview(&state, &ctx, (&session, &user), None, Some(&refusal)).await,
            Err(page) => page,
        },
    };
    if registering {
        cookies::append(&mut response, ctx.cookies.clear_ceremony());
    }
    response
}
