//! Routers per surface. Each exposes `router(state) -> Router` with its state applied; the
//! runtime merges the ones its plane serves.

pub mod agent_challenge;
pub mod agents;
pub mod api_keys;
pub mod api_resources;
mod application_roles;
pub mod applications;
pub mod backchannel;
mod browser_cors;
pub mod control_plane;
pub mod delegations;
pub mod device;
pub mod directory_groups;
pub mod identity_ciba;
pub mod invitations;
pub mod organizations;
mod organizations_domains;
mod organizations_groups;
mod organizations_members;
pub mod organizations_sso;
pub mod par;
pub mod policies;
mod protocol;
pub mod registration;
pub mod registration_policy;
pub mod roles;
pub mod scim;
mod scim_groups;
pub mod scim_tokens;
pub mod social_providers;
pub mod token;
pub mod users;
mod users_factors;
mod users_history;
mod users_roles;
pub mod webhooks;
pub mod well_known;
