//! Managing a person's second factors: what is set up (for the account page), enrolling a
//! TOTP authenticator (a sealed secret, confirmed by a first code that also raises the
//! enrolling session), removing it, and backup codes (ten per set, shown once, stored as
//! keyed hashes; a new set voids the old).

use super::{CodeKind, Confirmed, ENROLMENT_LIFETIME, FactorStatus, TotpEnrolment, keys};
use crate::engine::{Authn, SignedIn};
use crate::error::AuthnError;
use crate::settings::ClientInfo;
use svc_crypto::TotpSecret;
use svc_domain::{
    ACR_AAL2, BACKUP_CODE_CHARS, BACKUP_CODES_PER_SET, BackupCode, EventData, EventType, FactorId,
    FactorKind, SecondFactor, Session, Tenant, User, UserId, acr_rank, amr_with_otp,
    normalize_totp_code,
};
use svc_store::WriteTx;
use time::OffsetDateTime;

/// Crockford's base32 alphabet (no I, L, O, U).
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

impl Authn {
    /// The person's second factors, for the account page.
    pub async fn factor_status(
        &self,
        tenant: &Tenant,
        user: &UserId,
    ) -> Result<FactorStatus, AuthnError> {
        let settings = self.two_factor_on()?;
        let mut tx = self.store.read().await?;
        let factors = tx.second_factors(&tenant.id, user).await?;
        let left = tx.unused_backup_codes(&tenant.id, user).await?;
        tx.finish().await?;
        let security_keys: Vec<SecondFactor> = factors
            .iter()
            .filter(|f| f.is_confirmed() && f.kind == FactorKind::SecurityKey)
            .cloned()
            .collect();
        let totp = factors
            .into_iter()
            .find(|f| f.is_confirmed() && f.kind == FactorKind::Totp);
        let any = totp.is_some() || !security_keys.is_empty();
        Ok(FactorStatus {
            backup_codes_low: any && left < settings.backup_codes_warn_below,
            totp,
            security_keys,
            backup_codes_left: left,
        })
    }

    /// Whether `session` may change its person's factors: always when the person has none,
    /// otherwise only at aal2 or above.
    pub(crate) async fn may_manage(
        &self,
        tx: &mut dyn WriteTx,
        session: &Session,
        user: &User,
    ) -> Result<(), AuthnError> {
        let strong = session
            .acr
            .as_deref()
            .and_then(acr_rank)
            .is_some_and(|rank| acr_rank(ACR_AAL2).is_some_and(|aal2| rank >= aal2));
        if strong || !self.owes_second_factor(tx, user).await? {
            Ok(())
        } else {
            Err(AuthnError::StepUpRequired)
        }
    }

    /// Starts enrolling a TOTP authenticator for `user`: a fresh secret, sealed in an
    /// unconfirmed factor. Older unconfirmed enrolments are dropped.
    ///
    /// Errors: [`AuthnError::AlreadyEnrolled`] when a TOTP authenticator is confirmed.
    pub async fn start_totp(
        &self,
        tenant: &Tenant,
        user: &User,
        label: &str,
    ) -> Result<TotpEnrolment, AuthnError> {
        let settings = self.enrolment_on(tenant)?;
        let now = self.now();
        let mut tx = self.store.write().await?;
        let factors = tx.second_factors(&tenant.id, &user.id).await?;
        if factors
            .iter()
            .any(|f| f.is_confirmed() && f.kind == FactorKind::Totp)
        {
            return Err(AuthnError::AlreadyEnrolled);
        }
        tx.delete_unconfirmed_factors(&tenant.id, &user.id, now + time::Duration::SECOND)
            .await?;
        let id = FactorId::generate(self.clock.as_ref(), self.rng.as_ref());
        let secret = TotpSecret::generate(self.rng.as_ref());
        let sealed = settings
            .key
            .seal(&secret, &tenant.id, &user.id, &id)
            .map_err(|e| AuthnError::Internal(e.to_string()))?;
        let factor = SecondFactor {
            id,
            tenant_id: tenant.id.clone(),
            user_id: user.id.clone(),
            kind: FactorKind::Totp,
            label: clean_label(label),
            sealed_secret: sealed,
            confirmed_at: None,
            last_used_step: None,
            created_at: now,
        };
        tx.insert_second_factor(&factor).await?;
        tx.commit().await?;
        Ok(enrolment(&factor.id, &secret, &tenant.display_name, user))
    }

