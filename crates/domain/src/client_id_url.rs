//! A client identifier that is a URL (OAuth Client ID Metadata Document,
//! draft-ietf-oauth-client-id-metadata-document-03 §3): the client publishes its metadata at
//! that URL, and an authorization server that allows it fetches them instead of requiring a
//! registration first (what MCP clients use).
//!
//! The draft compares identifiers as plain strings (RFC 3986 §6.2.1), so only one spelling of a
//! URL is taken: the one the WHATWG URL parser produces from it (lowercase scheme and host, no
//! default port, percent-encoding normalised). Rules, each refused with the reason named:
//! 1. `https` (the draft's requirement). `http` is accepted only when the caller allows it,
//!    which the runtime does outside production so a test can serve a document on loopback.
//! 2. A path other than `/` (the draft: "MUST contain a path component"), with no `.` or `..`
//!    segment, spelled or percent-encoded.
//! 3. No fragment, no user name or password, and (stricter than the draft's "SHOULD NOT") no
//!    query: a query is where two spellings of one client would hide.
//! 4. At most [`MAX_CLIENT_ID_URL_LEN`] bytes, already in the parser's canonical form.

use std::fmt;

/// The longest URL accepted as a client identifier.
pub const MAX_CLIENT_ID_URL_LEN: usize = 1024;

/// Why a string is not a client identifier URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ClientIdUrlError(pub &'static str);

/// A URL used as a `client_id` (see the module documentation for the rules).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientIdUrl(String);

impl ClientIdUrl {
    /// Whether `client_id` is meant as a URL (it names a scheme), so that resolving it as a
    /// metadata document, and refusing it when it is not a valid one, is the right answer
    /// rather than "unknown client".
    #[must_use]
    pub fn is_url_shaped(client_id: &str) -> bool {
        let lower = client_id.get(..8).unwrap_or(client_id).to_ascii_lowercase();
        lower.starts_with("https://") || lower.starts_with("http://")
    }

    /// Checks `raw` against rules 1–4; `allow_http` relaxes rule 1 (never in production).
    pub fn parse(raw: &str, allow_http: bool) -> Result<Self, ClientIdUrlError> {
        // 4.
        if raw.len() > MAX_CLIENT_ID_URL_LEN {
            return Err(ClientIdUrlError(
                "the client_id URL is longer than 1024 bytes",
            ));
        }
        let url = url::Url::parse(raw)
            .map_err(|_| ClientIdUrlError("the client_id is not a valid URL"))?;
        // 1.
        match url.scheme() {
            "https" => {}
            "http" if allow_http => {}
            _ => return Err(ClientIdUrlError("the client_id URL must use https")),
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(ClientIdUrlError("the client_id URL has no host"));
        }
        // 3.
        if url.fragment().is_some() || raw.contains('#') {
            return Err(ClientIdUrlError(
                "the client_id URL must not have a fragment",
            ));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(ClientIdUrlError(
                "the client_id URL must not carry a user name or password",
            ));
        }
        if url.query().is_some() || raw.contains('?') {
            return Err(ClientIdUrlError("the client_id URL must not have a query"));
        }
        // 2. Checked on the raw text: the parser has already removed dot segments.
        let path = raw
            .split_once("://")
            .and_then(|(_, rest)| rest.find('/').map(|i| &rest[i..]))
            .unwrap_or("");
        if path.is_empty() || path == "/" {
            return Err(ClientIdUrlError("the client_id URL must have a path"));
        }
        let dotted = path.split('/').any(|segment| {
            let decoded = segment.to_ascii_lowercase().replace("%2e", ".");
            decoded == "." || decoded == ".."
        });
        if dotted {
            return Err(ClientIdUrlError(
                "the client_id URL must not have . or .. path segments",
            ));
        }
        // 4.
        if url.as_str() != raw {
            return Err(ClientIdUrlError(
                "the client_id URL is not in canonical form (lowercase scheme and host, no \
                 default port, normalised escapes)",
            ));
        }
        Ok(Self(raw.to_owned()))
    }

    /// The URL as the client sent it (and as it appears in tokens).
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The host (and port, when not the default) the person is shown on the consent page: the
    /// only part of a metadata document's identity nobody but the host's owner controls.
    #[must_use]
    pub fn authority(&self) -> &str {
        let rest = self.0.split_once("://").map_or("", |(_, rest)| rest);
        rest.split('/').next().unwrap_or(rest)
    }
}

impl fmt::Display for ClientIdUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn canonical_https_urls_with_a_path_are_client_ids() {
        for ok in [
            "https://client.example/metadata.json",
            "https://client.example:8443/oauth/client",
            "https://xn--bcher-kva.example/c",
            "https://client.example/a/b/",
        ] {
            let id = ClientIdUrl::parse(ok, false).unwrap();
            assert_eq!(id.as_str(), ok);
        }
        assert_eq!(
            ClientIdUrl::parse("https://client.example:8443/c", false)
                .unwrap()
                .authority(),
            "client.example:8443"
        );
        assert_eq!(
            ClientIdUrl::parse("http://127.0.0.1:4000/c", true)
                .unwrap()
                .authority(),
            "127.0.0.1:4000"
        );
    }

    #[test]
    fn every_rule_refuses_what_it_names() {
        let long = format!("https://client.example/{}", "a".repeat(1024));
        for (bad, why) in [
            ("http://client.example/c", "https"),
            ("ftp://client.example/c", "https"),
            ("https://client.example", "path"),
            ("https://client.example/", "path"),
            ("https://client.example/a/../b", ". or .."),
            ("https://client.example/a/./b", ". or .."),
            ("https://client.example/a/%2E%2e/b", ". or .."),
            ("https://client.example/c#x", "fragment"),
            ("https://client.example/c#", "fragment"),
            ("https://user:pw@client.example/c", "user name"),
            ("https://user@client.example/c", "user name"),
            ("https://client.example/c?x=1", "query"),
            ("https://client.example/c?", "query"),
            ("https://Client.Example/c", "canonical"),
            ("HTTPS://client.example/c", "canonical"),
            ("https://client.example:443/c", "canonical"),
            ("https://client.example/a b", "canonical"),
            (long.as_str(), "1024"),
            ("not a url", "valid URL"),
            ("app_01jb7q3m2x8v6n4k0t5r9c1d2e", "valid URL"),
        ] {
            let e = ClientIdUrl::parse(bad, false).unwrap_err();
            assert!(e.0.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn only_strings_naming_a_web_scheme_are_url_shaped() {
        assert!(ClientIdUrl::is_url_shaped("https://client.example/c"));
        assert!(ClientIdUrl::is_url_shaped("HTTP://x"));
        assert!(!ClientIdUrl::is_url_shaped(
            "app_01jb7q3m2x8v6n4k0t5r9c1d2e"
        ));
        assert!(!ClientIdUrl::is_url_shaped("urn:example:client"));
        assert!(!ClientIdUrl::is_url_shaped(""));
    }
}
