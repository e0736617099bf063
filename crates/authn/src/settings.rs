//! The engine's tunables, in its own terms. The runtime fills them from `[auth]`; this crate
//! never reads configuration itself.

use crate::texts::MailTexts;
use std::time::Duration;

/// Limits and lifetimes of hosted sign-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthnSettings {
    /// Failed sign-ins for one account (counted within `brute_force_lockout`) before it locks.
    pub brute_force_max_attempts: u32,
    /// How long an account stays locked, and the window its failures are counted in.
    pub brute_force_lockout: Duration,
    /// Password checks one client IP may make per `password_verify_ip_window`.
    pub password_verify_ip_max_attempts: u32,
    /// Window of `password_verify_ip_max_attempts`.
    pub password_verify_ip_window: Duration,
    /// Sign-ups (and password-reset requests, counted separately) one IP may make per window.
    pub registration_max: u32,
    /// Window of `registration_max`.
    pub registration_window: Duration,
    /// Absolute lifetime of a browser session.
    pub session_lifetime: Duration,
    /// Lifetime of an email-verification link.
    pub verify_email_link_lifetime: Duration,
    /// Lifetime of a password-reset link.
    pub reset_link_lifetime: Duration,
    /// Lifetime of an invitation link.
    pub invitation_link_lifetime: Duration,
    /// The wording of every mail ([`crate::MailTexts::for_language`]).
    pub mail_texts: &'static MailTexts,
}

impl Default for AuthnSettings {
    /// The `[auth]` defaults, 14-day sessions, links valid 24 h (verification), 1 h (reset)
    /// and 7 days (invitation), English mail.
    fn default() -> Self {
        Self {
            brute_force_max_attempts: 5,
            brute_force_lockout: Duration::from_secs(900),
            password_verify_ip_max_attempts: 20,
            password_verify_ip_window: Duration::from_secs(300),
            registration_max: 10,
            registration_window: Duration::from_secs(3600),
            session_lifetime: Duration::from_secs(14 * 24 * 3600),
            verify_email_link_lifetime: Duration::from_secs(24 * 3600),
            reset_link_lifetime: Duration::from_secs(3600),
            invitation_link_lifetime: Duration::from_secs(7 * 24 * 3600),
            mail_texts: MailTexts::for_language(None),
        }
    }
}

/// What the engine knows about the browser behind a request, for limits and the sessions list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientInfo {
    /// Client address, established through trusted proxies only; `None` skips per-IP limits.
    pub ip: Option<std::net::IpAddr>,
    /// `User-Agent` header (truncated to 256 characters when stored).
    pub user_agent: Option<String>,
    /// The browser's device cookie (`dvc_…`), which recognises it across sign-ins.
    pub device: Option<String>,
}

impl ClientInfo {
    /// The stored form of the device cookie, when it is one of ours.
    pub(crate) fn device_hash(&self) -> Option<svc_domain::SecretHash> {
        self.device
            .as_deref()
            .filter(|d| d.starts_with(crate::DEVICE_COOKIE_PREFIX) && d.len() <= 64)
            .map(svc_domain::SecretHash::of)
    }
}

/// `std` to `time` durations, saturating (configured values are far below the limit).
pub(crate) fn span(d: Duration) -> time::Duration {
    time::Duration::try_from(d).unwrap_or(time::Duration::MAX)
}

/// `time` to `std` durations; negative spans are zero.
pub(crate) fn std_span(d: time::Duration) -> Duration {
    Duration::try_from(d).unwrap_or(Duration::ZERO)
}
