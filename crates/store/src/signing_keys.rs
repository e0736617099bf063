//! The signing-key aggregate's repository port. Rotation is exactly-once across instances:
//! callers take [`SigningKeyWrites::lock_signing_keys`] inside a write transaction before reading
//! and changing a tenant's keys, and the backends additionally refuse a second `next` or
//! `active` key per tenant and algorithm.

use crate::StoreError;
use async_trait::async_trait;
use svc_domain::{KeyState, SigningKeyRecord, TenantId};
use time::OffsetDateTime;

/// Reads of signing keys.
#[async_trait]
pub trait SigningKeyReads {
    /// Every stored key of `tenant` (next, active and retired), oldest first.
    async fn signing_keys(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<SigningKeyRecord>, StoreError>;
}

/// A state change of one key, applied only if the key is still in `from` (optimistic check).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyTransition {
    /// Which key.
    pub kid: String,
    /// The state it must be in now.
    pub from: KeyState,
    /// The state it moves to.
    pub to: KeyState,
    /// New `activates_at` (set when a key is promoted early, e.g. a forced rotation).
    pub activates_at: Option<OffsetDateTime>,
    /// New `retired_at`, when retiring.
    pub retired_at: Option<OffsetDateTime>,
    /// New `remove_after`, when retiring.
    pub remove_after: Option<OffsetDateTime>,
}

/// Writes of signing keys.
#[async_trait]
pub trait SigningKeyWrites {
    /// Serialises key changes of `tenant` until this transaction ends (PostgreSQL: a
    /// transaction-scoped advisory lock; SQLite: the single writer already holds it).
    async fn lock_signing_keys(&mut self, tenant: &TenantId) -> Result<(), StoreError>;

    /// Stores a new key. A duplicate kid, or a second `next`/`active` key for the same tenant
    /// and algorithm, is [`StoreError::Conflict`].
    async fn insert_signing_key(&mut self, key: &SigningKeyRecord) -> Result<(), StoreError>;

    /// Applies `change` to a key of `tenant`; [`StoreError::NotFound`] when no such key is in
    /// `change.from` (someone else moved it first).
    async fn transition_signing_key(
        &mut self,
        tenant: &TenantId,
        change: &KeyTransition,
    ) -> Result<(), StoreError>;

    /// Deletes a key (after it left JWKS); [`StoreError::NotFound`] when absent.
    async fn delete_signing_key(&mut self, tenant: &TenantId, kid: &str) -> Result<(), StoreError>;
}
