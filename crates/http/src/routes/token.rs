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
//! described by the schema types at the end of this file, which must follow the engines.

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
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use svc_oauth::ErrorCode;
use svc_oauth::OAuthError;
use svc_oauth::introspect::Introspector;
use svc_oauth::revoke::Revoker;
use svc_oauth::token::{TokenCall, TokenEndpoint};
use svc_oauth::userinfo::{Presented, UserInfo};
use utoipa::ToSchema;
use utoipa::openapi::schema::{ObjectBuilder, Type};
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

// ---------------------------------------------------------------------------------------------
// Wire shapes, as schemas. The handlers pass raw form pairs to the engines, which parse them;
// these types exist to describe the forms and answers, and must follow what the engines do.

/// Every RFC 6749 §5.2 / RFC 6750 §3.1 `error` code the protocol endpoints can answer.
pub const OAUTH_ERROR_CODES: [ErrorCode; 21] = [
    ErrorCode::InvalidRequest,
    ErrorCode::InvalidClient,
    ErrorCode::InvalidGrant,
    ErrorCode::UnauthorizedClient,
    ErrorCode::UnsupportedGrantType,
    ErrorCode::InvalidScope,
    ErrorCode::UnsupportedResponseType,
    ErrorCode::InvalidTarget,
    ErrorCode::InvalidToken,
    ErrorCode::InsufficientScope,
    ErrorCode::ServerError,
    ErrorCode::TemporarilyUnavailable,
    ErrorCode::AuthorizationPending,
    ErrorCode::SlowDown,
    ErrorCode::AccessDenied,
    ErrorCode::ExpiredToken,
    ErrorCode::InvalidBindingMessage,
    ErrorCode::InvalidRequestObject,
    ErrorCode::InvalidDpopProof,
    ErrorCode::UseDpopNonce,
    ErrorCode::InvalidAuthorizationDetails,
];

fn oauth_error_code() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(
            "The error code (RFC 6749 §5.2, RFC 6750 §3.1, RFC 8707 §2, RFC 9126 §2.3, RFC 8628 \
             §3.5, RFC 9101 §6.3); each \
             response says which codes it carries.",
        ))
        .enum_values(Some(OAUTH_ERROR_CODES.iter().map(|c| c.as_str())))
}

/// An error of the protocol endpoints (RFC 6749 §5.2): `application/json`, never cached.
#[derive(Serialize, ToSchema)]
#[schema(as = OAuthError, example = json!({
    "error": "invalid_grant",
    "error_description": "the code has expired"
}))]
pub struct OAuthErrorBody {
    /// The error code.
    #[schema(schema_with = oauth_error_code)]
    pub error: String,
    /// What went wrong, for the integrator (never a secret, never an internal cause).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub error_description: Option<String>,
    /// Not sent by svc; listed because RFC 6749 §5.2 defines it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub error_uri: Option<String>,
}

/// The empty body of a refusal without an error code (RFC 6750 §3.1).
#[derive(ToSchema)]
#[schema(value_type = String, max_length = 0)]
pub struct EmptyBody(pub String);

fn single(value: &'static str, description: &'static str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
        .enum_values(Some([value]))
}

fn authorization_code_grant() -> ObjectBuilder {
    single("authorization_code", "RFC 6749 §4.1.3.")
}

fn refresh_token_grant() -> ObjectBuilder {
    single("refresh_token", "RFC 6749 §6.")
}

fn client_credentials_grant() -> ObjectBuilder {
    single("client_credentials", "RFC 6749 §4.4.2.")
}

fn assertion_type() -> ObjectBuilder {
    single(
        svc_oauth::token::JWT_BEARER_ASSERTION_TYPE,
        "With `client_assertion` (RFC 7521 §4.2): the assertion is a JWT (RFC 7523 §2.2).",
    )
}

fn token_type_hint() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(
            "What `token` probably is (RFC 7009 §2.1, RFC 7662 §2.1); only a hint, both kinds \
             are tried.",
        ))
        .enum_values(Some(["access_token", "refresh_token"]))
}

