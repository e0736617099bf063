//! The authorization endpoint's HTTP (RFC 6749 §4.1.1, OIDC Core §3.1.2.1: `GET` with a query
//! or `POST` with a form), its resume URL, and the consent page.
//!
//! Each handler resolves the browser's session, calls one [`AuthorizeEndpoint`] function and
//! maps its [`AuthorizeOutcome`] in [`outcome`]: a redirect to the client (built by the engine,
//! with `state` and `iss`), a 303 to the sign-in or consent page, or an error page that never
//! redirects (unknown client, unregistered redirect URI).
//!
//! [`AuthorizeEndpoint`]: svc_oauth::authorize::AuthorizeEndpoint

use super::csrf::{self, CsrfToken};
use super::form::{self, Fields};
use super::view::{Button, Form, Page};
use super::{Ctx, HostedState, interaction_param, path_with, see_other};
use crate::error::page as error;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use svc_domain::InteractionId;
use svc_oauth::authorize::{AuthorizeOutcome, ConsentDetail};

/// Maps what the engine decided to what the browser gets.
pub(crate) fn outcome(ctx: &Ctx, outcome: AuthorizeOutcome) -> Response {
    match outcome {
        AuthorizeOutcome::RedirectToClient(url) => see_other(&url),
        AuthorizeOutcome::Login { interaction } => see_other(&path_with(
            "/auth/sign-in",
            &[("interaction", Some(interaction.as_str()))],
        )),
        AuthorizeOutcome::Consent { interaction } => see_other(&path_with(
            "/auth/consent",
            &[("interaction", Some(interaction.as_str()))],
        )),
        AuthorizeOutcome::StepUp { interaction } => see_other(&path_with(
            "/auth/second-factor",
            &[("interaction", Some(interaction.as_str()))],
        )),
        AuthorizeOutcome::Enrol { interaction } => see_other(&path_with(
            "/auth/account/two-factor",
            &[("interaction", Some(interaction.as_str()))],
        )),
        AuthorizeOutcome::SelectOrganization { interaction } => see_other(&path_with(
            "/auth/organization",
            &[("interaction", Some(interaction.as_str()))],
        )),
        AuthorizeOutcome::ErrorPage {
            kind,
            error,
            description,
        } => error::authorize_page(ctx, kind, error, description),
    }
}

/// `GET /oauth/authorize`.
#[utoipa::path(
    get, path = "/oauth/authorize", tag = crate::openapi::tags::PROTOCOL,
    operation_id = "authorize",
    summary = "Start an authorization (authorization endpoint)",
    description = super::AUTHORIZE_DESCRIPTION,
    params(super::AuthorizationRequestParams),
    responses(
        (status = 303, description = "To the application's redirect URI with `code` (or \
            `error`), `state` and `iss`; or to the hosted sign-in or consent page first.",
         headers(("Location" = String, description = "Where the browser goes next."))),
        (status = 400, description = "HTML error page: the request cannot be honoured and \
            cannot be redirected (unknown client, missing or unregistered redirect URI, a \
            repeated `client_id` or `redirect_uri`). The page shows the error code.",
         body = String, content_type = "text/html"),
        (status = 500, description = "HTML error page: an unexpected fault.",
         body = String, content_type = "text/html"),
        (status = 503, description = "HTML error page: a dependency is unavailable; try again.",
         body = String, content_type = "text/html"),
    ),
)]
pub(crate) async fn authorize_get(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let params = Fields::from_query(query.as_deref());
    authorize(&state, &ctx, &params).await
}

