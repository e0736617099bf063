//! The members of an organization: add, list, read, change the roles of, remove; and every
//! membership of one person. See the parent module for the rules.

mod add;
mod list;
mod of_user;
mod read;
mod remove;
mod roles;

pub use add::add_member;
pub(crate) use add::insert_in as insert_membership_in;
pub use list::list_members;
pub use of_user::memberships_of_user;
pub use read::get_member;
pub(crate) use remove::remove_in as remove_membership_in;
pub use remove::remove_member;
pub use roles::change_member_roles;

/// The most organizations one person may belong to (defined in the domain, where auto-join
/// reads it too).
pub use svc_domain::MAX_MEMBERSHIPS_PER_USER;

use crate::audit;
use crate::audit::action::{
    ORGANIZATION_MEMBER_ADDED as ADDED, ORGANIZATION_MEMBER_REMOVED as REMOVED,
    ORGANIZATION_MEMBER_ROLES_CHANGED as ROLES_CHANGED,
};
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use svc_domain::{Membership, OrganizationId, TenantId, UserId};
use svc_store::WriteTx;

/// The membership of `user` in the organization `org` of `tenant`, or
/// [`ManageError::NotFound`] (also when the organization is absent).
async fn load(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    org: &OrganizationId,
    user: &UserId,
) -> Result<Membership, ManageError> {
    tx.membership(tenant, org, user)
        .await?
        .ok_or(ManageError::NotFound)
}

/// Appends the audit entry of a membership change: the target is the organization (so its
/// history lists its membership changes too); the event names the person.
async fn record_audit(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    membership: &Membership,
    verb: &str,
) -> Result<(), ManageError> {
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(&membership.tenant_id),
        verb,
        Some(membership.organization_id.as_str()),
    );
    audit::record(tx, &entry).await
}
