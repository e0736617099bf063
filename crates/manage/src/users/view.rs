//! The JSON shapes of a tenant user and of one of their sessions on the management API. A user
//! view never carries the password hash (only whether one is set); a session view never carries
//! the cookie hash.

use serde::Serialize;
use svc_domain::{Session, User, UserStatus};
use time::OffsetDateTime;

/// A tenant user as the management API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserView {
    /// Durable id (`usr_…`).
    pub id: String,
    /// Sign-in address (normalised).
    pub email: String,
    /// Whether the person proved they receive mail there.
    pub email_verified: bool,
    /// Full name.
    pub name: Option<String>,
    /// Given name.
    pub given_name: Option<String>,
    /// Family name.
    pub family_name: Option<String>,
    /// `invited`, `pre_provisioned`, `active`, `suspended` or `removed`.
    pub status: UserStatus,
    /// Whether a password is set.
    pub has_password: bool,
    /// Creation time (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// Last change (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
    /// Last successful sign-in (RFC 3339), if any.
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_sign_in_at: Option<OffsetDateTime>,
}

impl From<&User> for UserView {
    fn from(user: &User) -> Self {
        Self {
            id: user.id.to_string(),
            email: user.email.to_string(),
            email_verified: user.email_verified,
            name: user.name.clone(),
            given_name: user.given_name.clone(),
            family_name: user.family_name.clone(),
            status: user.status,
            has_password: user.password_hash.is_some(),
            created_at: user.created_at,
            updated_at: user.updated_at,
            last_sign_in_at: user.last_sign_in_at,
        }
    }
}

/// One live browser session of a user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionView {
    /// Session id (`ses_…`, the `sid` of ID tokens).
    pub id: String,
    /// When it was created (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// When the person last authenticated in it (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    pub auth_time: OffsetDateTime,
    /// Last use (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    pub last_seen_at: OffsetDateTime,
    /// Absolute end (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
    /// Authentication methods (`pwd`, …).
    pub amr: Vec<String>,
    /// Browser at sign-in.
    pub user_agent: Option<String>,
    /// Client address at sign-in.
    pub ip: Option<String>,
}

impl From<&Session> for SessionView {
    fn from(s: &Session) -> Self {
        Self {
            id: s.id.to_string(),
            created_at: s.created_at,
            auth_time: s.auth_time,
            last_seen_at: s.last_seen_at,
            expires_at: s.expires_at,
            amr: s.amr.clone(),
            user_agent: s.user_agent.clone(),
            ip: s.ip.clone(),
        }
    }
}