/// Client authentication in the body (RFC 6749 §2.3.1, RFC 7523 §2.2): leave these out when
/// authenticating with HTTP Basic, and use exactly the method the application registered.
#[derive(Deserialize, ToSchema)]
pub struct ClientAuthentication {
    /// The client's id: required with `client_secret` and for a public client (method `none`);
    /// optional with an assertion (it must equal the assertion's `sub`) and with HTTP Basic
    /// (it must equal the Basic user name).
    #[schema(nullable = false)]
    pub client_id: Option<String>,
    /// The client's secret (`client_secret_post`).
    #[schema(nullable = false)]
    pub client_secret: Option<String>,
    /// The assertion's type (`private_key_jwt`).
    #[schema(nullable = false, schema_with = assertion_type)]
    pub client_assertion_type: Option<String>,
    /// A JWT signed with the client's registered key (`private_key_jwt`, RFC 7523 §3): `iss`
    /// and `sub` the client id, `aud` the issuer, short-lived, `jti` used once.
    #[schema(nullable = false)]
    pub client_assertion: Option<String>,
}

/// `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.5).
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({
    "grant_type": "authorization_code",
    "code": "ac_5XW0m3yZcQ7s1k2Pq9rT",
    "redirect_uri": "https://app.example.com/callback",
    "code_verifier": "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    "client_id": "app_01JB7Q3M2X8V6N4K0T5R9C1D2E"
}))]
pub struct AuthorizationCodeTokenRequest {
    /// `authorization_code`.
    #[schema(schema_with = authorization_code_grant)]
    pub grant_type: String,
    /// The code the authorization endpoint returned; usable once, briefly.
    pub code: String,
    /// Exactly the `redirect_uri` of the authorization request.
    pub redirect_uri: String,
    /// The PKCE verifier (43–128 unreserved characters): required when the authorization
    /// request carried a `code_challenge`, refused when it did not.
    #[schema(nullable = false)]
    pub code_verifier: Option<String>,
    /// RAR (RFC 9396 §6): a JSON array of detail objects, while `[oidc].authorization_details`
    /// is on. A narrowing of the details the person approved
    /// (array elements dropped); absent: all of them.
    #[schema(nullable = false)]
    pub authorization_details: Option<String>,
    /// Client authentication in the body.
    #[serde(flatten)]
    pub client: ClientAuthentication,
}

/// `grant_type=refresh_token` (RFC 6749 §6).
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({
    "grant_type": "refresh_token",
    "refresh_token": "rt_8dK2mQ4vX7pL1sN9cB3f",
    "client_id": "app_01JB7Q3M2X8V6N4K0T5R9C1D2E"
}))]
pub struct RefreshTokenRequest {
    /// `refresh_token`.
    #[schema(schema_with = refresh_token_grant)]
    pub grant_type: String,
    /// The refresh token; it is rotated, so the answer carries its successor (while
    /// `offline_access` is granted) and presenting it again revokes the whole family.
    pub refresh_token: String,
    /// Space-separated scopes, a subset of those granted (RFC 6749 §6); absent means the same.
    #[schema(nullable = false)]
    pub scope: Option<String>,
    /// RAR (RFC 9396 §6): a JSON array of detail objects, while `[oidc].authorization_details`
    /// is on. A narrowing of the details of the grant (array
    /// elements dropped); absent: all of them.
    #[schema(nullable = false)]
    pub authorization_details: Option<String>,
    /// Client authentication in the body.
    #[serde(flatten)]
    pub client: ClientAuthentication,
}

