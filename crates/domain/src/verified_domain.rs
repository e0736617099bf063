//! Verified domains of organizations: an organization claims a DNS name ([`DomainName`]) and
//! proves it controls it by publishing the claim's token, either as a TXT record at
//! `_svc-verification.<domain>` ([`DNS_TXT_LABEL`]) or as the body of
//! `https://<domain>/.well-known/svc-domain-verification.txt` ([`WELL_KNOWN_PATH`]), both holding
//! the line `svc-domain-verification=<token>` ([`VerifiedDomain::proof`]).
//!
//! A name may be claimed by several organizations of a tenant at once (each gets its own token,
//! so one organization's record never proves another's claim), but verified by at most one. A
//! verified domain is what auto-join matches a new person's verified email domain against, and
//! the key home-realm discovery will use.

use crate::{DomainId, OrganizationId, RoleKey, TenantId};
use std::collections::BTreeSet;
use std::fmt;
use time::OffsetDateTime;

/// The label prepended to a domain to name its verification TXT record.
pub const DNS_TXT_LABEL: &str = "_svc-verification";
/// The path of the HTTPS verification file on the domain's web server.
pub const WELL_KNOWN_PATH: &str = "/.well-known/svc-domain-verification.txt";
/// What precedes the token in the TXT value and the HTTPS file.
pub const PROOF_PREFIX: &str = "svc-domain-verification=";
/// The most domains one organization may claim.
pub const MAX_DOMAINS_PER_ORGANIZATION: usize = 50;
/// Longest domain name accepted, in octets (RFC 1035 §2.3.4, without the trailing dot).
pub const MAX_DOMAIN_NAME_LEN: usize = 253;

/// Second-level labels that, under a two-letter country code, form a public suffix (`co.uk`,
/// `com.au`, `ac.jp`): nobody can prove such a name for one organization. A cheap stand-in for
/// the Public Suffix List, which this crate does not carry; a suffix it misses (`github.io`)
/// still needs its TXT record or file published, which its operator controls.
const SHARED_SECOND_LEVELS: [&str; 10] = [
    "ac", "co", "com", "edu", "gov", "mil", "net", "or", "org", "ne",
];

/// Why a domain name was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DomainNameError {
    /// Not a DNS name of letters, digits and inner hyphens.
    #[error(
        "a domain name is two or more dot-separated labels of 1 to 63 letters, digits and inner \
         hyphens, at most 253 characters, without a trailing dot"
    )]
    Malformed,
    /// An IP address, not a name.
    #[error("an IP address is not a domain name")]
    IpAddress,
    /// A single label (`localhost`, `com`).
    #[error("a domain name has at least two labels (example.com)")]
    SingleLabel,
    /// A public suffix under which anyone registers names (`co.uk`).
    #[error("a public suffix (such as co.uk) cannot be claimed")]
    PublicSuffix,
}

/// A domain name as claimed: lowercase ASCII, internationalized names in their IDNA A-label form
/// (`xn--bcher-kva.example`; a U-label such as `bücher.example` is converted), at least two
/// labels of 1 to 63 letters, digits and inner hyphens, at most 253 characters, no trailing dot,
/// never an IP address.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct DomainName(String);

impl DomainName {
    /// Parses a domain name; uppercase is folded (DNS names are case-insensitive).
    pub fn parse(raw: &str) -> Result<Self, DomainNameError> {
        if raw.is_empty() || raw.ends_with('.') || raw.len() > 4 * MAX_DOMAIN_NAME_LEN {
            return Err(DomainNameError::Malformed);
        }
        if raw.parse::<std::net::IpAddr>().is_ok() || raw.starts_with('[') {
            return Err(DomainNameError::IpAddress);
        }
        let ascii = if raw.is_ascii() {
            raw.to_ascii_lowercase()
        } else {
            // UTS #46 processing through the URL parser (the WHATWG host parser): U-labels become
            // A-labels; what it cannot map is refused. Its looser rules are checked below.
            match url::Host::parse(raw) {
                Ok(url::Host::Domain(d)) => d,
                Ok(_) => return Err(DomainNameError::IpAddress),
                Err(_) => return Err(DomainNameError::Malformed),
            }
        };
        let labels: Vec<&str> = ascii.split('.').collect();
        let label_ok = |l: &&str| {
            (1..=63).contains(&l.len())
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        };
        if ascii.len() > MAX_DOMAIN_NAME_LEN || !labels.iter().all(label_ok) {
            return Err(DomainNameError::Malformed);
        }
        if labels.len() < 2 {
            return Err(DomainNameError::SingleLabel);
        }
        // A top-level label is never all digits; `1.2.3.4` slipped past nothing above only when
        // written oddly (`1.2.3.04`), and is no name anyway.
        if labels
            .last()
            .is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(DomainNameError::IpAddress);
        }
        if let [second, top] = labels.as_slice()
            && top.len() == 2
            && SHARED_SECOND_LEVELS.contains(second)
        {
            return Err(DomainNameError::PublicSuffix);
        }
        Ok(Self(ascii))
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The domain of an email address (the part after the last `@`), as a domain name; `None`
    /// when it is not one. Auto-join matches it exactly: `eu.example.com` is not `example.com`.
    pub fn of_email(email: &str) -> Option<Self> {
        let (_, domain) = email.rsplit_once('@')?;
        Self::parse(domain).ok()
    }

