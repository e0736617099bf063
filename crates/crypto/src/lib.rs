//! Cryptography for svc: JWS signing of our JWTs (ES256, EdDSA, RS256), public JWKs and the
//! JWKS document with RFC 7638 thumbprints as `kid`s, envelope encryption of private signing
//! keys at rest, TOTP and the sealing and hashing of second factors, the pure key-rotation policy, the webhook signature suite, and Argon2id for
//! human passwords.
//!
//! Everything here is synchronous and does no IO: no clock (the rotation planner takes `now`),
//! no store, no KMS client, no HTTP. Keys are parsed once and signing never re-parses DER.
//! Algorithms and key states are the domain's ([`SigningAlg`], [`KeyState`]), re-exported here.
//!
//! This crate must not depend on tokio, axum, sqlx or any svc crate other than svc-domain.

mod api_key;
pub mod digest;
mod envelope;
mod error;
mod factor;
pub mod foreign_jws;
mod jwk;
mod jws;
mod key;
mod password;
pub mod rotation;
mod sealing;
mod sso;
mod webhook;

pub use api_key::ApiKeyHasher;
pub use envelope::{SealedKey, open_private_key, seal_private_key, sealed_key_aad};
pub use error::CryptoError;
pub use factor::{FactorKey, TOTP_SECRET_BYTES, TOTP_STEP_SECS, TotpSecret};
pub use jwk::{Jwks, PublicJwk};
pub use jws::{VerifiedJws, verify_jwt_signature};
pub use key::SigningKey;
pub use password::{Argon2id, SALT_LEN, verify_password};
pub use sso::{AttemptValues, SsoSecretKey};
// The rotation planner is also reachable as `svc_crypto::rotation::*`.
pub use rotation::{
    KeyMeta, RotationPolicy, RotationStep, apply_plan, plan_forced_rotation, plan_rotation,
};
pub use svc_domain::{KeyState, SigningAlg};
pub use webhook::{SIGNATURE_SUITE, webhook_signature, webhook_signature_header};
