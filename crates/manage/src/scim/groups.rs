//! The SCIM Group resource type (RFC 7644 §3.2–§3.6): list with filter, sort and paging,
//! read, create, replace, PATCH and delete of the groups a directory maintains.
//!
//! Mapping: a group lives in the scope of the token that writes it: the tenant's own groups
//! for a tenant's token, one organization's for that organization's token (the two never see
//! each other's: another scope's group reads as 404). Its members are people that token can
//! see through `/Users`: any person of the tenant for a tenant's token, that organization's
//! members for an organization's. So an organization's directory adds to its groups only
//! people who already are its members (people it creates become members; anyone else is
//! `invalidValue`), and no membership is ever created or removed by a group: deleting a group
//! only forgets it and its member list. Groups grant nothing (no roles, no scopes): they are
//! what the directory says, kept for it to read back. A person's read-only `groups` attribute
//! lists the groups of the token's scope they belong to.
//!
//! Rules:
//! - `displayName` is unique within the scope ignoring case (409 `uniqueness`).
//! - Every member must be visible to the token; one that is not (unknown, removed, another
//!   tenant's, not a member of the token's organization) fails the whole write with 400
//!   `invalidValue` and nothing is written (one transaction). Members already in the group are
//!   not checked again, so a person who left the organization does not block later changes.
//! - `If-Match` (RFC 7644 §3.14) must name the current `meta.version`, else 412.
//! - Audited as `scim_group.created`, `scim_group.updated` (name, `externalId` or members),
//!   `scim_group.deleted`, actor `scim:scimt_…`; no event type (webhooks) is emitted.

use super::group_resource::{self, GroupInput, represent};
use super::users::{Represented, after};
use super::{Projection, ScimCaller, ScimError, ScimSettings, group_filter, patch};
use crate::audit::{self, action};
use crate::{ManageContext, Precondition, RequestMeta};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use svc_domain::{ScimGroup, ScimGroupId, UserId};
use svc_store::{
    ScimAttr, ScimFilter, ScimGroupAttr, ScimGroupReads, ScimGroupRecord, ScimOp, ScimReads,
    ScimSort, ScimValue, StoreError,
};

/// Most people checked per query when verifying members (bound parameters stay far below
/// every backend's limit).
const MEMBER_CHECK_CHUNK: usize = 200;

fn answer(group: &ScimGroupRecord, base: &str) -> Represented {
    Represented {
        resource: represent(group, base),
        version: super::version_tag(group_resource::revision(group)),
        location: format!("{base}/Groups/{}", group.group.id),
    }
}

fn check(precondition: &Precondition, group: &ScimGroupRecord) -> Result<(), ScimError> {
    if precondition.holds_for(group_resource::revision(group)) {
        Ok(())
    } else {
        Err(ScimError::PreconditionFailed)
    }
}

/// The group `id` in the caller's scope, or [`ScimError::NotFound`].
async fn visible<T: ScimGroupReads + Send + ?Sized>(
    tx: &mut T,
    caller: &ScimCaller,
    id: &str,
) -> Result<ScimGroupRecord, ScimError> {
    let id = ScimGroupId::parse(id).map_err(|_| ScimError::NotFound)?;
    let by_id = ScimFilter::Compare(
        ScimGroupAttr::Id,
        ScimOp::Eq,
        ScimValue::Str(id.as_str().to_owned()),
    );
    let page = tx
        .scim_groups(
            &caller.tenant,
            caller.organization.as_ref(),
            Some(&by_id),
            None,
            0,
            1,
        )
        .await?;
    page.groups.into_iter().next().ok_or(ScimError::NotFound)
}

