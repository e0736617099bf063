//! The OAuth 2.0 / OpenID Connect engine of svc, free of HTTP types: discovery metadata, the
//! signing keys of each tenant issuer (loading, caching, rotation), the authorization, token,
//! introspection, revocation, UserInfo and end-session endpoints, client authentication and
//! the grants, one file per rule, each citing the RFC section it enforces.
//!
//! Every endpoint engine is built from one shared [`ProtocolContext`] (store, keys, clock,
//! randomness, `jwks_uri` fetcher, application cache) plus its own settings, so wiring a new
//! endpoint is one line in the composition root.

pub mod access_token;
mod administrators;
pub mod agent_challenge;
pub mod authorize;
pub mod backchannel;
pub mod backchannel_logout;
pub mod browser_origins;
pub mod claims;
pub mod client_auth;
pub mod client_documents;
mod client_jws;
pub mod context;
pub mod delegations;
mod details;
pub mod device;
pub mod discovery;
pub mod dpop;
pub mod end_session;
pub mod error;
pub mod grants;
pub mod id_token;
pub mod introspect;
pub mod keys;
mod policies;
mod resources;
pub mod revoke;
pub mod software_statement;
pub mod subject;
pub mod token;
pub mod userinfo;

pub use context::ProtocolContext;
pub use error::{ErrorCode, OAuthError};
pub use token::{TokenEndpoint, TokenResponse, TokenSettings};
