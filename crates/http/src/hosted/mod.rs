//! The browser-facing side of human sign-in: the authorization endpoint's HTTP
//! (`/oauth/authorize`, its resume URL, RP-initiated logout) and the hosted pages under
//! `/auth/*` (sign-in, sign-up, email links, consent, account, sessions, sign-out).
//!
//! Handlers are thin: they read the request (form, query, cookies), check CSRF, call ONE engine
//! function ([`svc_authn::Authn`] or [`svc_oauth::authorize::AuthorizeEndpoint`]) and map the
//! result to a page or a 303. Pages are server-rendered without JavaScript (`view`); every
//! text comes from [`strings`]; errors become pages in the error seam alone
//! (`crate::error::page`). Every response of these routes carries the hosted security headers
//! (CSP, no framing, no referrer, no store), added by one layer over the whole router.
//!
//! The seam with the engine (ARCHITECTURE.md rule 1): the engine answers "log in", "consent",
//! "redirect" or "error page" with an interaction id; these pages sign the person in or record
//! the consent, then send the browser to `/oauth/authorize/resume?interaction=…`.

mod account;
mod authorize;
pub(crate) mod cookies;
mod csrf;
pub(crate) mod ctx;
mod end_session;
pub(crate) mod form;
mod links;
mod session;
mod sign_in;
pub mod strings;
pub(crate) mod view;

use crate::tenancy::TenantResolver;
use axum::Router;
use axum::extract::FromRef;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::header::LOCATION;
use http::{HeaderValue, StatusCode};
use std::sync::Arc;
use svc_authn::Authn;
use svc_domain::{InteractionId, Rng};
use svc_oauth::authorize::AuthorizeEndpoint;
use svc_oauth::end_session::EndSession;

pub(crate) use ctx::Ctx;
pub use strings::Strings;

/// What the hosted routes need. Cheap to clone.
#[derive(Clone)]
pub struct HostedState {
    /// Host → tenant.
    pub tenants: TenantResolver,
    /// The sign-in engine.
    pub authn: Arc<Authn>,
    /// The authorization endpoint.
    pub authorize: Arc<AuthorizeEndpoint>,
    /// RP-initiated logout.
    pub end_session: Arc<EndSession>,
    /// Randomness for CSRF tokens.
    pub rng: Arc<dyn Rng>,
}

impl std::fmt::Debug for HostedState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostedState").finish_non_exhaustive()
    }
}

impl FromRef<HostedState> for TenantResolver {
    fn from_ref(state: &HostedState) -> Self {
        state.tenants.clone()
    }
}

/// The authorization endpoint and the hosted pages (auth plane).
pub fn router(state: HostedState) -> Router {
    Router::new()
        .route(
            "/oauth/authorize",
            get(authorize::authorize_get).post(authorize::authorize_post),
        )
        .route("/oauth/authorize/resume", get(authorize::resume))
        .route(
            "/auth/consent",
            get(authorize::consent_page).post(authorize::consent_decide),
        )
        .route(
            "/oauth/end-session",
            get(end_session::end_session_get).post(end_session::end_session_post),
        )
        .route("/auth/sign-in", get(sign_in::page).post(sign_in::submit))
        .route(
            "/auth/sign-up",
            get(sign_in::sign_up_page_get).post(sign_in::sign_up_submit),
        )
        .route(
            "/auth/verify-email",
            get(links::verify_page).post(links::verify_submit),
        )
        .route(
            "/auth/forgot-password",
            get(links::forgot_page).post(links::forgot_submit),
        )
        .route(
            "/auth/reset-password",
            get(links::reset_page).post(links::reset_submit),
        )
        .route(
            "/auth/accept-invitation",
            get(links::invitation_page).post(links::invitation_submit),
        )
        .route("/auth/account", get(account::account))
        .route("/auth/sessions", get(account::sessions))
        .route("/auth/sessions/revoke", post(account::revoke))
        .route(
            "/auth/sign-out",
            get(account::sign_out_page).post(account::sign_out),
        )
        .layer(axum::middleware::map_response(secure))
        .with_state(state)
}

/// Every hosted response, pages, redirects and refusals alike, carries the security headers.
async fn secure(mut response: Response) -> Response {
    let targets = response.extensions_mut().remove::<view::FormTargets>();
    view::secure_headers(response.headers_mut(), targets.as_ref());
    response
}

/// `303 See Other` to `location` (RFC 9700 §4.12: never 307 after a POST with credentials).
/// Every location becomes a valid header: bytes outside visible ASCII are percent-encoded
/// (RFC 3986 §2.1), so no URI, however it was registered, turns a redirect into a 500.
pub(crate) fn see_other(location: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    response
        .headers_mut()
        .insert(LOCATION, location_value(location));
    response
}

fn location_value(location: &str) -> HeaderValue {
    // `HeaderValue` would take raw UTF-8 (obs-text) and refuse control characters; a Location
    // must be an ASCII URI-reference (RFC 9110 §10.2.2), which clients can read back.
    let mut encoded = String::with_capacity(location.len() * 3);
    for byte in location.bytes() {
        if (0x21..=0x7e).contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    // Visible ASCII only now, which every header value accepts.
    HeaderValue::from_str(&encoded).unwrap_or_else(|_| HeaderValue::from_static("/"))
}

/// `path` with the query `pairs` (absent values skipped), URL-encoded.
pub(crate) fn path_with(path: &str, pairs: &[(&str, Option<&str>)]) -> String {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    let mut any = false;
    for (name, value) in pairs {
        if let Some(value) = value {
            query.append_pair(name, value);
            any = true;
        }
    }
    if any {
        format!("{path}?{}", query.finish())
    } else {
        path.to_owned()
    }
}

/// The `interaction` parameter: `Ok(None)` when absent, `Err` when present but not an
/// interaction id (the page then says the request expired; the value is never echoed).
pub(crate) fn interaction_param(value: Option<&str>) -> Result<Option<InteractionId>, ()> {
    match value {
        None => Ok(None),
        Some(raw) => InteractionId::parse(raw).map(Some).map_err(|_| ()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_encode_their_query_and_skip_absent_values() {
        assert_eq!(
            path_with("/auth/sign-in", &[("interaction", None)]),
            "/auth/sign-in"
        );
        assert_eq!(
            path_with("/auth/sign-in", &[("interaction", Some("int_1&x=<y>"))]),
            "/auth/sign-in?interaction=int_1%26x%3D%3Cy%3E"
        );
    }

    #[test]
    fn interaction_params_parse_or_are_refused_without_echo() {
        assert_eq!(interaction_param(None), Ok(None));
        assert!(interaction_param(Some("<script>")).is_err());
        assert!(interaction_param(Some("int_01jd0000000000000000000000")).is_ok());
    }

    #[test]
    fn see_other_is_303_with_location() {
        let response = see_other("/auth/account");
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        assert_eq!(response.headers()[LOCATION], "/auth/account");
    }

    #[test]
    fn see_other_encodes_what_a_header_cannot_carry_instead_of_failing() {
        for (raw, expected) in [
            (
                "https://app.example/au-revoir-\u{e9}",
                "https://app.example/au-revoir-%C3%A9",
            ),
            ("/x y\r\nSet-Cookie: a=b", "/x%20y%0D%0ASet-Cookie:%20a=b"),
        ] {
            let response = see_other(raw);
            assert_eq!(response.status(), StatusCode::SEE_OTHER, "{raw:?}");
            assert_eq!(response.headers()[LOCATION], expected);
        }
    }
}
