//! Back-channel logout (OpenID Connect Back-Channel Logout 1.0): the logout token, and the
//! delivery of the notices written when sessions end.
//!
//! Rules enforced here:
//! - §2.4 the logout token: `iss` and `sub` as the application saw them in its ID tokens (a
//!   pairwise `sub` stays pairwise), `aud` the client id, `iat`, `exp` two minutes later (§2.4:
//!   short-lived), a random `jti`, `sid` (svc always knows it), `events` holding the
//!   `http://schemas.openid.net/event/backchannel-logout` member with an empty object, never a
//!   `nonce`; header `typ: logout+jwt` (§2.4 "explicitly typed"), signed like the application's
//!   ID tokens (`id_token_signed_response_alg`, the tenant's key), so the RP verifies it with the
//!   keys it already uses.
//! - §2.5 sent as `application/x-www-form-urlencoded` `logout_token` in a POST to the
//!   application's current `backchannel_logout_uri`, through the transport the runtime injects
//!   (the same egress guard as webhooks).
//! - §2.8 a 2xx answer is success. A 408, 429 or 5xx answer, or no answer, is retried with
//!   growing delays up to [`LogoutSettings::max_attempts`]; any other answer (the RP refused the
//!   token) ends the notice as failed, since sending the same token again cannot change it.
//! - An application that no longer registers a URI (or was deleted) ends its notice as failed.
//! - A session that expires is announced like one that is revoked: at most every
//!   [`LogoutSettings::expiry_interval`], a pass writes the notices of the sessions that expired
//!   since the last look ([`svc_store::LogoutWrites::notify_expired_sessions`]), so an
//!   application hears of the expiry within that interval plus one pass.
//!
//! Each notice is one claimed row (a lease), so several instances share the work and a worker
//! that stops leaves its notices to be retried when the lease ends.

use crate::authorize::truncate_micros;
use crate::context::ProtocolContext;
use async_trait::async_trait;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use svc_crypto::SigningKey;
use svc_domain::{LogoutAttempt, LogoutNotice, LogoutOutcome};
use time::OffsetDateTime;

/// The `events` member a logout token carries (§2.4).
pub const LOGOUT_EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";
/// The JOSE `typ` of a logout token (§2.4).
pub const LOGOUT_TOKEN_TYP: &str = "logout+jwt";

/// Sends one logout token; implemented by the runtime over its guarded HTTP client.
#[async_trait]
pub trait LogoutTransport: Send + Sync {
    /// POSTs `logout_token` form-encoded to `uri`. `Ok(status)` when an answer came; `Err`
    /// says, without any secret, why none did (refused target, timeout, connection).
    async fn post(&self, uri: &str, logout_token: &str) -> Result<u16, String>;
}

/// How the delivery worker paces itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogoutSettings {
    /// Notices claimed per pass (sent concurrently).
    pub batch: u32,
    /// How long a claimed notice is held (longer than one attempt's timeout).
    pub lease: Duration,
    /// Attempts before a notice is given up.
    pub max_attempts: u32,
    /// The first retry's delay; each next one is four times longer.
    pub first_retry: Duration,
    /// Lifetime of a logout token (`exp - iat`).
    pub token_lifetime: Duration,
    /// How often, at most, a worker looks for sessions that expired.
    pub expiry_interval: Duration,
}

impl Default for LogoutSettings {
    fn default() -> Self {
        Self {
            batch: 16,
            lease: Duration::from_secs(60),
            max_attempts: 5,
            first_retry: Duration::from_secs(5),
            token_lifetime: Duration::from_secs(120),
            expiry_interval: Duration::from_secs(10),
        }
    }
}

impl LogoutSettings {
    /// The delay after the failed attempt number `attempts` (1-based): `first_retry × 4^(n-1)`,
    /// so 5 s, 20 s, 80 s, 320 s by default; `None` once `max_attempts` were made.
    pub fn retry_delay(&self, attempts: u32) -> Option<Duration> {
        if attempts >= self.max_attempts {
            return None;
        }
        let factor = 4u32.saturating_pow(attempts.saturating_sub(1));
        Some(self.first_retry.saturating_mul(factor))
    }
}

