//! The invitation page, `/auth/join?token=…`: the link the management API mails
//! (`POST /api/v1/invitations`). Its GET only shows the invitation and a form, so a mail scanner
//! that prefetches the link accepts nothing; its POST (CSRF-checked) accepts.
//!
//! Who may accept is the engine's rule ([`svc_authn::Authn::join_offer`]): signed in as the
//! invited address, they get an Accept button; nobody signed in and no account for the address,
//! they create the account on the page (name, password with the sign-up rules) and are signed in;
//! an account exists, they are told to sign in first. Every refusal is a page with its own
//! status: 404 for an unknown link (which never says to whom an invitation went), 410 for an
//! expired, accepted or revoked one, 403 for another person's invitation or one that cannot be
//! accepted, 409 for someone who already belongs.

use super::links::{checked_form, token_of, with_csrf};
use super::view::{Button, Field, Form, Page};
use super::{Ctx, HostedState, cookies, form::Fields, see_other};
use crate::error::page::{self as error, Refusal};
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use http::StatusCode;
use svc_authn::{JoinError, JoinOffer, Joiner};
use svc_domain::{InvitationState, User};

/// Where a browser lands after accepting.
const JOINED: &str = "/auth/join?joined=1";

/// `GET /auth/join?token=…` (or, with `?joined=1`, the confirmation).
pub(crate) async fn page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let s = ctx.s();
    let query = Fields::from_query(query.as_deref());
    if query.get("joined") == Some("1") {
        return Page::new(s.join.joined_title)
            .text(s.join.joined)
            .link(None, s.join.account_link, "/auth/account".to_owned())
            .render(&ctx.chrome);
    }
    let Some(token) = token_of(&query) else {
        return error::invalid_link(&ctx);
    };
    let viewer = match viewer(&state, &ctx).await {
        Ok(viewer) => viewer,
        Err(page) => return page,
    };
    match state
        .authn
        .join_offer(&ctx.current.tenant, token, viewer.as_ref())
        .await
    {
        Ok(offer) => offer_page(&state, &ctx, &offer, token, "", None),
        // The sign-in this page asks for comes back here (see `return_after_sign_in`).
        Err(JoinError::SignInFirst) => {
            let mut response = refused(&ctx, JoinError::SignInFirst);
            cookies::append(&mut response, ctx.cookies.set_join(token, RETURN_FOR));
            response
        }
        Err(e) => refused(&ctx, e),
    }
}

/// How long a sign-in started from an invitation still returns to it.
const RETURN_FOR: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// Where a sign-in without an authorization request continues when this browser opened an
/// invitation that asked for it: back to that invitation (the join cookie's link secret, only
/// when it has the shape of one, so the cookie can name no other place), with the `Set-Cookie`
/// that forgets it.
pub(crate) fn return_after_sign_in(ctx: &Ctx) -> Option<(String, Option<http::HeaderValue>)> {
    let token = ctx.cookies.join(&ctx.headers)?;
    let secret = token.strip_prefix(svc_domain::INVITATION_TOKEN_PREFIX)?;
    let well_formed = !secret.is_empty()
        && token.len() <= 128
        && secret
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    well_formed.then(|| {
        (
            format!("/auth/join?token={token}"),
            ctx.cookies.clear_join(),
        )
    })
}

/// `POST /auth/join`: accepts as the signed-in person, or creates the account and accepts.
pub(crate) async fn submit(State(state): State<HostedState>, ctx: Ctx, body: Body) -> Response {
    let fields = match checked_form(&ctx, body).await {
        Ok(fields) => fields,
        Err(page) => return page,
    };
    let Some(token) = token_of(&fields) else {
        return error::invalid_link(&ctx);
    };
    let tenant = &ctx.current.tenant;
    match viewer(&state, &ctx).await {
        Err(page) => page,
        Ok(Some(user)) => match state.authn.join_signed_in(tenant, token, &user.id).await {
            Ok(_) => see_other(JOINED),
            Err(e) => refused(&ctx, e),
        },
        Ok(None) => {
            let password = fields.get("password").unwrap_or_default();
            let name = fields.get("name").unwrap_or_default();
            match state
                .authn
                .join_with_new_account(
                    tenant,
                    token,
                    password,
                    fields.non_empty("name"),
                    &ctx.client,
                )
                .await
            {
                Ok(signed_in) => {
                    let mut response = see_other(JOINED);
                    cookies::append(&mut response, ctx.cookies.set_signed_in(&signed_in));
                    response
                }
                // A refused password (or a rate limit): the form again, the link still usable.
                Err(JoinError::Authn(e)) => match error::refusal(&ctx, e) {
                    Ok(refusal) => match state.authn.join_offer(tenant, token, None).await {
                        Ok(offer) => offer_page(&state, &ctx, &offer, token, name, Some(&refusal)),
                        Err(e) => refused(&ctx, e),
                    },
                    Err(page) => page,
                },
                Err(e) => refused(&ctx, e),
            }
        }
    }
}

