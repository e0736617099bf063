//! One recovery from start to end: asking, approving, cancelling, waiting, completing. See the
//! parent module for the flow and its rules.

use super::recovery_event;
use crate::captcha::{CaptchaAction, CaptchaAnswer};
use crate::engine::{Authn, keys};
use crate::error::AuthnError;
use crate::settings::{ClientInfo, span};
use svc_domain::{
    Email, EventData, EventType, GeneratedSecret, RecoveryApproval, RecoveryId, RecoveryRequest,
    RecoveryStatus, SecretHash, Session, Tenant, User, UserId, UserStatus,
};
use svc_store::WriteTx;
use time::OffsetDateTime;

/// Where a recovery stands, as the browser that asked for it sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecoveryProgress {
    /// Guardians are being asked (also what a decoy shows, forever).
    Collecting {
        /// Approvals so far.
        approvals: u32,
        /// Approvals needed.
        needed: u32,
    },
    /// Enough guardians approved; the new password can be set from `ready_at`.
    Waiting {
        /// When the waiting period ends.
        ready_at: OffsetDateTime,
    },
    /// The new password can be set now.
    Ready,
    /// Cancelled, expired or already completed: start again.
    Closed,
}

/// What a guardian's approval link is about, for the page that asks them to confirm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The address of the account to recover.
    pub owner: Email,
    /// The owner's name, when they gave one.
    pub owner_name: Option<String>,
}

/// Prefix of the secret the asking browser keeps.
const ASKER_PREFIX: &str = "rca_";
/// Prefix of a guardian's approval token.
const APPROVAL_PREFIX: &str = "gda_";
/// Prefix of the owner's cancel token.
const CANCEL_PREFIX: &str = "rcc_";

impl Authn {
    /// Asks to recover the account of `email`: returns the secret the asking browser keeps to
    /// follow and complete the recovery. The answer is the same whether anything started: an
    /// unknown address, an account with fewer guardians than needed, or one whose recovery is
    /// already open gets a decoy secret that stays "collecting" forever, and nobody is mailed.
    ///
    /// Errors: [`AuthnError::InvalidEmail`] for a malformed address; the CAPTCHA's errors (the
    /// forgot-password action); [`AuthnError::RateLimited`] (the password-reset budget per
    /// address); [`AuthnError::RecoveryOff`].
    pub async fn start_recovery(
        &self,
        tenant: &Tenant,
        issuer: &str,
        email: &str,
        client: &ClientInfo,
        captcha: CaptchaAnswer<'_>,
    ) -> Result<String, AuthnError> {
        let settings = self.recovery_on()?;
        self.check_captcha(CaptchaAction::ForgotPassword, captcha, client)
            .await?;
        let email = Email::parse(email.trim()).map_err(|_| AuthnError::InvalidEmail)?;
        let now = self.now();
        let asker = GeneratedSecret::generate(ASKER_PREFIX, self.rng.as_ref());
        let mut tx = self.store.write().await?;
        self.ip_limit(
            tx.as_mut(),
            keys::reset_ip(&tenant.id, client),
            self.settings.registration_max,
            self.settings.registration_window,
            now,
        )
        .await?;
        let owner = tx
            .user_by_email(&tenant.id, &email)
            .await?
            .filter(|u| u.status == UserStatus::Active);
        let mut mails = Vec::new();
        if let Some(owner) = owner {
            tx.expire_recoveries(&tenant.id, &owner.id, now).await?;
            let guardians = tx.guardians(&tenant.id, &owner.id).await?;
            let enough = guardians.len()
                >= usize::try_from(settings.approvals_required).unwrap_or(usize::MAX);
            let open = tx.open_recovery(&tenant.id, &owner.id, now).await?;
            if enough && open.is_none() {
                mails = self
                    .open_recovery(
                        tx.as_mut(),
                        (tenant, issuer),
                        &owner,
                        (&guardians, &asker.hash),
                        client,
                    )
                    .await?;
            }
        }
        tx.commit().await?;
        for mail in mails {
            self.deliver(mail);
        }
        Ok(asker.plaintext)
    }

