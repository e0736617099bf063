//! CAPTCHA: a proof, checked server-side, that a person and not a script sent a form.
//!
//! The engine asks for one on sign-up and password-reset requests always, and on sign-in once
//! the account or the client address has `after_failed_sign_ins` recent failures (the counters
//! of the brute-force limiter, so an unknown address is asked exactly like a real one). The
//! provider is reached through the [`CaptchaVerifier`] port (the runtime implements it over
//! HTTP for Turnstile, hCaptcha and reCAPTCHA v3, honouring the deployment's fail mode); the
//! engine adds what holds for every provider:
//!
//! - the check runs before anything is written: a missing, refused or replayed token leaves no
//!   trace (no account, no link, no mail, no counter hit, no event);
//! - a token is accepted once: a short-lived seen-set keyed by the token's SHA-256 refuses a
//!   replay even against a verifier that would accept it again (providers refuse replays too;
//!   this does not depend on them). A token is claimed before the provider is asked, so two
//!   concurrent submissions of one token cannot both pass; a refused token is released, so
//!   forged tokens do not fill the set;
//! - tokens never reach a log or a `Debug` output.

use crate::engine::{Authn, keys};
use crate::error::AuthnError;
use crate::settings::{ClientInfo, span};
use async_trait::async_trait;
use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use svc_domain::{Email, SecretHash, Tenant};
use time::OffsetDateTime;

/// Longest token sent to a provider, in bytes (Turnstile's are at most 2048 characters);
/// anything longer is refused without asking.
pub const MAX_CAPTCHA_TOKEN_BYTES: usize = 4096;

/// How long an accepted token is remembered: longer than any provider keeps one valid
/// (Turnstile 300 s, hCaptcha and reCAPTCHA 120 s).
const SEEN_FOR: time::Duration = time::Duration::minutes(10);

/// Most tokens remembered at once; past it the oldest is forgotten (it is the one closest to
/// expiring at the provider anyway).
const SEEN_CAPACITY: usize = 100_000;

/// The CAPTCHA service the pages embed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptchaProvider {
    /// Cloudflare Turnstile.
    Turnstile,
    /// hCaptcha.
    Hcaptcha,
    /// Google reCAPTCHA v3 (invisible, score-based).
    RecaptchaV3,
}

impl CaptchaProvider {
    /// The form field the provider's script fills with its token.
    pub fn response_field(self) -> &'static str {
        match self {
            Self::Turnstile => "cf-turnstile-response",
            Self::Hcaptcha => "h-captcha-response",
            Self::RecaptchaV3 => "g-recaptcha-response",
        }
    }
}

/// What a CAPTCHA protects; sent to the provider as the widget's `action` and checked in the
/// answer where the provider reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptchaAction {
    /// Password sign-in.
    SignIn,
    /// Self-service sign-up.
    SignUp,
    /// A password-reset request.
    ForgotPassword,
}

impl CaptchaAction {
    /// The action name (letters and `_` only, as every provider accepts).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SignIn => "sign_in",
            Self::SignUp => "sign_up",
            Self::ForgotPassword => "forgot_password",
        }
    }
}

/// What a submitted form carries for the CAPTCHA: the provider's token (absent when the widget
/// did not run) and the host name the page was served on (checked against the one the provider
/// saw).
#[derive(Clone, Copy, Default)]
pub struct CaptchaAnswer<'a> {
    /// The provider's response token.
    pub token: Option<&'a str>,
    /// The host name of the page, e.g. `acme.id.example.com`.
    pub hostname: Option<&'a str>,
}

impl fmt::Debug for CaptchaAnswer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CaptchaAnswer")
            .field("token", &self.token.map(|_| "<redacted>"))
            .field("hostname", &self.hostname)
            .finish()
    }
}

/// One verification asked of the provider.
pub struct CaptchaCheck<'a> {
    /// The token; never log it.
    pub token: &'a str,
    /// The client's address (`remoteip`), when known.
    pub remote_ip: Option<IpAddr>,
    /// The action the page declared.
    pub action: CaptchaAction,
    /// The host name the page was served on, when known.
    pub hostname: Option<&'a str>,
}

impl fmt::Debug for CaptchaCheck<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CaptchaCheck")
            .field("token", &"<redacted>")
            .field("remote_ip", &self.remote_ip)
            .field("action", &self.action)
            .field("hostname", &self.hostname)
            .finish()
    }
}

/// The provider's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum CaptchaVerdict {
    /// The provider vouched for the token (and its score, action and host name fit).
    Passed,
    /// The provider could not be reached and the deployment fails open: let the form through
    /// (the verifier logged a warning).
    Unverified,
    /// The token is not good: unknown, expired, used, for another site or action, or scored too
    /// low. `reason` is for logs (provider error codes, never the token).
    Refused {
        /// Why, for the log.
        reason: String,
    },
}

