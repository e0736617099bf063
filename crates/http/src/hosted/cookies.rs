//! The hosted pages' cookies: which names and attributes they carry, reading them from requests
//! and writing `Set-Cookie` headers.
//!
//! Ten cookies exist, all host-only (never `Domain`), `Path=/`, `HttpOnly` and
//! `SameSite=Lax`: the session cookie, the CSRF cookie ([`super::csrf`]), between a correct
//! password and the second factor the challenge cookie (it signs nobody in by itself), the
//! WebAuthn ceremony cookie, the device cookie that recognises a browser across sign-ins
//! (new-device mail, trusted devices), the recovery cookie that holds the secret of an
//! account recovery this browser asked for (`super::recovery`), the single sign-on cookie that
//! holds the secret of a sign-in at an organization's provider (`super::sso`), the social
//! cookies that hold the secret of a sign-in at one of the tenant's social providers and of a
//! link waiting for confirmation (`super::social`), and the join cookie that
//! brings a person who opened an invitation before signing in back to it afterwards
//! (`super::join`). When the tenant's issuer is https
//! they are `Secure` and carry the `__Host-` prefix (RFC 6265bis §4.1.3.2), so neither a sibling
//! subdomain nor a plain-http response can set or overwrite them; on a plain-http issuer
//! (loopback development) browsers would drop `Secure` cookies, so they go without prefix and
//! flag. `Lax` keeps the session on the top-level GET that brings a person back from an
//! application, and off cross-site POSTs.

use axum::response::Response;
use http::header::{COOKIE, SET_COOKIE};
use http::{HeaderMap, HeaderValue};
use std::time::Duration;

/// Cookie names and attributes for one issuer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CookiePolicy {
    secure: bool,
}

impl CookiePolicy {
    /// The policy for a tenant issuer (`https://…` gets `__Host-` and `Secure`).
    pub(crate) fn for_issuer(issuer: &str) -> Self {
        Self {
            secure: issuer
                .get(..8)
                .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://")),
        }
    }