    /// Writes a new recovery of `owner` with one approval per guardian; returns the mails to
    /// send once it committed.
    async fn open_recovery(
        &self,
        tx: &mut dyn WriteTx,
        (tenant, issuer): (&Tenant, &str),
        owner: &User,
        (guardians, asker): (&[svc_domain::Guardian], &SecretHash),
        client: &ClientInfo,
    ) -> Result<Vec<crate::Mail>, AuthnError> {
        let settings = self.recovery_on()?;
        let now = self.now();
        let base = issuer.trim_end_matches('/');
        let texts = self.recovery_texts();
        let cancel = GeneratedSecret::generate(CANCEL_PREFIX, self.rng.as_ref());
        let request = RecoveryRequest {
            id: RecoveryId::generate(self.clock.as_ref(), self.rng.as_ref()),
            tenant_id: tenant.id.clone(),
            user_id: owner.id.clone(),
            status: RecoveryStatus::Pending,
            approvals_needed: settings.approvals_required,
            created_at: now,
            expires_at: now + span(settings.request_lifetime),
            ready_at: None,
            closed_at: None,
            factor_due: false,
        };
        match tx.insert_recovery(&request, asker, &cancel.hash).await {
            Ok(()) => {}
            // A concurrent request for the same account won: this one is a decoy.
            Err(svc_store::StoreError::Conflict { .. }) => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        }
        let valid = self.settings.mail_texts.lifetime(settings.request_lifetime);
        let mut mails = Vec::with_capacity(guardians.len() + 1);
        for guardian in guardians {
            let token = GeneratedSecret::generate(APPROVAL_PREFIX, self.rng.as_ref());
            let approval = RecoveryApproval {
                request_id: request.id.clone(),
                tenant_id: tenant.id.clone(),
                guardian_id: guardian.id.clone(),
                email: guardian.email.clone(),
                expires_at: request.expires_at,
                approved_at: None,
            };
            tx.insert_recovery_approval(&approval, &token.hash).await?;
            let link = format!("{base}/auth/recovery/approve?token={}", token.plaintext);
            mails.push(texts.approval(&guardian.email, owner, &tenant.display_name, &link, &valid));
        }
        let link = format!("{base}/auth/recovery/cancel?token={}", cancel.plaintext);
        mails.push(texts.requested(owner, &tenant.display_name, &link));
        let mut data = recovery_event(owner, Some(&request), None, client);
        set_approvals(&mut data, 0);
        self.record_event(tx, &tenant.id, EventType::RecoveryRequested, data)
            .await?;
        Ok(mails)
    }

    /// Where the recovery the browser asked for stands (a decoy always "collecting").
    ///
    /// Errors: [`AuthnError::RecoveryOff`].
    pub async fn recovery_progress(
        &self,
        tenant: &Tenant,
        asker: &str,
    ) -> Result<RecoveryProgress, AuthnError> {
        let settings = self.recovery_on()?;
        let now = self.now();
        let mut tx = self.store.read().await?;
        let Some(request) = tx
            .recovery_by_secret(&tenant.id, &SecretHash::of(asker))
            .await?
        else {
            return Ok(RecoveryProgress::Collecting {
                approvals: 0,
                needed: settings.approvals_required,
            });
        };
        Ok(match (request.status, request.ready_at) {
            (RecoveryStatus::Pending, _) if request.expires_at > now => {
                let approvals = tx.recovery_approvals(&tenant.id, &request.id).await?;
                RecoveryProgress::Collecting {
                    approvals: approved(&approvals),
                    needed: request.approvals_needed,
                }
            }
            (RecoveryStatus::Waiting, Some(ready_at)) if ready_at > now => {
                RecoveryProgress::Waiting { ready_at }
            }
            (RecoveryStatus::Waiting, _) => RecoveryProgress::Ready,
            _ => RecoveryProgress::Closed,
        })
    }

