//! A tenant user's live browser sessions, a page at a time, and revoking one of them (e.g. a
//! lost device).

use crate::audit::{self, action};
use crate::page::split_page;
use crate::{Actor, ManageContext, ManageError, RequestMeta, clamp_limit, events};
use svc_domain::{EventData, EventType, LogoutReason, Session, SessionId, TenantId, UserId};
use svc_store::Order;

/// Up to `limit` (default 50, clamped to 1..=200) live sessions of the user `id` of `tenant`,
/// in creation `order` (by id, which grows with creation time; default newest first), past the
/// cursor `after`, and the cursor of the next page (`None` on the last). A cursor whose session
/// has ended since still works: the page starts at the next session in that order.
///
/// Errors: [`ManageError::NotFound`] when the user is absent.
pub async fn list_sessions(
    ctx: &ManageContext,
    tenant: &TenantId,
    id: &UserId,
    after: Option<&SessionId>,
    order: Option<Order>,
    limit: Option<u32>,
) -> Result<(Vec<Session>, Option<SessionId>), ManageError> {
    let limit = clamp_limit(limit);
    let mut tx = ctx.store.read().await?;
    if tx.user(tenant, id).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let mut sessions = tx.live_sessions(tenant, id, ctx.now()).await?;
    tx.finish().await?;
    // A person has a handful of live sessions: ordered and cut here rather than in SQL.
    let order = order.unwrap_or(Order::Descending);
    match order {
        Order::Ascending => sessions.sort_by(|a, b| a.id.cmp(&b.id)),
        Order::Descending => sessions.sort_by(|a, b| b.id.cmp(&a.id)),
    }
    if let Some(after) = after {
        sessions.retain(|s| match order {
            Order::Ascending => s.id > *after,
            Order::Descending => s.id < *after,
        });
    }
    let rows = usize::try_from(limit).map_or(usize::MAX, |n| n.saturating_add(1));
    sessions.truncate(rows);
    Ok(split_page(sessions, limit, |s| s.id.clone()))
}

/// Revokes the live session `session` of the user `id` of `tenant`, audited as
/// `tenant_user.session_revoked` (target: the user).
///
/// Errors: [`ManageError::NotFound`] when the user is absent, or the session is not a live
/// session of that user.
pub async fn revoke_session(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &UserId,
    session: &SessionId,
) -> Result<(), ManageError> {
    let now = ctx.now();
    let mut tx = ctx.store.write().await?;
    if tx.user(tenant, id).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let owned = tx
        .session(tenant, session)
        .await?
        .is_some_and(|s| s.user_id == *id && s.is_live(now));
    if !owned || !tx.revoke_session(tenant, session, now).await? {
        return Err(ManageError::NotFound);
    }
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::TENANT_USER_SESSION_REVOKED,
        Some(id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    events::record(
        tx.as_mut(),
        ctx,
        tenant,
        EventType::Logout,
        EventData::LoggedOut {
            user_id: id.clone(),
            session_id: session.clone(),
            reason: LogoutReason::RevokedByAdmin,
        },
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
