//! Social sign-in on the hosted pages (`[social]`): the sign-in page's "Continue with …"
//! buttons post the provider to `/auth/social/start`; the provider sends the browser back to
//! `/auth/social/callback` (a GET, or a POST for providers answering by `form_post`); a
//! provider account whose address an existing person has waits at `/auth/social/link` until
//! that person signs in and confirms; `/auth/account/connections` lists, connects and
//! disconnects the signed-in person's provider accounts. Every route exists only while social
//! sign-in is on.
//!
//! The start answers a page that moves on to the provider by itself (a `meta` refresh), so the
//! pages' `form-action` need not name the provider. A `form_post` answer is a cross-site POST,
//! which does not carry our `SameSite=Lax` cookie: the callback then answers a page whose form
//! sends the same fields once more from our own origin, which does (`relayed=1` marks it, so
//! it happens once). The attempt's secret travels in the social cookie alone; the callback
//! clears it, right or wrong.

use super::csrf::{self, CsrfToken};
use super::form::{self, Fields};
use super::sign_in::{pending, signed_in_response};
use super::view::{Button, Form, Page};
use super::{Ctx, HostedState, cookies, path_with, see_other};
use crate::error::page as error;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use http::StatusCode;
use svc_authn::{SocialOutcome, SocialReturn, SocialStart, UpstreamResponse};
use svc_domain::{InteractionId, SOCIAL_CALLBACK_PATH};
use utoipa_axum::router::OpenApiRouter;

/// Where the start form posts.
pub(crate) const START_PATH: &str = "/auth/social/start";
/// The confirmation of a link to an existing account.
pub(crate) const LINK_PATH: &str = "/auth/social/link";
/// The signed-in person's connected accounts.
pub(crate) const CONNECTIONS_PATH: &str = "/auth/account/connections";

/// The routes, added by the hosted router while social sign-in is on.
pub(crate) fn routes(router: OpenApiRouter<HostedState>) -> OpenApiRouter<HostedState> {
    use axum::routing::{get, post};
    router
        .route(START_PATH, post(start))
        .route(SOCIAL_CALLBACK_PATH, get(callback_get).post(callback_post))
        .route(LINK_PATH, get(link_page).post(link_submit))
        .route(CONNECTIONS_PATH, get(connections).post(connections_submit))
}

/// After a sign-in: back to the confirmation of the link waiting in this browser, if any.
pub(crate) fn return_after_sign_in(ctx: &Ctx) -> Option<(String, Option<http::HeaderValue>)> {
    ctx.cookies
        .social_link(&ctx.headers)
        .filter(|v| v.starts_with(svc_authn::SOCIAL_LINK_COOKIE_PREFIX) && v.len() <= 128)
        .map(|_| (LINK_PATH.to_owned(), None))
}

/// The page that moves on to the provider, with the attempt cookie.
fn leave_for(ctx: &Ctx, start: SocialStart) -> Response {
    let s = ctx.s();
    let mut response = Page::new(s.social.leaving_title)
        .text(s.social.leaving)
        .continue_to(start.location, s.social.leaving_link)
        .render(&ctx.chrome);
    cookies::append(
        &mut response,
        ctx.cookies.set_social(&start.cookie_value, start.lifetime),
    );
    response
}

/// A refusal as a page of its own, with the way back to the sign-in page.
fn failed_page(ctx: &Ctx, e: svc_authn::AuthnError) -> Response {
    let s = ctx.s();
    match error::refusal(ctx, e) {
        Ok(refusal) => refusal.finish(
            Page::new(s.social.failed_title)
                .alert(refusal.message)
                .link(None, s.sign_in_link, "/auth/sign-in".to_owned())
                .render(&ctx.chrome),
        ),
        Err(page) => page,
    }
}

