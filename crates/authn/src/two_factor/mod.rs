//! Second factors (CONTRACTS.md "Assurance, factors and step-up"): enrolling a TOTP
//! authenticator, backup codes, the second step of a sign-in, and step-up of a live session.
//!
//! Rules, each enforced here and tested:
//! - A factor counts only once confirmed with a correct code; an unconfirmed one expires with
//!   its enrolment ([`ENROLMENT_LIFETIME`]).
//! - A TOTP code is accepted once per factor: its time step must be later than the last one
//!   accepted (RFC 6238 §5.2), recorded with a conditional write so two racing requests with one
//!   code cannot both pass.
//! - A backup code works once; a new set voids the old one; codes are stored as keyed hashes.
//! - Wrong codes count per account (`mfa:acct:…`); `brute_force_max_attempts` of them within the
//!   lockout window lock the second step (`mfa:lock:…`) for the lockout, and while locked every
//!   code, right or wrong, gets the same [`AuthnError::Locked`].
//! - The second step never trusts the password step's session: after the password only a
//!   challenge exists ([`FactorChallenge`], a short-lived single-use cookie); the session is
//!   created when the code is verified, with `amr` `["pwd","otp","mfa"]` and `acr` aal2.
//! - Step-up replaces the session: a new id and cookie, the old session revoked, so an old
//!   cookie replayed afterwards signs nobody in.
//! - Managing factors (removing one, new backup codes) needs an aal2 session when the person
//!   has a factor: a stolen aal1 cookie cannot strip the second factor.
//! - Confirming an enrolment proves the authenticator: the enrolling session is raised to aal2
//!   (replaced, like step-up), so a policy that requires a second factor lets the person go on.

mod enrol;
mod security_key;

use security_key::Checked;
pub use security_key::{KeyStep, SecondProof};

use crate::engine::{Authn, SignedIn};
use crate::error::AuthnError;
use crate::settings::{ClientInfo, span, std_span};
use std::sync::Arc;
use std::time::Duration;
use svc_crypto::{FactorKey, TotpSecret};
use svc_domain::{
    ACR_AAL2, BruteForceScope, EventData, EventType, FactorChallenge, FactorId, GeneratedSecret,
    LoginFailureReason, LoginMethod, LoginResult, MfaPolicy, SecondFactor, SecretHash, Session,
    Tenant, User, UserId, amr_with_otp, normalize_backup_code, normalize_totp_code,
};
use svc_store::WriteTx;
use time::OffsetDateTime;

/// Prefix of second-factor challenge cookies (`mfa_c_…`).
pub const CHALLENGE_COOKIE_PREFIX: &str = "mfa_c_";
/// How long an unconfirmed TOTP enrolment waits for its first code.
pub const ENROLMENT_LIFETIME: time::Duration = time::Duration::minutes(15);

/// What the runtime hands in from `[two_factor]`.
#[derive(Clone)]
pub struct TwoFactorSettings {
    /// Seals TOTP secrets and keys backup-code hashes.
    pub key: Arc<FactorKey>,
    /// How long a person has, after the password, to give the second factor.
    pub challenge_lifetime: Duration,
    /// The account page warns below this many unused backup codes.
    pub backup_codes_warn_below: u32,
    /// How long "don't ask again on this device" lasts (`None`: not offered).
    pub trusted_device_lifetime: Option<Duration>,
    /// Mail the person when they sign in from a browser never seen for them.
    pub notify_new_device: bool,
    /// Risk-based step-up on trusted browsers, when on.
    pub adaptive: Option<crate::devices::AdaptiveSettings>,
}

impl std::fmt::Debug for TwoFactorSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TwoFactorSettings")
            .field("challenge_lifetime", &self.challenge_lifetime)
            .field("backup_codes_warn_below", &self.backup_codes_warn_below)
            .field("trusted_device_lifetime", &self.trusted_device_lifetime)
            .field("notify_new_device", &self.notify_new_device)
            .field("adaptive", &self.adaptive)
            .finish_non_exhaustive()
    }
}

