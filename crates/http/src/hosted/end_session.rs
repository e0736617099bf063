//! OpenID RP-Initiated Logout 1.0 (`GET/POST /oauth/end-session`): the relying party asks the
//! OP to end the person's session and, optionally, to return to a registered
//! `post_logout_redirect_uri`. The engine ([`svc_oauth::end_session::EndSession`]) validates the
//! request (`id_token_hint`, `client_id`, the redirect) and says whether to ask the person, sign
//! out, or show an error page; this module renders the confirmation (re-posting the same
//! parameters with `confirm=yes` and a CSRF token) and performs the sign-out.

use super::account::{end_browser_session, signed_out_to};
use super::csrf::{self, CsrfToken};
use super::form::{self, Fields};
use super::view::{Button, Form, Page};
use super::{Ctx, HostedState};
use crate::error::page as error;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use svc_domain::LogoutReason;
use svc_oauth::end_session::EndSessionOutcome;

/// `GET /oauth/end-session` (OpenID RP-Initiated Logout 1.0 §2).
#[utoipa::path(
    get, path = "/oauth/end-session", tag = crate::openapi::tags::PROTOCOL,
    operation_id = "endSession",
    summary = "Sign out at the issuer (RP-initiated logout)",
    description = super::END_SESSION_DESCRIPTION,
    params(super::EndSessionParams),
    responses(
        (status = 200, description = "HTML page asking the person to confirm the sign-out.",
         body = String, content_type = "text/html"),
        (status = 303, description = "Signed out: to the registered `post_logout_redirect_uri` \
            (with `state`), or to the hosted signed-out page.",
         headers(
             ("Location" = String, description = "Where the browser goes next."),
             ("Set-Cookie" = String, description = "Clears the session cookie."),
         )),
        (status = 400, description = "HTML error page: a repeated parameter, an invalid \
            `id_token_hint`, a `client_id` that is not the hint's audience or unknown, or an \
            unregistered `post_logout_redirect_uri`.", body = String, content_type = "text/html"),
        (status = 500, description = "HTML error page: an unexpected fault.",
         body = String, content_type = "text/html"),
        (status = 503, description = "HTML error page: a dependency is unavailable; try again.",
         body = String, content_type = "text/html"),
    ),
)]
pub(crate) async fn end_session_get(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let params = Fields::from_query(query.as_deref());
    end_session(&state, &ctx, &params, false).await
}

/// `POST /oauth/end-session`: the relying party's form post (no CSRF token, treated like the
/// GET) or our confirmation (`confirm=yes` with a CSRF token, which signs out).
#[utoipa::path(
    post, path = "/oauth/end-session", tag = crate::openapi::tags::PROTOCOL,
    operation_id = "endSessionWithForm",
    summary = "Sign out at the issuer with a form post (or confirm a sign-out)",
    description = super::END_SESSION_DESCRIPTION,
    request_body(
        content = super::EndSessionForm,
        content_type = "application/x-www-form-urlencoded",
        description = "The logout request's parameters (no field twice), or the confirmation \
                       page's form.",
    ),
    responses(
        (status = 200, description = "HTML page asking the person to confirm the sign-out.",
         body = String, content_type = "text/html"),
        (status = 303, description = "Signed out: to the registered `post_logout_redirect_uri` \
            (with `state`), or to the hosted signed-out page.",
         headers(
             ("Location" = String, description = "Where the browser goes next."),
             ("Set-Cookie" = String, description = "Clears the session cookie."),
         )),
        (status = 400, description = "HTML error page: the body is not a URL-encoded form or \
            repeats a field, an invalid `id_token_hint`, a `client_id` that is not the hint's \
            audience or unknown, or an unregistered `post_logout_redirect_uri`.",
         body = String, content_type = "text/html"),
        (status = 403, description = "HTML error page: `confirm=yes` without a CSRF token \
            matching the CSRF cookie; nothing was changed.", body = String,
         content_type = "text/html"),
        (status = 413, description = "HTML error page: the form is over 16 KiB.",
         body = String, content_type = "text/html"),
        (status = 500, description = "HTML error page: an unexpected fault.",
         body = String, content_type = "text/html"),
        (status = 503, description = "HTML error page: a dependency is unavailable; try again.",
         body = String, content_type = "text/html"),
    ),
)]
pub(crate) async fn end_session_post(
    State(state): State<HostedState>,
    ctx: Ctx,
    body: Body,
) -> Response {
    let fields = match form::read(&ctx.headers, body, true).await {
        Ok(fields) => fields,
        Err(e) => return error::form(&ctx, e),
    };
    let confirmed = fields.get("confirm") == Some("yes");
    if confirmed && !csrf::verify(&ctx.headers, ctx.cookies, fields.get("csrf")) {
        return error::csrf(&ctx);
    }
    // Our own fields are not the relying party's parameters.
    let params = Fields::from_pairs(
        fields
            .pairs()
            .iter()
            .filter(|(name, _)| name != "csrf" && name != "confirm")
            .cloned()
            .collect(),
    );
    end_session(&state, &ctx, &params, confirmed).await
}

async fn end_session(state: &HostedState, ctx: &Ctx, params: &Fields, confirmed: bool) -> Response {
    let session = match ctx.signed_in(&state.authn).await {
        Ok(found) => found.map(|(session, _)| session),
        Err(page) => return page,
    };
    let decided = state
        .end_session
        .request(
            &ctx.current.tenant,
            &ctx.current.issuer,
            params.pairs(),
            session.as_ref(),
            confirmed,
        )
        .await;
    let s = ctx.s();
    match decided {
        EndSessionOutcome::Confirm { client_name } => {
            let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
            let mut form = Form::new("/oauth/end-session", csrf.value());
            for (name, value) in params.pairs() {
                form = form.hidden(name, Some(value));
            }
            let form = form
                .hidden("confirm", Some("yes"))
                .button(Button::primary(s.sign_out_submit));
            let mut page = match client_name {
                Some(name) => {
                    Page::new(s.sign_out_title).line(s.end_session_client, Some(name), "")
                }
                None => Page::new(s.sign_out_title).text(s.end_session_unknown_client),
            };
            // The confirmation's POST ends in a 303 to the post-logout URI (the engine only
            // redirects to a registered one).
            if let Some(target) = params.get("post_logout_redirect_uri") {
                page = page.form_target(target);
            }
            let mut response = page
                .text(s.sign_out_confirm)
                .form(form)
                .link(None, s.stay_signed_in, "/auth/account".to_owned())
                .render(&ctx.chrome);
            csrf.attach(&mut response, ctx.cookies);
            response
        }
        EndSessionOutcome::SignOut { redirect } => {
            match end_browser_session(state, ctx, LogoutReason::EndSession).await {
                Ok(frames) => signed_out_to(
                    ctx,
                    frames,
                    redirect.unwrap_or_else(|| "/auth/sign-out".to_owned()),
                ),
                Err(page) => page,
            }
        }
        EndSessionOutcome::ErrorPage {
            kind,
            error,
            description,
        } => error::authorize_page(ctx, kind, error, description),
    }
}
