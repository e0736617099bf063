//! Webhook subscriptions and deliveries (CONTRACTS.md "Webhooks (`svc-webhook-v1`)"): the
//! subscription record, its signing secret with the 32-bytes-of-entropy rule, its receiver URL,
//! and the delivery records the worker and the history endpoint share.

use crate::{DeliveryId, EventId, EventType, Rng, TenantId, WebhookId};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use std::collections::HashSet;
use std::fmt;
use time::OffsetDateTime;

/// Why a supplied secret is refused; each says what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// Longer than [`WebhookSecret::MAX_LEN`].
    #[error("a webhook secret is at most 256 characters")]
    TooLong,
    /// Spaces, control or non-ASCII characters.
    #[error(
        "a webhook secret uses printable ASCII characters only (no spaces); base64 or hex of random bytes is ideal"
    )]
    Charset,
    /// Too short for 256 bits even at the best density of its characters.
    #[error(
        "this secret carries at most {bits} bits of entropy and 256 are required (32 random bytes): use at least {needed} characters of this kind, e.g. base64 of 32 random bytes, or omit `secret` and one is generated"
    )]
    TooShort {
        /// The most the secret could carry.
        bits: u32,
        /// Characters needed with the same alphabet.
        needed: usize,
    },
    /// Too few distinct characters for its length.
    #[error(
        "this secret uses only {distinct} distinct characters; random secrets of this length use many more (use base64 or hex of 32 random bytes, or omit `secret`)"
    )]
    LowVariety {
        /// Distinct characters found.
        distinct: usize,
    },
    /// A run of characters appears twice (a pattern, not randomness).
    #[error(
        "this secret repeats the sequence {fragment:?}; random secrets do not repeat 8 characters (use base64 or hex of 32 random bytes, or omit `secret`)"
    )]
    Repetitive {
        /// The repeated run.
        fragment: String,
    },
    /// Mostly ascending, descending or repeated neighbours (`abcdef…`, `aaaa…`).
    #[error(
        "this secret is mostly a sequence of neighbouring characters (like abcd or 1111); use base64 or hex of 32 random bytes, or omit `secret`"
    )]
    Sequential,
}

/// A subscription's HMAC key: `whsec_` + base64 of 32 random bytes when generated, or a
/// caller-supplied string with at least 256 bits of entropy. The key is the UTF-8 bytes of the
/// whole string, prefix included, so every receiver computes the HMAC the same way. `Debug`
/// never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret(String);

impl fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WebhookSecret(<redacted>)")
    }
}

impl WebhookSecret {
    /// Prefix of generated secrets.
    pub const PREFIX: &'static str = "whsec_";
    /// Longest secret accepted.
    pub const MAX_LEN: usize = 256;
    /// Entropy a supplied secret must carry.
    pub const MIN_BITS: f64 = 256.0;

    /// A fresh secret: `whsec_` + base64 of 32 random bytes.
    pub fn generate(rng: &dyn Rng) -> Self {
        let mut bytes = [0u8; 32];
        rng.fill(&mut bytes);
        Self(format!("{}{}", Self::PREFIX, STANDARD.encode(bytes)))
    }

