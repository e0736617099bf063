//! The organization ports of [`FaultyTx`]: plain delegation.

use crate::support::FaultyTx;
use async_trait::async_trait;
use std::collections::BTreeSet;
use svc_domain::{Membership, OrgSlug, Organization, OrganizationId, RoleKey, TenantId, UserId};
use svc_store::{Order, OrganizationReads, OrganizationWrites, StoreError, UpdateOutcome};
use time::OffsetDateTime;

#[async_trait]
impl OrganizationReads for FaultyTx {
    async fn organization(
        &mut self,
        tenant: &TenantId,
        id: &OrganizationId,
    ) -> Result<Option<Organization>, StoreError> {
        self.inner.organization(tenant, id).await
    }
    async fn organization_by_slug(
        &mut self,
        tenant: &TenantId,
        slug: &OrgSlug,
    ) -> Result<Option<Organization>, StoreError> {
        self.inner.organization_by_slug(tenant, slug).await
    }
    async fn list_organizations(
        &mut self,
        tenant: &TenantId,
        after: Option<&OrganizationId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<Organization>, StoreError> {
        self.inner
            .list_organizations(tenant, after, order, limit)
            .await
    }
    async fn membership(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        user: &UserId,
    ) -> Result<Option<Membership>, StoreError> {
        self.inner.membership(tenant, org, user).await
    }
    async fn list_members(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        after: Option<&UserId>,
        limit: u32,
    ) -> Result<Vec<Membership>, StoreError> {
        self.inner.list_members(tenant, org, after, limit).await
    }
    async fn memberships_of_user(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Vec<Membership>, StoreError> {
        self.inner.memberships_of_user(tenant, user).await
    }
    async fn held_organization_roles(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        user: &UserId,
    ) -> Result<Option<BTreeSet<RoleKey>>, StoreError> {
        self.inner.held_organization_roles(tenant, org, user).await
    }
}

#[async_trait]
impl OrganizationWrites for FaultyTx {
    async fn insert_organization(&mut self, org: &Organization) -> Result<(), StoreError> {
        self.inner.insert_organization(org).await
    }
    async fn update_organization_if_unchanged(
        &mut self,
        org: &Organization,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError> {
        self.inner
            .update_organization_if_unchanged(org, read_at)
            .await
    }
    async fn delete_organization(
        &mut self,
        tenant: &TenantId,
        id: &OrganizationId,
    ) -> Result<bool, StoreError> {
        self.inner.delete_organization(tenant, id).await
    }
    async fn insert_membership(&mut self, membership: &Membership) -> Result<(), StoreError> {
        self.inner.insert_membership(membership).await
    }
    async fn update_membership_roles(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        user: &UserId,
        roles: &BTreeSet<RoleKey>,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        self.inner
            .update_membership_roles(tenant, org, user, roles, now)
            .await
    }
    async fn delete_membership(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        user: &UserId,
    ) -> Result<bool, StoreError> {
        self.inner.delete_membership(tenant, org, user).await
    }
}
