//! The access-model ports of [`FaultyTx`] (API resources, roles, grants, application roles):
//! delegation, and each write can be made to fail.

use crate::support::FaultyTx;
use async_trait::async_trait;
use std::collections::BTreeSet;
use svc_domain::{
    ApiResource, ApiResourceId, ClientId, PermissionName, Role, RoleGrant, RoleKey, TenantId,
};
use svc_store::{AccessReads, AccessWrites, Order, StoreError, UpdateOutcome};
use time::OffsetDateTime;

#[async_trait]
impl AccessReads for FaultyTx {
    async fn api_resource(
        &mut self,
        tenant: &TenantId,
        id: &ApiResourceId,
    ) -> Result<Option<ApiResource>, StoreError> {
        self.inner.api_resource(tenant, id).await
    }
    async fn api_resource_by_identifier(
        &mut self,
        tenant: &TenantId,
        identifier: &str,
    ) -> Result<Option<ApiResource>, StoreError> {
        self.inner
            .api_resource_by_identifier(tenant, identifier)
            .await
    }
    async fn list_api_resources(
        &mut self,
        tenant: &TenantId,
        after: Option<&ApiResourceId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<ApiResource>, StoreError> {
        self.inner
            .list_api_resources(tenant, after, order, limit)
            .await
    }
    async fn role(&mut self, tenant: &TenantId, key: &RoleKey) -> Result<Option<Role>, StoreError> {
        self.inner.role(tenant, key).await
    }
    async fn list_roles(&mut self, tenant: &TenantId) -> Result<Vec<Role>, StoreError> {
        self.inner.list_roles(tenant).await
    }
    async fn role_grants(
        &mut self,
        tenant: &TenantId,
        roles: &BTreeSet<RoleKey>,
    ) -> Result<Vec<RoleGrant>, StoreError> {
        self.inner.role_grants(tenant, roles).await
    }
    async fn role_holders(&mut self, tenant: &TenantId, key: &RoleKey) -> Result<u64, StoreError> {
        self.inner.role_holders(tenant, key).await
    }
    async fn application_roles(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
    ) -> Result<BTreeSet<RoleKey>, StoreError> {
        self.inner.application_roles(tenant, client).await
    }
}

#[async_trait]
impl AccessWrites for FaultyTx {
    async fn lock_role(
        &mut self,
        tenant: &TenantId,
        key: &RoleKey,
    ) -> Result<Option<Role>, StoreError> {
        self.inner.lock_role(tenant, key).await
    }
    async fn insert_api_resource(&mut self, resource: &ApiResource) -> Result<(), StoreError> {
        self.check("insert_api_resource")?;
        self.inner.insert_api_resource(resource).await
    }
    async fn update_api_resource_if_unchanged(
        &mut self,
        resource: &ApiResource,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError> {
        self.check("update_api_resource_if_unchanged")?;
        self.inner
            .update_api_resource_if_unchanged(resource, read_at)
            .await
    }
    async fn delete_api_resource(
        &mut self,
        tenant: &TenantId,
        id: &ApiResourceId,
    ) -> Result<bool, StoreError> {
        self.check("delete_api_resource")?;
        self.inner.delete_api_resource(tenant, id).await
    }
    async fn insert_role(&mut self, role: &Role) -> Result<(), StoreError> {
        self.check("insert_role")?;
        self.inner.insert_role(role).await
    }
    async fn update_role_if_unchanged(
        &mut self,
        role: &Role,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError> {
        self.check("update_role_if_unchanged")?;
        self.inner.update_role_if_unchanged(role, read_at).await
    }
    async fn delete_role(&mut self, tenant: &TenantId, key: &RoleKey) -> Result<bool, StoreError> {
        self.check("delete_role")?;
        self.inner.delete_role(tenant, key).await
    }
    async fn replace_role_grants(
        &mut self,
        tenant: &TenantId,
        role: &RoleKey,
        grants: &BTreeSet<(ApiResourceId, PermissionName)>,
    ) -> Result<(), StoreError> {
        self.check("replace_role_grants")?;
        self.inner.replace_role_grants(tenant, role, grants).await
    }
    async fn replace_application_roles(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
        roles: &BTreeSet<RoleKey>,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.check("replace_application_roles")?;
        self.inner
            .replace_application_roles(tenant, client, roles, now)
            .await
    }
}
