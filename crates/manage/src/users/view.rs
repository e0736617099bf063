//! The JSON shapes of a tenant user and of one of their sessions on the management API, with
//! their OpenAPI schemas. A user view never carries the password hash (only whether one is set);
//! a session view never carries the cookie hash. Every member is always sent (`null` when
//! empty), so the schemas mark them all required.

use serde::Serialize;
use std::borrow::Cow;
use svc_domain::{Session, User, UserStatus};
use time::OffsetDateTime;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

/// A tenant user as the management API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "usr_01jd2m8q3v7x9k4n6p0r5t2w8y",
    "email": "ada@example.com",
    "email_verified": true,
    "name": "Ada Lovelace",
    "given_name": "Ada",
    "family_name": "Lovelace",
    "status": "active",
    "has_password": true,
    "created_at": "2026-11-22T10:15:30.123456Z",
    "updated_at": "2026-11-23T08:02:11.5Z",
    "last_sign_in_at": null
}))]
pub struct UserView {
    /// Durable id (`usr_…`).
    #[schema(example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y")]
    pub id: String,
    /// Sign-in address (normalised: trimmed, lowercased).
    #[schema(format = Email, example = "ada@example.com")]
    pub email: String,
    /// Whether the person proved they receive mail there.
    pub email_verified: bool,
    /// Full name.
    #[schema(required = true)]
    pub name: Option<String>,
    /// Given name.
    #[schema(required = true)]
    pub given_name: Option<String>,
    /// Family name.
    #[schema(required = true)]
    pub family_name: Option<String>,
    /// Where the user stands.
    #[schema(value_type = UserStatusSchema)]
    pub status: UserStatus,
    /// Whether a password is set.
    pub has_password: bool,
    /// Creation time (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Last change (RFC 3339); the `ETag` of the user is derived from it.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
    /// Last successful sign-in (RFC 3339), `null` if none yet.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime, required = true)]
    pub last_sign_in_at: Option<OffsetDateTime>,
}

/// The schema of [`UserStatus`] on the wire (named `UserStatus` in the document).
pub struct UserStatusSchema;

impl PartialSchema for UserStatusSchema {
    fn schema() -> RefOr<Schema> {
        let all = [
            UserStatus::Invited,
            UserStatus::PreProvisioned,
            UserStatus::Active,
            UserStatus::Suspended,
            UserStatus::Removed,
        ];
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(all.map(UserStatus::as_str)))
            .description(Some(
                "`invited` (mailed an invitation, no password yet), `pre_provisioned` (claims \
                 the account through a password reset), `active` (may sign in), `suspended` \
                 (blocked; may be reactivated) or `removed` (a tombstone; final).",
            ))
            .into()
    }
}

impl ToSchema for UserStatusSchema {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("UserStatus")
    }
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "ses_01jd2mb7c4e6g8j0k2m4p6r8t0",
    "created_at": "2026-11-23T08:00:00Z",
    "auth_time": "2026-11-23T08:00:00Z",
    "last_seen_at": "2026-11-23T09:12:45.25Z",
    "expires_at": "2026-11-24T08:00:00Z",
    "amr": ["pwd"],
    "user_agent": "Mozilla/5.0 (X11; Linux x86_64)",
    "ip": "203.0.113.7"
}))]
pub struct SessionView {
    /// Session id (`ses_…`, the `sid` of ID tokens).
    #[schema(example = "ses_01jd2mb7c4e6g8j0k2m4p6r8t0")]
    pub id: String,
    /// When it was created (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// When the person last authenticated in it (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub auth_time: OffsetDateTime,
    /// Last use (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub last_seen_at: OffsetDateTime,
    /// Absolute end (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub expires_at: OffsetDateTime,
    /// Authentication methods (`pwd`, …).
    pub amr: Vec<String>,
    /// Browser at sign-in, `null` if unknown.
    #[schema(required = true)]
    pub user_agent: Option<String>,
    /// Client address at sign-in, `null` if unknown.
    #[schema(required = true)]
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
