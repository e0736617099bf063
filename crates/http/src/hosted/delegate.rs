//! The delegation pages (issue 19 item 2): `/auth/delegate`, where a person sees exactly what an
//! agent asks — which permissions, at which APIs, until when — and allows or denies it; and
//! `/auth/account/delegations`, where they see what they granted and revoke it.
//!
//! An agent (or whoever runs it) sends the person to
//! `/auth/delegate?agent_id=agt_…&resource=<API>&scope=<permissions>[&expires_in_days=N]`. The
//! GET only shows (nothing is granted by opening a link); the POST is CSRF-checked, checks the
//! request again and grants it through the engine ([`svc_oauth::delegations::Delegations`]).
//! Someone not signed in is asked to sign in, and the sign-in comes back here with the same
//! request (the return cookie, as for the CIBA page). Served only while `[challenge].enabled`:
//! a delegation is used through the agent grant. Where `[ciba]` is on too, the person may tick
//! "ask me each time" (or the agent asks for it with `approval=each_use`): each use is then
//! approved on the CIBA page or API (`svc_oauth::token::agent_use`).

use super::links::{checked_form, with_csrf};
use super::view::{Button, Field, Form, Page};
use super::{Ctx, HostedState, cookies, see_other};
use crate::error::page as error;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::StatusCode;
use svc_oauth::OAuthError;
use svc_oauth::delegations::{APPROVE_EACH_USE, DelegationRequest, Delegations, Refused};

/// The consent page.
pub(crate) const PATH: &str = "/auth/delegate";

/// The account page's list.
pub(crate) const LIST_PATH: &str = "/auth/account/delegations";

/// The consent form's checkbox by which the person asks to approve each use.
const EACH_USE_FIELD: &str = "each_use";

/// The return cookie's value starts so: the rest is the request's query, base64url.
const RETURN_PREFIX: &str = "delegate-";

/// Longest request query carried through a sign-in in the return cookie.
const MAX_RETURN_QUERY: usize = 2048;

/// How long a sign-in started here still comes back.
const RETURN_FOR: std::time::Duration = std::time::Duration::from_secs(10 * 60);

fn engine(state: &HostedState) -> Option<&Delegations> {
    state.delegations.as_deref()
}

/// `GET /auth/delegate?…`.
pub(crate) async fn page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let Some(delegations) = engine(&state) else {
        return error::not_found(&ctx);
    };
    let s = ctx.s();
    let query = query.unwrap_or_default();
    match ctx.signed_in(&state.authn).await {
        Ok(Some(_)) => {}
        Ok(None) => {
            let mut response = Page::new(s.delegate.title)
                .text(s.delegate.sign_in_first)
                .link(None, s.delegate.sign_in_link, "/auth/sign-in".to_owned())
                .render(&ctx.chrome);
            if query.len() <= MAX_RETURN_QUERY {
                let value = format!("{RETURN_PREFIX}{}", URL_SAFE_NO_PAD.encode(&query));
                cookies::append(&mut response, ctx.cookies.set_join(&value, RETURN_FOR));
            }
            return response;
        }
        Err(page) => return page,
    }
    let pairs = super::form::Fields::from_query(Some(&query));
    let request = match delegations
        .request(&ctx.current.tenant, &ctx.current.issuer, pairs.pairs())
        .await
    {
        Ok(Ok(request)) => request,
        Ok(Err(refused)) => return refused_page(&ctx, &refused),
        Err(e) => return unavailable(&ctx, &e),
    };
    let offers = delegations.offers_per_use_approval();
    with_csrf(&state, &ctx, |csrf| consent(&ctx, &request, offers, csrf))
}

