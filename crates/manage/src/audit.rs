//! The audit log: who did what to which record, from where. Every management write appends its
//! entry inside the same write transaction as the change, so the log never claims a change that
//! rolled back and never misses one that committed.

use crate::page::split_page;
use crate::{Actor, ManageContext, ManageError, RequestMeta, clamp_limit};
use svc_domain::{AuditEntry, AuditEntryId, AuditOutcome, TenantId};
use svc_store::{AuditFilter, WriteTx};

/// The audited actions, dotted `<record>.<past-tense verb>`.
pub mod action {
    /// A tenant (and its management application) was created.
    pub const TENANT_CREATED: &str = "tenant.created";
    /// A tenant's display name changed.
    pub const TENANT_UPDATED: &str = "tenant.updated";
    /// A tenant was suspended.
    pub const TENANT_SUSPENDED: &str = "tenant.suspended";
    /// A suspended tenant was reactivated.
    pub const TENANT_REACTIVATED: &str = "tenant.reactivated";
    /// A tenant and everything it owns were deleted (its audit entries stay).
    pub const TENANT_DELETED: &str = "tenant.deleted";
    /// An application was registered.
    pub const APPLICATION_CREATED: &str = "application.created";
    /// An application's configuration was replaced.
    pub const APPLICATION_UPDATED: &str = "application.updated";
    /// An application was deleted.
    pub const APPLICATION_DELETED: &str = "application.deleted";
    /// An application's client secret was replaced.
    pub const APPLICATION_SECRET_ROTATED: &str = "application.secret_rotated";
    /// A control-plane operator token was created.
    pub const OPERATOR_TOKEN_CREATED: &str = "operator_token.created";
    /// A tenant user was created (with a password, or pre-provisioned without one).
    pub const TENANT_USER_CREATED: &str = "tenant_user.created";
    /// A tenant user was created and sent an invitation.
    pub const TENANT_USER_INVITED: &str = "tenant_user.invited";
    /// A tenant user's address, names, verification flag or password changed.
    pub const TENANT_USER_UPDATED: &str = "tenant_user.updated";
    /// A tenant user was suspended (sessions and refresh tokens revoked).
    pub const TENANT_USER_SUSPENDED: &str = "tenant_user.suspended";
    /// A suspended tenant user was reactivated.
    pub const TENANT_USER_REACTIVATED: &str = "tenant_user.reactivated";
    /// A tenant user was removed (kept as a tombstone; address freed).
    pub const TENANT_USER_REMOVED: &str = "tenant_user.removed";
    /// One session of a tenant user was revoked by an administrator.
    pub const TENANT_USER_SESSION_REVOKED: &str = "tenant_user.session_revoked";
    /// A webhook subscription was created.
    pub const WEBHOOK_CREATED: &str = "webhook.created";
    /// A webhook subscription's URL, event types, description or active flag changed.
    pub const WEBHOOK_UPDATED: &str = "webhook.updated";
    /// A webhook subscription was deleted (with its delivery history).
    pub const WEBHOOK_DELETED: &str = "webhook.deleted";
    /// A webhook subscription's signing secret was replaced.
    pub const WEBHOOK_SECRET_ROTATED: &str = "webhook.secret_rotated";
    /// A test delivery was queued.
    pub const WEBHOOK_TEST_SENT: &str = "webhook.test_sent";
    /// A delivery was queued again by hand.
    pub const WEBHOOK_REDELIVERED: &str = "webhook.redelivered";
}

/// A successful action's entry, stamped with a fresh time-ordered id and the current time.
pub fn entry(
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    tenant: Option<&TenantId>,
    action: &str,
    target: Option<&str>,
) -> AuditEntry {
    AuditEntry {
        id: AuditEntryId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        tenant_id: tenant.cloned(),
        actor: actor.as_audit_string(),
        action: action.to_owned(),
        target: target.map(str::to_owned),
        request_id: meta.request_id.clone(),
        client_ip: meta.client_ip.clone(),
        outcome: AuditOutcome::Success,
        occurred_at: ctx.now(),
    }
}

/// Appends `entry` within `tx`: it commits or rolls back with the change it describes.
pub async fn record(tx: &mut dyn WriteTx, entry: &AuditEntry) -> Result<(), ManageError> {
    tx.insert_audit(entry).await?;
    Ok(())
}

/// Up to `limit` (default 50, clamped to 1..=200) entries of `tenant` matching `filter`, newest
/// first, older than the cursor `before`, and the cursor of the next page (`None` on the last).
pub async fn list_audit(
    ctx: &ManageContext,
    tenant: &TenantId,
    filter: &AuditFilter,
    before: Option<&AuditEntryId>,
    limit: Option<u32>,
) -> Result<(Vec<AuditEntry>, Option<AuditEntryId>), ManageError> {
    let limit = clamp_limit(limit);
    let mut tx = ctx.store.read().await?;
    let rows = tx.list_audit(tenant, filter, before, limit + 1).await?;
    tx.finish().await?;
    Ok(split_page(rows, limit, |e| e.id.clone()))
}