    /// Name of the session cookie.
    pub(crate) fn session_name(self) -> &'static str {
        if self.secure {
            "__Host-svc_session"
        } else {
            "svc_session"
        }
    }

    /// Name of the CSRF cookie.
    pub(crate) fn csrf_name(self) -> &'static str {
        if self.secure {
            "__Host-svc_csrf"
        } else {
            "svc_csrf"
        }
    }

    /// Name of the second-factor challenge cookie.
    pub(crate) fn challenge_name(self) -> &'static str {
        if self.secure {
            "__Host-svc_mfa"
        } else {
            "svc_mfa"
        }
    }

    /// The challenge cookie's value in a request.
    pub(crate) fn challenge(self, headers: &HeaderMap) -> Option<String> {
        read(headers, self.challenge_name())
    }

    /// `Set-Cookie` for a challenge cookie, living as long as the challenge.
    pub(crate) fn set_challenge(self, value: &str, max_age: Duration) -> Option<HeaderValue> {
        self.header(self.challenge_name(), value, Some(max_age.as_secs()))
    }

    /// `Set-Cookie` that deletes the challenge cookie.
    pub(crate) fn clear_challenge(self) -> Option<HeaderValue> {
        self.header(self.challenge_name(), "", Some(0))
    }

    /// Name of the WebAuthn ceremony cookie (a passkey registration or sign-in in progress).
    pub(crate) fn ceremony_name(self) -> &'static str {
        if self.secure {
            "__Host-svc_webauthn"
        } else {
            "svc_webauthn"
        }
    }

    /// The ceremony cookie's value in a request.
    pub(crate) fn ceremony(self, headers: &HeaderMap) -> Option<String> {
        read(headers, self.ceremony_name())
    }

    /// `Set-Cookie` for a ceremony cookie, living as long as the ceremony.
    pub(crate) fn set_ceremony(self, value: &str, max_age: Duration) -> Option<HeaderValue> {
        self.header(self.ceremony_name(), value, Some(max_age.as_secs()))
    }

    /// `Set-Cookie` that deletes the ceremony cookie.
    pub(crate) fn clear_ceremony(self) -> Option<HeaderValue> {
        self.header(self.ceremony_name(), "", Some(0))
    }

    /// Name of the single sign-on cookie: the secret of an attempt at an organization's
    /// provider, the only thing that can finish it. `Lax` is what lets the provider's
    /// top-level redirect back carry it.
    pub(crate) fn sso_name(self) -> &'static str {
        if self.secure {
            "__Host-svc_sso"
        } else {
            "svc_sso"
        }
    }

    /// The single sign-on cookie's value in a request.
    pub(crate) fn sso(self, headers: &HeaderMap) -> Option<String> {
        read(headers, self.sso_name())
    }

    /// `Set-Cookie` for a single sign-on cookie, living as long as the attempt.
    pub(crate) fn set_sso(self, value: &str, max_age: Duration) -> Option<HeaderValue> {
        self.header(self.sso_name(), value, Some(max_age.as_secs()))
    }

    /// `Set-Cookie` that deletes the single sign-on cookie.
    pub(crate) fn clear_sso(self) -> Option<HeaderValue> {
        self.header(self.sso_name(), "", Some(0))
    }

    /// Name of the social sign-in cookie: the secret of an attempt at one of the tenant's
    /// social providers, the only thing that can finish it.
    pub(crate) fn social_name(self) -> &'static str {
        if self.secure {
            "__Host-svc_social"
        } else {
            "svc_social"
        }
    }

    /// The social sign-in cookie's value in a request.
    pub(crate) fn social(self, headers: &HeaderMap) -> Option<String> {
        read(headers, self.social_name())
    }

    /// `Set-Cookie` for a social sign-in cookie, living as long as the attempt.
    pub(crate) fn set_social(self, value: &str, max_age: Duration) -> Option<HeaderValue> {
        self.header(self.social_name(), value, Some(max_age.as_secs()))
    }

    /// `Set-Cookie` that deletes the social sign-in cookie.
    pub(crate) fn clear_social(self) -> Option<HeaderValue> {
        self.header(self.social_name(), "", Some(0))
    }

    /// Name of the pending-link cookie: the secret of a provider account waiting to be
    /// connected to an existing account once its owner signs in here and confirms.
    pub(crate) fn social_link_name(self) -> &'static str {
        if self.secure {
            "__Host-svc_social_link"
        } else {
            "svc_social_link"
        }
    }

    /// The pending-link cookie's value in a request.
    pub(crate) fn social_link(self, headers: &HeaderMap) -> Option<String> {
        read(headers, self.social_link_name())
    }

    /// `Set-Cookie` for a pending-link cookie, living as long as the pending link.
    pub(crate) fn set_social_link(self, value: &str, max_age: Duration) -> Option<HeaderValue> {
        self.header(self.social_link_name(), value, Some(max_age.as_secs()))
    }

    /// `Set-Cookie` that deletes the pending-link cookie.
    pub(crate) fn clear_social_link(self) -> Option<HeaderValue> {
        self.header(self.social_link_name(), "", Some(0))
    }

    /// Name of the recovery cookie: the secret of the account recovery this browser asked for,
    /// the only thing that can follow it and set the new password.
    pub(crate) fn recovery_name(self) -> &'static str {
        if self.secure {
            "__Host-svc_recovery"
        } else {
            "svc_recovery"
        }
    }

    /// The recovery cookie's value in a request.
    pub(crate) fn recovery(self, headers: &HeaderMap) -> Option<String> {
        read(headers, self.recovery_name())
    }

    /// `Set-Cookie` for a recovery cookie, living as long as the recovery can (`max_age`).
    pub(crate) fn set_recovery(self, value: &str, max_age: Duration) -> Option<HeaderValue> {
        self.header(self.recovery_name(), value, Some(max_age.as_secs()))
    }

    /// `Set-Cookie` that deletes the recovery cookie.
    pub(crate) fn clear_recovery(self) -> Option<HeaderValue> {
        self.header(self.recovery_name(), "", Some(0))
    }

    /// Name of the join cookie: the link secret of the invitation this browser opened before
    /// signing in, or `ciba` for the backchannel approval page (`super::backchannel`), so the
    /// sign-in (whatever its method) returns there.
    pub(crate) fn join_name(self) -> &'static str {
        if self.secure {
            "__Host-svc_join"
        } else {
            "svc_join"
        }
    }

    /// The join cookie's value in a request.
    pub(crate) fn join(self, headers: &HeaderMap) -> Option<String> {
        read(headers, self.join_name())
    }

    /// `Set-Cookie` for a join cookie, living `max_age`.
    pub(crate) fn set_join(self, value: &str, max_age: Duration) -> Option<HeaderValue> {
        self.header(self.join_name(), value, Some(max_age.as_secs()))
    }

    /// `Set-Cookie` that deletes the join cookie.
    pub(crate) fn clear_join(self) -> Option<HeaderValue> {
        self.header(self.join_name(), "", Some(0))
    }

    /// Name of the device cookie, which recognises a browser across sign-ins.
    pub(crate) fn device_name(self) -> &'static str {
        if self.secure {
            "__Host-svc_device"
        } else {
            "svc_device"
        }
    }

    /// The device cookie's value in a request.
    pub(crate) fn device(self, headers: &HeaderMap) -> Option<String> {
        read(headers, self.device_name())
    }

    /// `Set-Cookie` for a device cookie: 400 days, the longest browsers keep one.
    pub(crate) fn set_device(self, value: &str) -> Option<HeaderValue> {
        self.header(self.device_name(), value, Some(400 * 24 * 3600))
    }

    /// The session cookie's value in a request.
    pub(crate) fn session(self, headers: &HeaderMap) -> Option<String> {
        read(headers, self.session_name())
    }

    /// The CSRF cookie's value in a request.
    pub(crate) fn csrf(self, headers: &HeaderMap) -> Option<String> {
        read(headers, self.csrf_name())
    }

    /// `Set-Cookie` for a new session cookie, living as long as the session (`max_age`).
    pub(crate) fn set_session(self, value: &str, max_age: Duration) -> Option<HeaderValue> {
        self.header(self.session_name(), value, Some(max_age.as_secs()))
    }

    /// `Set-Cookie` for the session a sign-in (or step-up) just created, living as long as it.
    pub(crate) fn set_signed_in(self, signed_in: &svc_authn::SignedIn) -> Option<HeaderValue> {
        let lifetime = signed_in.session.expires_at - signed_in.session.created_at;
        let max_age = Duration::try_from(lifetime).unwrap_or_default();
        self.set_session(&signed_in.cookie_value, max_age)
    }

    /// `Set-Cookie` that deletes the session cookie.
    pub(crate) fn clear_session(self) -> Option<HeaderValue> {
        self.header(self.session_name(), "", Some(0))
    }

    /// `Set-Cookie` for a CSRF cookie: a browser-session cookie.
    pub(crate) fn set_csrf(self, value: &str) -> Option<HeaderValue> {
        self.header(self.csrf_name(), value, None)
    }

    fn header(self, name: &str, value: &str, max_age: Option<u64>) -> Option<HeaderValue> {
        // Our values are base64url; anything else would let a value end the attribute list.
        if !value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return None;
        }
        let mut cookie = format!("{name}={value}; Path=/; HttpOnly; SameSite=Lax");
        if let Some(age) = max_age {
            cookie.push_str(&format!("; Max-Age={age}"));
        }
        if self.secure {
            cookie.push_str("; Secure");
        }
        HeaderValue::from_str(&cookie).ok()
    }
}

