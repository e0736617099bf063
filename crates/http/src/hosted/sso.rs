//! Enterprise single sign-on on the hosted pages (`[enterprise_sso]`): the sign-in page's
//! "Sign in with SSO" form posts an address to `/auth/sso` (home-realm discovery), and the
//! organization's provider sends the browser back to `/auth/sso/callback`.
//!
//! The start answers a page that moves on to the provider by itself (a `meta` refresh and a
//! link) rather than a redirect: a redirect after a form submission is still the form's
//! navigation, which the pages' `form-action` would have to name, and the provider is only
//! known once the address is typed. The attempt's secret travels in the single sign-on cookie
//! alone; the callback clears it, right or wrong. A successful return also answers a page that
//! moves on by itself ([`continue_page`]). Both routes exist only while single sign-on is on.

use super::csrf;
use super::form::{self, Fields};
use super::sign_in::{pending, sign_in_captcha, sign_in_page_with_sso, signed_in_response};
use super::view::Page;
use super::{Ctx, HostedState, cookies};
use crate::error::page as error;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use svc_authn::UpstreamResponse;

/// `POST /auth/sso`: finds the organization's provider for the address and sends the browser
/// there; an address no provider serves shows the sign-in page again with the refusal under
/// the single sign-on form.
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
    let email = fields.get("email").unwrap_or_default();
    match state
        .authn
        .begin_sso(
            &ctx.current.tenant,
            &ctx.current.issuer,
            (email, pending.interaction.as_ref()),
            &ctx.client,
        )
        .await
    {
        Ok(start) => {
            let s = ctx.s();
            let mut response = Page::new(s.sso.heading)
                .text(s.sso.intro)
                .continue_to(start.location, s.sso.submit)
                .render(&ctx.chrome);
            cookies::append(
                &mut response,
                ctx.cookies.set_sso(&start.cookie_value, start.lifetime),
            );
            response
        }
        Err(e) => match error::refusal(&ctx, e) {
            Ok(refusal) => {
                let captcha = sign_in_captcha(&state, &ctx, None).await;
                let sso = (email, Some(refusal.message));
                let page = sign_in_page_with_sso(&state, &ctx, &pending, ("", captcha), None, sso);
                refusal.finish(page)
            }
            Err(page) => page,
        },
    }
}

/// The 303 `redirect` made a page that moves on to the same place by itself, its cookies kept.
///
/// The provider's own sign-in form may have led here through redirects, and Chromium checks
/// every redirect after a form submission against that form's `form-action`, which names our
/// origin and not the application's: the provider's policy would refuse our 303 onwards to the
/// application. A page ends the form's navigation; its `meta` refresh starts a new one.
pub(crate) fn continue_page(ctx: &Ctx, redirect: Response) -> Response {
    let Some(next) = redirect
        .headers()
        .get(http::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
    else {
        return redirect;
    };
    let s = ctx.s();
    let mut page = Page::new(s.sso.heading)
        .continue_to(next, s.continue_link)
        .render(&ctx.chrome);
    for cookie in redirect.headers().get_all(http::header::SET_COOKIE) {
        page.headers_mut()
            .append(http::header::SET_COOKIE, cookie.clone());
    }
    page
}

/// `GET /auth/sso/callback`: the provider's answer (RFC 6749 §4.1.2; RFC 9207 `iss`).
pub(crate) async fn callback(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let query = Fields::from_query(query.as_deref());
    let cookie = ctx.cookies.sso(&ctx.headers);
    let answer = UpstreamResponse {
        code: query.get("code"),
        state: query.get("state"),
        iss: query.get("iss"),
        error: query.get("error"),
    };
    let (client, new_device) = super::second_factor::with_device(&state, &ctx);
    let outcome = state
        .authn
        .finish_sso(
            &ctx.current.tenant,
            &ctx.current.issuer,
            cookie.as_deref(),
            answer,
            &client,
        )
        .await;
    let mut response = match outcome {
        Ok(done) => {
            let redirect =
                signed_in_response(&state, &ctx, done.signed_in, done.interaction.as_ref()).await;
            let mut response = continue_page(&ctx, redirect);
            if let Some(device) = new_device {
                cookies::append(&mut response, ctx.cookies.set_device(&device));
            }
            response
        }
        Err(e) => {
            let s = ctx.s();
            match error::refusal(&ctx, e) {
                Ok(refusal) => refusal.finish(
                    Page::new(s.sso.failed_title)
                        .alert(refusal.message)
                        .link(None, s.sign_in_link, "/auth/sign-in".to_owned())
                        .render(&ctx.chrome),
                ),
                Err(page) => page,
            }
        }
    };
    cookies::append(&mut response, ctx.cookies.clear_sso());
    response
}
