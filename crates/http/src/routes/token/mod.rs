//! `POST /oauth/token` (RFC 6749 §3.2): form in, token or RFC 6749 §5.2 error out, never cached
//! (§5.1 `Cache-Control: no-store`). Beside it the other client-authenticated endpoints,
//! `POST /oauth/introspect` (RFC 7662) and `POST /oauth/revoke` (RFC 7009), and the
//! bearer-authenticated `GET|POST /userinfo` (OIDC Core §5.3, errors per RFC 6750 §3).
//!
//! The three form endpoints share one prelude, the `ProtocolRequest` extractor of
//! `super::protocol` (tenant, form, throttling per client and per address before any credential
//! is checked); every error is rendered by the error seam (`crate::error::oauth`,
//! `crate::error::bearer`).
//!
//! Routes and their OpenAPI operations come from one declaration (`utoipa_axum`); the wire
//! shapes of the forms and answers (`TokenRequest`, `TokenResponse`, `OAuthError`, …) are
//! described by the schema types of `schemas`, which must follow the engines.

mod schemas;

pub use schemas::{
    AgentAssertionTokenRequest, AuthorizationCodeTokenRequest, CibaTokenRequest,
    ClientAuthentication, ClientCredentialsTokenRequest, DeviceCodeTokenRequest, EmptyBody,
    IntrospectionRequest, IntrospectionResponse, OAUTH_ERROR_CODES, OAuthErrorBody,
    RefreshTokenRequest, RevocationRequest, TokenExchangeRequest, TokenRequest, TokenResponseBody,
    UserInfoClaims,
};

use super::protocol::ProtocolRequest;
use crate::error::bearer;
use crate::error::oauth::{self, no_store};
use crate::openapi::refusals::{self, Refusals};
use crate::openapi::tags;
use crate::tenancy::{CurrentTenant, TenantResolver};
use crate::throttle::Throttle;
use axum::Router;
use axum::extract::{FromRef, State};
use axum::response::{IntoResponse, Response};
use http::header::AUTHORIZATION;
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use std::sync::Arc;
use svc_oauth::OAuthError;
use svc_oauth::introspect::Introspector;
use svc_oauth::revoke::Revoker;
use svc_oauth::token::{TokenCall, TokenEndpoint};
use svc_oauth::userinfo::{Presented, UserInfo};
use utoipa_axum::{router::OpenApiRouter, routes};

/// State of the token route.
#[derive(Clone)]
pub struct TokenState {
    /// Host → tenant.
    pub tenants: TenantResolver,
    /// The engine.
    pub endpoint: Arc<TokenEndpoint>,
    /// RFC 7662 introspection.
    pub introspector: Arc<Introspector>,
    /// RFC 7009 revocation.
    pub revoker: Arc<Revoker>,
    /// OIDC Core §5.3 UserInfo.
    pub userinfo: Arc<UserInfo>,
    /// Request throttling.
    pub throttle: Arc<Throttle>,
    /// The web origins browsers may call the token, revocation and UserInfo endpoints from.
    pub browser_origins: Arc<svc_oauth::browser_origins::BrowserOrigins>,
}

impl FromRef<TokenState> for TenantResolver {
    fn from_ref(state: &TokenState) -> Self {
        state.tenants.clone()
    }
}

impl FromRef<TokenState> for Arc<Throttle> {
    fn from_ref(state: &TokenState) -> Self {
        Arc::clone(&state.throttle)
    }
}

fn api() -> OpenApiRouter<TokenState> {
    OpenApiRouter::new()
        .routes(routes!(token))
        .routes(routes!(introspect))
        .routes(routes!(revoke))
        .routes(routes!(userinfo_get, userinfo_post))
}