/// `POST /auth/social/start`: sends the browser to the chosen provider.
pub(crate) async fn start(State(state): State<HostedState>, ctx: Ctx, body: Body) -> Response {
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
    let provider = fields.get("provider").unwrap_or_default();
    match state
        .authn
        .begin_social(
            &ctx.current.tenant,
            &ctx.current.issuer,
            (provider, pending.interaction.as_ref(), None),
            &ctx.client,
        )
        .await
    {
        Ok(start) => leave_for(&ctx, start),
        Err(e) => failed_page(&ctx, e),
    }
}

/// `GET /auth/social/callback`: the provider's answer in the query (RFC 6749 §4.1.2).
pub(crate) async fn callback_get(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    finish(&state, &ctx, &Fields::from_query(query.as_deref())).await
}

/// `POST /auth/social/callback`: the provider's answer by `form_post`, or our relay of it.
pub(crate) async fn callback_post(
    State(state): State<HostedState>,
    ctx: Ctx,
    body: Body,
) -> Response {
    let fields = match form::read(&ctx.headers, body, true).await {
        Ok(fields) => fields,
        Err(e) => return error::form(&ctx, e),
    };
    if ctx.cookies.social(&ctx.headers).is_none() && fields.get("relayed").is_none() {
        return relay(&ctx, &fields);
    }
    finish(&state, &ctx, &fields).await
}

/// The page that posts a `form_post` answer again from our origin, so the cookie goes along.
fn relay(ctx: &Ctx, fields: &Fields) -> Response {
    let s = ctx.s();
    let mut form = Form::new(SOCIAL_CALLBACK_PATH, "").hidden("relayed", Some("1"));
    for name in ["code", "state", "iss", "error", "user"] {
        form = form.hidden(name, fields.get(name));
    }
    Page::new(s.social.relay_title)
        .text(s.social.relay)
        .form(form.button(Button::primary(s.continue_link)))
        .render(&ctx.chrome)
}

/// The return, whichever way it came.
async fn finish(state: &HostedState, ctx: &Ctx, fields: &Fields) -> Response {
    let cookie = ctx.cookies.social(&ctx.headers);
    let session_user = match ctx.signed_in(&state.authn).await {
        Ok(found) => found.map(|(_, user)| user.id),
        Err(page) => return page,
    };
    let back = SocialReturn {
        cookie: cookie.as_deref(),
        response: UpstreamResponse {
            code: fields.get("code"),
            state: fields.get("state"),
            iss: fields.get("iss"),
            error: fields.get("error"),
        },
        apple_user: fields.get("user"),
        session_user: session_user.as_ref(),
    };
    let (client, new_device) = super::second_factor::with_device(state, ctx);
    let outcome = state
        .authn
        .finish_social(&ctx.current.tenant, &ctx.current.issuer, back, &client)
        .await;
    let s = ctx.s();
    let mut response = match outcome {
        Ok(SocialOutcome::SignedIn(signed_in, interaction)) => {
            let redirect = signed_in_response(state, ctx, *signed_in, interaction.as_ref()).await;
            let mut response = super::sso::continue_page(ctx, redirect);
            if let Some(device) = new_device {
                cookies::append(&mut response, ctx.cookies.set_device(&device));
            }
            response
        }
        Ok(SocialOutcome::SecondFactor(pending, interaction)) => {
            let redirect = super::second_factor::challenge_response(
                state,
                ctx,
                &pending,
                interaction.as_ref(),
            );
            super::sso::continue_page(ctx, redirect)
        }
        Ok(SocialOutcome::Linked { provider }) => Page::new(s.social.connections_title)
            .line(s.social.connected, Some(provider), "")
            .continue_to(CONNECTIONS_PATH.to_owned(), s.continue_link)
            .render(&ctx.chrome),
        Ok(SocialOutcome::ConfirmLink {
            cookie_value,
            lifetime,
            ..
        }) => {
            let mut response = Page::new(s.social.confirm_title)
                .continue_to(LINK_PATH.to_owned(), s.continue_link)
                .render(&ctx.chrome);
            cookies::append(
                &mut response,
                ctx.cookies.set_social_link(&cookie_value, lifetime),
            );
            response
        }
        Err(e) => failed_page(ctx, e),
    };
    cookies::append(&mut response, ctx.cookies.clear_social());
    response
}