    /// What the approval link `token` is about, while it can still approve.
    ///
    /// Errors: [`AuthnError::InvalidLink`] (unknown, used, expired, or the recovery is no
    /// longer collecting approvals); [`AuthnError::RecoveryOff`].
    pub async fn recovery_approval(
        &self,
        tenant: &Tenant,
        token: &str,
    ) -> Result<ApprovalRequest, AuthnError> {
        self.recovery_on()?;
        let now = self.now();
        let mut tx = self.store.read().await?;
        let approval = tx
            .recovery_approval(&tenant.id, &SecretHash::of(token))
            .await?
            .filter(|a| a.approved_at.is_none() && a.expires_at > now)
            .ok_or(AuthnError::InvalidLink)?;
        let request = tx
            .recovery(&tenant.id, &approval.request_id)
            .await?
            .filter(|r| collecting(r, now))
            .ok_or(AuthnError::InvalidLink)?;
        let owner = tx
            .user(&tenant.id, &request.user_id)
            .await?
            .ok_or(AuthnError::InvalidLink)?;
        Ok(ApprovalRequest {
            owner: owner.email,
            owner_name: owner.name,
        })
    }

    /// A guardian approves with their link. The owner cannot approve their own recovery from
    /// their session (the link is left unspent); the approval that completes the count starts
    /// the waiting period and tells the owner when it ends.
    ///
    /// Errors: [`AuthnError::InvalidLink`] (unknown, used, expired, or the recovery is no
    /// longer collecting); [`AuthnError::OwnRecovery`]; [`AuthnError::RecoveryOff`].
    pub async fn approve_recovery(
        &self,
        (tenant, issuer): (&Tenant, &str),
        token: &str,
        signed_in: Option<&UserId>,
        client: &ClientInfo,
    ) -> Result<(), AuthnError> {
        let settings = self.recovery_on()?;
        let hash = SecretHash::of(token);
        let now = self.now();
        let mut tx = self.store.write().await?;
        let found = tx
            .recovery_approval(&tenant.id, &hash)
            .await?
            .ok_or(AuthnError::InvalidLink)?;
        let mut request = tx
            .recovery(&tenant.id, &found.request_id)
            .await?
            .ok_or(AuthnError::InvalidLink)?;
        if signed_in == Some(&request.user_id) {
            return Err(AuthnError::OwnRecovery);
        }
        // Writing the request unchanged locks its row: racing approvals take turns, so each
        // counts the ones committed before it (under READ COMMITTED two could otherwise each
        // see only their own and the recovery would never move on).
        if !collecting(&request, now)
            || !tx
                .update_recovery(&request, RecoveryStatus::Pending)
                .await?
        {
            return Err(AuthnError::InvalidLink);
        }
        let approval = tx
            .spend_recovery_approval(&tenant.id, &hash, now)
            .await?
            .ok_or(AuthnError::InvalidLink)?;
        let owner = tx
            .user(&tenant.id, &request.user_id)
            .await?
            .ok_or(AuthnError::InvalidLink)?;
        let count = approved(&tx.recovery_approvals(&tenant.id, &request.id).await?);
        let mut data = recovery_event(&owner, Some(&request), Some(&approval.guardian_id), client);
        set_approvals(&mut data, count);
        self.record_event(tx.as_mut(), &tenant.id, EventType::RecoveryApproved, data)
            .await?;
        let mut mail = None;
        if count >= request.approvals_needed {
            let ready_at = now + span(settings.waiting_period);
            request.status = RecoveryStatus::Waiting;
            request.ready_at = Some(ready_at);
            // A racing approval may have moved it already: then that one tells the owner.
            if tx
                .update_recovery(&request, RecoveryStatus::Pending)
                .await?
            {
                let mut data = recovery_event(&owner, Some(&request), None, client);
                set_approvals(&mut data, count);
                self.record_event(tx.as_mut(), &tenant.id, EventType::RecoveryWaiting, data)
                    .await?;
                mail = Some(self.recovery_texts().waiting(
                    &owner,
                    &tenant.display_name,
                    ready_at,
                    issuer,
                ));
            }
        }
        tx.commit().await?;
        if let Some(mail) = mail {
            self.deliver(mail);
        }
        Ok(())
    }