/// `grant_type=client_credentials` (RFC 6749 §4.4.2): confidential clients only.
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({
    "grant_type": "client_credentials",
    "scope": "applications:read users:read"
}))]
pub struct ClientCredentialsTokenRequest {
    /// `client_credentials`.
    #[schema(schema_with = client_credentials_grant)]
    pub grant_type: String,
    /// Space-separated scopes within the application's allowed scopes (RFC 6749 §3.3); absent
    /// means all of them.
    #[schema(nullable = false)]
    pub scope: Option<String>,
    /// The API the token is for (RFC 8707 §2): the application's `api_audience`, or the
    /// management API `{issuer}/api/v1` when it registered none. A token has one audience, so
    /// at most one `resource`.
    #[schema(nullable = false)]
    pub resource: Option<String>,
    /// RAR (RFC 9396 §6): a JSON array of detail objects, while `[oidc].authorization_details`
    /// is on. Objects of the application's registered types, each
    /// matching its type's schema.
    #[schema(nullable = false)]
    pub authorization_details: Option<String>,
    /// Client authentication in the body.
    #[serde(flatten)]
    pub client: ClientAuthentication,
}

fn device_code_grant() -> ObjectBuilder {
    single(svc_domain::DEVICE_CODE_GRANT, "RFC 8628 §3.4.")
}

/// `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4): the device's
/// poll, no more often than the `interval` of `/oauth/device/code`.
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({
    "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
    "device_code": "dc_GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS",
    "client_id": "app_01JB7Q3M2X8V6N4K0T5R9C1D2E"
}))]
pub struct DeviceCodeTokenRequest {
    /// `urn:ietf:params:oauth:grant-type:device_code`.
    #[schema(schema_with = device_code_grant)]
    pub grant_type: String,
    /// The `device_code` of `/oauth/device/code`.
    pub device_code: String,
    /// Client authentication in the body.
    #[serde(flatten)]
    pub client: ClientAuthentication,
}

fn ciba_grant() -> ObjectBuilder {
    single(svc_domain::CIBA_GRANT, "OpenID CIBA Core §10.1.")
}

/// `grant_type=urn:openid:params:grant-type:ciba` (CIBA Core §10.1, poll mode): the client's
/// poll, no more often than the `interval` of `/bc-authorize`.
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({
    "grant_type": "urn:openid:params:grant-type:ciba",
    "auth_req_id": "ar_1c266114-a1be-4252-8ad1-04986c5b9ac1"
}))]
pub struct CibaTokenRequest {
    /// `urn:openid:params:grant-type:ciba`.
    #[schema(schema_with = ciba_grant)]
    pub grant_type: String,
    /// The `auth_req_id` of `/bc-authorize`.
    pub auth_req_id: String,
    /// Client authentication in the body.
    #[serde(flatten)]
    pub client: ClientAuthentication,
}

fn token_exchange_grant() -> ObjectBuilder {
    single(svc_domain::TOKEN_EXCHANGE_GRANT, "RFC 8693 §2.1.")
}

fn access_token_type() -> ObjectBuilder {
    single(
        svc_oauth::grants::token_exchange::ACCESS_TOKEN_TYPE,
        "An access token of this tenant (RFC 8693 §3): the only type exchanged and issued.",
    )
}

/// `grant_type=urn:ietf:params:oauth:grant-type:token-exchange` (RFC 8693 §2.1): confidential
/// applications registered for the grant. The subject token must have been issued to the
/// client, or for its API (`aud` = its `api_audience`), or name it in `may_act`; the answer is
/// a token for the same subject, issued to the client, with the client (or the actor token's
/// subject) outermost in `act`, never more scope than the subject token and never outliving it.
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({
    "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
    "subject_token": "eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIiwidHlwIjoiYXQrand0In0.e30.sig",
    "subject_token_type": "urn:ietf:params:oauth:token-type:access_token",
    "audience": "https://orders.example.com",
    "scope": "orders:read"
}))]
pub struct TokenExchangeRequest {
    /// `urn:ietf:params:oauth:grant-type:token-exchange`.
    #[schema(schema_with = token_exchange_grant)]
    pub grant_type: String,
    /// The access token of the party the new token is for.
    pub subject_token: String,
    /// `urn:ietf:params:oauth:token-type:access_token`.
    #[schema(schema_with = access_token_type)]
    pub subject_token_type: String,
    /// An access token of the acting party, issued to this client; absent: the client acts.
    #[schema(nullable = false)]
    pub actor_token: Option<String>,
    /// With `actor_token` only: `urn:ietf:params:oauth:token-type:access_token`.
    #[schema(nullable = false, schema_with = access_token_type)]
    pub actor_token_type: Option<String>,
    /// `urn:ietf:params:oauth:token-type:access_token`, the only type issued.
    #[schema(nullable = false, schema_with = access_token_type)]
    pub requested_token_type: Option<String>,
    /// The API the new token is for: the subject token's audience (the default) or an API
    /// resource of the tenant.
    #[schema(nullable = false)]
    pub audience: Option<String>,
    /// The same as `audience`, as a URI (RFC 8707); at most one, equal to `audience` if both.
    #[schema(nullable = false)]
    pub resource: Option<String>,
    /// Space-separated scopes within the subject token's; absent means all of them.
    #[schema(nullable = false)]
    pub scope: Option<String>,
    /// Client authentication in the body.
    #[serde(flatten)]
    pub client: ClientAuthentication,
}