/// `POST /oauth/authorize` (OIDC Core §3.1.2.1). No CSRF token: applications post here from
/// their own origin; the engine treats it exactly like the GET.
#[utoipa::path(
    post, path = "/oauth/authorize", tag = crate::openapi::tags::PROTOCOL,
    operation_id = "authorizeWithForm",
    summary = "Start an authorization with a form post",
    description = super::AUTHORIZE_DESCRIPTION,
    request_body(
        content = super::AuthorizationRequestParams,
        content_type = "application/x-www-form-urlencoded",
        description = "The authorization request's parameters (OIDC Core §3.1.2.1 allows a \
                       form post); treated exactly like the GET.",
    ),
    responses(
        (status = 303, description = "To the application's redirect URI with `code` (or \
            `error`), `state` and `iss`; or to the hosted sign-in or consent page first.",
         headers(("Location" = String, description = "Where the browser goes next."))),
        (status = 400, description = "HTML error page: the body is not a URL-encoded form, or \
            the request cannot be honoured and cannot be redirected (unknown client, missing or \
            unregistered redirect URI).", body = String, content_type = "text/html"),
        (status = 413, description = "HTML error page: the form is over 16 KiB.",
         body = String, content_type = "text/html"),
        (status = 500, description = "HTML error page: an unexpected fault.",
         body = String, content_type = "text/html"),
        (status = 503, description = "HTML error page: a dependency is unavailable; try again.",
         body = String, content_type = "text/html"),
    ),
)]
pub(crate) async fn authorize_post(
    State(state): State<HostedState>,
    ctx: Ctx,
    body: Body,
) -> Response {
    // Repeated parameters are the engine's to refuse (RFC 6749 §3.1), with its own error.
    match form::read(&ctx.headers, body, false).await {
        Ok(params) => authorize(&state, &ctx, &params).await,
        Err(e) => error::form(&ctx, e),
    }
}

async fn authorize(state: &HostedState, ctx: &Ctx, params: &Fields) -> Response {
    let session = match ctx.signed_in(&state.authn).await {
        Ok(found) => found.map(|(session, _)| session),
        Err(page) => return page,
    };
    let decided = state
        .authorize
        .authorize_from(
            &ctx.current.tenant,
            &ctx.current.issuer,
            params.pairs(),
            session.as_ref(),
            origin(ctx),
        )
        .await;
    outcome(ctx, decided)
}

/// `GET /oauth/authorize/resume?interaction=…`: continues a request after sign-in.
pub(crate) async fn resume(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let query = Fields::from_query(query.as_deref());
    let Some(interaction) = required_interaction(query.get("interaction")) else {
        return error::interaction_expired(&ctx);
    };
    let session = match ctx.signed_in(&state.authn).await {
        Ok(found) => found.map(|(session, _)| session),
        Err(page) => return page,
    };
    let decided = state
        .authorize
        .resume_from(
            &ctx.current.tenant,
            &ctx.current.issuer,
            &interaction,
            session.as_ref(),
            origin(&ctx),
        )
        .await;
    outcome(&ctx, decided)
}

/// `GET /auth/consent?interaction=…`: what the application asks for, with allow and deny.
pub(crate) async fn consent_page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let query = Fields::from_query(query.as_deref());
    let Some(interaction) = required_interaction(query.get("interaction")) else {
        return error::interaction_expired(&ctx);
    };
    let session = match ctx.signed_in(&state.authn).await {
        Ok(found) => found.map(|(session, _)| session),
        Err(page) => return page,
    };
    let prompt = match state
        .authorize
        .consent_prompt(&ctx.current.tenant, &interaction, session.as_ref())
        .await
    {
        Ok(prompt) => prompt,
        Err(next) => return outcome(&ctx, next),
    };
    let s = ctx.s();
    let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
    let mut page = Page::new(s.consent_title).line("", Some(prompt.client_name), s.consent_wants);
    if let Some(host) = prompt.client_host {
        page = page.line(s.consent_published_by, Some(host), "");
    }
    // RFC 8628 §5.4: a device's request shows its code again, to compare with the device.
    if let Some(code) = prompt.device_user_code {
        page = page.line(s.device.consent_check, Some(code), s.device.consent_warning);
    }
    for scope in &prompt.scopes {
        page = match (s.scope(scope), prompt.permissions.get(scope)) {
            (Some(description), _) => page.item(description, None),
            // An API's permission, in the words its tenant gave it, with its name.
            (None, Some(described)) if !described.trim().is_empty() => {
                page.item(described.clone(), Some(scope.clone()))
            }
            (None, _) => page.item(s.scope_unknown, Some(scope.clone())),
        };
    }
    for detail in &prompt.details {
        page = page.item(detail_text(detail), None);
    }
    // The answer redirects to the client: browsers check that against `form-action`.
    page = page.form_target(&prompt.redirect_uri);
    let form = Form::new("/auth/consent", csrf.value())
        .hidden("interaction", Some(interaction.as_str()))
        .button(Button::choice("decision", "allow", s.consent_allow, true))
        .button(Button::choice("decision", "deny", s.consent_deny, false));
    let mut response = page.form(form).render(&ctx.chrome);
    csrf.attach(&mut response, ctx.cookies);
    response
}

