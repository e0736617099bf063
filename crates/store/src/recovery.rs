//! Ports of social recovery: a person's recovery guardians, their recovery requests (found by
//! id, by the hash of the initiator's secret or of the owner's cancel token), the guardians'
//! approvals (found by the hash of the mailed token and spent once), and the purge of closed
//! requests.
//!
//! Status transitions are compare-and-set on the stored status ([`RecoveryWrites::update_recovery`])
//! and approvals are spent by one conditional write, so two racing requests never both win. The
//! rules of recovery (how many approvals, how long to wait, who may cancel) are the engine's.

use crate::StoreError;
use async_trait::async_trait;
use svc_domain::{
    Guardian, GuardianId, RecoveryApproval, RecoveryId, RecoveryRequest, RecoveryStatus,
    SecretHash, TenantId, UserId,
};
use time::OffsetDateTime;

/// Reads of guardians, recovery requests and approvals.
#[async_trait]
pub trait RecoveryReads {
    /// Every guardian of the user, oldest first.
    async fn guardians(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Vec<Guardian>, StoreError>;

    /// The user's open request at `now`: pending with `expires_at > now`, or waiting. A pending
    /// one past its expiry is not returned even before [`RecoveryWrites::expire_recoveries`]
    /// marked it.
    async fn open_recovery(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<Option<RecoveryRequest>, StoreError>;

    /// The request of `tenant` started with the secret hashing to `secret`, in any status.
    async fn recovery_by_secret(
        &mut self,
        tenant: &TenantId,
        secret: &SecretHash,
    ) -> Result<Option<RecoveryRequest>, StoreError>;

    /// The request of `tenant` whose owner's cancel token hashes to `cancel`, in any status.
    async fn recovery_by_cancel_token(
        &mut self,
        tenant: &TenantId,
        cancel: &SecretHash,
    ) -> Result<Option<RecoveryRequest>, StoreError>;

    /// The request `id` of `tenant`, in any status.
    async fn recovery(
        &mut self,
        tenant: &TenantId,
        id: &RecoveryId,
    ) -> Result<Option<RecoveryRequest>, StoreError>;

    /// The approval of `tenant` whose token hashes to `token`, spent or not, expired or not (the
    /// caller reads `approved_at` and `expires_at`).
    async fn recovery_approval(
        &mut self,
        tenant: &TenantId,
        token: &SecretHash,
    ) -> Result<Option<RecoveryApproval>, StoreError>;

    /// Every approval of the request `id`, in guardian order (guardian ids are time-ordered, so
    /// the order the guardians were named).
    async fn recovery_approvals(
        &mut self,
        tenant: &TenantId,
        id: &RecoveryId,
    ) -> Result<Vec<RecoveryApproval>, StoreError>;

    /// Whether a completed request of the user still owes a new second factor
    /// (`factor_due`).
    async fn recovery_factor_due(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<bool, StoreError>;
}

/// Writes of guardians, recovery requests and approvals.
#[async_trait]
pub trait RecoveryWrites {
    /// Stores a new guardian. An address the user already named is [`StoreError::Conflict`] on
    /// `recovery_guardians_user_email_key`; a tenant that does not exist on
    /// `recovery_guardians_tenant_id_fkey`.
    async fn insert_guardian(&mut self, guardian: &Guardian) -> Result<(), StoreError>;

    /// Deletes the guardian `id` of `user`; false when it is not theirs or not there. Approvals
    /// already mailed to them stay (a request in progress keeps its approvals).
    async fn delete_guardian(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        id: &GuardianId,
    ) -> Result<bool, StoreError>;

    /// Stores a new request with the hashes of the initiator's secret and of the owner's cancel
    /// token. While the user has another pending or waiting request (even a pending one past its
    /// expiry that [`RecoveryWrites::expire_recoveries`] has not marked yet) it is
    /// [`StoreError::Conflict`] on `recovery_requests_one_open_key`; a tenant that does not exist
    /// on `recovery_requests_tenant_id_fkey`.
    async fn insert_recovery(
        &mut self,
        request: &RecoveryRequest,
        secret: &SecretHash,
        cancel: &SecretHash,
    ) -> Result<(), StoreError>;

    /// Marks the user's pending requests with `expires_at <= now` expired (`closed_at = now`);
    /// returns how many.
    async fn expire_recoveries(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError>;

    /// Stores a new approval with the hash of its mailed token. A second approval for the same
    /// guardian and request is [`StoreError::Conflict`] on
    /// `recovery_approvals_tenant_id_request_id_guardian_id_key`; a request that does not exist
    /// in the tenant on `recovery_approvals_request_id_fkey`.
    async fn insert_recovery_approval(
        &mut self,
        approval: &RecoveryApproval,
        token: &SecretHash,
    ) -> Result<(), StoreError>;

    /// Spends the approval of `tenant` whose token hashes to `token`: only if it is unspent and
    /// unexpired at `now`, `approved_at = now` and it is returned. One conditional write, so a
    /// token approves once however many requests race; `None` otherwise (nothing written). The
    /// request's own status is not checked here: the caller reads it in the same transaction.
    async fn spend_recovery_approval(
        &mut self,
        tenant: &TenantId,
        token: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<RecoveryApproval>, StoreError>;

    /// Writes `request`'s status, `ready_at`, `closed_at` and `factor_due` to the stored request
    /// with its id and tenant, only while its stored status is `expected`; false otherwise
    /// (nothing written), so of two racing transitions from one status only one wins. Moving a
    /// closed request back to pending or waiting while the user has another open one is
    /// [`StoreError::Conflict`] on `recovery_requests_one_open_key`.
    async fn update_recovery(
        &mut self,
        request: &RecoveryRequest,
        expected: RecoveryStatus,
    ) -> Result<bool, StoreError>;

    /// Clears `factor_due` on every request of the user (they enrolled a new factor); returns
    /// how many requests changed.
    async fn clear_recovery_factor_due(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<u64, StoreError>;

    /// Deletes, in every tenant, the closed requests (cancelled, completed, expired) with
    /// `closed_at < before` that owe no factor, and their approvals; returns how many rows
    /// (requests and approvals). Open requests and those with `factor_due` stay.
    ///
    /// At most `limit` requests per call, so a backlog is worked off over several
    /// calls, each in a transaction of its own (the janitor repeats while rows go).
    async fn purge_closed_recoveries(
        &mut self,
        before: OffsetDateTime,
        limit: u64,
    ) -> Result<u64, StoreError>;
}