/// The outcome of a correct password.
#[derive(Debug, Clone)]
pub enum SignInStep {
    /// Signed in: no second factor is owed.
    Done(Box<SignedIn>),
    /// The person has a second factor: it must be given before a session exists.
    SecondFactor(PendingFactor),
}

/// A sign-in waiting for its second factor.
#[derive(Clone)]
pub struct PendingFactor {
    /// The challenge cookie's value; shown this once, only its hash is stored.
    pub cookie_value: String,
    /// When the challenge expires.
    pub expires_at: OffsetDateTime,
}

impl std::fmt::Debug for PendingFactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingFactor")
            .field("cookie_value", &"<redacted>")
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// What the account page shows about a person's second factors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactorStatus {
    /// The confirmed TOTP authenticator, if any.
    pub totp: Option<SecondFactor>,
    /// The confirmed security keys, oldest first.
    pub security_keys: Vec<SecondFactor>,
    /// Unused backup codes.
    pub backup_codes_left: u32,
    /// Whether to warn that few backup codes remain.
    pub backup_codes_low: bool,
}

/// A TOTP enrolment waiting for its first code: what the page shows.
#[derive(Debug)]
pub struct TotpEnrolment {
    /// The factor being enrolled.
    pub factor_id: FactorId,
    /// The secret in base32, to type by hand.
    pub secret_base32: String,
    /// The `otpauth://` URI the QR code carries.
    pub otpauth_uri: String,
}

/// A confirmed authenticator: the backup codes to show once (the first factor's), and the
/// raised session that replaces the one that enrolled.
#[derive(Debug)]
pub struct Confirmed {
    /// Ten new backup codes when the person had none, to be shown once.
    pub backup_codes: Option<Vec<String>>,
    /// The aal2 session (new id and cookie) replacing the enrolling one.
    pub signed_in: SignedIn,
}

/// How a second step was passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CodeKind {
    Totp,
    Backup,
    /// A WebAuthn security key, with or without user verification on it.
    SecurityKey {
        user_verified: bool,
    },
}

/// Whether a first step that proved `first` went through a provider (`fed`) rather than the
/// password: only a social sign-in opens a challenge after a provider.
fn federated(first: &[String]) -> bool {
    first.iter().any(|m| m == crate::sso::AMR_FED)
}

impl CodeKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Totp => "totp",
            Self::Backup => "backup_code",
            Self::SecurityKey { .. } => "security_key",
        }
    }

    /// The login-history method of a sign-in completed this way after a first step that
    /// proved `first` (the challenge's `amr`).
    fn method(self, first: &[String]) -> LoginMethod {
        match (self, federated(first)) {
            (Self::Totp, false) => LoginMethod::PasswordTotp,
            (Self::Backup, false) => LoginMethod::PasswordBackupCode,
            (Self::SecurityKey { .. }, false) => LoginMethod::PasswordSecurityKey,
            (Self::Totp, true) => LoginMethod::SocialTotp,
            (Self::Backup, true) => LoginMethod::SocialBackupCode,
            (Self::SecurityKey { .. }, true) => LoginMethod::SocialSecurityKey,
        }
    }

    /// The `amr` of a session that added this to `before` (RFC 8176): `otp` for codes, `hwk`
    /// (and `user` when verified on the key) for a security key, then `mfa`, each once.
    fn amr(self, before: &[String]) -> Vec<String> {
        match self {
            Self::Totp | Self::Backup => amr_with_otp(before),
            Self::SecurityKey { user_verified } => {
                let mut amr = before.to_vec();
                let mut add = vec![svc_domain::AMR_HWK];
                if user_verified {
                    add.push(svc_domain::AMR_USER);
                }
                add.push(svc_domain::AMR_MFA);
                for value in add {
                    if !amr.iter().any(|v| v == value) {
                        amr.push(value.to_owned());
                    }
                }
                amr
            }
        }
    }
}

