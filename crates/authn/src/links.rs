//! The one-time links mailed to people, and what following them does: verify an address,
//! reset a password, accept an invitation.
//!
//! A link token is single use (consumed atomically by the store), expires, and proves only its
//! own purpose; every way a link can fail is the same [`AuthnError::InvalidLink`]. A new link of
//! a purpose replaces the older ones. Passwords are checked and hashed before the token is
//! consumed, so a refused password leaves the link usable.

use crate::captcha::{CaptchaAction, CaptchaAnswer};
use crate::engine::{Authn, SignedIn, keys};
use crate::error::AuthnError;
use crate::settings::ClientInfo;
use crate::sign_up::clean_name;
use svc_domain::{
    Email, EventData, EventType, PasswordHash, SecretHash, Tenant, User, UserId, UserStatus,
    UserTokenPurpose,
};

impl Authn {
    /// Marks the address of the link's user verified; in the same transaction, a person whose
    /// address is at a domain an organization verified with auto-join on joins it
    /// (`crate::auto_join`).
    ///
    /// Errors: [`AuthnError::InvalidLink`].
    pub async fn verify_email(&self, tenant: &Tenant, token: &str) -> Result<User, AuthnError> {
        let now = self.now();
        let mut tx = self.store.write().await?;
        let consumed = tx
            .consume_user_token(
                &tenant.id,
                &SecretHash::of(token),
                UserTokenPurpose::VerifyEmail,
                now,
            )
            .await?
            .ok_or(AuthnError::InvalidLink)?;
        let mut user = tx
            .user(&tenant.id, &consumed.user_id)
            .await?
            .filter(|u| u.status != UserStatus::Removed)
            .ok_or(AuthnError::InvalidLink)?;
        if !user.email_verified {
            let read_at = user.updated_at;
            user.email_verified = true;
            user.updated_at = now;
            changed_underneath(tx.update_user_if_unchanged(&user, read_at).await?)?;
            self.user_event(tx.as_mut(), &user, EventType::TenantUserUpdated)
                .await?;
            self.auto_join(tx.as_mut(), &user).await?;
        }
        tx.commit().await?;
        Ok(user)
    }

    /// Mails a fresh verification link to the user (older ones stop working). Nothing is sent
    /// when the address is already verified.
    ///
    /// Errors: [`AuthnError::UnknownUser`] when absent or removed.
    pub async fn resend_verification(
        &self,
        tenant: &Tenant,
        issuer: &str,
        user: &UserId,
    ) -> Result<(), AuthnError> {
        let mut tx = self.store.write().await?;
        let user = tx
            .user(&tenant.id, user)
            .await?
            .filter(|u| u.status != UserStatus::Removed)
            .ok_or(AuthnError::UnknownUser)?;
        if user.email_verified {
            return Ok(());
        }
        let mail = self
            .prepare_link(
                tx.as_mut(),
                issuer,
                &user,
                UserTokenPurpose::VerifyEmail,
                &tenant.display_name,
            )
            .await?;
        tx.commit().await?;
        self.deliver(mail);
        Ok(())
    }

    /// Mails a password-reset link to `{issuer}/auth/reset-password?token=…` when `email`
    /// belongs to a user who may use one (not removed, not suspended). The answer is the same
    /// `Ok` whether or not it does, and costs the same: an unknown address does the same store
    /// work (a link invalidation, matching nothing) and the mail of a known one is sent in the
    /// background, never awaited.
    ///
    /// Errors: [`AuthnError::RateLimited`] (per client address, with the registration limits
    /// on a counter of its own); [`AuthnError::InvalidEmail`] for a malformed address, whose
    /// shape is no secret.
    ///
    /// With a CAPTCHA ([`Authn::with_captcha`]) this fails with
    /// [`AuthnError::CaptchaRequired`]: the hosted pages use
    /// [`Authn::request_password_reset_with_captcha`].
    pub async fn request_password_reset(
        &self,
        tenant: &Tenant,
        issuer: &str,
        email: &str,
        client: &ClientInfo,
    ) -> Result<(), AuthnError> {
        self.request_password_reset_with_captcha(
            tenant,
            issuer,
            email,
            client,
            CaptchaAnswer::default(),
        )
        .await
    }