/// Why a verifier gave no verdict.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CaptchaError {
    /// The provider could not be asked or gave no usable answer, and the deployment fails
    /// closed. The text is for logs (no token, no secret).
    #[error("captcha verification unavailable: {0}")]
    Unavailable(String),
}

/// The port to a CAPTCHA provider's server-side verification.
#[async_trait]
pub trait CaptchaVerifier: Send + Sync {
    /// Asks the provider about `check.token`. `Err` only when no answer could be had and the
    /// deployment fails closed; failing open is [`CaptchaVerdict::Unverified`].
    async fn verify(&self, check: &CaptchaCheck<'_>) -> Result<CaptchaVerdict, CaptchaError>;
}

/// What the hosted pages need to show the widget, and when sign-in asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptchaSettings {
    /// The provider.
    pub provider: CaptchaProvider,
    /// Its public site key, embedded in the pages.
    pub site_key: String,
    /// Failed sign-ins (of the account or from the address, within the brute-force window)
    /// after which sign-in asks for a CAPTCHA; 0 asks always.
    pub after_failed_sign_ins: u32,
}

/// The engine's CAPTCHA: settings, the verifier, and the tokens already accepted.
pub(crate) struct Captcha {
    pub(crate) settings: CaptchaSettings,
    verifier: Arc<dyn CaptchaVerifier>,
    seen: Mutex<HashMap<SecretHash, OffsetDateTime>>,
}

