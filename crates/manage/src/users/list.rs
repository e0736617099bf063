//! Lists a tenant's users, a page at a time, optionally narrowed by status or address.

use crate::page::split_page;
use crate::{ManageContext, ManageError, clamp_limit};
use svc_domain::{TenantId, User, UserId};
use svc_store::{Order, UserFilter};

/// Up to `limit` (default 50, clamped to 1..=200) users of `tenant` matching `filter`, in
/// creation `order` (default oldest first), past the cursor `after`, and the cursor of the next
/// page (`None` on the last).
pub async fn list(
    ctx: &ManageContext,
    tenant: &TenantId,
    filter: &UserFilter,
    after: Option<&UserId>,
    order: Option<Order>,
    limit: Option<u32>,
) -> Result<(Vec<User>, Option<UserId>), ManageError> {
    let limit = clamp_limit(limit);
    let mut tx = ctx.store.read().await?;
    let rows = tx
        .list_users(
            tenant,
            filter,
            after,
            order.unwrap_or(Order::Ascending),
            limit + 1,
        )
        .await?;
    tx.finish().await?;
    Ok(split_page(rows, limit, |user| user.id.clone()))
}