mod keys {
    use svc_domain::{TenantId, UserId};

    /// Wrong second-factor codes of one account.
    pub(super) fn failures(tenant: &TenantId, user: &UserId) -> String {
        format!("mfa:acct:{tenant}:{user}")
    }

    /// The lock of one account's second step.
    pub(super) fn lock(tenant: &TenantId, user: &UserId) -> String {
        format!("mfa:lock:{tenant}:{user}")
    }
}

impl Authn {
    /// Turns second factors on ([`TwoFactorSettings`] from `[two_factor]`).
    #[must_use]
    pub fn with_two_factor(mut self, settings: TwoFactorSettings) -> Self {
        self.two_factor = Some(settings);
        self
    }

    /// The second-factor settings, when second factors are on.
    pub fn two_factor(&self) -> Option<&TwoFactorSettings> {
        self.two_factor.as_ref()
    }

    fn two_factor_on(&self) -> Result<&TwoFactorSettings, AuthnError> {
        self.two_factor.as_ref().ok_or(AuthnError::TwoFactorOff)
    }

    /// Whether people of `tenant` may set up a new second factor: the deployment offers them
    /// and the tenant's policy is not `off`.
    pub fn enrolment_offered(&self, tenant: &Tenant) -> bool {
        self.two_factor.is_some() && tenant.mfa_policy != MfaPolicy::Off
    }

    /// The settings, when people of `tenant` may set up a new second factor.
    pub(crate) fn enrolment_on(&self, tenant: &Tenant) -> Result<&TwoFactorSettings, AuthnError> {
        let settings = self.two_factor_on()?;
        if tenant.mfa_policy == MfaPolicy::Off {
            return Err(AuthnError::TwoFactorOff);
        }
        Ok(settings)
    }

    /// Whether `user` has a confirmed second factor (always false with second factors off).
    pub(crate) async fn owes_second_factor(
        &self,
        tx: &mut dyn WriteTx,
        user: &User,
    ) -> Result<bool, AuthnError> {
        if self.two_factor.is_none() {
            return Ok(false);
        }
        let factors = tx.second_factors(&user.tenant_id, &user.id).await?;
        Ok(factors.iter().any(SecondFactor::is_confirmed))
    }

    /// Records the challenge of a sign-in whose password was right, in `tx` (with its
    /// `auth.mfa.challenge` event), and returns the cookie to set.
    pub(crate) async fn open_challenge(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        user: &User,
        client: &ClientInfo,
        now: OffsetDateTime,
    ) -> Result<PendingFactor, AuthnError> {
        let first = vec![svc_domain::AMR_PASSWORD.to_owned()];
        self.open_challenge_after(tx, tenant, (user, first), client, now)
            .await
    }

    /// [`Authn::open_challenge`] after a first step other than the password, whose `amr`
    /// values (`fed` for a social sign-in) the session will carry with the second factor's.
    pub(crate) async fn open_challenge_after(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        (user, first): (&User, Vec<String>),
        client: &ClientInfo,
        now: OffsetDateTime,
    ) -> Result<PendingFactor, AuthnError> {
        let settings = self.two_factor_on()?;
        let secret = GeneratedSecret::generate(CHALLENGE_COOKIE_PREFIX, self.rng.as_ref());
        let challenge = FactorChallenge {
            hash: secret.hash,
            tenant_id: tenant.id.clone(),
            user_id: user.id.clone(),
            amr: first,
            created_at: now,
            expires_at: now + span(settings.challenge_lifetime),
            used_at: None,
        };
        tx.insert_factor_challenge(&challenge).await?;
        self.challenged(tx, tenant, &user.id, "sign_in", client)
            .await?;
        Ok(PendingFactor {
            cookie_value: secret.plaintext,
            expires_at: challenge.expires_at,
        })
    }