    /// The pending enrolment `id` of `user` again (to show the QR code after a wrong code).
    ///
    /// Errors: [`AuthnError::UnknownFactor`] unless it is the user's unconfirmed, unexpired
    /// enrolment.
    pub async fn totp_enrolment(
        &self,
        tenant: &Tenant,
        user: &User,
        id: &FactorId,
    ) -> Result<TotpEnrolment, AuthnError> {
        let settings = self.enrolment_on(tenant)?;
        let factor = self.pending_enrolment(tenant, user, id).await?;
        let secret = self.open_secret(settings, &factor)?;
        Ok(enrolment(&factor.id, &secret, &tenant.display_name, user))
    }

    async fn pending_enrolment(
        &self,
        tenant: &Tenant,
        user: &User,
        id: &FactorId,
    ) -> Result<SecondFactor, AuthnError> {
        let mut tx = self.store.read_once().await?;
        let factor = tx.second_factor(&tenant.id, id).await?;
        tx.finish().await?;
        let now = self.now();
        factor
            .filter(|f| {
                f.user_id == user.id && !f.is_confirmed() && now - f.created_at < ENROLMENT_LIFETIME
            })
            .ok_or(AuthnError::UnknownFactor)
    }

    /// Confirms the enrolment `id` of `session`'s person with a code from the app. The code
    /// proves the authenticator, so the session is raised to aal2 as by [`Authn::step_up`] (a
    /// new session and cookie replace it). The first factor also gets a set of backup codes,
    /// returned to be shown once.
    ///
    /// Errors: [`AuthnError::UnknownFactor`]; [`AuthnError::InvalidCode`] for a wrong code;
    /// [`AuthnError::Locked`] while the second step is locked; [`AuthnError::ChallengeExpired`]
    /// when the session is no longer live.
    pub async fn confirm_totp(
        &self,
        tenant: &Tenant,
        session: &Session,
        user: &User,
        id: &FactorId,
        code: &str,
        client: &ClientInfo,
    ) -> Result<Confirmed, AuthnError> {
        let settings = self.enrolment_on(tenant)?;
        let factor = self.pending_enrolment(tenant, user, id).await?;
        let now = self.now();
        let mut tx = self.store.write().await?;
        let current = tx
            .session(&tenant.id, &session.id)
            .await?
            .filter(|s| s.is_live(now) && s.user_id == user.id)
            .ok_or(AuthnError::ChallengeExpired)?;
        self.refuse_if_locked(tx.as_mut(), tenant, &user.id, now)
            .await?;
        let secret = self.open_secret(settings, &factor)?;
        let step =
            normalize_totp_code(code).and_then(|code| secret.verify(&code, now.unix_timestamp()));
        let Some(step) = step else {
            drop(tx);
            return Err(self.wrong_code(tenant, &user.id, client, now, None).await?);
        };
        if !tx
            .confirm_second_factor(&tenant.id, &user.id, id, step, now)
            .await?
        {
            return Err(AuthnError::UnknownFactor);
        }
        tx.clear_counter(&keys::failures(&tenant.id, &user.id))
            .await?;
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
            factor_id: id.clone(),
            kind: FactorKind::Totp.as_str().to_owned(),
            actor: format!("user:{}", user.id),
        };
        // A new factor settles what a recovery by guardians left owing.
        tx.clear_recovery_factor_due(&tenant.id, &user.id).await?;
        self.record_event(tx.as_mut(), &tenant.id, EventType::MfaEnrolled, data)
            .await?;
        tx.revoke_session(&tenant.id, &current.id, now).await?;
        let amr = amr_with_otp(&current.amr);
        let (raised, cookie_value) = self.new_session(user, client, now, amr, ACR_AAL2.to_owned());
        tx.insert_session(&raised).await?;
        self.verified(tx.as_mut(), tenant, &user.id, &raised, CodeKind::Totp)
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