/// The token route.
pub fn router(state: TokenState) -> Router {
    // OPTIONS is routed on the browser-facing paths so that preflights reach the CORS layer
    // (the app's 405 fallback would answer them first); without a preflight from an allowed
    // origin the layer lets it through to a 405.
    let preflight = axum::routing::options(super::browser_cors::no_preflight);
    api()
        .split_for_parts()
        .0
        .route("/oauth/token", preflight.clone())
        .route("/oauth/revoke", preflight.clone())
        .route("/userinfo", preflight)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            super::browser_cors::cors,
        ))
        .with_state(state)
}

/// The OpenAPI operations of these routes, with the refusals of the protocol prelude and the
/// middleware (throttling for the client-authenticated endpoints, not for UserInfo).
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    let mut doc = api().into_openapi();
    refusals::add(&mut doc, |path| {
        if path == "/userinfo" {
            Refusals::TENANT
        } else {
            Refusals::THROTTLED_TENANT
        }
    });
    doc
}

#[utoipa::path(
    post, path = "/oauth/token", tag = tags::PROTOCOL,
    operation_id = "requestToken",
    summary = "Obtain tokens (token endpoint)",
    description = "The token endpoint (RFC 6749 §3.2). Grants served: `authorization_code` \
        (RFC 6749 §4.1.3, with PKCE per RFC 7636 §4.5), `refresh_token` (RFC 6749 §6, rotated \
        on every use per RFC 9700 §4.14.2) and `client_credentials` (RFC 6749 §4.4.2, \
        confidential clients only, never with a refresh token) and, while \
        `[device_authorization].enabled`, `urn:ietf:params:oauth:grant-type:device_code` \
        (RFC 8628 §3.4: the device's poll, answered `authorization_pending`, `slow_down` with \
        `Retry-After`, `access_denied`, `expired_token` or the tokens), and while `[ciba].enabled` \
        `urn:openid:params:grant-type:ciba` (OpenID CIBA Core §10.1, poll mode, answered the same \
        way), and while `[challenge].enabled` `urn:ietf:params:oauth:grant-type:jwt-bearer` \
        (RFC 7523 §2.1) for agents: an `assertion` signed with a key the agent registered, \
        `iss` = `sub` = its id, `aud` the issuer or this endpoint, `exp` within 300 s, and \
        `nonce` a challenge of `POST /oauth/agent/challenge`, answered once (no client \
        authentication with it; refusals are `invalid_grant`, `invalid_target`, \
        `invalid_scope`). The body is a form; a \
        parameter may not be repeated (except `resource`, RFC 8707 §2), empty ones count as \
        absent and unknown ones are ignored.\n\n\
        The client authenticates with the method it registered, exactly one per request \
        (RFC 6749 §2.3): HTTP Basic (`client_secret_basic`), `client_id` + `client_secret` in \
        the body (`client_secret_post`), a JWT assertion in the body (`private_key_jwt`, RFC 7523 \
        §2.2), or `client_id` alone for a public client (`none`, which must have used PKCE).\n\n\
        Answers are never cached (`Cache-Control: no-store`, RFC 6749 §5.1); errors are RFC 6749 \
        §5.2 JSON. The authoritative lists of supported grant types, authentication methods and \
        scopes are `grant_types_supported`, `token_endpoint_auth_methods_supported` and \
        `scopes_supported` in `/.well-known/openid-configuration`; this endpoint is its \
        `token_endpoint`.",
    request_body(
        content = TokenRequest,
        content_type = "application/x-www-form-urlencoded",
        description = "The grant's parameters and, unless HTTP Basic is used, the client's \
                       authentication.",
    ),
    responses(
        (status = 200, description = "The tokens (RFC 6749 §5.1).", body = TokenResponseBody,
         headers(
             ("Cache-Control" = String, description = "`no-store`."),
             ("Pragma" = String, description = "`no-cache`."),
         )),
        (status = 400, description = "RFC 6749 §5.2: `invalid_request` (missing, repeated or \
            malformed parameter, not a form, several authentication methods), `invalid_grant` \
            (code or refresh token invalid, expired, used, or bound to another client or \
            redirect URI; PKCE verifier wrong), `unauthorized_client` (the grant is not allowed \
            on this application), `unsupported_grant_type`, `invalid_scope`, `invalid_target` \
            (`resource`); for the device grant also `authorization_pending`, `slow_down` (with \
            `Retry-After`), `access_denied` and `expired_token` (RFC 8628 §3.5).",
         body = OAuthErrorBody),
        (status = 401, description = "RFC 6749 §5.2 `invalid_client`: client authentication \
            failed or was missing (one answer for unknown client, wrong secret and wrong method).",
         body = OAuthErrorBody,
         headers(("WWW-Authenticate" = String,
                  description = "`Basic realm=\"svc\"` when the client tried HTTP Basic."))),
        (status = 500, description = "RFC 6749 §5.2 `server_error`.", body = OAuthErrorBody),
        (status = 503, description = "RFC 6749 §5.2 `temporarily_unavailable`: a dependency is \
            unavailable; retry later.", body = OAuthErrorBody),
    ),
    security(("client_secret_basic" = []), ()),
)]
async fn token(State(state): State<TokenState>, request: ProtocolRequest) -> Response {
    let call = TokenCall {
        tenant: &request.current.tenant,
        issuer: &request.current.issuer,
        form: &request.form,
        authorization: request.authorization(),
        peer: request.peer,
        dpop: request.dpop_proof(),
    };
    match state.endpoint.handle_call(&call).await {
        Ok(response) => {
            let mut response = no_store(axum::Json(response).into_response());
            // RFC 9449 §8: a nonce-requiring server may hand the next nonce out with success.
            if let Some(nonce) = state
                .endpoint
                .dpop_nonce(&request.current.tenant)
                .and_then(|n| HeaderValue::from_str(&n).ok())
            {
                response.headers_mut().insert(oauth::DPOP_NONCE, nonce);
            }
            response
        }
        Err(error) => oauth::response(&error),
    }
}

