//! `/.well-known/*` of a tenant issuer: OpenID discovery, RFC 8414 metadata, RFC 9728
//! protected-resource metadata and the JWKS. Thin handlers: resolve the tenant, ask the engine,
//! shape the response. Browsers' single-page apps fetch these cross-origin, so they carry
//! `Access-Control-Allow-Origin: *` (public, credential-free documents).
//!
//! Routes and their OpenAPI operations come from one declaration (`utoipa_axum`); the metadata
//! documents are described as open objects (the schema types at the end of this file) whose
//! members follow `svc_oauth::discovery`.

use crate::Problem;
use crate::openapi::refusals::{self, Refusals};
use crate::openapi::tags;
use crate::tenancy::{CurrentTenant, TenantResolver};
use axum::Router;
use axum::extract::{FromRef, State};
use axum::response::{IntoResponse, Response};
use http::header::{ACCESS_CONTROL_ALLOW_ORIGIN, CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use http::{HeaderMap, HeaderValue, StatusCode};
use serde::Serialize;
use std::sync::Arc;
use svc_oauth::discovery::{self, DiscoverySettings};
use svc_oauth::keys::KeyService;
use utoipa::ToSchema;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa_axum::{router::OpenApiRouter, routes};

/// JWKS freshness for relying parties. Much shorter than the rotation publish lead, so every
/// cache has seen a next key long before it signs (RFC 7517 §5 leaves caching to deployments).
const JWKS_MAX_AGE_SECS: u32 = 900;
/// Discovery changes only with configuration.
const DISCOVERY_MAX_AGE_SECS: u32 = 3600;

/// State of the well-known routes.
#[derive(Clone)]
pub struct WellKnownState {
    /// Host → tenant.
    pub tenants: TenantResolver,
    /// Signing keys.
    pub keys: Arc<KeyService>,
    /// What the metadata advertises.
    pub discovery: Arc<DiscoverySettings>,
    /// Where each tenant's registration policy is read, while the deployment serves
    /// `/oauth/register`; `None` otherwise (then no document advertises it).
    pub registration: Option<svc_manage::ManageContext>,
    /// Where each tenant's RAR detail types are read, while the deployment takes
    /// `authorization_details`; `None` otherwise.
    pub detail_types: Option<svc_manage::ManageContext>,
    /// Where each tenant's acceptance of client ID metadata documents is read, while the
    /// deployment accepts them; `None` otherwise.
    pub metadata_documents: Option<svc_manage::ManageContext>,
}

impl WellKnownState {
    /// What the metadata of `current`'s issuer advertises: the deployment's settings, with
    /// `registration_endpoint` only while the tenant's registration policy takes registrations
    /// (RFC 8414 §2: advertise what works), `client_id_metadata_document_supported` only while
    /// it accepts metadata documents, and the detail types of its applications. A policy
    /// that cannot be read advertises nothing.
    async fn settings_for(
        &self,
        current: &CurrentTenant,
    ) -> std::borrow::Cow<'_, DiscoverySettings> {
        let policies = self
            .registration
            .as_ref()
            .or(self.metadata_documents.as_ref());
        if policies.is_none() && self.detail_types.is_none() {
            return std::borrow::Cow::Borrowed(&self.discovery);
        }
        let mut settings = (*self.discovery).clone();
        if let Some(manage) = policies {
            let view = svc_manage::registration::get_policy(manage, &current.tenant.id)
                .await
                .ok();
            settings.features.registration = self.registration.is_some()
                && view
                    .as_ref()
                    .is_some_and(|v| v.policy.accepts_registrations());
            settings.features.client_id_metadata_documents = self.metadata_documents.is_some()
                && view.is_some_and(|v| v.client_id_metadata_documents);
        }
        // RFC 9396 §10.1: the types this tenant's applications registered; unreadable, none.
        if let Some(manage) = &self.detail_types {
            settings.features.authorization_details_types =
                svc_manage::applications::detail_types(manage, &current.tenant.id)
                    .await
                    .unwrap_or_default();
        }
        std::borrow::Cow::Owned(settings)
    }
}

impl FromRef<WellKnownState> for TenantResolver {
    fn from_ref(state: &WellKnownState) -> Self {
        state.tenants.clone()
    }
}

fn api() -> OpenApiRouter<WellKnownState> {
    OpenApiRouter::new()
        .routes(routes!(openid_configuration))
        .routes(routes!(authorization_server))
        .routes(routes!(protected_resource))
        // RFC 9728 §3.1: the well-known path with the resource's path appended.
        .routes(routes!(protected_resource_api))
        .routes(routes!(jwks))
}