    /// [`Authn::request_password_reset`] carrying the form's CAPTCHA answer, checked (when the
    /// deployment has a CAPTCHA) before anything else: a missing or refused one writes
    /// nothing and mails nothing, whether or not the address has an account.
    ///
    /// Errors: as [`Authn::request_password_reset`]; [`AuthnError::CaptchaRequired`],
    /// [`AuthnError::CaptchaFailed`], [`AuthnError::CaptchaUnavailable`].
    pub async fn request_password_reset_with_captcha(
        &self,
        tenant: &Tenant,
        issuer: &str,
        email: &str,
        client: &ClientInfo,
        captcha: CaptchaAnswer<'_>,
    ) -> Result<(), AuthnError> {
        self.check_captcha(CaptchaAction::ForgotPassword, captcha, client)
            .await?;
        let now = self.now();
        let mut tx = self.store.write().await?;
        self.ip_limit(
            tx.as_mut(),
            keys::reset_ip(&tenant.id, client),
            self.settings.registration_max,
            self.settings.registration_window,
            now,
        )
        .await?;
        let email = match Email::parse(email) {
            Ok(email) => email,
            Err(_) => {
                tx.commit().await?;
                return Err(AuthnError::InvalidEmail);
            }
        };
        // Passwords at a domain whose organization enforces single sign-on are not reset.
        if self.sso_required(tx.as_mut(), tenant, &email).await? {
            tx.commit().await?;
            return Err(AuthnError::SsoRequired);
        }
        let user = tx
            .user_by_email(&tenant.id, &email)
            .await?
            .filter(|u| !matches!(u.status, UserStatus::Removed | UserStatus::Suspended));
        let mail = match user {
            Some(user) => Some(
                self.prepare_link(
                    tx.as_mut(),
                    issuer,
                    &user,
                    UserTokenPurpose::ResetPassword,
                    &tenant.display_name,
                )
                .await?,
            ),
            None => {
                // The same round trip a known address makes, for nobody.
                let nobody = UserId::generate(self.clock.as_ref(), self.rng.as_ref());
                tx.invalidate_user_tokens(
                    &tenant.id,
                    &nobody,
                    UserTokenPurpose::ResetPassword,
                    now,
                )
                .await?;
                None
            }
        };
        tx.commit().await?;
        if let Some(mail) = mail {
            self.deliver(mail);
        }
        Ok(())
    }

    /// Sets a new password through a reset link. The person proved the mailbox, so the address
    /// becomes verified and a pre-provisioned or invited account becomes active. In the same
    /// transaction every other reset link, every session and every refresh-token family of the
    /// user is revoked, and the account's sign-in lock is lifted.
    ///
    /// Errors: [`AuthnError::WeakPassword`], [`AuthnError::BreachedPassword`],
    /// [`AuthnError::BreachCheckUnavailable`] (the link stays usable);
    /// [`AuthnError::InvalidLink`] (also for a user suspended or removed since).
    pub async fn reset_password(
        &self,
        tenant: &Tenant,
        token: &str,
        password: &str,
    ) -> Result<User, AuthnError> {
        let password = self.check_new_password(password).await?;
        let hash = self.hash_password(&password).await?;
        let now = self.now();
        let mut tx = self.store.write().await?;
        let consumed = tx
            .consume_user_token(
                &tenant.id,
                &SecretHash::of(token),
                UserTokenPurpose::ResetPassword,
                now,
            )
            .await?
            .ok_or(AuthnError::InvalidLink)?;
        let mut user = tx
            .user(&tenant.id, &consumed.user_id)
            .await?
            .filter(|u| !matches!(u.status, UserStatus::Removed | UserStatus::Suspended))
            .ok_or(AuthnError::InvalidLink)?;
        let claimed = user.status != UserStatus::Active;
        let read_at = user.updated_at;
        set_password(&mut user, hash, now);
        changed_underneath(tx.update_user_if_unchanged(&user, read_at).await?)?;
        self.user_event(tx.as_mut(), &user, EventType::TenantUserUpdated)
            .await?;
        if claimed {
            self.user_event(tx.as_mut(), &user, EventType::TenantUserActivated)
                .await?;
        }
        tx.invalidate_user_tokens(&tenant.id, &user.id, UserTokenPurpose::ResetPassword, now)
            .await?;
        tx.revoke_user_sessions(&tenant.id, &user.id, now).await?;
        tx.revoke_user_refresh_families(&tenant.id, &user.id, now, "password_reset")
            .await?;
        tx.clear_counter(&keys::account_lock(&tenant.id, &user.email))
            .await?;
        tx.clear_counter(&keys::account_failures(&tenant.id, &user.email))
            .await?;
        tx.commit().await?;
        Ok(user)
    }

