//! The auth plane's routes (ARCHITECTURE.md "Planes"): discovery and JWKS under
//! `/.well-known/*`, the hosted pages with the authorization and end-session endpoints, and the
//! token, introspection, revocation and UserInfo endpoints, the pushed authorization request
//! endpoint unless `[oidc].pushed_authorization_requests` disables it, the device
//! authorization endpoint and verification page while `[device_authorization].enabled`, the
//! backchannel authentication endpoint and approval page while `[ciba].enabled`, the agent
//! challenge endpoint while `[challenge].enabled`, and dynamic
//! client registration while `[dynamic_registration].enabled`. Every protocol engine is built from
//! one [`ProtocolContext`], so a new endpoint is one more line here; `[jwt]` and `[oidc]`
//! become the engines' settings in this file alone.

use super::ciba_mail::CibaMail;
use super::services::Services;
use crate::client_documents::DocumentClients;
use crate::jwks_fetch::GuardedJwksFetcher;
use axum::Router;
use std::sync::Arc;
use std::time::Duration;
use svc_config::Config;
use svc_http::hosted::{self, HostedState};
use svc_http::routes::agent_challenge::{self as challenge_route, ChallengeState};
use svc_http::routes::backchannel::{self as backchannel_route, BackchannelState};
use svc_http::routes::device::{self as device_route, DeviceState};
use svc_http::routes::par::{self, ParState};
use svc_http::routes::registration::{self as registration_route, RegistrationState};
use svc_http::routes::token::{self, TokenState};
use svc_http::routes::well_known::{self, WellKnownState};
use svc_http::throttle::{Throttle, ThrottleSettings};
use svc_oauth::agent_challenge::{ChallengeEndpoint, ChallengeSettings};
use svc_oauth::authorize::{
    AuthorizeEndpoint, AuthorizeSettings, PushEndpoint, PushedRequests, RequestObjects,
};
use svc_oauth::backchannel::{BackchannelEndpoint, BackchannelSettings};
use svc_oauth::delegations::Delegations;
use svc_oauth::device::{DeviceEndpoint, DeviceSettings};
use svc_oauth::discovery::{DiscoverySettings, OptionalFeatures};
use svc_oauth::end_session::EndSession;
use svc_oauth::introspect::Introspector;
use svc_oauth::revoke::Revoker;
use svc_oauth::token::TokenEndpoint;
use svc_oauth::userinfo::UserInfo;
use svc_oauth::{ProtocolContext, TokenSettings};

