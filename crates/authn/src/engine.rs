//! [`Authn`], the hosted sign-in engine: its dependencies and the building blocks its use cases
//! share (the clock at storage precision, counters, sessions, one-time links, password policy).
//! The use cases themselves live one per file beside this one.

use crate::error::AuthnError;
use crate::mail::{Mail, Mailer, Outbox};
use crate::settings::{AuthnSettings, ClientInfo, span, std_span};
use std::fmt;
use std::sync::Arc;
use svc_domain::{
    Clock, Email, GeneratedSecret, NewPasswordError, Password, PasswordHash, Passwords, Rng,
    SecretHash, Session, SessionId, TenantId, User, UserToken, UserTokenPurpose,
};
use svc_store::{Store, StoreError, WriteTx};
use time::OffsetDateTime;

/// Prefix of session cookie values (`ses_s_…`): 256 random bits, stored only as SHA-256.
pub const SESSION_COOKIE_PREFIX: &str = "ses_s_";
/// Longest user agent kept on a session, in characters.
pub const MAX_USER_AGENT_CHARS: usize = 256;
/// The `amr` value of a password sign-in (RFC 8176 §2).
pub const AMR_PASSWORD: &str = svc_domain::AMR_PASSWORD;

/// A person just signed in: their new session, who they are, and the cookie value to set.
#[derive(Clone)]
pub struct SignedIn {
    /// The session record.
    pub session: Session,
    /// The person.
    pub user: User,
    /// The session cookie's value; shown this once, only its hash is stored.
    pub cookie_value: String,
}

impl fmt::Debug for SignedIn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignedIn")
            .field("session", &self.session.id)
            .field("user", &self.user.id)
            .field("cookie_value", &"<redacted>")
            .finish()
    }
}

/// The hosted sign-in engine. Build one per process and share it behind an `Arc`.
pub struct Authn {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) rng: Arc<dyn Rng>,
    /// Policy, breach check and hasher, shared with the management API (see [`Passwords`]).
    pub(crate) passwords: Passwords,
    pub(crate) outbox: Outbox,
    pub(crate) settings: AuthnSettings,
    /// The CAPTCHA, when the deployment has one ([`Authn::with_captcha`]).
    pub(crate) captcha: Option<crate::captcha::Captcha>,
    /// Second factors, when `[two_factor]` is on ([`Authn::with_two_factor`]).
    pub(crate) two_factor: Option<crate::two_factor::TwoFactorSettings>,
    /// Passkeys, when `[passkey]` is on ([`Authn::with_passkeys`]).
    pub(crate) passkeys: Option<crate::passkeys::PasskeySettings>,
    /// Social recovery, when `[recovery]` is on ([`Authn::with_recovery`]).
    pub(crate) recovery: Option<crate::recovery::RecoverySettings>,
    /// Enterprise single sign-on, when `[enterprise_sso]` is on ([`Authn::with_sso`]).
    pub(crate) sso: Option<crate::sso::Sso>,
    /// Social sign-in, when `[social]` is on ([`Authn::with_social`]).
    pub(crate) social: Option<crate::social::Social>,
}

impl fmt::Debug for Authn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authn")
            .field("store", &self.store.backend())
            .field("passwords", &self.passwords)
            .field("settings", &self.settings)
            .field("captcha", &self.captcha)
            .field("two_factor", &self.two_factor)
            .field("passkeys", &self.passkeys)
            .field("recovery", &self.recovery)
            .field("sso", &self.sso)
            .field("social", &self.social)
            .finish_non_exhaustive()
    }
}

