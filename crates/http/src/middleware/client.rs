//! Client context: who is calling, over which scheme, for which host.
//!
//! `X-Forwarded-For`, `X-Forwarded-Proto` and `X-Forwarded-Host` are believed ONLY when the TCP
//! peer is inside `server.trusted_proxies` (CONTRACTS.md "Tenancy and issuers"); from anyone
//! else they are attacker-controlled and ignored. A missing `ConnectInfo` (tower `oneshot`
//! tests, or a runtime that forgot `into_make_service_with_connect_info`) means the peer is
//! unknown, never trusted. The RFC 7239 `Forwarded` header is not read.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::request::Parts;
use http::{HeaderMap, HeaderName, header};
use ipnet::IpNet;

use crate::HttpSettings;

const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
const X_FORWARDED_PROTO: HeaderName = HeaderName::from_static("x-forwarded-proto");
const X_FORWARDED_HOST: HeaderName = HeaderName::from_static("x-forwarded-host");

/// Where the request came from, as far as it can be trusted. Inserted into request extensions
/// by the stack; also an extractor (an unknown client outside the stack).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientContext {
    /// Client address: the peer, or the forwarded address when the peer is a trusted proxy.
    /// `None` when the peer is unknown.
    pub ip: Option<IpAddr>,
    /// `"https"` or `"http"`: from a trusted proxy's `X-Forwarded-Proto`, else `https` when the
    /// listener terminates TLS.
    pub scheme: &'static str,
    /// Requested authority, lowercase, with its port when one was given (`acme.localhost:8080`,
    /// `[::1]:8443`). `None` when missing or malformed. Tenancy resolution strips the port
    /// ([`ClientContext::hostname`]); issuer URLs keep it.
    pub host: Option<String>,
}

impl ClientContext {
    /// `host` without its port (`acme.localhost`, `[::1]`).
    #[must_use]
    pub fn hostname(&self) -> Option<&str> {
        self.host.as_deref().map(hostname_of)
    }

    /// Whether the client used HTTPS.
    #[must_use]
    pub fn is_https(&self) -> bool {
        self.scheme == "https"
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ClientContext {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(parts.extensions.get::<Self>().cloned().unwrap_or(Self {
            ip: None,
            scheme: "http",
            host: None,
        }))
    }
}

/// Which peers may speak for the client, compiled once from [`HttpSettings`].
#[derive(Debug)]
pub(crate) struct ProxyTrust {
    trusted: Vec<IpNet>,
    tls: bool,
}

impl ProxyTrust {
    pub(crate) fn new(settings: &HttpSettings) -> Self {
        Self {
            trusted: settings.trusted_proxies.clone(),
            tls: settings.tls,
        }
    }

    fn is_trusted(&self, ip: IpAddr) -> bool {
        self.trusted.iter().any(|net| net.contains(&ip))
    }

    /// Resolves the context from the peer address and the request head.
    pub(crate) fn resolve(
        &self,
        peer: Option<IpAddr>,
        headers: &HeaderMap,
        uri: &http::Uri,
    ) -> ClientContext {
        // Dual-stack listeners report IPv4 peers as `::ffff:a.b.c.d`; canonicalise so IPv4
        // proxy ranges match.
        let peer = peer.map(|ip| ip.to_canonical());
        let via_trusted_proxy = peer.is_some_and(|ip| self.is_trusted(ip));
        let own_scheme = if self.tls { "https" } else { "http" };

        if !via_trusted_proxy {
            return ClientContext {
                ip: peer,
                scheme: own_scheme,
                host: direct_host(headers, uri),
            };
        }

        let ip = peer.map(|peer| self.forwarded_client(peer, headers));
        let scheme = match last_value(headers, &X_FORWARDED_PROTO)
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("https") => "https",
            Some("http") => "http",
            _ => own_scheme,
        };
        let host = match last_value(headers, &X_FORWARDED_HOST) {
            Some(forwarded) => normalize_authority(forwarded),
            None => direct_host(headers, uri),
        };
        ClientContext { ip, scheme, host }
    }

    /// The rightmost `X-Forwarded-For` address that is not itself a trusted proxy. Each trusted
    /// hop appends the address it saw, so everything left of the first untrusted entry may be
    /// forged by the client. An unparseable entry stops the walk at the hop that reported it.
    fn forwarded_client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let mut client = peer;
        let entries = headers
            .get_all(&X_FORWARDED_FOR)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect::<Vec<_>>();
        for entry in entries.iter().rev() {
            let Some(ip) = parse_forwarded_ip(entry) else {
                break;
            };
            client = ip;
            if !self.is_trusted(ip) {
                break;
            }
        }
        client
    }
}

