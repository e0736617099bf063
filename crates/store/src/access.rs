//! Ports of the access model: API resources with their permissions, custom roles, the
//! permissions roles hold ("grants", built-in roles included), and the tenant roles of
//! applications. Every call takes the tenant, so another tenant's resource or role reads as
//! absent.
//!
//! A grant references its resource's permission (a foreign key), so a role can hold only a
//! permission that exists, and removing the permission or deleting the resource removes it from
//! every role in the same statement. Grants do not reference `roles`: built-in roles have no
//! row. Which role keys may be created, assigned or given which permissions, and that a role
//! may not be deleted while anyone holds it, are the management use cases' rules.

use crate::{Order, StoreError, UpdateOutcome};
use async_trait::async_trait;
use std::collections::BTreeSet;
use svc_domain::{
    ApiResource, ApiResourceId, ClientId, PermissionName, Role, RoleGrant, RoleKey, TenantId,
};
use time::OffsetDateTime;

/// Reads of API resources, roles and grants.
#[async_trait]
pub trait AccessReads {
    /// The API resource `id` of `tenant`, with its permissions sorted by name.
    async fn api_resource(
        &mut self,
        tenant: &TenantId,
        id: &ApiResourceId,
    ) -> Result<Option<ApiResource>, StoreError>;

    /// The API resource of `tenant` whose identifier is exactly `identifier`.
    async fn api_resource_by_identifier(
        &mut self,
        tenant: &TenantId,
        identifier: &str,
    ) -> Result<Option<ApiResource>, StoreError>;

    /// Up to `limit` API resources of `tenant` in id `order`, past the cursor `after`, each with
    /// its permissions.
    async fn list_api_resources(
        &mut self,
        tenant: &TenantId,
        after: Option<&ApiResourceId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<ApiResource>, StoreError>;

    /// The custom role `key` of `tenant` (built-in roles are not stored).
    async fn role(&mut self, tenant: &TenantId, key: &RoleKey) -> Result<Option<Role>, StoreError>;

    /// Every custom role of `tenant`, in key order (the API caps how many a tenant creates).
    async fn list_roles(&mut self, tenant: &TenantId) -> Result<Vec<Role>, StoreError>;

    /// The grants held by any of `roles` in `tenant`, sorted (role, resource, permission).
    /// An empty set reads nothing.
    async fn role_grants(
        &mut self,
        tenant: &TenantId,
        roles: &BTreeSet<RoleKey>,
    ) -> Result<Vec<RoleGrant>, StoreError>;

    /// How many people (tenant roles), organization memberships and applications hold the role
    /// `key` in `tenant`.
    async fn role_holders(&mut self, tenant: &TenantId, key: &RoleKey) -> Result<u64, StoreError>;

    /// The tenant roles the application `client` of `tenant` holds.
    async fn application_roles(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
    ) -> Result<BTreeSet<RoleKey>, StoreError>;
}

/// Writes of API resources, roles and grants.
#[async_trait]
pub trait AccessWrites {
    /// The custom role `key` of `tenant`, read for assigning it: until this transaction ends,
    /// a deletion of the role waits for it (PostgreSQL `FOR KEY SHARE`; SQLite serialises
    /// writers anyway), and a deletion in progress is waited for, so an assignment and a
    /// deletion never both commit. Read-only transactions cannot lock, hence a write method.
    async fn lock_role(
        &mut self,
        tenant: &TenantId,
        key: &RoleKey,
    ) -> Result<Option<Role>, StoreError>;

    /// Stores a new API resource with its permissions. An identifier the tenant already uses is
    /// [`StoreError::Conflict`] on `api_resources_tenant_identifier_key`; a tenant that does not
    /// exist on `api_resources_tenant_id_fkey`.
    async fn insert_api_resource(&mut self, resource: &ApiResource) -> Result<(), StoreError>;

    /// Replaces the name, the permissions (descriptions of kept ones updated, removed ones
    /// deleted with every grant of them, new ones inserted) and `updated_at`, but only while the
    /// stored `updated_at` still equals `read_at`: [`UpdateOutcome::Stale`] otherwise,
    /// [`StoreError::NotFound`] when absent. The identifier is never changed.
    async fn update_api_resource_if_unchanged(
        &mut self,
        resource: &ApiResource,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError>;

    /// Deletes the API resource `id` of `tenant`, its permissions and every grant of them;
    /// false when absent.
    async fn delete_api_resource(
        &mut self,
        tenant: &TenantId,
        id: &ApiResourceId,
    ) -> Result<bool, StoreError>;

    /// Stores a new custom role. A key the tenant already uses is [`StoreError::Conflict`] on
    /// `roles_pkey`; a tenant that does not exist on `roles_tenant_id_fkey`.
    async fn insert_role(&mut self, role: &Role) -> Result<(), StoreError>;

    /// Replaces the description and `updated_at` of a custom role while the stored `updated_at`
    /// still equals `read_at` (compare-and-set); [`StoreError::NotFound`] when absent.
    async fn update_role_if_unchanged(
        &mut self,
        role: &Role,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError>;

    /// Deletes the custom role `key` of `tenant` and its grants; false when absent. The row
    /// lock it takes makes a concurrent [`AccessWrites::lock_role`] wait, so the caller can count
    /// holders after it and roll back. Never call it for a built-in key (it would clear that
    /// role's grants): which roles may be deleted is the use case's rule.
    async fn delete_role(&mut self, tenant: &TenantId, key: &RoleKey) -> Result<bool, StoreError>;

    /// Replaces the grants of the role `role` (built-in or custom) with `grants` (resource id,
    /// permission). A permission its resource does not define is [`StoreError::Conflict`] on
    /// `role_permissions_permission_fkey`.
    async fn replace_role_grants(
        &mut self,
        tenant: &TenantId,
        role: &RoleKey,
        grants: &BTreeSet<(ApiResourceId, PermissionName)>,
    ) -> Result<(), StoreError>;

    /// Replaces the tenant roles of the application `client` (which the caller has read as the
    /// tenant's): rows of roles no longer held are deleted, new ones inserted with `now`.
    async fn replace_application_roles(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
        roles: &BTreeSet<RoleKey>,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;
}
