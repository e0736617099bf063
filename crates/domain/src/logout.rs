//! Logout propagation (OpenID Connect Back-Channel Logout 1.0, Front-Channel Logout 1.0): where
//! an application wants to hear that a person's session at the provider ended
//! ([`LogoutChannels`]), which applications a session signed into ([`SessionClient`]), and the
//! back-channel notices waiting to be sent or sent ([`LogoutNotice`]).
//!
//! A session signs into an application when an authorization code is issued for it; the row
//! keeps the subject and issuer the application saw, so the logout token names the person the
//! way its ID token did (a pairwise `sub` stays pairwise). Ending a session (sign-out, a revoked
//! session, a suspended person, a password reset) turns each of its rows whose application
//! registered a back-channel URI into a notice in the same transaction, so no path that ends a
//! session can forget to notify.

use crate::{ClientId, SessionId, TenantId};
use time::OffsetDateTime;

/// How an application hears of logouts. Every field is optional registration metadata of
/// OpenID Connect Back-Channel Logout 1.0 §2.2 and Front-Channel Logout 1.0 §2.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogoutChannels {
    /// `backchannel_logout_uri`: where logout tokens are POSTed (absolute `https`, or `http`
    /// on a loopback host; no fragment).
    pub backchannel_uri: Option<String>,
    /// `backchannel_logout_session_required`: the logout token must carry `sid`. svc always
    /// sends `sid` when the session is known; the flag is kept and shown as registered.
    pub backchannel_session_required: bool,
    /// `frontchannel_logout_uri`: rendered in an iframe of the end-session page.
    pub frontchannel_uri: Option<String>,
    /// `frontchannel_logout_session_required`: `iss` and `sid` are added to the iframe's URL.
    pub frontchannel_session_required: bool,
}

/// One application a session signed into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionClient {
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// The provider session (`sid`).
    pub session_id: SessionId,
    /// The application.
    pub client_id: ClientId,
    /// The person's `sub` as this application sees it.
    pub subject: String,
    /// The issuer its tokens carried.
    pub issuer: String,
    /// When the session first signed into it.
    pub joined_at: OffsetDateTime,
}

/// A back-channel logout notice the delivery worker holds: what to tell which application, and
/// the attempt being made (counted when claimed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogoutNotice {
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// The session that ended (`sid`).
    pub session_id: SessionId,
    /// The application to notify (`aud`).
    pub client_id: ClientId,
    /// `sub` as the application saw it.
    pub subject: String,
    /// `iss` as the application saw it.
    pub issuer: String,
    /// Attempts made so far, the one just claimed included.
    pub attempts: u32,
}

/// Where a notice stands, as its status view reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogoutOutcome {
    /// Waiting for an attempt (the first, or a retry).
    Pending,
    /// The application answered 2xx.
    Delivered,
    /// Given up: a refusal that retrying cannot fix, or too many attempts.
    Failed,
}

impl LogoutOutcome {
    /// Stored and shown name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::Failed => "failed",
        }
    }

    /// Reads a stored name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(Self::Pending),
            "delivered" => Some(Self::Delivered),
            "failed" => Some(Self::Failed),
            _ => None,
        }
    }
}

/// A notice's state, for the status view and tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogoutNoticeState {
    /// The application.
    pub client_id: ClientId,
    /// Where it stands.
    pub outcome: LogoutOutcome,
    /// Attempts made.
    pub attempts: u32,
    /// HTTP status of the last answer, when there was one.
    pub last_status_code: Option<u16>,
    /// Why the last attempt failed (no secret, no token), when it did.
    pub last_error: Option<String>,
}

/// What became of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogoutAttempt {
    /// When it ended.
    pub at: OffsetDateTime,
    /// The answer's status, when an answer came.
    pub status_code: Option<u16>,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// `Some(when)` to try again then; `None` when the notice is finished.
    pub retry_at: Option<OffsetDateTime>,
    /// The finished outcome (ignored while `retry_at` is set).
    pub outcome: LogoutOutcome,
}
