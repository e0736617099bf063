//! Password sign-in, with the two brute-force defences in front of it:
//!
//! 1. a per-IP limit on password checks (`[auth].password_verify_ip_*`), so one client cannot
//!    spray many accounts;
//! 2. a per-account lock (`[auth].brute_force_*`): after `max` failures within the lockout
//!    window the account locks for the whole lockout, counted per tenant and SHA-256 of the
//!    normalised address, so unknown addresses lock exactly like real ones.
//!
//! With a CAPTCHA, a third: once the account or the address has enough recent failures, a
//! sign-in must carry a solved CAPTCHA, checked before anything else (`crate::captcha`).
//!
//! Every attempt that reaches the password runs exactly one Argon2 verification (against a
//! dummy hash when the account is unknown, has no password or may not sign in), and every
//! refusal is the same [`AuthnError::InvalidCredentials`]: neither the answer nor its timing
//! tells whether the account exists. No database transaction is held while hashing.
//!
//! Every attempt on an existing account leaves a record in the person's login history (success,
//! wrong password, locked), written in the transaction of its outcome; attempts that name no
//! account belong to nobody's history.

use crate::captcha::CaptchaAnswer;
use crate::engine::{Authn, SignedIn, keys};
use crate::error::AuthnError;
use crate::settings::{ClientInfo, span, std_span};
use crate::two_factor::SignInStep;
use svc_domain::{
    ACR_AAL1, AMR_PASSWORD, BruteForceScope, Email, EventData, EventType, LoginFailureReason,
    LoginMethod, LoginRecord, LoginRecordId, LoginResult, Password, Tenant, User, UserId,
    login_user_agent,
};
use time::OffsetDateTime;

impl Authn {
    /// Signs a person in with address and password, creating a session.
    ///
    /// Errors: [`AuthnError::InvalidCredentials`] for a wrong address or password or an account
    /// that may not sign in; [`AuthnError::Locked`] while the account is locked;
    /// [`AuthnError::RateLimited`] when the client address made too many attempts. Locks and
    /// limits apply to unknown addresses too.
    ///
    /// With a CAPTCHA ([`Authn::with_captcha`]) a sign-in that needs one fails here with
    /// [`AuthnError::CaptchaRequired`], and a person with a second factor gets
    /// [`AuthnError::SecondFactorRequired`]: the hosted pages use
    /// [`Authn::sign_in_with_captcha`], which hands out the second step.
    pub async fn sign_in(
        &self,
        tenant: &Tenant,
        email: &str,
        password: &str,
        client: &ClientInfo,
    ) -> Result<SignedIn, AuthnError> {
        match self
            .sign_in_with_captcha(tenant, email, password, client, CaptchaAnswer::default())
            .await?
        {
            SignInStep::Done(signed_in) => Ok(*signed_in),
            SignInStep::SecondFactor(_) => Err(AuthnError::SecondFactorRequired),
        }
    }

