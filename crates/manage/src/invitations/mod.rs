//! Invitations: an administrator asks a person, by address, to join the tenant (with tenant
//! roles) or one of its organizations (with organization roles); the person accepts through the
//! mailed link `{issuer}/auth/join?token=…` on the hosted pages (the sign-in engine's
//! `join` use cases). Create, list, read, resend and revoke, under `users:read|write`: inviting
//! a person is user management.
//!
//! Rules: one pending invitation per address and target (the schema's partial unique index
//! backs the use case's check, so a race cannot break it); roles are checked like the roles of a
//! member (`organizations`) or of a person (`users::roles`), read in the write transaction; the
//! organization must be the tenant's and active. A person already in the organization (or, for
//! the tenant, already holding every role offered) is a conflict. The link's secret is 256
//! random bits from the injected randomness, stored only as its SHA-256, mailed once after the
//! commit (so no mail announces a rolled-back invitation); a resend replaces it, so the older
//! link stops working. "Expired" is derived from the deadline, never stored.
//!
//! Every change appends its audit entry (`invitation.created`, `.resent`, `.revoked`; the target
//! is the invitation) and its event (`invitation.created`, `invitation.resent`,
//! `invitation.revoked`) in its transaction. Resend and revoke write only at the revision they
//! read, so an acceptance in between makes them fail (409) instead of overwriting it.

mod change;
mod create;
mod input;
mod read;
mod view;

pub use change::{resend, revoke};
pub use create::create;
pub use input::{
    DEFAULT_EXPIRY_SECS, MAX_EXPIRY_SECS, MAX_INVITATION_ROLES, MIN_EXPIRY_SECS, NewInvitation,
};
pub use read::{get, list};
pub use view::{InvitationStateSchema, InvitationView};

use crate::audit;
use crate::{Actor, ManageContext, ManageError, RequestMeta, events};
use svc_domain::{
    EventData, EventType, GeneratedSecret, INVITATION_TOKEN_PREFIX, Invitation, InvitationId,
    TenantId,
};
use svc_store::WriteTx;

/// The invitation `id` of `tenant`, or [`ManageError::NotFound`].
async fn load(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    id: &InvitationId,
) -> Result<Invitation, ManageError> {
    tx.invitation(tenant, id)
        .await?
        .ok_or(ManageError::NotFound)
}

/// A fresh link secret (`join_…`, 256 random bits) and its stored hash.
fn new_secret(ctx: &ManageContext) -> GeneratedSecret {
    GeneratedSecret::generate(INVITATION_TOKEN_PREFIX, ctx.rng.as_ref())
}

/// The hosted page the link opens.
fn link(issuer: &str, secret: &GeneratedSecret) -> String {
    format!(
        "{}/auth/join?token={}",
        issuer.trim_end_matches('/'),
        secret.plaintext
    )
}

/// Appends the audit entry (target: the invitation) and the event of a change by `actor`.
async fn record(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    (actor, meta): (&Actor, &RequestMeta),
    invitation: &Invitation,
    (verb, event_type): (&str, EventType),
) -> Result<(), ManageError> {
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(&invitation.tenant_id),
        verb,
        Some(invitation.id.as_str()),
    );
    audit::record(tx, &entry).await?;
    events::record(
        tx,
        ctx,
        &invitation.tenant_id,
        event_type,
        event_data(invitation, actor.as_audit_string()),
    )
    .await
}

/// The payload of every `invitation.*` event: the invitation as it is after the change.
pub fn event_data(invitation: &Invitation, actor: String) -> EventData {
    EventData::Invitation {
        invitation_id: invitation.id.clone(),
        email: invitation.email.as_str().to_owned(),
        organization_id: invitation.organization_id.clone(),
        roles: invitation
            .roles
            .iter()
            .map(|r| r.as_str().to_owned())
            .collect(),
        status: invitation.status.as_str().to_owned(),
        accepted_by: invitation.accepted_by.clone(),
        actor,
    }
}

/// Mails the link of `invitation` (after the commit), naming the organization when there is one.
fn mail(
    ctx: &ManageContext,
    tenant_name: &str,
    organization_name: Option<&str>,
    invitation: &Invitation,
    link: String,
) -> Result<(), ManageError> {
    // From the change that set the deadline, so the mail says "7 days", not "10079 minutes".
    let valid_for = (invitation.expires_at - invitation.updated_at).unsigned_abs();
    ctx.sign_in()?.notices.invitation(&crate::InvitationMail {
        to: &invitation.email,
        tenant_name,
        organization_name,
        link,
        valid_for,
    });
    Ok(())
}
