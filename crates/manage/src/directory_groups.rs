//! Directory groups mapped to roles (issue 20: "Groups mapped to roles"): the tenant's own SCIM
//! groups (those its directory pushes to `/scim/v2/Groups` with a tenant token, not an
//! organization's) listed for administrators, and each one mapped to tenant roles that every
//! member holds for as long as they are a member, besides the roles given to them directly.
//!
//! Rules:
//! - Only the tenant's own groups can be mapped; an organization's group, another tenant's, a
//!   malformed or unknown id are all not found.
//! - The roles are the same as a person's tenant roles (`tenant_admin` or a custom role of kind
//!   `tenant`, at most 16, replaced as a set; [`crate::users::roles::check_roles`]), so a group
//!   grants nothing a caller with `users:write` could not grant one person.
//! - Authorization reads a person's roles through `granted_roles` (direct ∪ groups): adding a
//!   person to the group in the directory gives them the roles on their next token; removing
//!   them, deleting the group or deprovisioning the person takes them away the same way (tokens
//!   already issued keep the `roles` they were issued with until they expire).
//! - A change is audited as `directory_group.roles_changed` (target: the group); the same set
//!   again writes nothing. No webhook event is emitted (neither for the group nor its members).
//! - A custom role mapped to a group counts as held: deleting it is refused until unmapped.

use crate::audit::{self, action};
use crate::page::split_page;
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use svc_domain::{RoleKey, RoleKind, ScimGroupId, TenantId};
use svc_store::{ScimFilter, ScimGroupAttr, ScimGroupReads, ScimGroupRecord, ScimOp, ScimValue};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// A directory group as the management API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "scimg_01jd2n4k6m8p0r2t4v6x8z0b2d", "display_name": "Engineering",
    "external_id": "7f3c…", "member_count": 12, "roles": ["developer"],
    "updated_at": "2026-11-26T10:00:00Z"}))]
pub struct DirectoryGroupView {
    /// The group's id (its SCIM `id`).
    pub id: String,
    /// Its `displayName` in the directory.
    pub display_name: String,
    /// The directory's own identifier for it (SCIM `externalId`), when sent.
    pub external_id: Option<String>,
    /// How many people are members now.
    pub member_count: usize,
    /// The tenant roles its members hold through it, sorted.
    pub roles: Vec<String>,
    /// Last change of its name, `externalId` or members by the directory (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

/// Body of `PUT /api/v1/directory-groups/{id}/roles`. Unknown fields are refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"roles": ["developer"]}))]
pub struct GroupRolesInput {
    /// The tenant roles the group's members hold through it from now on, replacing the
    /// previous ones: at most 16 entries, each `tenant_admin` or the key of a custom tenant
    /// role; repeats collapse, and `[]` maps the group to no role.
    #[schema(value_type = Vec<crate::users::TenantRoleSchema>, max_items = 16)]
    pub roles: Vec<String>,
}

fn view(record: &ScimGroupRecord, roles: &BTreeSet<RoleKey>) -> DirectoryGroupView {
    DirectoryGroupView {
        id: record.group.id.as_str().to_owned(),
        display_name: record.group.display_name.clone(),
        external_id: record.group.external_id.clone(),
        member_count: record.members.len(),
        roles: roles.iter().map(|r| r.as_str().to_owned()).collect(),
        updated_at: record.group.updated_at,
    }
}

/// The tenant's own group `id`, or not found.
async fn own_group<T: ScimGroupReads + Send + ?Sized>(
    tx: &mut T,
    tenant: &TenantId,
    id: &ScimGroupId,
) -> Result<ScimGroupRecord, ManageError> {
    let by_id = ScimFilter::Compare(
        ScimGroupAttr::Id,
        ScimOp::Eq,
        ScimValue::Str(id.as_str().to_owned()),
    );
    let page = tx
        .scim_groups(tenant, None, Some(&by_id), None, 0, 1)
        .await?;
    page.groups.into_iter().next().ok_or(ManageError::NotFound)
}

/// The tenant's own directory groups in id order after `after`, at most `limit` (default 50,
/// clamped to 1..=200), each with its roles; and the cursor of the next page.
pub async fn list(
    ctx: &ManageContext,
    tenant: &TenantId,
    after: Option<&ScimGroupId>,
    limit: Option<u32>,
) -> Result<(Vec<DirectoryGroupView>, Option<String>), ManageError> {
    let limit = crate::page::clamp_limit(limit);
    let after = after.map(|id| {
        ScimFilter::Compare(
            ScimGroupAttr::Id,
            ScimOp::Gt,
            ScimValue::Str(id.as_str().to_owned()),
        )
    });
    let mut tx = ctx.store.read().await?;
    let page = tx
        .scim_groups(
            tenant,
            None,
            after.as_ref(),
            None,
            0,
            limit.saturating_add(1),
        )
        .await?;
    let (records, next) = split_page(page.groups, limit, |r| r.group.id.as_str().to_owned());
    let mut items = Vec::with_capacity(records.len());
    for record in &records {
        let roles = tx.scim_group_roles(tenant, &record.group.id).await?;
        items.push(view(record, &roles));
    }
    tx.finish().await?;
    Ok((items, next))
}

/// The tenant's own directory group `id` with its roles.
///
/// Errors: [`ManageError::NotFound`] for anything but one of the tenant's own groups.
pub async fn get(
    ctx: &ManageContext,
    tenant: &TenantId,
    id: &ScimGroupId,
) -> Result<DirectoryGroupView, ManageError> {
    let mut tx = ctx.store.read().await?;
    let record = own_group(tx.as_mut(), tenant, id).await?;
    let roles = tx.scim_group_roles(tenant, id).await?;
    tx.finish().await?;
    Ok(view(&record, &roles))
}

/// Maps the tenant's own group `id` to exactly the roles of `input`, audited as
/// `directory_group.roles_changed` (target: the group). Returns the group after the change.
///
/// Errors: [`ManageError::Invalid`] naming `roles` (too many, or not a tenant role);
/// [`ManageError::NotFound`] for anything but one of the tenant's own groups.
pub async fn set_roles(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &ScimGroupId,
    input: GroupRolesInput,
) -> Result<DirectoryGroupView, ManageError> {
    let roles = crate::users::roles::check_roles(&input.roles)?;
    let mut tx = ctx.store.write().await?;
    let record = own_group(tx.as_mut(), tenant, id).await?;
    if let Some((key, kind)) =
        crate::roles::unassignable(tx.as_mut(), tenant, &roles, RoleKind::Tenant).await?
    {
        return Err(crate::users::roles::not_a_tenant_role(&key, kind));
    }
    let previous = tx.scim_group_roles(tenant, id).await?;
    if previous == roles {
        return Ok(view(&record, &previous));
    }
    tx.set_scim_group_roles(tenant, id, &roles, ctx.now())
        .await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::DIRECTORY_GROUP_ROLES_CHANGED,
        Some(id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    tx.commit().await?;
    Ok(view(&record, &roles))
}
