//! Port of API keys: a tenant's long-lived management credentials, found by their keyed hash
//! within the tenant, listed by id or by the person or agent they act as, revoked, brought
//! forward to expire (rotation) and marked used; and each tenant's policy for the keys its
//! people create for themselves.

use crate::{Order, StoreError};
use async_trait::async_trait;
use svc_domain::{ApiKey, ApiKeyId, ApiKeyPolicy, KeySubject, SecretHash, TenantId};
use time::OffsetDateTime;

/// Reads of API keys.
#[async_trait]
pub trait ApiKeyReads {
    /// The key of `tenant` whose keyed hash is `hash`, revoked or expired ones included (the
    /// caller decides whether it is live, so every refusal takes the same path). The hash is
    /// the lookup key: a keyed hash of 256 random bits reveals nothing by how fast an index
    /// finds it.
    async fn api_key_by_hash(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
    ) -> Result<Option<ApiKey>, StoreError>;

    /// The key `id` of `tenant`.
    async fn api_key(
        &mut self,
        tenant: &TenantId,
        id: &ApiKeyId,
    ) -> Result<Option<ApiKey>, StoreError>;

    /// Up to `limit` keys of `tenant` past `after` in `order` of ids (creation order).
    async fn api_keys(
        &mut self,
        tenant: &TenantId,
        after: Option<&ApiKeyId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<ApiKey>, StoreError>;

    /// How many keys of `tenant` still work at `now`: not revoked, not expired.
    async fn count_live_api_keys(
        &mut self,
        tenant: &TenantId,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError>;

    /// Up to `limit` keys of `tenant` acting as `subject`, newest first, revoked and expired
    /// ones included.
    async fn subject_api_keys(
        &mut self,
        tenant: &TenantId,
        subject: &KeySubject,
        limit: u32,
    ) -> Result<Vec<ApiKey>, StoreError>;

    /// How many keys of `tenant` acting as `subject` still work at `now`.
    async fn count_live_subject_api_keys(
        &mut self,
        tenant: &TenantId,
        subject: &KeySubject,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError>;

    /// The policy of `tenant` for its people's own keys; the default (nobody may) until set.
    async fn api_key_policy(&mut self, tenant: &TenantId) -> Result<ApiKeyPolicy, StoreError>;
}

/// Writes of API keys.
#[async_trait]
pub trait ApiKeyWrites {
    /// Stores a key. [`StoreError::Conflict`] naming `api_keys_tenant_id_fkey` when the tenant
    /// does not exist.
    async fn insert_api_key(&mut self, key: &ApiKey) -> Result<(), StoreError>;

    /// Revokes the key `id` of `tenant` at `now`; whether it existed unrevoked.
    async fn revoke_api_key(
        &mut self,
        tenant: &TenantId,
        id: &ApiKeyId,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError>;

    /// Sets when the unrevoked key `id` of `tenant` stops working (a rotation's overlap);
    /// whether it existed unrevoked.
    async fn expire_api_key(
        &mut self,
        tenant: &TenantId,
        id: &ApiKeyId,
        at: OffsetDateTime,
    ) -> Result<bool, StoreError>;

    /// Records that the key `id` of `tenant` was accepted at `at`.
    async fn touch_api_key(
        &mut self,
        tenant: &TenantId,
        id: &ApiKeyId,
        at: OffsetDateTime,
    ) -> Result<(), StoreError>;

    /// Sets the policy of `tenant` for its people's own keys (an upsert), changed at `now`.
    /// [`StoreError::Conflict`] naming `api_key_policies_tenant_id_fkey` when the tenant does
    /// not exist.
    async fn set_api_key_policy(
        &mut self,
        tenant: &TenantId,
        policy: &ApiKeyPolicy,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;
}
