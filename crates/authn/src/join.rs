//! Accepting an invitation to join the tenant or one of its organizations, through the mailed
//! link `/auth/join?token=…` (the management API creates invitations, `svc_manage::invitations`).
//!
//! Only the person with the invited address may accept: signed in as them, or, when the tenant
//! has no account for the address, by creating the account right on the page (the mailed link
//! proves the mailbox, so the new account is `active` with a verified address, and it is signed
//! in). A person with an account who is not signed in signs in first; a signed-in person with
//! another address is refused and nothing changes.
//!
//! Acceptance is one write transaction: the account (when new), the membership or the tenant
//! roles, the invitation's change from `pending` (a conditional update: of two acceptances, one
//! wins), the session, the events (`invitation.accepted` and `org.member.added` or
//! `tenant_user.roles_changed`) and the audit entries commit together or not at all. The roles
//! are read again under the roles' lock: a custom role deleted since the invitation was made is
//! not given (an organization invitation left with none gives `member`). Passwords are checked
//! and hashed before the transaction, so a refused password leaves the link usable.

use crate::engine::{Authn, SignedIn, keys};
use crate::error::AuthnError;
use crate::settings::ClientInfo;
use crate::sign_up::clean_name;
use std::collections::BTreeSet;
use svc_domain::{
    EventData, EventType, Invitation, InvitationState, Membership, ORG_MEMBER, OrgStatus,
    Organization, PasswordHash, RoleKey, RoleKind, SecretHash, Tenant, User, UserId, UserStatus,
};
use svc_store::{StoreError, WriteTx};

/// The most organizations one person may belong to: the management API's rule
/// (`svc_manage::organizations::MAX_MEMBERSHIPS_PER_USER`), restated since engines do not
/// depend on each other.
const MAX_MEMBERSHIPS_PER_USER: usize = 500;

/// The audit actions of an acceptance, as the management API spells them
/// (`svc_manage::audit::action`), restated for the same reason.
pub(crate) mod action {
    pub(super) const INVITATION_ACCEPTED: &str = "invitation.accepted";
    pub(crate) const ORGANIZATION_MEMBER_ADDED: &str = "organization.member_added";
    pub(super) const TENANT_USER_ROLES_CHANGED: &str = "tenant_user.roles_changed";
}

/// Why an invitation link cannot be used (beyond the password rules of a new account).
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    /// No invitation of this tenant has this link (never one, or a resend replaced it).
    #[error("this invitation link is not valid")]
    Unknown,
    /// The invitation was accepted, revoked or expired (the state says which).
    #[error("this invitation is {}", .0.as_str())]
    Gone(InvitationState),
    /// The signed-in person's address is not the one invited.
    #[error("this invitation was sent to another address")]
    OtherAddress,
    /// The invited address has an account: sign in to it first.
    #[error("an account with this address exists; sign in first")]
    SignInFirst,
    /// The person already belongs to the organization (or holds every role offered).
    #[error("you already belong to it")]
    AlreadyMember,
    /// The organization is suspended, or the person may not join (suspended account, or
    /// already in the most organizations one may belong to).
    #[error("this invitation cannot be accepted now")]
    Refused,
    /// A failure of the sign-in engine: a refused password, a rate limit, the database.
    #[error(transparent)]
    Authn(#[from] AuthnError),
}

impl From<StoreError> for JoinError {
    fn from(e: StoreError) -> Self {
        Self::Authn(e.into())
    }
}

/// Who is looking at an invitation link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Joiner {
    /// Signed in as the invited person: they may accept.
    Invitee,
    /// Not signed in, and the tenant has no account with the invited address: they may create
    /// it here.
    Newcomer,
}

/// What an invitation link offers, for the page that shows it.
#[derive(Debug, Clone)]
pub struct JoinOffer {
    /// The invitation.
    pub invitation: Invitation,
    /// The organization to join, if any (else the tenant).
    pub organization: Option<Organization>,
    /// Who may accept it here.
    pub joiner: Joiner,
}