/// What an answer means for the notice (§2.8).
fn answered(status: u16) -> Answer {
    match status {
        200..=299 => Answer::Delivered,
        408 | 429 | 500..=599 => Answer::Retry,
        _ => Answer::Refused,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Delivered,
    Retry,
    Refused,
}

/// Everything a logout token states.
#[derive(Debug, Clone, Copy)]
pub struct LogoutFacts<'a> {
    /// `iss`.
    pub issuer: &'a str,
    /// `sub`.
    pub subject: &'a str,
    /// `aud`.
    pub client_id: &'a str,
    /// `sid`.
    pub session_id: &'a str,
    /// `jti`.
    pub jti: &'a str,
}

/// Signs the logout token for `facts` at `now`, living `lifetime` (§2.4).
pub fn sign_logout_token(
    signer: &SigningKey,
    facts: LogoutFacts<'_>,
    now: OffsetDateTime,
    lifetime: Duration,
) -> Result<String, svc_crypto::CryptoError> {
    let iat = now.unix_timestamp();
    let exp = iat.saturating_add(i64::try_from(lifetime.as_secs()).unwrap_or(i64::MAX));
    let claims = json!({
        "iss": facts.issuer,
        "sub": facts.subject,
        "aud": facts.client_id,
        "iat": iat,
        "exp": exp,
        "jti": facts.jti,
        "sid": facts.session_id,
        "events": { LOGOUT_EVENT: {} },
    });
    signer.sign_jwt(LOGOUT_TOKEN_TYP, &claims)
}

/// The delivery worker.
pub struct BackchannelLogout {
    ctx: ProtocolContext,
    transport: Arc<dyn LogoutTransport>,
    settings: LogoutSettings,
    /// When this worker last looked for expired sessions.
    expiry_looked_at: std::sync::Mutex<Option<OffsetDateTime>>,
}

impl BackchannelLogout {
    /// A worker over `ctx` (notices, applications, signing keys) sending through `transport`.
    pub fn new(
        ctx: ProtocolContext,
        transport: Arc<dyn LogoutTransport>,
        settings: LogoutSettings,
    ) -> Self {
        Self {
            ctx,
            transport,
            settings,
            expiry_looked_at: std::sync::Mutex::new(None),
        }
    }

    /// The pacing in use.
    pub fn settings(&self) -> &LogoutSettings {
        &self.settings
    }

    /// One pass: writes the notices of sessions that expired (when the interval has passed),
    /// claims up to a batch of due notices, sends them concurrently and records each attempt;
    /// returns how many were claimed.
    pub async fn deliver_once(self: &Arc<Self>) -> Result<usize, svc_store::StoreError> {
        let now = truncate_micros(self.ctx.clock.now());
        let lease = now + self.settings.lease;
        let look_for_expiries = self.expiry_due(now);
        let mut tx = self.ctx.store.write().await?;
        if look_for_expiries {
            tx.notify_expired_sessions(now).await?;
        }
        let claimed = tx
            .claim_logout_notices(now, lease, self.settings.batch)
            .await?;
        tx.commit().await?;
        if look_for_expiries {
            *self
                .expiry_looked_at
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = Some(now);
        }
        let count = claimed.len();
        let mut tasks = tokio::task::JoinSet::new();
        for notice in claimed {
            let worker = Arc::clone(self);
            tasks.spawn(async move { worker.deliver(notice).await });
        }
        let mut failure = None;
        while let Some(done) = tasks.join_next().await {
            match done {
                Ok(Ok(())) => {}
                Ok(Err(e)) => failure = Some(e),
                // A panicking attempt leaves its notice to the lease, like a stopped worker.
                Err(e) => tracing::error!(error = %e, "back-channel logout attempt panicked"),
            }
        }
        failure.map_or(Ok(count), Err)
    }

    /// Whether `expiry_interval` has passed since this worker last looked for expired sessions
    /// (a clock set back counts as passed).
    fn expiry_due(&self, now: OffsetDateTime) -> bool {
        let last = *self
            .expiry_looked_at
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        last.is_none_or(|last| now < last || now - last >= self.settings.expiry_interval)
    }

