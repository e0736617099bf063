//! The API reference (spec "OpenAPI"): an OpenAPI 3.1 document generated from the handlers'
//! own annotations, served at `/openapi.json` with a vendored Swagger UI at `/` and a page per
//! problem type under `/problems/`, on the control plane when `[openapi].enabled` is true.
//!
//! Each route module builds its routes through `utoipa_axum`'s `OpenApiRouter`, so a route and
//! its operation come from one declaration; [`document`] merges every module's operations into
//! [`base`]: info, tags, security schemes, the shared `Problem` schema and the error responses
//! every management operation can meet (`ErrorResponses`). The document describes what this
//! deployment serves; a test compares it with the router in both directions.

mod pages;
pub(crate) mod refusals;
mod schema;

#[cfg(test)]
mod tests;

pub use pages::router;
pub use schema::{ProblemSchema, common_responses};

use utoipa::openapi::security::{
    ClientCredentials, Flow, Http, HttpAuthScheme, OAuth2, Scopes, SecurityScheme,
};
use utoipa::openapi::{OpenApi, Server};
use utoipa::{Modify, OpenApi as _};

/// Name of the security scheme of tenant management tokens (client credentials, scopes).
pub const TENANT_TOKEN: &str = "tenant_token";
/// Name of the security scheme of control-plane operator tokens.
pub const OPERATOR_TOKEN: &str = "operator_token";
/// Name of the security scheme of a person's access token (UserInfo).
pub const ACCESS_TOKEN: &str = "access_token";
/// Name of the security scheme of client authentication at the token endpoints.
pub const CLIENT_BASIC: &str = "client_secret_basic";
/// Name of the security scheme of RFC 7592 registration access tokens.
pub const REGISTRATION_TOKEN: &str = "registration_access_token";
/// Name of the security scheme of a person's token for the identity API (`ciba:approve`).
pub const PERSON_TOKEN: &str = "person_token";
/// Name of the security scheme of the hosted session cookie.
pub const SESSION_COOKIE: &str = "session";
/// Name of the security scheme of RFC 7591 §3 initial access tokens.
pub const INITIAL_ACCESS_TOKEN: &str = "initial_access_token";

/// Tag names, one per resource family.
pub mod tags {
    /// Applications (OAuth clients).
    pub const APPLICATIONS: &str = "Applications";
    /// API resources (the APIs a tenant protects) and their permissions.
    pub const API_RESOURCES: &str = "API resources";
    /// The audit log.
    pub const AUDIT: &str = "Audit log";
    /// Tenant users.
    pub const USERS: &str = "Users";
    /// Organizations and their members.
    pub const ORGANIZATIONS: &str = "Organizations";
    /// Roles and the permissions they hold.
    pub const ROLES: &str = "Roles";
    /// `/api/v1/policies`.
    pub const POLICIES: &str = "Policies";
    /// Social sign-in providers.
    pub const SOCIAL: &str = "Social sign-in";
    /// `/api/v1/agents`.
    pub const AGENTS: &str = "Agents";
    /// Webhook subscriptions.
    pub const WEBHOOKS: &str = "Webhooks";
    /// The operator's control plane.
    pub const CONTROL_PLANE: &str = "Control plane";
    /// OAuth 2.0 / OpenID Connect protocol endpoints.
    pub const PROTOCOL: &str = "OAuth 2.0 and OpenID Connect";
    /// Discovery and keys.
    pub const DISCOVERY: &str = "Discovery";
    /// Health and metrics.
    pub const OPERATIONS: &str = "Operations";
    /// What the signed-in person does for themselves.
    pub const IDENTITY: &str = "Identity";
}