/// Rule: every one of `added` is a person the caller can see through `/Users`; else
/// `invalidValue` naming the first that is not.
async fn members_visible<T: ScimReads + Send + ?Sized>(
    tx: &mut T,
    caller: &ScimCaller,
    added: &[String],
) -> Result<Vec<UserId>, ScimError> {
    let refused = |id: &str| {
        let shown: String = id.chars().take(64).collect();
        ScimError::InvalidValue(format!(
            "members: {shown:?} is not a person this token can provision"
        ))
    };
    let mut ids = Vec::with_capacity(added.len());
    for raw in added {
        ids.push(UserId::parse(raw).map_err(|_| refused(raw))?);
    }
    for chunk in ids.chunks(MEMBER_CHECK_CHUNK) {
        let any = ScimFilter::Or(
            chunk
                .iter()
                .map(|id| {
                    ScimFilter::Compare(
                        ScimAttr::Id,
                        ScimOp::Eq,
                        ScimValue::Str(id.as_str().to_owned()),
                    )
                })
                .collect(),
        );
        let limit = u32::try_from(chunk.len()).unwrap_or(u32::MAX);
        let page = tx
            .scim_users(
                &caller.tenant,
                caller.organization.as_ref(),
                Some(&any),
                None,
                0,
                limit,
            )
            .await?;
        let found: BTreeSet<&UserId> = page.users.iter().map(|p| &p.user.id).collect();
        if let Some(missing) = chunk.iter().find(|id| !found.contains(id)) {
            return Err(refused(missing.as_str()));
        }
    }
    Ok(ids)
}

fn taken() -> ScimError {
    ScimError::Uniqueness("displayName is already taken by another group".into())
}

fn is_taken(e: &StoreError) -> bool {
    matches!(e, StoreError::Conflict { constraint } if constraint == "scim_groups_display_name_key")
}

async fn record(
    tx: &mut dyn svc_store::WriteTx,
    ctx: &ManageContext,
    caller: &ScimCaller,
    meta: &RequestMeta,
    what: &str,
    id: &ScimGroupId,
) -> Result<(), ScimError> {
    let entry = audit::entry(
        ctx,
        &caller.actor(),
        meta,
        Some(&caller.tenant),
        what,
        Some(id.as_str()),
    );
    audit::record(tx, &entry).await?;
    Ok(())
}

/// A page of the groups in the caller's scope matching `filter`, in `sort` order (RFC 7644
/// §3.4.2): paging as for Users.
#[allow(clippy::too_many_arguments)] // the query's parameters, each distinct
pub async fn list(
    ctx: &ManageContext,
    settings: &ScimSettings,
    caller: &ScimCaller,
    base: &str,
    filter: Option<&str>,
    sort: Option<&ScimSort<ScimGroupAttr>>,
    start_index: Option<i64>,
    count: Option<i64>,
    projection: &Projection,
) -> Result<Value, ScimError> {
    let filter = filter
        .filter(|f| !f.trim().is_empty())
        .map(group_filter::parse)
        .transpose()?;
    let start = start_index.unwrap_or(1).max(1);
    let max = i64::from(settings.max_results);
    let count = count.unwrap_or(max).clamp(0, max);
    let mut tx = ctx.store.read().await?;
    let page = tx
        .scim_groups(
            &caller.tenant,
            caller.organization.as_ref(),
            filter.as_ref(),
            sort,
            u64::try_from(start - 1).unwrap_or(0),
            u32::try_from(count).unwrap_or(0),
        )
        .await?;
    tx.finish().await?;
    let resources: Vec<Value> = page
        .groups
        .iter()
        .map(|g| projection.apply(represent(g, base)))
        .collect();
    Ok(json!({
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
        "totalResults": page.total,
        "startIndex": start,
        "itemsPerPage": resources.len(),
        "Resources": resources,
    }))
}

/// The group `id` in the caller's scope.
///
/// Errors: [`ScimError::NotFound`].
pub async fn get(
    ctx: &ManageContext,
    caller: &ScimCaller,
    base: &str,
    id: &str,
) -> Result<Represented, ScimError> {
    let mut tx = ctx.store.read().await?;
    let group = visible(tx.as_mut(), caller, id).await?;
    tx.finish().await?;
    Ok(answer(&group, base))
}

