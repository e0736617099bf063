//! Creates an invitation and mails its link.

use super::input::{
    NewInvitation, check_email, check_expiry, check_organization, check_roles,
    organization_refused, unknown, wrong_kind,
};
use super::view::InvitationView;
use super::{link, mail, new_secret, record};
use crate::audit::action;
use crate::{Actor, ManageContext, ManageError, Reach, RequestMeta};
use svc_domain::{
    EventType, Invitation, InvitationId, InvitationStatus, OrgStatus, RoleKind, Tenant, UserStatus,
};
use svc_store::StoreError;
use time::Duration;

/// The constraint the store names for a second pending invitation.
const PENDING_KEY: &str = "invitations_pending_key";

/// Invites `input.email` to `tenant` (or one of its organizations) with `input.roles`, audited
/// as `invitation.created` with the event `invitation.created`; the link
/// `{issuer}/auth/join?token=…` is mailed in the background after the commit.
///
/// Errors: [`ManageError::Invalid`] naming `email`, `organization_id` (malformed, unknown,
/// another tenant's or suspended: one answer), `roles` (unknown, of the other kind, too many) or
/// `expires_in_secs`; [`ManageError::Conflict`] when a pending invitation for the same address
/// and target exists (expired or not: resend or revoke it), or the person already belongs to the
/// organization (for the tenant: already holds every role offered). Beyond the `reach` of the
/// caller ([`Reach`] rules 1–2): an organization administrator invites only into their own
/// organization (`organization_id` refused otherwise, as an unknown one is), and only an owner
/// offers `owner` ([`ManageError::Forbidden`]).
pub async fn create(
    ctx: &ManageContext,
    tenant: &Tenant,
    issuer: &str,
    (actor, meta): (&Actor, &RequestMeta),
    reach: &Reach,
    input: NewInvitation,
) -> Result<InvitationView, ManageError> {
    let email = check_email(&input.email)?;
    let organization_id = check_organization(input.organization_id.as_deref())?;
    let kind = if organization_id.is_some() {
        RoleKind::Organization
    } else {
        RoleKind::Tenant
    };
    let roles = check_roles(input.roles.as_deref(), kind)?;
    if reach.within(organization_id.as_ref()).is_err() {
        return Err(match organization_id {
            Some(_) => organization_refused(),
            None => ManageError::invalid(
                "organization_id",
                "an organization administrator invites only into their own organization",
            ),
        });
    }
    reach.may_grant(&roles)?;
    let expiry = check_expiry(input.expires_in_secs)?;
    // Fails before anything is written when the context cannot mail.
    ctx.sign_in()?;

    let mut tx = ctx.store.write().await?;
    if tx.tenant_by_id(&tenant.id).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let organization = match &organization_id {
        Some(id) => match tx.organization(&tenant.id, id).await? {
            Some(org) if org.status == OrgStatus::Active => Some(org),
            _ => return Err(organization_refused()),
        },
        None => None,
    };
    if let Some((key, found)) =
        crate::roles::unassignable(tx.as_mut(), &tenant.id, &roles, kind).await?
    {
        return Err(match found {
            Some(_) => wrong_kind(&key, kind),
            None => unknown(key.as_str(), kind),
        });
    }
    if let Some(existing) = tx
        .pending_invitation(&tenant.id, &email, organization_id.as_ref())
        .await?
    {
        return Err(already_invited(&existing.id));
    }
    let person = tx
        .user_by_email(&tenant.id, &email)
        .await?
        .filter(|u| u.status != UserStatus::Removed);
    if let Some(person) = person {
        match &organization_id {
            Some(org) => {
                if tx.membership(&tenant.id, org, &person.id).await?.is_some() {
                    return Err(ManageError::Conflict(
                        "a person with this address is already a member of the organization"
                            .to_owned(),
                    ));
                }
            }
            None => {
                let held = tx.user_roles(&tenant.id, &person.id).await?;
                if roles.is_subset(&held) {
                    return Err(ManageError::Conflict(
                        "a person with this address already belongs to the tenant with every \
                         role offered"
                            .to_owned(),
                    ));
                }
            }
        }
    }

    let now = ctx.now();
    let secret = new_secret(ctx);
    let invitation = Invitation {
        id: InvitationId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        tenant_id: tenant.id.clone(),
        email,
        organization_id,
        roles,
        status: InvitationStatus::Pending,
        token_hash: secret.hash.clone(),
        expires_at: now + Duration::seconds(i64::from(expiry)),
        invited_by: actor.as_audit_string(),
        accepted_by: None,
        accepted_at: None,
        created_at: now,
        updated_at: now,
    };
    match tx.insert_invitation(&invitation).await {
        Ok(()) => {}
        // A concurrent invitation of the same address and target committed first.
        Err(StoreError::Conflict { constraint }) if constraint == PENDING_KEY => {
            return Err(ManageError::Conflict(
                "a pending invitation for this address and target already exists".to_owned(),
            ));
        }
        Err(e) => return Err(e.into()),
    }
    record(
        tx.as_mut(),
        ctx,
        (actor, meta),
        &invitation,
        (action::INVITATION_CREATED, EventType::InvitationCreated),
    )
    .await?;
    tx.commit().await?;
    mail(
        ctx,
        &tenant.display_name,
        organization.as_ref().map(|o| o.name.as_str()),
        &invitation,
        link(issuer, &secret),
    )?;
    Ok(InvitationView::new(&invitation, now))
}

fn already_invited(id: &InvitationId) -> ManageError {
    ManageError::Conflict(format!(
        "a pending invitation for this address and target already exists ({id}); resend or \
         revoke it"
    ))
}
