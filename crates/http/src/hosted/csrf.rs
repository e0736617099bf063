//! Cross-site request forgery defence of every hosted form: the double-submit pattern.
//!
//! A page with a form makes sure the browser holds a random CSRF cookie (256 bits, base64url,
//! `HttpOnly`, `SameSite=Lax`, `__Host-` on https — see [`super::cookies`]) and repeats its value
//! in a hidden `csrf` field. A POST is accepted only when both are present and equal, compared
//! in constant time. Another site can make a browser send the cookie (or not, `Lax` forbids it
//! on cross-site POSTs) but can neither read it nor set it, so it cannot fill in the field; a
//! login-CSRF attempt that posts a victim's field value without the victim's cookie fails too.
//! The same token is reused while the cookie lives, so several open tabs keep working.

use super::cookies::{self, CookiePolicy};
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::HeaderMap;
use subtle::ConstantTimeEq;
use svc_domain::Rng;

/// Length of an encoded token: 32 bytes in unpadded base64url.
const TOKEN_LEN: usize = 43;

/// The CSRF token of the page being rendered.
#[derive(Debug, Clone)]
pub(crate) struct CsrfToken {
    value: String,
    fresh: bool,
}

impl CsrfToken {
    /// The browser's current token when it looks like one of ours, else a new one.
    pub(crate) fn for_page(headers: &HeaderMap, policy: CookiePolicy, rng: &dyn Rng) -> Self {
        match policy.csrf(headers).filter(|v| well_formed(v)) {
            Some(value) => Self {
                value,
                fresh: false,
            },
            None => Self::fresh(rng),
        }
    }

    /// A new token.
    pub(crate) fn fresh(rng: &dyn Rng) -> Self {
        let mut bytes = [0u8; 32];
        rng.fill(&mut bytes);
        Self {
            value: URL_SAFE_NO_PAD.encode(bytes),
            fresh: true,
        }
    }

    /// The value for the hidden field.
    pub(crate) fn value(&self) -> &str {
        &self.value
    }

    /// Sets the cookie on `response` when the token is new.
    pub(crate) fn attach(&self, response: &mut Response, policy: CookiePolicy) {
        if self.fresh {
            cookies::append(response, policy.set_csrf(&self.value));
        }
    }
}

/// Whether a POST carries a CSRF cookie and an equal `csrf` field.
pub(crate) fn verify(headers: &HeaderMap, policy: CookiePolicy, field: Option<&str>) -> bool {
    let (Some(cookie), Some(field)) = (policy.csrf(headers), field) else {
        return false;
    };
    well_formed(&cookie) && bool::from(cookie.as_bytes().ct_eq(field.as_bytes()))
}

fn well_formed(value: &str) -> bool {
    value.len() == TOKEN_LEN
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::response::IntoResponse;
    use http::HeaderValue;
    use http::header::{COOKIE, SET_COOKIE};
    use svc_domain::SeededRandom;

    fn with_cookie(cookie: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(COOKIE, HeaderValue::from_str(cookie).unwrap());
        headers
    }

    const HTTP: &str = "http://127.0.0.1";

    #[test]
    fn a_new_browser_gets_a_fresh_token_and_a_cookie() {
        let policy = CookiePolicy::for_issuer(HTTP);
        let token = CsrfToken::for_page(&HeaderMap::new(), policy, &SeededRandom::new(1));
        assert_eq!(token.value().len(), TOKEN_LEN);
        let mut response = ().into_response();
        token.attach(&mut response, policy);
        let set = response.headers()[SET_COOKIE].to_str().unwrap();
        assert!(
            set.starts_with(&format!("svc_csrf={}; ", token.value())),
            "{set}"
        );
        assert!(set.contains("HttpOnly") && set.contains("SameSite=Lax"));
    }

    #[test]
    fn an_existing_token_is_reused_without_setting_the_cookie_again() {
        let policy = CookiePolicy::for_issuer(HTTP);
        let first = CsrfToken::fresh(&SeededRandom::new(2));
        let headers = with_cookie(&format!("svc_csrf={}", first.value()));
        let again = CsrfToken::for_page(&headers, policy, &SeededRandom::new(3));
        assert_eq!(again.value(), first.value());
        let mut response = ().into_response();
        again.attach(&mut response, policy);
        assert!(response.headers().get(SET_COOKIE).is_none());
    }

    #[test]
    fn a_malformed_cookie_is_replaced() {
        let policy = CookiePolicy::for_issuer(HTTP);
        let headers = with_cookie("svc_csrf=short");
        let token = CsrfToken::for_page(&headers, policy, &SeededRandom::new(4));
        assert_ne!(token.value(), "short");
        assert!(
            !verify(&headers, policy, Some("short")),
            "short tokens never pass"
        );
    }

    #[test]
    fn only_a_matching_cookie_and_field_pass() {
        let policy = CookiePolicy::for_issuer(HTTP);
        let token = CsrfToken::fresh(&SeededRandom::new(5));
        let other = CsrfToken::fresh(&SeededRandom::new(6));
        let headers = with_cookie(&format!("svc_csrf={}", token.value()));
        assert!(verify(&headers, policy, Some(token.value())));
        assert!(
            !verify(&headers, policy, Some(other.value())),
            "wrong field"
        );
        assert!(!verify(&headers, policy, None), "missing field");
        assert!(
            !verify(&HeaderMap::new(), policy, Some(token.value())),
            "field without cookie (login CSRF)"
        );
        assert!(
            !verify(
                &headers,
                CookiePolicy::for_issuer("https://x"),
                Some(token.value())
            ),
            "an https issuer reads only the __Host- cookie"
        );
    }
}