    /// Removes the person's factor `id` (and, with no factor left, their backup codes).
    ///
    /// Errors: [`AuthnError::StepUpRequired`] unless the session is aal2;
    /// [`AuthnError::UnknownFactor`] when it is not theirs.
    pub async fn remove_factor(
        &self,
        tenant: &Tenant,
        session: &Session,
        user: &User,
        id: &FactorId,
    ) -> Result<(), AuthnError> {
        self.two_factor_on()?;
        let mut tx = self.store.write().await?;
        self.may_manage(tx.as_mut(), session, user).await?;
        let kind = tx
            .second_factor(&tenant.id, id)
            .await?
            .filter(|f| f.user_id == user.id)
            .map(|f| f.kind)
            .ok_or(AuthnError::UnknownFactor)?;
        if !tx.delete_second_factor(&tenant.id, &user.id, id).await? {
            return Err(AuthnError::UnknownFactor);
        }
        let left = tx.second_factors(&tenant.id, &user.id).await?;
        if !left.iter().any(SecondFactor::is_confirmed) {
            tx.replace_backup_codes(&tenant.id, &user.id, &[]).await?;
        }
        let data = EventData::FactorChanged {
            user_id: user.id.clone(),
            factor_id: id.clone(),
            kind: kind.as_str().to_owned(),
            actor: format!("user:{}", user.id),
        };
        self.record_event(tx.as_mut(), &tenant.id, EventType::MfaRemoved, data)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// A new set of backup codes for the person (the old set stops working), shown once.
    ///
    /// Errors: [`AuthnError::StepUpRequired`] unless the session is aal2;
    /// [`AuthnError::NoSecondFactor`] without a confirmed factor (codes alone are no factor).
    pub async fn regenerate_backup_codes(
        &self,
        tenant: &Tenant,
        session: &Session,
        user: &User,
    ) -> Result<Vec<String>, AuthnError> {
        self.two_factor_on()?;
        let now = self.now();
        let mut tx = self.store.write().await?;
        if !self.owes_second_factor(tx.as_mut(), user).await? {
            return Err(AuthnError::NoSecondFactor);
        }
        self.may_manage(tx.as_mut(), session, user).await?;
        let codes = self
            .new_backup_codes(tx.as_mut(), tenant, &user.id, now)
            .await?;
        tx.commit().await?;
        Ok(codes)
    }

    pub(super) async fn new_backup_codes(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<Vec<String>, AuthnError> {
        let settings = self.two_factor_on()?;
        let mut shown = Vec::with_capacity(BACKUP_CODES_PER_SET);
        let mut stored = Vec::with_capacity(BACKUP_CODES_PER_SET);
        while shown.len() < BACKUP_CODES_PER_SET {
            let code = backup_code(self.rng.as_ref());
            let hash = settings.key.backup_code_hash(&tenant.id, user, &code);
            if stored.iter().any(|c: &BackupCode| c.hash == hash) {
                continue;
            }
            stored.push(BackupCode {
                tenant_id: tenant.id.clone(),
                user_id: user.clone(),
                hash,
                created_at: now,
                used_at: None,
            });
            shown.push(format!("{}-{}", &code[..5], &code[5..]));
        }
        tx.replace_backup_codes(&tenant.id, user, &stored).await?;
        let data = EventData::BackupCodesGenerated {
            user_id: user.clone(),
            count: u32::try_from(BACKUP_CODES_PER_SET).unwrap_or(u32::MAX),
        };
        self.record_event(tx, &tenant.id, EventType::MfaBackupCodesGenerated, data)
            .await?;
        Ok(shown)
    }
}

/// Ten Crockford base32 symbols (50 bits): each from one random byte's low five bits, which
/// is uniform since 32 divides 256.
fn backup_code(rng: &dyn svc_domain::Rng) -> String {
    let mut bytes = [0u8; BACKUP_CODE_CHARS];
    rng.fill(&mut bytes);
    bytes
        .iter()
        .map(|b| char::from(CROCKFORD[usize::from(b & 31)]))
        .collect()
}

fn clean_label(label: &str) -> String {
    let cleaned: String = label
        .chars()
        .filter(|c| !c.is_control())
        .take(svc_domain::MAX_FACTOR_LABEL_CHARS)
        .collect();
    let cleaned = cleaned.trim();
    if cleaned.is_empty() {
        "Authenticator app".to_owned()
    } else {
        cleaned.to_owned()
    }
}

fn enrolment(id: &FactorId, secret: &TotpSecret, issuer: &str, user: &User) -> TotpEnrolment {
    TotpEnrolment {
        factor_id: id.clone(),
        secret_base32: secret.base32(),
        otpauth_uri: secret.otpauth_uri(issuer, user.email.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::{SeededRandom, normalize_backup_code};

    #[test]
    fn backup_codes_are_ten_crockford_symbols_that_normalise_to_themselves() {
        let rng = SeededRandom::new(4);
        for _ in 0..200 {
            let code = backup_code(&rng);
            assert_eq!(code.len(), BACKUP_CODE_CHARS);
            assert_eq!(normalize_backup_code(&code).as_deref(), Some(code.as_str()));
            let shown = format!("{}-{}", &code[..5], &code[5..]);
            assert_eq!(normalize_backup_code(&shown.to_lowercase()), Some(code));
        }
    }

    #[test]
    fn labels_are_cleaned_and_bounded() {
        assert_eq!(clean_label("  "), "Authenticator app");
        assert_eq!(clean_label("Phone\u{0}\n"), "Phone");
        assert_eq!(clean_label(&"x".repeat(200)).chars().count(), 64);
    }
}