/// Creates a group in the caller's scope from a Group resource.
///
/// Errors: [`ScimError::InvalidSyntax`], [`ScimError::InvalidValue`] (the body, or a member
/// the token cannot see); [`ScimError::Uniqueness`] for a taken `displayName`.
pub async fn create(
    ctx: &ManageContext,
    caller: &ScimCaller,
    meta: &RequestMeta,
    base: &str,
    body: &Value,
) -> Result<Represented, ScimError> {
    let input = group_resource::read_input(body)?;
    let now = ctx.now();
    let group = ScimGroup {
        id: ScimGroupId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        tenant_id: caller.tenant.clone(),
        organization_id: caller.organization.clone(),
        display_name: input.display_name,
        external_id: input.external_id,
        created_at: now,
        updated_at: now,
    };
    let mut tx = ctx.store.write().await?;
    let members = members_visible(tx.as_mut(), caller, &input.members).await?;
    match tx.insert_scim_group(&group).await {
        Err(e) if is_taken(&e) => return Err(taken()),
        other => other?,
    }
    tx.set_scim_group_members(&caller.tenant, &group.id, &members)
        .await?;
    record(
        tx.as_mut(),
        ctx,
        caller,
        meta,
        action::SCIM_GROUP_CREATED,
        &group.id,
    )
    .await?;
    let stored = visible(tx.as_mut(), caller, group.id.as_str()).await?;
    tx.commit().await?;
    Ok(answer(&stored, base))
}

/// Replaces the group `id` with a Group resource (RFC 7644 §3.5.1): name, `externalId`
/// (absent clears it) and members (absent empties the group).
///
/// Errors: as [`create`]; [`ScimError::NotFound`]; [`ScimError::PreconditionFailed`];
/// [`ScimError::Mutability`] for another `id`.
#[allow(clippy::too_many_arguments)] // the request's facts, each distinct
pub async fn replace(
    ctx: &ManageContext,
    caller: &ScimCaller,
    meta: &RequestMeta,
    base: &str,
    id: &str,
    body: &Value,
    precondition: &Precondition,
) -> Result<Represented, ScimError> {
    let input = group_resource::read_input(body)?;
    if input.id.as_deref().is_some_and(|given| given != id) {
        return Err(ScimError::Mutability("id cannot be changed".into()));
    }
    let mut tx = ctx.store.write().await?;
    let current = visible(tx.as_mut(), caller, id).await?;
    check(precondition, &current)?;
    let stored = overwrite(tx.as_mut(), ctx, caller, meta, current, input).await?;
    tx.commit().await?;
    Ok(answer(&stored, base))
}

/// Applies a PATCH (RFC 7644 §3.5.2) to the group `id` (see `group_resource` for what is
/// accepted), then writes the result as [`replace`] does.
///
/// Errors: as [`replace`]; [`ScimError::InvalidPath`] for the operations.
#[allow(clippy::too_many_arguments)] // the request's facts, each distinct
pub async fn patch(
    ctx: &ManageContext,
    caller: &ScimCaller,
    meta: &RequestMeta,
    base: &str,
    id: &str,
    body: &Value,
    precondition: &Precondition,
) -> Result<Represented, ScimError> {
    let operations = patch::read(body)?;
    let mut tx = ctx.store.write().await?;
    let current = visible(tx.as_mut(), caller, id).await?;
    check(precondition, &current)?;
    let mut input = GroupInput {
        id: Some(current.group.id.as_str().to_owned()),
        display_name: current.group.display_name.clone(),
        external_id: current.group.external_id.clone(),
        members: current
            .members
            .iter()
            .map(|m| m.as_str().to_owned())
            .collect(),
    };
    group_resource::apply(&mut input, &operations)?;
    let stored = overwrite(tx.as_mut(), ctx, caller, meta, current, input).await?;
    tx.commit().await?;
    Ok(answer(&stored, base))
}

