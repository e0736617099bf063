//! Passkeys (CONTRACTS.md "Assurance, factors and step-up"): registering one from the account
//! page, signing in with one instead of a password, renaming and removing them.
//!
//! Rules, each enforced here and tested:
//! - Every ceremony's state stays server-side ([`WebauthnCeremony`]); the browser holds only a
//!   random cookie whose hash finds it. A ceremony answers one purpose, once, before it expires:
//!   a replayed, foreign or stale answer finds nothing.
//! - A registration ceremony belongs to the person who started it: an answer carried to another
//!   person's session is refused, whatever its content.
//! - A passkey is a sign-in on its own at `urn:svc:aal2` (WebAuthn with user verification is
//!   two factors: the key and the PIN or biometric that unlocks it), with `amr`
//!   `[hwk|swk, user, mfa]` (RFC 8176): `swk` when the authenticator may sync it
//!   (backup eligible), `hwk` otherwise.
//! - Sign-in finds the passkey by its credential id within the tenant and checks that the
//!   answer's user handle is the passkey's owner before verifying anything, so a credential
//!   cannot sign in as somebody else.
//! - A signature counter that does not move forward means a cloned authenticator (WebAuthn
//!   L3 §6.1.1): the sign-in is refused, recorded as `security.suspicious_activity`, and the
//!   stored counter is left as it was.
//! - Adding a passkey adds a way in that skips every other factor, so a person who already has
//!   a second factor or a passkey needs an aal2 session to add one (a stolen aal1 cookie cannot
//!   plant a key). Renaming and removing need only the person's session.
//! - Every refusal of an answer is one [`AuthnError::PasskeyRefused`]: which check failed is
//!   for logs.

pub(crate) mod rp;

pub use rp::RpSettings;

use crate::engine::{Authn, SignedIn};
use crate::error::AuthnError;
use crate::settings::{ClientInfo, span};
use rp::{Refusal, RelyingParty};
use std::time::Duration;
use svc_domain::{
    ACR_AAL2, AMR_MFA, AMR_USER, CeremonyPurpose, EventData, EventType, GeneratedSecret,
    LoginFailureReason, LoginMethod, LoginResult, Passkey, PasskeyId, SecondFactor, SecretHash,
    Session, Tenant, User, UserId, WebauthnCeremony, acr_rank, clean_passkey_name,
};
use svc_store::{FactorReads, PasskeyReads, StoreError, WriteTx};
use time::OffsetDateTime;

/// How long a security-key ceremony lasts when `[passkey]` does not say.
const DEFAULT_CEREMONY_LIFETIME: Duration = Duration::from_secs(300);

/// Prefix of ceremony cookie values (`wan_c_…`): 256 random bits, stored only as SHA-256.
pub const CEREMONY_COOKIE_PREFIX: &str = "wan_c_";

/// What the runtime hands in from `[passkey]`.
#[derive(Debug, Clone)]
pub struct PasskeySettings {
    /// RP ID and extra origins.
    pub rp: RpSettings,
    /// How long a browser has to answer a ceremony.
    pub ceremony_lifetime: Duration,
}

/// A ceremony just started: the options to hand to `navigator.credentials`, and the cookie
/// that finds its state again.
#[derive(Clone)]
pub struct CeremonyStart {
    /// `{"publicKey": {...}}`, as the browser glue passes it on.
    pub options: serde_json::Value,
    /// The ceremony cookie's value; shown this once, only its hash is stored.
    pub cookie_value: String,
    /// When the ceremony expires.
    pub expires_at: OffsetDateTime,
}

impl std::fmt::Debug for CeremonyStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CeremonyStart")
            .field("cookie_value", &"<redacted>")
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

impl Authn {
    /// Turns passkeys on ([`PasskeySettings`] from `[passkey]`).
    #[must_use]
    pub fn with_passkeys(mut self, settings: PasskeySettings) -> Self {
        self.passkeys = Some(settings);
        self
    }

    /// Whether passkeys are on.
    pub fn passkeys_enabled(&self) -> bool {
        self.passkeys.is_some()
    }

    /// How long a browser has to answer a ceremony: `[passkey]`'s lifetime, or with only
    /// second factors on (security keys) the default five minutes; `None` when neither is on.
    pub fn ceremony_lifetime(&self) -> Option<Duration> {
        match (&self.passkeys, &self.two_factor) {
            (Some(passkeys), _) => Some(passkeys.ceremony_lifetime),
            (None, Some(_)) => Some(DEFAULT_CEREMONY_LIFETIME),
            (None, None) => None,
        }
    }

