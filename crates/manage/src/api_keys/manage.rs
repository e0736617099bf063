//! The API-key use cases: create, list, read, revoke, rotate. Each change is audited
//! (`api_key.*`) and announced (`admin.api_key.*`) in its own transaction; revoking or rotating
//! clears this process's positive cache at once.

use super::{
    ApiKeyView, ApiKeys, CreatedApiKeyView, DEFAULT_OVERLAP_SECS, MAX_OVERLAP_SECS, NewApiKey,
    RotateApiKey,
};
use crate::audit::{self, action};
use crate::page::{clamp_limit, split_page};
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use svc_domain::{
    ApiKey, ApiKeyId, EventData, EventType, GeneratedSecret, KeyReach, KeySubject,
    MANAGEMENT_API_SCOPES, MAX_API_KEY_NAME_CHARS, MAX_API_KEY_SCOPES, Scope, ScopeSet, TenantId,
};
use svc_store::{Order, WriteTx};
use time::{Duration, OffsetDateTime};

/// The checked name: trimmed, 1 to 100 characters, no control characters.
pub(super) fn name(raw: &str) -> Result<String, ManageError> {
    let name = raw.trim();
    if name.is_empty() || name.chars().count() > MAX_API_KEY_NAME_CHARS {
        return Err(ManageError::invalid(
            "name",
            format!("must be 1 to {MAX_API_KEY_NAME_CHARS} characters"),
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(ManageError::invalid(
            "name",
            "must not contain control characters",
        ));
    }
    Ok(name.to_owned())
}

/// The checked scopes: 1 to [`MAX_API_KEY_SCOPES`] management scopes, each held by the caller
/// (no escalation).
fn scopes(raw: &[String], caller: &ScopeSet) -> Result<ScopeSet, ManageError> {
    if raw.is_empty() || raw.len() > MAX_API_KEY_SCOPES {
        return Err(ManageError::invalid(
            "scopes",
            format!("must name 1 to {MAX_API_KEY_SCOPES} management scopes"),
        ));
    }
    let mut parsed = Vec::with_capacity(raw.len());
    for scope in raw {
        if !MANAGEMENT_API_SCOPES.contains(&scope.as_str()) {
            return Err(ManageError::invalid(
                "scopes",
                format!(
                    "`{scope}` is not a management scope (one of: {})",
                    MANAGEMENT_API_SCOPES.join(", ")
                ),
            ));
        }
        if !caller.contains(scope) {
            return Err(ManageError::invalid(
                "scopes",
                format!("`{scope}` is not a scope of the caller: a key cannot hold more"),
            ));
        }
        parsed
            .push(Scope::parse(scope).map_err(|e| ManageError::invalid("scopes", e.to_string()))?);
    }
    Ok(ScopeSet::from_scopes(parsed))
}

/// The checked expiry: in the future and within the maximum lifetime; absent, the maximum
/// lifetime when there is one.
fn expiry(
    keys: &ApiKeys,
    requested: Option<OffsetDateTime>,
    now: OffsetDateTime,
) -> Result<Option<OffsetDateTime>, ManageError> {
    let latest = keys
        .settings
        .max_lifetime
        .and_then(|d| Duration::try_from(d).ok())
        .map(|d| now + d);
    match (requested, latest) {
        (Some(at), _) if at <= now => {
            Err(ManageError::invalid("expires_at", "must be in the future"))
        }
        (Some(at), Some(latest)) if at > latest => Err(ManageError::invalid(
            "expires_at",
            format!(
                "must be within the deployment's maximum lifetime ({} days)",
                (latest - now).whole_days()
            ),
        )),
        (Some(at), _) => Ok(Some(at)),
        (None, latest) => Ok(latest),
    }
}

/// The caller's scopes as a set (scopes that do not parse grant nothing here).
fn caller_scopes(caller: &[String]) -> ScopeSet {
    ScopeSet::from_scopes(caller.iter().filter_map(|s| Scope::parse(s).ok()))
}

/// Most permissions one key for an API carries.
pub(super) const MAX_API_PERMISSIONS: usize = 50;

/// The scope a caller needs to hand out a key in `subject`'s name.
fn authority(subject: &KeySubject) -> &'static str {
    match subject {
        KeySubject::User(_) => "users:write",
        KeySubject::Agent(_) => "agents:write",
    }
}

/// The subject and API identifier of a key for an API, `None` for a management key: both
/// members or neither, allowed by the deployment, a well-formed subject the caller may act for.
fn subject_target<'i>(
    keys: &ApiKeys,
    input: &'i NewApiKey,
    held: &ScopeSet,
) -> Result<Option<(KeySubject, &'i str)>, ManageError> {
    let (subject, resource) = match (&input.subject, &input.resource) {
        (None, None) => return Ok(None),
        (Some(subject), Some(resource)) => (subject, resource),
        (Some(_), None) => {
            return Err(ManageError::invalid(
                "resource",
                "is required with subject: a key acts as someone at one API",
            ));
        }
        (None, Some(_)) => {
            return Err(ManageError::invalid(
                "subject",
                "is required with resource: a key acts as someone at one API",
            ));
        }
    };
    if !keys.settings.subject_keys {
        return Err(ManageError::invalid(
            "subject",
            "keys acting as a person or an agent are off in this deployment \
             ([api_keys].subject_keys)",
        ));
    }
    let subject = KeySubject::parse(subject).map_err(|_| {
        ManageError::invalid("subject", "must be a person (usr_…) or an agent (agt_…)")
    })?;
    let needed = authority(&subject);
    if !held.contains(needed) {
        return Err(ManageError::Forbidden(format!(
            "a key in someone's name needs {needed}"
        )));
    }
    Ok(Some((subject, resource.as_str())))
}

