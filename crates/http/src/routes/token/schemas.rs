//! The token, introspection, revocation and UserInfo endpoints' wire shapes, as OpenAPI schemas.
//! The handlers pass raw form pairs to the engines, which parse them; these types exist to
//! describe the forms and answers, and must follow what the engines do (a new error code stops
//! the test below compiling until the schema lists it).

use serde::{Deserialize, Serialize};
use svc_oauth::ErrorCode;
use utoipa::ToSchema;
use utoipa::openapi::schema::{ObjectBuilder, Type};

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
