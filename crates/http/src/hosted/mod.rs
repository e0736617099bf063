//! The browser-facing side of human sign-in: the authorization endpoint's HTTP
//! (`/oauth/authorize`, its resume URL, RP-initiated logout) and the hosted pages under
//! `/auth/*` (sign-in, sign-up, email links, invitations to join, consent, account, sessions,
//! sign-out, social recovery), the device verification page (`/oauth/device/verify`) and the
//! backchannel approval page (`/auth/ciba`), and the delegation pages (`/auth/delegate`,
//! `/auth/account/delegations`).
//!
//! Handlers are thin: they read the request (form, query, cookies), check CSRF, call ONE engine
//! function ([`svc_authn::Authn`] or [`svc_oauth::authorize::AuthorizeEndpoint`]) and map the
//! result to a page or a 303. Pages are server-rendered (`view`); the only scripts
//! are a CAPTCHA provider's widget on the pages that ask for one, and our WebAuthn glue on the
//! pages that offer passkeys (WebAuthn is a script API). Every
//! text comes from [`strings`]; errors become pages in the error seam alone
//! (`crate::error::page`). Every response of these routes carries the hosted security headers
//! (CSP, no framing, no referrer, no store), added by one layer over the whole router.
//!
//! The seam with the engine (ARCHITECTURE.md rule 1): the engine answers "log in", "consent",
//! "redirect" or "error page" with an interaction id; these pages sign the person in or record
//! the consent, then send the browser to `/oauth/authorize/resume?interaction=…`.
//!
//! `/oauth/authorize` and `/oauth/end-session` are protocol endpoints and appear in the API
//! reference (their route and operation come from one `utoipa_axum` declaration, their
//! parameters are described by `AuthorizationRequestParams` and `EndSessionParams`); the pages
//! under `/auth/*` are ours, not API operations.

mod account;
mod api_keys;
mod authorize;
mod backchannel;
pub(crate) mod cookies;
mod csrf;
pub(crate) mod ctx;
mod delegate;
mod device;
mod end_session;
mod factors;
pub(crate) mod form;
mod join;
mod links;
mod passkeys;
mod recovery;
mod second_factor;
mod session;
mod sign_in;
mod social;
mod sso;
pub mod strings;
pub use api_keys::OwnKeys;
pub(crate) mod view;

use crate::openapi::refusals::{self, Refusals};
use crate::tenancy::TenantResolver;
use axum::Router;
use axum::extract::FromRef;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::header::LOCATION;
use http::{HeaderValue, StatusCode};
use serde::Deserialize;
use std::sync::Arc;
use svc_authn::Authn;
use svc_domain::{InteractionId, Rng};
use svc_oauth::authorize::AuthorizeEndpoint;
use svc_oauth::backchannel::APPROVAL_PATH;
use svc_oauth::device::{DeviceSettings, VERIFICATION_PATH};
use svc_oauth::end_session::EndSession;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

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
    /// `[device_authorization]` when enabled: the verification page is served.
    pub device: Option<Arc<DeviceSettings>>,
    /// `[ciba].enabled`: the backchannel approval page is served.
    pub ciba: bool,
    /// While `[challenge].enabled`: the delegation pages are served.
    pub delegations: Option<Arc<svc_oauth::delegations::Delegations>>,
    /// While the deployment allows keys acting as a person (`[api_keys].enabled` and
    /// `.subject_keys`): the API keys page is served (to people of tenants whose policy
    /// allows).
    pub own_keys: Option<OwnKeys>,
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

