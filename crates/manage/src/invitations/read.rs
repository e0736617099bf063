//! Reads one invitation, or a page of them.

use super::view::InvitationView;
use crate::page::split_page;
use crate::{ManageContext, ManageError, clamp_limit};
use svc_domain::{InvitationId, InvitationState, OrganizationId, TenantId};
use svc_store::{InvitationFilter, Order};

/// The invitation `id` of `tenant`, as it stands now.
///
/// Errors: [`ManageError::NotFound`] when absent (another tenant's included).
pub async fn get(
    ctx: &ManageContext,
    tenant: &TenantId,
    id: &InvitationId,
) -> Result<InvitationView, ManageError> {
    let mut tx = ctx.store.read().await?;
    let invitation = tx.invitation(tenant, id).await?;
    tx.finish().await?;
    let invitation = invitation.ok_or(ManageError::NotFound)?;
    Ok(InvitationView::new(&invitation, ctx.now()))
}

/// Up to `limit` (default 50, clamped to 1..=200) invitations of `tenant`, only those to join
/// `organization` and in `state` when given, in creation `order` (default oldest first), past
/// the cursor `after`, and the cursor of the next page (`None` on the last).
pub async fn list(
    ctx: &ManageContext,
    tenant: &TenantId,
    (organization, state): (Option<OrganizationId>, Option<InvitationState>),
    after: Option<&InvitationId>,
    order: Option<Order>,
    limit: Option<u32>,
) -> Result<(Vec<InvitationView>, Option<InvitationId>), ManageError> {
    let limit = clamp_limit(limit);
    let now = ctx.now();
    let filter = InvitationFilter {
        organization_id: organization,
        state,
        now: Some(now),
    };
    let mut tx = ctx.store.read().await?;
    let rows = tx
        .list_invitations(
            tenant,
            &filter,
            after,
            order.unwrap_or(Order::Ascending),
            limit + 1,
        )
        .await?;
    tx.finish().await?;
    let (rows, next) = split_page(rows, limit, |i| i.id.clone());
    Ok((
        rows.iter().map(|i| InvitationView::new(i, now)).collect(),
        next,
    ))
}