/// `GET /auth/social/link`: the link waiting in this browser: sign in to the account first,
/// or confirm it.
pub(crate) async fn link_page(State(state): State<HostedState>, ctx: Ctx) -> Response {
    let session_user = match ctx.signed_in(&state.authn).await {
        Ok(found) => found.map(|(_, user)| user.id),
        Err(page) => return page,
    };
    let cookie = ctx.cookies.social_link(&ctx.headers);
    let view = match state
        .authn
        .pending_social_link(
            &ctx.current.tenant,
            cookie.as_deref(),
            session_user.as_ref(),
        )
        .await
    {
        Ok(view) => view,
        Err(e) => {
            let mut page = failed_page(&ctx, e);
            cookies::append(&mut page, ctx.cookies.clear_social_link());
            return page;
        }
    };
    let s = ctx.s();
    let page = Page::new(s.social.confirm_title)
        .line(s.social.confirm_account, Some(view.email), "")
        .detail(s.social.connections_title, view.provider);
    match (session_user, view.for_session_user) {
        (None, _) => page
            .text(s.social.confirm_sign_in_first)
            .link(
                None,
                s.social.confirm_sign_in_link,
                "/auth/sign-in".to_owned(),
            )
            .render(&ctx.chrome),
        (Some(_), false) => page
            .status(StatusCode::FORBIDDEN)
            .alert(s.social.wrong_account)
            .link(None, s.sign_out_submit, "/auth/sign-out".to_owned())
            .render(&ctx.chrome),
        (Some(_), true) => {
            let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
            let form = Form::new(LINK_PATH, csrf.value())
                .button(Button::choice(
                    "decision",
                    "connect",
                    s.social.confirm_submit,
                    true,
                ))
                .button(Button::choice(
                    "decision",
                    "cancel",
                    s.social.cancel_submit,
                    false,
                ));
            let mut response = page
                .text(s.social.confirm_intro)
                .form(form)
                .render(&ctx.chrome);
            csrf.attach(&mut response, ctx.cookies);
            response
        }
    }
}

/// `POST /auth/social/link`: the signed-in person confirms (or cancels) the link.
pub(crate) async fn link_submit(
    State(state): State<HostedState>,
    ctx: Ctx,
    body: Body,
) -> Response {
    let fields = match form::read(&ctx.headers, body, true).await {
        Ok(fields) => fields,
        Err(e) => return error::form(&ctx, e),
    };
    if !csrf::verify(&ctx.headers, ctx.cookies, fields.get("csrf")) {
        return error::csrf(&ctx);
    }
    let user = match ctx.signed_in(&state.authn).await {
        Ok(Some((_, user))) => user,
        Ok(None) => return see_other("/auth/sign-in"),
        Err(page) => return page,
    };
    let s = ctx.s();
    let cookie = ctx.cookies.social_link(&ctx.headers);
    let mut response = if fields.get("decision") == Some("connect") {
        match state
            .authn
            .confirm_social_link(&ctx.current.tenant, cookie.as_deref(), &user.id)
            .await
        {
            Ok(done) => match done.interaction {
                Some(id) => see_other(&resume(&id)),
                None => Page::new(s.social.connections_title)
                    .line(s.social.connected, Some(done.provider), "")
                    .continue_to(CONNECTIONS_PATH.to_owned(), s.continue_link)
                    .render(&ctx.chrome),
            },
            // Another account's link stays for that account.
            Err(e @ svc_authn::AuthnError::SocialWrongAccount) => return failed_page(&ctx, e),
            Err(e) => failed_page(&ctx, e),
        }
    } else {
        Page::new(s.social.confirm_title)
            .text(s.social.cancelled)
            .link(None, s.continue_link, "/auth/account".to_owned())
            .render(&ctx.chrome)
    };
    cookies::append(&mut response, ctx.cookies.clear_social_link());
    response
}