    /// [`Authn::sign_in`] carrying the form's CAPTCHA answer. When the account or the address
    /// has had [`crate::CaptchaSettings::after_failed_sign_ins`] recent failures, the CAPTCHA
    /// is checked first, before any limit is counted or any password verified: a missing or
    /// refused one writes nothing.
    ///
    /// A correct password of a person with a confirmed second factor creates no session: it
    /// answers [`SignInStep::SecondFactor`] with the challenge to complete
    /// ([`Authn::complete_second_factor`]).
    ///
    /// Errors: as [`Authn::sign_in`]; [`AuthnError::CaptchaRequired`],
    /// [`AuthnError::CaptchaFailed`], [`AuthnError::CaptchaUnavailable`].
    pub async fn sign_in_with_captcha(
        &self,
        tenant: &Tenant,
        email: &str,
        password: &str,
        client: &ClientInfo,
        captcha: CaptchaAnswer<'_>,
    ) -> Result<SignInStep, AuthnError> {
        self.check_sign_in_captcha(tenant, email, captcha, client)
            .await?;
        let now = self.now();
        let email = Email::parse(email);
        // Step 1: limits, then the account, in one short transaction (committed so the hits
        // count even when the attempt fails).
        let mut tx = self.store.write().await?;
        let limited = self
            .ip_limit(
                tx.as_mut(),
                keys::signin_ip(&tenant.id, client),
                self.settings.password_verify_ip_max_attempts,
                self.settings.password_verify_ip_window,
                now,
            )
            .await;
        if let Err(refusal @ AuthnError::RateLimited { .. }) = limited {
            // The refusal is recorded once, when the address first crosses the limit: every
            // further refused attempt of the window would only repeat it.
            if self.crossed_limit(tx.as_mut(), tenant, client, now).await? {
                let data = EventData::LoginFailed {
                    user_id: None,
                    reason: LoginFailureReason::RateLimited,
                    client_ip: client.ip.map(|ip| ip.to_string()),
                };
                self.record_event(tx.as_mut(), &tenant.id, EventType::LoginFailure, data)
                    .await?;
                tx.commit().await?;
            }
            return Err(refusal);
        }
        limited?;
        let Ok(email) = email else {
            // A malformed address names no account; its shape is no secret.
            tx.commit().await?;
            return Err(AuthnError::InvalidCredentials);
        };
        // An organization that enforces single sign-on owns its domains' sign-ins: no password
        // is checked for them (the refusal names the domain's rule, not any account).
        if self.sso_required(tx.as_mut(), tenant, &email).await? {
            tx.commit().await?;
            return Err(AuthnError::SsoRequired);
        }
        if let Some(lock) = tx
            .counter(&keys::account_lock(&tenant.id, &email), now)
            .await?
        {
            if let Some(user) = tx.user_by_email(&tenant.id, &email).await? {
                let record =
                    self.login_record(&tenant.id, &user.id, LoginResult::Locked, client, now);
                tx.insert_login_record(&record).await?;
            }
            tx.commit().await?;
            return Err(AuthnError::Locked {
                retry_after: std_span(lock.window_ends_at - now),
            });
        }
        let user = tx.user_by_email(&tenant.id, &email).await?;
        tx.commit().await?;

        // Step 2: exactly one verification, real or dummy.
        let candidate = Password::parse(password).ok();
        let usable = user.as_ref().filter(|u| u.can_sign_in());
        let hash = usable.and_then(|u| u.password_hash.as_ref());
        let verified = match &candidate {
            Some(candidate) => self.passwords.verify(candidate, hash).await,
            // Shorter or longer than any stored password: cannot match, costs the same.
            None => {
                let filler = Password::parse("password-too-short-or-long").ok();
                if let Some(filler) = filler {
                    self.passwords.verify(&filler, None).await;
                }
                false
            }
        };

        // Step 3: record the outcome.
        match (verified, usable) {
            (true, Some(user)) => self.complete_sign_in(tenant, &email, user, client).await,
            _ => {
                let known = user.as_ref().map(|u| u.id.clone());
                self.record_failure(tenant, &email, known, client, now)
                    .await?;
                Err(AuthnError::InvalidCredentials)
            }
        }
    }

    /// Whether this refused attempt is the first over the per-IP limit of its window; if so
    /// the counter keeps the hit, so the next refused attempt is not the first.
    async fn crossed_limit(
        &self,
        tx: &mut dyn svc_store::WriteTx,
        tenant: &Tenant,
        client: &ClientInfo,
        now: OffsetDateTime,
    ) -> Result<bool, AuthnError> {
        let Some(key) = keys::signin_ip(&tenant.id, client) else {
            return Ok(false);
        };
        let state = tx.counter(&key, now).await?;
        Ok(state.is_some_and(|s| s.count == self.settings.password_verify_ip_max_attempts + 1))
    }

