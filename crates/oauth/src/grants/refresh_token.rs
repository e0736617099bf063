//! The refresh token grant (RFC 6749 §6) with rotation (RFC 9700 §4.14.2), the checks on a
//! freshly rotated token.
//!
//! The store marks the presented token rotated first (one atomic update); a token presented a
//! second time is reuse and its whole family is revoked by the caller. When a check below
//! fails, the caller rolls the rotation back, so a refused token is left as it was. Checks,
//! in order:
//! 1. The family belongs to the authenticated client (RFC 6749 §6: "the refresh token was issued
//!    to the authenticated client"). A mismatch is `invalid_grant` and the caller rolls the
//!    rotation back, so another client cannot burn a token it merely saw.
//! 2. The family is not revoked and its absolute lifetime has not passed; the token's idle
//!    lifetime has not passed (`[jwt]` refresh lifetimes).
//! 3. `scope`, when present, is a subset of the token's scopes (RFC 6749 §6: "MUST NOT include
//!    any scope not originally granted"); absent means the same scopes. Without
//!    `offline_access` among them, no successor is issued (the caller ends the family).

use crate::error::OAuthError;
use svc_domain::{ClientId, RefreshFamily, RefreshToken, ScopeError, ScopeSet};
use time::OffsetDateTime;

/// Check 1.
pub fn check_client(family: &RefreshFamily, client: &ClientId) -> Result<(), OAuthError> {
    if &family.client_id == client {
        Ok(())
    } else {
        Err(OAuthError::invalid_grant(
            "the refresh token was issued to another client",
        ))
    }
}

/// Check 2.
pub fn check_alive(
    token: &RefreshToken,
    family: &RefreshFamily,
    now: OffsetDateTime,
) -> Result<(), OAuthError> {
    if family.revoked_at.is_some() {
        return Err(OAuthError::invalid_grant("the refresh token was revoked"));
    }
    if now >= family.expires_at || now >= token.expires_at {
        return Err(OAuthError::invalid_grant("the refresh token has expired"));
    }
    Ok(())
}

/// Check 3: the scopes of the new tokens.
pub fn narrow_scope(granted: &ScopeSet, requested: Option<&str>) -> Result<ScopeSet, OAuthError> {
    let Some(requested) = requested else {
        return Ok(granted.clone());
    };
    let requested = ScopeSet::parse(requested).map_err(|e| {
        OAuthError::invalid_scope(match e {
            ScopeError::Malformed => "scope is malformed",
            ScopeError::TooLarge => "scope asks for too many or too long scopes",
        })
    })?;
    if let Some(extra) = requested.not_in(granted).next() {
        return Err(OAuthError::invalid_scope(format!(
            "scope `{}` was not granted originally; a refresh can only narrow scopes",
            extra.as_str()
        )));
    }
    Ok(requested)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn scopes_only_shrink() {
        let granted = ScopeSet::parse("openid profile offline_access").unwrap();
        assert_eq!(narrow_scope(&granted, None).unwrap(), granted);
        assert_eq!(
            narrow_scope(&granted, Some("openid")).unwrap().to_string(),
            "openid"
        );
        assert!(narrow_scope(&granted, Some("openid email")).is_err());
        assert!(narrow_scope(&granted, Some("bad\u{1}scope")).is_err());
    }
}