/// The documented routes (the protocol endpoints browsers are sent to) and the hosted pages,
/// which are ours and not part of the API reference.
fn api() -> OpenApiRouter<HostedState> {
    OpenApiRouter::new()
        .routes(routes!(authorize::authorize_get, authorize::authorize_post))
        .routes(routes!(
            end_session::end_session_get,
            end_session::end_session_post
        ))
        .route("/oauth/authorize/resume", get(authorize::resume))
        .route(
            "/auth/consent",
            get(authorize::consent_page).post(authorize::consent_decide),
        )
        .route(
            "/auth/organization",
            get(authorize::organization_page).post(authorize::organization_choose),
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
        .route("/auth/join", get(join::page).post(join::submit))
        .route(
            "/auth/second-factor",
            get(second_factor::page).post(second_factor::submit),
        )
        .route("/auth/account", get(account::account))
        .route(
            "/auth/account/two-factor",
            get(factors::page).post(factors::submit),
        )
        .route(
            "/auth/account/two-factor/key-options",
            post(factors::key_options),
        )
        .route(
            "/auth/second-factor/key-options",
            post(second_factor::key_options),
        )
        .route("/auth/account/history", get(account::history))
        .route(
            "/auth/account/passkeys",
            get(passkeys::page).post(passkeys::submit),
        )
        .route(
            "/auth/account/passkeys/options",
            post(passkeys::register_options),
        )
        .route("/auth/passkey", post(passkeys::sign_in))
        .route("/auth/passkey/options", post(passkeys::sign_in_options))
        .route(
            "/auth/account/recovery",
            get(recovery::account_page).post(recovery::account_submit),
        )
        .route(
            "/auth/recovery",
            get(recovery::start_page).post(recovery::start_submit),
        )
        .route(
            "/auth/recovery/status",
            get(recovery::status_page).post(recovery::status_submit),
        )
        .route(
            "/auth/recovery/approve",
            get(recovery::approve_page).post(recovery::approve_submit),
        )
        .route(
            "/auth/recovery/cancel",
            get(recovery::cancel_page).post(recovery::cancel_submit),
        )
        .route("/auth/sessions", get(account::sessions))
        .route("/auth/sessions/revoke", post(account::revoke))
        .route(
            "/auth/sign-out",
            get(account::sign_out_page).post(account::sign_out),
        )
}

/// The authorization endpoint and the hosted pages (auth plane).
pub fn router(state: HostedState) -> Router {
    let mut api = api();
    // RFC 8628: unrouted when disabled, so the path is the router's plain 404.
    if state.device.is_some() {
        api = api.route(VERIFICATION_PATH, get(device::page).post(device::submit));
    }
    // OpenID CIBA: likewise.
    if state.ciba {
        api = api.route(
            APPROVAL_PATH,
            get(backchannel::page).post(backchannel::submit),
        );
    }
    // Delegations are used through the agent grant: served with it.
    if state.delegations.is_some() {
        api = api
            .route(delegate::PATH, get(delegate::page).post(delegate::submit))
            .route(
                delegate::LIST_PATH,
                get(delegate::list).post(delegate::revoke),
            );
    }
    if state.own_keys.is_some() {
        api = api.route(api_keys::PATH, get(api_keys::page).post(api_keys::submit));
    }
    // `[enterprise_sso]`: unrouted when off.
    if state.authn.sso_enabled() {
        api = api
            .route("/auth/sso", post(sso::start))
            .route(svc_domain::SSO_CALLBACK_PATH, get(sso::callback));
    }
    // `[social]`: likewise.
    if state.authn.social_enabled() {
        api = social::routes(api);
    }
    api.split_for_parts()
        .0
        .layer(axum::middleware::map_response(secure))
        .with_state(state)
}

/// The OpenAPI operations of `/oauth/authorize` and `/oauth/end-session` (the hosted pages
/// under `/auth/*` are not API operations), with the refusals of tenant resolution and the
/// middleware.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    let mut doc = api().into_openapi();
    refusals::add(&mut doc, |_| Refusals::TENANT);
    doc
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

/// Where the pending request `interaction` ends (its client's redirect URI), for the CSP of a
/// form after which the browser follows redirects there: browsers check every redirect after a
/// form submission against the page's `form-action`.
pub(crate) async fn redirect_target(
    state: &HostedState,
    ctx: &Ctx,
    interaction: Option<&InteractionId>,
) -> Option<String> {
    state
        .authorize
        .login_context(&ctx.current.tenant, interaction?)
        .await
        .map(|context| context.redirect_uri)
}

/// The `interaction` parameter: `Ok(None)` when absent, `Err` when present but not an
/// interaction id (the page then says the request expired; the value is never echoed).
pub(crate) fn interaction_param(value: Option<&str>) -> Result<Option<InteractionId>, ()> {
    match value {
        None => Ok(None),
        Some(raw) => InteractionId::parse(raw).map(Some).map_err(|_| ()),
    }
}

// ---------------------------------------------------------------------------------------------
// Wire shapes of the documented endpoints' parameters, as schemas. The handlers pass the raw
// pairs to the engines (`svc_oauth::authorize`, `svc_oauth::end_session`), which check them;
// these types describe them and must follow those checks.

/// What `GET|POST /oauth/authorize` does, for the API reference.
const AUTHORIZE_DESCRIPTION: &str = "The authorization endpoint (RFC 6749 §3.1, §4.1.1; OIDC \
    Core §3.1.2.1), for a browser sent by an application: the authorization code flow with \
    PKCE `S256` (RFC 7636 §4.3, required for public clients).\n\n\
    The client and its redirect URI are checked first: an unknown `client_id`, or a \
    `redirect_uri` that is missing, repeated or not registered character for character, is \
    shown on an HTML error page and never redirected to (RFC 6749 §4.1.2.1, RFC 9700 §4.11). \
    Every other outcome is a `303 See Other`: to the redirect URI with `code`, or with `error` \
    and `error_description` (RFC 6749 §4.1.2.1, OIDC Core §3.1.2.6), always with `state` when \
    sent and `iss` (RFC 9207); or first to the hosted sign-in or consent page, which come back \
    here. A known parameter may not be repeated (RFC 6749 §3.1); unknown ones are ignored.\n\n\
    A request pushed first to `/oauth/par` (RFC 9126) comes as `client_id` and `request_uri` \
    alone: any other authorization parameter beside them, or a `request_uri` that is unknown, \
    expired, already used or another client's, is an HTML error page. An application registered \
    with `require_pushed_authorization_requests` (or every application, when the deployment \
    requires it) is refused a plain request with `error=invalid_request`.\n\n\
    The authoritative lists of supported values are `response_types_supported`, \
    `response_modes_supported`, `code_challenge_methods_supported`, `scopes_supported`, \
    `prompt_values_supported`, `claims_supported` and `acr_values_supported` in \
    `/.well-known/openid-configuration`, whose `authorization_endpoint` this is.";

/// What `GET|POST /oauth/end-session` does, for the API reference.
const END_SESSION_DESCRIPTION: &str = "RP-initiated logout (OpenID Connect RP-Initiated Logout \
    1.0 §2): an application asks to end the person's session at this issuer and, optionally, \
    to send the browser back to one of its registered `post_logout_redirect_uris` (§3). With an \
    `id_token_hint` for the browser's current session (or no session at all) the session ends \
    at once; otherwise the person is asked to confirm on an HTML page, whose form posts the \
    same parameters back with `confirm=yes` and a CSRF token (§2: a request without a hint \
    could be forged by any site). An invalid hint, a `client_id` that is not the hint's \
    audience or an unregistered redirect URI is an HTML error page, never a redirect.\n\n\
    The authoritative endpoint is `end_session_endpoint` in \
    `/.well-known/openid-configuration`.";

fn one_of(values: &'static [&'static str], description: &'static str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
        .enum_values(Some(values.iter().copied()))
}