/// `POST /oauth/introspect` (RFC 7662 §2).
#[utoipa::path(
    post, path = "/oauth/introspect", tag = tags::PROTOCOL,
    operation_id = "introspectToken",
    summary = "Introspect a token",
    description = "Token introspection (RFC 7662 §2). The caller authenticates exactly as at \
        the token endpoint and must be a confidential client (§2.1, §4); it learns about an \
        access token only when the token's `aud` is its registered `api_audience` or it is the \
        client the token was issued to, and about a refresh token only when it is that token's \
        client. Anything else, and any malformed, expired, revoked or unknown token, is \
        `{\"active\": false}` with nothing more (§2.2).\n\n\
        The authoritative endpoint and authentication methods are `introspection_endpoint` and \
        `introspection_endpoint_auth_methods_supported` in \
        `/.well-known/oauth-authorization-server` (or `/.well-known/openid-configuration`).",
    request_body(
        content = IntrospectionRequest,
        content_type = "application/x-www-form-urlencoded",
        description = "The token and, unless HTTP Basic is used, the client's authentication.",
    ),
    responses(
        (status = 200, description = "The token's state (RFC 7662 §2.2).",
         body = IntrospectionResponse,
         headers(("Cache-Control" = String, description = "`no-store`."))),
        (status = 400, description = "RFC 6749 §5.2: `invalid_request` (`token` missing, a \
            parameter repeated, not a form, several authentication methods) or \
            `unauthorized_client` (a public client).", body = OAuthErrorBody),
        (status = 401, description = "RFC 6749 §5.2 `invalid_client`: client authentication \
            failed or was missing.", body = OAuthErrorBody,
         headers(("WWW-Authenticate" = String,
                  description = "`Basic realm=\"svc\"` when the client tried HTTP Basic."))),
        (status = 500, description = "RFC 6749 §5.2 `server_error`.", body = OAuthErrorBody),
        (status = 503, description = "RFC 6749 §5.2 `temporarily_unavailable`.",
         body = OAuthErrorBody),
    ),
    security(("client_secret_basic" = []), ()),
)]
async fn introspect(State(state): State<TokenState>, request: ProtocolRequest) -> Response {
    match state
        .introspector
        .handle(
            &request.current.tenant,
            &request.current.issuer,
            &request.form,
            request.authorization(),
        )
        .await
    {
        Ok(answer) => no_store(axum::Json(answer).into_response()),
        Err(error) => oauth::response(&error),
    }
}

