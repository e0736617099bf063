//! `[email]`, `[captcha]` and `[hibp]`: mail delivery and the abuse controls of the auth plane.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::secret::Secret;
use crate::values::LogSink;

/// How email is sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EmailProvider {
    /// Write messages to `[email.log].sink` (development only).
    #[default]
    Log,
    /// Send through `[email.smtp]`.
    Smtp,
}

/// What a check does when its upstream service cannot be reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FailMode {
    /// Let the request through (not allowed in production).
    FailOpen,
    /// Refuse the request.
    #[default]
    FailClosed,
}

/// The `log` provider's output.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LogDelivery {
    /// "stdout", "stderr" or `"file:<path>"` (appends JSON Lines with full message bodies).
    /// Default: "stdout".
    pub sink: LogSink,
}

/// Outgoing email.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EmailConfig {
    /// Provider: "log" (development only) or "smtp". Default: "log".
    pub provider: EmailProvider,
    /// Sender address, e.g. "Example <no-reply@example.com>". Required for "smtp". No default.
    #[schemars(example = &"no-reply@example.com")]
    pub from: Option<String>,
    /// SMTP relay, used when `provider = "smtp"`.
    pub smtp: SmtpConfig,
    /// Output of the "log" provider.
    pub log: LogDelivery,
}

/// SMTP relay settings.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SmtpConfig {
    /// Relay host name. Required for "smtp". No default.
    #[schemars(example = &"smtp.example.com")]
    pub host: Option<String>,
    /// Relay port. Default: 587. Allowed range: 1..=65535.
    pub port: u16,
    /// Login user name. No default.
    #[schemars(example = &"svc")]
    pub username: Option<String>,
    /// Login password; redacted when printed. No default.
    #[schemars(example = &"change-me")]
    pub password: Option<Secret>,
    /// Upgrade the connection with STARTTLS (must stay true in production). Default: true.
    pub starttls: bool,
}

impl Default for SmtpConfig {
    fn default() -> Self {
        Self {
            host: None,
            port: 587,
            username: None,
            password: None,
            starttls: true,
        }
    }
}

/// The CAPTCHA service the hosted pages embed and the server asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CaptchaProvider {
    /// Cloudflare Turnstile (`cf-turnstile-response`).
    Turnstile,
    /// hCaptcha (`h-captcha-response`).
    Hcaptcha,
    /// Google reCAPTCHA v3, score-based and invisible (`g-recaptcha-response`).
    Recaptcha,
}

impl CaptchaProvider {
    /// The provider's own server-side verification endpoint.
    #[must_use]
    pub fn default_verify_url(self) -> &'static str {
        match self {
            Self::Turnstile => "https://challenges.cloudflare.com/turnstile/v0/siteverify",
            Self::Hcaptcha => "https://api.hcaptcha.com/siteverify",
            Self::Recaptcha => "https://www.google.com/recaptcha/api/siteverify",
        }
    }

    /// The name used in the configuration.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Turnstile => "turnstile",
            Self::Hcaptcha => "hcaptcha",
            Self::Recaptcha => "recaptcha",
        }
    }
}

/// CAPTCHA on the hosted pages (an auth-plane abuse control): when enabled, sign-up and
/// password-reset requests always need a solved CAPTCHA, and sign-in needs one once an account
/// or a client address has `after_failed_sign_ins` recent failures. The token is verified
/// server-side with the provider before anything else happens.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CaptchaConfig {
    /// Require a CAPTCHA (must be true in production). Needs `provider`, `site_key` and
    /// `secret_key`. Default: false.
    pub enabled: bool,
    /// "turnstile" (Cloudflare Turnstile), "hcaptcha" or "recaptcha" (Google reCAPTCHA v3).
    /// Required when enabled. No default.
    #[schemars(example = &"turnstile")]
    pub provider: Option<CaptchaProvider>,
    /// The public site key the pages embed in the widget. Required when enabled. No default.
    #[schemars(example = &"0x4AAAAAAA-site-key")]
    pub site_key: Option<String>,
    /// Server-side verification secret; redacted when printed, never logged. Required when
    /// enabled. No default.
    #[schemars(example = &"change-me")]
    pub secret_key: Option<Secret>,
    /// Verification endpoint (https in production). Default: the provider's own
    /// ("https://challenges.cloudflare.com/turnstile/v0/siteverify",
    /// "https://api.hcaptcha.com/siteverify" or
    /// "https://www.google.com/recaptcha/api/siteverify").
    #[schemars(example = &"https://challenges.cloudflare.com/turnstile/v0/siteverify")]
    pub verify_url: Option<String>,
    /// When verification is unreachable: "fail-open" (let the form through and log a warning;
    /// not in production) or "fail-closed" (refuse it). Default: "fail-closed".
    pub fail_mode: FailMode,
    /// Lowest reCAPTCHA v3 score accepted (0.0 is a bot, 1.0 a person); ignored by the other
    /// providers. Default: 0.5. Allowed range: 0.0 to 1.0.
    pub min_score: f64,
    /// Sign-in asks for a CAPTCHA once the account or the client address has this many failed
    /// sign-ins within `auth.brute_force_lockout_secs` (0: always). Default: 3. Allowed range:
    /// 0..=1000.
    pub after_failed_sign_ins: u32,
    /// Longest wait for the verification endpoint, in milliseconds. Default: 3000. Allowed
    /// range: 100..=30000.
    pub timeout_ms: u32,
}

impl Default for CaptchaConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            provider: None,
            site_key: None,
            secret_key: None,
            verify_url: None,
            fail_mode: FailMode::FailClosed,
            min_score: 0.5,
            after_failed_sign_ins: 3,
            timeout_ms: 3_000,
        }
    }
}

impl CaptchaConfig {
    /// `min_score` at the precision providers score with (three decimals): a value set through
    /// the environment arrives as the nearest `f32` (0.3 → 0.30000001…), which would refuse a
    /// score of exactly 0.3.
    #[must_use]
    pub fn score_threshold(&self) -> f64 {
        (self.min_score * 1_000.0).round() / 1_000.0
    }

    /// The verification endpoint in force: `verify_url`, or the provider's default.
    #[must_use]
    pub fn effective_verify_url(&self) -> Option<String> {
        self.verify_url.clone().or_else(|| {
            self.provider
                .map(|provider| provider.default_verify_url().to_owned())
        })
    }
}

/// Have-I-Been-Pwned breached-password check (an auth-plane abuse control).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HibpConfig {
    /// Refuse breached passwords (must be true in production). Default: false.
    pub enabled: bool,
    /// When the range API is unreachable: "fail-open" (not in production) or "fail-closed".
    /// Default: "fail-closed".
    pub fail_mode: FailMode,
    /// Range API base URL. Default: `"https://api.pwnedpasswords.com"`.
    pub base_url: String,
}

impl Default for HibpConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            fail_mode: FailMode::FailClosed,
            base_url: "https://api.pwnedpasswords.com".to_owned(),
        }
    }
}