fn response_type() -> ObjectBuilder {
    one_of(
        &["code"],
        "`code`: the authorization code flow (RFC 6749 §4.1.1), the only one.",
    )
}

fn response_mode() -> ObjectBuilder {
    one_of(
        &["query"],
        "`query`, the only mode (and the default for `code`).",
    )
}

fn code_challenge_method() -> ObjectBuilder {
    one_of(
        &["S256"],
        "`S256` only (RFC 7636 §4.3; `plain` is refused).",
    )
}

/// The authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3, OIDC Core §3.1.2.1) as this
/// version accepts it: in the query of a GET or the form body of a POST. A known parameter may
/// appear once; unknown ones are ignored; `request`, a `request_uri` (OIDC Core §6) other than
/// one from `/oauth/par`, and `authorization_details` (RFC 9396) are refused. A request pushed to
/// `/oauth/par` (RFC 9126) is sent here as `client_id` and `request_uri` alone.
#[derive(Deserialize, IntoParams, ToSchema)]
#[into_params(parameter_in = Query)]
#[schema(example = json!({
    "client_id": "app_01JB7Q3M2X8V6N4K0T5R9C1D2E",
    "redirect_uri": "https://app.example.com/callback",
    "response_type": "code",
    "scope": "openid profile email",
    "state": "af0ifjsldkj",
    "nonce": "n-0S6_WzA2Mj",
    "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    "code_challenge_method": "S256"
}))]
pub struct AuthorizationRequestParams {
    /// The application's client id; an unknown one is shown on an error page.
    pub client_id: String,
    /// One of the application's registered redirect URIs, character for character (RFC 9700
    /// §2.1); otherwise an error page, never a redirect.
    pub redirect_uri: String,
    /// `code`.
    #[param(required = true, schema_with = response_type)]
    #[schema(schema_with = response_type)]
    pub response_type: String,
    /// Space-separated scopes within the application's allowed scopes (RFC 6749 §3.3);
    /// `openid` for an ID token, `offline_access` for a refresh token.
    pub scope: String,
    /// Returned unchanged with the answer (RFC 6749 §4.1.2); at most 2048 characters.
    #[schema(nullable = false)]
    pub state: Option<String>,
    /// Put into the ID token (OIDC Core §3.1.2.1); at most 512 characters.
    #[schema(nullable = false)]
    pub nonce: Option<String>,
    /// BASE64URL(SHA-256(code_verifier)) (RFC 7636 §4.2); required for public clients, and
    /// together with `code_challenge_method`.
    #[schema(nullable = false)]
    pub code_challenge: Option<String>,
    /// `S256`, with `code_challenge`.
    #[param(schema_with = code_challenge_method)]
    #[schema(nullable = false, schema_with = code_challenge_method)]
    pub code_challenge_method: Option<String>,
    /// `query`.
    #[param(schema_with = response_mode)]
    #[schema(nullable = false, schema_with = response_mode)]
    pub response_mode: Option<String>,
    /// Space-separated among `none`, `login`, `consent`, `select_account` (OIDC Core
    /// §3.1.2.1); `none` stands alone and never shows a page (`login_required`,
    /// `consent_required` instead).
    #[schema(nullable = false)]
    pub prompt: Option<String>,
    /// Seconds since the person last authenticated that are acceptable; 0 to one year.
    #[param(minimum = 0, maximum = 31_536_000)]
    #[schema(nullable = false, minimum = 0, maximum = 31_536_000)]
    pub max_age: Option<u64>,
    /// Pre-fills the sign-in page's address field; at most 512 characters.
    #[schema(nullable = false)]
    pub login_hint: Option<String>,
    /// Requested authentication context classes, space-separated; at most 512 characters.
    #[schema(nullable = false)]
    pub acr_values: Option<String>,
    /// An OIDC Core §5.5 claims request, a JSON object; at most 4096 characters.
    #[schema(nullable = false)]
    pub claims: Option<String>,
    /// Accepted (once) and not acted on.
    #[schema(nullable = false)]
    pub id_token_hint: Option<String>,
    /// Accepted (once) and not acted on.
    #[schema(nullable = false)]
    pub display: Option<String>,
    /// Accepted (once); pages follow `Accept-Language`.
    #[schema(nullable = false)]
    pub ui_locales: Option<String>,
    /// Accepted (once) and not acted on.
    #[schema(nullable = false)]
    pub claims_locales: Option<String>,
}