    /// Accepts a caller's secret only if it can carry 256 bits of entropy: long enough for its
    /// alphabet, varied, without repeated runs or long sequences. The estimate is deliberately
    /// an upper bound on what the string could hold (a secret that passes may still be weak,
    /// one that fails cannot be strong), so genuine random secrets always pass.
    pub fn parse(raw: &str) -> Result<Self, SecretError> {
        if raw.len() > Self::MAX_LEN {
            return Err(SecretError::TooLong);
        }
        if !raw.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(SecretError::Charset);
        }
        // The prefix is a label, not randomness.
        let body = raw.strip_prefix(Self::PREFIX).unwrap_or(raw);
        let alphabet = alphabet_size(body);
        let per_char = f64::from(alphabet).log2();
        let bits = per_char * body.len() as f64;
        if bits < Self::MIN_BITS {
            return Err(SecretError::TooShort {
                bits: bits.floor() as u32,
                needed: (Self::MIN_BITS / per_char.max(1.0)).ceil() as usize,
            });
        }
        let distinct = body.bytes().collect::<HashSet<u8>>().len();
        // A random string long enough for 256 bits shows most of its alphabet: 32+ characters
        // over 16 symbols show 15 on average, 78 digits show all 10.
        if distinct < (alphabet as usize * 3 / 5).min(12) {
            return Err(SecretError::LowVariety { distinct });
        }
        if let Some(fragment) = repeated_run(body, 8) {
            return Err(SecretError::Repetitive { fragment });
        }
        let bytes = body.as_bytes();
        let neighbours = bytes
            .windows(2)
            .filter(|w| w[0].abs_diff(w[1]) <= 1)
            .count();
        // Random text has few equal or adjacent neighbours (under 20% even for hex).
        if neighbours * 2 > bytes.len() {
            return Err(SecretError::Sequential);
        }
        Ok(Self(raw.to_owned()))
    }

    /// Rebuilds a stored secret (it was checked when it was set).
    pub fn from_stored(s: String) -> Self {
        Self(s)
    }

    /// The secret string, for signing and for showing once.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// Size of the smallest usual alphabet that contains every character of `s`: the union of
/// lowercase, uppercase, digits and the 32 ASCII symbols.
fn alphabet_size(s: &str) -> u32 {
    let has = |f: fn(&u8) -> bool| s.as_bytes().iter().any(f);
    let mut size = 0;
    if has(u8::is_ascii_lowercase) {
        size += 26;
    }
    if has(u8::is_ascii_uppercase) {
        size += 26;
    }
    if has(u8::is_ascii_digit) {
        size += 10;
    }
    if has(u8::is_ascii_punctuation) {
        size += 32;
    }
    size.max(2)
}

/// The first run of `len` characters that occurs twice in `s` (overlaps included).
fn repeated_run(s: &str, len: usize) -> Option<String> {
    let bytes = s.as_bytes();
    let mut seen = HashSet::new();
    for window in bytes.windows(len) {
        if !seen.insert(window) {
            return Some(String::from_utf8_lossy(window).into_owned());
        }
    }
    None
}

/// Why a receiver URL is refused at registration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookUrlError {
    /// Not an absolute URL.
    #[error("url must be an absolute https URL")]
    NotAUrl,
    /// Longer than 2048 characters.
    #[error("url is longer than 2048 characters")]
    TooLong,
    /// A scheme other than http(s).
    #[error("url must use https (http only outside production)")]
    Scheme,
    /// `user:password@` in the URL: credentials belong in the signature, not the address.
    #[error("url must not carry a user name or password")]
    Userinfo,
    /// A `#fragment`, which is never sent.
    #[error("url must not have a fragment")]
    Fragment,
}

/// A receiver URL that parsed and passed the static rules. Whether it may be reached (https,
/// port, public address) is the egress policy's decision on every attempt.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WebhookUrl(url::Url);

impl WebhookUrl {
    /// Longest URL accepted.
    pub const MAX_LEN: usize = 2048;

    /// Parses a receiver URL.
    pub fn parse(raw: &str) -> Result<Self, WebhookUrlError> {
        if raw.len() > Self::MAX_LEN {
            return Err(WebhookUrlError::TooLong);
        }
        let url = url::Url::parse(raw).map_err(|_| WebhookUrlError::NotAUrl)?;
        if !matches!(url.scheme(), "https" | "http") {
            return Err(WebhookUrlError::Scheme);
        }
        if url.host().is_none() {
            return Err(WebhookUrlError::NotAUrl);
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(WebhookUrlError::Userinfo);
        }
        if url.fragment().is_some() {
            return Err(WebhookUrlError::Fragment);
        }
        Ok(Self(url))
    }

    /// The parsed URL.
    pub fn url(&self) -> &url::Url {
        &self.0
    }

