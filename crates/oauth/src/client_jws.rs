//! JWTs signed by a client with a key whose public half it registered (`jwks` or `jwks_uri`):
//! client assertions (RFC 7523, [`crate::client_auth`]) and request objects (RFC 9101,
//! [`crate::authorize`]). This module owns what both share: reading the header before any key
//! is touched, choosing the key, and verifying the signature. What the claims must say is each
//! caller's own rule.
//!
//! The rules themselves (shape, algorithms, key choice, signature) are
//! [`svc_crypto::foreign_jws`]'s; this module adds where an application's keys come from: its
//! inline `jwks`, or its `jwks_uri` through the [`JwksFetcher`] (SSRF-guarded by the runtime).

use crate::client_auth::JwksFetcher;
use jsonwebtoken::jwk::Jwk;
use serde_json::Value;
pub(crate) use svc_crypto::foreign_jws::{SUPPORTED_ALGS, Unverified, audience_is, numeric_date};
use svc_domain::Application;

/// Why a well-formed token's signature could not be accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeyError {
    /// The application registered a `jwks_uri` and the deployment fetches none.
    JwksUriUnsupported,
    /// The `jwks_uri` could not be fetched (the reason is for the logs).
    JwksUriUnreachable(String),
    /// No usable key, or the signature does not verify (the reason is for the logs only: it
    /// must not tell an attacker which of the two it was).
    Refused(String),
}

/// Finds `app`'s key for `unverified` and verifies the signature of `token`; returns the
/// (authentic) claims. No claim is checked here: the caller's clock and rules do that.
pub(crate) async fn verify(
    app: &Application,
    fetcher: Option<&dyn JwksFetcher>,
    token: &str,
    unverified: &Unverified,
) -> Result<Value, KeyError> {
    let keys = client_keys(app, fetcher).await?;
    verify_with(&keys, token, unverified)
}

/// [`svc_crypto::foreign_jws::verify_with`], its refusal as a [`KeyError`].
pub(crate) fn verify_with(
    keys: &[Jwk],
    token: &str,
    unverified: &Unverified,
) -> Result<Value, KeyError> {
    svc_crypto::foreign_jws::verify_with(keys, token, unverified).map_err(KeyError::Refused)
}

/// [`svc_crypto::foreign_jws::parse_jwks`], its refusal as a [`KeyError`].
pub(crate) fn parse_jwks(text: &str) -> Result<Vec<Jwk>, KeyError> {
    svc_crypto::foreign_jws::parse_jwks(text).map_err(KeyError::Refused)
}

/// The application's public keys: inline `jwks`, else `jwks_uri` through the fetcher.
async fn client_keys(
    app: &Application,
    fetcher: Option<&dyn JwksFetcher>,
) -> Result<Vec<Jwk>, KeyError> {
    let text = match (&app.jwks, &app.jwks_uri) {
        (Some(inline), _) => inline.clone(),
        (None, Some(uri)) => {
            let fetcher = fetcher.ok_or(KeyError::JwksUriUnsupported)?;
            fetcher
                .fetch(uri)
                .await
                .map_err(KeyError::JwksUriUnreachable)?
        }
        (None, None) => {
            return Err(KeyError::Refused(
                "the client registered neither jwks nor jwks_uri".into(),
            ));
        }
    };
    parse_jwks(&text)
}