/// Appends a `Set-Cookie` header (one per cookie; never joined).
pub(crate) fn append(response: &mut Response, cookie: Option<HeaderValue>) {
    if let Some(cookie) = cookie {
        response.headers_mut().append(SET_COOKIE, cookie);
    }
}

/// The first value of cookie `name` across every `Cookie` header (HTTP/2 may split them).
fn read(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.trim().trim_matches('"').to_owned())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_issuers_get_host_prefixed_secure_cookies() {
        let policy = CookiePolicy::for_issuer("https://acme.example.com");
        let cookie = policy
            .set_session("ses_s_abc", Duration::from_secs(60))
            .unwrap();
        assert_eq!(
            cookie,
            "__Host-svc_session=ses_s_abc; Path=/; HttpOnly; SameSite=Lax; Max-Age=60; Secure"
        );
        let csrf = policy.set_csrf("tok").unwrap();
        assert_eq!(
            csrf,
            "__Host-svc_csrf=tok; Path=/; HttpOnly; SameSite=Lax; Secure"
        );
        assert!(!cookie.to_str().unwrap().contains("Domain"));
    }

    #[test]
    fn plain_http_issuers_get_unprefixed_cookies_without_secure() {
        let policy = CookiePolicy::for_issuer("http://127.0.0.1:8080");
        let cookie = policy
            .set_session("ses_s_abc", Duration::from_secs(60))
            .unwrap();
        assert_eq!(
            cookie,
            "svc_session=ses_s_abc; Path=/; HttpOnly; SameSite=Lax; Max-Age=60"
        );
        assert_eq!(
            policy.clear_session().unwrap(),
            "svc_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0"
        );
    }

    #[test]
    fn the_recovery_cookie_follows_the_same_rules() {
        let secure = CookiePolicy::for_issuer("https://acme.example.com");
        assert_eq!(
            secure
                .set_recovery("rca_abc-_1", Duration::from_secs(90))
                .unwrap(),
            "__Host-svc_recovery=rca_abc-_1; Path=/; HttpOnly; SameSite=Lax; Max-Age=90; Secure"
        );
        let plain = CookiePolicy::for_issuer("http://127.0.0.1:8080");
        assert_eq!(
            plain.clear_recovery().unwrap(),
            "svc_recovery=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0"
        );
        let mut headers = HeaderMap::new();
        headers.append(COOKIE, HeaderValue::from_static("svc_recovery=rca_x"));
        assert_eq!(plain.recovery(&headers).as_deref(), Some("rca_x"));
        assert_eq!(secure.recovery(&headers), None, "prefixed name differs");
    }

    #[test]
    fn values_that_could_inject_attributes_are_refused() {
        let policy = CookiePolicy::for_issuer("http://x");
        assert!(policy.set_csrf("a; Domain=evil.example").is_none());
        assert!(policy.set_csrf("a b").is_none());
    }

    #[test]
    fn cookies_are_found_across_headers_and_pairs() {
        let mut headers = HeaderMap::new();
        headers.append(COOKIE, HeaderValue::from_static("a=1; svc_csrf=tok"));
        headers.append(COOKIE, HeaderValue::from_static("svc_session=ses_s_x"));
        let policy = CookiePolicy::for_issuer("http://x");
        assert_eq!(policy.csrf(&headers).as_deref(), Some("tok"));
        assert_eq!(policy.session(&headers).as_deref(), Some("ses_s_x"));
        let secure = CookiePolicy::for_issuer("HTTPS://x");
        assert_eq!(secure.session(&headers), None, "prefixed name differs");
        headers.append(COOKIE, HeaderValue::from_static("svc_sessionx=1; empty="));
        assert_eq!(read(&headers, "empty"), None);
    }
}