/// The `/.well-known/*` routes.
pub fn router(state: WellKnownState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// The OpenAPI operations of these routes, with the refusals of tenant resolution and the
/// middleware.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    let mut doc = api().into_openapi();
    refusals::add(&mut doc, |_| Refusals::TENANT);
    doc
}

fn public_json(body: String, max_age: u32) -> Response {
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    if let Ok(value) = HeaderValue::from_str(&format!("public, max-age={max_age}")) {
        headers.insert(CACHE_CONTROL, value);
    }
    response
}

#[utoipa::path(
    get, path = "/.well-known/openid-configuration", tag = tags::DISCOVERY,
    operation_id = "getOpenIdConfiguration",
    summary = "OpenID Provider metadata",
    description = "OpenID Connect Discovery 1.0 §4 metadata of the host's tenant issuer: the \
        RFC 8414 members plus the OpenID ones. It is the authoritative description of what this \
        issuer supports (grant types, authentication methods, scopes, claims, algorithms, \
        endpoints); `issuer` equals the issuer the document was fetched from (§4.3) and every \
        endpoint is an absolute URL under it. Optional features appear only when enabled. \
        Public and cacheable; readable cross-origin.",
    responses(
        (status = 200, description = "The metadata (Discovery §4.2).", body = OpenIdConfiguration,
         headers(
             ("Cache-Control" = String, description = "`public, max-age=3600`."),
             ("Access-Control-Allow-Origin" = String, description = "`*`."),
         )),
    ),
)]
async fn openid_configuration(
    State(state): State<WellKnownState>,
    current: CurrentTenant,
) -> Response {
    let settings = state.settings_for(&current).await;
    public_json(
        discovery::openid_configuration(&current.issuer, &settings).to_string(),
        DISCOVERY_MAX_AGE_SECS,
    )
}

#[utoipa::path(
    get, path = "/.well-known/oauth-authorization-server", tag = tags::DISCOVERY,
    operation_id = "getAuthorizationServerMetadata",
    summary = "OAuth 2.0 authorization server metadata",
    description = "RFC 8414 §3 metadata of the host's tenant issuer: the OAuth members of \
        `/.well-known/openid-configuration` without the OpenID ones. Authoritative for the \
        token, introspection and revocation endpoints and what they accept. Public and \
        cacheable; readable cross-origin.",
    responses(
        (status = 200, description = "The metadata (RFC 8414 §3.2).",
         body = AuthorizationServerMetadata,
         headers(
             ("Cache-Control" = String, description = "`public, max-age=3600`."),
             ("Access-Control-Allow-Origin" = String, description = "`*`."),
         )),
    ),
)]
async fn authorization_server(
    State(state): State<WellKnownState>,
    current: CurrentTenant,
) -> Response {
    let settings = state.settings_for(&current).await;
    public_json(
        discovery::authorization_server_metadata(&current.issuer, &settings).to_string(),
        DISCOVERY_MAX_AGE_SECS,
    )
}

#[utoipa::path(
    get, path = "/.well-known/oauth-protected-resource", tag = tags::DISCOVERY,
    operation_id = "getProtectedResourceMetadata",
    summary = "Protected resource metadata (management API)",
    description = "RFC 9728 §3 metadata of the tenant's management API (`{issuer}/api/v1`): \
        its authorization server, signing keys, scopes and how to present a token. The same \
        document is served at `/.well-known/oauth-protected-resource/api/v1` (§3.1). Public \
        and cacheable; readable cross-origin.",
    responses(
        (status = 200, description = "The metadata (RFC 9728 §3.2).",
         body = ProtectedResourceMetadata,
         headers(
             ("Cache-Control" = String, description = "`public, max-age=3600`."),
             ("Access-Control-Allow-Origin" = String, description = "`*`."),
         )),
    ),
)]
async fn protected_resource(
    State(state): State<WellKnownState>,
    current: CurrentTenant,
) -> Response {
    public_json(
        discovery::protected_resource_metadata(&current.issuer, &state.discovery).to_string(),
        DISCOVERY_MAX_AGE_SECS,
    )
}