    /// Whether `session` may add a passkey for `user` now (the account page offers the form
    /// only then); see [`Authn::begin_passkey_registration`].
    pub async fn may_add_passkey_now(
        &self,
        tenant: &Tenant,
        session: &Session,
        user: &User,
    ) -> Result<bool, AuthnError> {
        self.passkeys_on()?;
        debug_assert_eq!(tenant.id, user.tenant_id);
        let mut tx = self.store.read().await?;
        let allowed = match self.may_add_passkey(tx.as_mut(), session, user).await {
            Ok(()) => true,
            Err(AuthnError::StepUpRequired) => false,
            Err(other) => return Err(other),
        };
        tx.finish().await?;
        Ok(allowed)
    }

    fn passkeys_on(&self) -> Result<&PasskeySettings, AuthnError> {
        self.passkeys.as_ref().ok_or(AuthnError::PasskeysOff)
    }

    /// The tenant's relying party (passkeys and security keys share it).
    pub(crate) fn relying_party(
        &self,
        tenant: &Tenant,
        issuer: &str,
    ) -> Result<RelyingParty, AuthnError> {
        let settings = self
            .passkeys
            .as_ref()
            .map(|p| p.rp.clone())
            .unwrap_or_default();
        RelyingParty::for_issuer(&settings, issuer, &tenant.display_name)
    }

    /// The person's passkeys, oldest first.
    pub async fn passkeys(
        &self,
        tenant: &Tenant,
        user: &UserId,
    ) -> Result<Vec<Passkey>, AuthnError> {
        self.passkeys_on()?;
        let mut tx = self.store.read().await?;
        let passkeys = tx.passkeys(&tenant.id, user).await?;
        tx.finish().await?;
        Ok(passkeys)
    }

    /// Stores the state of a new ceremony and returns its cookie.
    pub(crate) async fn open_ceremony(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        user: Option<&UserId>,
        purpose: CeremonyPurpose,
        (options, state): (serde_json::Value, String),
    ) -> Result<CeremonyStart, AuthnError> {
        let lifetime = self.ceremony_lifetime().ok_or(AuthnError::PasskeysOff)?;
        let now = self.now();
        let secret = GeneratedSecret::generate(CEREMONY_COOKIE_PREFIX, self.rng.as_ref());
        let ceremony = WebauthnCeremony {
            hash: secret.hash,
            tenant_id: tenant.id.clone(),
            user_id: user.cloned(),
            purpose,
            state,
            created_at: now,
            expires_at: now + span(lifetime),
            used_at: None,
        };
        tx.insert_webauthn_ceremony(&ceremony).await?;
        Ok(CeremonyStart {
            options,
            cookie_value: secret.plaintext,
            expires_at: ceremony.expires_at,
        })
    }

    /// Spends the ceremony behind `cookie` for `purpose` in a transaction of its own,
    /// committed at once: an answer is checked against it once, right or wrong, even when the
    /// check's own transaction rolls back.
    pub(crate) async fn spend_ceremony(
        &self,
        tenant: &Tenant,
        cookie: &str,
        purpose: CeremonyPurpose,
    ) -> Result<WebauthnCeremony, AuthnError> {
        if !cookie.starts_with(CEREMONY_COOKIE_PREFIX) {
            return Err(AuthnError::CeremonyExpired);
        }
        let mut tx = self.store.write().await?;
        let ceremony = tx
            .take_webauthn_ceremony(&tenant.id, &SecretHash::of(cookie), purpose, self.now())
            .await?
            .ok_or(AuthnError::CeremonyExpired)?;
        tx.commit().await?;
        Ok(ceremony)
    }