    /// The normalised spelling.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Display for WebhookUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_str())
    }
}

/// Why a receiver may not be reached under the current [`TargetPolicy`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Plain http where only https is allowed.
    #[error("url must use https")]
    NotHttps,
    /// A port other than 443 where only the standard port is allowed.
    #[error(
        "url must use the standard https port 443 (security.webhook_allow_non_standard_ports is off)"
    )]
    NonStandardPort,
    /// An IP literal (or a name resolving to an address) that is loopback, private, link-local
    /// or otherwise not public.
    #[error(
        "url points to an internal address ({0}); receivers must be reachable on the public internet"
    )]
    InternalAddress(std::net::IpAddr),
}

/// Where receivers may be, CONTRACTS.md "Webhooks": in production `https` on port 443 (unless
/// non-standard ports are allowed) at public addresses only; outside production, anything
/// unless internal targets are switched off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetPolicy {
    /// Refuse plain `http`.
    pub https_only: bool,
    /// Refuse ports other than 443.
    pub standard_port_only: bool,
    /// Refuse addresses that are not public (checked again after DNS resolution).
    pub public_only: bool,
}

impl TargetPolicy {
    /// Checks what can be checked without DNS: scheme, port, and an IP-literal host.
    pub fn check(&self, url: &WebhookUrl) -> Result<(), TargetError> {
        let url = url.url();
        if self.https_only && url.scheme() != "https" {
            return Err(TargetError::NotHttps);
        }
        if self.standard_port_only && url.port_or_known_default() != Some(443) {
            return Err(TargetError::NonStandardPort);
        }
        if self.public_only {
            let literal = match url.host() {
                Some(url::Host::Ipv4(v4)) => Some(std::net::IpAddr::V4(v4)),
                Some(url::Host::Ipv6(v6)) => Some(std::net::IpAddr::V6(v6)),
                _ => None,
            };
            if let Some(ip) = literal.filter(|ip| !is_public_ip(*ip)) {
                return Err(TargetError::InternalAddress(ip));
            }
        }
        Ok(())
    }
}

/// Whether `ip` is an address a tenant-supplied URL may reach: not loopback, private (RFC
/// 1918, RFC 4193), link-local (169.254/16 holds cloud metadata), carrier-grade NAT, shared,
/// documentation, benchmarking, multicast, broadcast, reserved or unspecified; IPv4-mapped,
/// IPv4-compatible, NAT64 and 6to4 forms are judged by the IPv4 address they carry.
pub fn is_public_ip(ip: std::net::IpAddr) -> bool {
    use std::net::{IpAddr, Ipv4Addr};
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b)) // carrier-grade NAT, RFC 6598
                || (a == 192 && b == 0 && c == 0) // IETF protocol assignments, RFC 6890
                || (a == 198 && (18..20).contains(&b)) // benchmarking, RFC 2544
                || a >= 240) // reserved, RFC 1112
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_ip(IpAddr::V4(v4));
            }
            let s = v6.segments();
            // NAT64 (64:ff9b::/96) and IPv4-compatible (::a.b.c.d) carry an IPv4 address.
            if (s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0; 4]) || s[0..6] == [0; 6] {
                let [.., hi, lo] = s;
                let v4 = Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
                return !v6.is_unspecified() && !v6.is_loopback() && is_public_ip(IpAddr::V4(v4));
            }
            // 6to4 (2002::/16) carries an IPv4 address in segments 1 and 2.
            if s[0] == 0x2002 {
                let v4 =
                    Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
                return is_public_ip(IpAddr::V4(v4));
            }
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local, RFC 4193
                || (s[0] & 0xffc0) == 0xfe80 // link-local
                || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || (s[0] == 0x0100 && s[1..4] == [0; 3])) // discard-only, RFC 6666
        }
    }
}

