//! Each tenant's policy for the keys its people create for themselves (issue 19 item 5, "for
//! people … when a tenant allows"): read and set through the management API
//! (`/api/v1/api-key-policy`, scope `applications:read` / `applications:write`, like keys
//! themselves), checked by every self-service creation ([`super::own`]).
//!
//! Two locks, both needed: the deployment must allow keys acting as a person at all
//! (`[api_keys].subject_keys`), and the tenant must turn self-service on and name the APIs.
//! Turning it on where the deployment does not allow it is refused rather than stored, so a
//! policy never says something the service does not do.

use super::ApiKeys;
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use serde::{Deserialize, Serialize};
use svc_domain::{ApiKeyPolicy, ApiResource, MAX_KEYS_PER_PERSON, MAX_PERSON_KEY_DAYS, TenantId};
use svc_store::{AccessReads, WriteTx};
use utoipa::ToSchema;

/// Most APIs a policy names.
const MAX_POLICY_RESOURCES: usize = 20;

/// The policy as the management API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({"self_service": true,
    "resources": ["https://api.example.com/bookings"], "max_per_person": 5,
    "max_lifetime_days": 90, "agents": false}))]
pub struct ApiKeyPolicyView {
    /// Whether the tenant's people may create keys for themselves on the account page
    /// (`/auth/account/api-keys`). `false` until turned on.
    pub self_service: bool,
    /// The identifiers of the APIs they may create keys for (APIs deleted since are left out).
    pub resources: Vec<String>,
    /// Most live keys one person holds at once.
    pub max_per_person: u32,
    /// Longest lifetime of one of their keys, in days; a person's key always expires.
    pub max_lifetime_days: u32,
    /// Whether people may also create keys for the active agents they own.
    pub agents: bool,
}

/// What a caller sends to set the policy. Unknown fields are refused.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"self_service": true,
    "resources": ["https://api.example.com/bookings"], "max_per_person": 5,
    "max_lifetime_days": 90}))]
pub struct ApiKeyPolicyInput {
    /// Let people create keys for themselves. Only where the deployment allows keys acting as
    /// a person (`[api_keys].subject_keys`); needs at least one API in `resources`.
    pub self_service: bool,
    /// The identifiers of the tenant's APIs people may create keys for (at most 20, each an
    /// API resource of this tenant); replaces the current list. Default: none.
    #[serde(default)]
    pub resources: Vec<String>,
    /// Most live keys one person holds at once: 1 to 20; default 5.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 20)]
    pub max_per_person: Option<u32>,
    /// Longest lifetime of one of their keys in days: 1 to 365, and within the deployment's
    /// `[api_keys].max_lifetime` when it sets one; default 90 (or that maximum if shorter).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 365)]
    pub max_lifetime_days: Option<u32>,
    /// Let people also create keys for the active agents they own (an agent registered with
    /// them as `owner`), each at an API among the agent's `allowed_resources` with permissions
    /// within its `allowed_scopes`; only with `self_service`. Default: false.
    #[serde(default)]
    pub agents: bool,
}

/// The deployment's longest key lifetime in whole days, when it sets one.
pub(crate) fn deployment_days(keys: &ApiKeys) -> Option<u32> {
    keys.settings
        .max_lifetime
        .map(|d| u32::try_from(d.as_secs() / 86_400).unwrap_or(u32::MAX))
}

/// The APIs `policy` names that still exist, in its order.
pub(crate) async fn policy_apis<T: AccessReads + Send + ?Sized>(
    tx: &mut T,
    tenant: &TenantId,
    policy: &ApiKeyPolicy,
) -> Result<Vec<ApiResource>, ManageError> {
    let mut apis = Vec::with_capacity(policy.resources.len());
    for id in &policy.resources {
        if let Some(api) = tx.api_resource(tenant, id).await? {
            apis.push(api);
        }
    }
    Ok(apis)
}

fn view(policy: &ApiKeyPolicy, apis: &[ApiResource]) -> ApiKeyPolicyView {
    ApiKeyPolicyView {
        self_service: policy.self_service,
        resources: apis.iter().map(|a| a.identifier.clone()).collect(),
        max_per_person: policy.max_per_person,
        max_lifetime_days: policy.max_lifetime_days,
        agents: policy.agent_keys,
    }
}

/// The policy of `tenant` for its people's own keys.
///
/// Errors: [`ManageError::NotFound`] when the tenant does not exist.
pub async fn get_policy(
    ctx: &ManageContext,
    tenant: &TenantId,
) -> Result<ApiKeyPolicyView, ManageError> {
    let mut tx = ctx.store.read().await?;
    if tx.tenant_by_id(tenant).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let policy = tx.api_key_policy(tenant).await?;
    let apis = policy_apis(tx.as_mut(), tenant, &policy).await?;
    tx.finish().await?;
    Ok(view(&policy, &apis))
}

