//! A person's own API keys (issue 19 item 5, "for people/agents when a tenant allows"): what
//! the account page offers them, their keys, and creating and revoking one — each a key acting
//! as that person at one API the tenant's policy names ([`super::policy`]), or, where the policy
//! allows (`agents`), as one of the active agents they own, at one of those APIs that is among
//! the agent's `allowed_resources`, within its `allowed_scopes`.
//!
//! Rules, beside the policy's:
//! - A person may only ask for permissions their roles grant them at that API now (a key that
//!   says more than they hold would only mislead); introspection narrows it again at every
//!   use, so a role taken away later takes the permission from the key too.
//! - A person's key always expires: within the policy's `max_lifetime_days` (and the
//!   deployment's `[api_keys].max_lifetime`).
//! - They hold at most `max_per_person` live keys (and so does each of their agents). People's
//!   own keys do not count against the
//!   tenant's `[api_keys].max_per_tenant` (the management keys' budget): people × the per-person
//!   cap bounds them.
//! - They see and revoke only their own keys and their agents'; anyone else's id (or an unknown
//!   one) changes nothing and says so the same way. An agent that is no longer theirs, or no
//!   longer active, gets no new key (introspection refuses its keys while it is not active).
//! - Created and revoked keys are audited (`api_key.created` / `api_key.revoked`, actor
//!   `user:usr_…`) and announced (`admin.api_key.created` / `admin.api_key.revoked`) like an
//!   administrator's, so a tenant's webhooks see every key.
//!
//! Rotation is not offered to people: revoke and create (the new key has a new secret either
//! way, and an overlap is for machines that cannot be updated at once).

use super::manage::{Draft, MAX_API_PERMISSIONS, announce, mint, name, store_new};
use super::policy::policy_apis;
use super::{ApiKeyView, ApiKeys, CreatedApiKeyView};
use crate::audit::action;
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use std::collections::{BTreeSet, HashMap};
use svc_domain::{
    Agent, AgentId, AgentOwner, ApiKey, ApiKeyId, ApiKeyPolicy, ApiResource, ApiResourceId,
    EventType, KeyReach, KeySubject, Permission, PermissionName, Scope, ScopeSet, TenantId, UserId,
    permissions_for,
};
use svc_store::{AccessReads, UserReads, UserRoleReads};
use time::Duration;

/// Most of a person's keys the account page lists (newest first).
pub const LISTED: u32 = 100;

/// One API the person may create a key for, with the permissions they hold there now.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedApi {
    /// The API.
    pub api: ApiResource,
    /// Its permissions the person's roles grant now, in the API's order; may be empty (the
    /// page then says they hold none there).
    pub held: Vec<Permission>,
}

/// An active agent the person owns, and what a key for it may reach.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedAgent {
    /// The agent.
    pub agent: Agent,
    /// The policy's APIs among its `allowed_resources`, each with its permissions within the
    /// agent's `allowed_scopes` (as `held`).
    pub apis: Vec<OfferedApi>,
    /// How many live keys it holds now.
    pub live: u64,
}

/// What the account page offers a person.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnKeyOffer {
    /// The APIs of the policy, as they stand.
    pub apis: Vec<OfferedApi>,
    /// Their active agents, where the policy lets people make keys for them.
    pub agents: Vec<OfferedAgent>,
    /// Longest lifetime of a key, in days.
    pub max_lifetime_days: u32,
    /// Most live keys the person may hold.
    pub max_per_person: u32,
    /// How many they hold now.
    pub live: u64,
}

/// One of the person's keys as the page lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnKey {
    /// The key (never its secret).
    pub view: ApiKeyView,
    /// The name of the API it is for (`None` if deleted since: the key went with it).
    pub api_name: Option<String>,
    /// The agent's name for a key of one of their agents; `None` for their own.
    pub agent_name: Option<String>,
    /// Whether it still works.
    pub live: bool,
}

/// A key a person created: shown once, with the name of the API it is for.
#[derive(Debug)]
pub struct OwnKeyCreated {
    /// The key and its view.
    pub created: CreatedApiKeyView,
    /// The API's name, for the page that shows the key.
    pub api_name: String,
}

/// What a person sends to create a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOwnKey {
    /// What the key is for.
    pub name: String,
    /// The API resource's id (`res_…`), one the policy names.
    pub resource: String,
    /// The permissions asked, each one the person holds there now.
    pub permissions: Vec<String>,
    /// How many days it lives: 1 to the policy's maximum.
    pub lifetime_days: u32,
    /// The agent (`agt_…`) it acts as, one the person owns; `None`: the person.
    pub agent: Option<String>,
}

