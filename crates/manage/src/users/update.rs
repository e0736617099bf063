//! Changes a tenant user, PATCH-style: only the fields present change.
//!
//! - A new address starts unverified (unless `email_verified` comes with it), and every link
//!   mailed to the old address stops working; an invited user is sent a new invitation at the
//!   new address.
//! - A new password ends the user's sessions and refresh-token families (whoever knew the old
//!   one is signed out) and kills outstanding reset links; it activates an invited or
//!   pre-provisioned user, as creating a user with a password does.
//! - A removed user cannot be changed.
//! - With `If-Match`, the user must still be at one of the revisions given.

use super::input::{UserPatch, check_email, check_name};
use super::{ALL_LINKS, end_access, invalidate_links, load, next_revision, save};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, PendingMail, Precondition, RequestMeta, events};
use svc_domain::{
    Email, EventType, PasswordHash, Tenant, User, UserId, UserStatus, UserTokenPurpose,
};
use svc_store::WriteTx;

/// Applies `patch` to the user `id` of `tenant`, audited as `tenant_user.updated`. A patch that
/// changes nothing writes nothing and returns the user as it is.
///
/// Errors: [`ManageError::Invalid`] naming the field; [`ManageError::NotFound`];
/// [`ManageError::PreconditionFailed`] when `precondition` does not hold or the user changed
/// meanwhile; [`ManageError::Conflict`] when the address is taken or the user is removed;
/// [`ManageError::PasswordCheckUnavailable`] when the breached-password check is unavailable.
#[allow(clippy::too_many_arguments)] // the request's facts, each distinct
pub async fn update(
    ctx: &ManageContext,
    tenant: &Tenant,
    issuer: &str,
    actor: &Actor,
    meta: &RequestMeta,
    id: &UserId,
    patch: UserPatch,
    precondition: &Precondition,
) -> Result<User, ManageError> {
    let change = prepare(ctx, patch).await?;
    let mut tx = ctx.store.write().await?;
    let (user, invitation) = apply_in(
        tx.as_mut(),
        ctx,
        tenant,
        issuer,
        actor,
        meta,
        id,
        change,
        precondition,
    )
    .await?;
    tx.commit().await?;
    if let Some(mail) = invitation {
        mail.send();
    }
    Ok(user)
}

/// A change of a user, checked (and its password hashed) before any transaction opens.
#[derive(Debug, Default)]
pub(crate) struct UserChange {
    pub(crate) email: Option<Email>,
    pub(crate) email_verified: Option<bool>,
    pub(crate) name: Option<Option<String>>,
    pub(crate) given_name: Option<Option<String>>,
    pub(crate) family_name: Option<Option<String>>,
    pub(crate) password_hash: Option<PasswordHash>,
}

/// Checks `patch` field by field (see [`update`] for the rules) and hashes its password.
pub(crate) async fn prepare(
    ctx: &ManageContext,
    patch: UserPatch,
) -> Result<UserChange, ManageError> {
    let email = patch.email.as_deref().map(check_email).transpose()?;
    let name = names("name", patch.name.as_ref())?;
    let given_name = names("given_name", patch.given_name.as_ref())?;
    let family_name = names("family_name", patch.family_name.as_ref())?;
    let password_hash = match patch.password.as_deref() {
        Some(raw) => {
            let passwords = &ctx.sign_in()?.passwords;
            let password = passwords.check_new(raw).await?;
            Some(passwords.hash(&password).await?)
        }
        None => None,
    };
    Ok(UserChange {
        email,
        email_verified: patch.email_verified,
        name,
        given_name,
        family_name,
        password_hash,
    })
}

/// Applies `change` to the user `id` of `tenant` within `tx`, with its audit entry and events;
/// returns the user and, for an invited user at a new address, the invitation mail to send once
/// `tx` has committed. Shared by the management API and SCIM provisioning (one rule set).
#[allow(clippy::too_many_arguments)] // the request's facts, each distinct
pub(crate) async fn apply_in(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    tenant: &Tenant,
    issuer: &str,
    actor: &Actor,
    meta: &RequestMeta,
    id: &UserId,
    change: UserChange,
    precondition: &Precondition,
) -> Result<(User, Option<PendingMail>), ManageError> {
    let UserChange {
        email,
        email_verified,
        name,
        given_name,
        family_name,
        password_hash,
    } = change;
    let now = ctx.now();
    let before = load(tx, &tenant.id, id, precondition).await?;
    if before.status == UserStatus::Removed {
        return Err(ManageError::Conflict(
            "a removed user cannot be changed".to_owned(),
        ));
    }
    let mut user = before.clone();
    let new_address = email.as_ref().is_some_and(|e| *e != user.email);
    if let Some(email) = email {
        user.email = email;
    }
    if new_address {
        user.email_verified = email_verified.unwrap_or(false);
    } else if let Some(verified) = email_verified {
        user.email_verified = verified;
    }
    if let Some(name) = name {
        user.name = name;
    }
    if let Some(given_name) = given_name {
        user.given_name = given_name;
    }
    if let Some(family_name) = family_name {
        user.family_name = family_name;
    }
    let new_password = password_hash.is_some();
    if let Some(hash) = password_hash {
        user.password_hash = Some(hash);
        if matches!(
            user.status,
            UserStatus::Invited | UserStatus::PreProvisioned
        ) {
            user.status = UserStatus::Active;
        }
    }
    if user == before && !new_password {
        return Ok((before, None));
    }
    user.updated_at = next_revision(before.updated_at, now);
    save(tx, &user, before.updated_at).await?;
    if new_address {
        invalidate_links(tx, &user, &ALL_LINKS, now).await?;
    }
    if new_password {
        end_access(tx, &user, now, "password_changed").await?;
        invalidate_links(
            tx,
            &user,
            &[
                UserTokenPurpose::ResetPassword,
                UserTokenPurpose::Invitation,
            ],
            now,
        )
        .await?;
    }
    let invitation = if new_address && user.status == UserStatus::Invited {
        let mail = ctx
            .sign_in()?
            .invitations
            .prepare(tx, issuer, &user, &tenant.display_name)
            .await?;
        Some(mail)
    } else {
        None
    };
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(&tenant.id),
        action::TENANT_USER_UPDATED,
        Some(id.as_str()),
    );
    audit::record(tx, &entry).await?;
    events::user_changed(tx, ctx, actor, &user, EventType::TenantUserUpdated).await?;
    if before.status != UserStatus::Active && user.status == UserStatus::Active {
        events::user_changed(tx, ctx, actor, &user, EventType::TenantUserActivated).await?;
    }
    Ok((user, invitation))
}

/// A present name field: `null` clears it (`Some(None)`), a string must pass the name rule.
fn names(
    field: &str,
    value: Option<&Option<String>>,
) -> Result<Option<Option<String>>, ManageError> {
    match value {
        None => Ok(None),
        Some(None) => Ok(Some(None)),
        Some(Some(raw)) => Ok(Some(check_name(field, Some(raw))?)),
    }
}