    async fn challenged(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        user: &UserId,
        reason: &str,
        client: &ClientInfo,
    ) -> Result<(), AuthnError> {
        let data = EventData::MfaChallenged {
            user_id: user.clone(),
            reason: reason.to_owned(),
            client_ip: client.ip.map(|ip| ip.to_string()),
        };
        self.record_event(tx, &tenant.id, EventType::MfaChallenge, data)
            .await
    }

    /// Whether the challenge cookie still names a pending sign-in (for showing the form).
    pub async fn challenge_pending(
        &self,
        tenant: &Tenant,
        cookie_value: &str,
    ) -> Result<bool, AuthnError> {
        if self.two_factor.is_none() || !cookie_value.starts_with(CHALLENGE_COOKIE_PREFIX) {
            return Ok(false);
        }
        let mut tx = self.store.read_once().await?;
        let found = tx
            .factor_challenge(&tenant.id, &SecretHash::of(cookie_value), self.now())
            .await?;
        tx.finish().await?;
        Ok(found.is_some())
    }

    /// Completes a sign-in with its second factor: `code` is a TOTP code or a backup code.
    ///
    /// Errors: [`AuthnError::ChallengeExpired`] when the challenge is unknown, used or
    /// expired (the person starts again from the password); [`AuthnError::InvalidCode`] for a
    /// wrong, replayed or used code; [`AuthnError::Locked`] while the second step is locked.
    pub async fn complete_second_factor(
        &self,
        tenant: &Tenant,
        cookie_value: &str,
        code: &str,
        client: &ClientInfo,
        trust_device: bool,
    ) -> Result<SignedIn, AuthnError> {
        self.complete_second_factor_with(
            tenant,
            cookie_value,
            SecondProof::Code(code),
            client,
            trust_device,
        )
        .await
    }