/// The person signed in on this browser, if any.
async fn viewer(state: &HostedState, ctx: &Ctx) -> Result<Option<User>, Response> {
    Ok(ctx.signed_in(&state.authn).await?.map(|(_, user)| user))
}

/// The invitation and the form its viewer may submit.
fn offer_page(
    state: &HostedState,
    ctx: &Ctx,
    offer: &JoinOffer,
    token: &str,
    name: &str,
    refusal: Option<&Refusal>,
) -> Response {
    let s = ctx.s();
    let response = with_csrf(state, ctx, |csrf| {
        let mut page = Page::new(s.join.title);
        page = match &offer.organization {
            Some(org) => page
                .text(s.join.intro_organization)
                .detail(s.join.organization_label, org.name.clone()),
            None => page.text(s.join.intro_tenant),
        };
        let roles: Vec<&str> = offer.invitation.roles.iter().map(|r| r.as_str()).collect();
        if !roles.is_empty() {
            page = page.detail(s.join.roles_label, roles.join(", "));
        }
        page = page.detail(s.join.invited_label, offer.invitation.email.to_string());
        let form = Form::new("/auth/join", csrf).hidden("token", Some(token));
        match offer.joiner {
            Joiner::Invitee => page.form(form.button(Button::primary(s.join.accept_submit))),
            Joiner::Newcomer => {
                let mut field = Field::name(s, name);
                field.required = false;
                let mut password = Field::new_password(s);
                if let Some(refusal) = refusal {
                    if let Some(alert) = refusal.alert() {
                        page = page.alert(alert);
                    }
                    if let Some(message) = refusal.on("password") {
                        password = password.error(message);
                    }
                }
                page.text(s.join.create_intro).form(
                    form.field(field)
                        .field(password)
                        .button(Button::primary(s.join.create_submit)),
                )
            }
        }
    });
    match refusal {
        Some(refusal) => refusal.finish(response),
        None => response,
    }
}

/// The page of a link that cannot be used by this viewer.
fn refused(ctx: &Ctx, error: JoinError) -> Response {
    let s = ctx.s();
    let (status, text) = match error {
        JoinError::Unknown => (StatusCode::NOT_FOUND, s.join.unknown),
        JoinError::Gone(InvitationState::Accepted) => (StatusCode::GONE, s.join.accepted),
        JoinError::Gone(InvitationState::Revoked) => (StatusCode::GONE, s.join.revoked),
        JoinError::Gone(_) => (StatusCode::GONE, s.join.expired),
        JoinError::OtherAddress => (StatusCode::FORBIDDEN, s.join.other_address),
        JoinError::AlreadyMember => (StatusCode::CONFLICT, s.join.already_member),
        JoinError::Refused => (StatusCode::FORBIDDEN, s.join.refused),
        JoinError::SignInFirst => {
            // The ordinary path of a person with an account who opened the mail first.
            return Page::new(s.join.title)
                .status(StatusCode::OK)
                .text(s.join.sign_in_first)
                .link(None, s.sign_in_link, "/auth/sign-in".to_owned())
                .render(&ctx.chrome);
        }
        JoinError::Authn(e) => return error::fatal(ctx, e),
    };
    Page::new(s.join.refused_title)
        .status(status)
        .text(text)
        .render(&ctx.chrome)
}
