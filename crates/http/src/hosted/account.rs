//! The signed-in person's pages: the account landing page, the list of their live sessions with
//! revocation, their sign-in history, sign-out, and OpenID RP-Initiated Logout 1.0 (`/oauth/end-session`).
//!
//! Sign-out is always a POST with a CSRF token (a GET only asks), so no third-party page can
//! sign a person out by embedding a link. Ending a session clears the cookie in the same
//! response.

use super::csrf::{self, CsrfToken};
use super::form;
use super::strings::Strings;
use super::view::{
    Button, Form, HistoryRow, HistoryView, Page, PasskeyForm, SessionRow, SessionsView,
};
use super::{Ctx, HostedState, cookies, see_other};
use crate::error::page as error;
use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use http::StatusCode;
use svc_domain::{LogoutReason, Session, SessionId};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// `GET /auth/account`: who is signed in, with links to sessions and sign-out.
pub(crate) async fn account(State(state): State<HostedState>, ctx: Ctx) -> Response {
    let (session, user) = match ctx.signed_in(&state.authn).await {
        Ok(Some(found)) => found,
        Ok(None) => return see_other("/auth/sign-in"),
        Err(page) => return page,
    };
    let s = ctx.s();
    let mut page =
        Page::new(s.account_title).line(s.signed_in_as, Some(user.email.as_str().to_owned()), "");
    if let Some(name) = user.name.clone() {
        page = page.detail(s.name_label, name);
    }
    if !user.email_verified {
        page = page.text(s.email_not_verified).text(s.verification_sent);
    }
    if state.authn.two_factor().is_some() {
        page = page.link(
            None,
            s.two_factor_link,
            "/auth/account/two-factor".to_owned(),
        );
    }
    let mut csrf = None;
    if state.authn.passkeys_enabled() {
        page = page.link(None, s.passkeys_link, "/auth/account/passkeys".to_owned());
        // A person without a passkey (the first landing after sign-up, typically) is offered
        // one right here, where the session allows adding it.
        match offer_passkey(&state, &ctx, &session, &user).await {
            Ok(true) => {
                let token = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
                page = page
                    .text(s.passkey_offer)
                    .passkey(PasskeyForm::register(s, token.value()));
                csrf = Some(token);
            }
            Ok(false) => {}
            Err(e) => return error::fatal(&ctx, e),
        }
    }
    if state.authn.recovery().is_some() {
        page = page.link(
            None,
            s.recovery.account_link,
            "/auth/account/recovery".to_owned(),
        );
    }
    if state.authn.social_enabled() {
        page = page.link(
            None,
            s.social.account_link,
            super::social::CONNECTIONS_PATH.to_owned(),
        );
    }
    if state.delegations.is_some() {
        page = page.link(
            None,
            s.delegate.account_link,
            super::delegate::LIST_PATH.to_owned(),
        );
    }
    match super::api_keys::offered(&state, &ctx).await {
        Ok(true) => {
            page = page.link(
                None,
                s.api_keys.account_link,
                super::api_keys::PATH.to_owned(),
            );
        }
        Ok(false) => {}
        Err(response) => return response,
    }
    let mut response = page
        .link(None, s.sessions_link, "/auth/sessions".to_owned())
        .link(None, s.history_link, "/auth/account/history".to_owned())
        .link(None, s.sign_out_submit, "/auth/sign-out".to_owned())
        .render(&ctx.chrome);
    if let Some(csrf) = csrf {
        csrf.attach(&mut response, ctx.cookies);
    }
    response
}

/// Whether the account page offers `user` a passkey: they have none and may add one now.
async fn offer_passkey(
    state: &HostedState,
    ctx: &Ctx,
    session: &Session,
    user: &svc_domain::User,
) -> Result<bool, svc_authn::AuthnError> {
    let tenant = &ctx.current.tenant;
    Ok(state.authn.passkeys(tenant, &user.id).await?.is_empty()
        && state
            .authn
            .may_add_passkey_now(tenant, session, user)
            .await?)
}

