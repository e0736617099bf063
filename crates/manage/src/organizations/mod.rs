//! A tenant's organizations (the customer companies of a B2B tenant) and their members: create,
//! list, read, change, suspend, reactivate and delete an organization; add, list, read, re-role
//! and remove its members; list the organizations a person belongs to. Every use case is scoped
//! by the tenant, so another tenant's organization or person reads as absent, and every write
//! appends its audit entry and its outbox event (`org.*`) in the same transaction.
//!
//! Every change of an organization (update, suspend, reactivate, delete) takes a
//! [`Precondition`] (`If-Match`), checked against the organization as read in the write
//! transaction, and writes only at the revision it read
//! ([`svc_store::OrganizationWrites::update_organization_if_unchanged`]); an organization that
//! changed in between is [`ManageError::PreconditionFailed`], never a lost update. Each change
//! moves `updated_at` forward by at least a microsecond, so every change is a new revision.
//!
//! Membership rules: a member is a user of the same tenant that is not removed (any other id,
//! another tenant's user included, is refused with the same answer, so nothing leaks across
//! tenants); a membership holds 1 to 16 organization roles: the built-in `owner`, `admin` and
//! `member` (default `member`) and the tenant's custom roles of kind `organization`, read in the
//! write transaction of the change; a person belongs to at most [`MAX_MEMBERSHIPS_PER_USER`]
//! organizations. Deleting an organization deletes its memberships with it.

mod create;
mod delete;
pub(crate) mod input;
mod list;
mod members;
pub(crate) use members::{insert_membership_in, remove_membership_in};
mod read;
mod status;
mod update;
mod view;

pub use create::create;
pub use delete::delete;
pub use input::{
    MAX_MEMBER_ROLES, MAX_METADATA_BYTES, MAX_METADATA_DEPTH, MAX_ORG_NAME_CHARS, MemberPatch,
    NewMember, NewOrganization, OrganizationPatch,
};
pub use list::list;
pub use members::{
    MAX_MEMBERSHIPS_PER_USER, add_member, change_member_roles, get_member, list_members,
    memberships_of_user, remove_member,
};
pub use read::get;
pub use status::{reactivate, suspend};
pub use update::update;
pub use view::{
    MembershipView, OrgRoleSchema, OrgStatusSchema, OrganizationSummary, OrganizationView,
    UserMembershipView,
};

use crate::{ManageError, Precondition};
use svc_domain::{Organization, OrganizationId, TenantId};
use svc_store::{StoreError, UpdateOutcome, WriteTx};
use time::{Duration, OffsetDateTime};

/// The text of a taken slug, shared by create and update.
const SLUG_TAKEN: &str = "an organization with this slug already exists in this tenant";
/// The unique key the store names when a slug is taken.
const SLUG_KEY: &str = "organizations_tenant_slug_key";

/// The organization `id` of `tenant`, or [`ManageError::NotFound`], if it satisfies
/// `precondition` ([`ManageError::PreconditionFailed`] otherwise).
async fn load(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    id: &OrganizationId,
    precondition: &Precondition,
) -> Result<Organization, ManageError> {
    let org = tx
        .organization(tenant, id)
        .await?
        .ok_or(ManageError::NotFound)?;
    precondition.check(org.updated_at)?;
    Ok(org)
}

/// The `updated_at` of a change made at `now` to an organization read at revision `read`: `now`,
/// or one microsecond (what PostgreSQL keeps) after `read` when the clock has not moved past it.
fn next_revision(read: OffsetDateTime, now: OffsetDateTime) -> OffsetDateTime {
    if now > read {
        now
    } else {
        read + Duration::microseconds(1)
    }
}

/// Writes `org` over the revision `read`: [`ManageError::PreconditionFailed`] when it changed
/// since, [`ManageError::NotFound`] when it is gone, [`ManageError::Conflict`] when its slug is
/// taken.
async fn save(
    tx: &mut dyn WriteTx,
    org: &Organization,
    read: OffsetDateTime,
) -> Result<(), ManageError> {
    match tx.update_organization_if_unchanged(org, read).await {
        Ok(UpdateOutcome::Applied) => Ok(()),
        Ok(UpdateOutcome::Stale) => Err(ManageError::PreconditionFailed),
        Err(StoreError::Conflict { .. }) => Err(ManageError::Conflict(SLUG_TAKEN.into())),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_always_moves_the_revision_forward() {
        let read = OffsetDateTime::UNIX_EPOCH + Duration::days(20_000);
        let later = read + Duration::milliseconds(3);
        assert_eq!(next_revision(read, later), later);
        assert_eq!(next_revision(read, read), read + Duration::microseconds(1));
        assert_eq!(
            next_revision(read, read - Duration::seconds(1)),
            read + Duration::microseconds(1)
        );
    }
}
