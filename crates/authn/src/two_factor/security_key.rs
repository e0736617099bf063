//! WebAuthn security keys as a second factor: registering one from the two-step page, and the
//! browser ceremony that proves one at the second step of a sign-in or a step-up.
//!
//! A key is a [`SecondFactor`] of kind `security_key` whose sealed secret is the WebAuthn
//! credential (public key and signature counter), sealed under the factor key and bound to its
//! row, so a public key swapped in the database does not open. Registering it proves it, so it
//! is confirmed at once and, like a confirmed authenticator app, raises the registering session
//! to aal2 and brings the first set of backup codes. Proving it goes through a ceremony whose
//! state stays server-side (`crate::passkeys`), for the person who owes the second step only;
//! a wrong, foreign or replayed answer counts as a wrong code (and locks like one), and a
//! signature counter that goes back is refused and recorded as `security.suspicious_activity`.

use super::{CodeKind, Confirmed};
use crate::engine::{Authn, SignedIn};
use crate::error::AuthnError;
use crate::passkeys::rp::{Refusal, RelyingParty};
use crate::passkeys::{CeremonyStart, refused};
use crate::settings::ClientInfo;
use svc_domain::{
    ACR_AAL2, CeremonyPurpose, EventData, EventType, FactorId, FactorKind, SecondFactor,
    SecretHash, Session, Tenant, User, UserId, WebauthnCeremony, clean_passkey_name,
};
use svc_store::{FactorReads, WriteTx};