/// The reach and scopes of a key acting as `subject` at the API `identifier` of `tenant`: the
/// API exists, the scopes are permissions it defines, the person may sign in, or the agent is
/// active with the API among its `allowed_resources` and the scopes within its
/// `allowed_scopes`.
async fn api_reach(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    subject: KeySubject,
    identifier: &str,
    raw: &[String],
) -> Result<(KeyReach, ScopeSet), ManageError> {
    let api = tx
        .api_resource_by_identifier(tenant, identifier)
        .await?
        .ok_or_else(|| ManageError::invalid("resource", "is not an API resource of this tenant"))?;
    if raw.is_empty() || raw.len() > MAX_API_PERMISSIONS {
        return Err(ManageError::invalid(
            "scopes",
            format!("must name 1 to {MAX_API_PERMISSIONS} permissions of the API"),
        ));
    }
    let mut parsed = Vec::with_capacity(raw.len());
    for scope in raw {
        if !api.permissions.iter().any(|p| p.name.as_str() == scope) {
            return Err(ManageError::invalid(
                "scopes",
                format!("`{scope}` is not a permission of {identifier}"),
            ));
        }
        parsed
            .push(Scope::parse(scope).map_err(|e| ManageError::invalid("scopes", e.to_string()))?);
    }
    let scopes = ScopeSet::from_scopes(parsed);
    match &subject {
        KeySubject::User(user) => {
            if !tx
                .user(tenant, user)
                .await?
                .is_some_and(|u| u.can_sign_in())
            {
                return Err(ManageError::invalid(
                    "subject",
                    "is not a person of this tenant who may sign in",
                ));
            }
        }
        KeySubject::Agent(agent) => {
            let agent = tx
                .agent(tenant, agent)
                .await?
                .filter(|a| a.is_active())
                .ok_or_else(|| {
                    ManageError::invalid("subject", "is not an active agent of this tenant")
                })?;
            if !agent.allowed_resources.contains(&api.identifier) {
                return Err(ManageError::invalid(
                    "resource",
                    "is not among the agent's allowed_resources",
                ));
            }
            if let Some(other) = scopes
                .iter()
                .find(|s| !agent.allowed_scopes.contains(s.as_str()))
            {
                return Err(ManageError::invalid(
                    "scopes",
                    format!("`{other}` is not among the agent's allowed_scopes"),
                ));
            }
        }
    }
    Ok((
        KeyReach::Api {
            resource: api.id,
            subject,
        },
        scopes,
    ))
}

