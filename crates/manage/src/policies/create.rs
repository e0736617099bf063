//! Creates a policy: its fields checked, its targets the tenant's own, within the tenant's cap.

use super::input::{NewPolicy, check_description, check_name, check_rules, check_targets};
use super::{NAME_KEY, name_taken, record_change};
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use svc_domain::{AccessPolicy, EventType, MAX_POLICIES_PER_TENANT, PolicyId, TenantId};
use svc_store::StoreError;

/// Creates the policy described by `input` in `tenant`, audited as `policy.created`, with the
/// event `admin.policy.created`.
///
/// Errors: [`ManageError::Invalid`] naming the field (`name`, `description`, `targets.*`,
/// `rules.*`, `rules` when it sets none); [`ManageError::Conflict`] when the name is taken or
/// the tenant already has [`MAX_POLICIES_PER_TENANT`] policies; [`ManageError::NotFound`] when
/// the tenant does not exist.
pub async fn create(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    input: NewPolicy,
) -> Result<AccessPolicy, ManageError> {
    let name = check_name(&input.name)?;
    let description = check_description(input.description.as_deref().unwrap_or_default())?;
    let rules = check_rules(&input.rules)?;
    let now = ctx.now();

    let mut tx = ctx.store.write().await?;
    if tx.tenant_by_id(tenant).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let targets = check_targets(tx.as_mut(), tenant, input.targets.as_ref()).await?;
    if tx.access_policies(tenant).await?.len() >= MAX_POLICIES_PER_TENANT {
        return Err(ManageError::Conflict(format!(
            "this tenant already has {MAX_POLICIES_PER_TENANT} policies, the most one tenant \
             may; delete or merge one first"
        )));
    }
    let policy = AccessPolicy {
        id: PolicyId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        tenant_id: tenant.clone(),
        name,
        description,
        enabled: input.enabled.unwrap_or(true),
        targets,
        rules,
        created_at: now,
        updated_at: now,
    };
    match tx.insert_access_policy(&policy).await {
        Ok(()) => {}
        Err(StoreError::Conflict { constraint }) if constraint == NAME_KEY => {
            return Err(name_taken());
        }
        Err(e) => return Err(e.into()),
    }
    record_change(
        tx.as_mut(),
        ctx,
        actor,
        meta,
        &policy,
        EventType::AdminPolicyCreated,
    )
    .await?;
    tx.commit().await?;
    Ok(policy)
}
