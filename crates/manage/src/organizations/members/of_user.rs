//! Every organization a person belongs to.

use crate::{ManageContext, ManageError};
use svc_domain::{Membership, Organization, TenantId, UserId};

/// Every membership of the user `user` of `tenant` (any status), in organization-id order, each
/// with its organization. A person belongs to at most
/// [`MAX_MEMBERSHIPS_PER_USER`](super::MAX_MEMBERSHIPS_PER_USER) organizations, so this is one
/// bounded answer rather than a paged list.
///
/// Errors: [`ManageError::NotFound`] when the user is absent (another tenant's included).
pub async fn memberships_of_user(
    ctx: &ManageContext,
    tenant: &TenantId,
    user: &UserId,
) -> Result<Vec<(Membership, Organization)>, ManageError> {
    let mut tx = ctx.store.read().await?;
    if tx.user(tenant, user).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let memberships = tx.memberships_of_user(tenant, user).await?;
    let mut out = Vec::with_capacity(memberships.len());
    for membership in memberships {
        // Read in the same transaction as the membership, so its organization is there.
        if let Some(org) = tx.organization(tenant, &membership.organization_id).await? {
            out.push((membership, org));
        }
    }
    tx.finish().await?;
    Ok(out)
}
