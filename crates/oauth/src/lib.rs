//! The OAuth 2.0 / OpenID Connect engine of svc, free of HTTP types: discovery metadata and the
//! signing keys of each tenant issuer (loading, caching, rotation). Later issues add grants,
//! client authentication, token validation, revocation and introspection here, one file per
//! rule, each citing the RFC section it enforces.

pub mod discovery;
pub mod keys;
