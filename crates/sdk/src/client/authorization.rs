//! The front-channel half of the authorization code flow: the request a browser is sent with,
//! and the checks on the callback it comes back with, before any code is redeemed.
//!
//! - Every request carries PKCE with S256 (RFC 7636 §4.1–4.2; RFC 9700 §2.1.1 makes it the
//!   default defence against code injection), a `state` bound to the browser (RFC 6749 §10.12)
//!   and, for OpenID Connect, a `nonce` (OpenID Connect Core 1.0 §3.1.2.1). Each is 256 bits
//!   from the operating system's generator.
//! - A callback passes only when its `state` is the pending request's (compared in constant time)
//!   and its `iss` is the issuer the request went to (RFC 9207 §2.4: svc always sends `iss`, so a
//!   callback without one is refused as a mix-up, like one naming another issuer). Only then is
//!   an `error` reported or the `code` taken.

use super::error::ClientError;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::Url;

/// What the application keeps (server-side, bound to the browser's session) between sending
/// the browser to svc and handling its callback. Use it once.
#[derive(Clone, PartialEq, Eq)]
pub struct PendingAuthorization {
    /// The `state` sent.
    pub state: String,
    /// The `nonce` sent (OpenID Connect requests only).
    pub nonce: Option<String>,
    /// The PKCE `code_verifier` whose challenge was sent.
    pub code_verifier: String,
    /// The `redirect_uri` sent, which the code redemption repeats (RFC 6749 §4.1.3).
    pub redirect_uri: String,
}

impl std::fmt::Debug for PendingAuthorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The verifier is a secret until the code is redeemed.
        f.debug_struct("PendingAuthorization")
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

/// 256 random bits, base64url without padding (43 characters).
pub(crate) fn random_token() -> Result<String, ClientError> {
    let mut bytes = [0u8; 32];
    aws_lc_rs::rand::fill(&mut bytes).map_err(|_| ClientError::Random)?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// RFC 7636 §4.2: `BASE64URL(SHA256(ASCII(code_verifier)))`.
pub fn pkce_challenge(verifier: &str) -> String {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, verifier.as_bytes());
    URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// The authorization request URL for `scope` with `extra` parameters, and what to keep.
pub(crate) fn request(
    endpoint: &str,
    client_id: &str,
    redirect_uri: &str,
    scope: &str,
    extra: &[(&str, &str)],
) -> Result<(String, PendingAuthorization), ClientError> {
    let mut url = Url::parse(endpoint)
        .map_err(|_| ClientError::InvalidResponse("authorization_endpoint is not a URL"))?;
    let openid = scope.split(' ').any(|s| s == "openid");
    let pending = PendingAuthorization {
        state: random_token()?,
        nonce: if openid { Some(random_token()?) } else { None },
        code_verifier: random_token()?,
        redirect_uri: redirect_uri.to_owned(),
    };
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", client_id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("scope", scope)
            .append_pair("state", &pending.state)
            .append_pair("code_challenge", &pkce_challenge(&pending.code_verifier))
            .append_pair("code_challenge_method", "S256");
        if let Some(nonce) = &pending.nonce {
            query.append_pair("nonce", nonce);
        }
        for (name, value) in extra {
            // The protocol parameters above are this module's to set.
            if !RESERVED.contains(name) {
                query.append_pair(name, value);
            }
        }
    }
    Ok((url.into(), pending))
}

/// Parameters [`request`] sets itself and `extra` cannot override.
const RESERVED: [&str; 8] = [
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "code_challenge",
    "code_challenge_method",
    "nonce",
];