    /// [`Authn::complete_second_factor`] with any proof: a code, or a security key's answer
    /// (its ceremony is spent first, so an answer is checked once even when it is wrong).
    ///
    /// Errors: as [`Authn::complete_second_factor`]; [`AuthnError::CeremonyExpired`] for a
    /// key answer without its ceremony.
    pub async fn complete_second_factor_with(
        &self,
        tenant: &Tenant,
        cookie_value: &str,
        proof: SecondProof<'_>,
        client: &ClientInfo,
        trust_device: bool,
    ) -> Result<SignedIn, AuthnError> {
        self.two_factor_on()?;
        if !cookie_value.starts_with(CHALLENGE_COOKIE_PREFIX) {
            return Err(AuthnError::ChallengeExpired);
        }
        let ceremony = self.key_ceremony(tenant, proof).await?;
        let now = self.now();
        let hash = SecretHash::of(cookie_value);
        let mut tx = self.store.write().await?;
        let challenge = tx
            .factor_challenge(&tenant.id, &hash, now)
            .await?
            .ok_or(AuthnError::ChallengeExpired)?;
        let user = tx
            .user(&tenant.id, &challenge.user_id)
            .await?
            .filter(User::can_sign_in)
            .ok_or(AuthnError::ChallengeExpired)?;
        // The sign-in's history names the kind of proof tried (a code by its shape).
        let tried = match proof {
            SecondProof::Key { .. } => CodeKind::SecurityKey {
                user_verified: false,
            },
            SecondProof::Code(code) if normalize_totp_code(code).is_some() => CodeKind::Totp,
            SecondProof::Code(_) => CodeKind::Backup,
        }
        .method(&challenge.amr);
        if let Err(locked) = self
            .refuse_if_locked(tx.as_mut(), tenant, &user.id, now)
            .await
        {
            drop(tx);
            let record = self.login_record_by(
                &tenant.id,
                &user.id,
                (tried, LoginResult::SecondFactorLocked),
                client,
                now,
            );
            let mut tx = self.store.write().await?;
            tx.insert_login_record(&record).await?;
            tx.commit().await?;
            return Err(locked);
        }
        let checked = self
            .check_proof(tx.as_mut(), tenant, &user, (proof, ceremony.as_ref()), now)
            .await?;
        let Checked::Passed(kind) = checked else {
            drop(tx);
            if let Checked::Cloned(factor) = &checked {
                self.record_cloned_key(tenant, &user.id, factor, client)
                    .await?;
            }
            let attempt = Some((&user.id, tried));
            return Err(self
                .wrong_code(tenant, &user.id, client, now, attempt)
                .await?);
        };
        if !tx.consume_factor_challenge(&tenant.id, &hash, now).await? {
            return Err(AuthnError::ChallengeExpired);
        }
        tx.clear_counter(&keys::failures(&tenant.id, &user.id))
            .await?;
        let mut current = user;
        let first_sign_in = current.last_sign_in_at.is_none();
        current.last_sign_in_at = Some(now);
        if tx
            .update_user_if_unchanged(&current, current.updated_at)
            .await?
            == svc_store::UpdateOutcome::Stale
        {
            return Err(AuthnError::ChallengeExpired);
        }
        let amr = kind.amr(&challenge.amr);
        let (session, cookie_value) =
            self.new_session(&current, client, now, amr, ACR_AAL2.to_owned());
        tx.insert_session(&session).await?;
        let method = kind.method(&challenge.amr);
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
            method: format!("password+{}", kind.as_str()),
            client_ip: client.ip.map(|ip| ip.to_string()),
        };
        self.record_event(tx.as_mut(), &tenant.id, EventType::LoginSuccess, data)
            .await?;
        self.verified(tx.as_mut(), tenant, &current.id, &session, kind)
            .await?;
        let mail = self
            .remember_browser(
                tx.as_mut(),
                tenant,
                (&current, first_sign_in),
                client,
                trust_device,
                now,
            )
            .await?;
        tx.commit().await?;
        if let Some(mail) = mail {
            self.deliver(mail);
        }
        Ok(SignedIn {
            session,
            user: current,
            cookie_value,
        })
    }

    /// Steps `session` up to aal2 with a second factor: a new session (new id, new cookie,
    /// `auth_time` now, `amr` + `otp`, `mfa`) replaces it, and the old one is revoked.
    ///
    /// Errors: as [`Authn::complete_second_factor`]; [`AuthnError::NoSecondFactor`] when the
    /// person has none to give; [`AuthnError::ChallengeExpired`] when the session is no longer
    /// live.
    pub async fn step_up(
        &self,
        tenant: &Tenant,
        session: &Session,
        code: &str,
        client: &ClientInfo,
    ) -> Result<SignedIn, AuthnError> {
        self.step_up_with(tenant, session, SecondProof::Code(code), client)
            .await
    }

    /// [`Authn::step_up`] with any proof: a code, or a security key's answer.
    ///
    /// Errors: as [`Authn::step_up`]; [`AuthnError::CeremonyExpired`] for a key answer without
    /// its ceremony.
    pub async fn step_up_with(
        &self,
        tenant: &Tenant,
        session: &Session,
        proof: SecondProof<'_>,
        client: &ClientInfo,
    ) -> Result<SignedIn, AuthnError> {
        self.two_factor_on()?;
        let ceremony = self.key_ceremony(tenant, proof).await?;
        let now = self.now();
        let mut tx = self.store.write().await?;
        let current = tx
            .session(&tenant.id, &session.id)
            .await?
            .filter(|s| s.is_live(now) && s.secret_hash == session.secret_hash)
            .ok_or(AuthnError::ChallengeExpired)?;
        let user = tx
            .user(&tenant.id, &current.user_id)
            .await?
            .filter(User::can_sign_in)
            .ok_or(AuthnError::ChallengeExpired)?;
        if !self.owes_second_factor(tx.as_mut(), &user).await? {
            return Err(AuthnError::NoSecondFactor);
        }
        self.refuse_if_locked(tx.as_mut(), tenant, &user.id, now)
            .await?;
        let checked = self
            .check_proof(tx.as_mut(), tenant, &user, (proof, ceremony.as_ref()), now)
            .await?;
        let Checked::Passed(kind) = checked else {
            drop(tx);
            if let Checked::Cloned(factor) = &checked {
                self.record_cloned_key(tenant, &user.id, factor, client)
                    .await?;
            }
            return Err(self.wrong_code(tenant, &user.id, client, now, None).await?);
        };
        tx.clear_counter(&keys::failures(&tenant.id, &user.id))
            .await?;
        tx.revoke_session(&tenant.id, &current.id, now).await?;
        let amr = kind.amr(&current.amr);
        let (raised, cookie_value) = self.new_session(&user, client, now, amr, ACR_AAL2.to_owned());
        tx.insert_session(&raised).await?;
        self.verified(tx.as_mut(), tenant, &user.id, &raised, kind)
            .await?;
        tx.commit().await?;
        Ok(SignedIn {
            session: raised,
            user,
            cookie_value,
        })
    }

    /// Mails `user` that an administrator reset their second factors (sent in the background;
    /// call it once the reset committed).
    pub fn notify_factors_reset(&self, user: &User, tenant_name: &str, issuer: &str) {
        let mail = self
            .settings
            .mail_texts
            .factors_reset_notice(&user.email, tenant_name, issuer);
        self.deliver(mail);
    }

    /// Records `auth.mfa.challenge` for a step-up the authorization endpoint asked for.
    pub async fn step_up_asked(
        &self,
        tenant: &Tenant,
        session: &Session,
        client: &ClientInfo,
    ) -> Result<(), AuthnError> {
        let mut tx = self.store.write().await?;
        self.challenged(tx.as_mut(), tenant, &session.user_id, "step_up", client)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn verified(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        user: &UserId,
        session: &Session,
        kind: CodeKind,
    ) -> Result<(), AuthnError> {
        let remaining = match kind {
            CodeKind::Backup => Some(tx.unused_backup_codes(&tenant.id, user).await?),
            CodeKind::Totp | CodeKind::SecurityKey { .. } => None,
        };
        let data = EventData::MfaVerified {
            user_id: user.clone(),
            session_id: session.id.clone(),
            method: kind.as_str().to_owned(),
            backup_codes_remaining: remaining,
        };
        self.record_event(tx, &tenant.id, EventType::MfaVerify, data)
            .await
    }

    async fn refuse_if_locked(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<(), AuthnError> {
        match tx.counter(&keys::lock(&tenant.id, user), now).await? {
            Some(lock) => Err(AuthnError::Locked {
                retry_after: std_span(lock.window_ends_at - now),
            }),
            None => Ok(()),
        }
    }

    /// The spent ceremony of a key proof (none for a code).
    async fn key_ceremony(
        &self,
        tenant: &Tenant,
        proof: SecondProof<'_>,
    ) -> Result<Option<svc_domain::WebauthnCeremony>, AuthnError> {
        match proof {
            SecondProof::Code(_) => Ok(None),
            SecondProof::Key { ceremony, .. } => self
                .spend_ceremony(
                    tenant,
                    ceremony,
                    svc_domain::CeremonyPurpose::SecurityKeyVerification,
                )
                .await
                .map(Some),
        }
    }

    /// Whether `proof` is right for `user`, spending what it used within `tx`.
    async fn check_proof(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        user: &User,
        (proof, ceremony): (SecondProof<'_>, Option<&svc_domain::WebauthnCeremony>),
        now: OffsetDateTime,
    ) -> Result<Checked, AuthnError> {
        match (proof, ceremony) {
            (SecondProof::Code(code), _) => Ok(self
                .check_code(tx, user, code, now)
                .await?
                .map_or(Checked::Failed, Checked::Passed)),
            (SecondProof::Key { issuer, answer, .. }, Some(ceremony)) => {
                self.check_key(tx, (tenant, issuer), user, ceremony, answer)
                    .await
            }
            (SecondProof::Key { .. }, None) => Ok(Checked::Failed),
        }
    }

    /// Which kind of code `code` is and whether it is right for `user`, spending it (TOTP
    /// step or backup code) within `tx` when it is. `None` for a wrong, replayed or used code.
    async fn check_code(
        &self,
        tx: &mut dyn WriteTx,
        user: &User,
        code: &str,
        now: OffsetDateTime,
    ) -> Result<Option<CodeKind>, AuthnError> {
        let settings = self.two_factor_on()?;
        if let Some(code) = normalize_totp_code(code) {
            let factors = tx.second_factors(&user.tenant_id, &user.id).await?;
            // Only authenticator apps have codes (a security key's sealed value is no secret).
            let apps = factors
                .iter()
                .filter(|f| f.is_confirmed() && f.kind == svc_domain::FactorKind::Totp);
            for factor in apps {
                let secret = self.open_secret(settings, factor)?;
                if let Some(step) = secret.verify(&code, now.unix_timestamp())
                    && tx
                        .advance_totp_step(&user.tenant_id, &factor.id, step)
                        .await?
                {
                    return Ok(Some(CodeKind::Totp));
                }
            }
            return Ok(None);
        }
        if let Some(code) = normalize_backup_code(code) {
            let hash = settings
                .key
                .backup_code_hash(&user.tenant_id, &user.id, &code);
            if tx
                .consume_backup_code(&user.tenant_id, &user.id, &hash, now)
                .await?
            {
                return Ok(Some(CodeKind::Backup));
            }
        }
        Ok(None)
    }

    fn open_secret(
        &self,
        settings: &TwoFactorSettings,
        factor: &SecondFactor,
    ) -> Result<TotpSecret, AuthnError> {
        settings
            .key
            .open(
                &factor.sealed_secret,
                &factor.tenant_id,
                &factor.user_id,
                &factor.id,
            )
            .map_err(|e| {
                AuthnError::Internal(format!(
                    "the TOTP secret of {} does not open (was [two_factor].encryption_key \
                     changed?): {e}",
                    factor.id
                ))
            })
    }

    /// Counts a wrong code (`auth.login.failure`); the `max`-th within the window locks the
    /// second step (`security.brute_force.detected`). The second step of a sign-in (`attempt`:
    /// the person and the kind of code tried) also goes into the login history. Returns the
    /// error to answer with.
    pub(crate) async fn wrong_code(
        &self,
        tenant: &Tenant,
        user: &UserId,
        client: &ClientInfo,
        now: OffsetDateTime,
        attempt: Option<(&UserId, LoginMethod)>,
    ) -> Result<AuthnError, AuthnError> {
        let lockout = span(self.settings.brute_force_lockout);
        let client_ip = client.ip.map(|ip| ip.to_string());
        let mut tx = self.store.write().await?;
        if let Some((person, method)) = attempt {
            let record = self.login_record_by(
                &tenant.id,
                person,
                (method, LoginResult::InvalidSecondFactor),
                client,
                now,
            );
            tx.insert_login_record(&record).await?;
        }
        let failures = tx
            .hit_counter(&keys::failures(&tenant.id, user), now, lockout)
            .await?;
        let data = EventData::LoginFailed {
            user_id: Some(user.clone()),
            reason: LoginFailureReason::InvalidSecondFactor,
            client_ip,
        };
        self.record_event(tx.as_mut(), &tenant.id, EventType::LoginFailure, data)
            .await?;
        let (failed, lock) = (
            keys::failures(&tenant.id, user),
            keys::lock(&tenant.id, user),
        );
        self.lock_when_exceeded(
            tx.as_mut(),
            &tenant.id,
            (failures.count, &failed, &lock),
            (Some(user.clone()), BruteForceScope::SecondFactor),
            client,
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(AuthnError::InvalidCode)
    }
}