impl Authn {
    /// What the link `token` offers to `viewer` (the signed-in person, if any): the invitation
    /// and who may accept it, or why it cannot be accepted by them.
    ///
    /// Errors: every [`JoinError`] but [`JoinError::Authn`] for the password rules.
    pub async fn join_offer(
        &self,
        tenant: &Tenant,
        token: &str,
        viewer: Option<&User>,
    ) -> Result<JoinOffer, JoinError> {
        let now = self.now();
        let mut tx = self.store.read().await?;
        let invitation = tx
            .invitation_by_token(&tenant.id, &SecretHash::of(token))
            .await?
            .ok_or(JoinError::Unknown)?;
        let state = invitation.state(now);
        if state != InvitationState::Pending {
            return Err(JoinError::Gone(state));
        }
        let organization = match &invitation.organization_id {
            Some(id) => Some(
                tx.organization(&tenant.id, id)
                    .await?
                    .filter(|o| o.status == OrgStatus::Active)
                    .ok_or(JoinError::Refused)?,
            ),
            None => None,
        };
        let joiner = match viewer {
            Some(user) if user.email != invitation.email => return Err(JoinError::OtherAddress),
            Some(user) => {
                let member = match &invitation.organization_id {
                    Some(org) => tx.membership(&tenant.id, org, &user.id).await?.is_some(),
                    None => {
                        !invitation.roles.is_empty()
                            && invitation
                                .roles
                                .is_subset(&tx.user_roles(&tenant.id, &user.id).await?)
                    }
                };
                if member {
                    return Err(JoinError::AlreadyMember);
                }
                Joiner::Invitee
            }
            None => {
                let holder = tx.user_by_email(&tenant.id, &invitation.email).await?;
                account_refusal(holder.as_ref())?;
                Joiner::Newcomer
            }
        };
        tx.finish().await?;
        Ok(JoinOffer {
            invitation,
            organization,
            joiner,
        })
    }

    /// Accepts the invitation of the link `token` as `user`, signed in: they join the
    /// organization with its roles (or gain its tenant roles).
    ///
    /// Errors: [`JoinError::OtherAddress`] when `user` is not the one invited (nothing
    /// changes); the other [`JoinError`]s as for [`Authn::join_offer`].
    pub async fn join_signed_in(
        &self,
        tenant: &Tenant,
        token: &str,
        user: &UserId,
    ) -> Result<Invitation, JoinError> {
        let now = self.now();
        let hash = SecretHash::of(token);
        let mut tx = self.store.write().await?;
        let invitation = open(tx.as_mut(), tenant, &hash, now).await?;
        let user = tx
            .user(&tenant.id, user)
            .await?
            .filter(|u| u.status == UserStatus::Active)
            .ok_or(JoinError::Refused)?;
        if user.email != invitation.email {
            return Err(JoinError::OtherAddress);
        }
        let accepted = self
            .join(tx.as_mut(), tenant, &invitation, &hash, &user)
            .await?;
        tx.commit().await?;
        Ok(accepted)
    }