fn jwt_bearer_grant() -> ObjectBuilder {
    single(svc_oauth::token::agent::JWT_BEARER_GRANT, "RFC 7523 §2.1.")
}

/// `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` (RFC 7523 §2.1), served while
/// `[challenge].enabled`: a registered agent answers a challenge of
/// `POST /oauth/agent/challenge` with a JWT it signed with one of its registered keys, and gets
/// an access token for itself (`subject_type` `agent`) for one API it is allowed. No client
/// authentication comes with it.
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({
    "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
    "assertion": "eyJhbGciOiJFZERTQSIsImtpZCI6ImsxIn0.eyJpc3MiOiJhZ3RfMDFKQjdRM00yWDhWNk40SzBUNVI5QzFEMkUifQ.sig",
    "resource": "https://api.example.com/bookings",
    "scope": "bookings:read"
}))]
pub struct AgentAssertionTokenRequest {
    /// `urn:ietf:params:oauth:grant-type:jwt-bearer`.
    #[schema(schema_with = jwt_bearer_grant)]
    pub grant_type: String,
    /// A compact JWS (ES256, EdDSA, RS256 or PS256) by one of the agent's registered keys:
    /// `iss` and `sub` the agent's id, `aud` the issuer or the token endpoint, `exp` within
    /// 300 s, `nonce` an unanswered challenge given to this agent.
    pub assertion: String,
    /// The API the token is for: one of the agent's `allowed_resources` that is an API resource
    /// of the tenant; may be left out when the agent is allowed exactly one.
    #[schema(nullable = false)]
    pub resource: Option<String>,
    /// Space-separated scopes within the agent's `allowed_scopes` that the API defines; absent
    /// means all of them.
    #[schema(nullable = false)]
    pub scope: Option<String>,
}

/// A token request: one of the grants this deployment serves.
#[derive(Deserialize, ToSchema)]
#[serde(untagged)]
pub enum TokenRequest {
    /// RFC 6749 §4.1.3.
    AuthorizationCode(AuthorizationCodeTokenRequest),
    /// RFC 6749 §6.
    RefreshToken(RefreshTokenRequest),
    /// RFC 6749 §4.4.2.
    ClientCredentials(ClientCredentialsTokenRequest),
    /// RFC 8628 §3.4.
    DeviceCode(DeviceCodeTokenRequest),
    /// OpenID CIBA Core §10.1.
    Ciba(CibaTokenRequest),
    /// RFC 8693 §2.1.
    TokenExchange(TokenExchangeRequest),
    /// RFC 7523 §2.1, for agents.
    AgentAssertion(AgentAssertionTokenRequest),
}

fn bearer_token_type() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(
            "`Bearer` (RFC 6750), or `DPoP` when the request carried a DPoP proof and the \
             access token is bound to its key (RFC 9449 §5).",
        ))
        .enum_values(Some(["Bearer", "DPoP"]))
}

