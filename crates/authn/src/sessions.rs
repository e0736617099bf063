//! Browser sessions after sign-in: resolving a cookie, signing out, the list of a person's
//! live sessions with revocation of one of them, and their login history.
//!
//! A session signs its person in only while it is live (not revoked, not expired) and the
//! person is `active`: suspending or removing a user kills their sessions even before the
//! revocation written with the status change is read.

use crate::engine::{Authn, SESSION_COOKIE_PREFIX};
use crate::error::AuthnError;
use svc_domain::{
    EventData, EventType, LogoutReason, SecretHash, Session, SessionId, Tenant, User, UserId,
};
use time::Duration;

/// `last_seen_at` is refreshed at most this often, so resolving a cookie is a read, not a
/// write, on almost every request.
const TOUCH_INTERVAL: Duration = Duration::minutes(5);

impl Authn {
    /// The live session behind `cookie_value` and its active user, or `None` (unknown, revoked
    /// or expired session, or a user who may no longer sign in).
    pub async fn session(
        &self,
        tenant: &Tenant,
        cookie_value: &str,
    ) -> Result<Option<(Session, User)>, AuthnError> {
        if !cookie_value.starts_with(SESSION_COOKIE_PREFIX) {
            return Ok(None);
        }
        let now = self.now();
        // Two single-row reads that need no common snapshot: the user's state is checked on
        // every later step too.
        let mut tx = self.store.read_once().await?;
        let session = tx
            .session_by_secret(&tenant.id, &SecretHash::of(cookie_value))
            .await?
            .filter(|s| s.is_live(now));
        let user = match &session {
            Some(s) => tx
                .user(&tenant.id, &s.user_id)
                .await?
                .filter(User::can_sign_in),
            None => None,
        };
        tx.finish().await?;
        let (Some(mut session), Some(user)) = (session, user) else {
            return Ok(None);
        };
        if now - session.last_seen_at >= TOUCH_INTERVAL {
            let mut tx = self.store.write().await?;
            tx.touch_session(&tenant.id, &session.id, now).await?;
            tx.commit().await?;
            session.last_seen_at = now;
        }
        Ok(Some((session, user)))
    }

    /// The live session `id` of `tenant`, when its person is `user` and may still sign in;
    /// `None` otherwise (unknown, another person's, revoked or expired session, suspended or
    /// removed person). What a token issued in a session (`sid`) acts through, where the person
    /// must still be signed in (ADR 0010). Not touched: a token is no browser visit.
    pub async fn live_session(
        &self,
        tenant: &Tenant,
        id: &SessionId,
        user: &UserId,
    ) -> Result<Option<Session>, AuthnError> {
        let now = self.now();
        let mut tx = self.store.read().await?;
        let session = tx
            .session(&tenant.id, id)
            .await?
            .filter(|s| s.is_live(now) && &s.user_id == user);
        let may_sign_in = match &session {
            Some(_) => tx
                .user(&tenant.id, user)
                .await?
                .is_some_and(|p| p.can_sign_in()),
            None => false,
        };
        tx.finish().await?;
        Ok(session.filter(|_| may_sign_in))
    }

    /// Ends `session` for `reason`, recording `auth.logout` when it was still live
    /// (idempotent: an ended session is fine).
    pub async fn sign_out(
        &self,
        tenant: &Tenant,
        session: &Session,
        reason: LogoutReason,
    ) -> Result<(), AuthnError> {
        let mut tx = self.store.write().await?;
        if tx
            .revoke_session(&tenant.id, &session.id, self.now())
            .await?
        {
            self.logged_out(tx.as_mut(), tenant, &session.user_id, &session.id, reason)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn logged_out(
        &self,
        tx: &mut dyn svc_store::WriteTx,
        tenant: &Tenant,
        user: &UserId,
        session: &SessionId,
        reason: LogoutReason,
    ) -> Result<(), AuthnError> {
        let data = EventData::LoggedOut {
            user_id: user.clone(),
            session_id: session.clone(),
            reason,
        };
        self.record_event(tx, &tenant.id, EventType::Logout, data)
            .await
    }

    /// The newest `limit` records of the user's login history, newest first.
    pub async fn login_history(
        &self,
        tenant: &Tenant,
        user: &UserId,
        limit: u32,
    ) -> Result<Vec<svc_domain::LoginRecord>, AuthnError> {
        let mut tx = self.store.read_once().await?;
        let records = tx
            .login_history(&tenant.id, user, None, svc_store::Order::Descending, limit)
            .await?;
        tx.finish().await?;
        Ok(records)
    }

    /// The user's live sessions, newest first.
    pub async fn live_sessions(
        &self,
        tenant: &Tenant,
        user: &UserId,
    ) -> Result<Vec<Session>, AuthnError> {
        let mut tx = self.store.read().await?;
        let sessions = tx.live_sessions(&tenant.id, user, self.now()).await?;
        tx.finish().await?;
        Ok(sessions)
    }

    /// Revokes the session `id` only if it is a live session of `user`; false otherwise
    /// (another person's session reads as absent).
    pub async fn revoke_session(
        &self,
        tenant: &Tenant,
        user: &UserId,
        id: &SessionId,
    ) -> Result<bool, AuthnError> {
        let now = self.now();
        let mut tx = self.store.write().await?;
        let owned = tx
            .session(&tenant.id, id)
            .await?
            .is_some_and(|s| s.user_id == *user && s.is_live(now));
        if !owned {
            return Ok(false);
        }
        let revoked = tx.revoke_session(&tenant.id, id, now).await?;
        if revoked {
            self.logged_out(tx.as_mut(), tenant, user, id, LogoutReason::RevokedByUser)
                .await?;
        }
        tx.commit().await?;
        Ok(revoked)
    }
}