#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "svc",
        description = "Multi-tenant identity and access service: tenant management APIs, the \
                       operator's control plane and the OAuth 2.0 / OpenID Connect endpoints.\n\n\
                       Management operations take an access token of the tenant's management \
                       application (client credentials at `/oauth/token`, on the tenant's host) \
                       with the scope each operation names. Errors are RFC 9457 problems \
                       (`application/problem+json`) whose `type` URI resolves to a page under \
                       `/problems/`; the protocol endpoints answer RFC 6749 §5.2 errors instead.\n\n\
                       What a tenant's authorization server supports is in its discovery document \
                       (`/.well-known/openid-configuration`), which is authoritative.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    tags(
        (name = tags::APPLICATIONS, description = "OAuth clients of the tenant."),
        (name = tags::API_RESOURCES, description = "The APIs the tenant protects (token audiences) and the permissions each defines."),
        (name = tags::USERS, description = "People who sign in to the tenant."),
        (name = tags::ORGANIZATIONS, description = "The tenant's customer organizations and their members' roles. \
            An organization's owners and admins, signed in to it through a first-party console, may call the \
            operations on that one organization (read, change, members, domains) and the invitations into it; \
            the tenant's other operations answer them `403 insufficient_scope`, another organization `404`."),
        (name = tags::ROLES, description = "Built-in and custom roles and the permissions of API resources they hold."),
        (name = tags::POLICIES, description = "Access-control policies: named, typed rules on sign-in and token issuance."),
        (name = tags::SOCIAL, description = "The upstream providers people of the tenant sign in through (\"Continue with Google\"), while `[social]` is on."),
        (name = tags::AGENTS, description = "Software that acts — for itself or for the people who delegate to it — with a key it registered."),
        (name = tags::WEBHOOKS, description = "Signed webhook subscriptions and their deliveries."),
        (name = tags::AUDIT, description = "Who changed what, newest first."),
        (name = tags::CONTROL_PLANE, description = "Tenants, for the deployment's operators."),
        (name = tags::PROTOCOL, description = "Token, introspection, revocation, UserInfo, authorization and logout."),
        (name = tags::DISCOVERY, description = "Authorization-server and resource metadata, signing keys."),
        (name = tags::OPERATIONS, description = "Health probes and metrics."),
        (name = tags::IDENTITY, description = "What the person of a browser session does for themselves: \
            their pending backchannel (CIBA) requests. Authenticated by the hosted session cookie."),
    ),
    components(schemas(ProblemSchema)),
    modifiers(&SecuritySchemes),
)]
struct Base;

/// Registers the security schemes the operations name.
struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let scopes = Scopes::from_iter(
            svc_domain::MANAGEMENT_API_SCOPES
                .iter()
                .map(|scope| (*scope, scope_description(scope))),
        );
        let mut tenant = OAuth2::new([Flow::ClientCredentials(ClientCredentials::new(
            "/oauth/token",
            scopes,
        ))]);
        tenant.description = Some(
            "An access token of the tenant's management application (client credentials), \
             requested on the tenant's host with the scopes the operation names. An API key of \
             the tenant holding those scopes (`Authorization: Bearer svck_…`, \
             `/api/v1/api-keys`) is accepted in its place."
                .to_owned(),
        );
        components.add_security_scheme(TENANT_TOKEN, SecurityScheme::OAuth2(tenant));
        let mut operator = Http::new(HttpAuthScheme::Bearer);
        operator.description =
            Some("A control-plane operator token (`svc-runtime operator-token`).".to_owned());
        components.add_security_scheme(OPERATOR_TOKEN, SecurityScheme::Http(operator));
        let mut access = Http::new(HttpAuthScheme::Bearer);
        access.bearer_format = Some("JWT".to_owned());
        access.description =
            Some("An access token issued to a person, with the `openid` scope.".to_owned());
        components.add_security_scheme(ACCESS_TOKEN, SecurityScheme::Http(access));
        let mut person = Http::new(HttpAuthScheme::Bearer);
        person.bearer_format = Some("JWT".to_owned());
        person.description = Some(
            "An access token issued to a person in a sign-in session (code flow) through a \
             first-party application whose `api_audience` is the tenant's API \
             (`{issuer}/api/v1`), holding the scope the operation names (`ciba:approve`). It \
             acts for the person only while that session is live. `Authorization: DPoP` with \
             a proof for a DPoP-bound token."
                .to_owned(),
        );
        components.add_security_scheme(PERSON_TOKEN, SecurityScheme::Http(person));
        let mut basic = Http::new(HttpAuthScheme::Basic);
        basic.description = Some(
            "Client authentication (RFC 6749 §2.3.1): client id and secret, each \
             form-urlencoded. `client_secret_post` (in the body) is accepted too."
                .to_owned(),
        );
        components.add_security_scheme(CLIENT_BASIC, SecurityScheme::Http(basic));
        let mut registration = Http::new(HttpAuthScheme::Bearer);
        registration.description = Some(
            "The registration access token (`rat_…`) returned once by `/oauth/register` \
             (RFC 7592 §1)."
                .to_owned(),
        );
        components.add_security_scheme(REGISTRATION_TOKEN, SecurityScheme::Http(registration));
        let mut initial = Http::new(HttpAuthScheme::Bearer);
        initial.description = Some(
            "An initial access token (`iatok_…`, RFC 7591 §3) of the tenant, created through \
             `/api/v1/registration-tokens`; needed while the tenant's registration policy is \
             `protected`."
                .to_owned(),
        );
        components.add_security_scheme(INITIAL_ACCESS_TOKEN, SecurityScheme::Http(initial));
        let session = utoipa::openapi::security::ApiKeyValue::with_description(
            "svc_session",
            "The hosted sign-in session cookie of the tenant's host (`__Host-svc_session` \
             over https), set by `/auth/sign-in`. State-changing calls also need an `Origin` \
             header equal to the tenant's origin.",
        );
        components.add_security_scheme(
            SESSION_COOKIE,
            SecurityScheme::ApiKey(utoipa::openapi::security::ApiKey::Cookie(session)),
        );
    }
}

