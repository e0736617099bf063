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
//!
//! An organization's groups (those its own directory pushes with an organization SCIM token)
//! map the same way to **organization** roles (`owner`, `admin`, `member` or a custom
//! organization role), read with the membership wherever the organization's roles decide
//! something (`org_roles` claim, API permissions, policies, management scopes, the management
//! API's reach): a member of the organization who is in the group holds them there besides
//! their membership's own; someone who is not a member gains nothing (a group never makes a
//! member). Mapping follows the rules of changing a member's roles ([`Reach`]): callers limited
//! to another organization see none of its groups, an `admin` may neither map a group to
//! `owner` nor change a group that grants it. Membership views keep showing the membership's
//! own roles, so writing them back never turns a group's grant into a direct one.

use crate::audit::{self, action};
use crate::organizations::input::{check_roles as check_org_roles, custom_roles_refused};
use crate::page::split_page;
use crate::{Actor, ManageContext, ManageError, Reach, RequestMeta};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use svc_domain::{OrganizationId, RoleKey, RoleKind, ScimGroupId, TenantId};
use svc_store::{
    OrganizationReads, ScimFilter, ScimGroupAttr, ScimGroupReads, ScimGroupRecord, ScimOp,
    ScimValue,
};
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
    /// The roles its members hold through it, sorted: tenant roles for one of the tenant's own
    /// groups, roles in the organization for an organization's.
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

/// Body of `PUT /api/v1/organizations/{id}/scim/groups/{group_id}/roles`: the same shape as
/// [`GroupRolesInput`], with organization roles. Unknown fields are refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"roles": ["admin"]}))]
pub struct OrganizationGroupRolesInput {
    /// The organization roles the group's members hold in it through the group from now on,
    /// replacing the previous ones: at most 16 of `owner`, `admin`, `member` and the tenant's
    /// custom organization roles; repeats collapse, and `[]` maps the group to no role.
    #[schema(value_type = Vec<crate::organizations::OrgRoleSchema>, max_items = 16)]
    pub roles: Vec<String>,
}

impl From<OrganizationGroupRolesInput> for GroupRolesInput {
    fn from(input: OrganizationGroupRolesInput) -> Self {
        Self { roles: input.roles }
    }
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

/// The group `id` in the scope `org` of `tenant` (`None`: the tenant's own), or not found.
async fn group_in<T: ScimGroupReads + Send + ?Sized>(
    tx: &mut T,
    tenant: &TenantId,
    org: Option<&OrganizationId>,
    id: &ScimGroupId,
) -> Result<ScimGroupRecord, ManageError> {
    let by_id = ScimFilter::Compare(
        ScimGroupAttr::Id,
        ScimOp::Eq,
        ScimValue::Str(id.as_str().to_owned()),
    );
    let page = tx
        .scim_groups(tenant, org, Some(&by_id), None, 0, 1)
        .await?;
    page.groups.into_iter().next().ok_or(ManageError::NotFound)
}

/// Whose groups a call is about: the tenant's own, or one organization's as a caller with
/// `reach` sees it.
#[derive(Debug, Clone, Copy)]
pub enum GroupScope<'a> {
    /// The tenant's own groups, mapped to tenant roles.
    Tenant,
    /// The groups of the organization, mapped to its roles.
    Organization(&'a OrganizationId, &'a Reach),
}

impl<'a> GroupScope<'a> {
    fn organization(self) -> Option<&'a OrganizationId> {
        match self {
            Self::Tenant => None,
            Self::Organization(org, _) => Some(org),
        }
    }

    /// Rule: an organization the caller's reach does not cover, or that is not the tenant's,
    /// is not found.
    async fn check<T: OrganizationReads + Send + ?Sized>(
        self,
        tx: &mut T,
        tenant: &TenantId,
    ) -> Result<(), ManageError> {
        if let Self::Organization(org, reach) = self {
            reach.within(Some(org))?;
            if tx.organization(tenant, org).await?.is_none() {
                return Err(ManageError::NotFound);
            }
        }
        Ok(())
    }
}

/// The directory groups of `scope` in id order after `after`, at most `limit` (default 50,
/// clamped to 1..=200), each with its roles; and the cursor of the next page.
///
/// Errors: [`ManageError::NotFound`] for an organization outside the caller's reach or not
/// the tenant's.
pub async fn list(
    ctx: &ManageContext,
    tenant: &TenantId,
    scope: GroupScope<'_>,
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
    scope.check(tx.as_mut(), tenant).await?;
    let page = tx
        .scim_groups(
            tenant,
            scope.organization(),
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

/// The directory group `id` of `scope` with its roles.
///
/// Errors: [`ManageError::NotFound`] for anything but a group of that scope (and as
/// [`list`]).
pub async fn get(
    ctx: &ManageContext,
    tenant: &TenantId,
    scope: GroupScope<'_>,
    id: &ScimGroupId,
) -> Result<DirectoryGroupView, ManageError> {
    let mut tx = ctx.store.read().await?;
    scope.check(tx.as_mut(), tenant).await?;
    let record = group_in(tx.as_mut(), tenant, scope.organization(), id).await?;
    let roles = tx.scim_group_roles(tenant, id).await?;
    tx.finish().await?;
    Ok(view(&record, &roles))
}

/// Maps the group `id` of `scope` to exactly the roles of `input`, audited as
/// `directory_group.roles_changed` (target: the group). Returns the group after the change.
///
/// Errors: [`ManageError::Invalid`] naming `roles` (too many, or not a role of the scope's
/// kind); [`ManageError::NotFound`] for anything but a group of that scope (and as [`list`]);
/// [`ManageError::Forbidden`] for an organization `admin` mapping to `owner` or changing a
/// group that grants it.
pub async fn set_roles(
    ctx: &ManageContext,
    tenant: &TenantId,
    (actor, meta): (&Actor, &RequestMeta),
    scope: GroupScope<'_>,
    id: &ScimGroupId,
    input: GroupRolesInput,
) -> Result<DirectoryGroupView, ManageError> {
    let roles = match scope {
        GroupScope::Tenant => crate::users::roles::check_roles(&input.roles)?,
        // No role is a valid mapping ("this group grants nothing"), unlike a membership.
        GroupScope::Organization(..) if input.roles.is_empty() => BTreeSet::new(),
        GroupScope::Organization(_, reach) => {
            let roles = check_org_roles(&input.roles)?;
            reach.may_grant(&roles)?;
            roles
        }
    };
    let mut tx = ctx.store.write().await?;
    scope.check(tx.as_mut(), tenant).await?;
    let record = group_in(tx.as_mut(), tenant, scope.organization(), id).await?;
    match scope {
        GroupScope::Tenant => {
            if let Some((key, kind)) =
                crate::roles::unassignable(tx.as_mut(), tenant, &roles, RoleKind::Tenant).await?
            {
                return Err(crate::users::roles::not_a_tenant_role(&key, kind));
            }
        }
        GroupScope::Organization(..) => custom_roles_refused(tx.as_mut(), tenant, &roles).await?,
    }
    let previous = tx.scim_group_roles(tenant, id).await?;
    if let GroupScope::Organization(_, reach) = scope {
        reach.may_change(&previous)?;
    }
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
