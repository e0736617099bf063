//! The logout-propagation ports of [`FaultyTx`]: plain delegation (no use case under test
//! writes them directly; revoking sessions writes notices inside the store).

use crate::support::FaultyTx;
use async_trait::async_trait;
use svc_domain::{
    ClientId, LogoutAttempt, LogoutNotice, LogoutNoticeState, SessionClient, SessionId, TenantId,
};
use svc_store::{LogoutReads, LogoutWrites, StoreError};
use time::OffsetDateTime;

#[async_trait]
impl LogoutReads for FaultyTx {
    async fn session_clients(
        &mut self,
        tenant: &TenantId,
        session: &SessionId,
    ) -> Result<Vec<SessionClient>, StoreError> {
        self.inner.session_clients(tenant, session).await
    }
    async fn logout_notices(
        &mut self,
        tenant: &TenantId,
        session: &SessionId,
    ) -> Result<Vec<LogoutNoticeState>, StoreError> {
        self.inner.logout_notices(tenant, session).await
    }
}

#[async_trait]
impl LogoutWrites for FaultyTx {
    async fn join_session(&mut self, client: &SessionClient) -> Result<(), StoreError> {
        self.inner.join_session(client).await
    }
    async fn notify_expired_sessions(&mut self, now: OffsetDateTime) -> Result<u64, StoreError> {
        self.inner.notify_expired_sessions(now).await
    }
    async fn claim_logout_notices(
        &mut self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<LogoutNotice>, StoreError> {
        self.inner
            .claim_logout_notices(now, lease_until, limit)
            .await
    }
    async fn record_logout_attempt(
        &mut self,
        tenant: &TenantId,
        session: &SessionId,
        client: &ClientId,
        attempt: &LogoutAttempt,
    ) -> Result<(), StoreError> {
        self.inner
            .record_logout_attempt(tenant, session, client, attempt)
            .await
    }
}