fn scope_description(scope: &str) -> &'static str {
    match scope {
        "applications:read" => "Read applications and API resources.",
        "applications:write" => "Create, change and delete applications and API resources.",
        "users:read" => "Read users, their sessions and invitations.",
        "users:write" => "Create, change, suspend and remove users; invite people.",
        "organizations:read" => "Read organizations, their members and a person's memberships.",
        "organizations:write" => {
            "Create, change, suspend and delete organizations; add, re-role and remove members."
        }
        "policies:read" => "Read roles and the permissions they hold.",
        "policies:write" => "Create, change and delete roles and the permissions they hold.",
        "agents:read" => "Read the tenant's registered agents.",
        "agents:write" => "Register, change, suspend and revoke agents.",
        "webhooks:read" => "Read webhook subscriptions and deliveries.",
        "webhooks:write" => "Create, change, test and delete webhook subscriptions.",
        "audit:read" => "Read the audit log.",
        _ => "A management scope.",
    }
}

/// The document's fixed part: info, tags, security schemes and shared components.
#[must_use]
pub fn base() -> OpenApi {
    let mut doc = Base::openapi();
    doc.servers = Some(vec![Server::new("/")]);
    common_responses(&mut doc);
    doc
}

/// The whole document: [`base`] and the operations of every route module.
#[must_use]
pub fn document() -> OpenApi {
    let mut doc = base();
    for part in [
        crate::routes::applications::operations(),
        crate::routes::api_resources::operations(),
        crate::routes::policies::operations(),
        crate::routes::agents::operations(),
        crate::routes::delegations::operations(),
        crate::routes::control_plane::operations(),
        crate::routes::users::operations(),
        crate::routes::invitations::operations(),
        crate::routes::organizations::operations(),
        crate::routes::social_providers::operations(),
        crate::routes::roles::operations(),
        crate::routes::webhooks::operations(),
        crate::routes::token::operations(),
        crate::routes::par::operations(),
        crate::routes::device::operations(),
        crate::routes::agent_challenge::operations(),
        crate::routes::registration::operations(),
        crate::routes::registration_policy::operations(),
        crate::routes::scim_tokens::operations(),
        crate::routes::directory_groups::operations(),
        crate::routes::api_keys::operations(),
        crate::routes::backchannel::operations(),
        crate::routes::identity_ciba::operations(),
        crate::routes::well_known::operations(),
        crate::hosted::operations(),
        crate::health::operations(),
    ] {
        doc.merge(part);
    }
    schema::add_error_responses(&mut doc);
    doc
}

/// [`document`] without the operations of `paths`: the endpoints of protocol features this
/// deployment switched off, which its document must not advertise.
#[must_use]
pub fn document_without(paths: &[&str]) -> OpenApi {
    let mut doc = document();
    for path in paths {
        doc.paths.paths.shift_remove(*path);
    }
    doc
}

/// Test support for the route modules: `doc` holds exactly `expected` operations, each given as
/// (path, method, scope, whether it declares `If-Match`, tag), and every one is tagged, named,
/// described and secured with the tenant token and exactly that scope.
#[cfg(test)]
pub(crate) fn assert_operations(
    doc: &serde_json::Value,
    expected: &[(&str, &str, &str, bool, &str)],
) {
    let count: usize = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|item| item.as_object().unwrap().len())
        .sum();
    assert_eq!(count, expected.len(), "no operation more, none less");
    for &(path, method, scope, if_match, tag) in expected {
        let op = &doc["paths"][path][method];
        assert_eq!(op["tags"][0], tag, "{method} {path}");
        assert!(op["operationId"].is_string() && op["summary"].is_string());
        assert!(
            op["description"].as_str().unwrap().len() > 40,
            "{method} {path}"
        );
        assert_eq!(
            op["security"],
            serde_json::json!([{ TENANT_TOKEN: [scope] }]),
            "{method} {path}"
        );
        let declares = op["parameters"].as_array().is_some_and(|ps| {
            ps.iter()
                .any(|p| p["name"] == "If-Match" && p["in"] == "header")
        });
        assert_eq!(declares, if_match, "{method} {path}");
    }
}
