//! Social recovery: the guardians a person names, and getting an account whose second factors
//! are lost back with their help (issue 16 item 8).
//!
//! The flow, each step an event in the transaction of its change:
//! 1. A signed-in person names guardians by address (`auth.recovery.guardian_added`), at most
//!    `max_guardians`, never their own address; a guardian is mailed that they were named.
//! 2. Anyone asks to recover an address ([`Authn::start_recovery`]). The answer never tells
//!    whether anything started: the browser always gets a secret, a decoy when the address has
//!    no account, too few guardians, or a recovery already open. For a real one each guardian
//!    is mailed a single-use approval link and the owner a link that cancels
//!    (`auth.recovery.requested`).
//! 3. Guardians approve through their links ([`Authn::approve_recovery`]): the owner's own
//!    session cannot approve, a link works once and only while the recovery collects approvals
//!    (`auth.recovery.approved`). The `approvals_required`-th approval starts the waiting
//!    period (`auth.recovery.waiting`) and the owner is told again.
//! 4. Until the new password is set, the owner cancels with the mailed link or from the
//!    account page (`auth.recovery.cancelled`).
//! 5. After the waiting period the browser holding the secret sets a new password
//!    ([`Authn::complete_recovery`]): the lost factors and passkeys go, every session and
//!    refresh token ends, and the person must set up a new second factor before any
//!    application gets a code (`auth.recovery.completed`).
//!
//! Secrets (the asking browser's, the owner's cancel token, each approval token) are stored
//! hashed only, and compared by their hashes in the database.

mod flow;
mod texts;

use crate::engine::Authn;
use crate::error::AuthnError;
use crate::settings::ClientInfo;
use std::time::Duration;
use svc_domain::{
    Email, EventData, EventType, Guardian, GuardianId, RecoveryRequest, Session, Tenant, User,
};

pub use flow::{ApprovalRequest, RecoveryProgress};

/// `[recovery]` in the engine's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoverySettings {
    /// Guardian approvals a recovery needs.
    pub approvals_required: u32,
    /// Most guardians a person may name.
    pub max_guardians: u32,
    /// From the last approval needed to the moment the new password can be set.
    pub waiting_period: Duration,
    /// How long guardians have to approve.
    pub request_lifetime: Duration,
}

/// What the account page shows about a person's recovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryOverview {
    /// The person's guardians, oldest first.
    pub guardians: Vec<Guardian>,
    /// Approvals a recovery needs.
    pub approvals_required: u32,
    /// Most guardians the person may name.
    pub max_guardians: u32,
    /// A recovery of the account in progress.
    pub open: Option<RecoveryRequest>,
    /// The account was recovered and the person has not set up a new factor yet.
    pub factor_due: bool,
}

impl Authn {
    /// The same engine offering social recovery.
    #[must_use]
    pub fn with_recovery(mut self, settings: RecoverySettings) -> Self {
        self.recovery = Some(settings);
        self
    }

    /// The recovery settings, when social recovery is on.
    pub fn recovery(&self) -> Option<&RecoverySettings> {
        self.recovery.as_ref()
    }

    fn recovery_on(&self) -> Result<&RecoverySettings, AuthnError> {
        self.recovery.as_ref().ok_or(AuthnError::RecoveryOff)
    }

    /// The person's guardians and any recovery of their account in progress.
    ///
    /// Errors: [`AuthnError::RecoveryOff`].
    pub async fn recovery_overview(
        &self,
        tenant: &Tenant,
        user: &User,
    ) -> Result<RecoveryOverview, AuthnError> {
        let settings = self.recovery_on()?;
        let now = self.now();
        let mut tx = self.store.read().await?;
        Ok(RecoveryOverview {
            guardians: tx.guardians(&tenant.id, &user.id).await?,
            approvals_required: settings.approvals_required,
            max_guardians: settings.max_guardians,
            open: tx.open_recovery(&tenant.id, &user.id, now).await?,
            factor_due: tx.recovery_factor_due(&tenant.id, &user.id).await?,
        })
    }