    /// Counts a failure (`auth.login.failure`); the `max`-th within the window locks the
    /// account for the lockout (`security.brute_force.detected`).
    async fn record_failure(
        &self,
        tenant: &Tenant,
        email: &Email,
        user: Option<UserId>,
        client: &ClientInfo,
        now: OffsetDateTime,
    ) -> Result<(), AuthnError> {
        let lockout = span(self.settings.brute_force_lockout);
        let failures_key = keys::account_failures(&tenant.id, email);
        let client_ip = client.ip.map(|ip| ip.to_string());
        let mut tx = self.store.write().await?;
        let failures = tx.hit_counter(&failures_key, now, lockout).await?;
        if let Some(user) = &user {
            let record = self.login_record(
                &tenant.id,
                user,
                LoginResult::InvalidCredentials,
                client,
                now,
            );
            tx.insert_login_record(&record).await?;
        }
        let data = EventData::LoginFailed {
            user_id: user.clone(),
            reason: LoginFailureReason::InvalidCredentials,
            client_ip,
        };
        self.record_event(tx.as_mut(), &tenant.id, EventType::LoginFailure, data)
            .await?;
        self.count_ip_failure(tx.as_mut(), tenant, client, now)
            .await?;
        let lock = keys::account_lock(&tenant.id, email);
        self.lock_when_exceeded(
            tx.as_mut(),
            &tenant.id,
            (failures.count, &failures_key, &lock),
            (user, BruteForceScope::Account),
            client,
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Creates the session of a verified sign-in, unless the account changed meanwhile; or,
    /// for a person with a second factor, the challenge of the second step instead.
    async fn complete_sign_in(
        &self,
        tenant: &Tenant,
        email: &Email,
        user: &User,
        client: &ClientInfo,
    ) -> Result<SignInStep, AuthnError> {
        let now = self.now();
        let mut tx = self.store.write().await?;
        // Suspended, removed or given a new password while we hashed: the check we made is
        // stale, and the answer is the ordinary refusal.
        let current = tx.user(&tenant.id, &user.id).await?;
        let Some(mut current) = current.filter(|c| {
            c.can_sign_in() && c.password_hash == user.password_hash && c.email == *email
        }) else {
            return Err(AuthnError::InvalidCredentials);
        };
        let failures_key = keys::account_failures(&tenant.id, email);
        // Read (before this success clears them) only where adaptive step-up scores them.
        let failures = if self.adaptive_on() {
            tx.counter(&failures_key, now).await?.map_or(0, |c| c.count)
        } else {
            0
        };
        tx.clear_counter(&failures_key).await?;
        // A password alone is assurance level 1 (the `acr` of the ID tokens it leads to); a
        // trusted browser of a person with a second factor stands in for the code.
        let mut trusted_browser = false;
        if self.owes_second_factor(tx.as_mut(), &current).await? {
            let browser = self.browser(tx.as_mut(), &current, client).await?;
            let skip = self
                .trusted_skip(
                    tx.as_mut(),
                    tenant,
                    &current,
                    &browser,
                    (client, failures),
                    now,
                )
                .await?;
            if !skip {
                let pending = self
                    .open_challenge(tx.as_mut(), tenant, &current, client, now)
                    .await?;
                tx.commit().await?;
                return Ok(SignInStep::SecondFactor(pending));
            }
            trusted_browser = true;
        }
        let first_sign_in = current.last_sign_in_at.is_none();
        current.last_sign_in_at = Some(now);
        // Changed since read in this transaction (a concurrent suspension, say): the same refusal.
        let outcome = tx
            .update_user_if_unchanged(&current, current.updated_at)
            .await?;
        if outcome == svc_store::UpdateOutcome::Stale {
            return Err(AuthnError::InvalidCredentials);
        }
        let (amr, acr, method) = if trusted_browser {
            (
                vec![AMR_PASSWORD.to_owned(), svc_domain::AMR_MFA.to_owned()],
                svc_domain::ACR_AAL2,
                LoginMethod::PasswordTrustedDevice,
            )
        } else {
            (
                vec![AMR_PASSWORD.to_owned()],
                ACR_AAL1,
                LoginMethod::Password,
            )
        };
        let (session, cookie_value) = self.new_session(&current, client, now, amr, acr.to_owned());
        tx.insert_session(&session).await?;
        let record = self.login_record_by(
            &tenant.id,
            &current.id,
            (method, LoginResult::Success),
            client,
            now,
        );
        tx.insert_login_record(&record).await?;
        let data = EventData::LoginSucceeded {
            user_id: current.id.clone(),
            session_id: session.id.clone(),
            method: if trusted_browser {
                "password+trusted_device".into()
            } else {
                "password".into()
            },
            client_ip: client.ip.map(|ip| ip.to_string()),
        };
        self.record_event(tx.as_mut(), &tenant.id, EventType::LoginSuccess, data)
            .await?;
        let mail = self
            .remember_browser(
                tx.as_mut(),
                tenant,
                (&current, first_sign_in),
                client,
                false,
                now,
            )
            .await?;
        tx.commit().await?;
        if let Some(mail) = mail {
            self.deliver(mail);
        }
        Ok(SignInStep::Done(Box::new(SignedIn {
            session,
            user: current,
            cookie_value,
        })))
    }

    /// The login-history record of a sign-in attempt on `user`'s account.
    pub(crate) fn login_record(
        &self,
        tenant: &svc_domain::TenantId,
        user: &UserId,
        result: LoginResult,
        client: &ClientInfo,
        now: OffsetDateTime,
    ) -> LoginRecord {
        self.login_record_by(tenant, user, (LoginMethod::Password, result), client, now)
    }

    /// The login-history record of an attempt by `method` on `user`'s account.
    pub(crate) fn login_record_by(
        &self,
        tenant: &svc_domain::TenantId,
        user: &UserId,
        (method, result): (LoginMethod, LoginResult),
        client: &ClientInfo,
        now: OffsetDateTime,
    ) -> LoginRecord {
        LoginRecord {
            id: LoginRecordId::generate(self.clock.as_ref(), self.rng.as_ref()),
            tenant_id: tenant.clone(),
            user_id: user.clone(),
            occurred_at: now,
            method,
            result,
            client_ip: client.ip.map(|ip| ip.to_string()),
            user_agent: login_user_agent(client.user_agent.as_deref()),
        }
    }
}
