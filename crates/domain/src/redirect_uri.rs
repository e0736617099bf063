//! Registered redirect URIs. Matching is exact, character for character (RFC 9700 §4.1.3; the
//! spec: "scheme, host, port, path, trailing slash"), so registration is where the rules live.
//! The one exception is RFC 8252 §7.3's: for an `http` redirect URI on a loopback IP literal
//! (`127.0.0.1`, `[::1]`) a native app may present any port at authorization time, since it
//! listens on whatever port the OS gives it; everything else (host spelled the same, path,
//! query) must still match exactly, and `localhost` (NOT RECOMMENDED by RFC 8252 §8.3) stays
//! exact. Registration rules:
//!
//! - absolute, no fragment (RFC 6749 §3.1.2), no user-info, no wildcard;
//! - `https` for web clients;
//! - `http` only on loopback for native apps (RFC 8252 §7.3: `127.0.0.0/8`, `[::1]`, `localhost`);
//! - private-use schemes in reverse-domain form (RFC 8252 §7.1, e.g. `com.example.app:/cb`);
//! - never `javascript:`, `data:`, `file:` or other schemes that run or read locally.

use std::fmt;

/// Longest redirect URI accepted.
const MAX_LEN: usize = 2048;

/// Why a redirect URI cannot be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedirectUriError {
    /// Not an absolute URI, or longer than 2048 characters.
    #[error("redirect URI must be an absolute URI of at most 2048 characters")]
    Malformed,
    /// Has a `#fragment` (RFC 6749 §3.1.2).
    #[error("redirect URI must not contain a fragment")]
    Fragment,
    /// Contains `*`; patterns are never matched.
    #[error("redirect URI must not contain wildcards; register each URI exactly")]
    Wildcard,
    /// Carries `user:password@`.
    #[error("redirect URI must not contain user information")]
    UserInfo,
    /// `http` on a host that is not loopback.
    #[error(
        "http redirect URIs are allowed only on loopback (127.0.0.1, [::1], localhost) for native apps; use https"
    )]
    InsecureHttp,
    /// A scheme that is neither https, loopback http nor a reverse-domain private-use scheme.
    #[error(
        "redirect URI scheme must be https, loopback http, or a reverse-domain private-use scheme such as com.example.app"
    )]
    Scheme,
}

/// A redirect URI that passed registration rules; compared exactly.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct RedirectUri(String);

impl RedirectUri {
    /// Checks the registration rules; the string is kept exactly as given.
    pub fn parse(s: &str) -> Result<Self, RedirectUriError> {
        if s.len() > MAX_LEN || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(RedirectUriError::Malformed);
        }
        if s.contains('#') {
            return Err(RedirectUriError::Fragment);
        }
        if s.contains('*') {
            return Err(RedirectUriError::Wildcard);
        }
        let url = url::Url::parse(s).map_err(|_| RedirectUriError::Malformed)?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(RedirectUriError::UserInfo);
        }
        match url.scheme() {
            "https" if url.host().is_some() => Ok(Self(s.to_owned())),
            "http" => match url.host() {
                Some(url::Host::Ipv4(ip)) if ip.is_loopback() => Ok(Self(s.to_owned())),
                Some(url::Host::Ipv6(ip)) if ip.is_loopback() => Ok(Self(s.to_owned())),
                Some(url::Host::Domain("localhost")) => Ok(Self(s.to_owned())),
                _ => Err(RedirectUriError::InsecureHttp),
            },
            scheme if scheme.contains('.') && !scheme.starts_with('.') => Ok(Self(s.to_owned())),
            _ => Err(RedirectUriError::Scheme),
        }
    }

    /// The URI exactly as registered.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Exact comparison with a URI presented in a request (RFC 9700 §4.1.3).
    pub fn matches(&self, presented: &str) -> bool {
        self.0 == presented
    }

    /// Whether `presented` may be the redirect URI of an authorization request: an exact
    /// match, or, for a loopback IP literal registered with `http`, the same URI on any port
    /// (RFC 8252 §7.3).
    pub fn accepts_at_authorization(&self, presented: &str) -> bool {
        if self.matches(presented) {
            return true;
        }
        match (loopback_parts(&self.0), loopback_parts(presented)) {
            (Some(registered), Some(asked)) => registered == asked,
            _ => false,
        }
    }
}