#[utoipa::path(
    get, path = "/.well-known/oauth-protected-resource/api/v1", tag = tags::DISCOVERY,
    operation_id = "getManagementApiResourceMetadata",
    summary = "Protected resource metadata (RFC 9728 §3.1 path form)",
    description = "The document of `/.well-known/oauth-protected-resource` at the well-known \
        path with the resource's path (`/api/v1`) appended, as RFC 9728 §3.1 has clients \
        derive it from the resource identifier.",
    responses(
        (status = 200, description = "The metadata (RFC 9728 §3.2).",
         body = ProtectedResourceMetadata,
         headers(
             ("Cache-Control" = String, description = "`public, max-age=3600`."),
             ("Access-Control-Allow-Origin" = String, description = "`*`."),
         )),
    ),
)]
async fn protected_resource_api(state: State<WellKnownState>, current: CurrentTenant) -> Response {
    protected_resource(state, current).await
}

#[utoipa::path(
    get, path = "/.well-known/jwks.json", tag = tags::DISCOVERY,
    operation_id = "getJwks",
    summary = "Signing keys (JWKS)",
    description = "The tenant's published public signing keys (RFC 7517 §5), the `jwks_uri` of \
        the discovery documents: the key that signs now, the next one (published ahead of \
        rotation) and retired ones until tokens they signed have expired. Verify tokens with \
        the key whose `kid` the token's header names. Conditional requests with \
        `If-None-Match` (RFC 9110 §13.1.2) get 304 while the set is unchanged. Public and \
        cacheable; readable cross-origin.",
    params(
        ("If-None-Match" = Option<String>, Header, nullable = false,
         description = "An `ETag` of an earlier answer (or `*`)."),
    ),
    responses(
        (status = 200, description = "The key set.", body = JwkSet,
         headers(
             ("ETag" = String, description = "The set's entity tag."),
             ("Cache-Control" = String, description = "`public, max-age=900`."),
             ("Access-Control-Allow-Origin" = String, description = "`*`."),
         )),
        (status = 304, description = "Unchanged since the `ETag` sent in `If-None-Match`.",
         headers(
             ("ETag" = String, description = "The set's entity tag."),
             ("Cache-Control" = String, description = "`public, max-age=900`."),
             ("Access-Control-Allow-Origin" = String, description = "`*`."),
         )),
        (status = 500, description = "The keys could not be read.",
         body = crate::openapi::ProblemSchema, content_type = "application/problem+json"),
        (status = 503, description = "The key store is unavailable; retry later.",
         body = crate::openapi::ProblemSchema, content_type = "application/problem+json"),
    ),
)]
async fn jwks(
    State(state): State<WellKnownState>,
    current: CurrentTenant,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let published = state.keys.published_jwks(&current.tenant).await?;
    let etag = format!("\"{}\"", published.etag);
    // RFC 9110 §13.1.2: a matching If-None-Match gets 304 without the body.
    let unchanged = headers
        .get(IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|tag| tag.trim() == etag || tag.trim() == "*")
        });
    let mut response = if unchanged {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        public_json(published.json.clone(), JWKS_MAX_AGE_SECS)
    };
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(ETAG, value);
    }
    if unchanged {
        headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        if let Ok(value) = HeaderValue::from_str(&format!("public, max-age={JWKS_MAX_AGE_SECS}")) {
            headers.insert(CACHE_CONTROL, value);
        }
    }
    Ok(response)
}

// ---------------------------------------------------------------------------------------------
// Wire shapes, as schemas: open objects (clients must ignore members they do not know) whose
// documented members follow `svc_oauth::discovery` and the key service.