/// Inserts the [`ClientContext`] for the inner layers.
pub(crate) async fn client_context(
    State(trust): State<Arc<ProxyTrust>>,
    mut req: Request,
    next: Next,
) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip());
    let ctx = trust.resolve(peer, req.headers(), req.uri());
    req.extensions_mut().insert(ctx);
    next.run(req).await
}

/// Host the client asked for without a proxy. The request target's authority wins over `Host`:
/// HTTP/2 carries it in `:authority`, and RFC 9112 §3.2.2 says an absolute-form target
/// overrides `Host`.
fn direct_host(headers: &HeaderMap, uri: &http::Uri) -> Option<String> {
    if let Some(authority) = uri.authority() {
        return normalize_authority(authority.as_str());
    }
    let mut hosts = headers.get_all(header::HOST).iter();
    let first = hosts.next()?;
    if hosts.next().is_some() {
        // RFC 9112 §3.2: several Host fields make the request invalid.
        return None;
    }
    normalize_authority(first.to_str().ok()?)
}

/// The last comma-separated value of a header: the one the nearest (trusted) proxy wrote.
fn last_value<'h>(headers: &'h HeaderMap, name: &HeaderName) -> Option<&'h str> {
    let value = headers.get_all(name).iter().next_back()?.to_str().ok()?;
    let last = value.rsplit(',').next()?.trim();
    (!last.is_empty()).then_some(last)
}

/// `1.2.3.4`, `2001:db8::1`, `1.2.3.4:5678` or `[2001:db8::1]:443`.
fn parse_forwarded_ip(entry: &str) -> Option<IpAddr> {
    entry
        .parse::<IpAddr>()
        .or_else(|_| entry.parse::<SocketAddr>().map(|s| s.ip()))
        .ok()
        .map(|ip| ip.to_canonical())
}

/// Validates and normalises an authority (`host[:port]`): lowercase, trailing dot removed, IPv6
/// literal in canonical bracketed form. Rejects userinfo, empty labels and bad ports, so the
/// result is safe to embed in URLs and logs.
pub(crate) fn normalize_authority(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let (host, port) = if let Some(rest) = raw.strip_prefix('[') {
        let (literal, after) = rest.split_once(']')?;
        let ip = literal.parse::<Ipv6Addr>().ok()?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?),
        };
        (format!("[{ip}]"), port)
    } else {
        let (name, port) = match raw.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (raw, None),
        };
        (normalize_hostname(name)?, port)
    };
    match port {
        None => Some(host),
        Some(port) => {
            let valid = !port.is_empty()
                && port.len() <= 5
                && port.bytes().all(|b| b.is_ascii_digit())
                && port.parse::<u16>().is_ok();
            valid.then(|| format!("{host}:{port}"))
        }
    }
}

/// A DNS name or IPv4 literal: labels of `[a-z0-9_-]`, 1..=63 chars each, 253 in total.
pub(crate) fn normalize_hostname(raw: &str) -> Option<String> {
    let name = raw.strip_suffix('.').unwrap_or(raw).to_ascii_lowercase();
    let valid = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    valid.then_some(name)
}

