//! A tenant's users (the people who sign in on its hosted pages): create (with a password, by
//! invitation, or pre-provisioned), list, read, change, suspend, reactivate, remove, and their
//! live sessions, login history, second factors (read, reset) and tenant roles (read, replace).
//! Every use case is scoped by the tenant, so another tenant's user reads as absent, and every
//! write appends its audit entry in the same transaction.
//!
//! Status changes follow [`svc_domain::UserStatus::can_become`]; anything else is a
//! [`ManageError::Conflict`].
//!
//! Every change (update, suspend, reactivate, remove) takes a [`Precondition`] (`If-Match`),
//! checked against the user as read in the write transaction, and writes only at the revision it
//! read ([`svc_store::UserWrites::update_user_if_unchanged`]); a user that changed in between is
//! [`ManageError::PreconditionFailed`], never a lost update. Each change moves `updated_at`
//! forward, by at least a microsecond, so every change is a new revision. Entering `suspended` or `removed` revokes the user's sessions and
//! refresh-token families in the same transaction as the status change. Passwords are checked
//! and hashed, and invitations issued, through the context's [`crate::SignInServices`]: the
//! same rules, hasher and links as the sign-in engine, without depending on it.

mod create;
mod factors;
mod history;
mod input;
mod list;
mod read;
mod remove;
pub(crate) mod roles;
mod sessions;
mod status;
mod update;
mod view;

pub use create::create;
pub use factors::{SecondFactorView, SecondFactorsView, reset_second_factors, second_factors};
pub use history::{LoginRecordView, login_history};
pub use input::{MAX_NAME_CHARS, NewUser, UserPatch};
pub use list::list;
pub use read::get;
pub use remove::remove;
pub use roles::{MAX_TENANT_ROLES, RolesInput, RolesView, TenantRoleSchema, roles, set_roles};
pub use sessions::{list_sessions, revoke_session};
pub use status::{reactivate, suspend};
pub use update::update;
pub use view::{SessionView, UserStatusSchema, UserView};

// The in-transaction halves of the use cases, for SCIM provisioning (one rule set).
pub(crate) use create::{EMAIL_TAKEN, insert_in as create_in, prepare as prepare_new};
pub(crate) use input::{check_email, check_name};
pub(crate) use remove::remove_in;
pub(crate) use status::{reactivate_in, suspend_in};
pub(crate) use update::{UserChange, apply_in as update_in};

use crate::{ManageError, Precondition};
use svc_domain::{TenantId, User, UserId, UserStatus, UserTokenPurpose};
use svc_store::{StoreError, UpdateOutcome, WriteTx};
use time::{Duration, OffsetDateTime};

/// The user `id` of `tenant`, or [`ManageError::NotFound`], if it satisfies `precondition`
/// ([`ManageError::PreconditionFailed`] otherwise).
async fn load(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    id: &UserId,
    precondition: &Precondition,
) -> Result<User, ManageError> {
    let user = tx.user(tenant, id).await?.ok_or(ManageError::NotFound)?;
    precondition.check(user.updated_at)?;
    Ok(user)
}

/// The `updated_at` of a change made at `now` to a user read at revision `read`: `now`, or one
/// microsecond (what PostgreSQL keeps) after `read` when the clock has not moved past it, so
/// the revision always changes.
fn next_revision(read: OffsetDateTime, now: OffsetDateTime) -> OffsetDateTime {
    if now > read {
        now
    } else {
        read + Duration::microseconds(1)
    }
}

/// Writes `user` over the revision `read`: [`ManageError::PreconditionFailed`] when it changed
/// since, [`ManageError::Conflict`] when its address is taken.
async fn save(tx: &mut dyn WriteTx, user: &User, read: OffsetDateTime) -> Result<(), ManageError> {
    match tx.update_user_if_unchanged(user, read).await {
        Ok(UpdateOutcome::Applied) => Ok(()),
        Ok(UpdateOutcome::Stale) => Err(ManageError::PreconditionFailed),
        Err(StoreError::Conflict { .. }) => Err(ManageError::Conflict(create::EMAIL_TAKEN.into())),
        Err(e) => Err(e.into()),
    }
}

/// Rule: a status change must be one [`UserStatus::can_become`] allows.
fn check_transition(user: &User, to: UserStatus) -> Result<(), ManageError> {
    if user.status.can_become(to) {
        Ok(())
    } else {
        Err(ManageError::Conflict(format!(
            "a {} user cannot become {}",
            user.status.as_str(),
            to.as_str()
        )))
    }
}

/// Ends everything the user's past sign-ins granted: sessions and refresh-token families
/// (`reason` is recorded on the families).
async fn end_access(
    tx: &mut dyn WriteTx,
    user: &User,
    now: OffsetDateTime,
    reason: &str,
) -> Result<(), ManageError> {
    tx.revoke_user_sessions(&user.tenant_id, &user.id, now)
        .await?;
    tx.revoke_user_refresh_families(&user.tenant_id, &user.id, now, reason)
        .await?;
    Ok(())
}

/// Makes every outstanding mailed link of the user stop working.
async fn invalidate_links(
    tx: &mut dyn WriteTx,
    user: &User,
    purposes: &[UserTokenPurpose],
    now: OffsetDateTime,
) -> Result<(), ManageError> {
    for purpose in purposes {
        tx.invalidate_user_tokens(&user.tenant_id, &user.id, *purpose, now)
            .await?;
    }
    Ok(())
}

/// Every purpose of a mailed link.
const ALL_LINKS: [UserTokenPurpose; 3] = [
    UserTokenPurpose::VerifyEmail,
    UserTokenPurpose::ResetPassword,
    UserTokenPurpose::Invitation,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_always_moves_the_revision_forward() {
        let read = OffsetDateTime::UNIX_EPOCH + Duration::days(20_000);
        let later = read + Duration::milliseconds(3);
        assert_eq!(next_revision(read, later), later);
        assert_eq!(next_revision(read, read), read + Duration::microseconds(1));
        let earlier = read - Duration::seconds(1);
        assert_eq!(
            next_revision(read, earlier),
            read + Duration::microseconds(1),
            "a clock stepped back still moves the revision"
        );
    }
}