impl fmt::Debug for Captcha {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Captcha")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Captcha {
    pub(crate) fn new(settings: CaptchaSettings, verifier: Arc<dyn CaptchaVerifier>) -> Self {
        Self {
            settings,
            verifier,
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// Claims `token` for this submission: `false` when it was seen within [`SEEN_FOR`].
    fn claim(&self, token: &SecretHash, now: OffsetDateTime) -> bool {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if seen.get(token).is_some_and(|until| *until > now) {
            return false;
        }
        if seen.len() >= SEEN_CAPACITY {
            seen.retain(|_, until| *until > now);
            if seen.len() >= SEEN_CAPACITY
                && let Some(oldest) = seen
                    .iter()
                    .min_by_key(|(_, until)| **until)
                    .map(|(k, _)| k.clone())
            {
                seen.remove(&oldest);
            }
        }
        seen.insert(token.clone(), now + SEEN_FOR);
        true
    }

    /// Forgets a claim whose token was refused.
    fn release(&self, token: &SecretHash) {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(token);
    }
}

impl Authn {
    /// The engine with a CAPTCHA: sign-up and password-reset requests then always need a
    /// solved one, and sign-in after [`CaptchaSettings::after_failed_sign_ins`] failures.
    #[must_use]
    pub fn with_captcha(
        mut self,
        settings: CaptchaSettings,
        verifier: Arc<dyn CaptchaVerifier>,
    ) -> Self {
        self.captcha = Some(Captcha::new(settings, verifier));
        self
    }

    /// The CAPTCHA in force, if any (the pages show its widget).
    pub fn captcha(&self) -> Option<&CaptchaSettings> {
        self.captcha.as_ref().map(|c| &c.settings)
    }

    /// Whether a sign-in by `email` (or, without one, any sign-in) from `client` must carry a
    /// solved CAPTCHA: once the account or the address has the configured number of failures
    /// within the brute-force window. Reads counters only; never writes. An unknown address
    /// answers exactly like a known one.
    pub async fn sign_in_needs_captcha(
        &self,
        tenant: &Tenant,
        email: Option<&str>,
        client: &ClientInfo,
    ) -> Result<bool, AuthnError> {
        let Some(captcha) = &self.captcha else {
            return Ok(false);
        };
        let threshold = captcha.settings.after_failed_sign_ins;
        if threshold == 0 {
            return Ok(true);
        }
        let now = self.now();
        let mut keys_to_read = Vec::with_capacity(2);
        if let Some(key) = keys::signin_ip_failures(&tenant.id, client) {
            keys_to_read.push(key);
        }
        if let Some(Ok(email)) = email.map(Email::parse) {
            keys_to_read.push(keys::account_failures(&tenant.id, &email));
        }
        if keys_to_read.is_empty() {
            return Ok(false);
        }
        // Counters are read in a write transaction (where the store offers them) that is
        // dropped, so rolled back: nothing is written.
        let mut tx = self.store.write().await?;
        for key in &keys_to_read {
            if tx
                .counter(key, now)
                .await?
                .is_some_and(|state| state.count >= threshold)
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Checks the CAPTCHA answer of a form protecting `action`; `Ok` when there is no CAPTCHA.
    ///
    /// Errors: [`AuthnError::CaptchaRequired`] (no token), [`AuthnError::CaptchaFailed`]
    /// (refused by the provider, replayed, oversized), [`AuthnError::CaptchaUnavailable`] (the
    /// provider could not be asked and the deployment fails closed).
    pub(crate) async fn check_captcha(
        &self,
        action: CaptchaAction,
        answer: CaptchaAnswer<'_>,
        client: &ClientInfo,
    ) -> Result<(), AuthnError> {
        let Some(captcha) = &self.captcha else {
            return Ok(());
        };
        let Some(token) = answer.token.map(str::trim).filter(|t| !t.is_empty()) else {
            return Err(AuthnError::CaptchaRequired);
        };
        if token.len() > MAX_CAPTCHA_TOKEN_BYTES {
            tracing::info!(action = action.as_str(), "captcha refused: oversized token");
            return Err(AuthnError::CaptchaFailed);
        }
        let hash = SecretHash::of(token);
        if !captcha.claim(&hash, self.clock.now()) {
            tracing::info!(action = action.as_str(), "captcha refused: token replayed");
            return Err(AuthnError::CaptchaFailed);
        }
        let check = CaptchaCheck {
            token,
            remote_ip: client.ip,
            action,
            hostname: answer.hostname,
        };
        match captcha.verifier.verify(&check).await {
            Ok(CaptchaVerdict::Passed | CaptchaVerdict::Unverified) => Ok(()),
            Ok(CaptchaVerdict::Refused { reason }) => {
                captcha.release(&hash);
                tracing::info!(action = action.as_str(), reason = %reason, "captcha refused");
                Err(AuthnError::CaptchaFailed)
            }
            Err(CaptchaError::Unavailable(why)) => {
                captcha.release(&hash);
                Err(AuthnError::CaptchaUnavailable(why))
            }
        }
    }

    /// The CAPTCHA check of a sign-in: only when [`Authn::sign_in_needs_captcha`] says so.
    pub(crate) async fn check_sign_in_captcha(
        &self,
        tenant: &Tenant,
        email: &str,
        answer: CaptchaAnswer<'_>,
        client: &ClientInfo,
    ) -> Result<(), AuthnError> {
        if self.captcha.is_none() {
            return Ok(());
        }
        if self
            .sign_in_needs_captcha(tenant, Some(email), client)
            .await?
        {
            self.check_captcha(CaptchaAction::SignIn, answer, client)
                .await?;
        }
        Ok(())
    }

    /// Counts a failed sign-in against the client address, for [`Authn::sign_in_needs_captcha`]
    /// (only with a CAPTCHA: nothing else reads this counter).
    pub(crate) async fn count_ip_failure(
        &self,
        tx: &mut dyn svc_store::WriteTx,
        tenant: &Tenant,
        client: &ClientInfo,
        now: OffsetDateTime,
    ) -> Result<(), AuthnError> {
        if self.captcha.is_none() {
            return Ok(());
        }
        if let Some(key) = keys::signin_ip_failures(&tenant.id, client) {
            tx.hit_counter(&key, now, span(self.settings.brute_force_lockout))
                .await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    struct Never;

    #[async_trait]
    impl CaptchaVerifier for Never {
        async fn verify(&self, _: &CaptchaCheck<'_>) -> Result<CaptchaVerdict, CaptchaError> {
            Ok(CaptchaVerdict::Passed)
        }
    }

    fn captcha() -> Captcha {
        Captcha::new(
            CaptchaSettings {
                provider: CaptchaProvider::Turnstile,
                site_key: "site".into(),
                after_failed_sign_ins: 3,
            },
            Arc::new(Never),
        )
    }

    #[test]
    fn a_token_is_claimed_once_until_it_is_forgotten() {
        let captcha = captcha();
        let now = OffsetDateTime::UNIX_EPOCH;
        let token = SecretHash::of("tok");
        assert!(captcha.claim(&token, now));
        assert!(!captcha.claim(&token, now + time::Duration::minutes(9)));
        assert!(captcha.claim(&token, now + SEEN_FOR + time::Duration::seconds(1)));
        captcha.release(&token);
        assert!(captcha.claim(&token, now));
    }

    #[test]
    fn the_seen_set_stays_bounded() {
        let captcha = captcha();
        let now = OffsetDateTime::UNIX_EPOCH;
        for i in 0..SEEN_CAPACITY + 10 {
            assert!(captcha.claim(&SecretHash::of(&i.to_string()), now));
        }
        assert!(captcha.seen.lock().unwrap().len() <= SEEN_CAPACITY);
    }

    #[test]
    fn tokens_never_show_in_debug_output() {
        let answer = CaptchaAnswer {
            token: Some("secret-token"),
            hostname: Some("acme.example.com"),
        };
        let check = CaptchaCheck {
            token: "secret-token",
            remote_ip: None,
            action: CaptchaAction::SignUp,
            hostname: None,
        };
        for text in [format!("{answer:?}"), format!("{check:?}")] {
            assert!(!text.contains("secret-token"), "{text}");
        }
        assert_eq!(
            CaptchaProvider::Hcaptcha.response_field(),
            "h-captcha-response"
        );
        assert_eq!(CaptchaAction::ForgotPassword.as_str(), "forgot_password");
    }
}
