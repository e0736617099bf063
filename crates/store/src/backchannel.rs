//! Port of backchannel authentication requests (OpenID CIBA, poll mode): started by
//! `/bc-authorize`, listed for and decided by their person, polled by their client.
//!
//! As for device authorizations (`crate::device`), a decision is one conditional `UPDATE` (only
//! a pending, unexpired request of that very person, so never a decoy), and a poll records
//! itself in the statement that checks its timing. The approved grant is an authorization code
//! stored under the `auth_req_id`'s hash ([`svc_domain::CodeBinding::Backchannel`]); an agent's
//! approved request ([`svc_domain::BackchannelRequester::Agent`]) is its own grant, taken (deleted)
//! once by the poll that redeems it. Expired requests are left to
//! [`crate::GrantWrites::purge_expired_grants`].

use crate::StoreError;
use async_trait::async_trait;
use svc_domain::{
    AgentId, BackchannelPoll, BackchannelRequest, BackchannelRequestId, DeviceStatus, SecretHash,
    TenantId, UserId,
};
use time::OffsetDateTime;

/// Reads of backchannel requests.
#[async_trait]
pub trait BackchannelReads {
    /// `user`'s pending, unexpired requests in `tenant`, oldest first (decoys have no person
    /// and are never among them).
    async fn pending_backchannel_requests(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<Vec<BackchannelRequest>, StoreError>;
}

/// Writes of backchannel requests.
#[async_trait]
pub trait BackchannelWrites {
    /// Stores a new request.
    async fn insert_backchannel_request(
        &mut self,
        request: &BackchannelRequest,
    ) -> Result<(), StoreError>;

    /// Records `user`'s decision (`Approved` or `Denied`) on request `id`, if it is theirs and
    /// still pending and unexpired at `now`; returns it as decided, or `None`.
    async fn decide_backchannel_request(
        &mut self,
        tenant: &TenantId,
        id: &BackchannelRequestId,
        user: &UserId,
        decision: DeviceStatus,
        now: OffsetDateTime,
    ) -> Result<Option<BackchannelRequest>, StoreError>;

    /// One poll by `requester` (a `client_id`, or an agent's id: their prefixes keep them
    /// apart) at `now` (CIBA Core §10–11, RFC 8628 §3.5's `slow_down`): stores the poll time and
    /// grows the interval by 5 s when it came too soon. `None` when no request of `tenant` has
    /// this `auth_req_id` hash for this requester.
    async fn poll_backchannel_request(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        requester: &str,
        now: OffsetDateTime,
    ) -> Result<Option<BackchannelPoll>, StoreError>;

    /// Takes (deletes) `agent`'s approved request with this hash, so that it is redeemed once:
    /// it as it was, or `None` when there is no such approved request (any more).
    async fn take_approved_agent_request(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        agent: &AgentId,
    ) -> Result<Option<BackchannelRequest>, StoreError>;
}
