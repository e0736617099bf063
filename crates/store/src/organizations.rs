//! Ports of organizations and their memberships. Every call takes the tenant, so another
//! tenant's organization reads as absent; a membership belongs to one organization of that
//! tenant (a foreign key on the tenant and the organization, so it cannot be planted in another
//! tenant's organization) and one person of that tenant. The person side is not a foreign key:
//! users are never deleted (removal is a status) and `users` has no key on tenant and id to
//! reference, so, as for passkeys and guardians, the use case checks that the person exists in
//! the tenant before it stores a membership. Deleting an organization deletes its memberships
//! with it; deleting the tenant deletes both.
//!
//! Which roles a member may hold, and who may change them, is the management use cases' rule.

use crate::{Order, StoreError, UpdateOutcome};
use async_trait::async_trait;
use std::collections::BTreeSet;
use svc_domain::{Membership, OrgSlug, Organization, OrganizationId, RoleKey, TenantId, UserId};
use time::OffsetDateTime;

/// Reads of organizations and memberships.
#[async_trait]
pub trait OrganizationReads {
    /// The organization `id` of `tenant`, in any status.
    async fn organization(
        &mut self,
        tenant: &TenantId,
        id: &OrganizationId,
    ) -> Result<Option<Organization>, StoreError>;

    /// The organization of `tenant` with `slug`, in any status.
    async fn organization_by_slug(
        &mut self,
        tenant: &TenantId,
        slug: &OrgSlug,
    ) -> Result<Option<Organization>, StoreError>;

    /// Up to `limit` organizations of `tenant` in id `order`, past the cursor `after`.
    async fn list_organizations(
        &mut self,
        tenant: &TenantId,
        after: Option<&OrganizationId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<Organization>, StoreError>;

    /// The membership of `user` in the organization `org` of `tenant`.
    async fn membership(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        user: &UserId,
    ) -> Result<Option<Membership>, StoreError>;

    /// Up to `limit` memberships of the organization `org`, in user-id order past `after`.
    async fn list_members(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        after: Option<&UserId>,
        limit: u32,
    ) -> Result<Vec<Membership>, StoreError>;

    /// Every membership of `user` in `tenant`, in organization-id order (a person belongs to a
    /// bounded number of organizations; the API caps it).
    async fn memberships_of_user(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Vec<Membership>, StoreError>;

    /// The roles `user` holds in the organization `org` of `tenant`, for authorization: those
    /// of the membership and those the organization's own directory groups (SCIM groups in its
    /// scope) grant the groups' members, sorted; `None` when the person is not a member (a
    /// group grants nothing to someone outside the organization). Views of a membership show
    /// [`OrganizationReads::membership`]'s own roles instead: writing those back must never
    /// turn a group's grant into a direct one.
    async fn held_organization_roles(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        user: &UserId,
    ) -> Result<Option<BTreeSet<RoleKey>>, StoreError>;
}

/// Writes of organizations and memberships.
#[async_trait]
pub trait OrganizationWrites {
    /// Stores a new organization. A slug the tenant already uses is [`StoreError::Conflict`]
    /// on `organizations_tenant_slug_key`; a tenant that does not exist on
    /// `organizations_tenant_id_fkey`.
    async fn insert_organization(&mut self, org: &Organization) -> Result<(), StoreError>;

    /// Replaces slug, name, metadata, status and `updated_at`, but only while the stored
    /// `updated_at` still equals `read_at` (compare-and-set, as for users):
    /// [`UpdateOutcome::Stale`] otherwise, [`StoreError::NotFound`] when absent, the same slug
    /// conflict as insert.
    async fn update_organization_if_unchanged(
        &mut self,
        org: &Organization,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError>;

    /// Deletes the organization `id` of `tenant` and its memberships; false when absent.
    async fn delete_organization(
        &mut self,
        tenant: &TenantId,
        id: &OrganizationId,
    ) -> Result<bool, StoreError>;

    /// Stores a new membership. The person already a member is [`StoreError::Conflict`] on
    /// `organization_members_pkey`; an organization that is not the tenant's (or does not
    /// exist) on `organization_members_organization_fkey`. Whether the person is one of the
    /// tenant's is not checked here (see the module documentation): the caller has read them.
    /// Empty roles are refused by the schema ([`StoreError::Corrupt`]).
    async fn insert_membership(&mut self, membership: &Membership) -> Result<(), StoreError>;

    /// Replaces the roles of a membership and its `updated_at`; false when there is no such
    /// membership. Empty roles are refused by the schema ([`StoreError::Corrupt`]).
    async fn update_membership_roles(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        user: &UserId,
        roles: &BTreeSet<RoleKey>,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError>;

    /// Deletes a membership; false when there was none.
    async fn delete_membership(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        user: &UserId,
    ) -> Result<bool, StoreError>;
}
