//! Lists a tenant's applications, a page at a time.

use crate::page::split_page;
use crate::{ManageContext, ManageError, clamp_limit};
use svc_domain::{Application, ClientId, TenantId};
use svc_store::Order;

/// Up to `limit` (default 50, clamped to 1..=200) applications of `tenant` in creation
/// `order` (default oldest first), past the cursor `after`, and the cursor of the next page
/// (`None` on the last).
pub async fn list(
    ctx: &ManageContext,
    tenant: &TenantId,
    after: Option<&ClientId>,
    order: Option<Order>,
    limit: Option<u32>,
) -> Result<(Vec<Application>, Option<ClientId>), ManageError> {
    let limit = clamp_limit(limit);
    let mut tx = ctx.store.read().await?;
    let rows = tx
        .list_applications(tenant, after, order.unwrap_or(Order::Ascending), limit + 1)
        .await?;
    tx.finish().await?;
    Ok(split_page(rows, limit, |app| app.id.clone()))
}