/// Most agents of one person the page offers keys for.
const MAX_OWNED_AGENTS: u32 = 50;

/// The permissions of `api` within `agent`'s allowances: none when the API is not among its
/// `allowed_resources`.
fn agent_permissions(agent: &Agent, api: &ApiResource) -> BTreeSet<PermissionName> {
    if !agent.allowed_resources.contains(&api.identifier) {
        return BTreeSet::new();
    }
    api.permissions
        .iter()
        .filter(|p| agent.allowed_scopes.contains(p.name.as_str()))
        .map(|p| p.name.clone())
        .collect()
}

/// `api`'s permissions in `held`, in the API's order.
fn offered(api: ApiResource, held: &BTreeSet<PermissionName>) -> OfferedApi {
    let held = api
        .permissions
        .iter()
        .filter(|p| held.contains(&p.name))
        .cloned()
        .collect();
    OfferedApi { api, held }
}

/// The policy where it lets people create keys here: the deployment allows keys acting as a
/// person and the tenant turned self-service on.
fn live_policy(keys: &ApiKeys, policy: ApiKeyPolicy) -> Option<ApiKeyPolicy> {
    (keys.settings.subject_keys && policy.self_service).then_some(policy)
}

/// The permissions of `api` that `person`'s tenant roles grant.
async fn held_at<T>(
    tx: &mut T,
    tenant: &TenantId,
    person: &UserId,
    api: &ApiResource,
) -> Result<BTreeSet<PermissionName>, ManageError>
where
    T: AccessReads + UserRoleReads + Send + ?Sized,
{
    let roles = tx.granted_roles(tenant, person).await?;
    if roles.is_empty() {
        return Ok(BTreeSet::new());
    }
    let grants = tx.role_grants(tenant, &roles).await?;
    Ok(permissions_for(&grants, &api.id))
}

/// Whether `person` of `tenant` may sign in (a suspended person makes no keys).
async fn may_sign_in<T>(tx: &mut T, tenant: &TenantId, person: &UserId) -> Result<bool, ManageError>
where
    T: UserReads + Send + ?Sized,
{
    Ok(tx
        .user(tenant, person)
        .await?
        .is_some_and(|u| u.can_sign_in()))
}

/// Whether the account page links to the keys page for `tenant`: the deployment and the
/// tenant's policy let people make keys. One read of the policy, for every account page view;
/// [`offer`] does the rest when the keys page itself is opened.
///
/// Errors: [`ManageError::Unavailable`] when the store cannot be read.
pub async fn is_offered(
    ctx: &ManageContext,
    keys: &ApiKeys,
    tenant: &TenantId,
) -> Result<bool, ManageError> {
    if !keys.settings.subject_keys {
        return Ok(false);
    }
    let mut tx = ctx.store.read().await?;
    let policy = tx.api_key_policy(tenant).await?;
    tx.finish().await?;
    Ok(live_policy(keys, policy).is_some())
}

/// What the account page offers `person` of `tenant`; `None` when people may not create keys
/// here (the page is then not served) or the person may not sign in.
///
/// Errors: [`ManageError::Unavailable`] when the store cannot be read.
pub async fn offer(
    ctx: &ManageContext,
    keys: &ApiKeys,
    tenant: &TenantId,
    person: &UserId,
) -> Result<Option<OwnKeyOffer>, ManageError> {
    let mut tx = ctx.store.read().await?;
    let Some(policy) = live_policy(keys, tx.api_key_policy(tenant).await?) else {
        tx.finish().await?;
        return Ok(None);
    };
    if !may_sign_in(tx.as_mut(), tenant, person).await? {
        tx.finish().await?;
        return Ok(None);
    }
    let now = ctx.now();
    let policy_apis = policy_apis(tx.as_mut(), tenant, &policy).await?;
    let mut apis = Vec::new();
    for api in &policy_apis {
        let held = held_at(tx.as_mut(), tenant, person, api).await?;
        apis.push(offered(api.clone(), &held));
    }
    let mut agents = Vec::new();
    if policy.agent_keys {
        let owner = AgentOwner::User(person.clone());
        for agent in tx
            .agents_owned_by(tenant, &owner, MAX_OWNED_AGENTS)
            .await?
            .into_iter()
            .filter(Agent::is_active)
        {
            let apis = policy_apis
                .iter()
                .filter(|api| agent.allowed_resources.contains(&api.identifier))
                .map(|api| offered(api.clone(), &agent_permissions(&agent, api)))
                .collect();
            let live = tx
                .count_live_subject_api_keys(tenant, &KeySubject::Agent(agent.id.clone()), now)
                .await?;
            agents.push(OfferedAgent { agent, apis, live });
        }
    }
    let live = tx
        .count_live_subject_api_keys(tenant, &KeySubject::User(person.clone()), now)
        .await?;
    tx.finish().await?;
    Ok(Some(OwnKeyOffer {
        apis,
        agents,
        max_lifetime_days: policy.max_lifetime_days,
        max_per_person: policy.max_per_person,
        live,
    }))
}

