//! The control plane's routes (ARCHITECTURE.md "Planes"): the operator's control-plane API and
//! each tenant's management API (applications and their registration policy, API resources,
//! users and their SCIM tokens, organizations, roles, webhooks, API keys and social providers
//! when enabled), SCIM
//! provisioning when enabled,
//! all over one
//! [`svc_http::api::ApiState`],
//! and the API reference when `[openapi].enabled`.

use super::services::Services;
use axum::Router;
use std::sync::Arc;
use svc_http::routes::identity_ciba::{self, IdentityState};
use svc_http::routes::scim::{self, ScimState};
use svc_http::routes::{applications, control_plane, social_providers, users, webhooks};
use svc_oauth::authorize::AuthorizeEndpoint;

/// The control plane's routes over the management API state, SCIM (`/scim/v2`) when
/// `[scim].enabled` (unrouted otherwise, so the path is the router's plain 404), and the
/// signed-in person's backchannel requests while `[ciba].enabled`.
pub(super) fn routes(config: &svc_config::Config, services: &Services) -> Router {
    let api = &services.api;
    let mut router = Router::new();
    if config.ciba.enabled {
        router = router.merge(identity_ciba::router(IdentityState {
            api: api.clone(),
            authorize: Arc::new(AuthorizeEndpoint::new(
                super::auth_plane::protocol_context(config, services),
                super::auth_plane::authorize_settings(config),
            )),
        }));
    }
    if config.api_keys.enabled {
        router = router.merge(svc_http::routes::api_keys::router(api.clone()));
    }
    if config.social.enabled {
        router = router.merge(social_providers::router(api.clone()));
    }
    if config.scim.enabled {
        // The tokens a directory provisions with and the roles its groups grant exist only
        // with the provisioning endpoint itself.
        router = router
            .merge(svc_http::routes::scim_tokens::router(api.clone()))
            .merge(svc_http::routes::directory_groups::router(api.clone()));
        router = router.merge(scim::router(ScimState {
            tenants: api.tenants.clone(),
            manage: api.manage.clone(),
            settings: svc_manage::scim::ScimSettings {
                max_results: config.scim.max_results,
                max_body_bytes: usize::try_from(config.scim.max_body_bytes).unwrap_or(usize::MAX),
            },
        }));
    }
    router
        .merge(control_plane::router(api.clone()))
        .merge(applications::router(api.clone()))
        .merge(svc_http::routes::api_resources::router(api.clone()))
        .merge(svc_http::routes::policies::router(api.clone()))
        .merge(svc_http::routes::agents::router(api.clone()))
        .merge(svc_http::routes::delegations::router(api.clone()))
        .merge(svc_http::routes::registration_policy::router(api.clone()))
        .merge(users::router(api.clone()))
        .merge(svc_http::routes::organizations::router(
            api.clone(),
            config.scim.enabled,
        ))
        .merge(svc_http::routes::invitations::router(api.clone()))
        .merge(svc_http::routes::roles::router(api.clone()))
        .merge(webhooks::router(api.clone()))
}

/// The API reference: `/openapi.json`, the UI at `/` and the problem-type pages, without the
/// operations of the protocol endpoints `config` switches off (they are not served).
pub(super) fn reference(config: &svc_config::Config) -> Router {
    let off = [
        (
            config.oidc.pushed_authorization_requests
                == svc_config::PushedAuthorizationRequests::Disabled,
            "/oauth/par",
        ),
        (!config.device_authorization.enabled, "/oauth/device/code"),
        (!config.challenge.enabled, "/oauth/agent/challenge"),
        (!config.ciba.enabled, "/bc-authorize"),
        (!config.ciba.enabled, "/api/v1/identity/ciba/requests"),
        (
            !config.ciba.enabled,
            "/api/v1/identity/ciba/requests/{id}/approve",
        ),
        (
            !config.ciba.enabled,
            "/api/v1/identity/ciba/requests/{id}/deny",
        ),
        (
            !config.enterprise_sso.enabled,
            svc_http::routes::organizations_sso::PATH,
        ),
        (!config.social.enabled, social_providers::PATHS[0]),
        (!config.social.enabled, social_providers::PATHS[1]),
        (!config.social.enabled, social_providers::PATHS[2]),
        (!config.social.enabled, social_providers::PATHS[3]),
        (!config.api_keys.enabled, "/api/v1/api-keys"),
        (!config.api_keys.enabled, "/api/v1/api-keys/{id}"),
        (!config.api_keys.enabled, "/api/v1/api-keys/{id}/rotate"),
        (!config.api_keys.enabled, "/api/v1/api-key-policy"),
        (!config.scim.enabled, "/api/v1/scim/tokens"),
        (!config.scim.enabled, "/api/v1/scim/tokens/{id}"),
        (
            !config.scim.enabled,
            svc_http::routes::directory_groups::PATHS[0],
        ),
        (
            !config.scim.enabled,
            svc_http::routes::directory_groups::PATHS[1],
        ),
        (
            !config.scim.enabled,
            svc_http::routes::directory_groups::PATHS[2],
        ),
        (
            !config.scim.enabled,
            svc_http::routes::directory_groups::PATHS[3],
        ),
        (
            !config.scim.enabled,
            svc_http::routes::directory_groups::PATHS[4],
        ),
        (
            !config.scim.enabled,
            svc_http::routes::directory_groups::PATHS[5],
        ),
        (!config.dynamic_registration.enabled, "/oauth/register"),
        (
            !config.dynamic_registration.enabled,
            "/oauth/register/{client_id}",
        ),
    ];
    let unserved: Vec<&str> = off.iter().filter(|(o, _)| *o).map(|(_, p)| *p).collect();
    svc_http::openapi::router(&svc_http::openapi::document_without(&unserved))
}
