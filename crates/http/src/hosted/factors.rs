//! `/auth/account/two-factor`: a signed-in person's second factors — setting up an
//! authenticator app (QR code rendered here as SVG, the key as text, confirmed with a first
//! code), removing it, and new backup codes (shown once, on the page that generated them).
//!
//! One form endpoint takes every change, told apart by its `action` button (`setup`,
//! `confirm`, `remove`, `backup_codes`), each behind the CSRF check. A change the engine
//! refuses for want of a second factor on this session (`StepUpRequired`) sends the person to
//! step up first, then back here. Confirming an authenticator raises the session to aal2 (a new
//! session cookie comes with the backup codes). When an authorization request sent the person
//! here (`interaction`: the deployment requires a second factor), the pages carry it and the
//! backup codes page continues that request. No script: the pages work without JavaScript.

use super::csrf::{self, CsrfToken};
use super::form::{self, Fields};
use super::view::{Button, Field, Form, Page, PasskeyForm};
use super::{Ctx, HostedState, cookies, interaction_param, path_with, redirect_target, see_other};
use crate::error::page::{self as error, Refusal};
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use qrcode::QrCode;
use qrcode::render::svg;
use svc_authn::{AuthnError, TotpEnrolment};
use svc_domain::{FactorId, InteractionId, Session, User};

const PATH: &str = "/auth/account/two-factor";

/// The signed-in person, or the page to show instead.
async fn person(
    state: &HostedState,
    ctx: &Ctx,
    interaction: Option<&InteractionId>,
) -> Result<(Session, User), Response> {
    if state.authn.two_factor().is_none() {
        return Err(error::not_found(ctx));
    }
    match ctx.signed_in(&state.authn).await? {
        Some(found) => Ok(found),
        None => Err(see_other(&path_with(
            "/auth/sign-in",
            &[("interaction", interaction.map(InteractionId::as_str))],
        ))),
    }
}

/// The `interaction` an authorization request sent along, or the page to show instead.
fn pending(ctx: &Ctx, raw: Option<&str>) -> Result<Option<InteractionId>, Response> {
    interaction_param(raw).map_err(|()| error::interaction_expired(ctx))
}

/// `GET /auth/account/two-factor[?removed=1][&interaction=…]`: what is set up, and what can
/// be done.
pub(crate) async fn page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let query = Fields::from_query(query.as_deref());
    let interaction = match pending(&ctx, query.get("interaction")) {
        Ok(interaction) => interaction,
        Err(page) => return page,
    };
    let (_, user) = match person(&state, &ctx, interaction.as_ref()).await {
        Ok(found) => found,
        Err(page) => return page,
    };
    let target = redirect_target(&state, &ctx, interaction.as_ref()).await;
    if let Some(key) = query
        .get("remove_key")
        .and_then(|k| FactorId::parse(k).ok())
    {
        return remove_key_page(&state, &ctx, &user, &key, interaction.as_ref()).await;
    }
    let shown = Shown {
        removed_key: query.get("removed") == Some("key"),
        removed: query.get("removed") == Some("1"),
        forgotten: query.get("forgotten") == Some("1"),
        interaction: interaction.as_ref(),
        target: target.as_deref(),
    };
    overview(&state, &ctx, &user, shown, None).await
}

/// What the overview says besides the person's factors.
#[derive(Clone, Copy, Default)]
struct Shown<'a> {
    /// The factor was just removed.
    removed: bool,
    /// A security key was just removed.
    removed_key: bool,
    /// Every browser's trust was just withdrawn.
    forgotten: bool,
    /// The authorization request waiting for a second factor.
    interaction: Option<&'a InteractionId>,
    /// Where that request ends (its client's redirect URI): a form here may be followed by
    /// redirects there, which the CSP `form-action` must allow.
    target: Option<&'a str>,
}

