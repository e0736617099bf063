//! Reads one membership.

use crate::{ManageContext, ManageError};
use svc_domain::{Membership, OrganizationId, TenantId, UserId};

/// The membership of `user` in the organization `org` of `tenant`.
///
/// Errors: [`ManageError::NotFound`] when the person is not a member, or the organization is
/// absent (another tenant's included).
pub async fn get_member(
    ctx: &ManageContext,
    tenant: &TenantId,
    org: &OrganizationId,
    user: &UserId,
) -> Result<Membership, ManageError> {
    let mut tx = ctx.store.read().await?;
    let membership = tx.membership(tenant, org, user).await?;
    tx.finish().await?;
    membership.ok_or(ManageError::NotFound)
}