/// A new key before its secret: what each way of making one (creation, rotation, a person's own)
/// decides.
pub(super) struct Draft {
    pub(super) name: String,
    pub(super) reach: KeyReach,
    pub(super) scopes: ScopeSet,
    pub(super) expires_at: Option<OffsetDateTime>,
    pub(super) rotated_from: Option<ApiKeyId>,
}

/// A fresh key of `tenant` from `draft`, made by `actor` at `now`, and its secret.
pub(super) fn mint(
    ctx: &ManageContext,
    keys: &ApiKeys,
    (tenant, actor): (&TenantId, &Actor),
    now: OffsetDateTime,
    draft: Draft,
) -> (ApiKey, GeneratedSecret) {
    let secret = keys.hasher.generate(tenant, ctx.rng.as_ref());
    let key = ApiKey {
        id: ApiKeyId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        tenant_id: tenant.clone(),
        name: draft.name,
        reach: draft.reach,
        scopes: draft.scopes,
        hash: secret.hash.clone(),
        created_by: actor.as_audit_string(),
        created_at: now,
        expires_at: draft.expires_at,
        last_used_at: None,
        revoked_at: None,
        rotated_from: draft.rotated_from,
    };
    (key, secret)
}

/// Stores the minted `key`, audits and announces it (`event`, `audit_action`) and commits `tx`;
/// the answer that shows the secret this once.
pub(super) async fn store_new(
    mut tx: Box<dyn WriteTx>,
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    (key, secret): (ApiKey, GeneratedSecret),
    event: EventType,
    audit_action: &str,
) -> Result<CreatedApiKeyView, ManageError> {
    tx.insert_api_key(&key).await?;
    announce(tx.as_mut(), ctx, actor, meta, &key, event, audit_action).await?;
    tx.commit().await?;
    Ok(CreatedApiKeyView {
        view: ApiKeyView::from(&key),
        key: secret.plaintext.clone(),
    })
}

pub(super) async fn announce(
    tx: &mut dyn WriteTx,
    ctx: &ManageContext,
    actor: &Actor,
    meta: &RequestMeta,
    key: &ApiKey,
    event_type: EventType,
    audit_action: &str,
) -> Result<(), ManageError> {
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(&key.tenant_id),
        audit_action,
        Some(key.id.as_str()),
    );
    audit::record(tx, &entry).await?;
    let data = EventData::ApiKey {
        api_key_id: key.id.clone(),
        name: key.name.clone(),
        scopes: key.scopes.iter().map(|s| s.as_str().to_owned()).collect(),
        expires_at: key.expires_at,
        rotated_from: key.rotated_from.clone(),
        subject: match &key.reach {
            KeyReach::Management => None,
            KeyReach::Api { subject, .. } => Some(subject.as_str().to_owned()),
        },
        resource_id: match &key.reach {
            KeyReach::Management => None,
            KeyReach::Api { resource, .. } => Some(resource.clone()),
        },
        actor: actor.as_audit_string(),
    };
    crate::events::record(tx, ctx, &key.tenant_id, event_type, data).await
}

/// Creates a key of `tenant`: a management key holding `input.scopes`, which must all be in
/// `caller_scopes` (the scopes of the credential making the request), or, with `subject` and
/// `resource`, a key acting as that person or agent at that API ([`api_reach`]). Audited as
/// `api_key.created`, announced as `admin.api_key.created`. The key is in the answer, this once.
///
/// Errors: [`ManageError::Invalid`] naming `name`, `scopes`, `subject`, `resource` or
/// `expires_at`; [`ManageError::Forbidden`] when a key in someone's name is asked without the
/// scope that allows it; [`ManageError::Conflict`] when the tenant already has
/// `max_per_tenant` live keys; [`ManageError::NotFound`] when the tenant does not exist.
#[allow(clippy::too_many_arguments)] // the request's parts, each distinct
pub async fn create(
    ctx: &ManageContext,
    keys: &ApiKeys,
    tenant: &TenantId,
    actor: &Actor,
    caller_scopes_held: &[String],
    meta: &RequestMeta,
    input: NewApiKey,
) -> Result<CreatedApiKeyView, ManageError> {
    let now = ctx.now();
    let name = name(&input.name)?;
    let held = caller_scopes(caller_scopes_held);
    let target = subject_target(keys, &input, &held)?;
    let expires_at = expiry(keys, input.expires_at, now)?;
    let mut tx = ctx.store.write().await?;
    if tx.tenant_by_id(tenant).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let (reach, scopes) = match target {
        None => (KeyReach::Management, scopes(&input.scopes, &held)?),
        Some((subject, resource)) => {
            api_reach(tx.as_mut(), tenant, subject, resource, &input.scopes).await?
        }
    };
    let max = keys.settings.max_per_tenant;
    if tx.count_live_api_keys(tenant, now).await? >= u64::from(max) {
        return Err(ManageError::Conflict(format!(
            "the tenant already has {max} live API keys: revoke one first"
        )));
    }
    let draft = Draft {
        name,
        reach,
        scopes,
        expires_at,
        rotated_from: None,
    };
    store_new(
        tx,
        ctx,
        actor,
        meta,
        mint(ctx, keys, (tenant, actor), now, draft),
        EventType::AdminApiKeyCreated,
        action::API_KEY_CREATED,
    )
    .await
}