/// A successful token response (RFC 6749 §5.1).
#[derive(Serialize, ToSchema)]
#[schema(as = TokenResponse, example = json!({
    "access_token": "eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIiwidHlwIjoiYXQrand0In0.e30.sig",
    "token_type": "Bearer",
    "expires_in": 900,
    "scope": "openid profile offline_access",
    "refresh_token": "rt_8dK2mQ4vX7pL1sN9cB3f",
    "id_token": "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsyIn0.e30.sig"
}))]
pub struct TokenResponseBody {
    /// The access token, a JWT (RFC 9068 `at+jwt`).
    pub access_token: String,
    /// `Bearer`.
    #[schema(schema_with = bearer_token_type)]
    pub token_type: String,
    /// Lifetime of the access token in seconds.
    #[schema(minimum = 0)]
    pub expires_in: u64,
    /// The granted scopes, space-separated and sorted (possibly empty).
    pub scope: String,
    /// The successor refresh token: only for a person's grant with `offline_access`, never for
    /// `client_credentials`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub refresh_token: Option<String>,
    /// An ID token (OIDC Core §3.1.3.3): only when `openid` was granted to a person.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub id_token: Option<String>,
    /// Token exchange only (RFC 8693 §2.2.1): what `access_token` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, schema_with = access_token_type)]
    pub issued_token_type: Option<String>,
    /// RAR (RFC 9396 §7): the details the access token carries, when the grant or the request
    /// had any.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, value_type = Option<Vec<Object>>)]
    pub authorization_details: Option<serde_json::Value>,
}

/// An introspection request (RFC 7662 §2.1).
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({
    "token": "eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIiwidHlwIjoiYXQrand0In0.e30.sig",
    "token_type_hint": "access_token"
}))]
pub struct IntrospectionRequest {
    /// The access token or refresh token to describe.
    pub token: String,
    /// What `token` probably is.
    #[schema(nullable = false, schema_with = token_type_hint)]
    pub token_type_hint: Option<String>,
    /// Client authentication in the body.
    #[serde(flatten)]
    pub client: ClientAuthentication,
}

/// A revocation request (RFC 7009 §2.1).
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({
    "token": "rt_8dK2mQ4vX7pL1sN9cB3f",
    "token_type_hint": "refresh_token",
    "client_id": "app_01JB7Q3M2X8V6N4K0T5R9C1D2E"
}))]
pub struct RevocationRequest {
    /// The access token or refresh token to revoke.
    pub token: String,
    /// What `token` probably is.
    #[schema(nullable = false, schema_with = token_type_hint)]
    pub token_type_hint: Option<String>,
    /// Client authentication in the body.
    #[serde(flatten)]
    pub client: ClientAuthentication,
}

fn introspected_token_type() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(
            "`Bearer` for an access token, `DPoP` for one bound to a DPoP key (RFC 9449 §6.2), \
             `refresh_token` for a refresh token.",
        ))
        .enum_values(Some(["Bearer", "DPoP", "refresh_token"]))
}

fn subject_type() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(
            "Who the token's subject is: a person, an agent acting for one, the application \
             itself (`client_credentials`), or no one.",
        ))
        .enum_values(Some(["human", "agent", "system", "anonymous"]))
}