/// The checked numbers of `input`: defaults filled in, each within its bounds.
fn limits(keys: &ApiKeys, input: &ApiKeyPolicyInput) -> Result<(u32, u32), ManageError> {
    let defaults = ApiKeyPolicy::default();
    let per_person = input.max_per_person.unwrap_or(defaults.max_per_person);
    if !(1..=MAX_KEYS_PER_PERSON).contains(&per_person) {
        return Err(ManageError::invalid(
            "max_per_person",
            format!("must be 1 to {MAX_KEYS_PER_PERSON}"),
        ));
    }
    let ceiling = deployment_days(keys).map_or(MAX_PERSON_KEY_DAYS, |d| d.min(MAX_PERSON_KEY_DAYS));
    if ceiling == 0 {
        return Err(ManageError::invalid(
            "self_service",
            "the deployment's [api_keys].max_lifetime is shorter than a day: \
             people's keys cannot be offered",
        ));
    }
    let days = match input.max_lifetime_days {
        Some(days) => days,
        None => defaults.max_lifetime_days.min(ceiling),
    };
    if !(1..=ceiling).contains(&days) {
        return Err(ManageError::invalid(
            "max_lifetime_days",
            format!("must be 1 to {ceiling} (days)"),
        ));
    }
    Ok((per_person, days))
}

/// The APIs `input` names, each an API resource of `tenant`, distinct.
async fn named_apis(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    input: &ApiKeyPolicyInput,
) -> Result<Vec<ApiResource>, ManageError> {
    if input.resources.len() > MAX_POLICY_RESOURCES {
        return Err(ManageError::invalid(
            "resources",
            format!("must name at most {MAX_POLICY_RESOURCES} APIs"),
        ));
    }
    let mut apis: Vec<ApiResource> = Vec::with_capacity(input.resources.len());
    for identifier in &input.resources {
        let api = tx
            .api_resource_by_identifier(tenant, identifier)
            .await?
            .ok_or_else(|| {
                ManageError::invalid(
                    "resources",
                    format!("`{identifier}` is not an API resource of this tenant"),
                )
            })?;
        if apis.iter().any(|a| a.id == api.id) {
            return Err(ManageError::invalid(
                "resources",
                format!("`{identifier}` is listed twice"),
            ));
        }
        apis.push(api);
    }
    Ok(apis)
}

/// Sets the policy of `tenant` for its people's own keys, audited as `api_key_policy.set`.
/// Turning self-service off leaves existing keys working (revoke them through
/// `/api/v1/api-keys`); it only stops new ones.
///
/// Errors: [`ManageError::Invalid`] naming `self_service` (the deployment does not allow keys
/// acting as a person, or no API is named), `resources`, `max_per_person` or
/// `max_lifetime_days`; [`ManageError::NotFound`] when the tenant does not exist. Nothing is
/// written on error.
pub async fn set_policy(
    ctx: &ManageContext,
    keys: &ApiKeys,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    input: ApiKeyPolicyInput,
) -> Result<ApiKeyPolicyView, ManageError> {
    if input.self_service && !keys.settings.subject_keys {
        return Err(ManageError::invalid(
            "self_service",
            "this deployment does not allow keys acting as a person ([api_keys].subject_keys \
             is off)",
        ));
    }
    if input.agents && !input.self_service {
        return Err(ManageError::invalid(
            "agents",
            "needs self_service: people make their agents' keys on the same page",
        ));
    }
    if input.self_service && input.resources.is_empty() {
        return Err(ManageError::invalid(
            "resources",
            "must name at least one API when self_service is on",
        ));
    }
    let (max_per_person, max_lifetime_days) = limits(keys, &input)?;
    let mut tx = ctx.store.write().await?;
    if tx.tenant_by_id(tenant).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let apis = named_apis(tx.as_mut(), tenant, &input).await?;
    let policy = ApiKeyPolicy {
        self_service: input.self_service,
        resources: apis.iter().map(|a| a.id.clone()).collect(),
        max_per_person,
        max_lifetime_days,
        agent_keys: input.agents,
    };
    tx.set_api_key_policy(tenant, &policy, ctx.now()).await?;
    let target = format!(
        "self_service={} agents={} resources={} max_per_person={max_per_person} \
         max_lifetime_days={max_lifetime_days}",
        policy.self_service,
        policy.agent_keys,
        apis.iter()
            .map(|a| a.identifier.as_str())
            .collect::<Vec<_>>()
            .join(",")
    );
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::API_KEY_POLICY_SET,
        Some(&target),
    );
    audit::record(tx.as_mut(), &entry).await?;
    tx.commit().await?;
    Ok(view(&policy, &apis))
}
