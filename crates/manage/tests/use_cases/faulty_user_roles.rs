//! The tenant-role ports of [`FaultyTx`]: delegation, and `set_user_roles` can be made to fail.

use crate::support::FaultyTx;
use async_trait::async_trait;
use std::collections::BTreeSet;
use svc_domain::{RoleKey, TenantId, UserId};
use svc_store::{StoreError, UserRoleReads, UserRoleWrites};
use time::OffsetDateTime;

#[async_trait]
impl UserRoleReads for FaultyTx {
    async fn user_roles(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<BTreeSet<RoleKey>, StoreError> {
        self.inner.user_roles(tenant, user).await
    }

    async fn granted_roles(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<BTreeSet<RoleKey>, StoreError> {
        self.inner.granted_roles(tenant, user).await
    }
}

#[async_trait]
impl UserRoleWrites for FaultyTx {
    async fn set_user_roles(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        roles: &BTreeSet<RoleKey>,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.check("set_user_roles")?;
        self.inner.set_user_roles(tenant, user, roles, now).await
    }
}