    /// Accepts the invitation of the link `token` by creating the invited person's account
    /// with `password` (the sign-up rules) and `name`: `active`, address verified, joined and
    /// signed in, in one transaction. Counts against the per-address sign-up limit.
    ///
    /// Errors: [`JoinError::SignInFirst`] when the address has an account (also when one was
    /// created while this ran); the password refusals and rate limit as [`JoinError::Authn`]
    /// (the link stays usable); the other [`JoinError`]s as for [`Authn::join_offer`].
    pub async fn join_with_new_account(
        &self,
        tenant: &Tenant,
        token: &str,
        password: &str,
        name: Option<&str>,
        client: &ClientInfo,
    ) -> Result<SignedIn, JoinError> {
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
        // The link first: a dead link is refused before any password work.
        self.join_offer(tenant, token, None).await?;
        let password = self.check_new_password(password).await?;
        let hash: PasswordHash = self.hash_password(&password).await?;

        let now = self.now();
        let link = SecretHash::of(token);
        let mut tx = self.store.write().await?;
        let invitation = open(tx.as_mut(), tenant, &link, now).await?;
        let holder = tx.user_by_email(&tenant.id, &invitation.email).await?;
        account_refusal(holder.as_ref())?;
        let user = User {
            id: UserId::generate(self.clock.as_ref(), self.rng.as_ref()),
            tenant_id: tenant.id.clone(),
            email: invitation.email.clone(),
            // The mailed link proves the mailbox.
            email_verified: true,
            name: clean_name(name),
            given_name: None,
            family_name: None,
            status: UserStatus::Active,
            password_hash: Some(hash),
            created_at: now,
            updated_at: now,
            last_sign_in_at: Some(now),
        };
        match tx.insert_user(&user).await {
            Ok(()) => {}
            // An account for the address was created since the read: theirs to sign in to.
            Err(StoreError::Conflict { .. }) => return Err(JoinError::SignInFirst),
            Err(e) => return Err(e.into()),
        }
        self.user_event(tx.as_mut(), &user, EventType::TenantUserActivated)
            .await?;
        self.join(tx.as_mut(), tenant, &invitation, &link, &user)
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

    /// Within `tx`: gives `user` what `invitation` offers and marks it accepted (only if it is
    /// still pending at the link read: otherwise [`JoinError::Gone`] and the caller rolls back),
    /// with the events and audit entries of both.
    async fn join(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        invitation: &Invitation,
        link: &SecretHash,
        user: &User,
    ) -> Result<Invitation, JoinError> {
        let now = self.now();
        let actor = format!("user:{}", user.id);
        match &invitation.organization_id {
            Some(org) => {
                let org = tx
                    .organization(&tenant.id, org)
                    .await?
                    .filter(|o| o.status == OrgStatus::Active)
                    .ok_or(JoinError::Refused)?;
                if tx
                    .membership(&tenant.id, &org.id, &user.id)
                    .await?
                    .is_some()
                {
                    return Err(JoinError::AlreadyMember);
                }
                if tx.memberships_of_user(&tenant.id, &user.id).await?.len()
                    >= MAX_MEMBERSHIPS_PER_USER
                {
                    return Err(JoinError::Refused);
                }
                let mut roles =
                    still_roles(tx, tenant, &invitation.roles, RoleKind::Organization).await?;
                if roles.is_empty() {
                    roles.extend(RoleKey::parse(ORG_MEMBER));
                }
                let membership = Membership {
                    tenant_id: tenant.id.clone(),
                    organization_id: org.id.clone(),
                    user_id: user.id.clone(),
                    roles,
                    created_at: now,
                    updated_at: now,
                };
                match tx.insert_membership(&membership).await {
                    Ok(()) => {}
                    Err(StoreError::Conflict { .. }) => return Err(JoinError::AlreadyMember),
                    Err(e) => return Err(e.into()),
                }
                let data = EventData::OrgMember {
                    organization_id: org.id.clone(),
                    user_id: user.id.clone(),
                    roles: names(&membership.roles),
                    previous_roles: None,
                    actor: actor.clone(),
                };
                self.record_event(tx, &tenant.id, EventType::OrgMemberAdded, data)
                    .await?;
                self.audit(
                    tx,
                    tenant,
                    &actor,
                    action::ORGANIZATION_MEMBER_ADDED,
                    org.id.as_str(),
                )
                .await?;
            }
            None => {
                let previous = tx.user_roles(&tenant.id, &user.id).await?;
                let offered = still_roles(tx, tenant, &invitation.roles, RoleKind::Tenant).await?;
                if !offered.is_empty() && offered.is_subset(&previous) {
                    return Err(JoinError::AlreadyMember);
                }
                let roles: BTreeSet<RoleKey> = previous.union(&offered).cloned().collect();
                if roles != previous {
                    tx.set_user_roles(&tenant.id, &user.id, &roles, now).await?;
                    let data = EventData::TenantUserRoles {
                        user_id: user.id.clone(),
                        roles: names(&roles),
                        previous_roles: names(&previous),
                        actor: actor.clone(),
                    };
                    self.record_event(tx, &tenant.id, EventType::TenantUserRolesChanged, data)
                        .await?;
                    self.audit(
                        tx,
                        tenant,
                        &actor,
                        action::TENANT_USER_ROLES_CHANGED,
                        user.id.as_str(),
                    )
                    .await?;
                }
            }
        }
        if !tx
            .accept_invitation(&tenant.id, &invitation.id, link, &user.id, now)
            .await?
        {
            // Accepted, revoked or resent since it was read: this acceptance rolls back.
            return Err(JoinError::Gone(InvitationState::Accepted));
        }
        let accepted = Invitation {
            status: svc_domain::InvitationStatus::Accepted,
            accepted_by: Some(user.id.clone()),
            accepted_at: Some(now),
            updated_at: now,
            ..invitation.clone()
        };
        let data = EventData::Invitation {
            invitation_id: accepted.id.clone(),
            email: accepted.email.as_str().to_owned(),
            organization_id: accepted.organization_id.clone(),
            roles: names(&accepted.roles),
            status: accepted.status.as_str().to_owned(),
            accepted_by: accepted.accepted_by.clone(),
            actor: actor.clone(),
        };
        self.record_event(tx, &tenant.id, EventType::InvitationAccepted, data)
            .await?;
        self.audit(
            tx,
            tenant,
            &actor,
            action::INVITATION_ACCEPTED,
            accepted.id.as_str(),
        )
        .await?;
        Ok(accepted)
    }

    /// Appends a successful audit entry of `actor` (the person) on `target`.
    async fn audit(
        &self,
        tx: &mut dyn WriteTx,
        tenant: &Tenant,
        actor: &str,
        action: &str,
        target: &str,
    ) -> Result<(), JoinError> {
        self.record_audit(tx, &tenant.id, (actor, action), target)
            .await?;
        Ok(())
    }
}

/// Why nobody may create an account for the invited address: it has one (sign in to it), or
/// that account is suspended (refused). A removed account freed the address.
fn account_refusal(holder: Option<&User>) -> Result<(), JoinError> {
    match holder.map(|u| u.status) {
        None | Some(UserStatus::Removed) => Ok(()),
        Some(UserStatus::Suspended) => Err(JoinError::Refused),
        Some(_) => Err(JoinError::SignInFirst),
    }
}

/// The pending invitation of the link `hash`, read in the write transaction.
async fn open(
    tx: &mut dyn WriteTx,
    tenant: &Tenant,
    hash: &SecretHash,
    now: time::OffsetDateTime,
) -> Result<Invitation, JoinError> {
    let invitation = tx
        .invitation_by_token(&tenant.id, hash)
        .await?
        .ok_or(JoinError::Unknown)?;
    match invitation.state(now) {
        InvitationState::Pending => Ok(invitation),
        state => Err(JoinError::Gone(state)),
    }
}

/// The roles of `offered` that are still roles of `kind` in `tenant`, the custom ones read under
/// the lock that makes a deletion of them wait for this transaction.
async fn still_roles(
    tx: &mut dyn WriteTx,
    tenant: &Tenant,
    offered: &BTreeSet<RoleKey>,
    kind: RoleKind,
) -> Result<BTreeSet<RoleKey>, JoinError> {
    let mut kept = BTreeSet::new();
    for key in offered {
        let still = match RoleKind::of_built_in(key.as_str()) {
            Some(built_in) => built_in == kind,
            None => tx
                .lock_role(&tenant.id, key)
                .await?
                .is_some_and(|role| role.kind == kind),
        };
        if still {
            kept.insert(key.clone());
        }
    }
    Ok(kept)
}

impl Authn {
    /// Mails the invitation to join `organization` (or the tenant `tenant_name`) to `to`, in the
    /// background: the management API calls it once the invitation committed.
    pub fn notify_invitation(
        &self,
        to: &svc_domain::Email,
        (tenant_name, organization): (&str, Option<&str>),
        link: String,
        valid_for: std::time::Duration,
    ) {
        let mail =
            self.settings
                .mail_texts
                .join_mail(to, (tenant_name, organization), link, valid_for);
        self.deliver(mail);
    }
}

fn names(roles: &BTreeSet<RoleKey>) -> Vec<String> {
    roles.iter().map(|r| r.as_str().to_owned()).collect()
}