    /// Names `email` a guardian of `user`, and mails the guardian that they were named (no link
    /// to click). Guardians can take part in handing the account to someone else, so a person
    /// with a second factor needs a session verified with it.
    ///
    /// Errors: [`AuthnError::InvalidEmail`]; [`AuthnError::GuardianRefused`] for the person's
    /// own address, one already named, or one too many; [`AuthnError::StepUpRequired`];
    /// [`AuthnError::RecoveryOff`].
    pub async fn add_guardian(
        &self,
        tenant: &Tenant,
        (session, user): (&Session, &User),
        email: &str,
        client: &ClientInfo,
    ) -> Result<Guardian, AuthnError> {
        let settings = self.recovery_on()?;
        let email = Email::parse(email.trim()).map_err(|_| AuthnError::InvalidEmail)?;
        if email == user.email {
            return Err(AuthnError::GuardianRefused(
                "a guardian is someone else: name an address other than your own",
            ));
        }
        let now = self.now();
        let mut tx = self.store.write().await?;
        self.may_manage(tx.as_mut(), session, user).await?;
        let guardians = tx.guardians(&tenant.id, &user.id).await?;
        if guardians.iter().any(|g| g.email == email) {
            return Err(AuthnError::GuardianRefused(
                "this address is already a guardian",
            ));
        }
        if guardians.len() >= usize::try_from(settings.max_guardians).unwrap_or(usize::MAX) {
            return Err(AuthnError::GuardianRefused(
                "you have named as many guardians as you may; remove one first",
            ));
        }
        let guardian = Guardian {
            id: GuardianId::generate(self.clock.as_ref(), self.rng.as_ref()),
            tenant_id: tenant.id.clone(),
            user_id: user.id.clone(),
            email,
            created_at: now,
        };
        match tx.insert_guardian(&guardian).await {
            Ok(()) => {}
            // A concurrent addition of the same address won.
            Err(svc_store::StoreError::Conflict { .. }) => {
                return Err(AuthnError::GuardianRefused(
                    "this address is already a guardian",
                ));
            }
            Err(e) => return Err(e.into()),
        }
        let data = recovery_event(user, None, Some(&guardian.id), client);
        self.record_event(
            tx.as_mut(),
            &tenant.id,
            EventType::RecoveryGuardianAdded,
            data,
        )
        .await?;
        tx.commit().await?;
        self.deliver(self.recovery_texts().guardian_named(
            &guardian.email,
            user,
            &tenant.display_name,
        ));
        Ok(guardian)
    }

    /// Removes the guardian `id` of `user`. A recovery in progress keeps the approvals it has
    /// (the removed guardian's link stops counting only once the recovery closes).
    ///
    /// Errors: [`AuthnError::UnknownGuardian`] when it is not the person's;
    /// [`AuthnError::StepUpRequired`]; [`AuthnError::RecoveryOff`].
    pub async fn remove_guardian(
        &self,
        tenant: &Tenant,
        (session, user): (&Session, &User),
        id: &GuardianId,
        client: &ClientInfo,
    ) -> Result<(), AuthnError> {
        self.recovery_on()?;
        let mut tx = self.store.write().await?;
        self.may_manage(tx.as_mut(), session, user).await?;
        if !tx.delete_guardian(&tenant.id, &user.id, id).await? {
            return Err(AuthnError::UnknownGuardian);
        }
        let data = recovery_event(user, None, Some(id), client);
        self.record_event(
            tx.as_mut(),
            &tenant.id,
            EventType::RecoveryGuardianRemoved,
            data,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    fn recovery_texts(&self) -> &'static texts::RecoveryTexts {
        texts::RecoveryTexts::for_language(Some(self.settings.mail_texts.lang))
    }
}

/// The payload of a guardian change; recovery steps fill in the rest.
fn recovery_event(
    user: &User,
    recovery: Option<&RecoveryRequest>,
    guardian: Option<&GuardianId>,
    client: &ClientInfo,
) -> EventData {
    EventData::Recovery {
        user_id: user.id.clone(),
        recovery_id: recovery.map(|r| r.id.clone()),
        guardian_id: guardian.cloned(),
        approvals: None,
        approvals_needed: recovery.map(|r| r.approvals_needed),
        ready_at: recovery.and_then(|r| r.ready_at),
        client_ip: client.ip.map(|ip| ip.to_string()),
    }
}