/// Strips the port from a normalised authority.
pub(crate) fn hostname_of(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority
            .find(']')
            .and_then(|end| authority.get(..=end))
            .unwrap_or(authority);
    }
    authority
        .split_once(':')
        .map_or(authority, |(host, _port)| host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn trust(proxies: &[&str], tls: bool) -> ProxyTrust {
        ProxyTrust::new(&HttpSettings {
            trusted_proxies: proxies.iter().map(|p| p.parse().unwrap()).collect(),
            tls,
            ..HttpSettings::default()
        })
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    const FORWARDED: &[(&str, &str)] = &[
        ("host", "internal.lan:8080"),
        ("x-forwarded-for", "6.6.6.6, 203.0.113.7, 10.0.0.2"),
        ("x-forwarded-proto", "https"),
        ("x-forwarded-host", "ID.Example.com"),
    ];

    #[test]
    fn forwarded_headers_are_honoured_from_a_trusted_peer() {
        let ctx = trust(&["10.0.0.0/8"], false).resolve(
            ip("10.0.0.1"),
            &headers(FORWARDED),
            &"/".parse().unwrap(),
        );
        // 10.0.0.2 is another trusted hop; 203.0.113.7 is the first untrusted one from the
        // right; 6.6.6.6 may be forged by the client and is skipped.
        assert_eq!(ctx.ip, ip("203.0.113.7"));
        assert_eq!(ctx.scheme, "https");
        assert_eq!(ctx.host.as_deref(), Some("id.example.com"));
    }

    #[test]
    fn forwarded_headers_are_ignored_from_an_untrusted_peer() {
        let ctx = trust(&["10.0.0.0/8"], false).resolve(
            ip("198.51.100.9"),
            &headers(FORWARDED),
            &"/".parse().unwrap(),
        );
        assert_eq!(ctx.ip, ip("198.51.100.9"));
        assert_eq!(ctx.scheme, "http");
        assert_eq!(ctx.host.as_deref(), Some("internal.lan:8080"));
    }

    #[test]
    fn unknown_peer_is_never_trusted() {
        let ctx = trust(&["0.0.0.0/0", "::/0"], true).resolve(
            None,
            &headers(FORWARDED),
            &"/".parse().unwrap(),
        );
        assert_eq!(ctx.ip, None);
        assert_eq!(ctx.scheme, "https", "own TLS still counts");
        assert_eq!(ctx.host.as_deref(), Some("internal.lan:8080"));
    }

    #[test]
    fn ipv4_mapped_peer_matches_ipv4_proxy_range() {
        let ctx = trust(&["10.0.0.0/8"], false).resolve(
            ip("::ffff:10.1.2.3"),
            &headers(&[("x-forwarded-for", "203.0.113.7")]),
            &"/".parse().unwrap(),
        );
        assert_eq!(ctx.ip, ip("203.0.113.7"));
    }

    #[test]
    fn all_trusted_or_garbage_chains_stop_safely() {
        let t = trust(&["10.0.0.0/8"], false);
        let all_trusted = headers(&[("x-forwarded-for", "10.9.9.9, 10.0.0.2")]);
        let ctx = t.resolve(ip("10.0.0.1"), &all_trusted, &"/".parse().unwrap());
        assert_eq!(ctx.ip, ip("10.9.9.9"));

        let garbage = headers(&[("x-forwarded-for", "1.2.3.4, not-an-ip, 10.0.0.2")]);
        let ctx = t.resolve(ip("10.0.0.1"), &garbage, &"/".parse().unwrap());
        assert_eq!(
            ctx.ip,
            ip("10.0.0.2"),
            "stops at the hop that reported garbage"
        );

        let with_port = headers(&[("x-forwarded-for", "[2001:db8::7]:4711")]);
        let ctx = t.resolve(ip("10.0.0.1"), &with_port, &"/".parse().unwrap());
        assert_eq!(ctx.ip, ip("2001:db8::7"));
    }

    #[test]
    fn request_target_authority_wins_over_host_header() {
        let ctx = trust(&[], false).resolve(
            ip("192.0.2.1"),
            &headers(&[("host", "other.example")]),
            &"https://Acme.Example.com:8443/x".parse().unwrap(),
        );
        assert_eq!(ctx.host.as_deref(), Some("acme.example.com:8443"));
        assert_eq!(ctx.hostname(), Some("acme.example.com"));
    }

    #[test]
    fn duplicate_host_headers_are_malformed() {
        let ctx = trust(&[], false).resolve(
            None,
            &headers(&[("host", "a.example"), ("host", "b.example")]),
            &"/".parse().unwrap(),
        );
        assert_eq!(ctx.host, None);
    }

    #[test]
    fn authorities_are_normalised_or_rejected() {
        assert_eq!(
            normalize_authority("Example.COM."),
            Some("example.com".into())
        );
        assert_eq!(
            normalize_authority("example.com:443"),
            Some("example.com:443".into())
        );
        assert_eq!(normalize_authority("[0:0::1]:80"), Some("[::1]:80".into()));
        assert_eq!(normalize_authority("127.0.0.1"), Some("127.0.0.1".into()));
        for bad in [
            "",
            "user@host",
            "a..b",
            "host:",
            "host:99999",
            "host:8x",
            "[::1",
            "[zz]",
            "a b",
            "host/path",
            "::1",
            "[::1]x",
        ] {
            assert_eq!(normalize_authority(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn hostname_strips_the_port() {
        assert_eq!(hostname_of("a.example:8080"), "a.example");
        assert_eq!(hostname_of("[::1]:8080"), "[::1]");
        assert_eq!(hostname_of("[::1]"), "[::1]");
        assert_eq!(hostname_of("a.example"), "a.example");
    }
}
