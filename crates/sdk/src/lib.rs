//! The Rust backend SDK of svc: how a resource server decides whether an access token may act on
//! one of its resources.
//!
//! The spec's "Access-token validation contract for protected APIs" is implemented here as ten
//! small named checks in [`rules`], one per rule and in the spec's order, each stopping the
//! pipeline at its first failure, plus rule 6b ([`rules::organization`]) for routes scoped to one
//! organization ([`Requirements::with_organization`]), run right after the tenant and before
//! scopes:
//!
//! | rule | check | entry points that run it |
//! |---|---|---|
//! | 1 | [`bearer_token`] / [`authorization_token`] | [`Validator::validate`] |
//! | 2 | [`rules::signature::check_signature`] | [`validate_with_jwks`], [`Validator::validate`] |
//! | 3–10 (with 6b) | [`rules::issuer`] … [`rules::dpop`] | [`check_claims`], and both of the above |
//!
//! - [`check_claims`] runs rules 3–10 on claims whose signature the caller already verified (the
//!   svc server reuses the claim rules with its own key store this way).
//! - [`validate_with_jwks`] runs rules 2–10 against a JWKS the caller holds.
//! - [`Validator`] runs all ten, finding the issuer's JWKS through OpenID Connect Discovery and
//!   caching it.
//!
//! The client side — discovery, the authorization code flow with PKCE, ID token validation,
//! refresh, client credentials, UserInfo, logout and the management API — is in [`client`].
//!
//! Webhook receivers verify deliveries with [`verify_webhook`] or, with replay protection,
//! [`WebhookVerifier`] (the spec's seven receiver rules).
//!
//! Every failure is a [`ValidationError`], which knows its HTTP status, its `error` code and its
//! RFC 6750 §3 `WWW-Authenticate` challenge. No message ever contains the token.
//!
//! Time is a parameter (`now_unix`) everywhere except [`Validator::validate`], which reads the
//! system clock in exactly one place. This crate must not depend on any other svc crate:
//! resource servers use it without the server.

mod claims;
pub mod client;
pub mod dpop;
mod error;
mod introspection;
mod provider;
mod requirements;
pub mod rules;
mod validator;
mod webhook;

pub use claims::{AccessTokenClaims, Actor, Confirmation, SubjectType};
pub use error::{KeySourceError, ValidationError};
pub use introspection::DEFAULT_KEY_CACHE_TTL;
pub use requirements::{DEFAULT_LEEWAY_SECS, DEFAULT_MAX_DELEGATION_DEPTH, Requirements};
pub use rules::bearer::{AuthScheme, MAX_TOKEN_BYTES, authorization_token, bearer_token};
pub use rules::{check_claims, validate_with_jwks};
pub use validator::{DEFAULT_CACHE_TTL, DEFAULT_REFRESH_INTERVAL, Validator};
pub use webhook::{
    MAX_WEBHOOK_BODY_BYTES, VerifiedWebhook, WEBHOOK_CLOCK_SKEW, WEBHOOK_SIGNATURE_SUITE,
    WebhookError, WebhookHeaders, WebhookVerifier, verify_webhook, verify_webhook_at,
};

/// Re-exported so callers can build a [`jsonwebtoken::jwk::JwkSet`] for [`validate_with_jwks`]
/// and [`Validator::with_jwks`] with the exact version this crate uses.
pub use jsonwebtoken;