/// `POST /oauth/revoke` (RFC 7009 §2): 200 with an empty body whether or not the token was
/// known (§2.2).
#[utoipa::path(
    post, path = "/oauth/revoke", tag = tags::PROTOCOL,
    operation_id = "revokeToken",
    summary = "Revoke a token",
    description = "Token revocation (RFC 7009 §2.1). The client authenticates as at the token \
        endpoint (a public client sends its `client_id`). Revoking a refresh token ends its \
        whole family (the grant); revoking an access token makes introspection and UserInfo \
        refuse it until it expires. `token_type_hint` is only a hint: both kinds are tried. \
        Unknown, malformed, expired or other clients' tokens get the same 200 as success \
        (§2.2), so the endpoint is no oracle.\n\n\
        The authoritative endpoint and authentication methods are `revocation_endpoint` and \
        `revocation_endpoint_auth_methods_supported` in \
        `/.well-known/oauth-authorization-server` (or `/.well-known/openid-configuration`).",
    request_body(
        content = RevocationRequest,
        content_type = "application/x-www-form-urlencoded",
        description = "The token and, unless HTTP Basic is used, the client's authentication.",
    ),
    responses(
        (status = 200, description = "Revoked, or nothing to revoke (RFC 7009 §2.2); empty \
            body.", headers(("Cache-Control" = String, description = "`no-store`."))),
        (status = 400, description = "RFC 6749 §5.2 `invalid_request`: `token` missing, a \
            parameter repeated, not a form, or several authentication methods.",
         body = OAuthErrorBody),
        (status = 401, description = "RFC 6749 §5.2 `invalid_client`: client authentication \
            failed or was missing.", body = OAuthErrorBody,
         headers(("WWW-Authenticate" = String,
                  description = "`Basic realm=\"svc\"` when the client tried HTTP Basic."))),
        (status = 500, description = "RFC 6749 §5.2 `server_error`.", body = OAuthErrorBody),
        (status = 503, description = "RFC 6749 §5.2 `temporarily_unavailable`.",
         body = OAuthErrorBody),
    ),
    security(("client_secret_basic" = []), ()),
)]
async fn revoke(State(state): State<TokenState>, request: ProtocolRequest) -> Response {
    match state
        .revoker
        .handle(
            &request.current.tenant,
            &request.current.issuer,
            &request.form,
            request.authorization(),
        )
        .await
    {
        Ok(()) => no_store(StatusCode::OK.into_response()),
        Err(error) => oauth::response(&error),
    }
}

/// The description both UserInfo operations share.
const USERINFO_DESCRIPTION: &str = "The UserInfo endpoint (OIDC Core §5.3): the claims of the \
    person an access token was issued for, as far as the granted scopes allow (§5.4: `profile` \
    gives `name`, `given_name`, `family_name`, `updated_at`; `email` gives `email`, \
    `email_verified`; `sub` always). The token must be an active access token of this tenant \
    issued to a person with the `openid` scope, sent as `Authorization: Bearer` (RFC 6750 \
    §2.1) only: the form and query parameters of RFC 6750 §2.2 and §2.3 are not accepted. \
    Refusals carry an RFC 6750 §3 `WWW-Authenticate: Bearer` challenge.\n\n\
    The authoritative endpoint and the claims this issuer can release are `userinfo_endpoint` \
    and `claims_supported` in `/.well-known/openid-configuration`.";

