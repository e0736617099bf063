//! Ports of the audit log and of the two small coordination tables the protocol needs:
//! idempotency records and single-use assertion ids.

use crate::{Order, StoreError};
use async_trait::async_trait;
use svc_domain::{AgentId, AuditEntry, AuditEntryId, ClientId, TenantId};
use time::OffsetDateTime;

/// Filters of an audit-log listing; every field narrows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    /// Exact action (`application.created`).
    pub action: Option<String>,
    /// Exact actor (`client:app_…`).
    pub actor: Option<String>,
    /// Exact target id.
    pub target: Option<String>,
    /// Entries at or after this instant.
    pub since: Option<OffsetDateTime>,
    /// Entries before this instant.
    pub until: Option<OffsetDateTime>,
}

/// Reads of the audit log.
#[async_trait]
pub trait AuditReads {
    /// Up to `limit` entries of `tenant` in id (time) `order`, past the cursor `after`.
    async fn list_audit(
        &mut self,
        tenant: &TenantId,
        filter: &AuditFilter,
        after: Option<&AuditEntryId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<AuditEntry>, StoreError>;
}

/// Writes of the audit log (append-only).
#[async_trait]
pub trait AuditWrites {
    /// Appends an entry.
    async fn insert_audit(&mut self, entry: &AuditEntry) -> Result<(), StoreError>;
}

/// A stored idempotent response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyRecord {
    /// Who the key belongs to (e.g. `ten_…:client:app_…` or `operator:opt_…`): keys of different
    /// callers never collide.
    pub scope: String,
    /// The caller's `idempotency-key`.
    pub key: String,
    /// SHA-256 (hex) of method, path and body: a reuse with another request is a conflict.
    pub fingerprint: String,
    /// The response status, once the first request finished (`None` while in progress).
    pub status: Option<u16>,
    /// The response body, once finished.
    pub body: Option<String>,
    /// When the key was first used.
    pub created_at: OffsetDateTime,
    /// When it may be forgotten (24 h later).
    pub expires_at: OffsetDateTime,
}

/// Idempotency keys and single-use ids.
#[async_trait]
pub trait CoordinationWrites {
    /// The live (unexpired at `now`) record for `scope`/`key`, if any.
    async fn idempotency_record(
        &mut self,
        scope: &str,
        key: &str,
        now: OffsetDateTime,
    ) -> Result<Option<IdempotencyRecord>, StoreError>;

    /// Claims a key (status `None`); [`StoreError::Conflict`] when a live record exists.
    /// An expired record for the same key is replaced.
    async fn claim_idempotency(&mut self, record: &IdempotencyRecord) -> Result<(), StoreError>;

    /// Stores the response of a claimed key.
    async fn complete_idempotency(
        &mut self,
        scope: &str,
        key: &str,
        status: u16,
        body: &str,
    ) -> Result<(), StoreError>;

    /// Forgets a claimed key whose request failed before producing a response worth replaying.
    async fn release_idempotency(&mut self, scope: &str, key: &str) -> Result<(), StoreError>;

    /// Records that `jti` of a client assertion was used until `expires_at`;
    /// [`StoreError::Conflict`] when it was already used and has not expired at `now`
    /// (RFC 7523 §3 item 7: single use).
    async fn use_assertion_id(
        &mut self,
        tenant: &TenantId,
        client: &ClientId,
        jti: &str,
        expires_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;

    /// Records that `jti` of a DPoP proof signed by the key with thumbprint `jkt` was used until
    /// `expires_at`; [`StoreError::Conflict`] when it was already used and has not expired at
    /// `now` (RFC 9449 §11.1). Kept with the assertion ids, apart from every client's.
    async fn use_proof_id(
        &mut self,
        tenant: &TenantId,
        jkt: &str,
        jti: &str,
        expires_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;

    /// Records that the challenge `id` given to agent `agent` was answered, until `expires_at`;
    /// [`StoreError::Conflict`] when it was already answered and has not expired at `now` (a
    /// challenge is single use). Kept with the assertion ids, apart from every client's and key's.
    async fn use_agent_challenge(
        &mut self,
        tenant: &TenantId,
        agent: &AgentId,
        id: &str,
        expires_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;

    /// Deletes idempotency records and assertion ids that expired before `now`; returns how many.
    ///
    /// At most `limit` rows of each kind per call, so a backlog is worked off over several
    /// calls, each in a transaction of its own (the janitor repeats while rows go).
    async fn purge_expired(&mut self, now: OffsetDateTime, limit: u64) -> Result<u64, StoreError>;
}