/// The consent page for `request`; `offers` approval of each use as a choice.
fn consent(ctx: &Ctx, request: &DelegationRequest, offers: bool, csrf: &str) -> Page {
    let s = ctx.s();
    let mut page = Page::new(s.delegate.title).line(
        s.delegate.asks,
        Some(request.agent.name.clone()),
        s.delegate.asks_tail,
    );
    for (api, permissions) in &request.apis {
        page = page.detail(s.delegate.at_label, api.name.clone());
        for permission in permissions {
            let text = if permission.description.is_empty() {
                permission.name.as_str().to_owned()
            } else {
                permission.description.clone()
            };
            page = page.item(text, Some(permission.name.as_str().to_owned()));
        }
    }
    for detail in &request.details {
        page = page.item(super::authorize::detail_text(detail), None);
    }
    let until = request.expires_at.date().to_string();
    let mut form = Form::new(PATH, csrf);
    for (name, value) in request.pairs() {
        form = form.hidden(name, Some(&value));
    }
    let mut page = page
        .detail(s.delegate.until_label, until)
        .text(s.delegate.explain);
    if request.per_use_approval {
        page = page.text(s.delegate.each_use_asked);
    } else if offers {
        form = form.field(Field::checkbox(EACH_USE_FIELD, s.delegate.each_use_label));
    }
    page.form(
        form.button(Button::choice(
            "decision",
            "allow",
            s.delegate.approve,
            true,
        ))
        .button(Button::choice("decision", "deny", s.delegate.deny, false)),
    )
}

/// `POST /auth/delegate`: allows or denies.
pub(crate) async fn submit(State(state): State<HostedState>, ctx: Ctx, body: Body) -> Response {
    let Some(delegations) = engine(&state) else {
        return error::not_found(&ctx);
    };
    let fields = match checked_form(&ctx, body).await {
        Ok(fields) => fields,
        Err(page) => return page,
    };
    let s = ctx.s();
    let allow = match fields.get("decision") {
        Some("allow") => true,
        Some("deny") => false,
        _ => return error::form(&ctx, super::form::FormError::Malformed),
    };
    let (_, user) = match ctx.signed_in(&state.authn).await {
        Ok(Some(found)) => found,
        Ok(None) => {
            return error::message(
                &ctx,
                StatusCode::UNAUTHORIZED,
                s.delegate.title,
                s.delegate.sign_in_first,
            );
        }
        Err(page) => return page,
    };
    if !allow {
        return Page::new(s.delegate.title)
            .text(s.delegate.denied)
            .link(None, s.delegate.account_link, LIST_PATH.to_owned())
            .render(&ctx.chrome);
    }
    let tenant = &ctx.current.tenant;
    // The person's choice of approving each use, unless the agent asked for it already.
    let mut pairs = fields.pairs().to_vec();
    if fields.get(EACH_USE_FIELD) == Some("yes") && fields.get("approval").is_none() {
        pairs.push(("approval".to_owned(), APPROVE_EACH_USE.to_owned()));
    }
    // The request is checked again: the agent or the APIs may have changed since the page.
    let request = match delegations
        .request(tenant, &ctx.current.issuer, &pairs)
        .await
    {
        Ok(Ok(request)) => request,
        Ok(Err(refused)) => return refused_page(&ctx, &refused),
        Err(e) => return unavailable(&ctx, &e),
    };
    match delegations.grant(tenant, &user.id, &request).await {
        Ok(Ok(granted)) => Page::new(s.delegate.granted_title)
            .line(s.delegate.granted, Some(granted.id.to_string()), "")
            .detail(
                s.delegate.until_label,
                granted.expires_at.date().to_string(),
            )
            .link(None, s.delegate.account_link, LIST_PATH.to_owned())
            .render(&ctx.chrome),
        Ok(Err(refused)) => refused_page(&ctx, &refused),
        Err(e) => unavailable(&ctx, &e),
    }
}