impl Authn {
    /// The engine over `store`, taking time from `clock`, randomness from `rng`, and the
    /// password policy, breach check and hasher from `passwords` (the runtime hands the same
    /// [`Passwords`] to the management API).
    pub fn new(
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
        rng: Arc<dyn Rng>,
        passwords: Passwords,
        mailer: Arc<dyn Mailer>,
        settings: AuthnSettings,
    ) -> Self {
        Self {
            store,
            clock,
            rng,
            passwords,
            outbox: Outbox::new(mailer),
            settings,
            captcha: None,
            two_factor: None,
            passkeys: None,
            recovery: None,
            sso: None,
            social: None,
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> &AuthnSettings {
        &self.settings
    }

    /// The password policy, breach check and hasher in force: the ones handed to
    /// [`Authn::new`], for the runtime to share with the management API.
    pub fn passwords(&self) -> &Passwords {
        &self.passwords
    }

    /// The current time at whole microseconds, the finest precision every backend stores, so
    /// what a use case returns equals what a later read returns.
    /// Records an event for `tenant` in `tx`, so it commits (or rolls back) with the change.
    pub(crate) async fn record_event(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &svc_domain::TenantId,
        event_type: svc_domain::EventType,
        data: svc_domain::EventData,
    ) -> Result<(), AuthnError> {
        let event = svc_domain::Event::new(
            self.clock.as_ref(),
            self.rng.as_ref(),
            tenant,
            event_type,
            data,
        );
        tx.insert_event(&event).await?;
        Ok(())
    }

    /// Appends a successful audit entry of `actor` doing `action` on `target` of `tenant`,
    /// without a request (the engine's own changes: an invitation accepted, an auto-join).
    pub(crate) async fn record_audit(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &svc_domain::TenantId,
        (actor, action): (&str, &str),
        target: &str,
    ) -> Result<(), svc_store::StoreError> {
        let entry = svc_domain::AuditEntry {
            id: svc_domain::AuditEntryId::generate(self.clock.as_ref(), self.rng.as_ref()),
            tenant_id: Some(tenant.clone()),
            actor: actor.to_owned(),
            action: action.to_owned(),
            target: Some(target.to_owned()),
            request_id: None,
            client_ip: None,
            outcome: svc_domain::AuditOutcome::Success,
            occurred_at: self.now(),
        };
        tx.insert_audit(&entry).await
    }

    pub(crate) fn now(&self) -> OffsetDateTime {
        let now = self.clock.now();
        now.replace_nanosecond(now.nanosecond() / 1_000 * 1_000)
            .unwrap_or(now)
    }

    /// Applies the password policy to a new password, then the breached-password check.
    ///
    /// Errors: [`AuthnError::WeakPassword`] naming the broken rule,
    /// [`AuthnError::BreachedPassword`], [`AuthnError::BreachCheckUnavailable`].
    pub async fn check_new_password(&self, raw: &str) -> Result<Password, AuthnError> {
        self.passwords.check_new(raw).await.map_err(|e| match e {
            NewPasswordError::Weak(rule) => AuthnError::from(rule),
            NewPasswordError::Breached => AuthnError::BreachedPassword,
            NewPasswordError::CheckUnavailable => AuthnError::BreachCheckUnavailable,
        })
    }

    /// The Argon2id hash of a password that passed [`Authn::check_new_password`].
    pub async fn hash_password(&self, password: &Password) -> Result<PasswordHash, AuthnError> {
        Ok(self.passwords.hash(password).await?)
    }

    /// Issues a one-time link for `user` within `tx`: older unused links of the same purpose
    /// stop working, the new token is stored hashed, and the mail carrying it is returned for
    /// [`Authn::deliver`] once `tx` has committed (so no mail announces a link that rolled
    /// back). Only the database can fail here.
    pub async fn prepare_link(
        &self,
        tx: &mut dyn WriteTx,
        issuer: &str,
        user: &User,
        purpose: UserTokenPurpose,
        tenant_name: &str,
    ) -> Result<Mail, StoreError> {
        let now = self.now();
        tx.invalidate_user_tokens(&user.tenant_id, &user.id, purpose, now)
            .await?;
        let (prefix, lifetime, path) = match purpose {
            UserTokenPurpose::VerifyEmail => (
                "vfy_",
                self.settings.verify_email_link_lifetime,
                "verify-email",
            ),
            UserTokenPurpose::ResetPassword => {
                ("rst_", self.settings.reset_link_lifetime, "reset-password")
            }
            UserTokenPurpose::Invitation => (
                "inv_",
                self.settings.invitation_link_lifetime,
                "accept-invitation",
            ),
        };
        let secret = GeneratedSecret::generate(prefix, self.rng.as_ref());
        tx.insert_user_token(&UserToken {
            hash: secret.hash.clone(),
            tenant_id: user.tenant_id.clone(),
            user_id: user.id.clone(),
            purpose,
            created_at: now,
            expires_at: now + span(lifetime),
            used_at: None,
        })
        .await?;
        let link = format!(
            "{}/auth/{path}?token={}",
            issuer.trim_end_matches('/'),
            secret.plaintext
        );
        Ok(self
            .settings
            .mail_texts
            .link_mail(purpose, &user.email, tenant_name, link, lifetime))
    }

    /// Sends `mail` from a background task and returns at once (see [`Outbox::send`]): no
    /// answer waits for the relay, so its timing never tells whether a mail went out.
    pub fn deliver(&self, mail: Mail) {
        self.outbox.send(mail);
    }

    /// Waits until every mail handed to [`Authn::deliver`] so far was sent or failed.
    pub async fn mail_settled(&self) {
        self.outbox.settled().await;
    }

    /// A new session for `user` that proved `amr` and reached `acr`, and its cookie value.
    pub(crate) fn new_session(
        &self,
        user: &User,
        client: &ClientInfo,
        now: OffsetDateTime,
        amr: Vec<String>,
        acr: String,
    ) -> (Session, String) {
        let secret = GeneratedSecret::generate(SESSION_COOKIE_PREFIX, self.rng.as_ref());
        let session = Session {
            id: SessionId::generate(self.clock.as_ref(), self.rng.as_ref()),
            tenant_id: user.tenant_id.clone(),
            user_id: user.id.clone(),
            secret_hash: secret.hash,
            created_at: now,
            auth_time: now,
            amr,
            acr: Some(acr),
            expires_at: now + span(self.settings.session_lifetime),
            last_seen_at: now,
            revoked_at: None,
            user_agent: client
                .user_agent
                .as_deref()
                .map(|ua| ua.chars().take(MAX_USER_AGENT_CHARS).collect()),
            ip: client.ip.map(|ip| ip.to_string()),
        };
        (session, secret.plaintext)
    }

    /// After a failure counted in `failures` (`count`, the counter's `key`): the
    /// `brute_force_max_attempts`-th within the window locks `lock` for the lockout, clears the
    /// failures and records `security.brute_force.detected` of `scope`. The address stays out
    /// of logs.
    pub(crate) async fn lock_when_exceeded(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &TenantId,
        (count, failures, lock): (u32, &str, &str),
        (user, scope): (Option<svc_domain::UserId>, svc_domain::BruteForceScope),
        client: &ClientInfo,
        now: OffsetDateTime,
    ) -> Result<(), AuthnError> {
        if count < self.settings.brute_force_max_attempts {
            return Ok(());
        }
        tx.hit_counter(lock, now, span(self.settings.brute_force_lockout))
            .await?;
        tx.clear_counter(failures).await?;
        let data = svc_domain::EventData::BruteForceDetected {
            user_id: user,
            scope,
            locked_for_secs: self.settings.brute_force_lockout.as_secs(),
            client_ip: client.ip.map(|ip| ip.to_string()),
        };
        self.record_event(
            tx,
            tenant,
            svc_domain::EventType::SecurityBruteForceDetected,
            data,
        )
        .await?;
        tracing::warn!(
            tenant_id = %tenant,
            event = "security.brute_force.detected",
            scope = ?scope,
            "locked after repeated failures"
        );
        Ok(())
    }

    /// Counts one hit on the per-IP counter `key` and refuses once more than `max` hits fell
    /// in the current window. Without a known address there is nothing to count.
    pub(crate) async fn ip_limit(
        &self,
        tx: &mut dyn WriteTx,
        key: Option<String>,
        max: u32,
        window: std::time::Duration,
        now: OffsetDateTime,
    ) -> Result<(), AuthnError> {
        let Some(key) = key else { return Ok(()) };
        let state = tx.hit_counter(&key, now, span(window)).await?;
        if state.count > max {
            return Err(AuthnError::RateLimited {
                retry_after: std_span(state.window_ends_at - now),
            });
        }
        Ok(())
    }
}

/// Counter keys, namespaced by purpose and tenant. Account keys use the SHA-256 of the
/// normalised address, so the store never holds addresses of unknown accounts.
pub(crate) mod keys {
    use super::*;

    fn hex(hash: &SecretHash) -> String {
        hash.as_bytes().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Failed sign-ins of one account.
    pub(crate) fn account_failures(tenant: &TenantId, email: &Email) -> String {
        format!(
            "signin:acct:{tenant}:{}",
            hex(&SecretHash::of(email.as_str()))
        )
    }

    /// The lock of one account.
    pub(crate) fn account_lock(tenant: &TenantId, email: &Email) -> String {
        format!(
            "signin:lock:{tenant}:{}",
            hex(&SecretHash::of(email.as_str()))
        )
    }

    /// Failed sign-ins from one address (counted only with a CAPTCHA, which asks after
    /// enough of them).
    pub(crate) fn signin_ip_failures(tenant: &TenantId, client: &ClientInfo) -> Option<String> {
        client.ip.map(|ip| format!("signin:ipfail:{tenant}:{ip}"))
    }

    /// Password checks from one address.
    pub(crate) fn signin_ip(tenant: &TenantId, client: &ClientInfo) -> Option<String> {
        client.ip.map(|ip| format!("signin:ip:{tenant}:{ip}"))
    }

    /// Sign-ups from one address.
    pub(crate) fn signup_ip(tenant: &TenantId, client: &ClientInfo) -> Option<String> {
        client.ip.map(|ip| format!("signup:ip:{tenant}:{ip}"))
    }

    /// Password-reset requests from one address.
    pub(crate) fn reset_ip(tenant: &TenantId, client: &ClientInfo) -> Option<String> {
        client.ip.map(|ip| format!("reset:ip:{tenant}:{ip}"))
    }

    /// Single sign-on starts from one address (each writes an attempt).
    pub(crate) fn sso_ip(tenant: &TenantId, client: &ClientInfo) -> Option<String> {
        client.ip.map(|ip| format!("sso:ip:{tenant}:{ip}"))
    }

    /// Social sign-in starts from one address (each writes an attempt).
    pub(crate) fn social_ip(tenant: &TenantId, client: &ClientInfo) -> Option<String> {
        client.ip.map(|ip| format!("social:ip:{tenant}:{ip}"))
    }
}