/// `(host, rest)` of `http://<loopback IP literal>[:port]<rest>` with the port dropped: the
/// host exactly as written (`127.0.0.1` or `[::1]`), `rest` the path and query as written.
/// `None` for anything else, including a port that is not 1 to 65535.
fn loopback_parts(uri: &str) -> Option<(&str, &str)> {
    let after = uri.strip_prefix("http://")?;
    let end = after.find(['/', '?']).unwrap_or(after.len());
    let (authority, rest) = after.split_at(end);
    let (host, port) = if let Some(v6) = authority.strip_prefix("[::1]") {
        ("[::1]", v6)
    } else if let Some(v4) = authority.strip_prefix("127.0.0.1") {
        ("127.0.0.1", v4)
    } else {
        return None;
    };
    match port.strip_prefix(':') {
        None if port.is_empty() => Some((host, rest)),
        Some(digits)
            if (1..=5).contains(&digits.len())
                && digits.bytes().all(|b| b.is_ascii_digit())
                && digits
                    .parse::<u32>()
                    .is_ok_and(|p| (1..=65_535).contains(&p)) =>
        {
            Some((host, rest))
        }
        _ => None,
    }
}

impl fmt::Display for RedirectUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for RedirectUri {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration_rules_of_rfc8252_and_rfc9700() {
        for good in [
            "https://app.example.com/callback",
            "https://app.example.com/callback/",
            "http://127.0.0.1:4000/cb",
            "http://[::1]/cb",
            "http://localhost:3000/auth",
            "com.example.app:/oauth2redirect",
            "https://app.example.com/cb?tenant=1",
        ] {
            assert!(RedirectUri::parse(good).is_ok(), "{good}");
        }
        let cases = [
            ("https://app.example.com/cb#x", RedirectUriError::Fragment),
            ("https://*.example.com/cb", RedirectUriError::Wildcard),
            ("https://app.example.com/*", RedirectUriError::Wildcard),
            ("http://app.example.com/cb", RedirectUriError::InsecureHttp),
            ("http://10.0.0.1/cb", RedirectUriError::InsecureHttp),
            ("javascript:alert(1)", RedirectUriError::Scheme),
            ("data:text/html,x", RedirectUriError::Scheme),
            ("file:///etc/passwd", RedirectUriError::Scheme),
            ("myapp:/cb", RedirectUriError::Scheme),
            (
                "https://user:pw@app.example.com/cb",
                RedirectUriError::UserInfo,
            ),
            ("/relative/cb", RedirectUriError::Malformed),
            ("https://app.example.com/c b", RedirectUriError::Malformed),
        ];
        for (uri, expected) in cases {
            assert_eq!(RedirectUri::parse(uri), Err(expected), "{uri}");
        }
        assert_eq!(
            RedirectUri::parse(&format!("https://a.example/{}", "x".repeat(2048))),
            Err(RedirectUriError::Malformed)
        );
    }

    #[test]
    fn a_loopback_ip_literal_accepts_any_port_and_nothing_else_at_authorization() {
        let v4 = RedirectUri::parse("http://127.0.0.1:53682/callback").unwrap();
        for any_port in [
            "http://127.0.0.1:53682/callback",
            "http://127.0.0.1:50123/callback",
            "http://127.0.0.1/callback",
            "http://127.0.0.1:65535/callback",
        ] {
            assert!(v4.accepts_at_authorization(any_port), "{any_port}");
        }
        for refused in [
            "http://127.0.0.1:50123/callback/",
            "http://127.0.0.1:50123/other",
            "http://127.0.0.1:50123/callback?x=1",
            "http://127.0.0.1:0/callback",
            "http://127.0.0.1:65536/callback",
            "http://127.0.0.1:+80/callback",
            "http://127.0.0.1:80:80/callback",
            "http://127.0.0.1.evil.example/callback",
            "http://127.0.0.1@evil.example/callback",
            "http://127.0.0.2:50123/callback",
            "http://localhost:50123/callback",
            "https://127.0.0.1:50123/callback",
            "http://[::1]:50123/callback",
        ] {
            assert!(!v4.accepts_at_authorization(refused), "{refused}");
        }
        let v6 = RedirectUri::parse("http://[::1]/cb").unwrap();
        assert!(v6.accepts_at_authorization("http://[::1]:8080/cb"));
        assert!(!v6.accepts_at_authorization("http://[::2]:8080/cb"));
        let localhost = RedirectUri::parse("http://localhost:3000/auth").unwrap();
        assert!(
            !localhost.accepts_at_authorization("http://localhost:3001/auth"),
            "localhost stays exact"
        );
        let web = RedirectUri::parse("https://app.example.com/cb").unwrap();
        assert!(!web.accepts_at_authorization("https://app.example.com:8443/cb"));
        assert!(
            !v4.matches("http://127.0.0.1:50123/callback"),
            "exact matching (logout) is unchanged"
        );
    }

    #[test]
    fn matching_is_exact_character_for_character() {
        let uri = RedirectUri::parse("https://app.example.com/cb").unwrap();
        assert!(uri.matches("https://app.example.com/cb"));
        for near in [
            "https://app.example.com/cb/",
            "https://APP.example.com/cb",
            "https://app.example.com:443/cb",
            "https://app.example.com/cb?x=1",
        ] {
            assert!(!uri.matches(near), "{near}");
        }
    }
}
