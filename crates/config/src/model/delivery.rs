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

/// CAPTCHA on sign-up and risky logins (an auth-plane abuse control). No provider verifies a
/// CAPTCHA in this version yet: the section exists because the production rules name it, and
/// setting it protects nothing until the provider lands.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CaptchaConfig {
    /// Require a CAPTCHA (must be true in production). Default: false.
    pub enabled: bool,
    /// Server-side verification secret; redacted when printed. Required in production. No
    /// default.
    #[schemars(example = &"change-me")]
    pub secret_key: Option<Secret>,
    /// When verification is unreachable: "fail-open" (not in production) or "fail-closed".
    /// Default: "fail-closed".
    pub fail_mode: FailMode,
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
