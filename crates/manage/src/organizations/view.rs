//! The JSON shapes of an organization and of a membership on the management API, with their
//! OpenAPI schemas. Every member is always sent, so the schemas mark them all required.

use serde::Serialize;
use serde_json::{Map, Value};
use std::borrow::Cow;
use svc_domain::{Membership, ORG_ROLES, OrgStatus, Organization};
use time::OffsetDateTime;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

/// An organization as the management API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "org_01jd2n4k6m8p0r2t4v6x8z0b2d",
    "slug": "acme-eu",
    "name": "Acme Europe",
    "metadata": {"plan": "enterprise"},
    "status": "active",
    "created_at": "2026-11-24T10:15:30.123456Z",
    "updated_at": "2026-11-24T10:15:30.123456Z"
}))]
pub struct OrganizationView {
    /// Durable id (`org_…`).
    #[schema(example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d")]
    pub id: String,
    /// Unique in the tenant: a lowercase DNS label.
    #[schema(example = "acme-eu")]
    pub slug: String,
    /// Display name.
    #[schema(example = "Acme Europe")]
    pub name: String,
    /// The tenant's free JSON object (`{}` when none was given).
    #[schema(value_type = Object)]
    pub metadata: Map<String, Value>,
    /// Whether members can act in it.
    #[schema(value_type = OrgStatusSchema)]
    pub status: OrgStatus,
    /// Creation time (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Last change (RFC 3339); the `ETag` of the organization is derived from it.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl From<&Organization> for OrganizationView {
    fn from(org: &Organization) -> Self {
        Self {
            id: org.id.to_string(),
            slug: org.slug.to_string(),
            name: org.name.clone(),
            metadata: org.metadata.clone(),
            status: org.status,
            created_at: org.created_at,
            updated_at: org.updated_at,
        }
    }
}

/// The schema of [`OrgStatus`] on the wire (named `OrganizationStatus` in the document).
pub struct OrgStatusSchema;

impl PartialSchema for OrgStatusSchema {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(
                [OrgStatus::Active, OrgStatus::Suspended].map(OrgStatus::as_str),
            ))
            .description(Some(
                "`active` (members act in it) or `suspended` (nobody obtains tokens for it until \
                 it is reactivated; members and data stay).",
            ))
            .into()
    }
}

impl ToSchema for OrgStatusSchema {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("OrganizationStatus")
    }
}

/// The schema of a role a caller may give a member: one of the built-in organization roles or
/// the key of a custom organization role (named `OrganizationRole` in the document).
pub struct OrgRoleSchema;

impl PartialSchema for OrgRoleSchema {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(64))
            .pattern(Some(crate::roles::ROLE_KEY_PATTERN))
            .examples(ORG_ROLES.map(serde_json::Value::from))
            .description(Some(
                "An organization role: one of the built-in `owner` (everything, including other \
                 owners), `admin` (manages members, never owners) and `member`, or the key of a \
                 custom role of kind `organization` (`GET /api/v1/roles`).",
            ))
            .into()
    }
}

impl ToSchema for OrgRoleSchema {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("OrganizationRole")
    }
}

/// A person's membership of an organization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "organization_id": "org_01jd2n4k6m8p0r2t4v6x8z0b2d",
    "user_id": "usr_01jd2m8q3v7x9k4n6p0r5t2w8y",
    "roles": ["admin", "member"],
    "created_at": "2026-11-24T10:20:00Z",
    "updated_at": "2026-11-24T11:02:13.5Z"
}))]
pub struct MembershipView {
    /// The organization (`org_…`).
    #[schema(example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d")]
    pub organization_id: String,
    /// The member (`usr_…`).
    #[schema(example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y")]
    pub user_id: String,
    /// The organization roles held, sorted: `owner`, `admin`, `member`.
    pub roles: Vec<String>,
    /// When the person joined (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Last change of the roles (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl From<&Membership> for MembershipView {
    fn from(m: &Membership) -> Self {
        Self {
            organization_id: m.organization_id.to_string(),
            user_id: m.user_id.to_string(),
            roles: m.roles.iter().map(|r| r.as_str().to_owned()).collect(),
            created_at: m.created_at,
            updated_at: m.updated_at,
        }
    }
}

/// The organization of a membership, in short.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct OrganizationSummary {
    /// Durable id (`org_…`).
    #[schema(example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d")]
    pub id: String,
    /// Its slug.
    #[schema(example = "acme-eu")]
    pub slug: String,
    /// Its display name.
    #[schema(example = "Acme Europe")]
    pub name: String,
    /// Whether members can act in it.
    #[schema(value_type = OrgStatusSchema)]
    pub status: OrgStatus,
}

/// One membership of a person, with the organization it is of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "organization_id": "org_01jd2n4k6m8p0r2t4v6x8z0b2d",
    "user_id": "usr_01jd2m8q3v7x9k4n6p0r5t2w8y",
    "roles": ["member"],
    "created_at": "2026-11-24T10:20:00Z",
    "updated_at": "2026-11-24T10:20:00Z",
    "organization": {
        "id": "org_01jd2n4k6m8p0r2t4v6x8z0b2d",
        "slug": "acme-eu",
        "name": "Acme Europe",
        "status": "active"
    }
}))]
pub struct UserMembershipView {
    /// The organization (`org_…`).
    #[schema(example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d")]
    pub organization_id: String,
    /// The member (`usr_…`).
    #[schema(example = "usr_01jd2m8q3v7x9k4n6p0r5t2w8y")]
    pub user_id: String,
    /// The organization roles held, sorted.
    pub roles: Vec<String>,
    /// When the person joined (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Last change of the roles (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
    /// The organization.
    pub organization: OrganizationSummary,
}

impl UserMembershipView {
    /// The view of `membership` of `org`.
    pub fn new(membership: &Membership, org: &Organization) -> Self {
        let m = MembershipView::from(membership);
        Self {
            organization_id: m.organization_id,
            user_id: m.user_id,
            roles: m.roles,
            created_at: m.created_at,
            updated_at: m.updated_at,
            organization: OrganizationSummary {
                id: org.id.to_string(),
                slug: org.slug.to_string(),
                name: org.name.clone(),
                status: org.status,
            },
        }
    }
}