fn resume(id: &InteractionId) -> String {
    path_with(
        "/oauth/authorize/resume",
        &[("interaction", Some(id.as_str()))],
    )
}

/// `GET /auth/account/connections`: the person's connected accounts, with a button to
/// disconnect each and to connect each provider not connected yet.
pub(crate) async fn connections(State(state): State<HostedState>, ctx: Ctx) -> Response {
    let user = match ctx.signed_in(&state.authn).await {
        Ok(Some((_, user))) => user,
        Ok(None) => return see_other("/auth/sign-in"),
        Err(page) => return page,
    };
    let tenant = &ctx.current.tenant;
    let (connected, offered) = match (
        state.authn.connected_accounts(tenant, &user.id).await,
        state.authn.social_buttons(tenant).await,
    ) {
        (Ok(connected), Ok(offered)) => (connected, offered),
        (Err(e), _) | (_, Err(e)) => return error::fatal(&ctx, e),
    };
    let s = ctx.s();
    let mut page = Page::new(s.social.connections_title);
    if connected.is_empty() {
        page = page.text(s.social.none_connected);
    }
    let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
    let mut form = Form::new(CONNECTIONS_PATH, csrf.value());
    for account in &connected {
        let label = match &account.email {
            Some(email) => format!("{} ({email})", account.display_name),
            None => account.display_name.clone(),
        };
        page = page.item(label, None);
        form = form.button(Button::data_choice(
            "disconnect",
            account.provider.clone(),
            format!("{} {}", s.social.disconnect, account.display_name),
        ));
    }
    for button in offered
        .iter()
        .filter(|b| !connected.iter().any(|c| c.provider == b.slug))
    {
        form = form.button(Button::data_choice(
            "connect",
            button.slug.clone(),
            format!("{} {}", s.social.connect, button.display_name),
        ));
    }
    let mut response = page
        .form(form)
        .link(None, s.continue_link, "/auth/account".to_owned())
        .render(&ctx.chrome);
    csrf.attach(&mut response, ctx.cookies);
    response
}

/// `POST /auth/account/connections`: connect (`connect=<slug>`) or disconnect
/// (`disconnect=<slug>`).
pub(crate) async fn connections_submit(
    State(state): State<HostedState>,
    ctx: Ctx,
    body: Body,
) -> Response {
    let fields = match form::read(&ctx.headers, body, true).await {
        Ok(fields) => fields,
        Err(e) => return error::form(&ctx, e),
    };
    if !csrf::verify(&ctx.headers, ctx.cookies, fields.get("csrf")) {
        return error::csrf(&ctx);
    }
    let user = match ctx.signed_in(&state.authn).await {
        Ok(Some((_, user))) => user,
        Ok(None) => return see_other("/auth/sign-in"),
        Err(page) => return page,
    };
    let tenant = &ctx.current.tenant;
    let s = ctx.s();
    if let Some(slug) = fields.get("connect") {
        return match state
            .authn
            .begin_social(
                tenant,
                &ctx.current.issuer,
                (slug, None, Some(&user.id)),
                &ctx.client,
            )
            .await
        {
            Ok(start) => leave_for(&ctx, start),
            Err(e) => failed_page(&ctx, e),
        };
    }
    let Some(slug) = fields.get("disconnect") else {
        return error::not_found(&ctx);
    };
    match state.authn.unlink_social(tenant, &user.id, slug).await {
        Ok(()) => Page::new(s.social.connections_title)
            .text(s.social.disconnected)
            .continue_to(CONNECTIONS_PATH.to_owned(), s.continue_link)
            .render(&ctx.chrome),
        Err(e) => match error::refusal(&ctx, e) {
            Ok(refusal) => refusal.finish(
                Page::new(s.social.connections_title)
                    .alert(refusal.message)
                    .link(None, s.continue_link, CONNECTIONS_PATH.to_owned())
                    .render(&ctx.chrome),
            ),
            Err(page) => page,
        },
    }
}