/// The auth plane's routes over the shared `services`.
pub(super) fn routes(config: &Config, services: &Services) -> Router {
    let ctx = protocol_context(config, services);
    let throttle = &config.server.endpoint_throttle;
    // One throttle for every client-authenticated endpoint, so a client's budget is the same
    // whether it spends it on tokens or on pushed requests.
    let throttle = Throttle::new(ThrottleSettings {
        enabled: throttle.enabled,
        requests_per_second: throttle.requests_per_second,
        burst: throttle.burst,
    });
    // With Redis or Memcached every instance draws from the same buckets
    // (`crate::coordination`).
    let throttle = Arc::new(match &services.coordination {
        Some(shared) => throttle.shared(shared.counter(), shared.outage()),
        None => throttle,
    });
    let settings = authorize_settings(config);
    let device = device_settings(config);
    let ciba = backchannel_settings(config);
    let mut router = Router::new()
        .merge(well_known::router(WellKnownState {
            tenants: services.tenants.clone(),
            keys: services.keys.clone(),
            discovery: Arc::new(discovery_settings(config)),
            registration: config
                .dynamic_registration
                .enabled
                .then(|| services.api.manage.clone()),
            detail_types: config
                .oidc
                .authorization_details
                .then(|| services.api.manage.clone()),
            metadata_documents: config
                .dynamic_registration
                .client_id_metadata_documents
                .then(|| services.api.manage.clone()),
        }))
        .merge(hosted::router(HostedState {
            tenants: services.tenants.clone(),
            authn: services.authn.clone(),
            authorize: Arc::new(AuthorizeEndpoint::new(ctx.clone(), settings.clone())),
            end_session: Arc::new(
                EndSession::new(ctx.clone()).with_frontchannel(config.logout.frontchannel),
            ),
            rng: services.rng.clone(),
            device: device.enabled.then(|| Arc::new(device.clone())),
            ciba: ciba.enabled,
            delegations: config.challenge.enabled.then(|| {
                Arc::new(Delegations::new(ctx.clone()).with_per_use_approval(ciba.enabled))
            }),
            own_keys: services
                .api
                .api_keys
                .clone()
                .filter(|_| config.api_keys.subject_keys)
                .map(|keys| svc_http::hosted::OwnKeys {
                    manage: services.api.manage.clone(),
                    keys,
                }),
        }));
    // OpenID CIBA: likewise.
    if ciba.enabled {
        let notifier = Arc::new(CibaMail {
            authn: services.authn.clone(),
        });
        router = router.merge(backchannel_route::router(BackchannelState {
            tenants: services.tenants.clone(),
            endpoint: Arc::new(BackchannelEndpoint::new(
                ctx.clone(),
                ciba.clone(),
                notifier,
            )),
            throttle: throttle.clone(),
        }));
    }
    // RFC 8628: unrouted when disabled, like the verification page.
    if device.enabled {
        router = router.merge(device_route::router(DeviceState {
            tenants: services.tenants.clone(),
            endpoint: Arc::new(DeviceEndpoint::new(ctx.clone(), device.clone())),
            throttle: throttle.clone(),
        }));
    }
    // Agent challenge-response: unrouted when disabled, like the others.
    if config.challenge.enabled {
        router = router.merge(challenge_route::router(ChallengeState {
            tenants: services.tenants.clone(),
            endpoint: Arc::new(ChallengeEndpoint::new(
                ctx.clone(),
                ChallengeSettings {
                    enabled: true,
                    lifetime: Duration::from_secs(u64::from(
                        config.challenge.challenge_lifetime_secs,
                    )),
                },
            )),
            throttle: throttle.clone(),
        }));
    }
    // RFC 7591 / RFC 7592: unrouted when disabled, like the others; the use cases are the
    // management API's (one rule set), so they take its context.
    if config.dynamic_registration.enabled {
        router = router.merge(registration_route::router(RegistrationState {
            tenants: services.tenants.clone(),
            manage: services.api.manage.clone(),
            settings: svc_manage::registration::RegistrationSettings {
                max_registrations_per_hour: config.dynamic_registration.max_registrations_per_hour,
            },
        }));
    }
    // RFC 9126: unrouted when disabled, so the path is the router's plain 404.
    if settings.pushed.is_enabled() {
        router = router.merge(par::router(ParState {
            tenants: services.tenants.clone(),
            endpoint: Arc::new(PushEndpoint::new(ctx.clone(), settings)),
            throttle: throttle.clone(),
        }));
    }
    router.merge(token::router(TokenState {
        tenants: services.tenants.clone(),
        endpoint: Arc::new(TokenEndpoint::new(ctx.clone(), token_settings(config))),
        introspector: Arc::new(match &services.api.api_keys {
            Some(keys) => Introspector::new(ctx.clone()).with_api_keys(keys.hasher().clone()),
            None => Introspector::new(ctx.clone()),
        }),
        revoker: Arc::new(Revoker::new(ctx.clone())),
        userinfo: Arc::new(UserInfo::new(ctx)),
        throttle,
        browser_origins: services.origins.clone(),
    }))
}

/// What every protocol engine shares: the process's store, keys, clock and randomness, the
/// application cache that management changes invalidate, and the SSRF-guarded `jwks_uri`
/// fetcher (public addresses and `https` only in production), and, when the deployment accepts
/// client ID metadata documents, their resolver (the same guard).
pub(super) fn protocol_context(config: &Config, services: &Services) -> ProtocolContext {
    let fetcher = GuardedJwksFetcher::new(config.is_production());
    let ctx = ProtocolContext::new(
        services.store.clone(),
        services.keys.clone(),
        services.clock.clone(),
        services.rng.clone(),
    )
    .with_jwks_fetcher(Arc::new(fetcher))
    .with_client_cache(services.clients.clone())
    .with_dpop(services.dpop.clone())
    .with_authorization_details(config.oidc.authorization_details);
    if !config.dynamic_registration.client_id_metadata_documents {
        return ctx;
    }
    ctx.with_client_documents(Arc::new(DocumentClients::new(
        services.store.clone(),
        services.clock.clone(),
        services.api.manage.clone(),
        config.is_production(),
        config.dynamic_registration.max_document_fetches_per_hour,
        &services.outbound_roots,
    )))
}