/// RFC 8414 §2 authorization-server metadata, as this issuer publishes it.
#[derive(Serialize, ToSchema)]
#[schema(example = json!({
    "issuer": "https://acme.id.example.com",
    "authorization_endpoint": "https://acme.id.example.com/oauth/authorize",
    "token_endpoint": "https://acme.id.example.com/oauth/token",
    "jwks_uri": "https://acme.id.example.com/.well-known/jwks.json",
    "scopes_supported": ["openid", "profile", "email", "offline_access", "roles"],
    "response_types_supported": ["code"],
    "response_modes_supported": ["query"],
    "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
    "token_endpoint_auth_methods_supported":
        ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"],
    "token_endpoint_auth_signing_alg_values_supported": ["ES256", "EdDSA", "RS256", "PS256"],
    "code_challenge_methods_supported": ["S256"],
    "authorization_response_iss_parameter_supported": true,
    "revocation_endpoint": "https://acme.id.example.com/oauth/revoke",
    "revocation_endpoint_auth_methods_supported":
        ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"],
    "introspection_endpoint": "https://acme.id.example.com/oauth/introspect",
    "introspection_endpoint_auth_methods_supported":
        ["client_secret_basic", "client_secret_post", "private_key_jwt"],
    "request_object_signing_alg_values_supported": ["ES256", "EdDSA", "RS256", "PS256"],
    "require_signed_request_object": false
}))]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier: the URL this document was fetched under, without the
    /// well-known suffix.
    pub issuer: String,
    /// `/oauth/authorize` under the issuer.
    pub authorization_endpoint: String,
    /// `/oauth/token` under the issuer.
    pub token_endpoint: String,
    /// `/.well-known/jwks.json` under the issuer.
    pub jwks_uri: String,
    /// Protocol scopes (`openid`, `profile`, `email`, `offline_access`); API scopes of the form
    /// `<resource>:<action>` are per application.
    pub scopes_supported: Vec<String>,
    /// `code` only.
    pub response_types_supported: Vec<String>,
    /// `query` only.
    pub response_modes_supported: Vec<String>,
    /// The grants the token endpoint serves.
    pub grant_types_supported: Vec<String>,
    /// Client authentication methods at the token endpoint.
    pub token_endpoint_auth_methods_supported: Vec<String>,
    /// Algorithms accepted for `private_key_jwt` assertions.
    pub token_endpoint_auth_signing_alg_values_supported: Vec<String>,
    /// PKCE methods: `S256` only.
    pub code_challenge_methods_supported: Vec<String>,
    /// Authorization responses carry `iss` (RFC 9207).
    pub authorization_response_iss_parameter_supported: bool,
    /// `/oauth/revoke` under the issuer, when revocation is enabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub revocation_endpoint: Option<String>,
    /// Client authentication methods at the revocation endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub revocation_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Algorithms accepted for `private_key_jwt` at the revocation endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub revocation_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    /// `/oauth/introspect` under the issuer, when introspection is enabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub introspection_endpoint: Option<String>,
    /// Client authentication methods at the introspection endpoint (no `none`: confidential
    /// clients only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub introspection_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Algorithms accepted for `private_key_jwt` at the introspection endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub introspection_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    /// Algorithms a request object (RFC 9101) may be signed with, while request objects are
    /// accepted (`[oidc].request_objects`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub request_object_signing_alg_values_supported: Option<Vec<String>>,
    /// Whether every authorization request must be a signed request object (RFC 9101 §10.5).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub require_signed_request_object: Option<bool>,
    /// `/oauth/register` under the issuer (RFC 7591), while the deployment enables dynamic
    /// registration and the tenant's registration policy is not `disabled`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub registration_endpoint: Option<String>,
    /// `true` while the deployment accepts client ID metadata documents and the tenant turned
    /// them on (draft-ietf-oauth-client-id-metadata-document §6); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub client_id_metadata_document_supported: Option<bool>,
}