/// The newest [`LISTED`] keys acting as `person`, whoever created them (an administrator's
/// for them too: the person sees every credential in their name), revoked ones included; then
/// those of each agent they own, likewise.
///
/// Errors: [`ManageError::Unavailable`] when the store cannot be read.
pub async fn keys_of(
    ctx: &ManageContext,
    tenant: &TenantId,
    person: &UserId,
) -> Result<Vec<OwnKey>, ManageError> {
    let now = ctx.now();
    let mut tx = ctx.store.read().await?;
    let mut found: Vec<(ApiKey, Option<String>)> = tx
        .subject_api_keys(tenant, &KeySubject::User(person.clone()), LISTED)
        .await?
        .into_iter()
        .map(|k| (k, None))
        .collect();
    let owner = AgentOwner::User(person.clone());
    for agent in tx.agents_owned_by(tenant, &owner, MAX_OWNED_AGENTS).await? {
        let keys = tx
            .subject_api_keys(tenant, &KeySubject::Agent(agent.id.clone()), LISTED)
            .await?;
        found.extend(keys.into_iter().map(|k| (k, Some(agent.name.clone()))));
    }
    // One lookup per API, not per key: a person's keys are mostly for the same few APIs.
    let mut names: HashMap<ApiResourceId, Option<String>> = HashMap::new();
    let mut listed = Vec::with_capacity(found.len());
    for (key, agent_name) in found {
        let api_name = match &key.reach {
            KeyReach::Api { resource, .. } => match names.get(resource) {
                Some(name) => name.clone(),
                None => {
                    let name = tx.api_resource(tenant, resource).await?.map(|a| a.name);
                    names.insert(resource.clone(), name.clone());
                    name
                }
            },
            KeyReach::Management => None,
        };
        listed.push(OwnKey {
            view: ApiKeyView::from(&key),
            api_name,
            agent_name,
            live: key.is_live(now),
        });
    }
    tx.finish().await?;
    Ok(listed)
}

/// The checked permissions: 1 to [`MAX_API_PERMISSIONS`], each one `api` defines and `held`
/// contains.
fn asked_permissions(
    raw: &[String],
    api: &ApiResource,
    held: &BTreeSet<PermissionName>,
) -> Result<ScopeSet, ManageError> {
    if raw.is_empty() || raw.len() > MAX_API_PERMISSIONS {
        return Err(ManageError::invalid(
            "permissions",
            format!("choose 1 to {MAX_API_PERMISSIONS} permissions"),
        ));
    }
    let mut parsed = Vec::with_capacity(raw.len());
    for asked in raw {
        if !held.iter().any(|p| p.as_str() == asked) {
            return Err(ManageError::invalid(
                "permissions",
                format!("`{asked}` is not a permission you hold at {}", api.name),
            ));
        }
        parsed.push(
            Scope::parse(asked).map_err(|e| ManageError::invalid("permissions", e.to_string()))?,
        );
    }
    Ok(ScopeSet::from_scopes(parsed))
}