    async fn deliver(&self, notice: LogoutNotice) -> Result<(), svc_store::StoreError> {
        let attempt = self.attempt(&notice).await;
        match attempt.outcome {
            LogoutOutcome::Delivered => tracing::info!(tenant = %notice.tenant_id,
                client_id = %notice.client_id, session = %notice.session_id,
                attempts = notice.attempts, "back-channel logout delivered"),
            _ => tracing::warn!(tenant = %notice.tenant_id, client_id = %notice.client_id,
                session = %notice.session_id, attempts = notice.attempts,
                status = ?attempt.status_code, error = ?attempt.error,
                retry = attempt.retry_at.is_some(), "back-channel logout not delivered"),
        }
        let mut tx = self.ctx.store.write().await?;
        tx.record_logout_attempt(
            &notice.tenant_id,
            &notice.session_id,
            &notice.client_id,
            &attempt,
        )
        .await?;
        tx.commit().await
    }

    /// Makes one attempt and says what became of it.
    async fn attempt(&self, notice: &LogoutNotice) -> LogoutAttempt {
        let finished = |outcome, status_code, error: Option<String>| LogoutAttempt {
            at: truncate_micros(self.ctx.clock.now()),
            status_code,
            error,
            retry_at: None,
            outcome,
        };
        let app = match self.application(notice).await {
            Ok(Some(app)) => app,
            Ok(None) => {
                return finished(
                    LogoutOutcome::Failed,
                    None,
                    Some("the application no longer registers a backchannel_logout_uri".into()),
                );
            }
            Err(e) => return self.again(notice, None, e),
        };
        let Some(uri) = app.logout.backchannel_uri.as_deref() else {
            return finished(
                LogoutOutcome::Failed,
                None,
                Some("the application no longer registers a backchannel_logout_uri".into()),
            );
        };
        let token = match self.token(notice, &app).await {
            Ok(token) => token,
            Err(e) => return self.again(notice, None, e),
        };
        match self.transport.post(uri, &token).await {
            Ok(status) => match answered(status) {
                Answer::Delivered => finished(LogoutOutcome::Delivered, Some(status), None),
                Answer::Refused => finished(
                    LogoutOutcome::Failed,
                    Some(status),
                    Some(format!("the application answered {status}")),
                ),
                Answer::Retry => self.again(
                    notice,
                    Some(status),
                    format!("the application answered {status}"),
                ),
            },
            Err(why) => self.again(notice, None, why),
        }
    }

    /// A failed attempt that may be retried: due again after the next delay, or given up.
    fn again(&self, notice: &LogoutNotice, status: Option<u16>, why: String) -> LogoutAttempt {
        let at = truncate_micros(self.ctx.clock.now());
        let retry_at = self.settings.retry_delay(notice.attempts).map(|d| at + d);
        LogoutAttempt {
            at,
            status_code: status,
            error: Some(why),
            retry_at,
            outcome: if retry_at.is_some() {
                LogoutOutcome::Pending
            } else {
                LogoutOutcome::Failed
            },
        }
    }

    async fn application(
        &self,
        notice: &LogoutNotice,
    ) -> Result<Option<svc_domain::Application>, String> {
        let read = async {
            let mut tx = self.ctx.store.read_once().await?;
            let app = tx.application(&notice.tenant_id, &notice.client_id).await?;
            tx.finish().await?;
            Ok::<_, svc_store::StoreError>(app)
        };
        read.await.map_err(|e| format!("storage: {e}"))
    }

    async fn token(
        &self,
        notice: &LogoutNotice,
        app: &svc_domain::Application,
    ) -> Result<String, String> {
        let signer = self
            .ctx
            .keys
            .signer(&notice.tenant_id, app.id_token_signed_response_alg)
            .await
            .map_err(|e| format!("signing key: {e}"))?;
        let jti = crate::token::issue::random_jti(self.ctx.rng.as_ref());
        sign_logout_token(
            &signer,
            LogoutFacts {
                issuer: &notice.issuer,
                subject: &notice.subject,
                client_id: notice.client_id.as_str(),
                session_id: notice.session_id.as_str(),
                jti: &jti,
            },
            self.ctx.clock.now(),
            self.settings.token_lifetime,
        )
        .map_err(|e| format!("signing: {e}"))
    }
}

#[cfg(test)]
#[path = "backchannel_logout_tests.rs"]
mod tests;
