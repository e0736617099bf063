//! Receiving svc webhooks: the spec's seven receiver rules (spec "Receiver verification rules",
//! suite `svc-webhook-v1` of CONTRACTS.md "Webhooks").
//!
//! 1. a missing or unsupported `X-SVC-Signature-Suite` is refused;
//! 2. the signed string is built from the exact raw body: `{X-SVC-Delivery}.{X-SVC-Timestamp}.{body}`;
//! 3. its HMAC-SHA256 is computed with the subscription secret (its UTF-8 bytes, prefix included);
//! 4. it is compared with every `sha256=<hex>` value of `X-SVC-Signature-256` in constant time
//!    (two values arrive while the sender rotates its secret);
//! 5. a timestamp older than the smaller of `X-SVC-Signature-Max-Age` and the receiver's own
//!    ceiling is refused, as is one from the future beyond a small clock skew;
//! 6. a delivery id already accepted within the window is refused ([`WebhookVerifier`]
//!    remembers the ids its caller accepted);
//! 7. nothing here parses the body: verify first, then parse [`VerifiedWebhook::body`].

use aws_lc_rs::hmac;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// The only suite this SDK accepts.
pub const WEBHOOK_SIGNATURE_SUITE: &str = "svc-webhook-v1";
/// How far a timestamp may be ahead of the receiver's clock (clock skew between hosts).
pub const WEBHOOK_CLOCK_SKEW: Duration = Duration::from_secs(60);
/// The largest body accepted before anything is computed (a guard, not a limit of the sender).
pub const MAX_WEBHOOK_BODY_BYTES: usize = 1024 * 1024;

/// Why a delivery was refused. Every case but [`WebhookError::Replayed`] is a permanent
/// validation failure: answer 4xx.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookError {
    /// A required header is absent or not text.
    #[error("missing or unreadable header {0}")]
    MissingHeader(&'static str),
    /// The suite is not `svc-webhook-v1`.
    #[error("unsupported signature suite {0:?}")]
    UnsupportedSuite(String),
    /// `X-SVC-Timestamp` is not a Unix time in seconds.
    #[error("X-SVC-Timestamp is not a Unix time in seconds")]
    BadTimestamp,
    /// No `sha256=<64 hex>` value in `X-SVC-Signature-256`.
    #[error("X-SVC-Signature-256 holds no sha256=<hex> value")]
    BadSignatureFormat,
    /// No value matches the body under any of the secrets.
    #[error("signature mismatch")]
    SignatureMismatch,
    /// Older than the replay window.
    #[error("delivery is {age_secs} s old; the window is {window_secs} s")]
    Stale {
        /// Seconds since signing.
        age_secs: i64,
        /// The window applied.
        window_secs: u64,
    },
    /// Signed in the future beyond the allowed skew.
    #[error("delivery timestamp is in the future")]
    FromTheFuture,
    /// The body is larger than [`MAX_WEBHOOK_BODY_BYTES`].
    #[error("body too large")]
    TooLarge,
    /// This delivery id was already accepted within the window: a duplicate of at-least-once
    /// delivery (or a replay). Do not act again; answer 2xx so the sender stops retrying.
    #[error("delivery {0} was already received")]
    Replayed(String),
}

/// Read access to request headers, by case-insensitive name.
pub trait WebhookHeaders {
    /// The value of `name` as text, when present and visible ASCII.
    fn header(&self, name: &str) -> Option<&str>;
}

impl WebhookHeaders for http::HeaderMap {
    fn header(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(|v| v.to_str().ok())
    }
}

impl WebhookHeaders for [(&str, &str)] {
    fn header(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    }
}

/// A delivery whose signature and freshness were checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedWebhook<'a> {
    /// `X-SVC-Delivery`: record it before acting (the dedup key).
    pub delivery_id: String,
    /// `X-SVC-Event`, when sent.
    pub event_type: Option<String>,
    /// `X-SVC-Timestamp`.
    pub timestamp: i64,
    /// The raw body, now safe to parse.
    pub body: &'a [u8],
}

