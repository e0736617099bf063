//! The OAuth 2.0 / OpenID Connect engine of svc, free of HTTP types: discovery metadata, the
//! signing keys of each tenant issuer (loading, caching, rotation), and the token endpoint:
//! request parsing, client authentication, grants and access-token issuance. Later issues add
//! the authorization code and refresh grants, token validation, revocation and introspection
//! here, one file per rule, each citing the RFC section it enforces.

pub mod access_token;
pub mod authorize;
pub mod claims;
pub mod client_auth;
pub mod discovery;
pub mod end_session;
pub mod error;
pub mod grants;
pub mod id_token;
pub mod introspect;
pub mod keys;
pub mod revoke;
pub mod subject;
pub mod token;
pub mod userinfo;

pub use error::{ErrorCode, OAuthError};
pub use token::{TokenEndpoint, TokenResponse, TokenSettings};