    /// Whether `session` may add a way in for `user`: always when the person has neither a
    /// second factor nor a passkey, otherwise only at aal2.
    async fn may_add_passkey<T>(
        &self,
        tx: &mut T,
        session: &Session,
        user: &User,
    ) -> Result<(), AuthnError>
    where
        T: PasskeyReads + FactorReads + Send + ?Sized,
    {
        let strong = session
            .acr
            .as_deref()
            .and_then(acr_rank)
            .is_some_and(|rank| acr_rank(ACR_AAL2).is_some_and(|aal2| rank >= aal2));
        if strong {
            return Ok(());
        }
        let has_passkey = !tx.passkeys(&user.tenant_id, &user.id).await?.is_empty();
        let has_factor = self.two_factor.is_some()
            && tx
                .second_factors(&user.tenant_id, &user.id)
                .await?
                .iter()
                .any(SecondFactor::is_confirmed);
        if has_passkey || has_factor {
            Err(AuthnError::StepUpRequired)
        } else {
            Ok(())
        }
    }

    /// Starts registering a passkey for the signed-in `user` (the options exclude the passkeys
    /// they have, so one authenticator is not registered twice).
    ///
    /// Errors: [`AuthnError::StepUpRequired`] when the person has another way in and the
    /// session is not aal2; [`AuthnError::PasskeysOff`].
    pub async fn begin_passkey_registration(
        &self,
        tenant: &Tenant,
        issuer: &str,
        session: &Session,
        user: &User,
    ) -> Result<CeremonyStart, AuthnError> {
        self.passkeys_on()?;
        let rp = self.relying_party(tenant, issuer)?;
        let mut tx = self.store.write().await?;
        self.may_add_passkey(tx.as_mut(), session, user).await?;
        let existing: Vec<Vec<u8>> = tx
            .passkeys(&tenant.id, &user.id)
            .await?
            .into_iter()
            .map(|p| p.credential_id)
            .collect();
        let display = user.name.as_deref().unwrap_or(user.email.as_str());
        let started = rp.start_registration(&user.id, user.email.as_str(), display, &existing)?;
        let start = self
            .open_ceremony(
                tx.as_mut(),
                tenant,
                Some(&user.id),
                CeremonyPurpose::PasskeyRegistration,
                started,
            )
            .await?;
        tx.commit().await?;
        Ok(start)
    }

    /// Completes a registration with the browser's `answer` (the JSON of its
    /// `PublicKeyCredential`), naming the passkey `name`.
    ///
    /// Errors: [`AuthnError::CeremonyExpired`] (unknown, used, expired, or started by another
    /// person); [`AuthnError::PasskeyRefused`] for an answer that does not verify;
    /// [`AuthnError::PasskeyAlreadyRegistered`]; [`AuthnError::InvalidPasskeyName`];
    /// [`AuthnError::StepUpRequired`] as for [`Authn::begin_passkey_registration`].
    pub async fn finish_passkey_registration(
        &self,
        tenant: &Tenant,
        issuer: &str,
        (session, user): (&Session, &User),
        cookie: &str,
        answer: &str,
        name: &str,
    ) -> Result<Passkey, AuthnError> {
        self.passkeys_on()?;
        let rp = self.relying_party(tenant, issuer)?;
        let name = clean_passkey_name(name).ok_or(AuthnError::InvalidPasskeyName)?;
        let now = self.now();
        let ceremony = self
            .spend_ceremony(tenant, cookie, CeremonyPurpose::PasskeyRegistration)
            .await?;
        if ceremony.user_id.as_ref() != Some(&user.id) {
            return Err(AuthnError::CeremonyExpired);
        }
        let registered = rp
            .finish_registration(answer, &ceremony.state)
            .map_err(|refusal| refused("registration", &refusal))?;
        let passkey = Passkey {
            id: PasskeyId::generate(self.clock.as_ref(), self.rng.as_ref()),
            tenant_id: tenant.id.clone(),
            user_id: user.id.clone(),
            name,
            credential_id: registered.credential_id,
            credential: registered.credential,
            backup_eligible: registered.backup_eligible,
            created_at: now,
            last_used_at: None,
        };
        let mut tx = self.store.write().await?;
        // Checked again in the transaction that writes: the person's ways in may have changed.
        self.may_add_passkey(tx.as_mut(), session, user).await?;
        match tx.insert_passkey(&passkey).await {
            Err(StoreError::Conflict { .. }) => return Err(AuthnError::PasskeyAlreadyRegistered),
            other => other?,
        }
        // A new factor settles what a recovery by guardians left owing.
        tx.clear_recovery_factor_due(&tenant.id, &user.id).await?;
        self.passkey_event(tx.as_mut(), tenant, &passkey, EventType::PasskeyRegistered)
            .await?;
        tx.commit().await?;
        Ok(passkey)
    }

