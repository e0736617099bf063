//! Lists a tenant's API resources, a page at a time.

use crate::page::split_page;
use crate::{ManageContext, ManageError, clamp_limit};
use svc_domain::{ApiResource, ApiResourceId, TenantId};
use svc_store::Order;

/// Up to `limit` (default 50, clamped to 1..=200) API resources of `tenant`, each with its
/// permissions, in creation `order` (default oldest first), past the cursor `after`, and the
/// cursor of the next page (`None` on the last).
pub async fn list(
    ctx: &ManageContext,
    tenant: &TenantId,
    after: Option<&ApiResourceId>,
    order: Option<Order>,
    limit: Option<u32>,
) -> Result<(Vec<ApiResource>, Option<ApiResourceId>), ManageError> {
    let limit = clamp_limit(limit);
    let mut tx = ctx.store.read().await?;
    let rows = tx
        .list_api_resources(tenant, after, order.unwrap_or(Order::Ascending), limit + 1)
        .await?;
    tx.finish().await?;
    Ok(split_page(rows, limit, |resource| resource.id.clone()))
}
