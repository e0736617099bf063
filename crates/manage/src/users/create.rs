//! Creates a tenant user: `active` with a password, `invited` with a mailed invitation, or
//! `pre_provisioned` with neither (the person claims the account through a password reset).

use super::input::{NewUser, check_email, check_name};
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, PendingMail, RequestMeta, events};
use svc_domain::{EventType, Tenant, User, UserId, UserStatus};
use svc_store::{StoreError, WriteTx};

/// The text of a taken address, shared with updates.
pub(crate) const EMAIL_TAKEN: &str = "a user with this email address already exists";

/// Creates the user described by `input` in `tenant`, audited as `tenant_user.created` or
/// (with `invite`) `tenant_user.invited`. An invitation links to
/// `{issuer}/auth/accept-invitation?token=…` and is mailed in the background after the commit;
/// a delivery failure is logged, not returned (the user exists either way).
///
/// Errors: [`ManageError::Invalid`] naming the field (address, names, password policy or
/// breach, both `password` and `invite`); [`ManageError::Conflict`] when the address is taken;
/// [`ManageError::NotFound`] when the tenant does not exist;
/// [`ManageError::PasswordCheckUnavailable`] when the breached-password check is unavailable.
pub async fn create(
    ctx: &ManageContext,
    tenant: &Tenant,
    issuer: &str,
    actor: &Actor,
    meta: &RequestMeta,
    input: NewUser,
) -> Result<User, ManageError> {
    let (user, invite) = prepare(ctx, tenant, input).await?;
    let mut tx = ctx.store.write().await?;
    let invitation =
        insert_in(tx.as_mut(), ctx, tenant, issuer, actor, meta, &user, invite).await?;
    tx.commit().await?;
    if let Some(mail) = invitation {
        mail.send();
    }
    Ok(user)
}

/// The user `input` describes, checked (and its password hashed) before any transaction opens,
/// and whether they are to be invited.
pub(crate) async fn prepare(
    ctx: &ManageContext,
    tenant: &Tenant,
    input: NewUser,
) -> Result<(User, bool), ManageError> {
    let email = check_email(&input.email)?;
    let name = check_name("name", input.name.as_deref())?;
    let given_name = check_name("given_name", input.given_name.as_deref())?;
    let family_name = check_name("family_name", input.family_name.as_deref())?;
    let invite = input.invite.unwrap_or(false);
    if invite && input.password.is_some() {
        return Err(ManageError::invalid(
            "invite",
            "give either password (an active user) or invite: true (an invitation), not both",
        ));
    }
    let password_hash = match input.password.as_deref() {
        Some(raw) => {
            let passwords = &ctx.sign_in()?.passwords;
            let password = passwords.check_new(raw).await?;
            Some(passwords.hash(&password).await?)
        }
        None => None,
    };
    let status = match (&password_hash, invite) {
        (Some(_), _) => UserStatus::Active,
        (None, true) => UserStatus::Invited,
        (None, false) => UserStatus::PreProvisioned,
    };
    let now = ctx.now();
    let user = User {
        id: UserId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        tenant_id: tenant.id.clone(),
        email,
        email_verified: input.email_verified.unwrap_or(false),
        name,
        given_name,
        family_name,
        status,
        password_hash,
        created_at: now,
        updated_at: now,
        last_sign_in_at: None,
    };
    Ok((user, invite))
}

/// Stores the prepared `user` within `tx` with its audit entry and events (and, with `invite`,
/// the invitation, whose mail the caller sends after committing). Shared by the management API
/// and SCIM provisioning, so both follow one rule set.
#[allow(clippy::too_many_arguments)] // the request's facts, each distinct
pub(crate) async fn insert_in(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    tenant: &Tenant,
    issuer: &str,
    actor: &Actor,
    meta: &RequestMeta,
    user: &User,
    invite: bool,
) -> Result<Option<PendingMail>, ManageError> {
    if tx.tenant_by_id(&tenant.id).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    match tx.insert_user(user).await {
        Ok(()) => {}
        Err(StoreError::Conflict { .. }) => return Err(ManageError::Conflict(EMAIL_TAKEN.into())),
        Err(e) => return Err(e.into()),
    }
    let invitation = if invite {
        let mail = ctx
            .sign_in()?
            .invitations
            .prepare(tx, issuer, user, &tenant.display_name)
            .await?;
        Some(mail)
    } else {
        None
    };
    let verb = if invite {
        action::TENANT_USER_INVITED
    } else {
        action::TENANT_USER_CREATED
    };
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(&tenant.id),
        verb,
        Some(user.id.as_str()),
    );
    audit::record(tx, &entry).await?;
    events::user_changed(tx, ctx, actor, user, EventType::AdminUserCreated).await?;
    let lifecycle = match user.status {
        UserStatus::Invited => EventType::TenantUserInvited,
        UserStatus::PreProvisioned => EventType::TenantUserPreProvisioned,
        _ => EventType::TenantUserActivated,
    };
    events::user_changed(tx, ctx, actor, user, lifecycle).await?;
    Ok(invitation)
}
