//! Changes a policy, PATCH-style: only the fields present change; `targets` and `rules` each
//! replace the whole object.

use super::input::{PolicyPatch, check_description, check_name, check_rules, check_targets};
use super::{load, record_change, save};
use crate::revision::next_update_time;
use crate::{Actor, ManageContext, ManageError, Precondition, RequestMeta};
use svc_domain::{AccessPolicy, EventType, PolicyId, TenantId};

/// Applies `patch` to the policy `id` of `tenant`, audited as `policy.updated`, with the event
/// `admin.policy.updated`. The next sign-in and the next refresh of every grant it governs see
/// the change. A patch that changes nothing writes nothing.
///
/// Errors: [`ManageError::Invalid`] naming the field; [`ManageError::NotFound`];
/// [`ManageError::Conflict`] when the new name is taken; [`ManageError::PreconditionFailed`]
/// when `precondition` does not hold or the policy changed meanwhile.
#[allow(clippy::too_many_arguments)] // the request's facts, each distinct
pub async fn update(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &PolicyId,
    patch: PolicyPatch,
    precondition: &Precondition,
) -> Result<AccessPolicy, ManageError> {
    let name = patch.name.as_deref().map(check_name).transpose()?;
    let description = patch
        .description
        .as_deref()
        .map(check_description)
        .transpose()?;
    let rules = patch.rules.as_ref().map(check_rules).transpose()?;

    let mut tx = ctx.store.write().await?;
    let before = load(tx.as_mut(), tenant, id, precondition).await?;
    let targets = match &patch.targets {
        None => None,
        Some(raw) => Some(check_targets(tx.as_mut(), tenant, Some(raw)).await?),
    };
    let mut policy = before.clone();
    if let Some(name) = name {
        policy.name = name;
    }
    if let Some(description) = description {
        policy.description = description;
    }
    if let Some(enabled) = patch.enabled {
        policy.enabled = enabled;
    }
    if let Some(targets) = targets {
        policy.targets = targets;
    }
    if let Some(rules) = rules {
        policy.rules = rules;
    }
    if policy == before {
        return Ok(before);
    }
    policy.updated_at = next_update_time(before.updated_at, ctx.now());
    save(tx.as_mut(), &policy, before.updated_at).await?;
    record_change(
        tx.as_mut(),
        ctx,
        actor,
        meta,
        &policy,
        EventType::AdminPolicyUpdated,
    )
    .await?;
    tx.commit().await?;
    Ok(policy)
}