/// The callback's checks (see the module documentation): the authorization code.
pub(crate) fn code_from_callback(
    callback: &str,
    pending: &PendingAuthorization,
    issuer: &str,
) -> Result<String, ClientError> {
    // A full URL or its query alone.
    let query = match callback.split_once('?') {
        Some((_, query)) => query,
        None => callback,
    };
    let query = query.split('#').next().unwrap_or_default();
    let mut state = None;
    let mut iss = None;
    let mut code = None;
    let mut error = None;
    let mut description = None;
    for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
        let slot = match name.as_ref() {
            "state" => &mut state,
            "iss" => &mut iss,
            "code" => &mut code,
            "error" => &mut error,
            "error_description" => &mut description,
            _ => continue,
        };
        // RFC 6749 §3.1: a parameter sent twice is not a parameter to trust.
        if slot.replace(value.into_owned()).is_some() {
            return Err(ClientError::InvalidResponse(
                "a callback parameter appears twice",
            ));
        }
    }
    let state = state.unwrap_or_default();
    if aws_lc_rs::constant_time::verify_slices_are_equal(state.as_bytes(), pending.state.as_bytes())
        .is_err()
    {
        return Err(ClientError::StateMismatch);
    }
    if iss.as_deref() != Some(issuer) {
        return Err(ClientError::IssuerMismatch);
    }
    if let Some(error) = error {
        return Err(ClientError::Authorization { error, description });
    }
    code.filter(|c| !c.is_empty())
        .ok_or(ClientError::MissingCode)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISSUER: &str = "https://acme.id.example";

    #[test]
    fn the_pkce_challenge_is_rfc_7636s_example() {
        // RFC 7636 Appendix B.
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn requests_carry_pkce_state_and_nonce_that_extras_cannot_replace() {
        let (url, pending) = request(
            &format!("{ISSUER}/oauth/authorize"),
            "app_1",
            "https://app.example/cb",
            "openid profile",
            &[
                ("organization", "acme"),
                ("state", "mine"),
                ("code_challenge_method", "plain"),
            ],
        )
        .unwrap();
        let url = Url::parse(&url).unwrap();
        let params: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        let get = |n: &str| {
            let all: Vec<&String> = params
                .iter()
                .filter(|(k, _)| k == n)
                .map(|(_, v)| v)
                .collect();
            assert_eq!(all.len(), 1, "{n} once");
            all[0].clone()
        };
        assert_eq!(get("state"), pending.state);
        assert_eq!(get("nonce"), *pending.nonce.as_ref().unwrap());
        assert_eq!(
            get("code_challenge"),
            pkce_challenge(&pending.code_verifier)
        );
        assert_eq!(get("code_challenge_method"), "S256");
        assert_eq!(get("organization"), "acme");
        assert_eq!(pending.state.len(), 43);
        assert_ne!(pending.state, pending.code_verifier);
        // Without openid, no nonce.
        let (_, plain) = request(
            &format!("{ISSUER}/oauth/authorize"),
            "app_1",
            "https://a/cb",
            "read",
            &[],
        )
        .unwrap();
        assert_eq!(plain.nonce, None);
        assert!(!format!("{plain:?}").contains(&plain.code_verifier));
    }

    #[test]
    fn callbacks_are_checked_before_their_code_is_taken() {
        let pending = PendingAuthorization {
            state: "s-1".into(),
            nonce: None,
            code_verifier: "v".into(),
            redirect_uri: "https://app.example/cb".into(),
        };
        let iss = "https%3A%2F%2Facme.id.example";
        let ok = format!("https://app.example/cb?code=c-1&state=s-1&iss={iss}");
        assert_eq!(code_from_callback(&ok, &pending, ISSUER).unwrap(), "c-1");
        assert_eq!(
            code_from_callback(&format!("code=c-1&state=s-1&iss={iss}"), &pending, ISSUER).unwrap(),
            "c-1",
            "the query alone"
        );
        for (callback, expected) in [
            (
                format!("code=c-1&state=s-2&iss={iss}"),
                ClientError::StateMismatch,
            ),
            (format!("code=c-1&iss={iss}"), ClientError::StateMismatch),
            ("code=c-1&state=s-1".to_owned(), ClientError::IssuerMismatch),
            (
                "code=c-1&state=s-1&iss=https%3A%2F%2Fevil.example".to_owned(),
                ClientError::IssuerMismatch,
            ),
            (format!("state=s-1&iss={iss}"), ClientError::MissingCode),
            (
                format!("code=c-1&code=c-2&state=s-1&iss={iss}"),
                ClientError::InvalidResponse("a callback parameter appears twice"),
            ),
            (
                format!("error=access_denied&error_description=no&state=s-1&iss={iss}"),
                ClientError::Authorization {
                    error: "access_denied".into(),
                    description: Some("no".into()),
                },
            ),
        ] {
            assert_eq!(
                code_from_callback(&callback, &pending, ISSUER).unwrap_err(),
                expected,
                "{callback}"
            );
        }
        // An error from another issuer is a mix-up, not a refusal to show.
        let forged = "error=access_denied&state=s-1&iss=https%3A%2F%2Fevil.example";
        assert_eq!(
            code_from_callback(forged, &pending, ISSUER).unwrap_err(),
            ClientError::IssuerMismatch
        );
    }
}