/// Up to `limit` (default 50, clamped to 1..=200) keys of `tenant` in creation `order`
/// (default oldest first) past `after`, revoked and expired ones included, and the cursor of
/// the next page.
pub async fn list(
    ctx: &ManageContext,
    tenant: &TenantId,
    after: Option<&ApiKeyId>,
    order: Option<Order>,
    limit: Option<u32>,
) -> Result<(Vec<ApiKeyView>, Option<ApiKeyId>), ManageError> {
    let limit = clamp_limit(limit);
    let mut tx = ctx.store.read().await?;
    let rows = tx
        .api_keys(tenant, after, order.unwrap_or(Order::Ascending), limit + 1)
        .await?;
    tx.finish().await?;
    let (rows, next) = split_page(rows, limit, |k| k.id.clone());
    Ok((rows.iter().map(ApiKeyView::from).collect(), next))
}

/// The key `id` of `tenant`.
///
/// Errors: [`ManageError::NotFound`] when absent, another tenant's or malformed.
pub async fn get(
    ctx: &ManageContext,
    tenant: &TenantId,
    id: &str,
) -> Result<ApiKeyView, ManageError> {
    let id = ApiKeyId::parse(id).map_err(|_| ManageError::NotFound)?;
    let mut tx = ctx.store.read().await?;
    let key = tx
        .api_key(tenant, &id)
        .await?
        .ok_or(ManageError::NotFound)?;
    tx.finish().await?;
    Ok(ApiKeyView::from(&key))
}

/// Revokes the key `id` of `tenant` at once (and forgets it in this process's cache). Revoking
/// a revoked key changes nothing and succeeds (idempotent); audited as `api_key.revoked` and
/// announced as `admin.api_key.revoked` the first time only.
///
/// Errors: [`ManageError::NotFound`] when absent, another tenant's or malformed.
pub async fn revoke(
    ctx: &ManageContext,
    keys: &ApiKeys,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &str,
) -> Result<(), ManageError> {
    let id = ApiKeyId::parse(id).map_err(|_| ManageError::NotFound)?;
    let mut tx = ctx.store.write().await?;
    let mut key = tx
        .api_key(tenant, &id)
        .await?
        .ok_or(ManageError::NotFound)?;
    let now = ctx.now();
    if tx.revoke_api_key(tenant, &id, now).await? {
        key.revoked_at = Some(now);
        announce(
            tx.as_mut(),
            ctx,
            actor,
            meta,
            &key,
            EventType::AdminApiKeyRevoked,
            action::API_KEY_REVOKED,
        )
        .await?;
    }
    tx.commit().await?;
    keys.cache.forget(tenant, &id);
    ctx.changes.api_key_changed(tenant, &id);
    Ok(())
}

