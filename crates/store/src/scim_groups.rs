//! Port of SCIM 2.0 groups (RFC 7643 §4.2): the groups a directory maintains in a tenant or in
//! one organization of it, their members, and the filtered, sorted listing `GET /Groups` needs.
//!
//! A group's scope is fixed at creation: the tenant (`organization_id` `None`) or one
//! organization. Every read and write names the scope, so a tenant's token never sees an
//! organization's groups and one organization's never another's. Members are people of the
//! tenant; removed people are never listed. The caller (the SCIM use cases) checks that every
//! member is visible to the token before writing: the store only keeps the rows.

use crate::{ScimFilter, ScimSort, StoreError};
use async_trait::async_trait;
use std::collections::BTreeSet;
use svc_domain::{OrganizationId, RoleKey, ScimGroup, ScimGroupId, TenantId, UserId};
use time::OffsetDateTime;

/// Attributes of a group a SCIM filter may test or a listing may sort by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScimGroupAttr {
    /// `id` (`caseExact`).
    Id,
    /// `displayName` (compared ignoring case).
    DisplayName,
    /// `externalId` (`caseExact`).
    ExternalId,
    /// `members.value` (and `members`): the id of some member (`caseExact`); a comparison
    /// holds when it holds for at least one member.
    Member,
    /// `meta.created` (a time).
    Created,
    /// `meta.lastModified` (a time).
    LastModified,
}

/// A group with its members (people of the tenant that are not removed), in id order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimGroupRecord {
    /// The group.
    pub group: ScimGroup,
    /// Its members.
    pub members: Vec<UserId>,
}

/// One page of a group listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimGroupPage {
    /// How many groups match in all.
    pub total: u64,
    /// The page, in the order asked.
    pub groups: Vec<ScimGroupRecord>,
}

/// One group one person belongs to (a User's read-only `groups` attribute).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimGroupMembership {
    /// The person.
    pub user_id: UserId,
    /// The group.
    pub group_id: ScimGroupId,
    /// Its `displayName`.
    pub display_name: String,
}

/// Reads of SCIM groups.
#[async_trait]
pub trait ScimGroupReads {
    /// The groups of `tenant` in the scope `organization` (`None`: the tenant's own groups,
    /// not an organization's) matching `filter` when given: how many in all, and `limit` of
    /// them with their members in `sort` order (id order without one) past the first `offset`.
    #[allow(clippy::too_many_arguments)] // the query's parameters, each distinct
    async fn scim_groups(
        &mut self,
        tenant: &TenantId,
        organization: Option<&OrganizationId>,
        filter: Option<&ScimFilter<ScimGroupAttr>>,
        sort: Option<&ScimSort<ScimGroupAttr>>,
        offset: u64,
        limit: u32,
    ) -> Result<ScimGroupPage, StoreError>;

    /// The groups in the scope `organization` of `tenant` that each of `users` belongs to, in
    /// user then group id order.
    async fn scim_groups_of_users(
        &mut self,
        tenant: &TenantId,
        organization: Option<&OrganizationId>,
        users: &[UserId],
    ) -> Result<Vec<ScimGroupMembership>, StoreError>;

    /// The roles the group `id` of `tenant` grants its members, sorted: tenant roles for one of
    /// the tenant's own groups, organization roles for an organization's; empty when none (or
    /// no such group of the tenant). The caller has checked the group's scope.
    async fn scim_group_roles(
        &mut self,
        tenant: &TenantId,
        id: &ScimGroupId,
    ) -> Result<BTreeSet<RoleKey>, StoreError>;
}

/// Writes of SCIM groups.
#[async_trait]
pub trait ScimGroupWrites {
    /// Stores a new group without members. [`StoreError::Conflict`] naming
    /// `scim_groups_display_name_key` when another group of the same scope has the
    /// `displayName` (ignoring case), `scim_groups_tenant_id_fkey` when the tenant (or
    /// `scim_groups_organization_fkey` when the organization) does not exist.
    async fn insert_scim_group(&mut self, group: &ScimGroup) -> Result<(), StoreError>;

    /// Replaces the name, `externalId` and `updated_at` of the group `group.id` in its scope;
    /// whether it existed. [`StoreError::Conflict`] naming `scim_groups_display_name_key` as
    /// [`ScimGroupWrites::insert_scim_group`].
    async fn update_scim_group(&mut self, group: &ScimGroup) -> Result<bool, StoreError>;

    /// Makes `members` (people of `tenant`) the members of the group `id`, replacing the
    /// previous ones. [`StoreError::Conflict`] naming `scim_group_members_user_fkey` when a
    /// person does not exist.
    async fn set_scim_group_members(
        &mut self,
        tenant: &TenantId,
        id: &ScimGroupId,
        members: &[UserId],
    ) -> Result<(), StoreError>;

    /// Makes `roles` the roles the group `id` of `tenant` grants its members (tenant roles for
    /// the tenant's own group, organization roles for an organization's: the caller checks the
    /// scope and the kind), replacing the previous ones (kept roles keep their time, new ones
    /// are stamped `now`). [`StoreError::Conflict`] naming
    /// `scim_group_roles_group_fkey` when it does not exist.
    async fn set_scim_group_roles(
        &mut self,
        tenant: &TenantId,
        id: &ScimGroupId,
        roles: &BTreeSet<RoleKey>,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;

    /// Deletes the group `id` of the scope `organization` of `tenant` with its member rows
    /// (the people and their organization memberships stay); whether it existed.
    async fn delete_scim_group(
        &mut self,
        tenant: &TenantId,
        organization: Option<&OrganizationId>,
        id: &ScimGroupId,
    ) -> Result<bool, StoreError>;
}
