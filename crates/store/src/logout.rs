//! Port of logout propagation: which applications a session signed into, and the back-channel
//! logout outbox (OpenID Connect Back-Channel Logout 1.0).
//!
//! Notices are written by [`crate::SessionWrites::revoke_session`] and
//! [`crate::SessionWrites::revoke_user_sessions`] themselves, so every path that ends a session
//! notifies. Claiming is exclusive across instances (a lease: `due_at` moves past the attempt,
//! taken `FOR UPDATE SKIP LOCKED` on PostgreSQL, under the single writer on SQLite); a worker
//! that stops mid-attempt leaves the notice due again when its lease ends. Notices are purged
//! with the expired grants a day after they were written.
//!
//! A session that simply runs out is no revocation, so no statement writes its notices when it
//! ends: [`LogoutWrites::notify_expired_sessions`] does, later, from a mark stored beside the
//! outbox (how far expiries were already looked at), so every expiry is noticed once whichever
//! instance looks.

use crate::StoreError;
use async_trait::async_trait;
use svc_domain::{
    ClientId, LogoutAttempt, LogoutNotice, LogoutNoticeState, SessionClient, SessionId, TenantId,
};
use time::{Duration, OffsetDateTime};

/// How far back [`LogoutWrites::notify_expired_sessions`] looks at most, however old its mark:
/// ended sessions are purged a day after they ended, so an older expiry may have left nothing
/// to announce, and a logout token a day late tells an application little.
pub const EXPIRY_LOOKBACK: Duration = Duration::days(1);

/// Reads of sessions' applications and their notices.
#[async_trait]
pub trait LogoutReads {
    /// The applications the session `session` of `tenant` signed into, oldest first.
    async fn session_clients(
        &mut self,
        tenant: &TenantId,
        session: &SessionId,
    ) -> Result<Vec<SessionClient>, StoreError>;

    /// The back-channel notices written for the session `session` of `tenant`, by client id.
    async fn logout_notices(
        &mut self,
        tenant: &TenantId,
        session: &SessionId,
    ) -> Result<Vec<LogoutNoticeState>, StoreError>;
}

/// Writes of sessions' applications and the outbox.
#[async_trait]
pub trait LogoutWrites {
    /// Records that the session signed into the application (idempotent: the first record
    /// stays).
    async fn join_session(&mut self, client: &SessionClient) -> Result<(), StoreError>;

    /// Writes the notices of the sessions that expired unrevoked since the stored mark, at most
    /// [`EXPIRY_LOOKBACK`] before `now`, and through `now`, then moves the mark to `now`;
    /// returns how many notices were written. The first call on a database only sets the mark
    /// (expiries before it are not announced). A mark at or past `now` writes nothing. Callers
    /// serialise on the mark (a row lock on PostgreSQL, the single writer on SQLite).
    async fn notify_expired_sessions(&mut self, now: OffsetDateTime) -> Result<u64, StoreError>;

    /// Leases up to `limit` notices due at `now` until `lease_until`, counting the attempt, in
    /// due order.
    async fn claim_logout_notices(
        &mut self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<LogoutNotice>, StoreError>;

    /// Records the attempt just made on the notice of `session` for `client`: due again at
    /// `attempt.retry_at`, or finished with `attempt.outcome`.
    async fn record_logout_attempt(
        &mut self,
        tenant: &TenantId,
        session: &SessionId,
        client: &ClientId,
        attempt: &LogoutAttempt,
    ) -> Result<(), StoreError>;
}