/// Rotates the live key `id` of `tenant`: a new key with the same name and scopes (and the
/// same lifetime, from now, when it had one) replaces it, and the old one keeps working for
/// `overlap_secs` (default a day, at most 7 days, 0: stops at once). The caller must hold every
/// scope of the key: the new secret is theirs. Audited as `api_key.rotated` (target: the new
/// key), announced as `admin.api_key.rotated`. Rotation does not count against
/// `max_per_tenant`: the old key is on its way out.
///
/// Errors: [`ManageError::Invalid`] naming `overlap_secs`; [`ManageError::NotFound`] when
/// absent, another tenant's or malformed; [`ManageError::Conflict`] when revoked or expired;
/// [`ManageError::Forbidden`] when the caller lacks one of the key's scopes.
#[allow(clippy::too_many_arguments)] // the request's parts, each distinct
pub async fn rotate(
    ctx: &ManageContext,
    keys: &ApiKeys,
    tenant: &TenantId,
    actor: &Actor,
    caller_scopes_held: &[String],
    meta: &RequestMeta,
    id: &str,
    input: RotateApiKey,
) -> Result<CreatedApiKeyView, ManageError> {
    let overlap = input.overlap_secs.unwrap_or(DEFAULT_OVERLAP_SECS);
    if overlap > MAX_OVERLAP_SECS {
        return Err(ManageError::invalid(
            "overlap_secs",
            format!("must be 0 to {MAX_OVERLAP_SECS} seconds (7 days)"),
        ));
    }
    let id = ApiKeyId::parse(id).map_err(|_| ManageError::NotFound)?;
    let now = ctx.now();
    let mut tx = ctx.store.write().await?;
    let old = tx
        .api_key(tenant, &id)
        .await?
        .ok_or(ManageError::NotFound)?;
    if !old.is_live(now) {
        return Err(ManageError::Conflict(
            "the API key is revoked or expired: create a new one".into(),
        ));
    }
    let held = caller_scopes(caller_scopes_held);
    match &old.reach {
        KeyReach::Management if !old.scopes.is_subset(&held) => {
            return Err(ManageError::Forbidden(
                "rotating hands out a key with the same scopes: the caller must hold all of them"
                    .into(),
            ));
        }
        KeyReach::Api { subject, .. } if !held.contains(authority(subject)) => {
            return Err(ManageError::Forbidden(format!(
                "rotating hands out a key in someone's name: the caller needs {}",
                authority(subject)
            )));
        }
        _ => {}
    }
    let lifetime = old.expires_at.map(|at| at - old.created_at);
    let draft = Draft {
        name: old.name.clone(),
        reach: old.reach.clone(),
        scopes: old.scopes.clone(),
        expires_at: lifetime.map(|d| now + d),
        rotated_from: Some(old.id.clone()),
    };
    let end = now + Duration::seconds(i64::from(overlap));
    let end = old.expires_at.map_or(end, |at| at.min(end));
    if !tx.expire_api_key(tenant, &id, end).await? {
        return Err(ManageError::Conflict(
            "the API key is revoked or expired: create a new one".into(),
        ));
    }
    let created = store_new(
        tx,
        ctx,
        actor,
        meta,
        mint(ctx, keys, (tenant, actor), now, draft),
        EventType::AdminApiKeyRotated,
        action::API_KEY_ROTATED,
    )
    .await?;
    keys.cache.forget(tenant, &id);
    ctx.changes.api_key_changed(tenant, &id);
    Ok(created)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api_keys::ApiKeySettings;
    use std::sync::Arc;
    use svc_crypto::ApiKeyHasher;

    fn owned(scopes: &[&str]) -> Vec<String> {
        scopes.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn names_are_trimmed_bounded_and_printable() {
        assert_eq!(name("  CI deploy ").unwrap(), "CI deploy");
        assert!(name("   ").is_err());
        assert!(name(&"é".repeat(100)).is_ok());
        assert!(name(&"é".repeat(101)).is_err());
        assert!(name("a\u{7}b").is_err());
    }

    #[test]
    fn scopes_are_management_scopes_the_caller_holds() {
        let caller = caller_scopes(&owned(&["applications:read", "users:write", "openid"]));
        let held = scopes(
            &owned(&["users:write", "applications:read", "users:write"]),
            &caller,
        )
        .unwrap();
        assert_eq!(held.to_string(), "applications:read users:write");
        assert!(scopes(&[], &caller).is_err());
        assert!(
            scopes(&owned(&["openid"]), &caller).is_err(),
            "not a management scope"
        );
        assert!(
            scopes(&owned(&["users:read"]), &caller).is_err(),
            "write is not read"
        );
        assert!(
            scopes(&owned(&["audit:read"]), &caller).is_err(),
            "escalation"
        );
        let too_many = vec!["users:write".to_owned(); MAX_API_KEY_SCOPES + 1];
        assert!(scopes(&too_many, &caller).is_err());
    }

    #[test]
    fn keys_in_someones_name_need_both_members_the_switch_and_the_authority() {
        let hasher = Arc::new(ApiKeyHasher::new(&[1; 32]).unwrap());
        let on = ApiKeys::new(
            hasher.clone(),
            ApiKeySettings {
                subject_keys: true,
                ..ApiKeySettings::default()
            },
        );
        let off = ApiKeys::new(hasher, ApiKeySettings::default());
        let input = |subject: Option<&str>, resource: Option<&str>| NewApiKey {
            name: "k".into(),
            scopes: owned(&["trips:read"]),
            subject: subject.map(str::to_owned),
            resource: resource.map(str::to_owned),
            expires_at: None,
        };
        let admin = caller_scopes(&owned(&["users:write", "agents:write"]));
        let field = |r: Result<Option<(KeySubject, &str)>, ManageError>| match r {
            Err(ManageError::Invalid { field, .. }) => field,
            other => panic!("expected a refusal naming a member, got {other:?}"),
        };
        let person = "usr_01jd3k2m4n5p6q7r8s9t0v1w2x";
        let agent = "agt_01jd3k2m4n5p6q7r8s9t0v1w2x";
        let api = Some("https://api.example.com");
        assert!(
            subject_target(&off, &input(None, None), &admin)
                .unwrap()
                .is_none()
        );
        let both = input(Some(person), api);
        assert_eq!(field(subject_target(&off, &both, &admin)), "subject");
        let alone = input(Some(person), None);
        assert_eq!(field(subject_target(&on, &alone, &admin)), "resource");
        let alone = input(None, api);
        assert_eq!(field(subject_target(&on, &alone, &admin)), "subject");
        let app = input(Some("app_01jd3k2m4n5p6q7r8s9t0v1w2x"), api);
        assert_eq!(field(subject_target(&on, &app, &admin)), "subject");
        let (subject, resource) = subject_target(&on, &both, &admin).unwrap().unwrap();
        assert_eq!(
            (subject.as_str(), resource),
            (person, "https://api.example.com")
        );
        let for_agent = input(Some(agent), api);
        assert!(matches!(
            subject_target(&on, &for_agent, &admin).unwrap(),
            Some((KeySubject::Agent(_), _))
        ));
        let people_only = caller_scopes(&owned(&["users:write"]));
        assert!(matches!(
            subject_target(&on, &for_agent, &people_only),
            Err(ManageError::Forbidden(_))
        ));
        let neither = caller_scopes(&owned(&["applications:write"]));
        assert!(matches!(
            subject_target(&on, &both, &neither),
            Err(ManageError::Forbidden(_))
        ));
    }

    #[test]
    fn expiries_are_in_the_future_and_within_the_maximum_lifetime() {
        let now = OffsetDateTime::UNIX_EPOCH + Duration::days(20_000);
        let hasher = Arc::new(ApiKeyHasher::new(&[1; 32]).unwrap());
        let unbounded = ApiKeys::new(hasher.clone(), ApiKeySettings::default());
        assert_eq!(expiry(&unbounded, None, now).unwrap(), None);
        assert!(expiry(&unbounded, Some(now), now).is_err());
        let later = now + Duration::days(4000);
        assert_eq!(expiry(&unbounded, Some(later), now).unwrap(), Some(later));
        let bounded = ApiKeys::new(
            hasher,
            ApiKeySettings {
                max_per_tenant: 1,
                max_lifetime: Some(std::time::Duration::from_secs(30 * 86_400)),
                subject_keys: false,
            },
        );
        let limit = now + Duration::days(30);
        assert_eq!(expiry(&bounded, None, now).unwrap(), Some(limit));
        assert_eq!(expiry(&bounded, Some(limit), now).unwrap(), Some(limit));
        assert!(expiry(&bounded, Some(limit + Duration::seconds(1)), now).is_err());
    }
}