/// `GET /auth/sessions`: the person's live sessions, this browser's marked.
pub(crate) async fn sessions(State(state): State<HostedState>, ctx: Ctx) -> Response {
    let (current, user) = match ctx.signed_in(&state.authn).await {
        Ok(Some(found)) => found,
        Ok(None) => return see_other("/auth/sign-in"),
        Err(page) => return page,
    };
    let live = match state
        .authn
        .live_sessions(&ctx.current.tenant, &user.id)
        .await
    {
        Ok(live) => live,
        Err(e) => return error::fatal(&ctx, e),
    };
    let s = ctx.s();
    let rows = live
        .iter()
        .map(|session| row(session, session.id == current.id, s))
        .collect();
    let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
    let view = SessionsView {
        chrome: &ctx.chrome,
        title: s.sessions_title,
        notice: None,
        csrf: csrf.value(),
        rows,
    };
    let mut response = view.respond();
    csrf.attach(&mut response, ctx.cookies);
    response
}

/// How many of the newest sign-in attempts the history page shows.
const HISTORY_ROWS: u32 = 50;

/// `GET /auth/account/history`: the person's newest sign-in attempts (time, result, method,
/// address, browser), as the tenant API lists them for administrators.
pub(crate) async fn history(State(state): State<HostedState>, ctx: Ctx) -> Response {
    let (_, user) = match ctx.signed_in(&state.authn).await {
        Ok(Some(found)) => found,
        Ok(None) => return see_other("/auth/sign-in"),
        Err(page) => return page,
    };
    let records = match state
        .authn
        .login_history(&ctx.current.tenant, &user.id, HISTORY_ROWS)
        .await
    {
        Ok(records) => records,
        Err(e) => return error::fatal(&ctx, e),
    };
    let s = ctx.s();
    let rows = records
        .iter()
        .map(|r| HistoryRow {
            when: human_time(r.occurred_at, s.utc),
            when_iso: r.occurred_at.format(&Rfc3339).unwrap_or_default(),
            result: s.login_result(r.result.as_str()),
            method: s.login_method(r.method.as_str()),
            ip: r.client_ip.clone().unwrap_or_else(|| s.unknown.to_owned()),
            user_agent: r.user_agent.clone().unwrap_or_else(|| s.unknown.to_owned()),
        })
        .collect();
    HistoryView {
        chrome: &ctx.chrome,
        title: s.history_title,
        rows,
    }
    .respond()
}

fn row(session: &Session, current: bool, s: &Strings) -> SessionRow {
    SessionRow {
        id: session.id.as_str().to_owned(),
        user_agent: session
            .user_agent
            .clone()
            .unwrap_or_else(|| s.unknown.to_owned()),
        ip: session.ip.clone().unwrap_or_else(|| s.unknown.to_owned()),
        created: human_time(session.created_at, s.utc),
        created_iso: session.created_at.format(&Rfc3339).unwrap_or_default(),
        last_seen: human_time(session.last_seen_at, s.utc),
        last_seen_iso: session.last_seen_at.format(&Rfc3339).unwrap_or_default(),
        current,
    }
}

pub(crate) fn human_time(t: OffsetDateTime, utc: &str) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02} {utc}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute()
    )
}

/// `POST /auth/sessions/revoke`: ends one of the person's own sessions (another person's id
/// reads as unknown). Revoking this browser's session also clears its cookie.
pub(crate) async fn revoke(State(state): State<HostedState>, ctx: Ctx, body: Body) -> Response {
    let fields = match form::read(&ctx.headers, body, true).await {
        Ok(fields) => fields,
        Err(e) => return error::form(&ctx, e),
    };
    if !csrf::verify(&ctx.headers, ctx.cookies, fields.get("csrf")) {
        return error::csrf(&ctx);
    }
    let (current, user) = match ctx.signed_in(&state.authn).await {
        Ok(Some(found)) => found,
        Ok(None) => return see_other("/auth/sign-in"),
        Err(page) => return page,
    };
    let Some(target) = fields
        .get("session_id")
        .and_then(|raw| SessionId::parse(raw).ok())
    else {
        return error::not_found(&ctx);
    };
    // This browser's own session: its front-channel frames are read before it ends.
    let frames = if target == current.id {
        state
            .end_session
            .frontchannel_uris(&ctx.current.tenant, &current)
            .await
    } else {
        Vec::new()
    };
    match state
        .authn
        .revoke_session(&ctx.current.tenant, &user.id, &target)
        .await
    {
        Ok(true) if target == current.id => {
            signed_out_to(&ctx, frames, "/auth/sign-out".to_owned())
        }
        Ok(true) => see_other("/auth/sessions"),
        Ok(false) => error::not_found(&ctx),
        Err(e) => error::fatal(&ctx, e),
    }
}