/// The discovery document's algorithm and optional endpoints.
fn discovery_settings(config: &Config) -> DiscoverySettings {
    DiscoverySettings {
        access_token_alg: crate::keys::access_token_alg(config),
        features: OptionalFeatures {
            introspection: true,
            revocation: true,
            end_session: true,
            par: pushed_requests(config).is_enabled(),
            par_required: pushed_requests(config) == PushedRequests::Required,
            request_objects: request_objects(config).is_enabled(),
            request_objects_required: request_objects(config) == RequestObjects::Required,
            device_authorization: config.device_authorization.enabled,
            ciba: config.ciba.enabled,
            dpop: config.dpop.enabled,
            token_exchange: config.delegation.enabled,
            agent_challenge: config.challenge.enabled,
            second_factors: config.two_factor.enabled || config.passkey.enabled,
            backchannel_logout: config.logout.backchannel,
            frontchannel_logout: config.logout.frontchannel,
            authorization_details: config.oidc.authorization_details,
            ..OptionalFeatures::default()
        },
    }
}

/// `[jwt]` lifetimes in the token endpoint's terms.
fn token_settings(config: &Config) -> TokenSettings {
    let secs = |s: u32| Duration::from_secs(u64::from(s));
    let jwt = &config.jwt;
    TokenSettings {
        access_token_lifetime_human: secs(jwt.access_token_lifetime_human_secs),
        access_token_lifetime_agent: secs(jwt.access_token_lifetime_agent_secs),
        refresh_token_lifetime_human: secs(jwt.refresh_token_lifetime_human_secs),
        refresh_token_idle: secs(jwt.refresh_token_idle_secs),
        id_token_lifetime: secs(jwt.id_token_lifetime_secs),
        device_grant: config.device_authorization.enabled,
        ciba_grant: config.ciba.enabled,
        token_exchange: config.delegation.enabled,
        max_chain_depth: usize::from(config.delegation.max_chain_depth),
        agent_assertions: config.challenge.enabled,
    }
}

/// `[ciba]` in the backchannel endpoint's terms.
fn backchannel_settings(config: &Config) -> BackchannelSettings {
    let ciba = &config.ciba;
    let secs = |s: u32| Duration::from_secs(u64::from(s));
    BackchannelSettings {
        enabled: ciba.enabled,
        expiry: secs(ciba.request_expiry_secs),
        max_expiry: secs(ciba.max_requested_expiry_secs),
        interval_secs: ciba.interval_secs,
        agent_requests: config.challenge.enabled,
        ..BackchannelSettings::default()
    }
}

/// `[device_authorization]` in the device grant's terms.
fn device_settings(config: &Config) -> DeviceSettings {
    let device = &config.device_authorization;
    DeviceSettings {
        enabled: device.enabled,
        lifetime: Duration::from_secs(u64::from(device.code_lifetime_secs)),
        interval_secs: device.interval_secs,
        user_code_attempts: device.max_user_code_attempts,
        ..DeviceSettings::default()
    }
}

/// `[oidc]` in the authorization endpoint's terms; the interaction lifetime keeps the engine's
/// default.
pub(super) fn authorize_settings(config: &Config) -> AuthorizeSettings {
    AuthorizeSettings {
        code_lifetime: Duration::from_secs(u64::from(config.oidc.authorization_code_lifetime_secs)),
        step_up: config.two_factor.enabled || config.passkey.enabled,
        enrol: config.two_factor.enabled,
        second_factor_required: config.two_factor.enabled
            && config.two_factor.policy == svc_config::TwoFactorPolicy::Required,
        recovery: config.two_factor.enabled && config.recovery.enabled,
        pushed: pushed_requests(config),
        request_objects: request_objects(config),
        remember_session_clients: crate::logout::remembers_session_clients(config),
        ..AuthorizeSettings::default()
    }
}

/// `[oidc].request_objects` in the engine's terms.
fn request_objects(config: &Config) -> RequestObjects {
    match config.oidc.request_objects {
        svc_config::RequestObjectPolicy::Enabled => RequestObjects::Enabled,
        svc_config::RequestObjectPolicy::Required => RequestObjects::Required,
        svc_config::RequestObjectPolicy::Disabled => RequestObjects::Disabled,
    }
}

/// `[oidc].pushed_authorization_requests` in the engine's terms.
fn pushed_requests(config: &Config) -> PushedRequests {
    match config.oidc.pushed_authorization_requests {
        svc_config::PushedAuthorizationRequests::Enabled => PushedRequests::Enabled,
        svc_config::PushedAuthorizationRequests::Required => PushedRequests::Required,
        svc_config::PushedAuthorizationRequests::Disabled => PushedRequests::Disabled,
    }
}