async fn overview(
    state: &HostedState,
    ctx: &Ctx,
    user: &User,
    shown: Shown<'_>,
    refusal: Option<&Refusal>,
) -> Response {
    let status = match state
        .authn
        .factor_status(&ctx.current.tenant, &user.id)
        .await
    {
        Ok(status) => status,
        Err(e) => return error::fatal(ctx, e),
    };
    let s = ctx.s();
    let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
    let mut page = Page::new(s.second_factor_title);
    if let Some(alert) = refusal.and_then(Refusal::alert) {
        page = page.alert(alert);
    }
    if shown.removed {
        page = page.text(s.totp_removed);
    }
    if shown.removed_key {
        page = page.text(s.security_key_removed);
    }
    if shown.forgotten {
        page = page.text(s.devices_forgotten);
    }
    if shown.interaction.is_some() {
        page = page.text(s.two_factor_required);
    }
    if let Some(target) = shown.target {
        page = page.form_target(target);
    }
    let mut form = Form::new(PATH, csrf.value())
        .hidden("interaction", shown.interaction.map(InteractionId::as_str));
    let any_factor = status.totp.is_some() || !status.security_keys.is_empty();
    // A tenant whose policy is `off` keeps the factors people have, and offers no new ones.
    let enrolment = state.authn.enrolment_offered(&ctx.current.tenant);
    match &status.totp {
        None => {
            if !any_factor {
                page = page.text(s.two_factor_is_off);
            }
            if enrolment {
                form = form.button(Button::choice("action", "setup", s.totp_setup_submit, true));
            }
        }
        Some(totp) => {
            page = page.text(s.two_factor_is_on);
            form = form
                .hidden("factor", Some(totp.id.as_str()))
                .button(Button::choice(
                    "action",
                    "remove",
                    s.totp_remove_submit,
                    false,
                ));
        }
    }
    // Each security key, with a link to the page that confirms its removal.
    for key in &status.security_keys {
        page = page.detail(s.security_keys_label, key.label.clone()).link(
            None,
            s.security_key_remove_link,
            path_with(
                PATH,
                &[
                    ("remove_key", Some(key.id.as_str())),
                    ("interaction", shown.interaction.map(InteractionId::as_str)),
                ],
            ),
        );
    }
    if any_factor {
        page = page.detail(s.backup_codes_left, status.backup_codes_left.to_string());
        if status.backup_codes_low {
            page = page.alert(s.backup_codes_low);
        }
        form = form.button(Button::choice(
            "action",
            "backup_codes",
            s.backup_codes_generate,
            status.totp.is_some(),
        ));
        if state.authn.trusted_device_lifetime().is_some() {
            form = form.button(Button::choice(
                "action",
                "forget_devices",
                s.forget_devices_submit,
                false,
            ));
        }
    }
    let csrf_value = csrf.value().to_owned();
    let mut page = page.form(form);
    if enrolment {
        page = page.passkey(PasskeyForm::security_key_register(
            s,
            &csrf_value,
            shown.interaction.map(InteractionId::as_str),
        ));
    }
    let mut response = page
        .link(None, s.back_to_account, "/auth/account".to_owned())
        .render(&ctx.chrome);
    csrf.attach(&mut response, ctx.cookies);
    match refusal {
        Some(refusal) => refusal.finish(response),
        None => response,
    }
}