fn required<'h>(
    headers: &'h (impl WebhookHeaders + ?Sized),
    name: &'static str,
) -> Result<&'h str, WebhookError> {
    headers
        .header(name)
        .ok_or(WebhookError::MissingHeader(name))
}

fn unhex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..64)
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Rules 1 to 5 at `now_unix` with any of `secrets` (current first, during a receiver-side
/// rotation also the previous one) and the receiver's `ceiling` on the replay window.
pub fn verify_webhook_at<'a>(
    headers: &(impl WebhookHeaders + ?Sized),
    raw_body: &'a [u8],
    secrets: &[&str],
    ceiling: Duration,
    now_unix: i64,
) -> Result<VerifiedWebhook<'a>, WebhookError> {
    // Rule 1.
    let suite = required(headers, "x-svc-signature-suite")?;
    if suite != WEBHOOK_SIGNATURE_SUITE {
        return Err(WebhookError::UnsupportedSuite(
            suite.chars().take(64).collect(),
        ));
    }
    if raw_body.len() > MAX_WEBHOOK_BODY_BYTES {
        return Err(WebhookError::TooLarge);
    }
    let delivery_id = required(headers, "x-svc-delivery")?;
    let timestamp_text = required(headers, "x-svc-timestamp")?;
    let timestamp: i64 = timestamp_text
        .parse()
        .map_err(|_| WebhookError::BadTimestamp)?;
    let signatures: Vec<Vec<u8>> = required(headers, "x-svc-signature-256")?
        .split(' ')
        .filter_map(|v| v.strip_prefix("sha256="))
        .filter_map(unhex)
        .collect();
    if signatures.is_empty() {
        return Err(WebhookError::BadSignatureFormat);
    }
    // Rule 2: the exact bytes received, never re-serialised JSON.
    let mut signed =
        Vec::with_capacity(delivery_id.len() + timestamp_text.len() + 2 + raw_body.len());
    signed.extend_from_slice(delivery_id.as_bytes());
    signed.push(b'.');
    signed.extend_from_slice(timestamp_text.as_bytes());
    signed.push(b'.');
    signed.extend_from_slice(raw_body);
    // Rules 3 and 4: `hmac::verify` compares in constant time.
    let matched = secrets.iter().any(|secret| {
        let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
        signatures
            .iter()
            .any(|tag| hmac::verify(&key, &signed, tag).is_ok())
    });
    if !matched {
        return Err(WebhookError::SignatureMismatch);
    }
    // Rule 5: the smaller of the sender's and the receiver's windows.
    let sender_window = headers
        .header("x-svc-signature-max-age")
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(ceiling, Duration::from_secs);
    let window = sender_window.min(ceiling);
    let age = now_unix.saturating_sub(timestamp);
    if age < -i64::try_from(WEBHOOK_CLOCK_SKEW.as_secs()).unwrap_or(i64::MAX) {
        return Err(WebhookError::FromTheFuture);
    }
    if age > i64::try_from(window.as_secs()).unwrap_or(i64::MAX) {
        return Err(WebhookError::Stale {
            age_secs: age,
            window_secs: window.as_secs(),
        });
    }
    Ok(VerifiedWebhook {
        delivery_id: delivery_id.to_owned(),
        event_type: headers.header("x-svc-event").map(str::to_owned),
        timestamp,
        body: raw_body,
    })
}

/// Rules 1 to 5 now, with one secret and the receiver's `max_age` ceiling. Deduplication
/// (rule 6) needs memory: use [`WebhookVerifier`], or record [`VerifiedWebhook::delivery_id`]
/// in your own store before acting.
pub fn verify_webhook<'a>(
    headers: &(impl WebhookHeaders + ?Sized),
    raw_body: &'a [u8],
    secret: &str,
    max_age: Duration,
) -> Result<VerifiedWebhook<'a>, WebhookError> {
    verify_webhook_at(headers, raw_body, &[secret], max_age, unix_now())
}