/// An RP-initiated logout request (OpenID Connect RP-Initiated Logout 1.0 §2), in the query
/// of a GET or the form of a POST. No parameter may be repeated.
#[derive(Deserialize, IntoParams, ToSchema)]
#[into_params(parameter_in = Query)]
#[schema(example = json!({
    "id_token_hint": "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsyIn0.e30.sig",
    "post_logout_redirect_uri": "https://app.example.com/signed-out",
    "state": "xyz"
}))]
pub struct EndSessionParams {
    /// An ID token this issuer signed for the person (an expired one is still a hint, §4);
    /// with it for the current session, the sign-out needs no confirmation.
    #[schema(nullable = false)]
    pub id_token_hint: Option<String>,
    /// The application asking; with a hint it must be the hint's audience.
    #[schema(nullable = false)]
    pub client_id: Option<String>,
    /// Where to go afterwards: one of the application's registered
    /// `post_logout_redirect_uris`, exactly (§3); needs a known application.
    #[schema(nullable = false)]
    pub post_logout_redirect_uri: Option<String>,
    /// Returned with the redirect (§3).
    #[schema(nullable = false)]
    pub state: Option<String>,
}

fn confirm() -> ObjectBuilder {
    one_of(
        &["yes"],
        "`yes` when the person submitted the confirmation page.",
    )
}

/// The form of `POST /oauth/end-session`: the relying party's parameters, or the confirmation
/// page re-posting them with `confirm=yes` and its CSRF token.
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({
    "id_token_hint": "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsyIn0.e30.sig",
    "post_logout_redirect_uri": "https://app.example.com/signed-out"
}))]
pub struct EndSessionForm {
    /// The logout request's parameters.
    #[serde(flatten)]
    pub params: EndSessionParams,
    /// Set by the confirmation page.
    #[schema(nullable = false, schema_with = confirm)]
    pub confirm: Option<String>,
    /// The confirmation page's CSRF token, required with `confirm`; it must match the CSRF
    /// cookie.
    #[schema(nullable = false)]
    pub csrf: Option<String>,
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