/// `POST /auth/account/two-factor`: one change, named by `action`.
pub(crate) async fn submit(State(state): State<HostedState>, ctx: Ctx, body: Body) -> Response {
    let fields = match form::read(&ctx.headers, body, true).await {
        Ok(fields) => fields,
        Err(e) => return error::form(&ctx, e),
    };
    if !csrf::verify(&ctx.headers, ctx.cookies, fields.get("csrf")) {
        return error::csrf(&ctx);
    }
    let interaction = match pending(&ctx, fields.get("interaction")) {
        Ok(interaction) => interaction,
        Err(page) => return page,
    };
    let (session, user) = match person(&state, &ctx, interaction.as_ref()).await {
        Ok(found) => found,
        Err(page) => return page,
    };
    let tenant = &ctx.current.tenant;
    let target = redirect_target(&state, &ctx, interaction.as_ref()).await;
    let shown = Shown {
        interaction: interaction.as_ref(),
        target: target.as_deref(),
        ..Shown::default()
    };
    let factor = fields.get("factor").and_then(|f| FactorId::parse(f).ok());
    let removed = if fields.get("what") == Some("key") {
        "key"
    } else {
        "1"
    };
    let outcome = match (fields.get("action"), factor) {
        (Some("add_key"), _) => {
            let cookie = ctx.cookies.ceremony(&ctx.headers).unwrap_or_default();
            let answer = fields.get("credential").unwrap_or_default();
            let name = fields.get("name").unwrap_or_default();
            let outcome = state
                .authn
                .finish_security_key_registration(
                    tenant,
                    &ctx.current.issuer,
                    (&session, &user),
                    (&cookie, answer, name),
                    &ctx.client,
                )
                .await
                .map(|confirmed| confirmed_page(&ctx, confirmed, shown));
            let mut response = match outcome {
                Ok(response) => response,
                Err(AuthnError::StepUpRequired) => see_other("/auth/second-factor"),
                Err(e) => match error::refusal(&ctx, e) {
                    Ok(refusal) => overview(&state, &ctx, &user, shown, Some(&refusal)).await,
                    Err(page) => page,
                },
            };
            cookies::append(&mut response, ctx.cookies.clear_ceremony());
            return response;
        }
        (Some("setup"), _) => match state.authn.start_totp(tenant, &user, "").await {
            Ok(enrolment) => return setup_page(&state, &ctx, &enrolment, shown, None),
            Err(e) => Err(e),
        },
        (Some("confirm"), Some(factor)) => {
            let code = fields.get("code").unwrap_or_default();
            match state
                .authn
                .confirm_totp(tenant, &session, &user, &factor, code, &ctx.client)
                .await
            {
                Ok(confirmed) => return confirmed_page(&ctx, confirmed, shown),
                Err(e @ (AuthnError::InvalidCode | AuthnError::Locked { .. })) => {
                    return setup_again(&state, &ctx, &user, &factor, shown, e).await;
                }
                Err(e) => Err(e),
            }
        }
        (Some("remove"), Some(factor)) => state
            .authn
            .remove_factor(tenant, &session, &user, &factor)
            .await
            .map(|()| see_other(&format!("{PATH}?removed={removed}"))),
        (Some("forget_devices"), _) => state
            .authn
            .forget_trusted_devices(tenant, &user)
            .await
            .map(|_| see_other(&format!("{PATH}?forgotten=1"))),
        (Some("backup_codes"), _) => state
            .authn
            .regenerate_backup_codes(tenant, &session, &user)
            .await
            .map(|codes| codes_page(&ctx, codes, shown)),
        // A form we did not render: nothing to do, show the page again.
        _ => Err(AuthnError::UnknownFactor),
    };
    match outcome {
        Ok(response) => response,
        // Changing factors on an aal1 session: prove the second factor, then come back.
        Err(AuthnError::StepUpRequired) => see_other("/auth/second-factor"),
        Err(e) => match error::refusal(&ctx, e) {
            Ok(refusal) => overview(&state, &ctx, &user, shown, Some(&refusal)).await,
            Err(page) => page,
        },
    }
}

/// `POST /auth/account/two-factor/key-options`: starts registering a security key.
pub(crate) async fn key_options(
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
    let (session, user) = match person(&state, &ctx, None).await {
        Ok(found) => found,
        Err(page) => return page,
    };
    let started = state
        .authn
        .begin_security_key_registration(&ctx.current.tenant, &ctx.current.issuer, &session, &user)
        .await;
    super::passkeys::options_or_problem(&state, &ctx, started)
}

/// The page that confirms removing the person's security key `id`.
async fn remove_key_page(
    state: &HostedState,
    ctx: &Ctx,
    user: &User,
    id: &FactorId,
    interaction: Option<&InteractionId>,
) -> Response {
    let status = match state
        .authn
        .factor_status(&ctx.current.tenant, &user.id)
        .await
    {
        Ok(status) => status,
        Err(e) => return error::fatal(ctx, e),
    };
    let Some(key) = status.security_keys.iter().find(|k| &k.id == id) else {
        return error::not_found(ctx);
    };
    let s = ctx.s();
    let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
    let form = Form::new(PATH, csrf.value())
        .hidden("interaction", interaction.map(InteractionId::as_str))
        .hidden("factor", Some(key.id.as_str()))
        .hidden("what", Some("key"))
        .button(Button::choice(
            "action",
            "remove",
            s.security_key_remove_submit,
            true,
        ));
    let mut response = Page::new(s.security_key_remove_title)
        .text(s.security_key_remove_intro)
        .detail(s.security_key_name_label, key.label.clone())
        .form(form)
        .link(None, s.back_to_account, PATH.to_owned())
        .render(&ctx.chrome);
    csrf.attach(&mut response, ctx.cookies);
    response
}

/// After a confirmed authenticator: the raised session's cookie, and the backup codes (or, when
/// the person kept theirs, straight on).
fn confirmed_page(ctx: &Ctx, confirmed: svc_authn::Confirmed, shown: Shown<'_>) -> Response {
    let signed_in = confirmed.signed_in;
    let mut response = match confirmed.backup_codes {
        Some(codes) => codes_page(ctx, codes, shown),
        None => see_other(&next(shown)),
    };
    cookies::append(&mut response, ctx.cookies.set_signed_in(&signed_in));
    response
}

