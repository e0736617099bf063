//! Host-name and URL predicates shared by the validation rules: what counts as local, what is a
//! valid host name, DNS label or http(s) URL.

use std::net::IpAddr;

/// Special-use names that never resolve on the public internet (RFC 6761, RFC 8375, and the
/// `.internal` TLD reserved for private use).
const LOCAL_SUFFIXES: &[&str] = &[
    "localhost",
    "test",
    "example",
    "invalid",
    "local",
    "internal",
    "home.arpa",
];

fn bare(host: &str) -> String {
    host.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// Whether binding `host` keeps the listener private: a loopback address or `localhost`.
pub(crate) fn is_loopback_bind(host: &str) -> bool {
    let host = bare(host);
    match host.parse::<IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host == "localhost",
    }
}

/// Whether a host in a URL or domain setting is local: loopback, `localhost`, `*.localhost`, or a
/// special-use name (`*.test`, `*.example`, `*.invalid`, `*.local`, `*.internal`, `*.home.arpa`).
pub(crate) fn is_local_host(host: &str) -> bool {
    let host = bare(host);
    match host.parse::<IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => LOCAL_SUFFIXES
            .iter()
            .any(|suffix| host == *suffix || host.ends_with(&format!(".{suffix}"))),
    }
}

/// A DNS host name: dot-separated labels of letters, digits and `-`, each 1..=63 long and not
/// starting or ending with `-`, 253 characters at most.
pub(crate) fn is_host_name(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            (1..=63).contains(&label.len())
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// A lowercase DNS label: 1..=63 of `a-z`, `0-9` and `-`, not starting or ending with `-`.
pub(crate) fn is_dns_label(label: &str) -> bool {
    (1..=63).contains(&label.len())
        && label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !label.starts_with('-')
        && !label.ends_with('-')
}

/// An `allowed_hosts` entry: an exact host name or IP address, or `*.suffix`.
pub(crate) fn is_allowed_host_pattern(entry: &str) -> bool {
    match entry.strip_prefix("*.") {
        Some(suffix) => is_host_name(suffix),
        None => is_host_name(entry) || bare(entry).parse::<IpAddr>().is_ok(),
    }
}

/// Parses an absolute `http`/`https` URL with a host.
pub(crate) fn parse_http_url(raw: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(raw).map_err(|e| e.to_string())?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("scheme `{}` is not http or https", url.scheme()));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("it has no host".to_owned());
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_binds() {
        for host in [
            "127.0.0.1",
            "::1",
            "[::1]",
            "localhost",
            "LOCALHOST",
            "127.0.0.2",
        ] {
            assert!(is_loopback_bind(host), "{host}");
        }
        for host in [
            "0.0.0.0",
            "::",
            "192.168.1.10",
            "10.0.0.1",
            "8.8.8.8",
            "svc.local",
            "myhost",
        ] {
            assert!(!is_loopback_bind(host), "{host}");
        }
    }

    #[test]
    fn local_hosts() {
        for host in [
            "localhost",
            "acme.localhost",
            "auth.test",
            "x.example",
            "a.invalid",
            "box.local",
            "svc.internal",
            "nas.home.arpa",
            "127.0.0.1",
            "[::1]",
        ] {
            assert!(is_local_host(host), "{host}");
        }
        for host in [
            "example.com",
            "auth.example.org",
            "10.0.0.1",
            "0.0.0.0",
            "localhost.com",
        ] {
            assert!(!is_local_host(host), "{host}");
        }
    }

    #[test]
    fn host_names_and_labels() {
        assert!(is_host_name("auth.example.com"));
        assert!(is_host_name("localhost"));
        assert!(!is_host_name("auth.example.com:443"));
        assert!(!is_host_name("-bad.example"));
        assert!(!is_host_name("a..b"));
        assert!(is_dns_label("acme-1"));
        assert!(!is_dns_label("Acme"));
        assert!(!is_dns_label("-acme"));
        assert!(!is_dns_label(&"a".repeat(64)));
    }

    #[test]
    fn allowed_host_patterns() {
        for entry in ["auth.example.com", "*.example.com", "127.0.0.1", "::1"] {
            assert!(is_allowed_host_pattern(entry), "{entry}");
        }
        for entry in ["*", "https://x.com", "x.com:8080", "*.", "a.*.com"] {
            assert!(!is_allowed_host_pattern(entry), "{entry}");
        }
    }

    #[test]
    fn urls() {
        assert!(parse_http_url("https://auth.example.com/tenant").is_ok());
        assert!(parse_http_url("ftp://x.example").is_err());
        assert!(parse_http_url("auth.example.com").is_err());
    }
}