/// `GET /auth/sign-out`: asks for confirmation, or says the browser is signed out.
pub(crate) async fn sign_out_page(State(state): State<HostedState>, ctx: Ctx) -> Response {
    let s = ctx.s();
    match ctx.signed_in(&state.authn).await {
        Ok(Some(_)) => {}
        Ok(None) => return signed_out(&ctx, StatusCode::OK),
        Err(page) => return page,
    }
    let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
    let mut response = Page::new(s.sign_out_title)
        .text(s.sign_out_confirm)
        .form(Form::new("/auth/sign-out", csrf.value()).button(Button::primary(s.sign_out_submit)))
        .link(None, s.stay_signed_in, "/auth/account".to_owned())
        .render(&ctx.chrome);
    csrf.attach(&mut response, ctx.cookies);
    response
}

/// `POST /auth/sign-out`: ends the session and clears the cookie, then shows the signed-out
/// page (a 303 to `GET /auth/sign-out`, which finds no session).
pub(crate) async fn sign_out(State(state): State<HostedState>, ctx: Ctx, body: Body) -> Response {
    let fields = match form::read(&ctx.headers, body, true).await {
        Ok(fields) => fields,
        Err(e) => return error::form(&ctx, e),
    };
    if !csrf::verify(&ctx.headers, ctx.cookies, fields.get("csrf")) {
        return error::csrf(&ctx);
    }
    match end_browser_session(&state, &ctx, LogoutReason::SignOut).await {
        Ok(frames) => signed_out_to(&ctx, frames, "/auth/sign-out".to_owned()),
        Err(page) => page,
    }
}

/// Ends this browser's session, if it has one, and returns the front-channel logout URIs of
/// the applications it signed into (read before it ends; empty while the channel is off).
pub(crate) async fn end_browser_session(
    state: &HostedState,
    ctx: &Ctx,
    reason: LogoutReason,
) -> Result<Vec<String>, Response> {
    let Some((session, _)) = ctx.signed_in(&state.authn).await? else {
        return Ok(Vec::new());
    };
    let frames = state
        .end_session
        .frontchannel_uris(&ctx.current.tenant, &session)
        .await;
    state
        .authn
        .sign_out(&ctx.current.tenant, &session, reason)
        .await
        .map_err(|e| error::fatal(ctx, e))?;
    Ok(frames)
}

/// The answer once the session ended: straight on to `next` (a 303), or, when applications
/// listen on the front channel, a page that loads their logout URIs and then moves on to
/// `next`. Either way the session cookie is cleared.
pub(crate) fn signed_out_to(ctx: &Ctx, frames: Vec<String>, next: String) -> Response {
    let s = ctx.s();
    let mut response = if frames.is_empty() {
        see_other(&next)
    } else {
        Page::new(s.signing_out_title)
            .text(s.signing_out)
            .frontchannel(frames, next, s.signing_out_continue)
            .render(&ctx.chrome)
    };
    cookies::append(&mut response, ctx.cookies.clear_session());
    response
}

pub(crate) fn signed_out(ctx: &Ctx, status: StatusCode) -> Response {
    let s = ctx.s();
    Page::new(s.signed_out_title)
        .status(status)
        .text(s.signed_out)
        .link(None, s.sign_in_link, "/auth/sign-in".to_owned())
        .render(&ctx.chrome)
}