    /// The name of the TXT record that proves a claim: `_svc-verification.<domain>`.
    pub fn txt_record_name(&self) -> String {
        format!("{DNS_TXT_LABEL}.{}", self.0)
    }

    /// The URL of the file that proves a claim over HTTPS.
    pub fn well_known_url(&self) -> String {
        format!("https://{}{WELL_KNOWN_PATH}", self.0)
    }
}

impl fmt::Display for DomainName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a claim stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DomainStatus {
    /// Claimed; the proof has not been found yet.
    Pending,
    /// Proven: the organization controls the name.
    Verified,
}

impl DomainStatus {
    /// The stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Verified => "verified",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(Self::Pending),
            "verified" => Some(Self::Verified),
            _ => None,
        }
    }
}

/// How a claim is proven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerificationMethod {
    /// A TXT record at `_svc-verification.<domain>`.
    DnsTxt,
    /// The file `https://<domain>/.well-known/svc-domain-verification.txt`.
    Https,
}

impl VerificationMethod {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DnsTxt => "dns_txt",
            Self::Https => "https",
        }
    }
}

/// A domain claimed by an organization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedDomain {
    /// Durable id (`dom_…`).
    pub id: DomainId,
    /// Owner.
    pub tenant_id: TenantId,
    /// The organization claiming it.
    pub organization_id: OrganizationId,
    /// The name claimed.
    pub name: DomainName,
    /// Pending until proven.
    pub status: DomainStatus,
    /// The random token this claim's proof must carry (not a secret: it is published).
    pub token: String,
    /// When it was proven.
    pub verified_at: Option<OffsetDateTime>,
    /// When its proof was last looked for.
    pub last_checked_at: Option<OffsetDateTime>,
    /// Whether people who sign up with a verified address at this domain join the
    /// organization (only once the domain is verified).
    pub auto_join: bool,
    /// The organization roles they join with: never empty.
    pub auto_join_roles: BTreeSet<RoleKey>,
    /// Creation time.
    pub created_at: OffsetDateTime,
    /// Last change; the revision `If-Match` checks.
    pub updated_at: OffsetDateTime,
}

impl VerifiedDomain {
    /// The line a proof must hold: `svc-domain-verification=<token>`.
    pub fn proof(&self) -> String {
        format!("{PROOF_PREFIX}{}", self.token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lowercase_multi_label_dns_names() {
        for (raw, parsed) in [
            ("example.com", "example.com"),
            ("Example.COM", "example.com"),
            ("a.b.c.example.org", "a.b.c.example.org"),
            ("xn--bcher-kva.example", "xn--bcher-kva.example"),
            ("bücher.example", "xn--bcher-kva.example"),
            ("BÜCHER.example", "xn--bcher-kva.example"),
            ("9lives.io", "9lives.io"),
            ("acme.co.uk", "acme.co.uk"),
        ] {
            assert_eq!(DomainName::parse(raw).unwrap().as_str(), parsed, "{raw}");
        }
        let long_label = format!("{}.com", "a".repeat(64));
        let too_long = format!("{}.com", vec!["a".repeat(60); 5].join("."));
        for (raw, why) in [
            ("", DomainNameError::Malformed),
            ("example.com.", DomainNameError::Malformed),
            (".example.com", DomainNameError::Malformed),
            ("exa mple.com", DomainNameError::Malformed),
            ("-acme.com", DomainNameError::Malformed),
            ("acme-.com", DomainNameError::Malformed),
            ("ac_me.com", DomainNameError::Malformed),
            ("a..com", DomainNameError::Malformed),
            ("*.example.com", DomainNameError::Malformed),
            ("example.com/x", DomainNameError::Malformed),
            ("user@example.com", DomainNameError::Malformed),
            (&long_label, DomainNameError::Malformed),
            (&too_long, DomainNameError::Malformed),
            ("localhost", DomainNameError::SingleLabel),
            ("com", DomainNameError::SingleLabel),
            ("127.0.0.1", DomainNameError::IpAddress),
            ("::1", DomainNameError::IpAddress),
            ("[::1]", DomainNameError::IpAddress),
            ("1.2.3.04", DomainNameError::IpAddress),
            ("co.uk", DomainNameError::PublicSuffix),
            ("com.au", DomainNameError::PublicSuffix),
        ] {
            assert_eq!(DomainName::parse(raw), Err(why), "{raw:?}");
        }
        assert!(too_long.len() > MAX_DOMAIN_NAME_LEN);
    }

    #[test]
    fn email_domains_match_exactly() {
        assert_eq!(
            DomainName::of_email("ada@Example.com").unwrap().as_str(),
            "example.com"
        );
        assert_eq!(
            DomainName::of_email("ada@eu.example.com").unwrap().as_str(),
            "eu.example.com"
        );
        assert_eq!(DomainName::of_email("ada@localhost"), None);
        assert_eq!(DomainName::of_email("nobody"), None);
    }

    #[test]
    fn proofs_name_their_record_url_and_line() {
        let name = DomainName::parse("example.com").unwrap();
        assert_eq!(name.txt_record_name(), "_svc-verification.example.com");
        assert_eq!(
            name.well_known_url(),
            "https://example.com/.well-known/svc-domain-verification.txt"
        );
        for s in [DomainStatus::Pending, DomainStatus::Verified] {
            assert_eq!(DomainStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(DomainStatus::parse("Verified"), None);
    }
}