// The one place the receiver side reads the system clock; everything else takes `now_unix`.
#[allow(clippy::disallowed_methods)]
fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// All seven rules: verification, plus an in-memory record of the delivery ids this receiver
/// accepted within the window, for a single receiver process (several processes share a store
/// of their own instead, e.g. a unique key in their database on [`VerifiedWebhook::delivery_id`]).
///
/// [`WebhookVerifier::verify`] refuses an id already accepted; call
/// [`WebhookVerifier::accepted`] once the delivery is durably recorded, before answering 2xx.
/// A delivery answered with 5xx is not accepted, so its retry (same id) is not a replay.
#[derive(Debug)]
pub struct WebhookVerifier {
    secrets: Vec<String>,
    ceiling: Duration,
    seen: Mutex<HashMap<String, i64>>,
}

impl WebhookVerifier {
    /// Accepted ids kept at most; beyond it the oldest are forgotten first.
    const MAX_REMEMBERED: usize = 100_000;

    /// A verifier for `secret` with the receiver's replay-window `ceiling` (5 minutes is usual).
    pub fn new(secret: impl Into<String>, ceiling: Duration) -> Self {
        Self {
            secrets: vec![secret.into()],
            ceiling,
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// Also accepts `previous` (while you roll out a rotated secret).
    #[must_use]
    pub fn with_previous_secret(mut self, previous: impl Into<String>) -> Self {
        self.secrets.push(previous.into());
        self
    }

    fn remembered(&self) -> std::sync::MutexGuard<'_, HashMap<String, i64>> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Rules 1 to 6 at `now_unix`: a delivery id accepted within the window is
    /// [`WebhookError::Replayed`].
    pub fn verify_at<'a>(
        &self,
        headers: &(impl WebhookHeaders + ?Sized),
        raw_body: &'a [u8],
        now_unix: i64,
    ) -> Result<VerifiedWebhook<'a>, WebhookError> {
        let secrets: Vec<&str> = self.secrets.iter().map(String::as_str).collect();
        let verified = verify_webhook_at(headers, raw_body, &secrets, self.ceiling, now_unix)?;
        let mut seen = self.remembered();
        seen.retain(|_, until| *until > now_unix);
        if seen.contains_key(&verified.delivery_id) {
            return Err(WebhookError::Replayed(verified.delivery_id));
        }
        Ok(verified)
    }

    /// Records that the delivery `delivery_id` was accepted at `now_unix`: the same id is
    /// refused until the window (plus clock skew) has passed, when its signature is stale anyway.
    pub fn accepted_at(&self, delivery_id: &str, now_unix: i64) {
        let expires = now_unix
            .saturating_add(i64::try_from(self.ceiling.as_secs()).unwrap_or(i64::MAX))
            .saturating_add(i64::try_from(WEBHOOK_CLOCK_SKEW.as_secs()).unwrap_or(0));
        let mut seen = self.remembered();
        if seen.len() >= Self::MAX_REMEMBERED
            && let Some(oldest) = seen
                .iter()
                .min_by_key(|(_, until)| **until)
                .map(|(k, _)| k.clone())
        {
            seen.remove(&oldest);
        }
        seen.insert(delivery_id.to_owned(), expires);
    }

    /// [`WebhookVerifier::accepted_at`] now.
    pub fn accepted(&self, delivery_id: &str) {
        self.accepted_at(delivery_id, unix_now());
    }

    /// [`WebhookVerifier::verify_at`] now.
    pub fn verify<'a>(
        &self,
        headers: &(impl WebhookHeaders + ?Sized),
        raw_body: &'a [u8],
    ) -> Result<VerifiedWebhook<'a>, WebhookError> {
        self.verify_at(headers, raw_body, unix_now())
    }
}
