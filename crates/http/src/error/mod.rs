//! The one error seam (ARCHITECTURE.md rule 5): every error that leaves svc over HTTP is turned
//! into a status, headers and a body here, and nowhere else.
//!
//! Engines return typed errors in their own terms and never choose a status: `svc_oauth`'s
//! [`OAuthError`](svc_oauth::OAuthError) (an RFC 6749 `error` code) and
//! [`ErrorPageKind`](svc_oauth::error::ErrorPageKind), `svc_authn`'s `AuthnError`, `svc_manage`'s
//! `ManageError`, the key service's `KeyError` and `svc_sdk`'s `ValidationError`. Handlers pass
//! them (or a [`Problem`] built from a constructor) to this module, which owns the four wire forms:
//!
//! | wire form | endpoints | submodule |
//! |---|---|---|
//! | RFC 9457 `application/problem+json` | management and control-plane APIs, `/metrics`, fallbacks, middleware refusals, throttling | [`problem`] (`AuthnError` in `authn`) |
//! | RFC 6749 §5.2 JSON, `WWW-Authenticate: Basic` after a failed Basic attempt | `/oauth/token`, `/oauth/introspect`, `/oauth/revoke` | `oauth` |
//! | RFC 7591 §3.2.2 JSON | `/oauth/register`, `/oauth/register/{client_id}` (RFC 7592) | `registration` |
//! | RFC 6750 §3 `WWW-Authenticate: Bearer` challenges | `/userinfo`, `/api/v1/*`, `/metrics` | `bearer` |
//! | RFC 7644 §3.12 `application/scim+json` | `/scim/v2/*` | `scim` |
//! | the hosted HTML error page | `/oauth/authorize`, `/oauth/end-session`, `/auth/*` | `page` (`AuthnError` in `authn`) |
//!
//! Adding an error: give the engine's enum a variant whose doc line says what the client sees,
//! then add its arm to the (exhaustive) match here; the compiler lists every surface that must
//! decide. Internal causes are logged with the request id and never serialised.

pub(crate) mod authn;
pub(crate) mod bearer;
pub mod catalogue;
pub(crate) mod oauth;
pub(crate) mod page;
pub mod problem;
pub(crate) mod registration;
pub mod scim;

pub use catalogue::{PROBLEM_TYPES, ProblemType};
pub use problem::{PROBLEM_CONTENT_TYPE, Problem};

use std::time::Duration;

/// `Retry-After` in whole seconds: rounded up, at least 1, so a client never retries early or
/// in a busy loop (spec "Other constants and rules"). Shared by problems and hosted pages.
pub(crate) fn retry_after_secs(wait: Duration) -> u64 {
    wait.as_secs()
        .saturating_add(u64::from(wait.subsec_nanos() > 0))
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_rounds_up_and_is_never_zero() {
        assert_eq!(retry_after_secs(Duration::from_millis(1500)), 2);
        assert_eq!(retry_after_secs(Duration::from_secs(3)), 3);
        assert_eq!(retry_after_secs(Duration::ZERO), 1);
    }
}