/// An introspection answer (RFC 7662 §2.2): `{"active": false}` alone for any token the caller
/// may not learn about, else the token's claims.
#[derive(Serialize, ToSchema)]
#[schema(example = json!({
    "active": true,
    "token_type": "Bearer",
    "scope": "applications:read",
    "client_id": "app_01JB7Q3M2X8V6N4K0T5R9C1D2E",
    "sub": "app_01JB7Q3M2X8V6N4K0T5R9C1D2E",
    "aud": "https://acme.id.example.com/api/v1",
    "iss": "https://acme.id.example.com",
    "exp": 1_730_000_900,
    "iat": 1_730_000_000,
    "nbf": 1_730_000_000,
    "jti": "01JB7Q3M2X8V6N4K0T5R9C1D2F",
    "tenant_id": "ten_01JB7Q3M2X8V6N4K0T5R9C1D2G",
    "subject_type": "system"
}))]
pub struct IntrospectionResponse {
    /// Whether the token is active and the caller may learn about it.
    pub active: bool,
    /// What the token is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, schema_with = introspected_token_type)]
    pub token_type: Option<String>,
    /// Its scopes, space-separated.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub scope: Option<String>,
    /// The client it was issued to.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub client_id: Option<String>,
    /// Its subject, as the client sees it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub sub: Option<String>,
    /// Its audience (access tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub aud: Option<String>,
    /// Its issuer (access tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub iss: Option<String>,
    /// Expiry, seconds since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub exp: Option<i64>,
    /// Issue time, seconds since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub iat: Option<i64>,
    /// Not before, seconds since the epoch (access tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub nbf: Option<i64>,
    /// The token's id (access tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub jti: Option<String>,
    /// The tenant it belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub tenant_id: Option<String>,
    /// The kind of subject (access tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, schema_with = subject_type)]
    pub subject_type: Option<String>,
    /// The DPoP key a bound access token needs a proof of: `{"jkt": "<RFC 7638 thumbprint>"}`
    /// (RFC 9449 §6.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, value_type = Option<Object>)]
    pub cnf: Option<serde_json::Value>,
    /// Who acts for the subject (RFC 8693 §4.1): `{"sub": …}`, nested for a chain, newest
    /// actor outermost; an agent acting on a person's delegation adds `subject_type` and
    /// `delegation_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, value_type = Option<Object>)]
    pub act: Option<serde_json::Value>,
    /// The RAR details the token carries (RFC 9396 §9.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, value_type = Option<Vec<Object>>)]
    pub authorization_details: Option<serde_json::Value>,
}

/// The claims UserInfo releases (OIDC Core §5.1, §5.3.2): `sub` always, the others as the
/// granted scopes allow and when the person has a value. Clients must ignore members they do
/// not know.
#[derive(Serialize, ToSchema)]
#[schema(example = json!({
    "sub": "usr_01JB7Q3M2X8V6N4K0T5R9C1D2E",
    "name": "Ada Lovelace",
    "given_name": "Ada",
    "family_name": "Lovelace",
    "updated_at": 1_730_000_000,
    "email": "ada@example.com",
    "email_verified": true
}))]
pub struct UserInfoClaims {
    /// The person's subject identifier as this client sees it (their id for first-party
    /// applications, a pairwise identifier otherwise); equal to the ID token's `sub`.
    pub sub: String,
    /// Full name (`profile`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub name: Option<String>,
    /// Given name (`profile`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub given_name: Option<String>,
    /// Family name (`profile`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub family_name: Option<String>,
    /// When the profile last changed, seconds since the epoch (`profile`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub updated_at: Option<i64>,
    /// Email address (`email`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub email: Option<String>,
    /// Whether the address was verified (`email`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub email_verified: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new `ErrorCode` stops this match compiling: add it to the arms and to
    /// `OAUTH_ERROR_CODES`, so the schema's enum keeps listing every code.
    #[test]
    fn the_error_schema_lists_every_code() {
        for code in OAUTH_ERROR_CODES {
            match code {
                ErrorCode::InvalidRequest
                | ErrorCode::InvalidClient
                | ErrorCode::InvalidGrant
                | ErrorCode::UnauthorizedClient
                | ErrorCode::UnsupportedGrantType
                | ErrorCode::InvalidScope
                | ErrorCode::UnsupportedResponseType
                | ErrorCode::InvalidTarget
                | ErrorCode::InvalidToken
                | ErrorCode::InsufficientScope
                | ErrorCode::ServerError
                | ErrorCode::TemporarilyUnavailable
                | ErrorCode::AuthorizationPending
                | ErrorCode::SlowDown
                | ErrorCode::AccessDenied
                | ErrorCode::ExpiredToken
                | ErrorCode::InvalidBindingMessage
                | ErrorCode::InvalidRequestObject
                | ErrorCode::InvalidDpopProof
                | ErrorCode::UseDpopNonce
                | ErrorCode::InvalidAuthorizationDetails => {}
            }
        }
        let mut names: Vec<_> = OAUTH_ERROR_CODES.iter().map(|c| c.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), OAUTH_ERROR_CODES.len());
    }
}