/// Writes `input` over `current` within `tx` (only what changed), audited; the group as now
/// stored.
async fn overwrite(
    tx: &mut dyn svc_store::WriteTx,
    ctx: &ManageContext,
    caller: &ScimCaller,
    meta: &RequestMeta,
    current: ScimGroupRecord,
    input: GroupInput,
) -> Result<ScimGroupRecord, ScimError> {
    let added: Vec<String> = input
        .members
        .iter()
        .filter(|m| !current.members.iter().any(|c| c.as_str() == m.as_str()))
        .cloned()
        .collect();
    members_visible(tx, caller, &added).await?;
    let mut members = Vec::with_capacity(input.members.len());
    for raw in &input.members {
        // Checked above (new ones) or read from the store (kept ones): each parses.
        if let Ok(id) = UserId::parse(raw) {
            members.push(id);
        }
    }
    let old: BTreeSet<&UserId> = current.members.iter().collect();
    let new: BTreeSet<&UserId> = members.iter().collect();
    let group = &current.group;
    let same_fields =
        group.display_name == input.display_name && group.external_id == input.external_id;
    if same_fields && old == new {
        return Ok(current);
    }
    let changed = ScimGroup {
        display_name: input.display_name,
        external_id: input.external_id,
        updated_at: after(group.updated_at, ctx.now()),
        ..group.clone()
    };
    match tx.update_scim_group(&changed).await {
        Err(e) if is_taken(&e) => return Err(taken()),
        Ok(false) => return Err(ScimError::NotFound),
        other => {
            other?;
        }
    }
    if old != new {
        tx.set_scim_group_members(&caller.tenant, &changed.id, &members)
            .await?;
    }
    record(
        tx,
        ctx,
        caller,
        meta,
        action::SCIM_GROUP_UPDATED,
        &changed.id,
    )
    .await?;
    visible(tx, caller, changed.id.as_str()).await
}

/// Deletes the group `id` (RFC 7644 §3.6) and its member list; the people and their
/// organization memberships stay.
///
/// Errors: [`ScimError::NotFound`]; [`ScimError::PreconditionFailed`].
pub async fn delete(
    ctx: &ManageContext,
    caller: &ScimCaller,
    meta: &RequestMeta,
    id: &str,
    precondition: &Precondition,
) -> Result<(), ScimError> {
    let mut tx = ctx.store.write().await?;
    let current = visible(tx.as_mut(), caller, id).await?;
    check(precondition, &current)?;
    let id = &current.group.id;
    if !tx
        .delete_scim_group(&caller.tenant, caller.organization.as_ref(), id)
        .await?
    {
        return Err(ScimError::NotFound);
    }
    record(
        tx.as_mut(),
        ctx,
        caller,
        meta,
        action::SCIM_GROUP_DELETED,
        id,
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Adds the read-only `groups` attribute (RFC 7643 §4.1.2) to User resources: the groups of
/// the caller's scope each person belongs to (`value`, `$ref`, `display`, `type: "direct"`).
pub(crate) async fn with_groups<T: ScimGroupReads + Send + ?Sized>(
    tx: &mut T,
    caller: &ScimCaller,
    base: &str,
    resources: &mut [(UserId, &mut Value)],
) -> Result<(), ScimError> {
    let ids: Vec<UserId> = resources.iter().map(|(id, _)| id.clone()).collect();
    let memberships = tx
        .scim_groups_of_users(&caller.tenant, caller.organization.as_ref(), &ids)
        .await?;
    for (id, resource) in resources.iter_mut() {
        let groups: Vec<Value> = memberships
            .iter()
            .filter(|m| &m.user_id == id)
            .map(|m| {
                json!({
                    "value": m.group_id.as_str(),
                    "$ref": format!("{base}/Groups/{}", m.group_id),
                    "display": m.display_name,
                    "type": "direct",
                })
            })
            .collect();
        if !groups.is_empty()
            && let Value::Object(object) = resource
        {
            object.insert("groups".into(), Value::Array(groups));
        }
    }
    Ok(())
}