/// Whose second step a security key is asked for.
#[derive(Debug, Clone, Copy)]
pub enum KeyStep<'a> {
    /// The sign-in behind this challenge cookie (after a correct password).
    SignIn(&'a str),
    /// This live session, stepping up.
    StepUp(&'a Session),
}

/// How a second step is proved.
#[derive(Debug, Clone, Copy)]
pub enum SecondProof<'a> {
    /// A TOTP code or a backup code, as typed.
    Code(&'a str),
    /// A security key's answer (`PublicKeyCredential` JSON) to the ceremony behind `ceremony`,
    /// for the tenant issuer `issuer`.
    Key {
        /// The tenant's issuer (the relying party).
        issuer: &'a str,
        /// The ceremony cookie's value.
        ceremony: &'a str,
        /// The browser's answer.
        answer: &'a str,
    },
}

/// What checking a proof found.
pub(super) enum Checked {
    /// Right: spent (TOTP step, backup code, key counter).
    Passed(CodeKind),
    /// Wrong, replayed, foreign or used.
    Failed,
    /// A security key whose counter went back: a clone.
    Cloned(FactorId),
}

impl Authn {
    /// The person's confirmed security keys with their opened credentials.
    pub(super) async fn security_keys<T>(
        &self,
        tx: &mut T,
        user: &User,
    ) -> Result<Vec<(SecondFactor, String)>, AuthnError>
    where
        T: FactorReads + Send + ?Sized,
    {
        let settings = self.two_factor_on()?;
        let factors = tx.second_factors(&user.tenant_id, &user.id).await?;
        let mut keys = Vec::new();
        for factor in factors
            .into_iter()
            .filter(|f| f.is_confirmed() && f.kind == FactorKind::SecurityKey)
        {
            let opened = settings
                .key
                .open_bytes(
                    &factor.sealed_secret,
                    &factor.tenant_id,
                    &factor.user_id,
                    &factor.id,
                )
                .map_err(|e| {
                    AuthnError::Internal(format!(
                        "the security key {} does not open: {e}",
                        factor.id
                    ))
                })?;
            let credential = String::from_utf8(opened.to_vec()).map_err(|_| {
                AuthnError::Internal(format!("the security key {} is not text", factor.id))
            })?;
            keys.push((factor, credential));
        }
        Ok(keys)
    }

    /// Whether the person at this second step has a security key to offer.
    pub async fn security_key_offered(
        &self,
        tenant: &Tenant,
        step: KeyStep<'_>,
    ) -> Result<bool, AuthnError> {
        if self.two_factor.is_none() {
            return Ok(false);
        }
        let mut tx = self.store.read().await?;
        let user = match step {
            KeyStep::SignIn(cookie) => tx
                .factor_challenge(&tenant.id, &SecretHash::of(cookie), self.now())
                .await?
                .map(|c| c.user_id),
            KeyStep::StepUp(session) => Some(session.user_id.clone()),
        };
        let offered = match user {
            Some(user) => tx
                .second_factors(&tenant.id, &user)
                .await?
                .iter()
                .any(|f| f.is_confirmed() && f.kind == FactorKind::SecurityKey),
            None => false,
        };
        tx.finish().await?;
        Ok(offered)
    }

    /// Starts registering a security key for the signed-in `user`.
    ///
    /// Errors: [`AuthnError::StepUpRequired`] when the person has a factor and the session is
    /// not aal2; [`AuthnError::TwoFactorOff`].
    pub async fn begin_security_key_registration(
        &self,
        tenant: &Tenant,
        issuer: &str,
        session: &Session,
        user: &User,
    ) -> Result<CeremonyStart, AuthnError> {
        self.enrolment_on(tenant)?;
        let rp = self.relying_party(tenant, issuer)?;
        let mut tx = self.store.write().await?;
        self.may_manage(tx.as_mut(), session, user).await?;
        let existing: Vec<Vec<u8>> = self
            .security_keys(tx.as_mut(), user)
            .await?
            .iter()
            .filter_map(|(_, credential)| RelyingParty::key_credential_id(credential))
            .collect();
        let display = user.name.as_deref().unwrap_or(user.email.as_str());
        let started =
            rp.start_key_registration(&user.id, user.email.as_str(), display, &existing)?;
        let start = self
            .open_ceremony(
                tx.as_mut(),
                tenant,
                Some(&user.id),
                CeremonyPurpose::SecurityKeyRegistration,
                started,
            )
            .await?;
        tx.commit().await?;
        Ok(start)
    }

    /// Completes a security-key registration named `name`: the key is confirmed, the session is
    /// raised to aal2 (a new session replaces it), and a first factor brings backup codes.
    ///
    /// Errors: [`AuthnError::CeremonyExpired`] (unknown, used, expired, another person's);
    /// [`AuthnError::PasskeyRefused`] for an answer that does not verify;
    /// [`AuthnError::PasskeyAlreadyRegistered`] for a key already registered;
    /// [`AuthnError::InvalidPasskeyName`]; [`AuthnError::StepUpRequired`];
    /// [`AuthnError::ChallengeExpired`] when the session ended meanwhile.
    pub async fn finish_security_key_registration(
        &self,
        tenant: &Tenant,
        issuer: &str,
        (session, user): (&Session, &User),
        (cookie, answer, name): (&str, &str, &str),
        client: &ClientInfo,
    ) -> Result<Confirmed, AuthnError> {
        let settings = self.enrolment_on(tenant)?;
        let rp = self.relying_party(tenant, issuer)?;
        let label = clean_passkey_name(name).ok_or(AuthnError::InvalidPasskeyName)?;
        let ceremony = self
            .spend_ceremony(tenant, cookie, CeremonyPurpose::SecurityKeyRegistration)
            .await?;
        if ceremony.user_id.as_ref() != Some(&user.id) {
            return Err(AuthnError::CeremonyExpired);
        }
        let (credential_id, credential) = rp
            .finish_key_registration(answer, &ceremony.state)
            .map_err(|refusal| refused("security key registration", &refusal))?;
        let now = self.now();
        let id = FactorId::generate(self.clock.as_ref(), self.rng.as_ref());
        let sealed = settings
            .key
            .seal_bytes(credential.as_bytes(), &tenant.id, &user.id, &id)
            .map_err(|e| AuthnError::Internal(format!("sealing a security key: {e}")))?;
        let mut tx = self.store.write().await?;
        let current = tx
            .session(&tenant.id, &session.id)
            .await?
            .filter(|s| s.is_live(now) && s.user_id == user.id)
            .ok_or(AuthnError::ChallengeExpired)?;
        self.may_manage(tx.as_mut(), session, user).await?;
        let registered = self.security_keys(tx.as_mut(), user).await?;
        if registered.iter().any(|(_, c)| {
            RelyingParty::key_credential_id(c).as_deref() == Some(credential_id.as_slice())
        }) {
            return Err(AuthnError::PasskeyAlreadyRegistered);
        }
        let factor = SecondFactor {
            id: id.clone(),
            tenant_id: tenant.id.clone(),
            user_id: user.id.clone(),
            kind: FactorKind::SecurityKey,
            label,
            sealed_secret: sealed,
            confirmed_at: Some(now),
            last_used_step: None,
            created_at: now,
        };
        tx.insert_second_factor(&factor).await?;
        let backup_codes = if tx.unused_backup_codes(&tenant.id, &user.id).await? == 0 {
            Some(
                self.new_backup_codes(tx.as_mut(), tenant, &user.id, now)
                    .await?,
            )
        } else {
            None
        };
        let data = EventData::FactorChanged {
            user_id: user.id.clone(),
            factor_id: id,
            kind: FactorKind::SecurityKey.as_str().to_owned(),
            actor: format!("user:{}", user.id),
        };
        // A new factor settles what a recovery by guardians left owing.
        tx.clear_recovery_factor_due(&tenant.id, &user.id).await?;
        self.record_event(tx.as_mut(), &tenant.id, EventType::MfaEnrolled, data)
            .await?;
        tx.revoke_session(&tenant.id, &current.id, now).await?;
        let kind = CodeKind::SecurityKey {
            user_verified: false,
        };
        let (raised, cookie_value) = self.new_session(
            user,
            client,
            now,
            kind.amr(&current.amr),
            ACR_AAL2.to_owned(),
        );
        tx.insert_session(&raised).await?;
        self.verified(tx.as_mut(), tenant, &user.id, &raised, kind)
            .await?;
        tx.commit().await?;
        Ok(Confirmed {
            backup_codes,
            signed_in: SignedIn {
                session: raised,
                user: user.clone(),
                cookie_value,
            },
        })
    }

    /// Starts proving a security key at `step`: options naming the person's keys.
    ///
    /// Errors: [`AuthnError::ChallengeExpired`] when the sign-in or session is gone;
    /// [`AuthnError::NoSecondFactor`] when the person has no security key.
    pub async fn begin_security_key_check(
        &self,
        tenant: &Tenant,
        issuer: &str,
        step: KeyStep<'_>,
    ) -> Result<CeremonyStart, AuthnError> {
        self.two_factor_on()?;
        let rp = self.relying_party(tenant, issuer)?;
        let now = self.now();
        let mut tx = self.store.write().await?;
        let user_id: UserId = match step {
            KeyStep::SignIn(cookie) => {
                tx.factor_challenge(&tenant.id, &SecretHash::of(cookie), now)
                    .await?
                    .ok_or(AuthnError::ChallengeExpired)?
                    .user_id
            }
            KeyStep::StepUp(session) => {
                tx.session(&tenant.id, &session.id)
                    .await?
                    .filter(|s| s.is_live(now) && s.secret_hash == session.secret_hash)
                    .ok_or(AuthnError::ChallengeExpired)?
                    .user_id
            }
        };
        let user = tx
            .user(&tenant.id, &user_id)
            .await?
            .filter(User::can_sign_in)
            .ok_or(AuthnError::ChallengeExpired)?;
        let keys: Vec<String> = self
            .security_keys(tx.as_mut(), &user)
            .await?
            .into_iter()
            .map(|(_, credential)| credential)
            .collect();
        if keys.is_empty() {
            return Err(AuthnError::NoSecondFactor);
        }
        let started = rp.start_key_authentication(&keys)?;
        let start = self
            .open_ceremony(
                tx.as_mut(),
                tenant,
                Some(&user.id),
                CeremonyPurpose::SecurityKeyVerification,
                started,
            )
            .await?;
        tx.commit().await?;
        Ok(start)
    }

    /// Checks a security key's answer against the spent `ceremony` and `user`'s keys, in `tx`;
    /// the key that answered keeps its new counter.
    pub(super) async fn check_key(
        &self,
        tx: &mut dyn WriteTx,
        (tenant, issuer): (&Tenant, &str),
        user: &User,
        ceremony: &WebauthnCeremony,
        answer: &str,
    ) -> Result<Checked, AuthnError> {
        let settings = self.two_factor_on()?;
        if ceremony.user_id.as_ref() != Some(&user.id) {
            return Ok(Checked::Failed);
        }
        let keys = self.security_keys(tx, user).await?;
        let credentials: Vec<String> = keys.iter().map(|(_, c)| c.clone()).collect();
        let rp = self.relying_party(tenant, issuer)?;
        match rp.finish_key_authentication(answer, &ceremony.state, &credentials) {
            Ok(used) => {
                let Some((factor, _)) = keys.iter().find(|(_, c)| {
                    RelyingParty::key_credential_id(c).as_deref()
                        == Some(used.credential_id.as_slice())
                }) else {
                    return Ok(Checked::Failed);
                };
                let sealed = settings
                    .key
                    .seal_bytes(used.credential.as_bytes(), &tenant.id, &user.id, &factor.id)
                    .map_err(|e| AuthnError::Internal(format!("sealing a security key: {e}")))?;
                if !tx
                    .update_factor_secret(&tenant.id, &factor.id, &sealed)
                    .await?
                {
                    return Ok(Checked::Failed);
                }
                Ok(Checked::Passed(CodeKind::SecurityKey {
                    user_verified: used.user_verified,
                }))
            }
            Err(refusal @ Refusal::CounterRegressed) => {
                refused("security key", &refusal);
                // Which key: the one whose credential id the answer names.
                let named = RelyingParty::answer_credential_id(answer);
                let cloned = keys
                    .iter()
                    .find(|(_, c)| named.is_some() && RelyingParty::key_credential_id(c) == named)
                    .map(|(f, _)| f.id.clone());
                Ok(cloned.map_or(Checked::Failed, Checked::Cloned))
            }
            Err(refusal) => {
                refused("security key", &refusal);
                Ok(Checked::Failed)
            }
        }
    }

    /// Records `security.suspicious_activity` for a security key whose counter went back.
    pub(super) async fn record_cloned_key(
        &self,
        tenant: &Tenant,
        user: &UserId,
        factor: &FactorId,
        client: &ClientInfo,
    ) -> Result<(), AuthnError> {
        let mut tx = self.store.write().await?;
        let data = EventData::SuspiciousActivity {
            user_id: user.clone(),
            signal: "webauthn_counter_regressed".into(),
            credential: Some(factor.to_string()),
            client_ip: client.ip.map(|ip| ip.to_string()),
        };
        self.record_event(
            tx.as_mut(),
            &tenant.id,
            EventType::SecuritySuspiciousActivity,
            data,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }
}