/// OpenID Connect Discovery 1.0 §3 provider metadata: the RFC 8414 members and these.
#[derive(Serialize, ToSchema)]
#[schema(example = json!({
    "issuer": "https://acme.id.example.com",
    "authorization_endpoint": "https://acme.id.example.com/oauth/authorize",
    "token_endpoint": "https://acme.id.example.com/oauth/token",
    "jwks_uri": "https://acme.id.example.com/.well-known/jwks.json",
    "scopes_supported": ["openid", "profile", "email", "offline_access", "roles"],
    "response_types_supported": ["code"],
    "response_modes_supported": ["query"],
    "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
    "token_endpoint_auth_methods_supported":
        ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"],
    "token_endpoint_auth_signing_alg_values_supported": ["ES256", "EdDSA", "RS256", "PS256"],
    "code_challenge_methods_supported": ["S256"],
    "authorization_response_iss_parameter_supported": true,
    "userinfo_endpoint": "https://acme.id.example.com/userinfo",
    "subject_types_supported": ["public", "pairwise"],
    "id_token_signing_alg_values_supported": ["RS256", "ES256", "EdDSA"],
    "claims_supported": ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "acr", "amr",
        "sid", "name", "given_name", "family_name", "email", "email_verified", "updated_at"],
    "claims_parameter_supported": true,
    "acr_values_supported": ["urn:svc:acr:password"],
    "prompt_values_supported": ["none", "login", "consent", "select_account"],
    "request_parameter_supported": true,
    "request_uri_parameter_supported": false,
    "end_session_endpoint": "https://acme.id.example.com/oauth/end-session"
}))]
pub struct OpenIdConfiguration {
    /// The OAuth members.
    #[serde(flatten)]
    pub oauth: AuthorizationServerMetadata,
    /// `/userinfo` under the issuer.
    pub userinfo_endpoint: String,
    /// `public` (first-party applications) and `pairwise`.
    pub subject_types_supported: Vec<String>,
    /// ID token signature algorithms; `RS256` first.
    pub id_token_signing_alg_values_supported: Vec<String>,
    /// Claims an ID token or UserInfo answer can carry.
    pub claims_supported: Vec<String>,
    /// The `claims` request parameter (OIDC Core §5.5) is honoured.
    pub claims_parameter_supported: bool,
    /// Authentication context classes.
    pub acr_values_supported: Vec<String>,
    /// `prompt` values the authorization endpoint acts on.
    pub prompt_values_supported: Vec<String>,
    /// Whether signed request objects (`request`, RFC 9101) are accepted.
    pub request_parameter_supported: bool,
    /// `false`: request objects are never fetched by URL (OIDC Core §6.2); PAR's `request_uri`
    /// is advertised by `pushed_authorization_request_endpoint`.
    pub request_uri_parameter_supported: bool,
    /// `/oauth/end-session` under the issuer, when RP-initiated logout is enabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub end_session_endpoint: Option<String>,
}

/// RFC 9728 §2 protected-resource metadata of the tenant's management API.
#[derive(Serialize, ToSchema)]
#[schema(example = json!({
    "resource": "https://acme.id.example.com/api/v1",
    "authorization_servers": ["https://acme.id.example.com"],
    "jwks_uri": "https://acme.id.example.com/.well-known/jwks.json",
    "scopes_supported": ["applications:read", "applications:write", "users:read",
        "users:write", "organizations:read", "organizations:write", "policies:read",
        "policies:write", "audit:read",
        "webhooks:read", "webhooks:write"],
    "bearer_methods_supported": ["header"],
    "resource_signing_alg_values_supported": ["ES256", "EdDSA"],
    "resource_name": "svc tenant management API"
}))]
pub struct ProtectedResourceMetadata {
    /// The resource identifier, `{issuer}/api/v1`: the `aud` of management tokens.
    pub resource: String,
    /// The issuer that grants tokens for it.
    pub authorization_servers: Vec<String>,
    /// The issuer's signing keys.
    pub jwks_uri: String,
    /// The management API's scopes.
    pub scopes_supported: Vec<String>,
    /// `header` only (RFC 6750 §2.1).
    pub bearer_methods_supported: Vec<String>,
    /// Access-token signature algorithms, the configured one first.
    pub resource_signing_alg_values_supported: Vec<String>,
    /// Human-readable name.
    pub resource_name: String,
}

fn key_type() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some("Key type (RFC 7518 §6.1, RFC 8037)."))
        .enum_values(Some(["EC", "OKP", "RSA"]))
}

/// A public signing key (RFC 7517 §4); the members present follow its type: `crv`, `x`, `y`
/// for EC P-256, `crv`, `x` for Ed25519, `n`, `e` for RSA.
#[derive(Serialize, ToSchema)]
pub struct Jwk {
    /// Key type.
    #[schema(schema_with = key_type)]
    pub kty: String,
    /// Key id, named by the `kid` header of what it signed.
    pub kid: String,
    /// `sig`.
    #[serde(rename = "use")]
    pub use_: String,
    /// Algorithm (`ES256`, `EdDSA`, `RS256`).
    pub alg: String,
    /// Curve (`P-256`, `Ed25519`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub crv: Option<String>,
    /// Public point x (base64url).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub x: Option<String>,
    /// Public point y (base64url, EC).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub y: Option<String>,
    /// RSA modulus (base64url).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub n: Option<String>,
    /// RSA exponent (base64url).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub e: Option<String>,
}

/// A JWK Set (RFC 7517 §5).
#[derive(Serialize, ToSchema)]
#[schema(example = json!({"keys": [{
    "kty": "EC", "kid": "k_01JB7Q3M2X8V6N4K0T5R9C1D2E", "use": "sig", "alg": "ES256",
    "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
    "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
}]}))]
pub struct JwkSet {
    /// The keys.
    pub keys: Vec<Jwk>,
}
