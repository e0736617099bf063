//! Self-service sign-up on a tenant's hosted pages, when the tenant allows it.
//!
//! Every attempt counts against the per-IP registration limit before anything else is checked.
//! The answer never tells whether the address already has an account (no account enumeration,
//! OWASP ASVS V2.2): a taken address goes through the same password policy and Argon2 hashing
//! as a fresh one, its owner is mailed a short notice instead of a verification link, and the
//! caller gets the same `Ok(())`. A new account is `active` with an unverified address and a
//! verification link is mailed; nobody is signed in by sign-up (that would tell the two cases
//! apart), the person signs in once the mail arrived.

use crate::captcha::{CaptchaAction, CaptchaAnswer};
use crate::engine::{Authn, keys};
use crate::error::AuthnError;
use crate::settings::ClientInfo;
use svc_domain::{Email, EventType, Tenant, User, UserId, UserStatus, UserTokenPurpose};
use svc_store::StoreError;

/// What a person types into the sign-up form.
#[derive(Clone, Copy)]
pub struct SignUpFields<'a> {
    /// The address.
    pub email: &'a str,
    /// The chosen password.
    pub password: &'a str,
    /// The display name, when given.
    pub name: Option<&'a str>,
}

impl std::fmt::Debug for SignUpFields<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignUpFields")
            .field("email", &self.email)
            .field("password", &"<redacted>")
            .field("name", &self.name)
            .finish()
    }
}

/// Longest name kept, in characters.
pub const MAX_NAME_CHARS: usize = 200;

/// A display name as people type it: trimmed, control characters dropped, at most
/// [`MAX_NAME_CHARS`] characters; empty means none.
pub fn clean_name(raw: Option<&str>) -> Option<String> {
    let name: String = raw?
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_NAME_CHARS)
        .collect();
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

impl Authn {
    /// Registers `email` with `password`: a new account gets a verification link to
    /// `{issuer}/auth/verify-email?token=…`; an address that already has an account gets a
    /// notice that someone tried to sign up with it. Both answer `Ok(())` after the same
    /// checks and hashing, and neither signs anybody in.
    ///
    /// Errors (none depends on whether the address is taken): [`AuthnError::SignupClosed`]
    /// unless the tenant allows sign-up; [`AuthnError::RateLimited`];
    /// [`AuthnError::InvalidEmail`]; [`AuthnError::WeakPassword`],
    /// [`AuthnError::BreachedPassword`], [`AuthnError::BreachCheckUnavailable`].
    ///
    /// With a CAPTCHA ([`Authn::with_captcha`]) this fails with
    /// [`AuthnError::CaptchaRequired`]: the hosted pages use [`Authn::sign_up_with_captcha`].
    pub async fn sign_up(
        &self,
        tenant: &Tenant,
        issuer: &str,
        email: &str,
        password: &str,
        name: Option<&str>,
        client: &ClientInfo,
    ) -> Result<(), AuthnError> {
        let fields = SignUpFields {
            email,
            password,
            name,
        };
        self.sign_up_with_captcha(tenant, issuer, fields, client, CaptchaAnswer::default())
            .await
    }

    /// [`Authn::sign_up`] carrying the form's CAPTCHA answer, checked (when the deployment has
    /// a CAPTCHA) before anything else: a missing or refused one writes nothing, not even a
    /// hit on the registration limit.
    ///
    /// Errors: as [`Authn::sign_up`]; [`AuthnError::CaptchaRequired`],
    /// [`AuthnError::CaptchaFailed`], [`AuthnError::CaptchaUnavailable`].
    pub async fn sign_up_with_captcha(
        &self,
        tenant: &Tenant,
        issuer: &str,
        fields: SignUpFields<'_>,
        client: &ClientInfo,
        captcha: CaptchaAnswer<'_>,
    ) -> Result<(), AuthnError> {
        if !tenant.signup_enabled {
            return Err(AuthnError::SignupClosed);
        }
        self.check_captcha(CaptchaAction::SignUp, captcha, client)
            .await?;
        let SignUpFields {
            email,
            password,
            name,
        } = fields;
        let now = self.now();
        let mut tx = self.store.write().await?;
        self.ip_limit(
            tx.as_mut(),
            keys::signup_ip(&tenant.id, client),
            self.settings.registration_max,
            self.settings.registration_window,
            now,
        )
        .await?;
        tx.commit().await?;

        let email = Email::parse(email).map_err(|_| AuthnError::InvalidEmail)?;
        self.refuse_if_sso_required(tenant, &email).await?;
        let password = self.check_new_password(password).await?;
        // Hashed before the address is looked up, so both outcomes cost one hash.
        let hash = self.hash_password(&password).await?;

        let now = self.now();
        let user = User {
            id: UserId::generate(self.clock.as_ref(), self.rng.as_ref()),
            tenant_id: tenant.id.clone(),
            email,
            email_verified: false,
            name: clean_name(name),
            given_name: None,
            family_name: None,
            status: UserStatus::Active,
            password_hash: Some(hash),
            created_at: now,
            updated_at: now,
            last_sign_in_at: None,
        };
        let mut tx = self.store.write().await?;
        let taken = tx.user_by_email(&tenant.id, &user.email).await?.is_some();
        let inserted = if taken {
            false
        } else {
            match tx.insert_user(&user).await {
                Ok(()) => true,
                // Another sign-up for the address won the race: the address is taken.
                Err(StoreError::Conflict { .. }) => false,
                Err(e) => return Err(e.into()),
            }
        };
        if inserted {
            self.user_event(tx.as_mut(), &user, EventType::TenantUserActivated)
                .await?;
        }
        let mail = if inserted {
            self.prepare_link(
                tx.as_mut(),
                issuer,
                &user,
                UserTokenPurpose::VerifyEmail,
                &tenant.display_name,
            )
            .await?
        } else {
            self.settings
                .mail_texts
                .sign_up_notice(&user.email, &tenant.display_name, issuer)
        };
        tx.commit().await?;
        self.deliver(mail);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_trimmed_cleaned_and_bounded() {
        assert_eq!(clean_name(None), None);
        assert_eq!(clean_name(Some("   ")), None);
        assert_eq!(
            clean_name(Some(" Ada\u{0} Lovelace\n")),
            Some("Ada Lovelace".into())
        );
        assert_eq!(
            clean_name(Some(&"x".repeat(300))).map(|n| n.chars().count()),
            Some(MAX_NAME_CHARS)
        );
    }
}
