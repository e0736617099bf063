//! A tenant user's live browser sessions, and revoking one of them (e.g. a lost device).

use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta, events};
use svc_domain::{EventData, EventType, LogoutReason, Session, SessionId, TenantId, UserId};

/// The live sessions of the user `id` of `tenant`, newest first.
///
/// Errors: [`ManageError::NotFound`] when the user is absent.
pub async fn list_sessions(
    ctx: &ManageContext,
    tenant: &TenantId,
    id: &UserId,
) -> Result<Vec<Session>, ManageError> {
    let mut tx = ctx.store.read().await?;
    if tx.user(tenant, id).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let sessions = tx.live_sessions(tenant, id, ctx.now()).await?;
    tx.finish().await?;
    Ok(sessions)
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
