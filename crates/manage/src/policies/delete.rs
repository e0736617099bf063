//! Deletes a policy. Its audit entries and events stay.

use super::{load, record_change, save};
use crate::revision::next_update_time;
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta};
use svc_domain::{AccessPolicy, EventType, PolicyId, TenantId};

/// Deletes the policy `id` of `tenant`, audited as `policy.deleted`, with the event
/// `admin.policy.deleted`. The policy is first moved to a new revision at the revision read (a
/// compare-and-set), so a change committed meanwhile fails the deletion rather than being
/// deleted unseen.
///
/// Errors: [`ManageError::NotFound`]; [`ManageError::PreconditionFailed`].
pub async fn delete(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &PolicyId,
    precondition: &Precondition,
) -> Result<AccessPolicy, ManageError> {
    let mut tx = ctx.store.write().await?;
    let mut policy = load(tx.as_mut(), tenant, id, precondition).await?;
    let read = policy.updated_at;
    policy.updated_at = next_update_time(read, ctx.now());
    save(tx.as_mut(), &policy, read).await?;
    if !tx.delete_access_policy(tenant, id).await? {
        return Err(ManageError::NotFound);
    }
    record_change(
        tx.as_mut(),
        ctx,
        actor,
        meta,
        &policy,
        EventType::AdminPolicyDeleted,
    )
    .await?;
    tx.commit().await?;
    Ok(policy)
}