/// One UserInfo operation per method (OpenAPI needs a distinct operation id for each); GET and
/// POST answer alike (OIDC Core §5.3.1), so the declaration is written once.
macro_rules! userinfo_operation {
    ($(#[$doc:meta])* $name:ident, $method:ident, $operation_id:literal, $summary:literal) => {
        $(#[$doc])*
        #[utoipa::path(
            $method, path = "/userinfo", tag = tags::PROTOCOL,
            operation_id = $operation_id,
            summary = $summary,
            description = USERINFO_DESCRIPTION,
            responses(
                (status = 200, description = "The claims (OIDC Core §5.3.2).", body = UserInfoClaims,
                 headers(("Cache-Control" = String, description = "`no-store`."))),
                (status = 401, description = "No bearer token (an empty body and a bare challenge, \
                    RFC 6750 §3.1), or `invalid_token`: the token is malformed, expired, revoked, of \
                    another tenant, or its person or consent is gone.",
                 content(
                     (OAuthErrorBody = "application/json"),
                     (EmptyBody = "text/plain"),
                 ),
                 headers(("WWW-Authenticate" = String,
                          description = "`Bearer realm=\"svc\"`, with `error=\"invalid_token\"` when a \
                                         token was sent."))),
                (status = 403, description = "`insufficient_scope`: not a person's token, or no \
                    `openid` scope.", body = OAuthErrorBody,
                 headers(("WWW-Authenticate" = String,
                          description = "`Bearer realm=\"svc\", error=\"insufficient_scope\"`."))),
                (status = 500, description = "RFC 6749 §5.2 `server_error`.", body = OAuthErrorBody),
                (status = 503, description = "`temporarily_unavailable`: a dependency is unavailable.",
                 body = OAuthErrorBody),
            ),
            security(("access_token" = [])),
        )]
        async fn $name(
            state: State<TokenState>,
            current: CurrentTenant,
            method: Method,
            headers: HeaderMap,
        ) -> Response {
            userinfo(state, current, method, headers).await
        }
    };
}

userinfo_operation!(
    /// `GET /userinfo` (OIDC Core §5.3.1).
    userinfo_get,
    get,
    "getUserInfo",
    "Read the signed-in person's claims (UserInfo)"
);
userinfo_operation!(
    /// `POST /userinfo` (OIDC Core §5.3.1): the same as the GET; a body is ignored.
    userinfo_post,
    post,
    "postUserInfo",
    "Read the signed-in person's claims (UserInfo, POST)"
);

/// `GET|POST /userinfo` (OIDC Core §5.3). The access token comes from `Authorization: Bearer`
/// only: RFC 6750 §2.2's form parameter and §2.3's query parameter leak tokens into logs and
/// caches, so they are not accepted.
async fn userinfo(
    State(state): State<TokenState>,
    current: CurrentTenant,
    method: Method,
    headers: HeaderMap,
) -> Response {
    let authorization = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok());
    let (scheme, token) = match svc_sdk::authorization_token(authorization) {
        Ok(found) => found,
        Err(svc_sdk::ValidationError::MissingToken) => return bearer::userinfo_without_token(),
        Err(_) => {
            let refused = OAuthError::invalid_token("the Authorization header is malformed");
            return bearer::userinfo_refused(&refused, false);
        }
    };
    let dpop_scheme = scheme == svc_sdk::AuthScheme::DPoP;
    let presented = Presented {
        token,
        dpop_scheme,
        proof: svc_oauth::dpop::proof_header(&headers),
        method: method.as_str(),
    };
    match state
        .userinfo
        .claims_presented(&current.tenant, &current.issuer, &presented)
        .await
    {
        Ok(claims) => no_store(axum::Json(claims).into_response()),
        Err(error) => {
            let dpop_challenge = dpop_scheme || error.dpop_challenge();
            bearer::userinfo_refused(&error, dpop_challenge)
        }
    }
}
