//! The authorization code grant (RFC 6749 §4.1.3), the checks on a freshly redeemed code.
//!
//! The code is marked redeemed by the store before these run (so a failed check still burns it:
//! a guessed verifier gets one try). Checks, in order:
//! 0. The code is redeemed by the grant it was made for: a code sent to a redirect URI by
//!    `authorization_code`, a code a person approved on a device by the device grant's poll
//!    (RFC 8628 §3.4), a code a person approved for a backchannel request by the CIBA grant's
//!    poll ([`CodeBinding`]). Anything else is an invalid code.
//! 1. The code was issued to the authenticated client (RFC 6749 §4.1.3 "ensure that the
//!    authorization code was issued to the authenticated confidential client", or the public
//!    client named by `client_id`).
//! 2. It has not expired (`[oidc].authorization_code_lifetime_secs`; a device's code lives as
//!    long as its device code).
//! 3. `redirect_uri` is present and identical to the one of the authorization request
//!    (RFC 6749 §4.1.3; OIDC Core requires it in the request, so it is required here too).
//! 4. PKCE (RFC 7636 §4.6): with a stored challenge, `code_verifier` is required, 43–128
//!    characters of the unreserved set, and BASE64URL(SHA256(verifier)) equals the challenge,
//!    compared in constant time. Without a stored challenge a `code_verifier` is refused
//!    (RFC 9700 §2.1.1: a verifier without a challenge signals a downgrade attack).
//!
//! Checks 3 and 4 are the redirect's: a polled grant's code went nowhere and had no challenge.

use crate::error::OAuthError;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use subtle::ConstantTimeEq;
use svc_crypto::digest::sha256;
use svc_domain::{AuthorizationCode, ClientId, CodeBinding};
use time::OffsetDateTime;

/// What the token request presented alongside the code.
#[derive(Debug, Clone, Copy)]
pub struct Presented<'a> {
    /// The authenticated client.
    pub client: &'a ClientId,
    /// The grant presenting it.
    pub via: Via<'a>,
}

/// The grant that presents a code, with what it must bring.
#[derive(Debug, Clone, Copy)]
pub enum Via<'a> {
    /// `grant_type=authorization_code`.
    Redirect {
        /// `redirect_uri`.
        redirect_uri: Option<&'a str>,
        /// `code_verifier`.
        code_verifier: Option<&'a str>,
    },
    /// The device grant's poll, after a person approved (the code is the device code).
    Device,
    /// The CIBA grant's poll, after the person approved (the code is the `auth_req_id`).
    Backchannel,
}

/// Runs checks 0–4.
pub fn check_code(
    code: &AuthorizationCode,
    presented: &Presented<'_>,
    now: OffsetDateTime,
) -> Result<(), OAuthError> {
    // 0.
    let redirect = match (&code.binding, presented.via) {
        (CodeBinding::Redirect(uri), Via::Redirect { .. }) => Some(uri),
        (CodeBinding::Device, Via::Device) | (CodeBinding::Backchannel, Via::Backchannel) => None,
        _ => return Err(OAuthError::invalid_grant("the code is invalid")),
    };
    // 1.
    if &code.client_id != presented.client {
        return Err(OAuthError::invalid_grant(
            "the code was issued to another client",
        ));
    }
    // 2.
    if now >= code.expires_at {
        return Err(OAuthError::invalid_grant("the code has expired"));
    }
    let (
        Some(registered),
        Via::Redirect {
            redirect_uri,
            code_verifier,
        },
    ) = (redirect, presented.via)
    else {
        return Ok(());
    };
    // 3.
    match redirect_uri {
        None => {
            return Err(OAuthError::invalid_request(
                "redirect_uri is required and must equal the authorization request's",
            ));
        }
        Some(uri) if uri != registered.as_str() => {
            return Err(OAuthError::invalid_grant(
                "redirect_uri differs from the authorization request's",
            ));
        }
        Some(_) => {}
    }
    // 4.
    check_pkce(code.code_challenge.as_deref(), code_verifier)
}

/// Check 4 alone.
pub fn check_pkce(challenge: Option<&str>, verifier: Option<&str>) -> Result<(), OAuthError> {
    match (challenge, verifier) {
        (None, None) => Ok(()),
        (None, Some(_)) => Err(OAuthError::invalid_grant(
            "code_verifier sent but the authorization request had no code_challenge",
        )),
        (Some(_), None) => Err(OAuthError::invalid_grant(
            "code_verifier is required (PKCE, RFC 7636 §4.5)",
        )),
        (Some(challenge), Some(verifier)) => {
            let well_formed = (43..=128).contains(&verifier.len())
                && verifier
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
            if !well_formed {
                return Err(OAuthError::invalid_grant(
                    "code_verifier must be 43 to 128 unreserved characters (RFC 7636 §4.1)",
                ));
            }
            let computed = URL_SAFE_NO_PAD.encode(sha256(verifier.as_bytes()));
            if bool::from(computed.as_bytes().ct_eq(challenge.as_bytes())) {
                Ok(())
            } else {
                Err(OAuthError::invalid_grant(
                    "code_verifier does not match the code_challenge",
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 7636 Appendix B.
    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    #[test]
    fn the_rfc_7636_example_verifies() {
        assert!(check_pkce(Some(CHALLENGE), Some(VERIFIER)).is_ok());
    }

    #[test]
    fn wrong_missing_short_or_unsolicited_verifiers_fail() {
        let wrong = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXK";
        assert!(check_pkce(Some(CHALLENGE), Some(wrong)).is_err());
        assert!(check_pkce(Some(CHALLENGE), None).is_err());
        assert!(check_pkce(Some(CHALLENGE), Some("short")).is_err());
        assert!(check_pkce(Some(CHALLENGE), Some(&"a".repeat(129))).is_err());
        assert!(check_pkce(Some(CHALLENGE), Some(&format!("{VERIFIER}+"))).is_err());
        assert!(check_pkce(None, Some(VERIFIER)).is_err());
        assert!(check_pkce(None, None).is_ok());
    }
}