    async fn passkey_event(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        passkey: &Passkey,
        event: EventType,
    ) -> Result<(), AuthnError> {
        let data = EventData::PasskeyChanged {
            user_id: passkey.user_id.clone(),
            passkey_id: passkey.id.clone(),
            name: passkey.name.clone(),
            binding: passkey.binding_amr().to_owned(),
            actor: format!("user:{}", passkey.user_id),
        };
        self.record_event(tx, &tenant.id, event, data).await
    }

    /// Renames the person's passkey `id`.
    ///
    /// Errors: [`AuthnError::UnknownPasskey`] when it is not theirs;
    /// [`AuthnError::InvalidPasskeyName`].
    pub async fn rename_passkey(
        &self,
        tenant: &Tenant,
        user: &UserId,
        id: &PasskeyId,
        name: &str,
    ) -> Result<(), AuthnError> {
        self.passkeys_on()?;
        let name = clean_passkey_name(name).ok_or(AuthnError::InvalidPasskeyName)?;
        let mut tx = self.store.write().await?;
        if !tx.rename_passkey(&tenant.id, user, id, &name).await? {
            return Err(AuthnError::UnknownPasskey);
        }
        tx.commit().await?;
        Ok(())
    }

    /// Removes the person's passkey `id` (`auth.passkey.removed`).
    ///
    /// Errors: [`AuthnError::UnknownPasskey`] when it is not theirs.
    pub async fn remove_passkey(
        &self,
        tenant: &Tenant,
        user: &UserId,
        id: &PasskeyId,
    ) -> Result<(), AuthnError> {
        self.passkeys_on()?;
        let mut tx = self.store.write().await?;
        let passkey = tx
            .passkeys(&tenant.id, user)
            .await?
            .into_iter()
            .find(|p| &p.id == id)
            .ok_or(AuthnError::UnknownPasskey)?;
        if !tx.delete_passkey(&tenant.id, user, id).await? {
            return Err(AuthnError::UnknownPasskey);
        }
        self.passkey_event(tx.as_mut(), tenant, &passkey, EventType::PasskeyRemoved)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Starts a sign-in with a passkey: options naming no credential, so the authenticator
    /// offers the person's passkeys for this tenant (by autofill where the browser can).
    pub async fn begin_passkey_sign_in(
        &self,
        tenant: &Tenant,
        issuer: &str,
    ) -> Result<CeremonyStart, AuthnError> {
        self.passkeys_on()?;
        let rp = self.relying_party(tenant, issuer)?;
        let started = rp.start_sign_in()?;
        let mut tx = self.store.write().await?;
        let start = self
            .open_ceremony(
                tx.as_mut(),
                tenant,
                None,
                CeremonyPurpose::PasskeySignIn,
                started,
            )
            .await?;
        tx.commit().await?;
        Ok(start)
    }

    /// Completes a passkey sign-in with the browser's `answer`, creating an aal2 session.
    ///
    /// Errors: [`AuthnError::CeremonyExpired`] for an unknown, used or expired ceremony;
    /// [`AuthnError::PasskeyRefused`] for anything else that does not check out (unknown
    /// credential, another person's user handle, bad signature, no user verification, a
    /// counter that went back, an account that may not sign in).
    pub async fn finish_passkey_sign_in(
        &self,
        tenant: &Tenant,
        issuer: &str,
        cookie: &str,
        answer: &str,
        client: &ClientInfo,
    ) -> Result<SignedIn, AuthnError> {
        self.passkeys_on()?;
        let rp = self.relying_party(tenant, issuer)?;
        let now = self.now();
        let ceremony = self
            .spend_ceremony(tenant, cookie, CeremonyPurpose::PasskeySignIn)
            .await?;
        let (handle, credential_id) = rp
            .identify(answer)
            .map_err(|refusal| refused("sign-in", &refusal))?;
        let mut tx = self.store.write().await?;
        let passkey = tx
            .passkey_by_credential(&tenant.id, &credential_id)
            .await?
            .filter(|p| p.user_id.to_u128() == handle);
        let Some(passkey) = passkey else {
            // Nobody's passkey here (or not the person the answer claims): nobody's history.
            tx.commit().await?;
            return Err(AuthnError::PasskeyRefused);
        };
        let user = tx
            .user(&tenant.id, &passkey.user_id)
            .await?
            .filter(User::can_sign_in);
        let verdict = rp.finish_sign_in(answer, &ceremony.state, &passkey.credential);
        let (used, mut user) = match (verdict, user) {
            (Ok(used), Some(user)) => (used, user),
            (verdict, _) => {
                let suspicious = matches!(verdict, Err(Refusal::CounterRegressed));
                if let Err(refusal) = &verdict {
                    refused("sign-in", refusal);
                }
                self.passkey_failure(tx.as_mut(), tenant, &passkey, suspicious, client, now)
                    .await?;
                tx.commit().await?;
                return Err(AuthnError::PasskeyRefused);
            }
        };
        let recorded = tx
            .record_passkey_use(
                &tenant.id,
                &passkey.id,
                &used.credential,
                used.backup_eligible,
                now,
            )
            .await?;
        if !recorded {
            // Removed while we verified.
            return Err(AuthnError::PasskeyRefused);
        }
        let first_sign_in = user.last_sign_in_at.is_none();
        user.last_sign_in_at = Some(now);
        if tx.update_user_if_unchanged(&user, user.updated_at).await?
            == svc_store::UpdateOutcome::Stale
        {
            return Err(AuthnError::PasskeyRefused);
        }
        let binding = if used.backup_eligible {
            svc_domain::AMR_SWK
        } else {
            svc_domain::AMR_HWK
        };
        let amr = vec![binding.to_owned(), AMR_USER.to_owned(), AMR_MFA.to_owned()];
        let (session, cookie_value) =
            self.new_session(&user, client, now, amr, ACR_AAL2.to_owned());
        tx.insert_session(&session).await?;
        let record = self.login_record_by(
            &tenant.id,
            &user.id,
            (LoginMethod::Passkey, LoginResult::Success),
            client,
            now,
        );
        tx.insert_login_record(&record).await?;
        let data = EventData::LoginSucceeded {
            user_id: user.id.clone(),
            session_id: session.id.clone(),
            method: "passkey".into(),
            client_ip: client.ip.map(|ip| ip.to_string()),
        };
        self.record_event(tx.as_mut(), &tenant.id, EventType::LoginSuccess, data)
            .await?;
        let mail = self
            .remember_browser(
                tx.as_mut(),
                tenant,
                (&user, first_sign_in),
                client,
                false,
                now,
            )
            .await?;
        tx.commit().await?;
        if let Some(mail) = mail {
            self.deliver(mail);
        }
        Ok(SignedIn {
            session,
            user,
            cookie_value,
        })
    }

    /// Records a refused passkey sign-in on the passkey owner's account: the login history,
    /// `auth.login.failure`, and for a counter that went back `security.suspicious_activity`.
    async fn passkey_failure(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        passkey: &Passkey,
        suspicious: bool,
        client: &ClientInfo,
        now: OffsetDateTime,
    ) -> Result<(), AuthnError> {
        let client_ip = client.ip.map(|ip| ip.to_string());
        let record = self.login_record_by(
            &tenant.id,
            &passkey.user_id,
            (LoginMethod::Passkey, LoginResult::InvalidCredentials),
            client,
            now,
        );
        tx.insert_login_record(&record).await?;
        let data = EventData::LoginFailed {
            user_id: Some(passkey.user_id.clone()),
            reason: LoginFailureReason::InvalidCredentials,
            client_ip: client_ip.clone(),
        };
        self.record_event(tx, &tenant.id, EventType::LoginFailure, data)
            .await?;
        if suspicious {
            let data = EventData::SuspiciousActivity {
                user_id: passkey.user_id.clone(),
                signal: "webauthn_counter_regressed".into(),
                credential: Some(passkey.id.to_string()),
                client_ip,
            };
            self.record_event(tx, &tenant.id, EventType::SecuritySuspiciousActivity, data)
                .await?;
        }
        Ok(())
    }
}

/// Logs why an answer was refused (never the answer) and returns the one refusal people see.
pub(crate) fn refused(ceremony: &str, refusal: &Refusal) -> AuthnError {
    match refusal {
        Refusal::CounterRegressed => {
            tracing::warn!(
                ceremony,
                "passkey signature counter went back: possible clone"
            );
        }
        Refusal::Invalid(why) => {
            tracing::info!(ceremony, why = %why, "passkey answer refused");
        }
    }
    AuthnError::PasskeyRefused
}