/// `GET /auth/account/delegations[?revoked=1]`: what the person granted, newest first.
pub(crate) async fn list(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let Some(delegations) = engine(&state) else {
        return error::not_found(&ctx);
    };
    let (_, user) = match ctx.signed_in(&state.authn).await {
        Ok(Some(found)) => found,
        Ok(None) => return see_other("/auth/sign-in"),
        Err(page) => return page,
    };
    let listed = match delegations.of_person(&ctx.current.tenant, &user.id).await {
        Ok(listed) => listed,
        Err(e) => return unavailable(&ctx, &e),
    };
    let s = ctx.s();
    let revoked = super::form::Fields::from_query(query.as_deref()).get("revoked") == Some("1");
    with_csrf(&state, &ctx, |csrf| {
        let mut page = Page::new(s.delegate.list_title);
        if revoked {
            page = page.alert(s.delegate.revoked);
        }
        if listed.is_empty() {
            page = page.text(s.delegate.list_empty);
        }
        let mut form = Form::new(LIST_PATH, csrf);
        for entry in &listed {
            let d = &entry.delegation;
            let scopes: Vec<&str> = d.scopes.iter().map(|s| s.as_str()).collect();
            let mut ends = if entry.live {
                format!("{} {}", s.delegate.list_until, d.expires_at.date())
            } else {
                s.delegate.list_ended.to_owned()
            };
            if d.per_use_approval {
                ends = format!("{ends}, {}", s.delegate.list_each_use);
            }
            page = page.item(
                format!(
                    "{}{} — {} — {} ({ends})",
                    s.delegate.list_agent,
                    entry.agent_name,
                    d.resources.join(", "),
                    scopes.join(" ")
                ),
                Some(d.id.to_string()),
            );
            if entry.live {
                form = form.button(Button::data_choice(
                    "delegation",
                    d.id.to_string(),
                    format!("{} {}", s.delegate.revoke, entry.agent_name),
                ));
            }
        }
        page.form(form)
            .link(None, s.account_title, "/auth/account".to_owned())
    })
}

/// `POST /auth/account/delegations`: revokes one of the person's delegations.
pub(crate) async fn revoke(State(state): State<HostedState>, ctx: Ctx, body: Body) -> Response {
    let Some(delegations) = engine(&state) else {
        return error::not_found(&ctx);
    };
    let fields = match checked_form(&ctx, body).await {
        Ok(fields) => fields,
        Err(page) => return page,
    };
    let (_, user) = match ctx.signed_in(&state.authn).await {
        Ok(Some(found)) => found,
        Ok(None) => return see_other("/auth/sign-in"),
        Err(page) => return page,
    };
    let Some(id) = fields.non_empty("delegation") else {
        return error::form(&ctx, super::form::FormError::Malformed);
    };
    match delegations.revoke(&ctx.current.tenant, &user.id, id).await {
        // Another person's, unknown or ended: the same list, without the alert.
        Ok(true) => see_other(&format!("{LIST_PATH}?revoked=1")),
        Ok(false) => see_other(LIST_PATH),
        Err(e) => unavailable(&ctx, &e),
    }
}

/// Where a sign-in without an authorization request continues when it started on the consent
/// page: back there with the same request, with the `Set-Cookie` that forgets the return cookie.
pub(crate) fn return_after_sign_in(ctx: &Ctx) -> Option<(String, Option<http::HeaderValue>)> {
    let value = ctx.cookies.join(&ctx.headers)?;
    let encoded = value.strip_prefix(RETURN_PREFIX)?;
    let query = URL_SAFE_NO_PAD
        .decode(encoded)
        .ok()
        .and_then(|q| String::from_utf8(q).ok())?;
    Some((format!("{PATH}?{query}"), ctx.cookies.clear_join()))
}

/// 400: the request cannot be granted, and why.
fn refused_page(ctx: &Ctx, refused: &Refused) -> Response {
    let s = ctx.s();
    Page::new(s.delegate.refused_title)
        .status(StatusCode::BAD_REQUEST)
        .alert(refused.describe())
        .render(&ctx.chrome)
}

/// 503: the store failed; nothing was granted or revoked.
fn unavailable(ctx: &Ctx, e: &OAuthError) -> Response {
    tracing::warn!(error = %e, "delegation page failed");
    error::authorize_page(
        ctx,
        svc_oauth::error::ErrorPageKind::Unavailable,
        "temporarily_unavailable".into(),
        "the store is unavailable".into(),
    )
}
