//! The end-to-end test binary: the real service over real HTTP on loopback, against SQLite and
//! a fresh PostgreSQL database. One binary, one module per surface.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod advertised;
mod agent_challenge;
mod agent_exchange;
mod agents;
mod api_conventions;
mod api_key_subjects;
mod api_keys;
mod api_keys_own;
mod api_resources;
mod browser_cors;
mod ciba;
mod ciba_api;
mod cli;
mod client_documents;
mod cluster;
mod common;
mod coordination_memcached;
mod coordination_redis;
mod dcr;
mod delegations;
mod delegations_more;
mod device;
mod discovery;
mod dns;
mod domains;
mod dpop;
mod elixir_sdk;
mod enterprise_sso;
mod go_sdk;
mod health;
mod hosted;
mod instances;
mod interop;
mod interop_agents;
mod interop_mcp;
mod interop_social;
mod interop_sso;
mod invitations;
mod jar;
mod js_sdk;
mod kms;
mod machine_access;
mod mcp_tools;
mod oidc_provider;
mod openapi;
mod organizations;
mod par;
mod planes;
mod policies;
mod postgres_outage;
mod rar;
mod rar_polled;
mod readme;
mod revocation_set;
mod roles;
mod scim;
mod scim_bulk;
mod scim_enterprise;
mod scim_group_roles;
mod scim_groups;
mod scim_interop;
mod scim_reach;
mod sdk_client;
mod shared_caches;
mod social_providers;
mod social_sign_in;
mod social_support;
mod tenant_users;
mod tls;
mod token_exchange;
mod unavailable;
mod user_roles;
mod users_conventions;
mod webhooks;
mod webhooks_conventions;

/// Path of the binary under test.
pub(crate) fn binary() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_BIN_EXE_svc-runtime"))
}
