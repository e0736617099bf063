//! Rule 1: the token is read from `Authorization: Bearer <access_token>`.
//!
//! RFC 6750 §2.1: `credentials = "Bearer" 1*SP b64token`, where `b64token` is RFC 7235 §2.1's
//! token68: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`. The scheme is
//! case-insensitive (RFC 9110 §11.1). Exactly one credential is accepted: a second token, a list
//! of credentials, whitespace inside the token or an empty token is refused, never repaired.
//!
//! The header must reach here as one value. When a request carries several `Authorization`
//! fields, the HTTP layer must refuse it (RFC 6750 §2: one method, one token) rather than pick
//! one; `http::HeaderMap::get` silently returns the first.

use crate::error::ValidationError;

/// Longest accepted token, in bytes. svc access tokens are well under 2 KiB; the bound keeps
/// hostile headers from reaching base64 and JSON decoding.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// The authentication scheme the token came with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthScheme {
    /// `Authorization: Bearer` (RFC 6750 §2.1).
    Bearer,
    /// `Authorization: DPoP` (RFC 9449 §7.1): the token is sender-constrained and a `DPoP` proof
    /// header must accompany it.
    DPoP,
}

/// Rule 1: the access token from an `Authorization` header value, with the `Bearer` scheme only.
///
/// `None` (no header) and other schemes (`Basic …`, `DPoP …`) are
/// [`ValidationError::MissingToken`]: the request carries no bearer credentials, and RFC 6750
/// §3.1 answers that with a bare `Bearer` challenge. A `Bearer` header that is not exactly one
/// token68 is [`ValidationError::MalformedAuthorization`].
pub fn bearer_token(header: Option<&str>) -> Result<&str, ValidationError> {
    match authorization_token(header)? {
        (AuthScheme::Bearer, token) => Ok(token),
        (AuthScheme::DPoP, _) => Err(ValidationError::MissingToken),
    }
}

/// Rule 1, for resource servers that also accept DPoP-bound tokens: the token and its scheme,
/// `Bearer` (RFC 6750 §2.1) or `DPoP` (RFC 9449 §7.1). Same refusals as [`bearer_token`].
pub fn authorization_token(header: Option<&str>) -> Result<(AuthScheme, &str), ValidationError> {
    let header = header.ok_or(ValidationError::MissingToken)?;
    // RFC 9110 §5.5: a field value excludes leading and trailing whitespace (OWS).
    let value = header.trim_matches([' ', '\t']);
    if value.is_empty() {
        return Err(ValidationError::MalformedAuthorization);
    }
    // The separator stays in `rest`: only SP may separate scheme and token.
    let (scheme, rest) = value.split_at(value.find([' ', '\t']).unwrap_or(value.len()));
    let scheme = if scheme.eq_ignore_ascii_case("Bearer") {
        AuthScheme::Bearer
    } else if scheme.eq_ignore_ascii_case("DPoP") {
        AuthScheme::DPoP
    } else {
        // Another scheme, or no scheme at all: no credentials this contract understands.
        return Err(ValidationError::MissingToken);
    };
    // `1*SP` between scheme and token; nothing else may follow the token.
    let token = rest.trim_start_matches(' ');
    if token.len() > MAX_TOKEN_BYTES || !is_token68(token) {
        return Err(ValidationError::MalformedAuthorization);
    }
    Ok((scheme, token))
}

/// RFC 7235 §2.1 token68: at least one of `ALPHA DIGIT - . _ ~ + /`, then any number of `=`.
fn is_token68(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    !body.is_empty()
        && body.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const JWT: &str = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln";

    #[test]
    fn reads_a_bearer_token() {
        assert_eq!(bearer_token(Some(&format!("Bearer {JWT}"))), Ok(JWT));
    }

    #[test]
    fn the_scheme_is_case_insensitive() {
        for scheme in ["bearer", "BEARER", "bEaReR"] {
            assert_eq!(bearer_token(Some(&format!("{scheme} {JWT}"))), Ok(JWT));
        }
    }

    #[test]
    fn surrounding_whitespace_and_several_spaces_are_tolerated() {
        assert_eq!(bearer_token(Some(&format!("  Bearer   {JWT} \t"))), Ok(JWT));
    }

    #[test]
    fn token68_padding_is_allowed() {
        assert_eq!(bearer_token(Some("Bearer abc+/~==")), Ok("abc+/~=="));
    }

    #[test]
    fn no_header_or_another_scheme_means_no_token() {
        assert_eq!(bearer_token(None), Err(ValidationError::MissingToken));
        for header in [
            "Basic dXNlcjpwYXNz",
            "Digest x",
            "Bearerx abc",
            JWT,
            "DPoP abc",
        ] {
            assert_eq!(
                bearer_token(Some(header)),
                Err(ValidationError::MissingToken),
                "{header}"
            );
        }
    }

    #[test]
    fn malformed_bearer_credentials_are_refused() {
        for header in [
            "",
            "   ",
            "Bearer",
            "Bearer ",
            "Bearer    ",
            "Bearer a b",
            "Bearer a, Bearer b",
            "Bearer a,b",
            "Bearer\tabc",
            "Bearer ===",
            "Bearer ab=c",
            "Bearer abc\u{e9}",
            "Bearer \"abc\"",
        ] {
            assert_eq!(
                bearer_token(Some(header)),
                Err(ValidationError::MalformedAuthorization),
                "{header:?}"
            );
        }
    }

    #[test]
    fn oversized_tokens_are_refused() {
        let big = "a".repeat(10 * 1024);
        assert_eq!(
            bearer_token(Some(&format!("Bearer {big}"))),
            Err(ValidationError::MalformedAuthorization)
        );
        let limit = "a".repeat(MAX_TOKEN_BYTES);
        assert!(bearer_token(Some(&format!("Bearer {limit}"))).is_ok());
    }

    #[test]
    fn dpop_scheme_is_recognised_by_authorization_token() {
        assert_eq!(
            authorization_token(Some(&format!("DPoP {JWT}"))),
            Ok((AuthScheme::DPoP, JWT))
        );
        assert_eq!(
            authorization_token(Some(&format!("dpop {JWT}"))),
            Ok((AuthScheme::DPoP, JWT))
        );
        assert_eq!(
            authorization_token(Some("DPoP")),
            Err(ValidationError::MalformedAuthorization)
        );
    }
}
