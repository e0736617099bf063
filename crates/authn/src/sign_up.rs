//! Self-service sign-up on a tenant's hosted pages, when the tenant allows it.
//!
//! Every attempt counts against the per-IP registration limit before anything else is checked,
//! so the "address taken" answer cannot be used to enumerate accounts at speed. The new account
//! is `active` with an unverified address; a verification link is mailed and the person is
//! signed in at once.

use crate::engine::{Authn, SignedIn, keys};
use crate::error::AuthnError;
use crate::settings::ClientInfo;
use svc_domain::{Email, Tenant, User, UserId, UserStatus, UserTokenPurpose};
use svc_store::StoreError;

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
    /// Creates an account for `email` with `password`, mails a verification link to
    /// `{issuer}/auth/verify-email?token=…`, and signs the person in.
    ///
    /// Errors: [`AuthnError::SignupClosed`] unless the tenant allows sign-up;
    /// [`AuthnError::RateLimited`]; [`AuthnError::InvalidEmail`];
    /// [`AuthnError::WeakPassword`], [`AuthnError::BreachedPassword`],
    /// [`AuthnError::BreachCheckUnavailable`]; [`AuthnError::EmailTaken`].
    pub async fn sign_up(
        &self,
        tenant: &Tenant,
        issuer: &str,
        email: &str,
        password: &str,
        name: Option<&str>,
        client: &ClientInfo,
    ) -> Result<SignedIn, AuthnError> {
        if !tenant.signup_enabled {
            return Err(AuthnError::SignupClosed);
        }
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
        let password = self.check_new_password(password).await?;
        {
            let mut read = self.store.read().await?;
            let taken = read.user_by_email(&tenant.id, &email).await?.is_some();
            read.finish().await?;
            if taken {
                return Err(AuthnError::EmailTaken);
            }
        }
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
            last_sign_in_at: Some(now),
        };
        let mut tx = self.store.write().await?;
        match tx.insert_user(&user).await {
            Ok(()) => {}
            // Another sign-up for the address won the race.
            Err(StoreError::Conflict { .. }) => return Err(AuthnError::EmailTaken),
            Err(e) => return Err(e.into()),
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
        let (session, cookie_value) = self.new_session(&user, client, now);
        tx.insert_session(&session).await?;
        tx.commit().await?;
        self.deliver(&mail).await;
        Ok(SignedIn {
            session,
            user,
            cookie_value,
        })
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