/// Where the person goes on: the waiting authorization request, or this page.
fn next(shown: Shown<'_>) -> String {
    match shown.interaction {
        Some(id) => path_with(
            "/oauth/authorize/resume",
            &[("interaction", Some(id.as_str()))],
        ),
        None => PATH.to_owned(),
    }
}

/// The setup page again after a wrong first code (the same secret, from the pending
/// enrolment).
async fn setup_again(
    state: &HostedState,
    ctx: &Ctx,
    user: &User,
    factor: &FactorId,
    shown: Shown<'_>,
    refused: AuthnError,
) -> Response {
    let refusal = match error::refusal(ctx, refused) {
        Ok(refusal) => refusal,
        Err(page) => return page,
    };
    match state
        .authn
        .totp_enrolment(&ctx.current.tenant, user, factor)
        .await
    {
        Ok(enrolment) => setup_page(state, ctx, &enrolment, shown, Some(&refusal)),
        Err(e) => match error::refusal(ctx, e) {
            Ok(expired) => overview(state, ctx, user, shown, Some(&expired)).await,
            Err(page) => page,
        },
    }
}

fn setup_page(
    state: &HostedState,
    ctx: &Ctx,
    enrolment: &TotpEnrolment,
    shown: Shown<'_>,
    refusal: Option<&Refusal>,
) -> Response {
    let s = ctx.s();
    let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
    let mut page = Page::new(s.totp_setup_title).text(s.totp_setup_scan);
    if let Some(target) = shown.target {
        page = page.form_target(target);
    }
    if let Some(svg) = qr_svg(&enrolment.otpauth_uri) {
        page = page.svg(svg);
    }
    page = page.detail(s.totp_key_label, spaced(&enrolment.secret_base32));
    let mut field = Field::one_time_code(s);
    field.hint = None;
    if let Some(refusal) = refusal {
        if let Some(alert) = refusal.alert() {
            page = page.alert(alert);
        }
        if let Some(message) = refusal.on("code") {
            field = field.error(message);
        }
    }
    let form = Form::new(PATH, csrf.value())
        .hidden("interaction", shown.interaction.map(InteractionId::as_str))
        .hidden("factor", Some(enrolment.factor_id.as_str()))
        .field(field)
        .button(Button::choice(
            "action",
            "confirm",
            s.totp_confirm_submit,
            true,
        ));
    let mut response = page
        .form(form)
        .link(None, s.back_to_account, "/auth/account".to_owned())
        .render(&ctx.chrome);
    csrf.attach(&mut response, ctx.cookies);
    match refusal {
        Some(refusal) => refusal.finish(response),
        None => response,
    }
}

/// New backup codes, shown this once, then on to where the person was going.
fn codes_page(ctx: &Ctx, codes: Vec<String>, shown: Shown<'_>) -> Response {
    let s = ctx.s();
    let mut page = Page::new(s.backup_codes_title).text(s.backup_codes_intro);
    for code in codes {
        page = page.item(s.backup_code_item, Some(code));
    }
    page.link(None, s.continue_link, next(shown))
        .render(&ctx.chrome)
}

/// The key in groups of four, easier to type.
fn spaced(key: &str) -> String {
    key.as_bytes()
        .chunks(4)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The QR code of `uri` as an inline SVG (no XML declaration, dark modules on white).
fn qr_svg(uri: &str) -> Option<String> {
    let code = QrCode::new(uri.as_bytes()).ok()?;
    Some(
        code.render::<svg::Color<'_>>()
            .min_dimensions(192, 192)
            .quiet_zone(true)
            .dark_color(svg::Color("#000000"))
            .light_color(svg::Color("#ffffff"))
            .build()
            .replacen(r#"<?xml version="1.0" standalone="yes"?>"#, "", 1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_qr_code_is_an_svg_of_our_own_markup_only() {
        let svg = qr_svg("otpauth://totp/Acme:ada%40example.com?secret=AAAA&issuer=Acme")
            .unwrap_or_default();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40.min(svg.len())]);
        assert!(!svg.contains("<script") && !svg.contains("Acme"));
        assert!(svg.ends_with("</svg>"));
    }

    #[test]
    fn keys_are_grouped_by_four() {
        assert_eq!(spaced("ABCDEFGHIJ"), "ABCD EFGH IJ");
    }
}
