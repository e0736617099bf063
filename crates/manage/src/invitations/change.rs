//! Resends and revokes an invitation.

use super::view::InvitationView;
use super::{link, load, mail, new_secret, record};
use crate::audit::action;
use crate::revision::next_update_time;
use crate::{Actor, ManageContext, ManageError, Precondition, Reach, RequestMeta};
use svc_domain::{EventType, InvitationId, InvitationState, InvitationStatus, Tenant, TenantId};
use svc_store::UpdateOutcome;

/// Mails the invitation `id` of `tenant` again with a new link (the older one stops working)
/// whose deadline is as far from now as the original one was from its creation, audited as
/// `invitation.resent` with the event `invitation.resent`. Honours `precondition` (`If-Match`).
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::Conflict`] unless it is pending or expired
/// (also when it was accepted or revoked while this ran); [`ManageError::PreconditionFailed`].
/// Beyond the `reach` of the caller ([`Reach`] rules 1–2): not found outside their
/// organization; [`ManageError::Forbidden`] for an `admin` resending an offer of `owner`.
pub async fn resend(
    ctx: &ManageContext,
    tenant: &Tenant,
    issuer: &str,
    (actor, meta): (&Actor, &RequestMeta),
    reach: &Reach,
    id: &InvitationId,
    precondition: &Precondition,
) -> Result<InvitationView, ManageError> {
    ctx.sign_in()?;
    let mut tx = ctx.store.write().await?;
    let read = load(tx.as_mut(), &tenant.id, id).await?;
    reach.within(read.organization_id.as_ref())?;
    reach.may_grant(&read.roles)?;
    precondition.check(read.updated_at)?;
    let now = ctx.now();
    if !matches!(
        read.state(now),
        InvitationState::Pending | InvitationState::Expired
    ) {
        return Err(final_state(read.state(now)));
    }
    let lifetime = read.expires_at - read.created_at;
    let secret = new_secret(ctx);
    let mut invitation = read.clone();
    invitation.token_hash = secret.hash.clone();
    invitation.updated_at = next_update_time(read.updated_at, now);
    invitation.expires_at = invitation.updated_at + lifetime;
    apply(tx.as_mut(), &invitation, &read).await?;
    record(
        tx.as_mut(),
        ctx,
        (actor, meta),
        &invitation,
        (action::INVITATION_RESENT, EventType::InvitationResent),
    )
    .await?;
    let organization = match &invitation.organization_id {
        Some(org) => tx.organization(&tenant.id, org).await?.map(|o| o.name),
        None => None,
    };
    tx.commit().await?;
    mail(
        ctx,
        &tenant.display_name,
        organization.as_deref(),
        &invitation,
        link(issuer, &secret),
    )?;
    Ok(InvitationView::new(&invitation, now))
}

/// Revokes the invitation `id` of `tenant` (pending or expired): its link stops working and it
/// stays listed as `revoked`. Audited as `invitation.revoked` with the event
/// `invitation.revoked`. Honours `precondition` (`If-Match`).
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::Conflict`] when it was accepted or revoked
/// already (also while this ran); [`ManageError::PreconditionFailed`]; not found outside the
/// organization of a caller limited to one ([`Reach`] rule 1).
pub async fn revoke(
    ctx: &ManageContext,
    tenant: &TenantId,
    (actor, meta): (&Actor, &RequestMeta),
    reach: &Reach,
    id: &InvitationId,
    precondition: &Precondition,
) -> Result<(), ManageError> {
    let mut tx = ctx.store.write().await?;
    let read = load(tx.as_mut(), tenant, id).await?;
    reach.within(read.organization_id.as_ref())?;
    precondition.check(read.updated_at)?;
    if read.status != InvitationStatus::Pending {
        return Err(final_state(read.state(ctx.now())));
    }
    let mut invitation = read.clone();
    invitation.status = InvitationStatus::Revoked;
    invitation.updated_at = next_update_time(read.updated_at, ctx.now());
    apply(tx.as_mut(), &invitation, &read).await?;
    record(
        tx.as_mut(),
        ctx,
        (actor, meta),
        &invitation,
        (action::INVITATION_REVOKED, EventType::InvitationRevoked),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Writes the change at the revision read; an acceptance in between makes it a conflict.
async fn apply(
    tx: &mut dyn svc_store::WriteTx,
    invitation: &svc_domain::Invitation,
    read: &svc_domain::Invitation,
) -> Result<(), ManageError> {
    match tx
        .update_invitation_if_unchanged(invitation, read.updated_at)
        .await?
    {
        UpdateOutcome::Applied => Ok(()),
        UpdateOutcome::Stale => Err(ManageError::Conflict(
            "the invitation changed while this request ran (it may have been accepted); read it \
             again"
                .to_owned(),
        )),
    }
}

fn final_state(state: InvitationState) -> ManageError {
    ManageError::Conflict(format!(
        "the invitation is {}; only a pending or expired one can change",
        state.as_str()
    ))
}
