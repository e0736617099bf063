//! The JSON shape of an invitation on the management API, with its OpenAPI schema. Every member
//! is always sent (`null` when empty), so the schema marks them all required. The link's secret
//! is never shown: only the mail carries it.

use serde::Serialize;
use std::borrow::Cow;
use svc_domain::{Invitation, InvitationState};
use time::OffsetDateTime;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

/// An invitation as the management API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "inv_01jd2p8r3t5v7x9z1b3d5f7h9k",
    "email": "ada@example.com",
    "organization_id": "org_01jd2n4k6m8p0r2t4v6x8z0b2d",
    "roles": ["admin"],
    "status": "pending",
    "expires_at": "2026-12-01T10:15:30.123456Z",
    "invited_by": "client:app_01jd3k0a1b2c3d4e5f6g7h8j9m",
    "accepted_by": null,
    "accepted_at": null,
    "created_at": "2026-11-24T10:15:30.123456Z",
    "updated_at": "2026-11-24T10:15:30.123456Z"
}))]
pub struct InvitationView {
    /// Durable id (`inv_…`).
    #[schema(example = "inv_01jd2p8r3t5v7x9z1b3d5f7h9k")]
    pub id: String,
    /// The address invited (normalised: trimmed, lowercase).
    #[schema(example = "ada@example.com")]
    pub email: String,
    /// The organization to join; `null` for the tenant itself.
    #[schema(required = true, example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d")]
    pub organization_id: Option<String>,
    /// The roles given on acceptance, sorted: organization roles with an organization, tenant
    /// roles (possibly none) without.
    pub roles: Vec<String>,
    /// Where it stands now.
    #[schema(value_type = InvitationStateSchema)]
    pub status: &'static str,
    /// When the link stops working (RFC 3339); a resend moves it.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub expires_at: OffsetDateTime,
    /// Who invited, as the audit log writes actors (`client:app_…`, `user:usr_…`).
    pub invited_by: String,
    /// The person who accepted (`usr_…`), once accepted.
    #[schema(required = true)]
    pub accepted_by: Option<String>,
    /// When it was accepted (RFC 3339).
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(required = true, value_type = Option<String>, format = DateTime)]
    pub accepted_at: Option<OffsetDateTime>,
    /// Creation time (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Last change (RFC 3339); the `ETag` is derived from it.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl InvitationView {
    /// The invitation as it stands at `now` (a pending one past its deadline is `expired`).
    pub fn new(invitation: &Invitation, now: OffsetDateTime) -> Self {
        Self {
            id: invitation.id.to_string(),
            email: invitation.email.to_string(),
            organization_id: invitation.organization_id.as_ref().map(ToString::to_string),
            roles: invitation
                .roles
                .iter()
                .map(|r| r.as_str().to_owned())
                .collect(),
            status: invitation.state(now).as_str(),
            expires_at: invitation.expires_at,
            invited_by: invitation.invited_by.clone(),
            accepted_by: invitation.accepted_by.as_ref().map(ToString::to_string),
            accepted_at: invitation.accepted_at,
            created_at: invitation.created_at,
            updated_at: invitation.updated_at,
        }
    }
}

/// The schema of an invitation's state (named `InvitationStatus` in the document).
pub struct InvitationStateSchema;

impl PartialSchema for InvitationStateSchema {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(InvitationState::ALL.map(InvitationState::as_str)))
            .description(Some(
                "`pending` (the link works), `expired` (pending past its deadline: the link is \
                 refused until a resend), `accepted` (final) or `revoked` (final).",
            ))
            .into()
    }
}

impl ToSchema for InvitationStateSchema {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("InvitationStatus")
    }
}
