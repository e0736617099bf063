//! Lists a tenant's applications, a page at a time.

use crate::page::split_page;
use crate::{ManageContext, ManageError, clamp_limit};
use svc_domain::{Application, ClientId, TenantId};

/// Up to `limit` (default 50, clamped to 1..=200) applications of `tenant` ordered by id,
/// after the cursor `after`, and the cursor of the next page (`None` on the last).
pub async fn list(
    ctx: &ManageContext,
    tenant: &TenantId,
    after: Option<&ClientId>,
    limit: Option<u32>,
) -> Result<(Vec<Application>, Option<ClientId>), ManageError> {
    let limit = clamp_limit(limit);
    let mut tx = ctx.store.read().await?;
    let rows = tx.list_applications(tenant, after, limit + 1).await?;
    tx.finish().await?;
    Ok(split_page(rows, limit, |app| app.id.clone()))
}