/// Creates a key acting as `person` at one of the policy's APIs (see the module rules); the
/// key is in the answer, this once.
///
/// Errors: [`ManageError::NotFound`] when people may not create keys here (or the person may
/// not sign in); [`ManageError::Invalid`] naming `name`, `resource`, `permissions` or
/// `lifetime_days` or `agent`; [`ManageError::Conflict`] when the person (or the agent) already
/// holds the most live keys the policy allows. Nothing is written on error.
pub async fn create_own(
    ctx: &ManageContext,
    keys: &ApiKeys,
    tenant: &TenantId,
    person: &UserId,
    meta: &RequestMeta,
    input: NewOwnKey,
) -> Result<OwnKeyCreated, ManageError> {
    let now = ctx.now();
    let name = name(&input.name)?;
    let mut tx = ctx.store.write().await?;
    let policy =
        live_policy(keys, tx.api_key_policy(tenant).await?).ok_or(ManageError::NotFound)?;
    if !may_sign_in(tx.as_mut(), tenant, person).await? {
        return Err(ManageError::NotFound);
    }
    let api = policy_apis(tx.as_mut(), tenant, &policy)
        .await?
        .into_iter()
        .find(|a| a.id.as_str() == input.resource)
        .ok_or_else(|| {
            ManageError::invalid("resource", "is not an API this tenant offers keys for")
        })?;
    let (subject, held) = match &input.agent {
        None => (
            KeySubject::User(person.clone()),
            held_at(tx.as_mut(), tenant, person, &api).await?,
        ),
        Some(raw) => {
            if !policy.agent_keys {
                return Err(ManageError::invalid(
                    "agent",
                    "this tenant does not let people make keys for their agents",
                ));
            }
            let agent = match AgentId::parse(raw) {
                Ok(id) => tx.agent(tenant, &id).await?,
                Err(_) => None,
            }
            .filter(|a| a.is_active() && a.owner == AgentOwner::User(person.clone()))
            .ok_or_else(|| ManageError::invalid("agent", "is not an active agent you own"))?;
            if !agent.allowed_resources.contains(&api.identifier) {
                return Err(ManageError::invalid(
                    "resource",
                    "is not among the agent's allowed resources",
                ));
            }
            let held = agent_permissions(&agent, &api);
            (KeySubject::Agent(agent.id), held)
        }
    };
    let scopes = asked_permissions(&input.permissions, &api, &held)?;
    if !(1..=policy.max_lifetime_days).contains(&input.lifetime_days) {
        return Err(ManageError::invalid(
            "lifetime_days",
            format!("must be 1 to {} days", policy.max_lifetime_days),
        ));
    }
    let mut expires_at = now + Duration::days(i64::from(input.lifetime_days));
    if let Some(cap) = keys
        .settings
        .max_lifetime
        .and_then(|d| Duration::try_from(d).ok())
    {
        expires_at = expires_at.min(now + cap);
    }
    let max = policy.max_per_person;
    if tx
        .count_live_subject_api_keys(tenant, &subject, now)
        .await?
        >= u64::from(max)
    {
        let whose = match subject {
            KeySubject::User(_) => "you already hold",
            KeySubject::Agent(_) => "this agent already holds",
        };
        return Err(ManageError::Conflict(format!(
            "{whose} {max} live keys, the most this tenant allows: revoke one first"
        )));
    }
    let actor = Actor::User(person.clone());
    let draft = Draft {
        name,
        reach: KeyReach::Api {
            resource: api.id.clone(),
            subject,
        },
        scopes,
        expires_at: Some(expires_at),
        rotated_from: None,
    };
    let created = store_new(
        tx,
        ctx,
        &actor,
        meta,
        mint(ctx, keys, (tenant, &actor), now, draft),
        EventType::AdminApiKeyCreated,
        action::API_KEY_CREATED,
    )
    .await?;
    Ok(OwnKeyCreated {
        created,
        api_name: api.name,
    })
}

/// Revokes the key `id` if it acts as `person` (or an agent they own) and still works; whether
/// it did. Another
/// person's, an agent's, a management key, an unknown or malformed id: `false`, nothing
/// written. Works whatever the policy says now: a person may always take back a credential in
/// their name.
///
/// Errors: [`ManageError::Unavailable`] when the store fails.
pub async fn revoke_own(
    ctx: &ManageContext,
    keys: &ApiKeys,
    tenant: &TenantId,
    person: &UserId,
    meta: &RequestMeta,
    id: &str,
) -> Result<bool, ManageError> {
    let Ok(id) = ApiKeyId::parse(id) else {
        return Ok(false);
    };
    let now = ctx.now();
    let mut tx = ctx.store.write().await?;
    let Some(mut key) = tx.api_key(tenant, &id).await? else {
        return Ok(false);
    };
    let theirs = match &key.reach {
        KeyReach::Api {
            subject: KeySubject::User(u),
            ..
        } => u == person,
        KeyReach::Api {
            subject: KeySubject::Agent(agent),
            ..
        } => tx
            .agent(tenant, agent)
            .await?
            .is_some_and(|a| a.owner == AgentOwner::User(person.clone())),
        KeyReach::Management => false,
    };
    if !theirs || !tx.revoke_api_key(tenant, &id, now).await? {
        return Ok(false);
    }
    key.revoked_at = Some(now);
    announce(
        tx.as_mut(),
        ctx,
        &Actor::User(person.clone()),
        meta,
        &key,
        EventType::AdminApiKeyRevoked,
        action::API_KEY_REVOKED,
    )
    .await?;
    tx.commit().await?;
    keys.cache.forget(tenant, &id);
    ctx.changes.api_key_changed(tenant, &id);
    Ok(true)
}
