//! Signing keys of every tenant issuer: creation, custody, caching and rotation.
//!
//! - Custody: with svc-kms, each private key is sealed under a fresh data key that the KMS wraps
//!   (envelope encryption) and only the sealed form is stored; without a KMS (development), keys
//!   live in memory and die with the process.
//! - Rotation follows `svc_crypto::rotation`: the next key is published before it signs, the
//!   retired one stays published until every token it signed has expired, then disappears. The
//!   planner is pure; this module applies its steps under the store's per-tenant lock, so several
//!   instances rotating at once do it exactly once.
//! - Hot paths never touch the database or the KMS: the parsed keys and the rendered JWKS of a
//!   tenant are cached and refreshed after `refresh_after`.

mod custody;
mod error;
mod service;

pub use custody::KeyWrapper;
pub use error::KeyError;
pub use service::{
    Custody, KeyService, KeyServiceSettings, PublishedJwks, RotationListener, RotationReport,
};