    /// The owner cancels with the mailed link.
    ///
    /// Errors: [`AuthnError::InvalidLink`] (unknown, or the recovery is already closed);
    /// [`AuthnError::RecoveryOff`].
    pub async fn cancel_recovery(
        &self,
        tenant: &Tenant,
        token: &str,
        client: &ClientInfo,
    ) -> Result<(), AuthnError> {
        self.recovery_on()?;
        let mut tx = self.store.write().await?;
        let request = tx
            .recovery_by_cancel_token(&tenant.id, &SecretHash::of(token))
            .await?
            .ok_or(AuthnError::InvalidLink)?;
        self.close_recovery(tx.as_mut(), request, client).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The signed-in owner cancels the recovery of their account in progress, from a session
    /// that may change their factors.
    ///
    /// Errors: [`AuthnError::InvalidLink`] when none is in progress;
    /// [`AuthnError::StepUpRequired`]; [`AuthnError::RecoveryOff`].
    pub async fn cancel_own_recovery(
        &self,
        tenant: &Tenant,
        (session, user): (&Session, &User),
        client: &ClientInfo,
    ) -> Result<(), AuthnError> {
        self.recovery_on()?;
        let now = self.now();
        let mut tx = self.store.write().await?;
        self.may_manage(tx.as_mut(), session, user).await?;
        let request = tx
            .open_recovery(&tenant.id, &user.id, now)
            .await?
            .ok_or(AuthnError::InvalidLink)?;
        self.close_recovery(tx.as_mut(), request, client).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn close_recovery(
        &self,
        tx: &mut dyn WriteTx,
        mut request: RecoveryRequest,
        client: &ClientInfo,
    ) -> Result<(), AuthnError> {
        let now = self.now();
        let was = request.status;
        if !request.is_open(now) {
            return Err(AuthnError::InvalidLink);
        }
        request.status = RecoveryStatus::Cancelled;
        request.closed_at = Some(now);
        if !tx.update_recovery(&request, was).await? {
            return Err(AuthnError::InvalidLink);
        }
        let owner = tx
            .user(&request.tenant_id, &request.user_id)
            .await?
            .ok_or(AuthnError::InvalidLink)?;
        let data = recovery_event(&owner, Some(&request), None, client);
        self.record_event(tx, &request.tenant_id, EventType::RecoveryCancelled, data)
            .await
    }

    /// The asking browser sets the new password once the waiting period is over: the owner's
    /// second factors, backup codes, trusted browsers and passkeys go, every session and
    /// refresh token ends, and the person owes a new second factor. The password is checked
    /// and hashed before anything is spent, so a refused one changes nothing.
    ///
    /// Errors: the password policy's errors; [`AuthnError::RecoveryNotReady`] while waiting or
    /// collecting; [`AuthnError::InvalidLink`] for an unknown or closed recovery;
    /// [`AuthnError::RecoveryOff`].
    pub async fn complete_recovery(
        &self,
        tenant: &Tenant,
        asker: &str,
        password: &str,
        client: &ClientInfo,
    ) -> Result<User, AuthnError> {
        self.recovery_on()?;
        let password = self.check_new_password(password).await?;
        let hash = self.hash_password(&password).await?;
        let now = self.now();
        let mut tx = self.store.write().await?;
        let mut request = tx
            .recovery_by_secret(&tenant.id, &SecretHash::of(asker))
            .await?
            .ok_or(AuthnError::RecoveryNotReady)?;
        match (request.status, request.ready_at) {
            (RecoveryStatus::Waiting, Some(ready_at)) if ready_at <= now => {}
            (RecoveryStatus::Pending | RecoveryStatus::Waiting, _) if request.is_open(now) => {
                return Err(AuthnError::RecoveryNotReady);
            }
            _ => return Err(AuthnError::InvalidLink),
        }
        let mut owner = tx
            .user(&tenant.id, &request.user_id)
            .await?
            .filter(|u| u.status == UserStatus::Active)
            .ok_or(AuthnError::InvalidLink)?;
        request.status = RecoveryStatus::Completed;
        request.closed_at = Some(now);
        request.factor_due = true;
        if !tx
            .update_recovery(&request, RecoveryStatus::Waiting)
            .await?
        {
            return Err(AuthnError::InvalidLink);
        }
        let read_at = owner.updated_at;
        owner.password_hash = Some(hash);
        owner.updated_at = now;
        if tx.update_user_if_unchanged(&owner, read_at).await? == svc_store::UpdateOutcome::Stale {
            return Err(AuthnError::InvalidLink);
        }
        self.remove_lost_factors(tx.as_mut(), &owner, &request)
            .await?;
        tx.revoke_user_sessions(&tenant.id, &owner.id, now).await?;
        tx.revoke_user_refresh_families(&tenant.id, &owner.id, now, "recovery")
            .await?;
        tx.clear_counter(&keys::account_lock(&tenant.id, &owner.email))
            .await?;
        tx.clear_counter(&keys::account_failures(&tenant.id, &owner.email))
            .await?;
        self.user_event(tx.as_mut(), &owner, EventType::TenantUserUpdated)
            .await?;
        let data = recovery_event(&owner, Some(&request), None, client);
        self.record_event(tx.as_mut(), &tenant.id, EventType::RecoveryCompleted, data)
            .await?;
        tx.commit().await?;
        self.deliver(
            self.recovery_texts()
                .completed(&owner, &tenant.display_name),
        );
        Ok(owner)
    }

    /// Deletes the factors the recovery replaces, each with its removal event.
    async fn remove_lost_factors(
        &self,
        tx: &mut dyn WriteTx,
        owner: &User,
        request: &RecoveryRequest,
    ) -> Result<(), AuthnError> {
        let tenant = &owner.tenant_id;
        let actor = format!("recovery:{}", request.id);
        let factors = tx.second_factors(tenant, &owner.id).await?;
        tx.delete_user_factors(tenant, &owner.id).await?;
        tx.forget_trusted_devices(tenant, &owner.id).await?;
        for factor in factors.iter().filter(|f| f.is_confirmed()) {
            let data = EventData::FactorChanged {
                user_id: owner.id.clone(),
                factor_id: factor.id.clone(),
                kind: factor.kind.as_str().to_owned(),
                actor: actor.clone(),
            };
            self.record_event(tx, tenant, EventType::MfaRemoved, data)
                .await?;
        }
        for passkey in tx.passkeys(tenant, &owner.id).await? {
            tx.delete_passkey(tenant, &owner.id, &passkey.id).await?;
            let data = EventData::PasskeyChanged {
                user_id: owner.id.clone(),
                passkey_id: passkey.id.clone(),
                name: passkey.name.clone(),
                binding: passkey.binding_amr().to_owned(),
                actor: actor.clone(),
            };
            self.record_event(tx, tenant, EventType::PasskeyRemoved, data)
                .await?;
        }
        Ok(())
    }
}

/// Whether `request` still takes approvals at `now`.
fn collecting(request: &RecoveryRequest, now: OffsetDateTime) -> bool {
    request.status == RecoveryStatus::Pending && request.expires_at > now
}

/// How many of `approvals` were given.
fn approved(approvals: &[RecoveryApproval]) -> u32 {
    u32::try_from(approvals.iter().filter(|a| a.approved_at.is_some()).count()).unwrap_or(u32::MAX)
}

fn set_approvals(data: &mut EventData, count: u32) {
    if let EventData::Recovery { approvals, .. } = data {
        *approvals = Some(count);
    }
}

/// Helpers for the module's unit tests.
#[cfg(test)]
pub(crate) mod tests_support {
    use svc_domain::{Email, ManualClock, SeededRandom, TenantId, User, UserId, UserStatus};
    use time::OffsetDateTime;

    /// A person named Ada.
    pub(crate) fn user() -> User {
        let clock = ManualClock::new(OffsetDateTime::UNIX_EPOCH);
        let rng = SeededRandom::new(3);
        User {
            id: UserId::generate(&clock, &rng),
            tenant_id: TenantId::generate(&clock, &rng),
            email: Email::parse("ada@example.com").unwrap_or_else(|_| unreachable!()),
            email_verified: true,
            name: Some("Ada Lovelace".into()),
            given_name: None,
            family_name: None,
            status: UserStatus::Active,
            password_hash: None,
            created_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
            last_sign_in_at: None,
        }
    }
}
