//! Lists the members of an organization, a page at a time.

use crate::page::split_page;
use crate::{ManageContext, ManageError, clamp_limit};
use svc_domain::{Membership, OrganizationId, TenantId, UserId};

/// Up to `limit` (default 50, clamped to 1..=200) memberships of the organization `org` of
/// `tenant`, in user-id order past the cursor `after`, and the cursor of the next page (`None`
/// on the last).
///
/// Errors: [`ManageError::NotFound`] when the organization is absent.
pub async fn list_members(
    ctx: &ManageContext,
    tenant: &TenantId,
    org: &OrganizationId,
    after: Option<&UserId>,
    limit: Option<u32>,
) -> Result<(Vec<Membership>, Option<UserId>), ManageError> {
    let limit = clamp_limit(limit);
    let mut tx = ctx.store.read().await?;
    if tx.organization(tenant, org).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let rows = tx.list_members(tenant, org, after, limit + 1).await?;
    tx.finish().await?;
    Ok(split_page(rows, limit, |m| m.user_id.clone()))
}