/// A tenant's webhook subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// `whk_…`
    pub id: WebhookId,
    /// The owning tenant.
    pub tenant_id: TenantId,
    /// Where deliveries go.
    pub url: WebhookUrl,
    /// The types delivered (sorted, no duplicates, never empty).
    pub event_types: Vec<EventType>,
    /// What it is for, or who owns it.
    pub description: Option<String>,
    /// Deliveries go out only while true.
    pub active: bool,
    /// The current signing secret.
    pub secret: WebhookSecret,
    /// The secret before the last rotation and until when it still signs (both signatures are
    /// sent meanwhile).
    pub previous_secret: Option<(WebhookSecret, OffsetDateTime)>,
    /// Why the service switched it off (a 410 from the receiver), until someone reactivates it.
    pub disabled_reason: Option<String>,
    /// Creation time.
    pub created_at: OffsetDateTime,
    /// Last change.
    pub updated_at: OffsetDateTime,
}

impl Subscription {
    /// Whether an event of `event_type` is for this subscription.
    pub fn wants(&self, event_type: EventType) -> bool {
        self.event_types.contains(&event_type)
    }

    /// The secrets that sign at `now`: the current one, then the previous one while its
    /// overlap lasts.
    pub fn signing_secrets(&self, now: OffsetDateTime) -> Vec<&WebhookSecret> {
        let mut secrets = vec![&self.secret];
        if let Some((previous, until)) = &self.previous_secret
            && now < *until
        {
            secrets.push(previous);
        }
        secrets
    }
}

/// Where a delivery stands (CONTRACTS.md: `pending|succeeded|failed|exhausted`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    /// Not attempted yet (or claimed by a worker right now).
    Pending,
    /// A receiver answered 2xx.
    Succeeded,
    /// The last attempt failed; another is scheduled at `next_attempt_at`.
    Failed,
    /// No attempt will follow: the schedule ran out, the receiver answered 410, or the
    /// subscription refused it. Kept for inspection and redelivery.
    Exhausted,
}

impl DeliveryStatus {
    /// Stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Exhausted => "exhausted",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(Self::Pending),
            "succeeded" => Some(Self::Succeeded),
            "failed" => Some(Self::Failed),
            "exhausted" => Some(Self::Exhausted),
            _ => None,
        }
    }

    /// Whether more attempts may follow.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Succeeded | Self::Exhausted)
    }
}

/// One event on its way to one subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// `dlv_…`, the `X-SVC-Delivery` header, the same on every attempt.
    pub id: DeliveryId,
    /// The owning tenant.
    pub tenant_id: TenantId,
    /// The subscription.
    pub webhook_id: WebhookId,
    /// The event delivered.
    pub event_id: EventId,
    /// Its type.
    pub event_type: EventType,
    /// Where it stands.
    pub status: DeliveryStatus,
    /// Attempts started so far.
    pub attempts: u32,
    /// When the next attempt is due (pending and failed deliveries).
    pub next_attempt_at: Option<OffsetDateTime>,
    /// The HTTP status of the last answered attempt.
    pub last_status_code: Option<u16>,
    /// What went wrong last (never a secret or a response body beyond a short excerpt).
    pub last_error: Option<String>,
    /// The delivery this one re-sends, for manual redeliveries.
    pub redelivery_of: Option<DeliveryId>,
    /// Creation time.
    pub created_at: OffsetDateTime,
    /// Last change.
    pub updated_at: OffsetDateTime,
}