/// `POST /auth/consent`: records allow or deny and continues (a redirect to the client, with a
/// code or `access_denied`).
pub(crate) async fn consent_decide(
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
    let Some(interaction) = required_interaction(fields.get("interaction")) else {
        return error::interaction_expired(&ctx);
    };
    let allow = match fields.get("decision") {
        Some("allow") => true,
        Some("deny") => false,
        _ => return error::form(&ctx, form::FormError::Malformed),
    };
    let session = match ctx.signed_in(&state.authn).await {
        Ok(found) => found.map(|(session, _)| session),
        Err(page) => return page,
    };
    let decided = state
        .authorize
        .decide_consent_from(
            &ctx.current.tenant,
            &ctx.current.issuer,
            &interaction,
            (session.as_ref(), origin(&ctx)),
            allow,
        )
        .await;
    outcome(&ctx, decided)
}

/// `GET /auth/organization?interaction=…`: the person's organizations, one button each, for an
/// application that acts in one (names escaped by the template).
pub(crate) async fn organization_page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let query = Fields::from_query(query.as_deref());
    let Some(interaction) = required_interaction(query.get("interaction")) else {
        return error::interaction_expired(&ctx);
    };
    let session = match ctx.signed_in(&state.authn).await {
        Ok(found) => found.map(|(session, _)| session),
        Err(page) => return page,
    };
    let prompt = match state
        .authorize
        .organization_prompt(&ctx.current.tenant, &interaction, session.as_ref())
        .await
    {
        Ok(prompt) => prompt,
        Err(next) => return outcome(&ctx, next),
    };
    let s = ctx.s();
    let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
    let page = Page::new(s.organization_title)
        .line(
            s.organization_for,
            Some(prompt.client_name),
            s.organization_choose,
        )
        // The pick redirects to the client: browsers check that against `form-action`.
        .form_target(&prompt.redirect_uri);
    let mut form = Form::new("/auth/organization", csrf.value())
        .hidden("interaction", Some(interaction.as_str()));
    for org in prompt.organizations {
        form = form.button(Button::data_choice("organization", org.id, org.name));
    }
    let mut response = page.form(form).render(&ctx.chrome);
    csrf.attach(&mut response, ctx.cookies);
    response
}

/// `POST /auth/organization`: continues the request in the organization picked.
pub(crate) async fn organization_choose(
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
    let Some(interaction) = required_interaction(fields.get("interaction")) else {
        return error::interaction_expired(&ctx);
    };
    let Some(chosen) = fields.get("organization").filter(|v| !v.is_empty()) else {
        return error::form(&ctx, form::FormError::Malformed);
    };
    let session = match ctx.signed_in(&state.authn).await {
        Ok(found) => found.map(|(session, _)| session),
        Err(page) => return page,
    };
    let decided = state
        .authorize
        .choose_organization(
            &ctx.current.tenant,
            &ctx.current.issuer,
            &interaction,
            (session.as_ref(), origin(&ctx)),
            chosen,
        )
        .await;
    outcome(&ctx, decided)
}

/// Where the browser is, for access policies' network rule: the client address (the peer,
/// or what a trusted proxy forwarded).
pub(super) fn origin(ctx: &Ctx) -> svc_domain::Origin {
    ctx.client
        .ip
        .map_or(svc_domain::Origin::Unknown, svc_domain::Origin::Person)
}

/// A present, well-formed interaction id.
fn required_interaction(value: Option<&str>) -> Option<InteractionId> {
    interaction_param(value).ok().flatten()
}

/// RFC 9396: one detail object as a consent item, its type's words then its values under their
/// schema titles (client- and tenant-written text: the template escapes it).
pub(super) fn detail_text(detail: &ConsentDetail) -> String {
    let values = detail
        .lines
        .iter()
        .map(|(label, value)| format!("{label}: {value}"))
        .collect::<Vec<_>>()
        .join("; ");
    if values.is_empty() {
        detail.description.clone()
    } else {
        format!("{} ({values})", detail.description)
    }
}