    /// Accepts an invitation: the invited account becomes active with a verified address, the
    /// chosen password and (when given) name, and the person is signed in.
    ///
    /// Errors: as [`Authn::reset_password`]; [`AuthnError::InvalidLink`] also when the account
    /// is no longer invited (accepted already, suspended, removed).
    pub async fn accept_invitation(
        &self,
        tenant: &Tenant,
        token: &str,
        password: &str,
        name: Option<&str>,
        client: &ClientInfo,
    ) -> Result<SignedIn, AuthnError> {
        let password = self.check_new_password(password).await?;
        let hash = self.hash_password(&password).await?;
        let now = self.now();
        let mut tx = self.store.write().await?;
        let consumed = tx
            .consume_user_token(
                &tenant.id,
                &SecretHash::of(token),
                UserTokenPurpose::Invitation,
                now,
            )
            .await?
            .ok_or(AuthnError::InvalidLink)?;
        let mut user = tx
            .user(&tenant.id, &consumed.user_id)
            .await?
            .filter(|u| u.status == UserStatus::Invited)
            .ok_or(AuthnError::InvalidLink)?;
        let read_at = user.updated_at;
        set_password(&mut user, hash, now);
        if let Some(name) = clean_name(name) {
            user.name = Some(name);
        }
        user.last_sign_in_at = Some(now);
        changed_underneath(tx.update_user_if_unchanged(&user, read_at).await?)?;
        self.user_event(tx.as_mut(), &user, EventType::TenantUserActivated)
            .await?;
        tx.invalidate_user_tokens(&tenant.id, &user.id, UserTokenPurpose::Invitation, now)
            .await?;
        // A new account has no second factor yet: a password alone, assurance level 1.
        let (session, cookie_value) = self.new_session(
            &user,
            client,
            now,
            vec![svc_domain::AMR_PASSWORD.to_owned()],
            svc_domain::ACR_AAL1.to_owned(),
        );
        tx.insert_session(&session).await?;
        tx.commit().await?;
        Ok(SignedIn {
            session,
            user,
            cookie_value,
        })
    }
}

impl Authn {
    /// A `tenant_user.*` event about `user`, acting on their own account.
    pub(crate) async fn user_event(
        &self,
        tx: &mut dyn svc_store::WriteTx,
        user: &User,
        event_type: EventType,
    ) -> Result<(), AuthnError> {
        let data = EventData::TenantUser {
            user_id: user.id.clone(),
            email: user.email.as_str().to_owned(),
            status: user.status.as_str().to_owned(),
            actor: format!("user:{}", user.id),
        };
        self.record_event(tx, &user.tenant_id, event_type, data)
            .await
    }
}

/// A password chosen through a mailed link: it also proves the mailbox, and claims an account
/// that was waiting for its person.
/// A link's user changed between this transaction's read and its write (an administrator's
/// concurrent change): the link's ordinary refusal; the rollback leaves the link unused.
fn changed_underneath(outcome: svc_store::UpdateOutcome) -> Result<(), AuthnError> {
    match outcome {
        svc_store::UpdateOutcome::Applied => Ok(()),
        svc_store::UpdateOutcome::Stale => Err(AuthnError::InvalidLink),
    }
}

fn set_password(user: &mut User, hash: PasswordHash, now: time::OffsetDateTime) {
    user.password_hash = Some(hash);
    user.email_verified = true;
    if matches!(
        user.status,
        UserStatus::PreProvisioned | UserStatus::Invited
    ) {
        user.status = UserStatus::Active;
    }
    user.updated_at = now;
}