/// One HTTP attempt of a delivery, for the history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryAttempt {
    /// 1 for the first attempt.
    pub number: u32,
    /// When it started.
    pub started_at: OffsetDateTime,
    /// How long until the answer (or the failure), in milliseconds.
    pub duration_ms: u32,
    /// The receiver's status, when it answered.
    pub status_code: Option<u16>,
    /// What went wrong, when it failed.
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{OsRandom, SeededRandom};
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
        let rng = SeededRandom::new(seed);
        let mut bytes = vec![0u8; n];
        rng.fill(&mut bytes);
        bytes
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn generated_secrets_pass_their_own_rule_and_differ() {
        let a = WebhookSecret::generate(&OsRandom);
        let b = WebhookSecret::generate(&OsRandom);
        assert!(a.expose().starts_with("whsec_"));
        assert_eq!(a.expose().len(), 6 + 44);
        assert_ne!(a, b);
        assert_eq!(WebhookSecret::parse(a.expose()), Ok(a.clone()));
        assert_eq!(format!("{a:?}"), "WebhookSecret(<redacted>)");
    }

    #[test]
    fn genuine_random_secrets_of_32_bytes_are_accepted_in_every_usual_encoding() {
        for seed in 0..500 {
            let bytes = random_bytes(32, seed);
            for encoded in [
                hex(&bytes),
                hex(&bytes).to_uppercase(),
                STANDARD.encode(&bytes),
                URL_SAFE_NO_PAD.encode(&bytes),
                format!("whsec_{}", STANDARD.encode(&bytes)),
            ] {
                assert!(
                    WebhookSecret::parse(&encoded).is_ok(),
                    "seed {seed}: {encoded} refused: {:?}",
                    WebhookSecret::parse(&encoded)
                );
            }
        }
    }

    #[test]
    fn a_20_byte_secret_is_refused_with_the_numbers() {
        let hex20 = hex(&random_bytes(20, 1));
        let err = WebhookSecret::parse(&hex20).unwrap_err();
        assert!(
            matches!(
                err,
                SecretError::TooShort {
                    bits: 206,
                    needed: 50
                }
            ),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(text.contains("256 are required"), "{text}");
        assert!(text.contains("omit `secret`"), "{text}");
        let b64 = STANDARD.encode(random_bytes(20, 2));
        assert!(matches!(
            WebhookSecret::parse(&b64),
            Err(SecretError::TooShort { .. })
        ));
        assert!(matches!(
            WebhookSecret::parse("whsec_short"),
            Err(SecretError::TooShort { .. })
        ));
    }

    #[test]
    fn low_variety_repetitive_and_sequential_secrets_are_refused() {
        assert!(matches!(
            WebhookSecret::parse(&"ab".repeat(60)),
            Err(SecretError::LowVariety { distinct: 2 })
        ));
        assert!(matches!(
            WebhookSecret::parse(&"a".repeat(200)),
            Err(SecretError::LowVariety { .. })
        ));
        let pattern = "Tr0ub4dor&3xyzQ!".repeat(5);
        assert!(matches!(
            WebhookSecret::parse(&pattern),
            Err(SecretError::Repetitive { .. })
        ));
        let alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        assert_eq!(WebhookSecret::parse(alphabet), Err(SecretError::Sequential));
        assert_eq!(
            WebhookSecret::parse(&"x".repeat(300)),
            Err(SecretError::TooLong)
        );
        assert_eq!(
            WebhookSecret::parse(&format!("{} ", hex(&random_bytes(32, 3)))),
            Err(SecretError::Charset)
        );
        assert_eq!(
            WebhookSecret::parse(&format!("é{}", hex(&random_bytes(32, 3)))),
            Err(SecretError::Charset)
        );
    }

    #[test]
    fn receiver_urls_follow_the_static_rules() {
        assert!(WebhookUrl::parse("https://hooks.example.com/svc?x=1").is_ok());
        assert!(WebhookUrl::parse("http://127.0.0.1:9000/hook").is_ok());
        for (raw, err) in [
            ("not a url", WebhookUrlError::NotAUrl),
            ("/relative", WebhookUrlError::NotAUrl),
            ("ftp://example.com/x", WebhookUrlError::Scheme),
            ("javascript:alert(1)", WebhookUrlError::Scheme),
            ("file:///etc/passwd", WebhookUrlError::Scheme),
            ("https://user:pw@example.com/", WebhookUrlError::Userinfo),
            ("https://user@example.com/", WebhookUrlError::Userinfo),
            ("https://example.com/#frag", WebhookUrlError::Fragment),
        ] {
            assert_eq!(WebhookUrl::parse(raw), Err(err), "{raw}");
        }
        let long = format!("https://example.com/{}", "a".repeat(2100));
        assert_eq!(WebhookUrl::parse(&long), Err(WebhookUrlError::TooLong));
    }

    #[test]
    fn internal_addresses_are_not_public_in_any_spelling() {
        for internal in [
            "127.0.0.1",
            "127.255.255.254",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "0.1.2.3",
            "255.255.255.255",
            "224.0.0.1",
            "240.0.0.1",
            "192.0.0.8",
            "198.18.0.1",
            "198.51.100.7",
            "::1",
            "::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "2002:c0a8:0101::1",
            "2001:db8::1",
            "100::1",
        ] {
            let ip: std::net::IpAddr = internal.parse().unwrap();
            assert!(!is_public_ip(ip), "{internal}");
        }
        for public in [
            "93.184.216.34",
            "1.1.1.1",
            "8.8.8.8",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:0808:0808::1",
        ] {
            let ip: std::net::IpAddr = public.parse().unwrap();
            assert!(is_public_ip(ip), "{public}");
        }
    }

    #[test]
    fn the_production_policy_refuses_http_other_ports_and_internal_literals() {
        let production = TargetPolicy {
            https_only: true,
            standard_port_only: true,
            public_only: true,
        };
        let check = |raw: &str| production.check(&WebhookUrl::parse(raw).unwrap());
        assert_eq!(check("https://hooks.example.com/x"), Ok(()));
        assert_eq!(check("https://hooks.example.com:443/x"), Ok(()));
        assert_eq!(
            check("http://hooks.example.com/x"),
            Err(TargetError::NotHttps)
        );
        assert_eq!(
            check("https://hooks.example.com:8443/x"),
            Err(TargetError::NonStandardPort)
        );
        for literal in [
            "https://127.0.0.1/",
            "https://2130706433/",
            "https://0x7f000001/",
            "https://0177.0.0.1/",
            "https://127.1/",
            "https://[::1]/",
            "https://[::ffff:127.0.0.1]/",
            "https://[::ffff:a9fe:a9fe]/",
            "https://169.254.169.254/latest/meta-data/",
            "https://10.0.0.1/",
        ] {
            assert!(
                matches!(check(literal), Err(TargetError::InternalAddress(_))),
                "{literal}: {:?}",
                check(literal)
            );
        }
        let ports_allowed = TargetPolicy {
            standard_port_only: false,
            ..production
        };
        assert_eq!(
            ports_allowed.check(&WebhookUrl::parse("https://hooks.example.com:8443/").unwrap()),
            Ok(())
        );
        let development = TargetPolicy {
            https_only: false,
            standard_port_only: false,
            public_only: false,
        };
        assert_eq!(
            development.check(&WebhookUrl::parse("http://127.0.0.1:9000/").unwrap()),
            Ok(())
        );
    }

    #[test]
    fn the_previous_secret_signs_only_during_its_overlap() {
        let now = OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_000);
        let rng = SeededRandom::new(4);
        let clock = crate::ManualClock::new(now);
        let mut sub = Subscription {
            id: WebhookId::generate(&clock, &rng),
            tenant_id: TenantId::generate(&clock, &rng),
            url: WebhookUrl::parse("https://example.com/h").unwrap(),
            event_types: vec![EventType::LoginSuccess],
            description: None,
            active: true,
            secret: WebhookSecret::generate(&rng),
            previous_secret: None,
            disabled_reason: None,
            created_at: now,
            updated_at: now,
        };
        assert_eq!(sub.signing_secrets(now).len(), 1);
        let old = WebhookSecret::generate(&rng);
        sub.previous_secret = Some((old.clone(), now + time::Duration::hours(1)));
        assert_eq!(sub.signing_secrets(now), vec![&sub.secret, &old]);
        assert_eq!(
            sub.signing_secrets(now + time::Duration::hours(1)),
            vec![&sub.secret]
        );
        assert!(sub.wants(EventType::LoginSuccess));
        assert!(!sub.wants(EventType::LoginFailure));
    }
}
